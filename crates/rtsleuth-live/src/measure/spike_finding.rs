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

/// How much longer than the measured spike its finding may be (docs/claims.md,
/// finding_matches_measure): its start may lie this much before the deadline.
const PAST_THE_MEASURE_NS: u64 = 20_000;

/// The finding of explain's document `doc` that is `spike`: the thread's wake-up due at the
/// deadline it slept to, ending before the thread read its clock; or why there is none.
pub fn the_spike<'a>(doc: &'a Value, spike: &Spike) -> Result<&'a Value, String> {
    let (f, due_ns) = due_at_the_deadline(doc, spike)?;
    let Some(latency_us) = f["latency_us"].as_f64() else {
        return Err(format!(
            "explain found tid {}'s wake-up without a latency",
            spike.tid
        ));
    };
    let latency_ns = (latency_us * 1e3).round() as u64;
    if latency_ns > spike.latency_ns + PAST_THE_MEASURE_NS {
        // Due within 20 us of the deadline, it ends past the thread's clock read: the two
        // clocks disagree, and the trace does not show where the spike ended.
        let end_ns = due_ns.saturating_add(latency_ns);
        return Err(format!(
            "explain's wake-up of tid {} due at the deadline ends at {}, {:.3} us after the \
             thread read its clock ({}): the trace clock and CLOCK_MONOTONIC disagree here",
            spike.tid,
            fmt_ts_nanos(end_ns),
            end_ns.saturating_sub(spike.woke_ns) as f64 / 1e3,
            fmt_ts_nanos(spike.woke_ns)
        ));
    }
    Ok(f)
}

/// A time in seconds as a JSON number, in ns.
fn ns_of(v: &Value) -> Option<u64> {
    v.as_f64().map(|s| (s * 1e9).round() as u64)
}

/// The finding of `doc` due within 20 us of the spike's deadline, and its due time in ns.
fn due_at_the_deadline<'a>(doc: &'a Value, spike: &Spike) -> Result<(&'a Value, u64), String> {
    let Some(f) = doc["findings"].get(0) else {
        return Err(format!(
            "the trace holds no wake-up of tid {} due at the spike's deadline {}",
            spike.tid,
            fmt_ts_nanos(spike.expected_ns)
        ));
    };
    match ns_of(&f["expected_ts"]) {
        Some(due) if due.abs_diff(spike.expected_ns) <= SAME_WAKEUP_NS => Ok((f, due)),
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

    /// Due at 1000.123456789, 1500 us late.
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

    fn found(due: f64, latency_us: f64) -> Value {
        json!({"findings": [{"expected_ts": due, "latency_us": latency_us}]})
    }

    #[test]
    fn the_finding_due_at_the_deadline_is_the_spike() {
        // A timer's due time is the deadline itself; a mark's a few us off.
        for due in [1000.123456789, 1000.12346] {
            assert!(the_spike(&found(due, 1490.0), &spike()).is_ok(), "{due}");
        }
        // Its start may lie 20 us before the deadline, so it may be 20 us longer.
        assert!(the_spike(&found(1000.123436789, 1520.0), &spike()).is_ok());
    }

    #[test]
    fn another_wakeup_or_none_is_not_the_spike() {
        let next = found(1000.124456789, 1490.0);
        let err = the_spike(&next, &spike()).unwrap_err();
        assert!(
            err.contains("due at 1000.124456789, not at the spike's deadline 1000.123456789"),
            "{err}"
        );
        let none = json!({"findings": []});
        assert!(the_spike(&none, &spike())
            .unwrap_err()
            .contains("no wake-up of tid 77 due at the spike's deadline 1000.123456789"));
        let undue = json!({"findings": [{"expected_ts": null, "latency_us": 1490.0}]});
        assert!(the_spike(&undue, &spike())
            .unwrap_err()
            .contains("without a due time"));
    }

    /// tests/fixtures/recorded/soak/clocks-disagree.json: the thread read its clock at
    /// 31661.957964662, the trace switched it in at 31661.958009327.
    #[test]
    fn a_finding_ending_past_the_clock_read_is_not_the_spike() {
        let skewed = Spike {
            tid: 1058,
            latency_ns: 1_881_534,
            expected_ns: 31_661_956_083_128,
            woke_ns: 31_661_957_964_662,
            ..spike()
        };
        let err = the_spike(&found(31661.95608345, 1925.877), &skewed).unwrap_err();
        assert_eq!(
            err,
            "explain's wake-up of tid 1058 due at the deadline ends at 31661.958009327, \
             44.665 us after the thread read its clock (31661.957964662): the trace clock and \
             CLOCK_MONOTONIC disagree here"
        );
        let just_over = found(1000.123456789, 1520.001);
        assert!(the_spike(&just_over, &spike()).is_err());
        let no_latency = json!({"findings": [{"expected_ts": 1000.123456789}]});
        assert!(the_spike(&no_latency, &spike())
            .unwrap_err()
            .contains("without a latency"));
    }
}
