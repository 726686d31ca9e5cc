//! Which finding of a trace is the spike a thread measured (docs/claims.md, "Soak lines" and
//! "Break traces": spike_is_finding). explain is asked for the thread's wake-up due at the
//! spike's deadline, and its answer is checked to be that one: a buffer holds seconds of the
//! thread's wake-ups, and its worst one in explain's eyes need not be the spike.

use super::thread::Spike;
use crate::LiveError;
use rtsleuth_analyze::document::{fmt_ts_nanos, Document};
use rtsleuth_analyze::explain::{Explain, ExplainOptions, SAME_WAKEUP_NS};
use rtsleuth_trace::input::Input;
use serde_json::Value;
use std::path::Path;

/// `explain --pid TID --due DEADLINE --top 1` on a trace recorded on the `mono` clock.
pub fn explain(path: &Path, spike: &Spike) -> Result<Document, LiveError> {
    let mut explain = Explain::new(ExplainOptions {
        pids: vec![spike.tid],
        top: 1,
        due_ns: Some(spike.expected_ns),
        ..ExplainOptions::default()
    });
    let input = Input::open(&path.to_string_lossy())?;
    let info = rtsleuth_trace::read::read(input, &mut explain)?;
    Ok(explain.document(&info))
}

/// The finding of explain's document `doc` that is `spike`: the thread's wake-up due at the
/// deadline it slept to, or why there is none.
pub fn the_spike<'a>(doc: &'a Value, spike: &Spike) -> Result<&'a Value, String> {
    let Some(f) = doc["findings"].get(0) else {
        return Err(format!(
            "the trace holds no wake-up of tid {} due at the spike's deadline {}",
            spike.tid,
            fmt_ts_nanos(spike.expected_ns)
        ));
    };
    let due_ns = f["expected_ts"].as_f64().map(|s| (s * 1e9).round() as u64);
    match due_ns {
        Some(due) if due.abs_diff(spike.expected_ns) <= SAME_WAKEUP_NS => Ok(f),
        Some(due) => Err(format!(
            "explain's wake-up of tid {} was due at {}, not at the spike's deadline {}",
            spike.tid,
            fmt_ts_nanos(due),
            fmt_ts_nanos(spike.expected_ns)
        )),
        None => Err(format!(
            "explain found tid {}'s wake-up without a due time",
            spike.tid
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn spike() -> Spike {
        Spike {
            thread: 0,
            cpu: 0,
            tid: 77,
            latency_ns: 1_500_000,
            threshold_ns: 500_000,
            cycle: 10,
            expected_ns: 1_000_123_456_789,
            woke_ns: 1_000_124_956_789,
        }
    }

    #[test]
    fn the_finding_due_at_the_deadline_is_the_spike() {
        // A timer's due time is the deadline itself; a mark's a few us off.
        for due in ["1000.123456789", "1000.123460000"] {
            let doc = json!({"findings": [{"expected_ts": due.parse::<f64>().unwrap()}]});
            assert!(the_spike(&doc, &spike()).is_ok(), "{due}");
        }
    }

    #[test]
    fn another_wakeup_or_none_is_not_the_spike() {
        let next = json!({"findings": [{"expected_ts": 1000.124456789}]});
        let err = the_spike(&next, &spike()).unwrap_err();
        assert!(
            err.contains("due at 1000.124456789, not at the spike's deadline 1000.123456789"),
            "{err}"
        );
        let none = json!({"findings": []});
        assert!(the_spike(&none, &spike())
            .unwrap_err()
            .contains("no wake-up of tid 77 due at the spike's deadline 1000.123456789"));
        let undue = json!({"findings": [{"expected_ts": null}]});
        assert!(the_spike(&undue, &spike())
            .unwrap_err()
            .contains("without a due time"));
    }
}
