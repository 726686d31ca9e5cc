//! `rtsleuth diff` end to end: identical inputs change nothing; the lab's stock and RT runs of
//! one scenario give the deltas of their own `latency` / `explain --json`; two traces recorded
//! here (cyclictest alone, then under a SCHED_FIFO hog) fail a gate and name the hog; pairs that
//! cannot be compared are refused.

mod common;

use common::{golden, ok, repo_root, run};
use serde_json::Value;
use std::path::PathBuf;

const STOCK: &str = "tests/fixtures/lab/stock/higher_priority/trace.txt.zst";
const RT: &str = "tests/fixtures/lab/rt/higher_priority/trace.txt.zst";
const CLEAN: &str = "tests/fixtures/recorded/diff_hog/clean.dat.zst";
const HOG: &str = "tests/fixtures/recorded/diff_hog/hog.dat.zst";
const METRICS: [&str; 6] = ["count", "avg", "p50", "p99", "p99.9", "max"];

fn json(args: &[&str]) -> Value {
    serde_json::from_str(&ok(args)).unwrap()
}

/// Writes `rtsleuth ARGS --json` to a temporary file and returns its path.
fn saved(name: &str, args: &[&str]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("rtsleuth-diff-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    let mut all = args.to_vec();
    all.push("--json");
    std::fs::write(&path, ok(&all)).unwrap();
    path
}

fn task<'a>(diff: &'a Value, key: &str) -> &'a Value {
    diff["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["task"] == key)
        .unwrap_or_else(|| panic!("no task {key} in {diff}"))
}

/// Every metric and every cause of every task unchanged.
fn assert_no_change(d: &Value) {
    assert!(!d["tasks"].as_array().unwrap().is_empty(), "{d}");
    for t in d["tasks"].as_array().unwrap() {
        if let Some(lat) = t["latency"].as_object() {
            for m in METRICS {
                assert_eq!(lat[m]["delta"], 0.0, "{m} of {}", t["task"]);
                assert_eq!(lat[m]["base"], lat[m]["new"], "{m} of {}", t["task"]);
            }
        }
        if let Some(c) = t["causes"].as_object() {
            assert_eq!(c["spikes"]["base"], c["spikes"]["new"]);
            for row in c["by_culprit"].as_array().unwrap() {
                assert_eq!(row["change"], "same", "{row}");
                assert_eq!(row["delta_us"], 0.0, "{row}");
            }
            assert!(c["grew_most"].is_null());
        }
    }
    assert_eq!(d["only_in_base"], serde_json::json!([]));
    assert_eq!(d["only_in_new"], serde_json::json!([]));
}

#[test]
fn a_trace_against_itself_changes_nothing_and_passes_every_gate() {
    let out = run(&[
        "diff",
        "--json",
        STOCK,
        STOCK,
        "--fail-on",
        "max>+0%",
        "--fail-on",
        "p99.9>+0us",
    ]);
    assert_eq!(out.status.code(), Some(0));
    let d: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_no_change(&d);
    assert_eq!(d["failed"], false);
    let cyclictest = task(&d, "cyclictest");
    assert_eq!(cyclictest["causes"]["spikes"]["base"], 109);
}

#[test]
fn json_documents_against_themselves_change_nothing() {
    let latency = saved("lat.json", &["latency", STOCK]);
    let explain = saved("exp.json", &["explain", "--threshold", "100", STOCK]);
    for p in [&latency, &explain] {
        let p = p.to_str().unwrap();
        let out = run(&["diff", "--json", p, p, "--fail-on", "cyclictest:count<-0%"]);
        assert_eq!(
            out.status.code(),
            Some(if p == latency.to_str().unwrap() { 0 } else { 1 })
        );
        if out.status.code() == Some(0) {
            assert_no_change(&serde_json::from_slice(&out.stdout).unwrap());
        }
        let d = json(&["diff", "--json", p, p]);
        assert_no_change(&d);
    }
    // A trace and its own documents: the same numbers, read two ways.
    let (l, e) = (latency.to_str().unwrap(), explain.to_str().unwrap());
    assert_no_change(&json(&["diff", "--json", STOCK, l]));
    let d = json(&["diff", "--json", e, STOCK]);
    assert_no_change(&d);
    assert_eq!(d["threshold_us"], 100.0);
    assert_eq!(d["latency_compared"], false);
}

/// The lab's higher_priority scenario on the stock and the PREEMPT_RT kernel: every delta is the
/// difference of what `latency --json` and `explain --threshold 100 --json` say of each run.
#[test]
fn lab_stock_against_rt_gives_the_deltas_of_each_runs_own_reports() {
    let d = json(&["diff", "--json", STOCK, RT]);
    let lat = |trace| json(&["latency", "--json", trace]);
    let (lb, ln) = (lat(STOCK), lat(RT));
    let row = |doc: &Value, comm: &str| {
        let mut rows: Vec<Value> = doc["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|t| t["comm"] == comm && t["prio"].as_i64().unwrap() < 100)
            .cloned()
            .collect();
        assert_eq!(rows.len(), 1, "{comm}");
        rows.remove(0)
    };
    let c = task(&d, "cyclictest");
    for (metric, field) in [
        ("count", "wakeups"),
        ("avg", "avg_us"),
        ("p50", "p50_us"),
        ("p99", "p99_us"),
        ("p99.9", "p999_us"),
        ("max", "max_us"),
    ] {
        let b = row(&lb, "cyclictest")[field].as_f64().unwrap();
        let n = row(&ln, "cyclictest")[field].as_f64().unwrap();
        let m = &c["latency"][metric];
        let r3 = |x: f64| (x * 1e3).round() / 1e3;
        assert_eq!(m["base"].as_f64().unwrap(), r3(b), "{metric}");
        assert_eq!(m["new"].as_f64().unwrap(), r3(n), "{metric}");
        assert_eq!(m["delta"].as_f64().unwrap(), r3(r3(n) - r3(b)), "{metric}");
    }
    // The figures themselves, read off `latency` of each run by hand.
    assert_eq!(c["latency"]["max"]["base"], 27642.0);
    assert_eq!(c["latency"]["max"]["new"], 30083.0);
    assert_eq!(c["latency"]["max"]["delta"], 2441.0);
    assert_eq!(c["latency"]["max"]["change_pct"], 8.83);
    assert_eq!(c["latency"]["count"]["delta"], -7.0);
    // 1219 and 1212 wake-ups leave 1 sample above p99.9: weak; 12 above p99: not.
    assert_eq!(
        c["latency"]["p99.9"]["tail_samples"],
        serde_json::json!({"base": 1, "new": 1})
    );
    assert_eq!(c["latency"]["p99.9"]["weak"], true);
    assert_eq!(c["latency"]["p99"]["weak"], false);

    // Causes: the per-task aggregate of each run's explain, pid stripped from the culprit.
    let exp = |trace| json(&["explain", "--threshold", "100", "--json", trace]);
    let total = |doc: &Value, kind: &str, culprit: &str| -> f64 {
        doc["targets"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|t| t["comm"] == "cyclictest")
            .flat_map(|t| t["aggregate"].as_array().unwrap().iter())
            .filter(|a| {
                a["kind"] == kind
                    && a["culprit"]
                        .as_str()
                        .is_some_and(|c| c.starts_with(culprit))
            })
            .map(|a| a["total_us"].as_f64().unwrap())
            .sum()
    };
    let (eb, en) = (exp(STOCK), exp(RT));
    let fifo = c["causes"]["by_culprit"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["kind"] == "higher_priority" && r["culprit"] == "fifo_burst")
        .unwrap();
    assert_eq!(
        fifo["base"]["total_us"].as_f64().unwrap(),
        total(&eb, "higher_priority", "fifo_burst-")
    );
    assert_eq!(
        fifo["new"]["total_us"].as_f64().unwrap(),
        total(&en, "higher_priority", "fifo_burst-")
    );
    assert_eq!(fifo["delta_us"], 2485.0);
    assert_eq!(fifo["change"], "grown");
    assert_eq!(c["causes"]["grew_most"]["kind"], "black_hole");
    let out = run(&[
        "diff",
        "--json",
        STOCK,
        RT,
        "--fail-on",
        "cyclictest:max>+5%",
    ]);
    assert_eq!(out.status.code(), Some(3));
    golden("diff-lab.json", &String::from_utf8(out.stdout).unwrap());
}

#[test]
fn lab_text_report() {
    let out = run(&[
        "diff",
        STOCK,
        RT,
        "--fail-on",
        "cyclictest:max>+5%",
        "--fail-on",
        "p99>+20%",
    ]);
    assert_eq!(out.status.code(), Some(3));
    let text = String::from_utf8(out.stdout).unwrap();
    golden("diff-lab.txt", &text);
}

/// Recorded on this machine (tests/fixtures/recorded/diff_hog/README.md): cyclictest alone, then
/// with fifo_burst at SCHED_FIFO 90 spinning 1 ms every 50 ms on its CPU.
#[test]
fn recorded_hog_fails_the_gate_and_is_named() {
    let out = run(&["diff", CLEAN, HOG, "--fail-on", "max>+100%"]);
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(
        stderr.contains("rtsleuth: gate failed: max>+100%: cyclictest max 260.237 -> 1038.046 us (+777.809 us, +298.9%); grew most: higher_priority fifo_burst +44966.563 us (0 -> 79 spikes)"),
        "{stderr}"
    );
    let d = json(&["diff", "--json", CLEAN, HOG]);
    let c = task(&d, "cyclictest");
    // The independent reference (independent_latency.py on `trace-cmd report -t`): 4000 and
    // 3992 wake-ups, max 260.237 and 1038.046 us, avg 8.623 and 20.931 us.
    assert_eq!(c["latency"]["count"]["base"], 4000.0);
    assert_eq!(c["latency"]["count"]["new"], 3992.0);
    assert_eq!(c["latency"]["max"]["delta"], 777.809);
    assert_eq!(c["latency"]["avg"]["base"], 8.623);
    assert_eq!(c["latency"]["avg"]["new"], 20.931);
    assert_eq!(c["latency"]["avg"]["delta"], 12.308);
    assert_eq!(
        c["causes"]["spikes"],
        serde_json::json!({"base": 3, "new": 93})
    );
    assert_eq!(c["causes"]["grew_most"]["culprit"], "fifo_burst");
    assert_eq!(d["only_in_new"], serde_json::json!(["fifo_burst"]));

    let same = run(&["diff", CLEAN, CLEAN, "--fail-on", "max>+100%"]);
    assert_eq!(same.status.code(), Some(0));
}

#[test]
fn incomparable_pairs_are_refused() {
    let latency = saved("lat2.json", &["latency", STOCK]);
    let explain = saved("exp2.json", &["explain", "--threshold", "100", STOCK]);
    let explain50 = saved("exp50.json", &["explain", "--threshold", "50", STOCK]);
    let top_only = saved("top.json", &["explain", STOCK]);
    let measure = repo_root().join("crates/rtsleuth/tests/golden/measure.json");
    let s = |p: &PathBuf| p.to_str().unwrap().to_string();
    for (a, b, why) in [
        (s(&latency), s(&explain), "nothing in common"),
        (
            s(&measure),
            s(&latency),
            "measures latency as measured latency",
        ),
        (
            s(&measure),
            STOCK.to_string(),
            "compare measure JSON with measure JSON",
        ),
        (
            s(&explain),
            s(&explain50),
            "at least 100 us late against 50 us",
        ),
        (
            s(&top_only),
            STOCK.to_string(),
            "explain ran without --threshold",
        ),
        (
            "crates/rtsleuth/tests/golden/stats.json".into(),
            STOCK.to_string(),
            "rtsleuth.stats/1 has no per-task",
        ),
    ] {
        let out = run(&["diff", &a, &b]);
        let stderr = String::from_utf8(out.stderr).unwrap();
        assert_eq!(out.status.code(), Some(1), "{a} {b}: {stderr}");
        assert!(stderr.contains(why), "{a} {b}: {stderr}");
        assert!(out.stdout.is_empty());
    }
    // measure against measure compares the threads.
    let d = json(&["diff", "--json", &s(&measure), &s(&measure)]);
    assert_no_change(&d);
    assert_eq!(task(&d, "rtsleuth-m1")["latency"]["max"]["new"], 2345.678);
}

#[test]
fn gates_that_cannot_be_read_or_apply_to_nothing() {
    let out = run(&["diff", STOCK, RT, "--fail-on", "p98>+20%"]);
    assert_eq!(
        out.status.code(),
        Some(2),
        "a misspelt gate is a usage error"
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("count, avg, p50, p99, p99.9, max"));
    let out = run(&["diff", STOCK, RT, "--fail-on", "cyclictset:max>1ms"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("applies to no task compared"));
    // NEW's own value, in ms.
    let out = run(&["diff", STOCK, RT, "--fail-on", "cyclictest:max>30ms"]);
    assert_eq!(out.status.code(), Some(3));
    let out = run(&["diff", STOCK, RT, "--fail-on", "cyclictest:max>31ms"]);
    assert_eq!(out.status.code(), Some(0));
}
