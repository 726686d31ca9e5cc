//! rtla's timerlat samples in `latency` (issue 24): per CPU and context, against the numbers
//! the kernel documentation prints, an independent count of every sample of the lab's rtla
//! recordings (`tests/fixtures/rtla/independent_timerlat.py`), and rtla's own summary of
//! those runs (`rtla.txt`, its `timerlat top` table).

use rtsleuth_analyze::latency::{Latency, LatencyOptions};
use rtsleuth_trace::input::Input;
use rtsleuth_trace::read;
use serde_json::Value;
use std::path::{Path, PathBuf};

const REPO: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");

fn timerlat(path: &Path) -> Vec<Value> {
    let mut lat = Latency::new(LatencyOptions::default());
    let input = Input::open(path.to_str().unwrap()).unwrap();
    let info = read::read(input, &mut lat).unwrap();
    lat.document(&info).json["timerlat"]
        .as_array()
        .unwrap()
        .clone()
}

fn row<'a>(rows: &'a [Value], cpu: u64, context: &str) -> &'a Value {
    rows.iter()
        .find(|r| r["cpu"] == cpu && r["context"] == context)
        .unwrap_or_else(|| panic!("no row for CPU{cpu} {context}: {rows:?}"))
}

/// The timerlat tracer's example output: CPU0's largest irq latency is 932 ns and thread
/// latency 11700 ns, CPU1's 2833 and 9820 ns, two activations each.
#[test]
fn the_kernel_documentations_samples_give_the_printed_maxima() {
    let rows = timerlat(&Path::new(REPO).join("tests/fixtures/rtla/doc_timerlat.txt"));
    for (cpu, context, count, max_us, min_us) in [
        (0, "irq", 2, 0.932, 0.769),
        (0, "thread", 2, 11.7, 3.07),
        (1, "irq", 2, 2.833, 0.935),
        (1, "thread", 2, 9.82, 4.351),
    ] {
        let r = row(&rows, cpu, context);
        assert_eq!(r["count"], count);
        assert_eq!(r["max_us"], max_us, "{r}");
        assert_eq!(r["min_us"], min_us, "{r}");
    }
    assert_eq!(rows.len(), 4);
    let stack = timerlat(&Path::new(REPO).join("tests/fixtures/rtla/doc_print_stack.txt"));
    assert_eq!(row(&stack, 7, "thread")["max_us"], 859.978);
    assert_eq!(row(&stack, 7, "irq")["max_us"], 1.616);
}

/// Every trace with an independent summary beside it.
fn summarised() -> Vec<(PathBuf, PathBuf)> {
    let mut out = Vec::new();
    let rtla = Path::new(REPO).join("tests/fixtures/rtla");
    for name in ["doc_timerlat", "doc_osnoise_events", "doc_print_stack"] {
        out.push((
            rtla.join(format!("{name}.txt")),
            rtla.join(format!("{name}.expected.json")),
        ));
    }
    let lab = Path::new(REPO).join("tests/fixtures/lab");
    for kernel in std::fs::read_dir(&lab).unwrap().flatten() {
        for run in std::fs::read_dir(kernel.path())
            .into_iter()
            .flatten()
            .flatten()
        {
            let trace = run.path().join("timerlat_trace.txt");
            if trace.exists() {
                out.push((trace, run.path().join("timerlat_trace.expected.json")));
            }
        }
    }
    out
}

#[test]
fn every_sample_is_counted_as_an_independent_reading_counts_it() {
    let traces = summarised();
    assert!(traces.len() >= 11, "{} traces", traces.len());
    for (trace, expected) in traces {
        let want: Vec<Value> =
            serde_json::from_str(&std::fs::read_to_string(&expected).unwrap()).unwrap();
        let got = timerlat(&trace);
        assert_eq!(got.len(), want.len(), "{}", trace.display());
        for w in &want {
            let g = row(
                &got,
                w["cpu"].as_u64().unwrap(),
                w["context"].as_str().unwrap(),
            );
            let ctx = format!("{}: {g} vs {w}", trace.display());
            let us = |k: &str| w[k].as_f64().unwrap() / 1e3;
            let count = w["count"].as_f64().unwrap();
            assert_eq!(g["count"], w["count"], "{ctx}");
            assert_eq!(g["min_us"].as_f64(), Some(us("min_ns")), "{ctx}");
            assert_eq!(g["max_us"].as_f64(), Some(us("max_ns")), "{ctx}");
            assert_eq!(
                g["max_ts"].as_f64(),
                w["max_ts"].as_str().unwrap().parse().ok(),
                "{ctx}"
            );
            let avg = us("sum_ns") / count;
            assert!((g["avg_us"].as_f64().unwrap() - avg).abs() < 1e-6, "{ctx}");
            // Percentiles come from an HDR histogram: within 0.1% of the nearest rank.
            for (mine, theirs) in [
                ("p50_us", "p50_ns"),
                ("p99_us", "p99_ns"),
                ("p999_us", "p999_ns"),
            ] {
                let (m, t) = (g[mine].as_f64().unwrap(), us(theirs));
                assert!((m - t).abs() <= t * 1e-3 + 1e-9, "{mine}: {ctx}");
            }
        }
    }
}

/// (min, avg, max) of the irq, thread and user-ret contexts, `None` where rtla printed `-`.
type Contexts = [Option<[u64; 3]>; 3];

/// One CPU row of rtla's `timerlat top` table: CPU, count, then each context in whole
/// microseconds.
fn rtla_top(text: &str) -> Vec<(u64, u64, Contexts)> {
    let mut rows = Vec::new();
    for line in text.lines() {
        let cols: Vec<&str> = line.split('|').collect();
        let Some((cpu, count)) = cols[0].trim().split_once(" #") else {
            continue;
        };
        let (Ok(cpu), Ok(count)) = (cpu.trim().parse(), count.trim().parse()) else {
            continue;
        };
        let mut ctx = [None; 3];
        for (i, c) in cols.iter().skip(1).take(3).enumerate() {
            let v: Vec<Option<u64>> = c.split_whitespace().map(|x| x.parse().ok()).collect();
            if let [_, Some(min), Some(avg), Some(max)] = v[..] {
                ctx[i] = Some([min, avg, max]);
            }
        }
        rows.push((cpu, count, ctx));
    }
    rows
}

/// rtla read the same runs through its own instance and prints whole microseconds (cut, not
/// rounded). Where it counted as many samples of a context as the saved trace holds, its
/// minimum, average and maximum are ours cut to the microsecond.
#[test]
fn rtla_summarised_the_lab_runs_as_latency_does() {
    let mut compared = 0;
    for (trace, _) in summarised() {
        let Ok(text) = std::fs::read_to_string(trace.with_file_name("rtla.txt")) else {
            continue;
        };
        let got = timerlat(&trace);
        for (cpu, count, contexts) in rtla_top(&text) {
            for (context, theirs) in ["irq", "thread", "user-ret"].iter().zip(contexts) {
                let Some([min, avg, max]) = theirs else {
                    continue;
                };
                let Some(g) = got
                    .iter()
                    .find(|r| r["cpu"] == cpu && r["context"] == *context)
                else {
                    continue;
                };
                if g["count"] != count {
                    continue;
                }
                let cut = |k: &str| g[k].as_f64().unwrap().floor() as u64;
                assert_eq!(
                    [cut("min_us"), cut("avg_us"), cut("max_us")],
                    [min, avg, max],
                    "{} CPU{cpu} {context}",
                    trace.display()
                );
                compared += 1;
            }
        }
    }
    assert!(compared >= 8, "{compared} rows compared with rtla");
}

/// A trace of the timerlat tracer's thread samples alone has no wake-up and no whole
/// activation to explain: `explain` says so, and where the samples are (with the irq samples
/// too, the activations are explained). One with switches only says the first half; one with
/// wake-ups of no target keeps the hint about targets unless every task was asked for.
#[test]
fn explain_says_why_it_explained_nothing() {
    use rtsleuth_analyze::explain::{Explain, ExplainOptions};
    use rtsleuth_trace::read::ftrace_text::read_bytes;
    let warnings = |text: &str, all: bool| -> Vec<String> {
        let mut ex = Explain::new(ExplainOptions {
            all,
            ..ExplainOptions::default()
        });
        let info = read_bytes("t", text.as_bytes().to_vec(), 1 << 16, &mut ex).unwrap();
        let doc = ex.document(&info).json;
        let w = doc["warnings"].as_array().unwrap();
        w.iter().map(|w| w.as_str().unwrap().to_string()).collect()
    };
    let doc = std::fs::read_to_string(Path::new(REPO).join("tests/fixtures/rtla/doc_timerlat.txt"))
        .unwrap();
    let none = "the trace has no sched_waking or sched_wakeup events";
    // Its activations are explained: nothing to say of why nothing was.
    assert!(!warnings(&doc, false)
        .iter()
        .any(|w| w.contains("timerlat samples")));
    let threads: String = (doc.lines())
        .filter(|l| l.contains("context thread"))
        .map(|l| format!("{l}\n"))
        .collect();
    let said = warnings(&threads, false);
    assert!(said.iter().any(|w| w.starts_with(none)), "{said:?}");
    assert!(
        said.iter().any(|w| w.contains("4 timerlat samples")),
        "{said:?}"
    );
    let switches = "          <idle>-0     [000] d..2.   1.000000: sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=rt-app next_pid=7 next_prio=120\n";
    let said = warnings(switches, true);
    assert!(
        said.iter()
            .any(|w| w.starts_with(none) && !w.contains("timerlat")),
        "{said:?}"
    );
    let woken = format!(
        "{switches}            bash-9     [001] d..2.   1.000100: sched_waking: comm=kw pid=11 prio=120 target_cpu=001\n"
    );
    let target_hint = "see --all";
    assert!(warnings(&woken, false)
        .iter()
        .any(|w| w.contains(target_hint)));
    assert!(!warnings(&woken, true)
        .iter()
        .any(|w| w.contains(target_hint) || w.starts_with(none)));
}

/// The osnoise tracer's documented output: `latency` totals each CPU's period as printed
/// (one period each here), the availability to the kernel's five decimals.
#[test]
fn the_osnoise_documentation_summaries_are_totalled_per_cpu() {
    let mut lat = Latency::new(LatencyOptions::default());
    let path = Path::new(REPO).join("tests/fixtures/rtla/doc_osnoise_tracer.txt");
    let input = Input::open(path.to_str().unwrap()).unwrap();
    let info = read::read(input, &mut lat).unwrap();
    let rows = lat.document(&info).json["osnoise"]
        .as_array()
        .unwrap()
        .clone();
    assert_eq!(rows.len(), 8);
    let row = |cpu: u64| rows.iter().find(|r| r["cpu"] == cpu).unwrap();
    // CPU0: `1000000 190 99.98100 9 18 0 1007 18 1`; CPU7: `1000000 7816 99.21840 107 8 0
    // 1016 39 19`.
    for (cpu, noise, pct, single, counts) in [
        (0, 190, 99.981, 9, [18, 0, 1007, 18, 1]),
        (7, 7816, 99.2184, 107, [8, 0, 1016, 39, 19]),
    ] {
        let r = row(cpu);
        assert_eq!(r["periods"], 1);
        assert_eq!(r["runtime_us"], 1_000_000);
        assert_eq!(r["noise_us"], noise);
        assert_eq!(r["available_pct"], pct);
        assert_eq!(r["max_single_us"], single);
        let got: Vec<u64> = ["hw", "nmi", "irq", "softirq", "thread"]
            .iter()
            .map(|k| r[*k].as_u64().unwrap())
            .collect();
        assert_eq!(got, counts);
    }
}
