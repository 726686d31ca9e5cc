//! `explain` on the timerlat tracer's activations (issue 24), against what the kernel
//! documentation and rtla print for the same traces: the documentation's stack-dump example
//! (timerlat/7-1001 859.978 us late behind insmod-1026, whose `thread_noise` is 838.681 us), and
//! the lab's rtla recordings, where `rtla timerlat top -a` analysed the activation that stopped
//! it (`rtla.txt`) and saved the trace rtsleuth reads (`timerlat_trace.txt`).

use rtsleuth_analyze::explain::{Explain, ExplainOptions};
use rtsleuth_trace::input::Input;
use rtsleuth_trace::read;
use serde_json::Value;
use std::path::{Path, PathBuf};

const REPO: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");

fn explain(path: &Path) -> Value {
    let mut explain = Explain::new(ExplainOptions {
        top: 1,
        ..Default::default()
    });
    let input = Input::open(path.to_str().unwrap()).unwrap();
    let info = read::read(input, &mut explain).unwrap();
    explain.document(&info).json
}

/// The µs a finding's components give one culprit, of any kind.
fn culprit_us(f: &Value, culprit: &str) -> f64 {
    (f["components"].as_array().unwrap().iter())
        .filter(|c| c["culprit"] == culprit)
        .map(|c| c["us"].as_f64().unwrap())
        .sum()
}

/// Within 1%, or 5 us: osnoise's durations are net of nested interrupts to the ns, the text
/// prints the switch that ends a task's run to the µs.
fn near(ours: f64, theirs: f64) -> bool {
    (ours - theirs).abs() <= (theirs * 0.01).max(5.0)
}

#[test]
fn the_documented_stack_dump_is_explained_with_insmod() {
    let doc = explain(&Path::new(REPO).join("tests/fixtures/rtla/doc_print_stack.txt"));
    let f = &doc["findings"][0];
    assert_eq!(f["task"]["pid"], 1001);
    assert_eq!(f["task"]["comm"], "timerlat/7");
    assert_eq!(f["latency_us"], 859.978);
    assert_eq!(f["source"], "timer");
    assert_eq!(f["run_at"], "timerlat");
    let insmod = culprit_us(f, "insmod-1026");
    assert!(near(insmod, 838.681), "insmod-1026 {insmod} us");
    let main = (f["components"].as_array().unwrap().iter())
        .max_by(|a, b| a["us"].as_f64().partial_cmp(&b["us"].as_f64()).unwrap())
        .unwrap();
    assert_eq!(main["culprit"], "insmod-1026");
    // osnoise prints no priorities: the task is named, its class is not claimed.
    assert_eq!(main["kind"], "unknown");
    // The 7.318 us timer interrupt while insmod ran is its own component.
    assert_eq!(culprit_us(f, "local_timer:236"), 7.318);
}

/// What rtla's auto-analysis printed for the activation that stopped it: its thread latency,
/// and each `NAME:ID  N us` entry under the headings that name tasks or interrupts.
#[derive(Debug, Default)]
struct RtlaAnalysis {
    thread_latency_us: Option<f64>,
    /// "Timerlat IRQ duration": the timer's own interrupt.
    irq_duration_us: Option<f64>,
    /// (heading, `comm:pid` or `name:id`, µs)
    entries: Vec<(String, String, f64)>,
}

fn rtla_analysis(text: &str) -> RtlaAnalysis {
    let mut a = RtlaAnalysis::default();
    let mut heading = String::new();
    for line in text.lines().skip_while(|l| !l.contains("analyzing it")) {
        let words: Vec<&str> = line.split_whitespace().collect();
        if line.trim_start().starts_with("Thread latency:") {
            a.thread_latency_us = words.get(2).and_then(|w| w.parse().ok());
        }
        if line.trim_start().starts_with("Timerlat IRQ duration:") {
            a.irq_duration_us = words.get(3).and_then(|w| w.parse().ok());
        }
        match words.as_slice() {
            [name, us, "us"] if name.contains(':') && !name.ends_with(':') => {
                let us = us.parse().unwrap();
                a.entries.push((heading.clone(), name.to_string(), us));
            }
            // `  IRQ interference      304.56 us (1.03 %)`, `  Blocking thread:  …`
            _ if line.starts_with("  ") && !line.starts_with("   ") => {
                let label = words.iter().take_while(|w| w.parse::<f64>().is_err());
                let label: Vec<&str> = label.copied().collect();
                heading = label.join(" ").trim_end_matches(':').to_string();
            }
            _ => {}
        }
    }
    a
}

/// The lab runs whose saved trace holds the thread sample of the activation rtla analysed.
fn lab_runs() -> Vec<PathBuf> {
    let mut out = Vec::new();
    for kernel in ["rt", "tracer"] {
        let dir = Path::new(REPO).join("tests/fixtures/lab").join(kernel);
        for e in std::fs::read_dir(&dir).unwrap() {
            let run = e.unwrap().path();
            let rtla = std::fs::read_to_string(run.join("rtla.txt")).unwrap_or_default();
            if run.join("timerlat_trace.txt").exists() && rtla.contains("Thread latency:") {
                out.push(run);
            }
        }
    }
    out.sort();
    out
}

/// rtsleuth names what rtla names, with the same time: the task osnoise's `thread_noise` names
/// (rtla's blocking thread and thread interference), and each interrupt's total.
#[test]
fn the_lab_spikes_name_what_rtla_names() {
    let runs = lab_runs();
    assert!(runs.len() >= 5, "{runs:?}");
    let mut compared = 0;
    for run in runs {
        let rtla = rtla_analysis(&std::fs::read_to_string(run.join("rtla.txt")).unwrap());
        let doc = explain(&run.join("timerlat_trace.txt"));
        let f = &doc["findings"][0];
        let name = run.display();
        // rtla's trace begins at the first activation: the due time of that one lies before it.
        let sample = rtla.thread_latency_us.unwrap();
        let lat = f["latency_us"].as_f64().unwrap();
        assert!(lat <= sample + 0.001, "{name}: {lat} > {sample}");
        assert!(
            near(lat, sample) || run.ends_with("rt/hardirq"),
            "{name}: {lat}"
        );
        let mut irq_total = 0.0;
        for (heading, who, us) in &rtla.entries {
            let ours = match heading.as_str() {
                "Blocking thread" | "Thread interference" if who.ends_with(":0") => continue,
                "Blocking thread" | "Thread interference" => {
                    let (comm, pid) = who.rsplit_once(':').unwrap();
                    if f["task"]["pid"] == pid.parse::<i64>().unwrap() {
                        continue;
                    }
                    culprit_us(f, &format!("{comm}-{pid}"))
                }
                "IRQ interference" => {
                    irq_total += us;
                    continue;
                }
                "Softirq interference" => {
                    let vec = who.rsplit(':').next().unwrap();
                    let action = who.split(':').next().unwrap();
                    culprit_us(f, &format!("softirq {vec} ({action})"))
                }
                _ => continue,
            };
            assert!(
                near(ours, *us),
                "{name}: {heading} {who}: rtla {us}, rtsleuth {ours}"
            );
            compared += 1;
        }
        if irq_total > 0.0 {
            let ours = culprit_us(f, "local_timer:236") + culprit_us(f, "irq_work:246");
            assert!(
                near(ours, irq_total),
                "{name}: IRQ interference rtla {irq_total}, rtsleuth {ours}"
            );
            compared += 1;
        }
    }
    assert!(compared >= 10, "only {compared} of rtla's entries compared");
}

/// Where rtla stopped on the timer interrupt's latency, its trace ends before the thread's
/// sample: the activation is explained up to the interrupt, with the latency rtla printed.
#[test]
fn an_activation_stopped_at_its_interrupt_has_rtlas_irq_latency() {
    let mut checked = 0;
    for kernel in ["rt", "tracer"] {
        let dir = Path::new(REPO).join("tests/fixtures/lab").join(kernel);
        let runs = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path());
        // Each run, and the same run with the scheduler's events (`rtla_sched/`).
        for run in runs.flat_map(|r| [r.join("rtla_sched"), r]) {
            let rtla = std::fs::read_to_string(run.join("rtla.txt")).unwrap_or_default();
            let Some(total) = rtla
                .lines()
                .find(|l| l.contains("IRQ latency") && l.contains("(100%)"))
            else {
                continue;
            };
            let us: f64 = total.split_whitespace().nth(2).unwrap().parse().unwrap();
            let mut trace = run.join("timerlat_trace.txt");
            if !trace.exists() {
                trace.set_extension("txt.zst");
            }
            let f = &explain(&trace)["findings"][0];
            assert_eq!(f["run_at"], "timerlat_irq", "{}", run.display());
            assert_eq!(f["run_ts"], f["wakeup_ts"]);
            let ours = f["latency_us"].as_f64().unwrap();
            assert!(
                (ours - us).abs() < 0.01,
                "{}: rtla {us}, rtsleuth {ours}",
                run.display()
            );
            checked += 1;
        }
    }
    assert!(checked >= 6, "{checked}");
}

/// Samples and noise that do not fit together: no panic, no finding claiming more than a
/// sample says, and an activation without its irq sample is not explained.
#[test]
fn mismatched_samples_and_absurd_noise_are_handled() {
    let text = "\
# tracer: timerlat
 timerlat/0-9 [000] ....  10.000100: #1 context thread timer_latency 5000 ns
 <idle>-0 [000] d.h1  10.001000: #2 context irq timer_latency 999999999999 ns
 timerlat/0-9 [000] ....  10.001100: #3 context thread timer_latency 100 ns
 <idle>-0 [000] dNh2  10.001900: irq_noise: local_timer:236 start 10.001800000 duration 18446744073709551615 ns
 <idle>-0 [000] d..3  10.001950: thread_noise: swapper/0:0 start 0.000000001 duration 4000000000000 ns
 <idle>-0 [000] d.h1  10.002000: #4 context irq timer_latency 20000 ns
 timerlat/0-9 [000] ....  10.002100: #4 context thread timer_latency 999999999999 ns
 <idle>-0 [000] d.h1  10.003000: #5 context irq timer_latency 7000 ns
";
    let path = std::env::temp_dir().join(format!("timerlat_bad_{}.txt", std::process::id()));
    std::fs::write(&path, text).unwrap();
    let mut explain = Explain::new(ExplainOptions {
        top: 10,
        threshold_us: Some(0.0),
        ..Default::default()
    });
    let input = Input::open(path.to_str().unwrap()).unwrap();
    let info = read::read(input, &mut explain).unwrap();
    let doc = explain.document(&info).json;
    std::fs::remove_file(&path).ok();
    let findings = doc["findings"].as_array().unwrap();
    // #1 and #3 have no irq sample of their own; #4 is due before the trace (explained from
    // its first event); #5 ends the trace at its interrupt.
    let runs: Vec<f64> = findings
        .iter()
        .map(|f| f["run_ts"].as_f64().unwrap())
        .collect();
    assert_eq!(findings.len(), 2, "{runs:?}");
    for f in findings {
        let sum: f64 = (f["timeline"].as_array().unwrap().iter())
            .map(|s| s["end_ts"].as_f64().unwrap() - s["start_ts"].as_f64().unwrap())
            .sum();
        assert!(
            (sum * 1e6 - f["latency_us"].as_f64().unwrap()).abs() < 0.01,
            "{f}"
        );
        assert!(f["expected_ts"].as_f64().unwrap() >= 10.0001 - 1e-9, "{f}");
    }
}

/// With the scheduler's events in the trace, the thread's wake-up is explained as any other
/// (its culprit ranked by the printed priorities), and its sample proves when it was due:
/// 220 us from the timer to the sample, 200 us of it hog-50 (prio 120) keeping the CPU from
/// the FIFO thread (prio 4) after the wake-up.
#[test]
fn the_sample_times_a_traced_wakeup() {
    let doc = explain(&Path::new(REPO).join("tests/fixtures/rtla/written_traced_wakeup.txt"));
    let f = &doc["findings"][0];
    assert_eq!(f["source"], "timer", "{f}");
    assert_eq!(f["run_at"], "mark");
    assert_eq!(f["latency_us"], 220.0);
    assert_eq!(f["expected_ts"], 10.0001);
    assert_eq!(f["run_ts"], 10.00032);
    let hog = culprit_us(f, "hog-50");
    // From the waking (10.000101) to the switch (10.000301).
    assert_eq!(hog, 200.0, "{f}");
    let main = (f["components"].as_array().unwrap().iter())
        .find(|c| c["culprit"] == "hog-50")
        .unwrap();
    assert_eq!(main["kind"], "preempt_off");
}

/// The same rtla runs with `-e sched -e irq` (`rtla_sched/`): the scheduler's events print
/// the priorities, so the task rtla calls the blocking thread gets its class, ranked against
/// the thread: fifo_burst (FIFO 90, prio 9) above rtla's FIFO 80 (prio 19), the module's
/// SCHED_OTHER kthread below it. Its time is at least rtla's blocking-thread figure and at most
/// that plus the interrupts rtla counts apart (these traces have no irq vector events, so the
/// engine cannot tell the timer interrupts from the task they interrupted).
#[test]
fn with_scheduler_events_the_blocking_thread_is_ranked() {
    for (scenario, kind) in [
        ("higher_priority", "higher_priority"),
        ("preempt_off", "preempt_off"),
    ] {
        let dir = Path::new(REPO)
            .join("tests/fixtures/lab/rt")
            .join(scenario)
            .join("rtla_sched");
        let rtla = rtla_analysis(&std::fs::read_to_string(dir.join("rtla.txt")).unwrap());
        let mut trace = dir.join("timerlat_trace.txt");
        if !trace.exists() {
            trace.set_extension("txt.zst");
        }
        let f = &explain(&trace)["findings"][0];
        assert_eq!(f["run_at"], "mark", "{scenario}");
        let sample = rtla.thread_latency_us.unwrap();
        assert!(
            (f["latency_us"].as_f64().unwrap() - sample).abs() < 0.01,
            "{scenario}"
        );
        let (_, who, blocking) = (rtla.entries.iter())
            .find(|e| e.0 == "Blocking thread")
            .unwrap();
        let culprit = who.replace(':', "-");
        let main = (f["components"].as_array().unwrap().iter())
            .max_by(|a, b| a["us"].as_f64().partial_cmp(&b["us"].as_f64()).unwrap())
            .unwrap();
        assert_eq!(
            (main["kind"].as_str(), main["culprit"].as_str()),
            (Some(kind), Some(culprit.as_str()))
        );
        let apart: f64 = (rtla.entries.iter())
            .filter(|e| e.0 == "IRQ interference")
            .map(|e| e.2)
            .sum::<f64>()
            + rtla.irq_duration_us.unwrap_or(0.0);
        let ours = main["us"].as_f64().unwrap();
        assert!(
            ours >= blocking - 5.0 && ours <= blocking + apart + 5.0,
            "{scenario}: {ours} vs {blocking} + {apart}"
        );
    }
}

/// The timer's tracer recorded in an instance and kept both ways (`timerlat_dat/`: the
/// instance's `trace` as printed, and `trace-cmd extract -B`, which stores only that instance):
/// the trace.dat reads as many events and explains the same activations, with the same
/// causes; only the text's µs timestamps move the numbers.
#[test]
fn timerlat_in_a_trace_dat_instance_reads_as_its_text() {
    let read = |path: &Path| {
        let mut explain = Explain::new(ExplainOptions {
            top: 20,
            threshold_us: Some(0.0),
            ..Default::default()
        });
        let input = Input::open(path.to_str().unwrap()).unwrap();
        let info = read::read(input, &mut explain).unwrap();
        (info.events, explain.document(&info).json)
    };
    for scenario in ["higher_priority", "preempt_off"] {
        let dir = Path::new(REPO)
            .join("tests/fixtures/lab/rt")
            .join(scenario)
            .join("timerlat_dat");
        let (text_events, text) = read(&dir.join("trace.txt.zst"));
        let (dat_events, dat) = read(&dir.join("trace.dat.zst"));
        assert_eq!(text_events, dat_events, "{scenario}");
        let (a, b) = (
            text["findings"].as_array().unwrap(),
            dat["findings"].as_array().unwrap(),
        );
        assert_eq!(a.len(), b.len(), "{scenario}");
        for (t, d) in a.iter().zip(b) {
            for key in ["run_at", "root_cause", "source", "cpu"] {
                assert_eq!(t[key], d[key], "{scenario} {key}");
            }
            assert_eq!(t["task"]["pid"], d["task"]["pid"]);
            let (lt, ld) = (
                t["latency_us"].as_f64().unwrap(),
                d["latency_us"].as_f64().unwrap(),
            );
            assert!((lt - ld).abs() < 2.0, "{scenario}: {lt} vs {ld}");
        }
    }
}
