//! `latency --irq` and `explain --irq` on a third-party trace: Trace Compass's
//! `ftrace_syscalls.txt` (../shared/fixtures/realworld, SOURCES.md), where the disk's interrupt
//! (irq 30, ahci) wakes the ext4 journal thread on another CPU, which then wakes a kworker.
//! The expected values are read off the printed lines by hand:
//!
//! ```text
//! [002] dNh.   395.708011: irq_handler_entry: irq=30 name=ahci[0000:01:00.0]
//! [002] dNh.   395.708022: sched_waking: comm=jbd2/sdd1-8 pid=475 prio=120 target_cpu=000
//! [000] d...   395.708065: sched_switch: ... ==> next_comm=jbd2/sdd1-8 next_pid=475 ...
//! [000] d...   395.708085: sched_waking: comm=kworker/0:1H pid=263 prio=100 (in jbd2's column)
//! [000] d...   395.708092: sched_switch: prev_comm=jbd2/sdd1-8 ... ==> next_comm=kworker/0:1H
//! ```
//!
//! jbd2 ran 54 us after the interrupt's entry (link 1), the kworker 81 us after it (link 2).

mod common;

use common::{golden, ok, realworld, run};
use serde_json::Value;

const TRACE: &str = "tracecompass-incubator/tracetypes/org.eclipse.tracecompass.incubator.ftrace.core.tests/res/ftrace_syscalls.txt";

fn trace() -> Option<String> {
    realworld(TRACE).map(|p| p.to_string_lossy().into_owned())
}

fn json(args: &[&str]) -> Value {
    serde_json::from_str(&ok(args)).unwrap()
}

#[test]
fn latency_follows_the_disk_interrupt_to_the_journal_and_its_kworker() {
    let Some(t) = trace() else { return };
    let doc = json(&["latency", &t, "--irq", "30", "--json"]);
    let irq = &doc["irq"];
    assert_eq!(irq["selected"], "30");
    assert_eq!(
        irq["interrupts"],
        serde_json::json!([{"irq": 30, "name": "ahci[0000:01:00.0]", "entries": 1, "cpus": [2]}])
    );
    let rows = irq["receivers"].as_array().unwrap();
    let got: Vec<_> = rows
        .iter()
        .map(|r| {
            (
                r["comm"].as_str().unwrap(),
                r["link"].as_u64().unwrap(),
                r["woken_by"]["pid"].as_i64(),
                r["wakeups"].as_u64().unwrap(),
                r["max_us"].as_f64().unwrap(),
                r["max_at_ts"].as_f64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            ("jbd2/sdd1-8", 1, None, 1, 54.0, 395.708065),
            ("kworker/0:1H", 2, Some(475), 1, 81.0, 395.708092),
        ]
    );
    // A name selects by a part of the handler's name.
    let by_name = json(&["latency", &t, "--irq", "ahci", "--json"]);
    assert_eq!(by_name["irq"]["receivers"], irq["receivers"]);
}

#[test]
fn latency_irq_text() {
    let Some(t) = trace() else { return };
    let out = ok(&[
        "latency",
        &t,
        "--irq",
        "30",
        "--task",
        "jbd2",
        "--task",
        "kworker/0:1H",
    ]);
    golden("latency-irq.txt", &out);
}

#[test]
fn explain_keeps_the_chains_the_interrupt_started() {
    let Some(t) = trace() else { return };
    let doc = json(&["explain", &t, "--irq", "30", "--all", "--json"]);
    let f = doc["findings"].as_array().unwrap();
    assert_eq!(f.len(), 1, "{f:?}");
    assert_eq!(f[0]["task"]["comm"], "kworker/0:1H");
    assert_eq!(f[0]["latency_us"].as_f64(), Some(81.0));
    assert_eq!(f[0]["expected_ts"].as_f64(), Some(395.708011));
    assert_eq!(f[0]["chain"][0]["interrupt"], "irq 30 (ahci[0000:01:00.0])");
    assert_eq!(f[0]["chain"][0]["task"]["comm"], "jbd2/sdd1-8");
    // Another interrupt started no chain: nothing, and the report says why.
    let none = json(&["explain", &t, "--irq", "31", "--all", "--json"]);
    assert_eq!(none["findings"], serde_json::json!([]));
    let why = none["warnings"].as_array().unwrap();
    assert!(
        why.iter()
            .any(|w| w.as_str().unwrap().contains("interrupt 31 started")),
        "{why:?}"
    );
}

#[test]
fn a_selection_that_matches_nothing_says_what_the_trace_has() {
    let Some(t) = trace() else { return };
    let doc = json(&["latency", &t, "--irq", "eth0", "--json"]);
    assert_eq!(doc["irq"]["receivers"], serde_json::json!([]));
    let warnings: Vec<&str> = (doc["warnings"].as_array().unwrap().iter())
        .filter_map(Value::as_str)
        .collect();
    assert!(
        warnings.iter().any(
            |w| w.starts_with("--irq eth0: no interrupt in the trace matches")
                && w.contains("30 ahci[0000:01:00.0]")
        ),
        "{warnings:?}"
    );
}

#[test]
fn a_trace_without_interrupt_events_says_what_to_record() {
    let doc = json(&[
        "latency",
        "tests/fixtures/recorded/fifo_above/trace.txt",
        "--irq",
        "1",
        "--json",
    ]);
    let warnings = doc["warnings"].to_string();
    assert!(
        warnings.contains("record irq:irq_handler_entry and irq:irq_handler_exit"),
        "{warnings}"
    );
}

#[test]
fn bad_selections_are_refused() {
    for (args, says) in [
        (
            vec!["latency", "x.txt", "--irq", ""],
            "a part of its handler's name",
        ),
        (
            vec!["latency", "x.txt", "--irq", "99999999999"],
            "no interrupt number",
        ),
        (
            vec!["latency", "a.txt", "b.txt", "--irq", "3"],
            "--irq follows one trace's interrupt",
        ),
        (
            vec!["explain", "x.txt", "--irq", "3", "--preemptions"],
            "cannot be used with",
        ),
    ] {
        let out = run(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            !out.status.success() && err.contains(says),
            "{args:?}: {err}"
        );
    }
}
