//! `rtsleuth wq` end to end on the recorded workqueue trace (tests/fixtures/recorded/wq, whose
//! figures crates/rtsleuth-analyze/tests/wq.rs checks against the independent reference): golden
//! text and JSON, and the same report from the trace.dat of the same buffer.

mod common;

use common::{golden, ok};
use serde_json::Value;

const TRACE: &str = "tests/fixtures/recorded/wq/trace.txt.zst";
const DAT: &str = "tests/fixtures/recorded/wq/trace.dat";

#[test]
fn wq_text() {
    let out = ok(&["wq", "--top", "5", TRACE]);
    // The worst wait and its function, the unbound ext4 conversion work.
    assert!(
        out.contains(
            "45748      439  ext4_end_io_rsv_work        ext4-rsv-conversion  kworker/u8:3-3674"
        ),
        "{out}"
    );
    golden("wq.txt", &out);
}

#[test]
fn wq_json() {
    let out = ok(&["wq", "--json", "--top", "3", TRACE]);
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["schema"], "rtsleuth.wq/1");
    assert_eq!(v["trace"]["format"], "ftrace_text");
    assert_eq!(v["worst_wait"].as_array().unwrap().len(), 3);
    assert_eq!(v["worst_wait"][0]["wait_us"], 45748.0);
    assert_eq!(v["counts"]["requeued"], 149);
    assert_eq!(v["counts"]["unqueued"], 65);
    golden("wq.json", &out);
}

/// trace.dat holds the same works with nanosecond times: the same rows in the same order.
#[test]
fn wq_trace_dat_has_the_same_rows() {
    let rows = |path: &str| -> Vec<(String, u64, u64)> {
        let v: Value = serde_json::from_str(&ok(&["wq", "--json", path])).unwrap();
        v["functions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| {
                let n = |k: &str| f[k]["count"].as_u64().unwrap();
                (
                    f["function"].as_str().unwrap().to_string(),
                    n("wait"),
                    n("exec"),
                )
            })
            .collect()
    };
    let text = rows(TRACE);
    assert_eq!(text.len(), 14);
    assert_eq!(text[0], ("ext4_end_io_rsv_work".to_string(), 647, 647));
    assert_eq!(rows(DAT), text);
}

#[test]
fn wq_on_a_trace_without_workqueue_events_warns() {
    let out = ok(&["wq", "tests/fixtures/recorded/variants/trace.txt"]);
    assert!(
        out.contains("warning: the trace has no workqueue events"),
        "{out}"
    );
}

/// A worst wait's `explained` is exactly the finding `explain --all --works` gives for the
/// kworker's wake-up by that queueing (docs/claims.md, "Works"), which the referee checks.
#[test]
fn wq_explained_is_explains_finding() {
    let wq: Value = serde_json::from_str(&ok(&["wq", "--json", "--top", "10", TRACE])).unwrap();
    let args = [
        "explain",
        TRACE,
        "--all",
        "--works",
        "--threshold",
        "0",
        "--top",
        "100000",
    ];
    let explain: Value = serde_json::from_str(&ok(&[&args[..], &["--json"]].concat())).unwrap();
    let findings = explain["findings"].as_array().unwrap();
    let mut explained = 0;
    for w in wq["worst_wait"].as_array().unwrap() {
        let e = &w["explained"];
        if e.is_null() {
            continue;
        }
        explained += 1;
        let same = findings
            .iter()
            .find(|f| f["task"] == e["task"] && f["wakeup_ts"] == e["wakeup_ts"])
            .unwrap_or_else(|| panic!("explain has no finding for {e}"));
        assert_eq!(same, e);
        if let Some(n) = w["works_before"].as_u64() {
            let (run, start) = (
                e["run_ts"].as_f64().unwrap(),
                w["start_ts"].as_f64().unwrap(),
            );
            let pid = e["task"]["pid"].as_i64().unwrap();
            assert_eq!(n, executions_started(pid, run, start), "{w}");
        }
    }
    assert!(
        explained >= 2,
        "{explained} of the 10 worst waits explained"
    );
}

/// The `workqueue_execute_start` lines of kworker `pid` in [from, to), read from the text.
fn executions_started(pid: i64, from: f64, to: f64) -> u64 {
    let raw = std::fs::read(common::repo_root().join(TRACE)).unwrap();
    let text = String::from_utf8(zstd::decode_all(raw.as_slice()).unwrap()).unwrap();
    let column = format!("-{pid} ");
    let ts = |l: &str| -> f64 {
        let head = l.split(": workqueue_execute_start").next().unwrap();
        head.rsplit(' ').next().unwrap().parse().unwrap()
    };
    (text.lines())
        .filter(|l| l.contains(": workqueue_execute_start:") && l.contains(&column))
        .filter(|l| (from..to).contains(&ts(l)))
        .count() as u64
}
