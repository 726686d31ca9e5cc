//! Latency-mode trace.dat files (the tracer's text stored instead of ring-buffer pages),
//! written by trace-cmd 3.1.6 itself (`trace-cmd extract -p wakeup`, see
//! tests/fixtures/tracedat/README.md): version 7 zstd (chunked compressed text section), and
//! its `trace-cmd convert` copies in version 6 (`latency  \0` + text) and version 7
//! uncompressed. Every event rtsleuth reads equals the event lines `trace-cmd report` printed
//! for the file (stored as latency-report.txt.zst, and re-run when trace-cmd is installed),
//! and the wake-up latencies equal the independent reference computed on that report.

mod common;

use rtsleuth_trace::input::Input;
use rtsleuth_trace::read;
use std::path::{Path, PathBuf};
use std::process::Command;

const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/fixtures/tracedat");
const FILES: [&str; 3] = ["latency.dat", "latency-v6.dat", "latency-v7-none.dat"];

fn fixture(name: &str) -> PathBuf {
    Path::new(DIR).join(name)
}

use common::ReportRow as Row;

/// What `trace-cmd report -i latency.dat` printed when the fixture was recorded.
fn stored_report() -> String {
    let packed = std::fs::read(fixture("latency-report.txt.zst")).unwrap();
    String::from_utf8(zstd::decode_all(&packed[..]).unwrap()).unwrap()
}

/// The event lines of a report of kernel text (`comm-pid [cpu] flags sec.usec: name: payload`).
fn report_rows(report: &str) -> Vec<Row> {
    let re =
        regex::Regex::new(r"^\s*(.*)-(\d+)\s+\[(\d+)\]\s+\S+\s+(\d+)\.(\d{6}):\s+(\w+):\s?(.*)$")
            .unwrap();
    // Header lines start with '#'; the regex needs the flags column, so they never match.
    common::report_rows(report, &re, 1_000)
}

#[test]
fn the_report_is_the_stored_text_and_parses_whole() {
    let report = stored_report();
    let lines: Vec<&str> = report.lines().collect();
    // trace-cmd prints "cpus=N", the text as the kernel wrote it, then an empty line.
    assert_eq!(lines.len(), 1368);
    assert_eq!(lines[0], "cpus=2");
    assert_eq!(lines[1], "# tracer: nop");
    assert_eq!(
        lines[3],
        "# entries-in-buffer/entries-written: 1354/1354   #P:2"
    );
    assert_eq!(lines[1367], "");
    // 12 header lines, 1354 events: the regex misses none.
    assert_eq!(lines.iter().filter(|l| l.starts_with('#')).count(), 12);
    assert_eq!(report_rows(&report).len(), 1354);
}

#[test]
fn every_event_of_every_version_equals_trace_cmd_report() {
    let expected = report_rows(&stored_report());
    for f in FILES {
        let (rows, info) = common::read_rows(&fixture(f));
        assert_eq!(rows.len(), 1354, "{f}");
        assert_eq!(info.events, 1354, "{f}");
        assert_eq!(info.cpus, vec![0, 1], "{f}");
        assert!(info.notes.is_empty(), "{f}: {:?}", info.notes);
        let first_diff = rows.iter().zip(&expected).position(|(a, b)| a != b);
        assert_eq!(
            first_diff.map(|i| (&rows[i], &expected[i])),
            None,
            "{f} differs from trace-cmd report"
        );
    }
    let (first, last) = (&expected[0], &expected[1353]);
    assert_eq!(first.0, 14_319_426_737_000);
    assert_eq!(first.4, "hrtimer_setup");
    assert_eq!(
        (last.0, last.4.as_str()),
        (14_319_513_616_000, "sched_process_wait")
    );
}

/// The stored report is trace-cmd's: re-run it when trace-cmd is installed (required in CI).
#[test]
fn trace_cmd_still_reports_the_same_text() {
    for f in FILES {
        let out = match Command::new("trace-cmd")
            .args(["report", "-i"])
            .arg(fixture(f))
            .output()
        {
            Ok(o) => o,
            Err(_) if std::env::var_os("CI").is_none() => {
                println!("skipped: trace-cmd is not installed");
                return;
            }
            Err(e) => panic!("CI must have trace-cmd: {e}"),
        };
        assert!(out.status.success(), "{f}");
        assert!(
            String::from_utf8_lossy(&out.stdout) == stored_report(),
            "{f}: trace-cmd report differs from latency-report.txt.zst"
        );
    }
}

#[test]
fn stats_count_the_events_of_the_text() {
    for f in FILES {
        let (rows, info) = common::read_rows(&fixture(f));
        let count = |name: &str| rows.iter().filter(|r| r.4 == name).count();
        // Counted in the report with `grep -c ': sched_switch:'` etc.
        assert_eq!(
            (
                count("sched_stat_runtime"),
                count("sched_switch"),
                count("sched_waking"),
                count("local_timer_entry")
            ),
            (324, 263, 131, 63),
            "{f}"
        );
        assert_eq!(info.header.tracer.as_deref(), Some("nop"), "{f}");
        let h = &info.header;
        assert_eq!(
            (h.entries_in_buffer, h.entries_written),
            (Some(1354), Some(1354)),
            "{f}"
        );
        assert_eq!(h.nr_cpus, Some(2), "{f}");
    }
}

#[test]
fn latency_on_every_version_matches_the_independent_computation() {
    let expected: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(fixture("latency-report.expected.json")).unwrap(),
    )
    .unwrap();
    // cyclictest's measuring thread (pid 24700, prio 19): 10 wake-ups, worst 7 us.
    let ct = expected["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["pid"] == 24700)
        .unwrap();
    assert_eq!((&ct["wakeups"], &ct["max_ns"]), (&10.into(), &7000.into()));
    for f in FILES {
        common::assert_latency_matches(&fixture(f), &expected);
    }
}

fn read_damaged(bytes: &[u8]) -> String {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("damaged.dat");
    std::fs::write(&path, bytes).unwrap();
    let input = Input::open(path.to_str().unwrap()).unwrap();
    read::read(input, &mut common::RowSink::default())
        .unwrap_err()
        .to_string()
}

#[test]
fn a_cut_or_corrupt_compressed_text_is_a_clear_error() {
    let bytes = std::fs::read(fixture("latency.dat")).unwrap();
    // The text section is at 23489..40684 (trace-cmd dump --sections), the last options after.
    let e = read_damaged(&bytes[..30_000]);
    assert!(
        e.contains("at byte 40684") && e.contains("truncated"),
        "{e}"
    );
    // Zeros inside the second compressed chunk of the text.
    let mut bad = bytes.clone();
    bad[30_000..30_064].fill(0);
    let e = read_damaged(&bad);
    assert!(
        e.contains("latency text at byte") && e.contains("zstd"),
        "{e}"
    );
}
