//! The `rtsleuth` binary on a real Perfetto trace (../shared/fixtures/realworld, see
//! crates/rtsleuth-trace/tests/perfetto.rs for how its contents were checked): `stats`,
//! `latency` and `explain` read it, and the numbers they show are the trace's; with one packet
//! damaged, the rest is read and the damage is a warning.
//!
//! When the shared folder is absent the tests print `skipped: ...` and pass, unless `CI` is
//! set.

mod common;

use common::ok;
use serde_json::Value;
use std::path::Path;

const TRACE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../../shared/fixtures/realworld/ms-perf-tools-linux-android/TestData/Perfetto/perfetto_android12_cpuschedstack.pftrace"
);

fn trace() -> Option<&'static str> {
    if Path::new(TRACE).is_file() {
        return Some(TRACE);
    }
    if std::env::var_os("CI").is_some() {
        panic!("{TRACE} not found and CI is set");
    }
    println!("skipped: {TRACE} not found");
    None
}

#[test]
fn stats_counts_the_events_of_the_trace() {
    let Some(t) = trace() else { return };
    let text = ok(&["stats", t]);
    assert!(text.contains("Perfetto protobuf"), "{text}");
    assert!(
        text.contains("4 with events (0,1,2,3), 4 in the system"),
        "{text}"
    );
    let json: Value = serde_json::from_str(&ok(&["stats", t, "--json"])).unwrap();
    // The independent decoder's counts (tests/fixtures/perfetto/*.expected.json).
    assert_eq!(json["events"], 64287);
    assert_eq!(json["format"], "perfetto");
    assert_eq!(json["per_event"]["sched_switch"], 23536);
    assert_eq!(json["per_event"]["sched_waking"], 13907);
    assert_eq!(json["per_event"]["cpu_idle"], 12853);
    let per_cpu: Vec<&Value> = json["per_cpu"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| &c["events"])
        .collect();
    assert_eq!(per_cpu, [17477, 19107, 13178, 14525]);
}

#[test]
fn latency_and_explain_run_on_the_trace() {
    let Some(t) = trace() else { return };
    let json: Value = serde_json::from_str(&ok(&["latency", t, "--json"])).unwrap();
    assert_eq!(json["start_event"], "sched_waking");
    let wakeups: u64 = json["per_cpu"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["wakeups"].as_u64().unwrap())
        .sum();
    // Every measured wake-up is one of the trace's 13907 sched_waking events.
    assert!((10_000..=13907).contains(&wakeups), "{wakeups}");
    let text = ok(&["explain", t, "--all", "--top", "3"]);
    for n in ["#1 ", "#2 ", "#3 "] {
        assert!(text.contains(n), "explain shows no finding {n}: {text}");
    }
}

/// The packet at byte 2 075 947 of the trace: 30 418 bytes (a 4-byte header) holding 625
/// events, the one `crates/rtsleuth-analyze/tests/perfetto_damaged.rs` damages (it finds it by
/// walking the file and prints these numbers).
const PACKET: usize = 2_075_947;
const PAYLOAD: std::ops::Range<usize> = PACKET + 4..PACKET + 30_418;

#[test]
fn stats_reads_a_trace_with_a_damaged_packet_and_warns() {
    let Some(t) = trace() else { return };
    let mut bytes = std::fs::read(t).unwrap();
    bytes[PAYLOAD].fill(0xff);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("damaged.pftrace");
    std::fs::write(&path, bytes).unwrap();
    let path = path.to_str().unwrap();
    let warning = format!(
        "1 TracePacket from byte {PACKET} on could not be decoded and was skipped (first: TracePacket: failed to decode Protobuf message: invalid varint); the other packets were read"
    );
    let text = ok(&["stats", path]);
    assert!(text.contains(&warning), "{text}");
    let out = common::run(&["stats", path, "--json"]);
    assert!(out.status.success());
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(stderr, format!("rtsleuth: warning: {warning}\n"));
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["events"], 64287 - 625);
    assert_eq!(json["warnings"], serde_json::json!([warning]));
}
