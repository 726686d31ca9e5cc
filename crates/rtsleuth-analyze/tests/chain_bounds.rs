//! Wake chains at their limits, on written traces whose answer follows from the chain rules
//! (docs/claims.md, "Wake chains"): a chain of more than 8 links is unproven, the wakings on
//! an interrupt's exit path and by a softirq are never followed, and a long chain costs no more
//! than its 8 links.

use rtsleuth_analyze::explain::{Explain, ExplainOptions};
use rtsleuth_trace::input::Input;
use rtsleuth_trace::read;
use serde_json::Value;
use std::fmt::Write;

fn explain(text: String) -> Vec<Value> {
    let input = Input::from_reader("chain.txt", Box::new(std::io::Cursor::new(text))).unwrap();
    let mut explain = Explain::new(ExplainOptions {
        top: 1000,
        threshold_us: Some(0.0),
        ..Default::default()
    });
    let info = read::read(input, &mut explain).unwrap();
    let doc = explain.document(&info).json;
    doc["findings"].as_array().unwrap().clone()
}

/// One event line of CPU 0 at `us` microseconds.
fn line(out: &mut String, comm: &str, pid: i32, flags: &str, us: u64, body: &str) {
    let ts = format!("{}.{:06}", 100 + us / 1_000_000, us % 1_000_000);
    writeln!(out, "{:>16}-{pid:<7} [000] {flags} {ts:>13}: {body}", comm).unwrap();
}

/// A hard interrupt on CPU 0 wakes task 1000; each task 1000 + i, once switched in, wakes
/// task 1001 + i and sleeps, up to task 1000 + `tasks` - 1. All are SCHED_FIFO 50 (prio 49).
fn relay(tasks: i32) -> String {
    let mut t = String::from("# tracer: nop\n#\n");
    let mut us = 10;
    line(
        &mut t,
        "<idle>",
        0,
        "d.h1.",
        us,
        "irq_handler_entry: irq=30 name=dev",
    );
    line(
        &mut t,
        "<idle>",
        0,
        "d.h3.",
        us + 2,
        "sched_waking: comm=t1000 pid=1000 prio=49 target_cpu=000",
    );
    line(
        &mut t,
        "<idle>",
        0,
        "d.h1.",
        us + 3,
        "irq_handler_exit: irq=30 ret=handled",
    );
    let mut prev = (String::from("swapper/0"), 0, 120, "R");
    for i in 0..tasks {
        us += 20;
        let (pid, comm) = (1000 + i, format!("t{}", 1000 + i));
        let (pc, pp, pprio, state) = &prev;
        let switch = format!(
            "sched_switch: prev_comm={pc} prev_pid={pp} prev_prio={pprio} prev_state={state} ==> next_comm={comm} next_pid={pid} next_prio=49"
        );
        line(&mut t, pc, *pp, "d..2.", us, &switch);
        if i + 1 < tasks {
            let next = 1001 + i;
            let waking = format!("sched_waking: comm=t{next} pid={next} prio=49 target_cpu=000");
            line(&mut t, &comm, pid, "d..3.", us + 5, &waking);
        }
        prev = (comm, pid, 49, "S");
    }
    t
}

fn by_pid(findings: &[Value], pid: i32) -> &Value {
    (findings.iter())
        .find(|f| f["task"]["pid"] == pid)
        .unwrap_or_else(|| panic!("no finding of {pid}"))
}

#[test]
fn a_chain_is_followed_for_eight_links_and_no_further() {
    let findings = explain(relay(12));
    // 1000 was woken by the interrupt: the chain's start, no chain of its own.
    assert_eq!(by_pid(&findings, 1000)["source"], "wakeup");
    for links in 1..=8 {
        let f = by_pid(&findings, 1000 + links);
        assert_eq!(f["source"], "chain", "{f}");
        assert_eq!(f["chain"].as_array().unwrap().len(), links as usize);
        // The start is the interrupt's entry, 100.000010.
        assert_eq!(f["expected_ts"].as_f64().unwrap(), 100.000010);
        assert_eq!(f["chain"][0]["woken_by"], "interrupt");
    }
    for pid in 1009..1012 {
        let f = by_pid(&findings, pid);
        assert_eq!(f["source"], "wakeup", "{f}");
        assert!(f["chain"].is_null());
    }
}

/// After the interrupt's exit, still with interrupts off in the interrupted task's column, the
/// waking is the exit path's (irq_exit), not task 1000's; a softirq's waking is not followed.
#[test]
fn the_exit_path_and_softirqs_are_not_followed() {
    let mut t = relay(1);
    line(
        &mut t,
        "t1000",
        1000,
        "d.h1.",
        200,
        "irq_handler_entry: irq=31 name=other",
    );
    line(
        &mut t,
        "t1000",
        1000,
        "d.h1.",
        202,
        "irq_handler_exit: irq=31 ret=handled",
    );
    line(
        &mut t,
        "t1000",
        1000,
        "d..2.",
        203,
        "sched_waking: comm=t2000 pid=2000 prio=49 target_cpu=001",
    );
    line(
        &mut t,
        "t1000",
        1000,
        "..s1.",
        300,
        "softirq_entry: vec=3 [action=NET_RX]",
    );
    line(
        &mut t,
        "t1000",
        1000,
        "d.s3.",
        301,
        "sched_waking: comm=t3000 pid=3000 prio=49 target_cpu=001",
    );
    line(
        &mut t,
        "t1000",
        1000,
        "..s1.",
        302,
        "softirq_exit: vec=3 [action=NET_RX]",
    );
    // Back in its own code, interrupts on: its waking continues its chain.
    line(
        &mut t,
        "t1000",
        1000,
        "....1",
        400,
        "tracing_mark_write: work",
    );
    line(
        &mut t,
        "t1000",
        1000,
        "d..3.",
        401,
        "sched_waking: comm=t4000 pid=4000 prio=49 target_cpu=001",
    );
    for (i, pid) in [2000, 3000, 4000].into_iter().enumerate() {
        let us = 500 + 10 * i as u64;
        let switch = format!(
            "sched_switch: prev_comm=swapper/1 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=t{pid} next_pid={pid} next_prio=49"
        );
        let ts = format!("100.{us:06}");
        writeln!(
            t,
            "{:>16}-{:<7} [001] d..2. {ts:>13}: {switch}",
            "<idle>", 0
        )
        .unwrap();
    }
    let findings = explain(t);
    assert_eq!(by_pid(&findings, 2000)["source"], "wakeup");
    assert_eq!(by_pid(&findings, 3000)["source"], "wakeup");
    let f = by_pid(&findings, 4000);
    assert_eq!(f["source"], "chain", "{f}");
    assert_eq!(f["chain"][0]["task"]["pid"], 1000);
    assert_eq!(f["chain"][0]["wakes_next_ts"].as_f64().unwrap(), 100.000401);
}
