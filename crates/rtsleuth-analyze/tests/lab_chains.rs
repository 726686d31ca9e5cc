//! The PREEMPT_RT lab's wake-chain scenarios (lab/README.md): the answer is written in each
//! fixture's `expected.json` from the trace's own events (`lab/host/expected_chain.awk`: the
//! interrupt, the helper thread's wake-up and run, the victim's wake-up and run, the hog's
//! bursts), never from rtsleuth's output.

use rtsleuth_analyze::explain::{Explain, ExplainOptions};
use rtsleuth_analyze::latency::{IrqSelector, Latency, LatencyOptions};
use rtsleuth_trace::input::Input;
use rtsleuth_trace::read;
use serde_json::Value;
use std::path::{Path, PathBuf};

fn dir(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures/lab/rt")
        .join(name)
}

fn expected(name: &str) -> Value {
    serde_json::from_str(&std::fs::read_to_string(dir(name).join("expected.json")).unwrap())
        .unwrap()
}

/// Every wake-up of the victim, explained.
fn findings(trace: &Path, victim: i64) -> Vec<Value> {
    let mut explain = Explain::new(ExplainOptions {
        pids: vec![victim as i32],
        threshold_us: Some(0.0),
        top: usize::MAX,
        ..Default::default()
    });
    let input = Input::open(trace.to_str().unwrap()).unwrap();
    let info = read::read(input, &mut explain).unwrap();
    explain.document(&info).json["findings"]
        .as_array()
        .unwrap()
        .clone()
}

fn ts(v: &Value) -> f64 {
    v["ts"].as_f64().unwrap()
}

fn near(a: f64, b: f64) -> bool {
    (a - b).abs() <= 2e-6
}

/// Each spike of fixture `name` is a one-link chain through its helper thread (woken as
/// `woken_by` says), starting within `tolerance` s of `start(spike)`, and the hog holds at
/// least 90% of the helper's wait, on the helper's CPU, as higher_priority.
fn the_hog_is_on_the_helpers_link(
    name: &str,
    woken_by: &str,
    start: fn(&Value) -> f64,
    tolerance: f64,
) {
    let want = expected(name);
    let pid = |key: &str| want[key].as_i64().unwrap();
    let (victim, helper, hog) = (pid("victim_pid"), pid("helper_pid"), pid("hog_pid"));
    for trace in ["trace.txt.zst", "trace.dat.zst"] {
        let all = findings(&dir(name).join(trace), victim);
        for spike in want["spikes"].as_array().unwrap() {
            let at = format!("{name} {trace} seq {}", spike["seq"]);
            let f = (all.iter())
                .find(|f| near(f["run_ts"].as_f64().unwrap(), ts(&spike["victim_runs"])))
                .unwrap_or_else(|| panic!("{at}: no finding ending at the victim's run"));
            assert_eq!(f["source"], "chain", "{at}: {f:#}");
            let got = f["expected_ts"].as_f64().unwrap();
            assert!((got - start(spike)).abs() <= tolerance, "{at}: start {got}");
            let links = f["chain"].as_array().unwrap();
            assert_eq!(links.len(), 1, "{at}");
            let link = &links[0];
            let who = (link["task"]["pid"].as_i64(), link["woken_by"].as_str());
            assert_eq!(who, (Some(helper), Some(woken_by)), "{at}");
            let (woken, ran) = (ts(&spike["helper_woken"]), ts(&spike["helper_runs"]));
            assert!(near(link["woken_ts"].as_f64().unwrap(), woken), "{at}");
            assert!(near(link["run_ts"].as_f64().unwrap(), ran), "{at}");
            let on_link: f64 = (f["timeline"].as_array().unwrap().iter())
                .filter(|s| s["culprit_pid"] == hog && s["kind"] == "higher_priority")
                .filter(|s| s["cpu"] == link["cpu"])
                .filter(|s| s["start_ts"].as_f64().unwrap() >= woken - 1e-6)
                .filter(|s| s["end_ts"].as_f64().unwrap() <= ran + 1e-6)
                .map(|s| (s["end_ts"].as_f64().unwrap() - s["start_ts"].as_f64().unwrap()) * 1e6)
                .sum();
            let wait = (ran - woken) * 1e6;
            assert!(
                on_link >= 0.9 * wait,
                "{at}: hog {on_link} us of the helper's {wait} us"
            );
            assert_eq!(f["root_cause"], "higher_priority", "{at}");
        }
    }
}

/// irq_thread: the virtio interrupt's thread (SCHED_FIFO 50) wakes irq_app (70); fifo_burst
/// (60) spins between them on the same CPU. Each late read starts at the interrupt's entry,
/// and fifo_burst is blamed inside the IRQ thread's wait: the injected cause on the right link.
#[test]
fn the_irq_threads_wait_behind_the_hog_is_on_its_link() {
    the_hog_is_on_the_helpers_link("irq_thread", "interrupt", |s| ts(&s["irq_entry"]), 2e-6);
}

/// timerfd: the app (SCHED_FIFO 50) reads a timerfd whose soft timer's callback runs in
/// `ktimers/1` (SCHED_FIFO 1), woken on the tick's exit path; fifo_burst (SCHED_FIFO 10) spins
/// on that CPU. Each late read starts at the app's own due time: the app outranks the spinner
/// and still waits for it. The expire entry's `now=` is read when the HRTIMER softirq starts,
/// a few us before the entry is traced, so the conversion is that close.
#[test]
fn the_soft_timers_thread_waits_behind_the_spinner_on_its_link() {
    the_hog_is_on_the_helpers_link(
        "timerfd",
        "soft_timer",
        |s| s["due"].as_f64().unwrap(),
        10e-6,
    );
}

/// `latency --irq` on irq_thread: per receiving thread, the interrupt's entry to its run. The
/// IRQ thread's worst is at least the worst spike's `helper_runs - irq_entry`, the app's at
/// least its `victim_runs - irq_entry` (the spikes are the app's worst reads; the trace may
/// hold other interrupts), and `explain --irq` names that same worst, through the IRQ thread.
#[test]
fn latency_per_thread_from_the_interrupt_matches_the_spikes() {
    let want = expected("irq_thread");
    let spikes = want["spikes"].as_array().unwrap();
    let worst = |to: &str| {
        (spikes.iter())
            .map(|s| (ts(&s[to]) - ts(&s["irq_entry"])) * 1e6)
            .fold(0.0, f64::max)
    };
    let irq = want["irq"].as_u64().unwrap() as u32;
    let helper = want["helper_pid"].as_i64().unwrap();
    let victim = want["victim_pid"].as_i64().unwrap();
    for trace in ["trace.txt.zst", "trace.dat.zst"] {
        let mut lat = Latency::new(LatencyOptions {
            irq: Some(IrqSelector::Number(irq)),
            ..Default::default()
        });
        let input = Input::open(dir("irq_thread").join(trace).to_str().unwrap()).unwrap();
        let info = read::read(input, &mut lat).unwrap();
        let doc = lat.document(&info).json;
        assert_eq!(doc["irq"]["interrupts"][0]["name"], want["irq_name"]);
        let rows = doc["irq"]["receivers"].as_array().unwrap();
        let row = |pid: i64, via: Option<i64>| {
            (rows.iter())
                .find(|r| r["pid"] == pid && r["woken_by"]["pid"].as_i64() == via)
                .unwrap_or_else(|| panic!("{trace}: no row for {pid} via {via:?}: {rows:?}"))
        };
        let max = |r: &Value| r["max_us"].as_f64().unwrap();
        let (thread, app) = (row(helper, None), row(victim, Some(helper)));
        assert_eq!(
            (thread["link"].as_u64(), app["link"].as_u64()),
            (Some(1), Some(2))
        );
        assert!(
            max(thread) + 2.0 >= worst("helper_runs"),
            "{trace}: {thread}"
        );
        assert!(max(app) + 2.0 >= worst("victim_runs"), "{trace}: {app}");
        // With the app's worst read among the spikes, its worst is exactly that one.
        assert!(
            (max(app) - worst("victim_runs")).abs() <= 2.0,
            "{trace}: {app}"
        );

        let mut explain = Explain::new(ExplainOptions {
            irq: Some(IrqSelector::Name(want["irq_name"].as_str().unwrap().into())),
            top: 1,
            ..Default::default()
        });
        let input = Input::open(dir("irq_thread").join(trace).to_str().unwrap()).unwrap();
        let info = read::read(input, &mut explain).unwrap();
        let top = explain.document(&info).json["findings"][0].clone();
        assert_eq!(top["task"]["pid"], victim, "{trace}: {top:#}");
        assert!(
            (top["latency_us"].as_f64().unwrap() - max(app)).abs() <= 0.01,
            "{trace}"
        );
        let first = &top["chain"][0];
        assert_eq!(first["task"]["pid"], helper);
        let named = format!("irq {irq} ({})", want["irq_name"].as_str().unwrap());
        assert_eq!(first["interrupt"], named.as_str(), "{trace}");
    }
}
