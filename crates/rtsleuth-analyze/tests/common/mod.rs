//! Checks shared by the integration tests that compare rtsleuth with the independent
//! reference computations committed next to the fixtures.
// Each test crate that includes this module uses only some of it.
#![allow(dead_code)]

use rtsleuth_analyze::latency::{Latency, LatencyOptions, SortKey};
use rtsleuth_trace::event::Event;
use rtsleuth_trace::input::Input;
use rtsleuth_trace::read::{self, EventSink, TraceInfo};
use serde_json::Value;
use std::path::Path;

pub fn latency_json(path: &Path) -> (Value, TraceInfo) {
    let mut lat = Latency::new(LatencyOptions {
        sort: SortKey::Pid,
        ..Default::default()
    });
    let info = read::read(Input::open(path.to_str().unwrap()).unwrap(), &mut lat).unwrap();
    (lat.document(&info).json, info)
}

/// `latency`'s preemption waits per task against `independent_preemption.py`'s JSON: the
/// same tasks, and per task the count, the longest wait and when it ended, exactly; the sum
/// (avg × count) to 1 ns per wait and p50/p99 within the histogram's 0.1%.
pub fn assert_preemption_matches(trace: &Path, expected: &Path) {
    let (doc, _) = latency_json(trace);
    let got = doc["preemption"]["tasks"].as_array().unwrap();
    let want: Value = serde_json::from_str(&std::fs::read_to_string(expected).unwrap()).unwrap();
    let want = want.as_array().unwrap();
    let name = trace.display();
    assert_eq!(got.len(), want.len(), "{name}: tasks");
    for w in want {
        let pid = &w["pid"];
        let g = got.iter().find(|g| g["pid"] == *pid).unwrap();
        let count = w["count"].as_u64().unwrap();
        assert_eq!(g["count"].as_u64(), Some(count), "{name} pid {pid}");
        assert_eq!(
            ns(&g["max_us"]),
            w["max_ns"].as_u64().unwrap(),
            "{name} pid {pid}"
        );
        let at = (g["max_at_ts"].as_f64().unwrap() * 1e9).round() as u64;
        assert_eq!(at, w["max_at_ns"].as_u64().unwrap(), "{name} pid {pid}");
        if let Some(sum) = w["sum_ns"].as_u64() {
            let got_sum = g["avg_us"].as_f64().unwrap() * 1e3 * count as f64;
            assert!(
                (got_sum - sum as f64).abs() <= count as f64,
                "{name} pid {pid}: sum {got_sum}"
            );
        }
        for (q, key) in [("p50_us", "p50_ns"), ("p99_us", "p99_ns")] {
            let Some(want) = w[key].as_u64() else {
                continue;
            };
            let got = ns(&g[q]) as f64;
            assert!(
                (got - want as f64).abs() <= want as f64 * 1e-3,
                "{name} pid {pid} {q}: {got} vs {want}"
            );
        }
    }
}

pub fn ns(us: &Value) -> u64 {
    (us.as_f64().unwrap() * 1000.0).round() as u64
}

/// Nearest-rank percentile of sorted samples, in integers: `0.999 * 1000` is not 999 in
/// floating point, and the rank must not depend on that.
fn nearest_rank(sorted: &[u64], q: f64) -> u64 {
    let permille = (q * 10.0).round() as usize;
    let rank = (permille * sorted.len()).div_ceil(1000).max(1);
    sorted[rank - 1]
}

/// Asserts that `rtsleuth latency` on `trace` gives, for every task, the wake-up count, the
/// switches, the runtime, min, max, its time, the average and the percentiles that
/// `independent_latency.py` computed into `expected` (a JSON document).
pub fn assert_latency_matches(trace: &Path, expected: &Value) {
    let name = trace.display().to_string();
    let (got, info) = latency_json(trace);
    let tasks = got["tasks"].as_array().unwrap();
    let mut compared = 0;
    for want in expected["tasks"].as_array().unwrap() {
        let pid = want["pid"].as_i64().unwrap();
        let wakeups = want["wakeups"].as_u64().unwrap();
        let g = tasks.iter().find(|t| t["pid"].as_i64() == Some(pid));
        let Some(g) = g else {
            assert_eq!(wakeups, 0, "{name}: pid {pid} missing");
            continue;
        };
        let ctx = format!("{name} pid {pid}");
        assert_eq!(g["wakeups"].as_u64().unwrap(), wakeups, "{ctx}: wake-ups");
        assert_eq!(g["switches"], want["switches"], "{ctx}: switches");
        // Runtime differs by design only where events were lost (rtsleuth does not add an
        // on-CPU interval whose end may have been lost).
        if info.lost_events == 0 {
            assert_eq!(
                ns(&g["runtime_us"]),
                want["runtime_ns"].as_u64().unwrap(),
                "{ctx}: runtime"
            );
        }
        if wakeups == 0 {
            continue;
        }
        compared += 1;
        assert_eq!(
            ns(&g["max_us"]),
            want["max_ns"].as_u64().unwrap(),
            "{ctx}: max"
        );
        assert_eq!(
            ns(&g["min_us"]),
            want["min_ns"].as_u64().unwrap(),
            "{ctx}: min"
        );
        let max_at = (g["max_at_ts"].as_f64().unwrap() * 1e9).round() as u64;
        assert_eq!(max_at, want["max_at_ns"].as_u64().unwrap(), "{ctx}: max at");
        let avg = want["sum_ns"].as_u64().unwrap() as f64 / wakeups as f64;
        assert!(
            (g["avg_us"].as_f64().unwrap() * 1000.0 - avg).abs() < 0.5,
            "{ctx}: avg"
        );
        if let Some(samples) = want["samples_ns"].as_array() {
            let mut s: Vec<u64> = samples.iter().map(|v| v.as_u64().unwrap()).collect();
            s.sort_unstable();
            // Whole-microsecond samples below 2 ms are exact; others (above 2 ms, or with
            // nanoseconds from a binary trace) are within the histogram's 0.1%.
            for (field, q) in [("p50_us", 50.0), ("p99_us", 99.0), ("p999_us", 99.9)] {
                let exact = nearest_rank(&s, q);
                let got = ns(&g[field]);
                if exact < 2_000_000 && exact % 1000 == 0 {
                    assert_eq!(got, exact, "{ctx}: {field}");
                } else {
                    assert!(
                        (got as f64 - exact as f64).abs() <= exact as f64 * 0.001,
                        "{ctx}: {field}"
                    );
                }
            }
        }
    }
    assert!(compared > 0, "{name}: no task with wake-ups");
}

/// (ts ns, cpu, pid, comm, name, payload) of one event line of `trace-cmd report` or kernel text.
pub type ReportRow = (u64, u32, i32, String, String, String);

/// The event lines `re` matches, its groups being comm, pid, cpu, seconds, the fraction
/// (`unit_ns` nanoseconds each), event name and payload. Not every test crate that includes
/// this module parses reports.
#[allow(dead_code)]
pub fn report_rows(text: &str, re: &regex::Regex, unit_ns: u64) -> Vec<ReportRow> {
    text.lines()
        .filter_map(|l| {
            let c = re.captures(l)?;
            let ts = c[4].parse::<u64>().unwrap() * 1_000_000_000
                + c[5].parse::<u64>().unwrap() * unit_ns;
            Some((
                ts,
                c[3].parse().unwrap(),
                c[2].parse().unwrap(),
                c[1].trim().to_string(),
                c[6].to_string(),
                c[7].trim().to_string(),
            ))
        })
        .collect()
}

/// Collects every event as a [`ReportRow`], comparable with a report's lines.
#[allow(dead_code)]
#[derive(Default)]
pub struct RowSink(pub Vec<ReportRow>);

impl EventSink for RowSink {
    fn event(&mut self, ev: &Event<'_>) {
        self.0.push((
            ev.ts,
            ev.cpu,
            ev.pid,
            ev.comm.to_string(),
            ev.name.to_string(),
            ev.payload.to_string(),
        ));
    }
}

/// rtsleuth's reading of `path` as rows, and what it learnt about the trace.
#[allow(dead_code)]
pub fn read_rows(path: &Path) -> (Vec<ReportRow>, TraceInfo) {
    let mut rows = RowSink::default();
    let input = Input::open(path.to_str().unwrap()).unwrap();
    let info = read::read(input, &mut rows).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    (rows.0, info)
}
