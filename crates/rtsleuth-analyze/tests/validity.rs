//! Where a trace may be measured (issue 23, points 1, 5 and 10): overwritten histories, the
//! waking / switch-out race and traces that contradict themselves, each on a short text trace
//! whose answer is worked out by hand in its comment.

use rtsleuth_analyze::explain::{Explain, ExplainOptions};
use rtsleuth_analyze::latency::{Latency, LatencyOptions};
use rtsleuth_analyze::stats::Stats;
use rtsleuth_trace::read::ftrace_text::read_bytes;
use serde_json::Value;

const HEADER_OVERWRITTEN: &str =
    "# tracer: nop\n#\n# entries-in-buffer/entries-written: 12/400   #P:2\n#\n";

fn latency(text: &str) -> Value {
    let mut lat = Latency::new(LatencyOptions::default());
    let info = read_bytes("t", text.as_bytes().to_vec(), 1 << 16, &mut lat).unwrap();
    lat.document(&info).json
}

fn explain(text: &str) -> Value {
    let opts = ExplainOptions {
        all: true,
        top: 20,
        ..ExplainOptions::default()
    };
    let mut ex = Explain::new(opts);
    let info = read_bytes("t", text.as_bytes().to_vec(), 1 << 16, &mut ex).unwrap();
    ex.document(&info).json
}

fn task(doc: &Value, pid: i64) -> Option<&Value> {
    doc["tasks"].as_array()?.iter().find(|t| t["pid"] == pid)
}

/// CPU0 is recorded from 100.000000, CPU1 (the header's second CPU) only from 101.000000.
/// ct-7 is woken at 100.100000 and runs at 100.300000 on CPU0: CPU1 was not recorded then, so
/// the 200 ms are not measured. Its wake-up at 101.100000, run at 101.100050, is: 50 us.
const OVERWRITTEN: &str = "\
          <idle>-0     [000] d..2.   100.000000: sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=bash next_pid=9 next_prio=120
            bash-9     [000] d..2.   100.100000: sched_waking: comm=ct pid=7 prio=19 target_cpu=000
            bash-9     [000] d..2.   100.300000: sched_switch: prev_comm=bash prev_pid=9 prev_prio=120 prev_state=S ==> next_comm=ct next_pid=7 next_prio=19
              ct-7     [000] d..2.   100.400000: sched_switch: prev_comm=ct prev_pid=7 prev_prio=19 prev_state=S ==> next_comm=swapper/0 next_pid=0 next_prio=120
##### CPU 1 buffer started ####
          <idle>-0     [001] d..2.   101.000000: sched_switch: prev_comm=swapper/1 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=bash next_pid=9 next_prio=120
            bash-9     [001] d..2.   101.100000: sched_waking: comm=ct pid=7 prio=19 target_cpu=000
          <idle>-0     [000] d..2.   101.100050: sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=ct next_pid=7 next_prio=19
";

#[test]
fn a_wakeup_before_every_cpu_is_recorded_is_not_measured() {
    let doc = latency(&format!("{HEADER_OVERWRITTEN}{OVERWRITTEN}"));
    let ct = task(&doc, 7).expect("ct measured");
    assert_eq!(ct["wakeups"], 1, "{ct}");
    assert_eq!(ct["max_us"], 50.0);
    assert_eq!(doc["trace"]["dropped_before_window"], 1);
    assert_eq!(doc["trace"]["window_start"], 101.0);
    let ex = explain(&format!("{HEADER_OVERWRITTEN}{OVERWRITTEN}"));
    let findings = ex["findings"].as_array().unwrap();
    assert!(
        findings
            .iter()
            .all(|f| f["wakeup_ts"].as_f64() >= Some(101.0)),
        "{ex}"
    );
}

/// The same lines without the header's overwritten count: a whole recording, both measured.
#[test]
fn a_whole_recording_measures_every_wakeup() {
    let doc = latency(
        OVERWRITTEN
            .replace("##### CPU 1 buffer started ####\n", "")
            .as_str(),
    );
    assert_eq!(task(&doc, 7).unwrap()["wakeups"], 2);
    assert_eq!(doc["trace"]["dropped_before_window"], 0);
    assert_eq!(doc["trace"]["window_start"], Value::Null);
}

#[test]
fn stats_shows_each_cpus_history_and_the_common_window() {
    let mut stats = Stats::new();
    let text = format!("{HEADER_OVERWRITTEN}{OVERWRITTEN}");
    let info = read_bytes("t", text.into_bytes(), 1 << 16, &mut stats).unwrap();
    let doc = stats.document(&info).json;
    assert_eq!(doc["window"]["start"], 101.0);
    assert_eq!(doc["window"]["end"], 101.10005);
    let cpu1 = &doc["per_cpu"][1];
    assert_eq!(
        (cpu1["first_ts"].as_f64(), cpu1["history_start_ts"].as_f64()),
        (Some(101.0), Some(101.0))
    );
    assert_eq!(doc["per_cpu"][0]["last_ts"], 101.10005);
}

/// try_to_wake_up traced `sched_waking` of ct-7 at 200.000100 while ct-7 still ran; ct-7
/// switched out asleep at 200.000200, `sched_wakeup` followed at 200.000210, and fifo-5
/// (prio 9) kept CPU0 until 200.002200. The wake-up counts from the switch-out: 2000 us.
const RACE: &str = "\
          <idle>-0     [000] d..2.   200.000000: sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=ct next_pid=7 next_prio=19
            bash-9     [001] d..2.   200.000100: sched_waking: comm=ct pid=7 prio=19 target_cpu=000
              ct-7     [000] d..2.   200.000200: sched_switch: prev_comm=ct prev_pid=7 prev_prio=19 prev_state=S ==> next_comm=fifo next_pid=5 next_prio=9
            bash-9     [001] d..2.   200.000210: sched_wakeup: comm=ct pid=7 prio=19 target_cpu=000
            fifo-5     [000] d..2.   200.002200: sched_switch: prev_comm=fifo prev_pid=5 prev_prio=9 prev_state=S ==> next_comm=ct next_pid=7 next_prio=19
";

#[test]
fn a_waking_that_races_the_switch_out_counts_from_the_switch_out() {
    let doc = latency(RACE);
    let ct = task(&doc, 7).expect("the raced wake-up is measured");
    assert_eq!(
        (ct["wakeups"].as_u64(), ct["max_us"].as_f64()),
        (Some(1), Some(2000.0))
    );
    assert_eq!(doc["trace"]["raced_wakeups"], 1);
    let ex = explain(RACE);
    let f = &ex["findings"][0];
    assert_eq!(f["task"]["pid"], 7);
    assert_eq!(f["latency_us"], 2000.0);
    assert_eq!(f["root_cause"], "higher_priority", "{f}");
}

/// A waking of a task that never stops running (it was still queued: ttwu_runnable) is none.
#[test]
fn a_waking_of_a_task_that_keeps_running_is_no_wakeup() {
    let text = "\
          <idle>-0     [000] d..2.   200.000000: sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=ct next_pid=7 next_prio=19
            bash-9     [001] d..2.   200.000100: sched_waking: comm=ct pid=7 prio=19 target_cpu=000
            bash-9     [001] d..2.   200.000110: sched_wakeup: comm=ct pid=7 prio=19 target_cpu=000
              ct-7     [000] d..2.   200.000900: sched_switch: prev_comm=ct prev_pid=7 prev_prio=19 prev_state=S ==> next_comm=swapper/0 next_pid=0 next_prio=120
          <idle>-0     [000] d..2.   200.001000: sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=ct next_pid=7 next_prio=19
";
    let doc = latency(text);
    assert_eq!(task(&doc, 7).unwrap()["wakeups"], 0);
    assert_eq!(doc["trace"]["raced_wakeups"], 0);
}

/// ct-7 is switched in on CPU1 at 300.000300 while CPU0, by its switches, still runs it (the
/// recorder dropped a switch). Its wake-up in flight from 300.000100 on CPU0 would otherwise
/// end on CPU1 at 300.000300; nothing is measured across the contradiction.
#[test]
fn a_task_on_two_cpus_at_once_is_an_unmarked_loss() {
    let text = "\
          <idle>-0     [000] d..2.   300.000000: sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=ct next_pid=7 next_prio=19
            bash-9     [001] d..2.   300.000100: sched_waking: comm=kw pid=11 prio=120 target_cpu=001
          <idle>-0     [001] d..2.   300.000300: sched_switch: prev_comm=swapper/1 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=ct next_pid=7 next_prio=19
              ct-7     [001] d..2.   300.000400: sched_switch: prev_comm=ct prev_pid=7 prev_prio=19 prev_state=S ==> next_comm=kw next_pid=11 next_prio=120
";
    let doc = latency(text);
    assert_eq!(doc["trace"]["impossible_states"], 1);
    assert_eq!(
        task(&doc, 11).map_or(0, |t| t["wakeups"].as_u64().unwrap()),
        0
    );
    let warned = doc["warnings"].as_array().unwrap();
    assert!(warned
        .iter()
        .any(|w| w.as_str().unwrap().contains("contradicts itself")));
}

/// CPU1's clock steps back from 400.000500 to 400.000200: its order is broken and the wake-up
/// in flight (kw-11, woken at 400.000100) is not measured to 400.000600.
#[test]
fn time_going_backwards_on_a_cpu_is_an_unmarked_loss() {
    let text = "\
            bash-9     [001] d..2.   400.000100: sched_waking: comm=kw pid=11 prio=120 target_cpu=001
            bash-9     [001] d..2.   400.000500: sched_stat_runtime: comm=bash pid=9 runtime=1000 [ns] vruntime=5 [ns]
            bash-9     [001] d..2.   400.000200: sched_stat_runtime: comm=bash pid=9 runtime=1000 [ns] vruntime=5 [ns]
            bash-9     [001] d..2.   400.000600: sched_switch: prev_comm=bash prev_pid=9 prev_prio=120 prev_state=S ==> next_comm=kw next_pid=11 next_prio=120
";
    let doc = latency(text);
    assert_eq!(doc["trace"]["impossible_states"], 1);
    assert_eq!(
        task(&doc, 11).map_or(0, |t| t["wakeups"].as_u64().unwrap()),
        0
    );
}

/// kw-11 is woken at 500.000100 but its switch-in and exit were not recorded; pid 11 is
/// forked anew at 500.000500 and that new task first runs at 500.000900. Measuring 800 us
/// from the old task's wake-up would join two tasks: the reused pid starts afresh.
#[test]
fn a_reused_pid_does_not_inherit_the_old_tasks_wakeup() {
    let text = "\
            bash-9     [000] d..2.   500.000100: sched_waking: comm=kw pid=11 prio=120 target_cpu=001
            bash-9     [000] .....   500.000500: sched_process_fork: comm=bash pid=9 child_comm=bash child_pid=11
            bash-9     [000] d..2.   500.000900: sched_switch: prev_comm=bash prev_pid=9 prev_prio=120 prev_state=S ==> next_comm=bash next_pid=11 next_prio=120
";
    let doc = latency(text);
    assert_eq!(
        task(&doc, 11).map_or(0, |t| t["wakeups"].as_u64().unwrap()),
        0
    );
    assert_eq!(doc["trace"]["impossible_states"], 1);
}

/// A third-party Android trace with its perf sampler's own switches removed, as a recorder
/// that does not trace its own threads writes it (tests/fixtures/perfetto/README.md): the
/// switches alone show a task on two CPUs 21 times, some of which later events of other tasks
/// explain (a CPU that left the task without a traced switch). What remains is counted, and
/// the referee checks that no finding spans one (`V2_impossible_state`).
#[test]
fn a_perfetto_recorder_that_drops_its_own_switches_contradicts_itself() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/fixtures/perfetto/recorder_drops_own_switches.pftrace.zst"
    );
    let mut lat = Latency::new(LatencyOptions::default());
    let input = rtsleuth_trace::input::Input::open(path).unwrap();
    let info = rtsleuth_trace::read::read(input, &mut lat).unwrap();
    let doc = lat.document(&info).json;
    let n = doc["trace"]["impossible_states"].as_u64().unwrap();
    assert!((1..=21).contains(&n), "{n} contradictions");
    let warned = doc["warnings"].as_array().unwrap();
    assert!(warned
        .iter()
        .any(|w| w.as_str().unwrap().contains("contradicts itself")));
}

/// CPU0's first event shows ct-7 running there (its pid column). The waking of ct-7 at
/// 400.000100 and its sched_wakeup find it still running (ttwu_runnable): no wake-up. It then
/// sleeps at 400.000900 and is switched in at 400.001000 without being woken: nothing to
/// measure.
#[test]
fn a_task_a_cpus_first_event_shows_running_is_not_woken() {
    let text = "\
              ct-7     [000] d..2.   400.000000: sched_waking: comm=kw pid=11 prio=120 target_cpu=001
          <idle>-0     [001] d..2.   400.000050: sched_switch: prev_comm=swapper/1 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=bash next_pid=9 next_prio=120
            bash-9     [001] d..2.   400.000100: sched_waking: comm=ct pid=7 prio=19 target_cpu=000
            bash-9     [001] d..2.   400.000110: sched_wakeup: comm=ct pid=7 prio=19 target_cpu=000
              ct-7     [000] d..2.   400.000900: sched_switch: prev_comm=ct prev_pid=7 prev_prio=19 prev_state=S ==> next_comm=swapper/0 next_pid=0 next_prio=120
          <idle>-0     [000] d..2.   400.001000: sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=ct next_pid=7 next_prio=19
";
    let doc = latency(text);
    assert_eq!(
        task(&doc, 7).map_or(0, |t| t["wakeups"].as_u64().unwrap()),
        0
    );
}

/// ct-7 runs on CPU0 when bash-9 wakes it at 500.000100 (a waking that may race its
/// switch-out), but kw-11's event at 500.000200 shows it left CPU0 without a traced switch:
/// when is not recorded, so that waking starts nothing. Woken again at 500.000400, it shows
/// up on CPU0 at 500.000500 (100 us, an upper bound). Its switch-out asleep at 500.000900 is
/// no raced wake-up, and the switch-in at 500.002000 ends none.
#[test]
fn a_task_that_left_its_cpu_untraced_no_longer_races_a_waking() {
    let text = "\
          <idle>-0     [000] d..2.   500.000000: sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=ct next_pid=7 next_prio=19
            bash-9     [001] d..2.   500.000100: sched_waking: comm=ct pid=7 prio=19 target_cpu=000
              kw-11    [000] d..2.   500.000200: sched_waking: comm=bash pid=9 prio=120 target_cpu=001
            bash-9     [001] d..2.   500.000210: sched_wakeup: comm=ct pid=7 prio=19 target_cpu=000
            bash-9     [001] d..2.   500.000400: sched_waking: comm=ct pid=7 prio=19 target_cpu=000
              ct-7     [000] d..2.   500.000500: sched_waking: comm=bash pid=9 prio=120 target_cpu=001
              ct-7     [000] d..2.   500.000900: sched_switch: prev_comm=ct prev_pid=7 prev_prio=19 prev_state=S ==> next_comm=swapper/0 next_pid=0 next_prio=120
          <idle>-0     [000] d..2.   500.002000: sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=ct next_pid=7 next_prio=19
";
    let doc = latency(text);
    let ct = task(&doc, 7).expect("one wake-up is measured");
    assert_eq!(
        (ct["wakeups"].as_u64(), ct["max_us"].as_f64()),
        (Some(1), Some(100.0))
    );
    assert_eq!(doc["trace"]["raced_wakeups"], 0);
}

/// ct-7 is woken with prio 97 and switched in with 120 (Android's binder gives back a lent
/// priority without a trace event): kw-11 (prio 120) held CPU0 for 2 ms, which ranks below a
/// prio-97 task (preempt_off) and equal to a prio-120 one (fair_share). Which held is not in
/// the trace: unknown, no culprit. Switched in with 97, it is preempt_off by kw-11.
#[test]
fn a_victim_whose_priority_changed_untraced_ranks_no_culprit() {
    let text = |ran_prio: u32| {
        format!("\
          <idle>-0     [000] d..2.   600.000000: sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=kw next_pid=11 next_prio=120
          <idle>-0     [001] d..2.   600.000050: sched_switch: prev_comm=swapper/1 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=bash next_pid=9 next_prio=120
            bash-9     [001] d..2.   600.000100: sched_waking: comm=ct pid=7 prio=97 target_cpu=000
              kw-11    [000] d..2.   600.001000: sched_stat_runtime: comm=kw pid=11 runtime=1000 [ns]
              kw-11    [000] d..2.   600.002100: sched_switch: prev_comm=kw prev_pid=11 prev_prio=120 prev_state=R+ ==> next_comm=ct next_pid=7 next_prio={ran_prio}
")
    };
    let kinds = |doc: &Value| -> Vec<(String, Value)> {
        doc["findings"][0]["components"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| {
                (
                    c["kind"].as_str().unwrap().to_string(),
                    c["culprit"].clone(),
                )
            })
            .collect()
    };
    let changed = explain(&text(120));
    assert_eq!(changed["findings"][0]["latency_us"], 2000.0);
    assert_eq!(changed["findings"][0]["root_cause"], "unknown", "{changed}");
    for (kind, culprit) in kinds(&changed) {
        assert!(culprit.is_null(), "{kind} names {culprit}");
    }
    let kept = explain(&text(97));
    assert_eq!(kept["findings"][0]["root_cause"], "preempt_off", "{kept}");
}
