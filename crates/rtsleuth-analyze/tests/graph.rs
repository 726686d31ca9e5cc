//! `graph` on the synthetic timer-interrupt pair and the annotated excerpt with its clean twin
//! (exact answers in tests/fixtures/function_graph/README.md), on the kernel documentation's
//! and perf-tools' function_graph samples (values checked by hand against the quoted lines),
//! and on bad input.

#[path = "../../rtsleuth-trace/tests/shared_fixtures/mod.rs"]
mod shared_fixtures;

use rtsleuth_analyze::graph::{analyze, analyze_pair, GraphOptions};
use rtsleuth_trace::input::Input;
use rtsleuth_trace::read::function_graph::{self, Call, CallKind, GraphInfo, GraphSink};
use rtsleuth_trace::Error;
use serde_json::Value;
use std::path::Path;

fn repo(rel: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(rel)
        .to_string_lossy()
        .into_owned()
}

fn realworld(rel: &str) -> Option<String> {
    shared_fixtures::realworld(rel).map(|p| p.to_string_lossy().into_owned())
}

fn opts(func: Option<&str>) -> GraphOptions {
    GraphOptions {
        func: func.map(str::to_string),
        top: 20,
        threshold_us: 1.0,
    }
}

fn json(path: &str, func: Option<&str>) -> Value {
    analyze(path, &opts(func)).unwrap().json
}

fn function<'a>(doc: &'a Value, name: &str) -> &'a Value {
    doc["functions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["function"] == name)
        .unwrap_or_else(|| panic!("{name} not in the report"))
}

const SLOW_PATH: &str = "smp_apic_timer_interrupt > hrtimer_interrupt > __hrtimer_run_queues > tick_sched_timer > hrtimer_start_range_ns";

/// The comparison the README promises: one extra subtree of 7.5 us, nothing slower.
fn assert_synthetic_answer(c: &Value, base_source: Option<&str>) {
    assert_eq!(c["function"], "smp_apic_timer_interrupt");
    assert_eq!(c["slow_us"], 15.345);
    assert_eq!(c["base_us"], 7.845);
    assert_eq!(c["delta_us"], 7.5);
    assert_eq!(
        (c["slow"]["line"].as_u64(), c["base"]["line"].as_u64()),
        (Some(180), Some(107))
    );
    let extra = c["extra"].as_array().unwrap();
    assert_eq!(extra.len(), 1, "{extra:?}");
    assert_eq!(extra[0]["path"], SLOW_PATH);
    assert_eq!(extra[0]["function"], "hrtimer_start_range_ns");
    assert_eq!(extra[0]["us"], 7.5);
    assert_eq!(extra[0]["calls"], 15);
    assert_eq!(c["slower"], Value::Array(vec![]));
    assert_eq!(c["missing"], Value::Array(vec![]));
    assert_eq!(c["base_source"].as_str(), base_source);
}

#[test]
fn abnormal_against_normal_names_the_extra_hrtimer_start_path() {
    let (slow, normal) = (
        repo("tests/fixtures/function_graph/abnormal.txt"),
        repo("tests/fixtures/function_graph/normal.txt"),
    );
    let doc = analyze_pair(&slow, &normal, &opts(None)).unwrap().json;
    assert_eq!(doc["schema"], "rtsleuth.graph/1");
    assert_eq!(doc["compare"]["base_invocations"], 3);
    assert_synthetic_answer(&doc["compare"], Some(&normal));
    // The same with the function named.
    let doc = analyze_pair(&slow, &normal, &opts(Some("smp_apic_timer_interrupt")))
        .unwrap()
        .json;
    assert_synthetic_answer(&doc["compare"], Some(&normal));
}

#[test]
fn slowest_against_the_median_invocation_of_one_trace() {
    let doc = json(
        &repo("tests/fixtures/function_graph/abnormal.txt"),
        Some("smp_apic_timer_interrupt"),
    );
    assert_eq!(doc["compare"]["base_invocations"], 4);
    assert_synthetic_answer(&doc["compare"], None);
    // 7.678 + 7.845 + 15.345 + 7.963 us; self time 0.350 us each, -0.167 and +0.118 us for
    // the first and last.
    let f = function(&doc, "smp_apic_timer_interrupt");
    assert_eq!(
        (f["calls"].as_u64(), f["total_us"].as_f64()),
        (Some(4), Some(38.831))
    );
    assert_eq!(
        (f["max_us"].as_f64(), f["max_at_line"].as_u64()),
        (Some(15.345), Some(180))
    );
    assert_eq!(f["self_total_us"], 1.351);
    // `_raw_spin_lock` repeats in every interrupt: 3 per interrupt x 4.
    assert_eq!(function(&doc, "_raw_spin_lock")["calls"], 12);
}

#[test]
fn kernel_doc_inclusive_and_exclusive() {
    let Some(p) =
        realworld("kernel-doc-ftrace/extracted/ftrace.rst.L3125.function_graph-fragment.txt")
    else {
        return;
    };
    let doc = json(&p, None);
    // 0) + 14.237 us   |  }      (line 17)
    // 0) + 14.012 us   |  }      (line 34)
    let f = function(&doc, "__do_fault");
    assert_eq!(
        (f["calls"].as_u64(), f["total_us"].as_f64()),
        (Some(2), Some(28.249))
    );
    assert_eq!(
        (f["max_us"].as_f64(), f["max_at_line"].as_u64()),
        (Some(14.237), Some(17))
    );
    // Self of the first: 14.237 - (4.979 filemap_fault + 0.653 + 0.578 + 0.525 + 0.585
    // + 2.786 unlock_page) = 4.131.
    assert_eq!(f["self_max_us"], 4.131);
    // `__might_sleep() {` ... `1.329 us | }`: an entry closed by an exit.
    assert_eq!(function(&doc, "__might_sleep")["total_us"], 2.741);
}

#[test]
fn a_fragment_starting_inside_the_tree_uses_the_tails() {
    let Some(p) =
        realworld("kernel-doc-ftrace/extracted/ftrace.rst.L2563.function_graph-fragment.txt")
    else {
        return;
    };
    let doc = json(&p, None);
    // 3) # 2034.948 us |    } /* schedule */
    // 3) * 33998.59 us |  } /* schedule_preempt_disabled */
    let f = function(&doc, "schedule_preempt_disabled");
    assert_eq!(
        (f["calls"].as_u64(), f["total_us"].as_f64()),
        (Some(1), Some(33998.59))
    );
    assert_eq!(f["self_total_us"], 31963.642);
    // 2) $ 3594274 us  |  }  has no tail: not attributed, and said so.
    let w = doc["warnings"].to_string();
    assert!(
        w.contains("exits close calls whose entry is not in the trace"),
        "{w}"
    );
}

#[test]
fn funcslower_columns_and_markers() {
    let Some(p) = realworld("perf-tools/examples/funcslower_example.txt") else {
        return;
    };
    let doc = json(&p, None);
    // 6 lines ` 0) ! 8147.120 us |  } /* ext3_readpages */` and 7 with TIME and TASK columns;
    // the slowest: `2678113.810269 |   0)  cksum-26695   | ! 12234.70 us |  } /* ext3_readpages */`.
    let f = function(&doc, "ext3_readpages");
    assert_eq!(f["calls"], 13);
    assert_eq!(
        (f["max_us"].as_f64(), f["max_at_ts"].as_f64()),
        (Some(12234.7), Some(2678113.810269))
    );
    // 2000147 + 1000143 + 1000154 + 2000183 + 1000141 us, across task-switch banners.
    let f = function(&doc, "sys_nanosleep");
    assert_eq!(
        (f["calls"].as_u64(), f["total_us"].as_f64()),
        (Some(5), Some(7000768.0))
    );
    assert_eq!(doc["task_switches"], 3);
    // The author's prose around the output is skipped, with a warning.
    assert!(doc["warnings"]
        .to_string()
        .contains("lines were not understood"));
}

#[test]
fn funcgraph_example_slowest_upcall_ran_a_softirq() {
    let Some(p) = realworld("perf-tools/examples/funcgraph_example.txt") else {
        return;
    };
    let doc = json(&p, Some("xen_evtchn_do_upcall"));
    let c = &doc["compare"];
    // 7238524.269465 |   0)   56.365 us   |                }   (line 1473)
    // 7338520.855148 |   0)   38.284 us   |                }   (line 2009)
    assert_eq!(
        (c["slow_us"].as_f64(), c["slow"]["line"].as_u64()),
        (Some(56.365), Some(1473))
    );
    assert_eq!(c["slow"]["ts"], 7238524.269465);
    assert_eq!(
        (c["base_us"].as_f64(), c["base"]["line"].as_u64()),
        (Some(38.284), Some(2009))
    );
    // 7238524.269444 |   0)               |                    __do_softirq() {   (line 1433)
    // 7238524.269463 |   0)   18.770 us   |                    }                  (line 1469)
    // with 28 calls from its entry to its exit.
    let extra = &c["extra"][0];
    assert_eq!(
        extra["path"],
        "xen_evtchn_do_upcall > irq_exit > __do_softirq"
    );
    assert_eq!(
        (extra["us"].as_f64(), extra["calls"].as_u64()),
        (Some(18.77), Some(28))
    );
}

const ANNOTATED: &str = "tests/fixtures/function_graph/annotated.txt";
const ANNOTATED_CLEAN: &str = "tests/fixtures/function_graph/annotated_clean.txt";
const TICK: &str = "__sysvec_apic_timer_interrupt";

/// One call record: line, kind, name, depth, duration.
type Record = (u64, CallKind, Option<String>, u32, Option<u64>);

/// Every call record, and how many were marked.
#[derive(Default)]
struct Calls {
    calls: Vec<Record>,
    marked: u64,
}

impl GraphSink for Calls {
    fn call(&mut self, c: &Call<'_>, line: u64) {
        let name = c.name.map(str::to_string);
        self.calls
            .push((line, c.kind, name, c.depth, c.duration_ns));
        self.marked += u64::from(c.marked);
    }
}

fn calls(path: &str) -> (GraphInfo, Calls) {
    let mut sink = Calls::default();
    let info = function_graph::read(Input::open(path).unwrap(), &mut sink).unwrap();
    (info, sink)
}

/// Lines of the annotated excerpt that differ from its clean twin: the ones drawn on.
fn drawn_lines() -> Vec<usize> {
    let (a, c) = (
        std::fs::read_to_string(repo(ANNOTATED)).unwrap(),
        std::fs::read_to_string(repo(ANNOTATED_CLEAN)).unwrap(),
    );
    assert_eq!(a.lines().count(), c.lines().count());
    a.lines()
        .zip(c.lines())
        .enumerate()
        .filter(|(_, (a, c))| a != c)
        .map(|(i, _)| i + 1)
        .collect()
}

#[test]
fn annotated_excerpt_reads_as_its_clean_twin() {
    let (info, marked) = calls(&repo(ANNOTATED));
    let (clean_info, clean) = calls(&repo(ANNOTATED_CLEAN));
    assert_eq!(marked.calls, clean.calls);
    // Three interrupts of 42, 68 and 42 call lines (lines 6-47, 51-119 less the event comment
    // on line 76, 123-164): entries, leaves and exits.
    assert_eq!(marked.calls.len(), 152);
    assert_eq!(info.trace.events, 152);
    // 25 lines drawn on: 23 calls, the event comment in the bar and the note under the
    // interrupt; none left not understood.
    let drawn = drawn_lines();
    assert_eq!(drawn.len(), 25);
    assert_eq!(info.markup_lines, drawn.len() as u64);
    assert_eq!(info.first_markup_line, Some(drawn[0] as u64));
    assert_eq!(info.first_markup_line, Some(58));
    assert_eq!(marked.marked, 23);
    assert_eq!((info.trace.unparsed(), clean_info.trace.unparsed()), (0, 0));
    assert_eq!((clean_info.markup_lines, clean.marked), (0, 0));
    // The arrowed exit closes hrtimer_wakeup at its depth, 3.
    let exit = marked.calls.iter().find(|c| c.0 == 81).unwrap();
    assert_eq!((exit.1, exit.3, exit.4), (CallKind::Exit, 3, Some(9_827)));
}

/// The document with what names the input or its markup set aside.
fn without_source(mut doc: Value) -> Value {
    doc["trace"]["source"] = Value::Null;
    doc["compare"]["base_source"] = Value::Null;
    for key in ["markup_lines", "first_markup_line"] {
        doc.as_object_mut().unwrap().remove(key);
    }
    let w = doc["warnings"].as_array_mut().unwrap();
    w.retain(|w| !w.as_str().unwrap().contains("hand-drawn markup"));
    doc
}

const MARKUP_WARNING: &str = "25 lines carry hand-drawn markup (arrows, bars, notes), which was stripped: their calls are read at the column where the call text starts; first at line 58";

#[test]
fn annotated_excerpt_compares_as_its_clean_twin() {
    let (a, c) = (repo(ANNOTATED), repo(ANNOTATED_CLEAN));
    let want = analyze_pair(&c, &c, &opts(None)).unwrap().json;
    for (slow, base) in [(&a, &c), (&c, &a), (&a, &a)] {
        let got = analyze_pair(slow, base, &opts(None)).unwrap().json;
        assert_eq!(
            without_source(got),
            without_source(want.clone()),
            "{slow} {base}"
        );
    }
    let doc = analyze_pair(&a, &c, &opts(None)).unwrap().json;
    assert_eq!(doc["warnings"], serde_json::json!([MARKUP_WARNING]));
    assert_eq!(
        (
            doc["markup_lines"].as_u64(),
            doc["first_markup_line"].as_u64()
        ),
        (Some(25), Some(58))
    );
    assert_eq!(want["warnings"], serde_json::json!([]));
    assert_eq!(want["markup_lines"], 0);
    let want = json(&c, Some(TICK));
    assert_eq!(without_source(json(&a, Some(TICK))), without_source(want));
}

/// The answer the README derives from gen.py's self times.
#[test]
fn annotated_excerpt_names_the_marked_wakeup() {
    let doc = json(&repo(ANNOTATED), Some(TICK));
    // 6.235 + 16.452 + 6.330 us; self 0.270 + 0.310 + 0.365 us.
    let f = function(&doc, TICK);
    assert_eq!(
        (
            f["calls"].as_u64(),
            f["total_us"].as_f64(),
            f["self_total_us"].as_f64()
        ),
        (Some(3), Some(29.017), Some(0.945))
    );
    assert_eq!(
        (f["max_us"].as_f64(), f["max_at_line"].as_u64()),
        (Some(16.452), Some(119))
    );
    let c = &doc["compare"];
    assert_eq!(
        (c["slow_us"].as_f64(), c["slow"]["line"].as_u64()),
        (Some(16.452), Some(119))
    );
    assert_eq!(
        (c["base_us"].as_f64(), c["base"]["line"].as_u64()),
        (Some(6.33), Some(164))
    );
    assert_eq!(c["delta_us"], 10.122);
    // The marked subtree, then the second timer's __run_hrtimer bookkeeping.
    let extra: Vec<(String, f64, u64)> = c["extra"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            let f = e["function"].as_str().unwrap().to_string();
            (f, e["us"].as_f64().unwrap(), e["calls"].as_u64().unwrap())
        })
        .collect();
    let want = [
        ("hrtimer_wakeup", 9.827, 16),
        ("__remove_hrtimer", 0.18, 1),
        ("_raw_spin_unlock_irqrestore", 0.085, 1),
        ("_raw_spin_lock_irq", 0.085, 1),
    ]
    .map(|(f, us, n)| (f.to_string(), us, n));
    assert_eq!(extra, want);
    assert_eq!(
        c["extra"][0]["path"],
        "__sysvec_apic_timer_interrupt > hrtimer_interrupt > __hrtimer_run_queues > hrtimer_wakeup"
    );
    assert_eq!(
        (c["slower"].clone(), c["missing"].clone()),
        (Value::Array(vec![]), Value::Array(vec![]))
    );
    // The spin the note points at: 0.095 us of its own around 7.317 us in the slow path.
    let f = function(&doc, "queued_spin_lock_slowpath");
    assert_eq!(
        (f["calls"].as_u64(), f["max_us"].as_f64()),
        (Some(1), Some(7.317))
    );
    assert_eq!(function(&doc, "_raw_spin_lock")["max_us"], 7.412);
}

fn write(dir: &tempfile::TempDir, name: &str, bytes: &[u8]) -> String {
    let p = dir.path().join(name);
    std::fs::write(&p, bytes).unwrap();
    p.to_string_lossy().into_owned()
}

#[test]
fn bad_input() {
    let dir = tempfile::tempdir().unwrap();
    let good = " 0)               |  f() {\n 0)   0.500 us    |    g();\n 0)   1.000 us    |  }\n";

    // A line cut at the end of the file: the complete calls count, the cut one is reported.
    let cut = format!("{good} 0)   0.6");
    let doc = json(&write(&dir, "cut.txt", cut.as_bytes()), None);
    assert_eq!(function(&doc, "f")["self_total_us"], 0.5);
    assert!(doc["warnings"]
        .to_string()
        .contains("1 lines were not understood"));

    let err = analyze(&write(&dir, "empty.txt", b""), &opts(None)).unwrap_err();
    assert!(matches!(err, Error::Empty { .. }), "{err}");

    let err = analyze(
        &write(&dir, "garbage.bin", b"\x7fELF\x02\x01\x01\0\0\0"),
        &opts(None),
    )
    .unwrap_err();
    assert!(matches!(err, Error::NotATrace { .. }), "{err}");

    // Event text is another command's business.
    let events = "# tracer: nop\n  bash-1 [000] .... 1.000000: sched_wakeup: comm=a pid=2 prio=120 target_cpu=000\n";
    let err = analyze(&write(&dir, "events.txt", events.as_bytes()), &opts(None)).unwrap_err();
    let msg = err.to_string();
    assert!(
        matches!(err, Error::WrongCommand { .. }) && msg.contains("ftrace text"),
        "{msg}"
    );

    let err = analyze(&repo("tests/fixtures/tracedat/trace.dat"), &opts(None)).unwrap_err();
    assert!(matches!(err, Error::WrongCommand { .. }), "{err}");
    assert!(
        err.to_string().contains("this is trace-cmd trace.dat"),
        "{err}"
    );

    // Typical invocations need a second pass: stdin cannot give one.
    let err = analyze("-", &opts(Some("f"))).unwrap_err();
    assert!(
        err.to_string().contains("give a file, not standard input"),
        "{err}"
    );
}
