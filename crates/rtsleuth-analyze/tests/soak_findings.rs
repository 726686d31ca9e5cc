//! A soak's findings file read back as explain's document: sums, order and the refusals of
//! lines that are not what `measure --explain-every` writes. Expected values are added up by
//! hand from the lines below.

use rtsleuth_analyze::soak::{document, is_findings_file, MAX_LINE};
use serde_json::{json, Value};
use std::io::Write;

fn line(n: u64, tid: i64, latency: f64, rows: Value, warnings: Value) -> Value {
    json!({
        "schema": "rtsleuth.spike/1",
        "spike": {"n": n, "thread": 0, "cpu": tid % 2, "tid": tid, "latency_us": latency,
                  "threshold_us": 500.0, "wall_time": format!("2026-11-26T08:00:0{n}Z")},
        "finding": {"task": {"comm": format!("rtsleuth-m{}", tid % 2), "pid": tid, "prio": 19},
                    "latency_us": latency, "root_cause": rows[0]["kind"]},
        "unexplained": null,
        "aggregate": rows,
        "warnings": warnings,
    })
}

fn row(kind: &str, culprit: Option<&str>, us: f64) -> Value {
    json!({"kind": kind, "culprit": culprit, "spikes": 1, "total_us": us, "max_us": us})
}

fn file_of(lines: &[Value]) -> tempfile::NamedTempFile {
    let mut f = tempfile::NamedTempFile::new().unwrap();
    for l in lines {
        writeln!(f, "{l}").unwrap();
    }
    f
}

fn path(f: &tempfile::NamedTempFile) -> String {
    f.path().to_str().unwrap().to_string()
}

#[test]
fn lines_add_up_per_task_and_overall() {
    let hog = Some("hog-7");
    let unexplained = json!({
        "schema": "rtsleuth.spike/1",
        "spike": {"n": 4, "cpu": 0, "tid": 10, "latency_us": 900.0, "threshold_us": 500.0,
                  "wall_time": "2026-11-26T08:00:04Z"},
        "finding": null, "unexplained": "the capture holds no wake-up of tid 10 to explain",
        "aggregate": [], "warnings": [],
    });
    let f = file_of(&[
        line(
            1,
            10,
            1800.0,
            json!([
                row("higher_priority", hog, 1700.0),
                row("kernel_path", None, 100.0)
            ]),
            json!(["w1"]),
        ),
        line(
            2,
            11,
            700.0,
            json!([
                row("preempt_off", Some("kworker/1:1-40"), 690.0),
                row("kernel_path", None, 10.0)
            ]),
            json!(["w1"]),
        ),
        line(
            3,
            10,
            2000.0,
            json!([
                row("higher_priority", hog, 1950.0),
                row("kernel_path", None, 50.0)
            ]),
            json!(["w2"]),
        ),
        unexplained,
    ]);
    assert!(is_findings_file(&path(&f)).unwrap());
    let doc = document(&path(&f), 2).unwrap();
    let j = &doc.json;
    assert_eq!(j["schema"], "rtsleuth.explain/1");
    assert_eq!(j["threshold_us"], 500.0);
    // The two worst findings, worst first.
    let worst: Vec<f64> = j["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["latency_us"].as_f64().unwrap())
        .collect();
    assert_eq!(worst, vec![2000.0, 1800.0]);
    assert_eq!(
        j["aggregate"],
        json!([
            {"kind": "higher_priority", "culprit": "hog-7", "spikes": 2, "total_us": 3650.0, "max_us": 1950.0},
            {"kind": "preempt_off", "culprit": "kworker/1:1-40", "spikes": 1, "total_us": 690.0, "max_us": 690.0},
            {"kind": "kernel_path", "culprit": null, "spikes": 3, "total_us": 160.0, "max_us": 100.0},
        ])
    );
    let mut summary = rtsleuth_analyze::soak::Summary::new(0);
    for l in std::fs::read_to_string(path(&f)).unwrap().lines() {
        summary.add(&serde_json::from_str(l).unwrap()).unwrap();
    }
    assert_eq!(
        summary.classes(),
        "higher_priority 3650 us, preempt_off 690 us, kernel_path 160 us"
    );
    assert_eq!(
        summary.leaders(1),
        vec!["higher_priority hog-7: 2 spikes, 3650 us"]
    );
    let t10 = j["targets"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["pid"] == 10)
        .unwrap();
    assert_eq!(t10["spikes"], 2);
    assert_eq!(t10["aggregate"][0]["total_us"], 3650.0);
    assert_eq!(
        t10["aggregate"][1],
        json!({"kind": "kernel_path", "culprit": null, "spikes": 2, "total_us": 150.0, "max_us": 100.0})
    );
    assert_eq!(j["trace"]["spikes"], 4);
    assert_eq!(j["trace"]["unexplained"], 1);
    assert_eq!(j["trace"]["cpus"], json!([0, 1]));
    assert_eq!(j["trace"]["wall_start"], "2026-11-26T08:00:01Z");
    assert_eq!(j["trace"]["wall_end"], "2026-11-26T08:00:04Z");
    let warnings = j["warnings"].as_array().unwrap();
    assert_eq!(warnings[0], "w1");
    assert_eq!(warnings[1], "w2");
    assert!(
        warnings[2]
            .as_str()
            .unwrap()
            .starts_with("1 of 4 spikes could not be explained"),
        "{warnings:?}"
    );
}

#[test]
fn other_files_are_not_findings_files() {
    let explain_json = file_of(&[json!({"schema": "rtsleuth.explain/1"})]);
    assert!(!is_findings_file(&path(&explain_json)).unwrap());
    let mut text = tempfile::NamedTempFile::new().unwrap();
    writeln!(text, "# tracer: nop").unwrap();
    assert!(!is_findings_file(&path(&text)).unwrap());
    assert!(!is_findings_file("/no/such/file").unwrap());
}

/// Each refusal names the file, the line and what is wrong, and nothing panics.
#[test]
fn bad_lines_are_refused_with_their_number() {
    let good = line(
        1,
        10,
        800.0,
        json!([row("hardirq", Some("eth0"), 700.0)]),
        json!([]),
    );
    let mut other_threshold = line(2, 10, 900.0, json!([]), json!([]));
    other_threshold["spike"]["threshold_us"] = json!(100.0);
    let mut no_aggregate = line(2, 10, 900.0, json!([]), json!([]));
    no_aggregate.as_object_mut().unwrap().remove("aggregate");
    let cases: Vec<(String, &str)> = vec![
        (format!("{good}\n{{not json\n"), ":2: not JSON"),
        (
            format!("{good}\n{}\n", json!({"schema": "rtsleuth.explain/1"})),
            ":2: not an rtsleuth.spike/1 line",
        ),
        (
            format!("{good}\n{other_threshold}\n"),
            ":2: threshold 100 us where the lines before have 500 us",
        ),
        (
            format!("{good}\n{no_aggregate}\n"),
            ":2: no \"aggregate\" array",
        ),
        (
            format!("{good}\n{}\n", "x".repeat(MAX_LINE + 10)),
            ":2: longer than",
        ),
        (String::new(), "empty input"),
    ];
    for (content, want) in cases {
        let mut f = tempfile::NamedTempFile::new().unwrap();
        f.write_all(content.as_bytes()).unwrap();
        let err = document(&path(&f), 5).unwrap_err().to_string();
        assert!(err.contains(want), "{err} lacks {want}");
        assert!(err.starts_with(&path(&f)), "{err}");
    }
}

#[test]
fn blank_lines_are_skipped() {
    let good = line(
        1,
        10,
        800.0,
        json!([row("hardirq", Some("eth0"), 700.0)]),
        json!([]),
    );
    let mut f = tempfile::NamedTempFile::new().unwrap();
    write!(f, "\n{good}\n\n").unwrap();
    let doc = document(&path(&f), 5).unwrap();
    assert_eq!(doc.json["trace"]["spikes"], 1);
}
