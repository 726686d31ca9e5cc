//! The `latency` and `stats` numbers on traces recorded on a real kernel, checked against an
//! independent implementation of the same definition
//! (`tests/fixtures/recorded/independent_latency.py`, whose output is committed next to each
//! trace as `<trace>.expected.json`).

mod common;

use common::{latency_json, ns};
use rtsleuth_analyze::stats::Stats;
use rtsleuth_trace::input::Input;
use rtsleuth_trace::read;
use serde_json::Value;
use std::path::{Path, PathBuf};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/recorded")
}

/// Every text trace that has an expected file.
fn cases() -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut dirs = vec![fixtures()];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                dirs.push(p);
            } else if let Some(name) = p.to_str().and_then(|s| s.strip_suffix(".expected.json")) {
                // `explain.expected.json` files belong to tests/explain.rs, not to a trace.
                if Path::new(name).is_file() {
                    out.push(PathBuf::from(name));
                }
            }
        }
    }
    out.sort();
    assert!(
        out.len() >= 12,
        "expected the recorded fixtures, found {out:?}"
    );
    out
}

#[test]
fn latency_matches_the_independent_computation() {
    for trace in cases() {
        let expected: Value = serde_json::from_str(
            &std::fs::read_to_string(format!("{}.expected.json", trace.display())).unwrap(),
        )
        .unwrap();
        common::assert_latency_matches(&trace, &expected);
    }
}

#[test]
fn stats_counts_every_line_like_the_independent_count() {
    for trace in cases() {
        let expected: Value = serde_json::from_str(
            &std::fs::read_to_string(format!("{}.expected.json", trace.display())).unwrap(),
        )
        .unwrap();
        let mut stats = Stats::new();
        let info = read::read(Input::open(trace.to_str().unwrap()).unwrap(), &mut stats).unwrap();
        let doc = stats.document(&info).json;
        let name = trace.display();
        assert_eq!(doc["schema"], "rtsleuth.stats/1");
        assert_eq!(doc["events"], expected["event_lines"], "{name}: events");
        assert_eq!(
            doc["per_event"], expected["events"],
            "{name}: per-event counts"
        );
        let lines = &doc["lines"];
        let other = lines["total"].as_u64().unwrap() - lines["events"].as_u64().unwrap();
        assert_eq!(
            other,
            expected["other_lines"].as_u64().unwrap(),
            "{name}: non-event lines"
        );
        assert_eq!(lines["unparsed"], 0, "{name}: every line understood");
    }
}

/// One buffer printed six ways (plain, TGID column, latency format, trace_pipe-style header,
/// `trace-cmd report`, `trace-cmd report -R`, compressed) must give the same answer.
#[test]
fn every_printed_form_of_one_recording_agrees() {
    let v = fixtures().join("variants");
    let reference = latency_json(&v.join("trace.txt")).0["tasks"].clone();
    for other in [
        "trace-tgid.txt",
        "report.txt",
        "report-raw.txt",
        "trace.txt.gz",
        "trace.txt.zst",
        "trace.txt.xz",
    ] {
        assert_eq!(
            latency_json(&v.join(other)).0["tasks"],
            reference,
            "{other}"
        );
    }
    // The latency format prints times relative to the buffer start, rounded to microseconds,
    // so durations may differ by a microsecond; the counts agree (its own durations are
    // checked against the independent computation above).
    let lat = latency_json(&v.join("trace-latency-format.txt")).0["tasks"].clone();
    for (a, b) in lat
        .as_array()
        .unwrap()
        .iter()
        .zip(reference.as_array().unwrap())
    {
        for f in ["pid", "wakeups", "switches"] {
            assert_eq!(a[f], b[f], "latency format, pid {}: {f}", b["pid"]);
        }
    }
}

/// The injected cause is visible: in `fifo_above` the worst cyclictest wake-up (325 us) ends
/// when the SCHED_FIFO 90 burst task hands the CPU back; in `fifo_below` the burst task (below
/// cyclictest) never delays it by a whole burst.
#[test]
fn injected_bursts_show_in_cyclictest_latency() {
    let (above, _) = latency_json(&fixtures().join("fifo_above/trace.txt"));
    let thread = |doc: &Value, pid: i64| {
        doc["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["pid"] == pid)
            .unwrap()
            .clone()
    };
    // cyclictest's measuring thread (the main thread, 17320, runs at prio 120).
    let ct = thread(&above, 17321);
    assert_eq!(
        (ct["comm"].as_str(), ct["prio"].as_i64()),
        (Some("cyclictest"), Some(19))
    );
    assert_eq!(ns(&ct["max_us"]), 325_000);
    assert_eq!(ct["max_at_ts"].as_f64().unwrap(), 653.572381);
    let (below, _) = latency_json(&fixtures().join("fifo_below/trace.txt"));
    let ct = thread(&below, 15170);
    assert_eq!(ct["prio"], 19);
    assert!(
        ns(&ct["max_us"]) < 300_000,
        "a 300 us burst below cyclictest's prio delayed it: {ct}"
    );
}
