//! One line of `findings.jsonl` (`rtsleuth.spike/1`): the spike as the measuring thread saw
//! it, and what `explain` made of its capture.
//!
//! A line is written as soon as its spike is explained, so a run killed at 03:00 still has
//! every spike before that on disk. `finding` is the `rtsleuth.explain/1` finding object;
//! `aggregate` its causes (explain's aggregate rows over that one finding), so that `report`,
//! `diff` and the soak's own totals add lines up without re-deriving anything.

use crate::measure::thread::Spike;
use rtsleuth_analyze::soak::SCHEMA;
use rtsleuth_trace::event::ns_to_us;
use serde_json::{json, Value};
use std::path::Path;
use std::time::SystemTime;

/// What the capture of one spike gave.
pub struct Explained<'a> {
    /// The finding for the spike, or why there is none.
    pub finding: Result<&'a Value, String>,
    /// Its causes: explain's aggregate rows (none without a finding).
    pub aggregate: &'a [Value],
    /// explain's warnings on the capture.
    pub warnings: &'a [Value],
}

/// Where and when a spike was captured.
pub struct Capture<'a> {
    /// The capture's number in the run, from 1.
    pub n: u64,
    /// When the thread read its clock, as wall-clock time.
    pub wall: SystemTime,
    /// From that clock read until recording was on again: what no capture can show.
    pub blind_ns: u64,
    /// The file, when it is among the worst kept.
    pub trace_file: Option<&'a Path>,
}

/// The line for `spike`, captured as `at` says.
pub fn spike_line(spike: &Spike, at: &Capture<'_>, explained: &Explained<'_>) -> Value {
    let (finding, why) = match &explained.finding {
        Ok(f) => ((*f).clone(), Value::Null),
        Err(why) => (Value::Null, why.clone().into()),
    };
    json!({
        "schema": SCHEMA,
        "spike": {
            "n": at.n,
            "thread": spike.thread,
            "cpu": spike.cpu,
            "tid": spike.tid,
            "latency_us": ns_to_us(spike.latency_ns),
            "threshold_us": ns_to_us(spike.threshold_ns),
            "cycle": spike.cycle,
            "expected_mono_ns": spike.expected_ns,
            "wall_time": humantime::format_rfc3339_micros(at.wall).to_string(),
            "blind_us": ns_to_us(at.blind_ns),
            "trace_file": at.trace_file.map(|p| p.display().to_string()),
        },
        "finding": finding,
        "unexplained": why,
        "aggregate": explained.aggregate,
        "warnings": explained.warnings,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn a_line_carries_the_spike_the_finding_and_its_causes() {
        let spike = Spike {
            thread: 1,
            cpu: 0,
            tid: 4242,
            latency_ns: 1_834_250,
            threshold_ns: 1_000_000,
            cycle: 2999,
            expected_ns: 5_000_000_000,
            woke_ns: 5_001_834_250,
        };
        let finding = json!({"root_cause": "higher_priority"});
        let aggregate = [
            json!({"kind": "higher_priority", "culprit": "rt_hog-77", "spikes": 1,
                                 "total_us": 1800.0, "max_us": 1800.0}),
        ];
        let wall = SystemTime::UNIX_EPOCH + Duration::from_micros(1_795_000_000_123_456);
        let at = Capture {
            n: 3,
            wall,
            blind_ns: 41_500_000,
            trace_file: Some(Path::new("out/spike-000003.dat")),
        };
        let line = spike_line(
            &spike,
            &at,
            &Explained {
                finding: Ok(&finding),
                aggregate: &aggregate,
                warnings: &[],
            },
        );
        assert_eq!(line["schema"], "rtsleuth.spike/1");
        assert_eq!(line["spike"]["latency_us"], 1834.25);
        assert_eq!(line["spike"]["threshold_us"], 1000.0);
        assert_eq!(line["spike"]["wall_time"], "2026-11-18T11:06:40.123456Z");
        assert_eq!(line["spike"]["trace_file"], "out/spike-000003.dat");
        assert_eq!(line["spike"]["blind_us"], 41500.0);
        assert_eq!(line["finding"]["root_cause"], "higher_priority");
        assert_eq!(line["unexplained"], Value::Null);
        assert_eq!(
            line["aggregate"][0],
            json!({"kind": "higher_priority", "culprit": "rt_hog-77", "spikes": 1,
                   "total_us": 1800.0, "max_us": 1800.0})
        );
    }
}
