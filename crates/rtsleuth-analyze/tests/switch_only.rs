//! Traces recorded with `sched_switch` alone (issue 25, point 3): the commands that measure
//! wake-ups say the trace has none, in those words, with the events to record, and still
//! report what it holds. LISA's rt-app trace (`../shared/fixtures/realworld/lisa`, 1,552
//! switches on a Juno board) is the real case.

mod common;
#[path = "../../rtsleuth-trace/tests/shared_fixtures/mod.rs"]
mod shared_fixtures;

use rtsleuth_analyze::explain::{Explain, ExplainOptions};
use rtsleuth_analyze::latency::{Latency, LatencyOptions};
use rtsleuth_analyze::wakeups::NO_WAKEUP_EVENTS;
use rtsleuth_trace::input::Input;
use rtsleuth_trace::read::{self, EventSink, TraceInfo};
use serde_json::Value;

fn rtapp() -> Option<Input> {
    let path =
        shared_fixtures::realworld("lisa/ipynb/deprecated/tutorial/example_rtapp/trace.dat")?;
    Some(Input::open(path.to_str().unwrap()).unwrap())
}

fn warnings(doc: &Value) -> Vec<String> {
    let w = doc["warnings"].as_array().unwrap();
    w.iter().map(|w| w.as_str().unwrap().to_string()).collect()
}

fn read<S: EventSink + Send>(sink: &mut S) -> Option<TraceInfo> {
    Some(read::read(rtapp()?, sink).unwrap())
}

#[test]
fn latency_says_there_are_no_wakeups_and_reports_the_switches() {
    let mut lat = Latency::new(LatencyOptions::default());
    let Some(info) = read(&mut lat) else {
        println!("skipped: the shared realworld traces are not beside the clone");
        return;
    };
    let doc = lat.document(&info).json;
    assert!(
        warnings(&doc).iter().any(|w| w == NO_WAKEUP_EVENTS),
        "{:?}",
        warnings(&doc)
    );
    assert!(NO_WAKEUP_EVENTS.starts_with("the trace has no sched_waking or sched_wakeup events"));
    assert!(NO_WAKEUP_EVENTS.contains("record sched:sched_waking"));
    // The switches are still counted per task.
    let switches: u64 = (doc["tasks"].as_array().unwrap().iter())
        .map(|t| t["switches"].as_u64().unwrap())
        .sum();
    assert!(switches > 0, "{doc}");
}

#[test]
fn explain_all_says_why_and_does_not_suggest_all() {
    let mut explain = Explain::new(ExplainOptions {
        all: true,
        ..Default::default()
    });
    let Some(info) = read(&mut explain) else {
        println!("skipped: the shared realworld traces are not beside the clone");
        return;
    };
    let said = warnings(&explain.document(&info).json);
    assert!(said.iter().any(|w| w == NO_WAKEUP_EVENTS), "{said:?}");
    assert!(!said.iter().any(|w| w.contains("--all")), "{said:?}");
}

/// Preemption waits (issue 25, point 1) against the independent count of
/// `tests/fixtures/preemption/independent_preemption.py` over `trace-cmd report`.
#[test]
fn preemption_waits_match_the_independent_count() {
    for (trace, expected) in [
        (
            "lisa/ipynb/deprecated/tutorial/example_rtapp/trace.dat",
            "rtapp",
        ),
        ("lisa/tests/assets/sched_load/trace.dat", "sched_load"),
    ] {
        let Some(path) = shared_fixtures::realworld(trace) else {
            println!("skipped: the shared realworld traces are not beside the clone");
            return;
        };
        let expected = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../tests/fixtures/preemption")
            .join(format!("{expected}.expected.json"));
        common::assert_preemption_matches(&path, &expected);
    }
}
