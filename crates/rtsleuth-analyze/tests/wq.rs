//! `rtsleuth wq` against exact answers: the recorded workqueue trace (its kernel text and its
//! trace.dat) against the independent reference `tests/fixtures/recorded/wq/independent_wq.py`,
//! and hand-made traces for every edge case of the definition.

use rtsleuth_analyze::wq::{Wq, WqOptions};
use rtsleuth_trace::input::Input;
use rtsleuth_trace::read::{self, ftrace_text::read_bytes};
use serde_json::{json, Value};
use std::path::PathBuf;

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures/recorded/wq")
        .join(name)
}

fn wq_of_file(name: &str) -> Value {
    let path = fixture(name);
    let mut wq = Wq::new(WqOptions::default());
    let info = read::read(Input::open(path.to_str().unwrap()).unwrap(), &mut wq).unwrap();
    assert_eq!(info.lost_events, 0);
    wq.document(&info).json
}

fn wq_of_text(text: &str) -> Value {
    let mut wq = Wq::new(WqOptions::default());
    let info = read_bytes("t", text.as_bytes().to_vec(), 1 << 16, &mut wq).unwrap();
    wq.document(&info).json
}

/// The entry of `list` whose `key` is `name`.
fn entry<'a>(list: &'a Value, key: &str, name: &Value) -> &'a Value {
    list.as_array()
        .unwrap()
        .iter()
        .find(|e| &e[key] == name)
        .unwrap_or_else(|| panic!("no {key} {name} in {list}"))
}

/// Equal, numbers to the last bit but one: serde_json's default float parser may read the
/// reference's shortest decimal one unit in the last place off.
fn same(got: &Value, want: &Value) -> bool {
    match (got, want) {
        (Value::Number(g), Value::Number(w)) if g.is_f64() || w.is_f64() => {
            let (g, w) = (g.as_f64().unwrap(), w.as_f64().unwrap());
            (g - w).abs() <= 2.0 * f64::EPSILON * w.abs()
        }
        (Value::Array(g), Value::Array(w)) => {
            g.len() == w.len() && g.iter().zip(w).all(|(g, w)| same(g, w))
        }
        (Value::Object(g), Value::Object(w)) => {
            g.len() == w.len() && w.iter().all(|(k, w)| g.get(k).is_some_and(|g| same(g, w)))
        }
        _ => got == want,
    }
}

fn assert_same(got: &Value, want: &Value, ctx: &str) {
    assert!(same(got, want), "{ctx}: {got} != {want}");
}

/// A distribution equals the reference's: count, average, maximum and its time exactly; p99
/// exactly where the histogram is exact (whole microseconds below 2.048 ms), else within 0.1%.
fn assert_dist(got: &Value, want: &Value, ctx: &str) {
    for k in ["count", "avg_us", "max_us", "max_at_ts"] {
        assert_same(&got[k], &want[k], &format!("{ctx}: {k}"));
    }
    let (g, w) = (got["p99_us"].as_f64(), want["p99_us"].as_f64());
    match (g, w) {
        (Some(g), Some(w)) if w < 2048.0 && w.fract() == 0.0 => assert_eq!(g, w, "{ctx}: p99"),
        (Some(g), Some(w)) => assert!((g - w).abs() <= w * 0.001, "{ctx}: p99 {g} vs {w}"),
        _ => assert_eq!(got["p99_us"], want["p99_us"], "{ctx}: p99"),
    }
}

/// Every figure the reference computed equals rtsleuth's.
fn assert_matches_reference(got: &Value, want: &Value) {
    let (gf, wf) = (&got["functions"], want["functions"].as_array().unwrap());
    assert_eq!(gf.as_array().unwrap().len(), wf.len(), "functions");
    for w in wf {
        let g = entry(gf, "function", &w["function"]);
        let ctx = w["function"].to_string();
        assert_eq!(g["executions"], w["executions"], "{ctx}: executions");
        assert_eq!(g["kworkers"], w["kworkers"], "{ctx}: kworkers");
        let mut queues: Vec<Value> = g["workqueues"].as_array().unwrap().clone();
        queues.sort_by_key(|q| q.to_string());
        assert_eq!(Value::from(queues), w["workqueues"], "{ctx}: workqueues");
        assert_dist(&g["wait"], &w["wait"], &format!("{ctx} wait"));
        assert_dist(&g["exec"], &w["exec"], &format!("{ctx} exec"));
    }
    for w in want["workqueues"].as_array().unwrap() {
        let g = entry(&got["workqueues"], "workqueue", &w["workqueue"]);
        let ctx = w["workqueue"].to_string();
        assert_dist(&g["wait"], &w["wait"], &format!("{ctx} wait"));
        assert_dist(&g["exec"], &w["exec"], &format!("{ctx} exec"));
    }
    let wk = want["kworkers"].as_array().unwrap();
    assert_eq!(
        got["kworkers"].as_array().unwrap().len(),
        wk.len(),
        "kworkers"
    );
    for w in wk {
        let g = entry(&got["kworkers"], "kworker", &w["kworker"]);
        assert_eq!(g["executions"], w["executions"], "{}", w["kworker"]);
        assert_same(&g["busy_us"], &w["busy_us"], &w["kworker"].to_string());
    }
    for (k, n) in want["counts"].as_object().unwrap() {
        assert_eq!(&got["counts"][k], n, "counts.{k}");
    }
    for list in ["worst_wait", "worst_exec"] {
        let (g, w) = (
            got[list].as_array().unwrap(),
            want[list].as_array().unwrap(),
        );
        assert_eq!(g.len(), w.len(), "{list}");
        for (i, (g, w)) in g.iter().zip(w).enumerate() {
            for (k, v) in w.as_object().unwrap() {
                assert_same(&g[k], v, &format!("{list}[{i}].{k}"));
            }
        }
    }
}

fn reference(name: &str) -> Value {
    serde_json::from_str(&std::fs::read_to_string(fixture(name)).unwrap()).unwrap()
}

#[test]
fn recorded_text_equals_the_reference() {
    let got = wq_of_file("trace.txt.zst");
    assert_eq!(got["schema"], "rtsleuth.wq/1");
    assert_matches_reference(&got, &reference("trace.txt.wq.json"));
    // What was injected: refresh_vm_stats works queued for CPU 0 while fifo_burst (SCHED_FIFO
    // 90, 5 ms bursts) held it waited behind it.
    let refresh = entry(&got["functions"], "function", &json!("refresh_vm_stats"));
    assert_eq!(refresh["executions"], 120);
    assert_eq!(refresh["wait"]["max_us"], 18035.0);
    let mut top = Wq::new(WqOptions { top: 10_000 });
    let path = fixture("trace.txt.zst");
    let info = read::read(Input::open(path.to_str().unwrap()).unwrap(), &mut top).unwrap();
    let all = top.document(&info).json;
    let behind: Vec<(f64, f64, &str)> = all["worst_wait"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|o| o["rt_wait_us"].as_f64() > Some(0.0))
        .map(|o| {
            assert_eq!(o["function"], "refresh_vm_stats");
            assert_eq!(o["cpu"], 0);
            (
                o["wait_us"].as_f64().unwrap(),
                o["rt_wait_us"].as_f64().unwrap(),
                o["rt_culprit"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        behind,
        vec![
            (4810.0, 4776.0, "fifo_burst-9450 (prio 9)"),
            (4672.0, 4669.0, "fifo_burst-9450 (prio 9)"),
            (4138.0, 4135.0, "fifo_burst-9450 (prio 9)"),
        ]
    );
}

#[test]
fn recorded_trace_dat_equals_the_reference() {
    let got = wq_of_file("trace.dat");
    assert_matches_reference(&got, &reference("trace.dat.wq.json"));
    // The same buffer as the text: the same works, in nanoseconds.
    let text = wq_of_file("trace.txt.zst");
    for k in [
        "requeued",
        "unqueued",
        "unfinished",
        "unmatched_ends",
        "never_started",
    ] {
        assert_eq!(got["counts"][k], text["counts"][k], "{k}");
    }
    let ext4 = entry(
        &got["functions"],
        "function",
        &json!("ext4_end_io_rsv_work"),
    );
    assert_eq!(ext4["wait"]["count"], 647);
    assert_eq!(ext4["wait"]["max_us"], 45748.682);
}

/// Every edge case once, with answers worked out by hand:
/// - vmstat_update at .000000 runs with no queue event (queued before the trace): 5 us.
/// - blk_mq_run_work_fn is queued at .000020, activated, and queued again at .000030 while
///   pending (mod_delayed_work): the wait runs from .000030 to its start at .000332 = 302 us
///   (the activation at .000021 belonged to the replaced queueing),
///   300 us of it behind fifo-50 (prio 9), which held CPU 0 from .000010 (before the
///   queueing) to .000330; it runs 10 us.
/// - wb_workfn on an unbound workqueue (cpu=-1) waits 50 us and never ends; nothing is said
///   about real-time tasks for it.
/// - a work whose function is printed as an address waits 7 us and runs 3 us.
/// - vmstat_update queued at .000500 never starts; an end at .000600 has no start.
#[test]
fn edge_cases_have_exact_answers() {
    let got = wq_of_text(
        "# tracer: nop\n\
     kworker/0:1-40      [000] .....   100.000000: workqueue_execute_start: work struct 00000000000000a1: function vmstat_update\n\
     kworker/0:1-40      [000] .....   100.000005: workqueue_execute_end: work struct 00000000000000a1: function vmstat_update\n\
          <idle>-0       [000] d..2.   100.000010: sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=fifo next_pid=50 next_prio=9\n\
            fifo-50      [000] d.h1.   100.000020: workqueue_queue_work: work struct=00000000000000b2 function=blk_mq_run_work_fn workqueue=kblockd req_cpu=256 cpu=0\n\
            fifo-50      [000] d.h1.   100.000021: workqueue_activate_work: work struct 00000000000000b2 function=blk_mq_run_work_fn \n\
            fifo-50      [000] d.h1.   100.000030: workqueue_queue_work: work struct=00000000000000b2 function=blk_mq_run_work_fn workqueue=kblockd req_cpu=256 cpu=0\n\
            fifo-50      [000] d..2.   100.000330: sched_switch: prev_comm=fifo prev_pid=50 prev_prio=9 prev_state=S ==> next_comm=kworker/0:1H next_pid=41 next_prio=120\n\
    kworker/0:1H-41      [000] .....   100.000332: workqueue_execute_start: work struct 00000000000000b2: function blk_mq_run_work_fn\n\
    kworker/0:1H-41      [000] .....   100.000342: workqueue_execute_end: work struct 00000000000000b2: function blk_mq_run_work_fn\n\
            bash-60      [001] d..1.   100.000400: workqueue_queue_work: work struct=00000000000000c3 function=wb_workfn workqueue=writeback req_cpu=256 cpu=-1\n\
            bash-60      [001] d..1.   100.000401: workqueue_queue_work: work struct=00000000000000f6 function=0xffffffffc0a01230 workqueue=events req_cpu=256 cpu=1\n\
     kworker/1:1-80      [001] .....   100.000408: workqueue_execute_start: work struct 00000000000000f6: function 0xffffffffc0a01230\n\
     kworker/1:1-80      [001] .....   100.000411: workqueue_execute_end: work struct 00000000000000f6: function 0xffffffffc0a01230\n\
    kworker/u8:2-70      [001] .....   100.000450: workqueue_execute_start: work struct 00000000000000c3: function wb_workfn\n\
            bash-60      [001] d..1.   100.000500: workqueue_queue_work: work struct=00000000000000d4 function=vmstat_update workqueue=mm_percpu_wq req_cpu=1 cpu=1\n\
     kworker/1:1-80      [001] .....   100.000600: workqueue_execute_end: work struct 00000000000000e5: function psi_avgs_work\n",
    );
    assert_eq!(
        got["counts"],
        json!({"requeued": 1, "unqueued": 1, "unfinished": 1, "unmatched_ends": 1,
               "never_started": 1, "dropped_by_lost": 0})
    );
    let f = |name: &str| entry(&got["functions"], "function", &json!(name)).clone();
    let blk = f("blk_mq_run_work_fn");
    assert_eq!(
        (blk["executions"].clone(), blk["wait"]["count"].clone()),
        (json!(1), json!(1))
    );
    assert_eq!(blk["wait"]["max_us"], 302.0);
    assert_eq!(blk["wait"]["max_at_ts"], 100.000332);
    assert_eq!(blk["exec"]["max_us"], 10.0);
    assert_eq!(
        blk["kworkers"],
        json!([{"kworker": "kworker/0:1H-41", "executions": 1}])
    );
    let vmstat = f("vmstat_update");
    assert_eq!(vmstat["executions"], 1);
    assert_eq!(vmstat["wait"]["count"], 0);
    assert_eq!(vmstat["wait"]["max_us"], Value::Null);
    assert_eq!(vmstat["exec"]["max_us"], 5.0);
    let wb = f("wb_workfn");
    assert_eq!(
        (wb["wait"]["max_us"].clone(), wb["exec"]["count"].clone()),
        (json!(50.0), json!(0))
    );
    let addr = f("0xffffffffc0a01230");
    assert_eq!(
        (
            addr["wait"]["max_us"].clone(),
            addr["exec"]["max_us"].clone()
        ),
        (json!(7.0), json!(3.0))
    );
    // Worst first: the names of the rows in order.
    assert_eq!(
        got["functions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["function"].as_str().unwrap())
            .collect::<Vec<_>>(),
        [
            "blk_mq_run_work_fn",
            "wb_workfn",
            "0xffffffffc0a01230",
            "vmstat_update"
        ]
    );
    let wait = &got["worst_wait"];
    assert_eq!(wait.as_array().unwrap().len(), 3);
    assert_eq!(
        wait[0],
        json!({"function": "blk_mq_run_work_fn", "workqueue": "kblockd", "kworker": "kworker/0:1H-41",
               "cpu": 0, "queue_ts": 100.00003, "activate_ts": null, "start_ts": 100.000332,
               "end_ts": 100.000342, "wait_us": 302.0, "exec_us": 10.0, "rt_wait_us": 300.0,
               "rt_culprit": "fifo-50 (prio 9)",
               // The trace shows no waking of the kworker: nothing explains the wait.
               "explained": null, "before_start_us": null, "works_before": null})
    );
    assert_eq!(
        (
            wait[1]["function"].clone(),
            wait[1]["end_ts"].clone(),
            wait[1]["rt_wait_us"].clone()
        ),
        (json!("wb_workfn"), Value::Null, Value::Null)
    );
    assert_eq!(
        (wait[2]["wait_us"].clone(), wait[2]["rt_wait_us"].clone()),
        (json!(7.0), json!(0.0))
    );
    let exec: Vec<f64> = got["worst_exec"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["exec_us"].as_f64().unwrap())
        .collect();
    assert_eq!(exec, [10.0, 5.0, 3.0]);
    let q = |name: &str| entry(&got["workqueues"], "workqueue", &json!(name)).clone();
    assert_eq!(
        (
            q("kblockd")["bound"].clone(),
            q("kblockd")["queued"].clone()
        ),
        (json!(true), json!(2))
    );
    assert_eq!(q("writeback")["bound"], false);
    assert_eq!(q("mm_percpu_wq")["bound"], true);
    let kw: Vec<(&str, u64, f64)> = got["kworkers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| {
            (
                k["kworker"].as_str().unwrap(),
                k["executions"].as_u64().unwrap(),
                k["busy_us"].as_f64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        kw,
        [
            ("kworker/0:1H-41", 1, 10.0),
            ("kworker/0:1-40", 1, 5.0),
            ("kworker/1:1-80", 1, 3.0),
            ("kworker/u8:2-70", 1, 0.0)
        ]
    );
}

/// Lost events forget what was pending: the start after them has no queue event.
#[test]
fn lost_events_forget_pending_works() {
    let got = wq_of_text(
        "# tracer: nop\n\
            bash-60      [000] d..1.   100.000400: workqueue_queue_work: work struct=00000000000000c3 function=vmstat_update workqueue=mm_percpu_wq req_cpu=0 cpu=0\n\
CPU:0 [LOST 12 EVENTS]\n\
     kworker/0:1-40      [000] .....   100.000900: workqueue_execute_start: work struct 00000000000000c3: function vmstat_update\n\
     kworker/0:1-40      [000] .....   100.000904: workqueue_execute_end: work struct 00000000000000c3: function vmstat_update\n",
    );
    assert_eq!(got["counts"]["dropped_by_lost"], 1);
    assert_eq!(got["counts"]["unqueued"], 1);
    assert_eq!(got["functions"][0]["wait"]["count"], 0);
    assert_eq!(got["functions"][0]["exec"]["max_us"], 4.0);
}

/// A trace without workqueue events says so instead of printing empty tables silently.
#[test]
fn no_workqueue_events_is_a_warning() {
    let got = wq_of_text(
        "# tracer: nop\n          <idle>-0       [000] d..2.   100.000010: sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=fifo next_pid=50 next_prio=9\n",
    );
    assert_eq!(got["functions"], json!([]));
    assert!(
        got["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w.as_str().unwrap().contains("no workqueue events")),
        "{got}"
    );
}

/// The injected waits (README: `refresh_vm_stats` queued for CPU 0 while `fifo_burst`, SCHED_FIFO
/// 90, spins there) as chains: queued, kworker/0:1 woken by that queueing, its wait cut by
/// explain, then its own run to the work. The README's figures come from the independent
/// script: each wait, and `rt_wait` (the time real-time tasks held CPU 0 meanwhile). That is
/// almost all `fifo_burst` as higher_priority (the rest is the interrupts that came during the
/// burst), and the finding plus the kworker's own run is exactly the wait.
#[test]
fn the_injected_waits_are_explained_behind_fifo_burst() {
    let mut wq = Wq::new(WqOptions { top: 1000 });
    let path = fixture("trace.txt.zst");
    let info = read::read(Input::open(path.to_str().unwrap()).unwrap(), &mut wq).unwrap();
    let got = wq.document(&info).json;
    for (queued, wait, rt) in [
        (13014.866319, 4810.0, 4776.0),
        (13015.098653, 4672.0, 4669.0),
        (13015.768757, 4138.0, 4135.0),
    ] {
        let w = (got["worst_wait"].as_array().unwrap().iter())
            .find(|w| w["queue_ts"].as_f64() == Some(queued))
            .unwrap_or_else(|| panic!("no worst wait queued at {queued}"));
        assert_eq!(w["wait_us"].as_f64(), Some(wait));
        let e = &w["explained"];
        assert_eq!(e["source"], "queued", "{queued}: {w:#}");
        assert_eq!(e["expected_ts"].as_f64(), Some(queued));
        assert_eq!(e["task"]["comm"], "kworker/0:1");
        assert_eq!(e["root_cause"], "higher_priority", "{queued}");
        let burst: f64 = (e["components"].as_array().unwrap().iter())
            .filter(|c| c["kind"] == "higher_priority" && c["culprit"] == "fifo_burst-9450")
            .map(|c| c["us"].as_f64().unwrap())
            .sum();
        assert!(
            burst >= 0.98 * rt && burst <= rt,
            "{queued}: {burst} of {rt}"
        );
        let whole = e["latency_us"].as_f64().unwrap() + w["before_start_us"].as_f64().unwrap();
        assert!((whole - wait).abs() < 0.01, "{queued}: {whole}");
        assert_eq!(w["works_before"], 0, "{queued}");
    }
}
