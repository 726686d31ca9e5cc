//! Perfetto's compact scheduling form names only the task a switch goes to, so the task a CPU
//! ran before its first switch is unknown. It used to be read as a task with pid -1 and prio
//! -1 (a SCHED_DEADLINE rank) and blamed: `higher_priority: <...>--1 (prio -1)`.
//! `tests/fixtures/perfetto/compact_unknown_prev.py` writes the trace and derives it by hand.

mod counting;

use counting::read_documents;

const RANKED: [&str; 3] = ["higher_priority", "fair_share", "preempt_off"];

#[test]
fn the_task_before_a_cpus_first_compact_switch_is_unknown_not_a_deadline_task() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/fixtures/perfetto/compact_unknown_prev.pftrace"
    );
    let (_, _, docs) = read_documents("compact.pftrace", std::fs::read(path).unwrap()).unwrap();
    let [_, latency, explain, ..] = docs;
    // ct-7: woken at 1 ms, switched in at 3 ms.
    let ct = &latency["tasks"][0];
    assert_eq!((&ct["pid"], &ct["max_us"]), (&7.into(), &2000.0.into()));
    let finding = &explain["findings"][0];
    assert_eq!(finding["latency_us"], 2000.0);
    for c in finding["timeline"].as_array().unwrap() {
        let kind = c["kind"].as_str().unwrap();
        assert!(!RANKED.contains(&kind), "{c}");
    }
    assert!(!RANKED.contains(&finding["root_cause"].as_str().unwrap()));
    assert!(!explain.to_string().contains("prio -1"), "{explain}");
}
