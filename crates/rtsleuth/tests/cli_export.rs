//! `rtsleuth export TRACE --perfetto OUT`, checked with Perfetto's own protobuf classes
//! (tests/fixtures/perfetto/check_export.py, PyPI `perfetto`; .ci/run installs it): one slice
//! per timeline stretch plus one enclosing slice per finding, named by kind and culprit, at the
//! stretches' times in ns, flows from each culprit to the victim's run. That rtsleuth reads the
//! export back event for event is crates/rtsleuth-render/tests/export_perfetto.rs.
//!
//! Without python3 and the `perfetto` package the checks print `skipped: ...` and pass, unless
//! `CI` is set.

mod common;

use common::{ok, peers_ready, repo_root, rtsleuth};
use serde_json::Value;
use std::process::Command;

/// Whether Perfetto's Python classes can be imported here.
fn perfetto_python() -> bool {
    let import = "import perfetto.protos.perfetto.trace.perfetto_trace_pb2";
    peers_ready(
        &[&["python3", "-c", import]],
        "pip install perfetto; .ci/run installs it",
    )
}

/// Exports `trace` with `options`, and returns explain's JSON with the same options, the
/// checker's summary, and the export's size.
fn export_and_check(trace: &str, options: &[&str]) -> (Value, Value, u64) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.pftrace");
    let out = out.to_str().unwrap();
    let mut args = vec!["export", trace, "--perfetto", out];
    args.extend(options);
    let run = rtsleuth().args(&args).output().unwrap();
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "{stderr}");
    assert!(
        stderr.contains(&format!("rtsleuth: wrote {out}: ")),
        "{stderr}"
    );
    let mut args = vec!["explain", trace, "--json"];
    args.extend(options);
    let explain_json = ok(&args);
    let explain_path = dir.path().join("explain.json");
    std::fs::write(&explain_path, &explain_json).unwrap();
    let check = Command::new("python3")
        .arg(repo_root().join("tests/fixtures/perfetto/check_export.py"))
        .args([out, explain_path.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(
        check.status.success(),
        "check_export.py: {}",
        String::from_utf8_lossy(&check.stderr)
    );
    let size = std::fs::metadata(out).unwrap().len();
    (
        serde_json::from_str(&explain_json).unwrap(),
        serde_json::from_slice(&check.stdout).unwrap(),
        size,
    )
}

/// Per finding: slices = stretches + 1, flows = stretches with a culprit.
fn assert_slices_match(explain: &Value, check: &Value) {
    let findings = explain["findings"].as_array().unwrap();
    let drawn = check["findings"].as_array().unwrap();
    assert_eq!(findings.len(), drawn.len());
    for (f, d) in findings.iter().zip(drawn) {
        let timeline = f["timeline"].as_array().unwrap();
        assert_eq!(d["slices"], timeline.len() + 1);
        let culprits = timeline.iter().filter(|s| !s["culprit"].is_null()).count();
        assert_eq!(d["flows"], culprits);
    }
}

/// The done-when: the lab's hardirq run (a driver's hrtimer callback `hardirq_fire`
/// busy for 30 ms on CPU1 while cyclictest-194 was due) drawn in Perfetto.
#[test]
fn lab_hardirq_export_decodes_with_perfettos_classes() {
    if !perfetto_python() {
        return;
    }
    let (explain, check, size) =
        export_and_check("tests/fixtures/lab/rt/hardirq/trace.txt.zst", &[]);
    assert_slices_match(&explain, &check);
    // The events rtsleuth-render's round-trip test reads back, all in bundles.
    assert_eq!(check["events"], 16359);
    let worst = &check["findings"][0];
    assert_eq!(worst["pid"], 194);
    let names: Vec<&str> = worst["names"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap())
        .collect();
    assert!(
        names
            .iter()
            .any(|n| n.starts_with("hardirq: ") && n.contains("hardirq_fire")),
        "{names:?}"
    );
    println!("lab hardirq: {} bytes, {check}", size);
}

#[test]
fn recorded_trace_export_draws_the_culprit() {
    if !perfetto_python() {
        return;
    }
    let (explain, check, _) = export_and_check("tests/fixtures/recorded/fifo_above/trace.txt", &[]);
    assert_slices_match(&explain, &check);
    assert_eq!(check["events"], 16580);
    assert_eq!(check["events_per_cpu"]["0"], 15822);
    // The README's finding: 329.156 us, 321 of them fifo_burst's.
    assert_eq!(
        check["findings"][0]["names"][2],
        "higher_priority: fifo_burst-17318"
    );
    assert_eq!(check["findings"][0]["run_ns"], 653_572_381_000u64);
}

/// The options narrow what is drawn exactly as they narrow `explain`.
#[test]
fn export_honours_explains_options() {
    if !perfetto_python() {
        return;
    }
    let (explain, check, _) = export_and_check(
        "tests/fixtures/recorded/fifo_above/trace.txt",
        &["--task", "fifo_burst", "--top", "2", "--threshold", "50"],
    );
    assert_slices_match(&explain, &check);
    assert_eq!(explain["findings"].as_array().unwrap().len(), 2);
    for f in check["findings"].as_array().unwrap() {
        assert_eq!(f["pid"], 17318);
    }
}
