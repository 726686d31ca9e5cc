//! The referee: every finding `explain` reports is checked against the raw events by an
//! independent walk that shares no code with the engine (it uses only the readers and the
//! event model; the engine is run only to obtain the JSON under test).
//!
//! Rules (a violation names the trace, the finding and the stretch; timestamps compared to
//! ±2 ns after the float seconds are rounded back to ns):
//! 1. **tiling** — the timeline is non-empty when the latency is; it starts at `expected_ts`
//!    (`wakeup_ts` without one), each stretch ends where the next starts, the last ends at
//!    `run_ts`; `before_wakeup` stretches lie in [expected, wakeup], `after_wakeup` ones in
//!    [wakeup, run]; the durations add up to `latency_us`, and per (kind, culprit) to the
//!    `components`; `run_at` is one of switch / inferred / resumed / mark and `due` is given.
//!    **culprit** — a task kind names its culprit by `culprit_pid`, and the culprit string
//!    (`comm-pid`) names the same pid.
//! 2. **wakeup** — `wakeup_ts` starts a wake-up of the task in the referee's pairing (defined
//!    in `evidence/walk.rs`) and `run_ts` is its end, on the finding's `cpu`: the traced switch
//!    for `run_at: switch`, the untraced switch-in (the task's first event on a CPU that ran
//!    another task) for `inferred`; for `resumed` (in place) anything from the first interrupt
//!    exit after the waking (without a traced exit: the last interrupt-context event) to the
//!    task's first task-context event there; for `mark` a marker of the task at `run_ts`,
//!    after the switch.
//! 3. **due** — `timer`: the task armed an `hrtimer_wakeup` hrtimer (its own `hrtimer_start`,
//!    the last before the wake-up) and an `hrtimer_expire_entry` of that pointer was open on the
//!    waking CPU at the waking; `expected_ts <= wakeup_ts`. `tracemark`: the task's
//!    `hit latency threshold (X > Y)` mark after `run_ts` (before its next wake-up) with
//!    |latency − X| <= 1 us, or `expected_ts == wakeup_ts` when X is below the visible wait.
//!    `period`: the rhythm rule (`evidence/rules.rs`, `period_due`, aligned with the upper
//!    median the engine's `period.rs` states) holds on the task's last ten wake-up starts and
//!    gives `expected_ts` (±2 ns). `wakeup`: no `expected_ts`.
//! 4. Each stretch against the events of its CPU (an event exactly at a boundary is outside):
//!    **black_hole** — no event inside; the CPU's first event at or after the end is an
//!    interrupt arriving (irq_handler_entry, an irq_vectors `*_entry`, hrtimer_expire_entry,
//!    the entry code's `irq_disable` at irqentry_enter, or any event flagged hard-IRQ) or the
//!    end is the wake-up (rule E2 of issue 23); not on an idle CPU unless the due time is
//!    `timer` or `tracemark`. **victim_runs** — no task-context event of the victim (any event of it when
//!    flags are unknown) and no switch from or to it strictly inside (window start, run)
//!    (up to the switch for `mark`). **task** — for `higher_priority`, `fair_share`,
//!    `preempt_off`, `irqs_off`: the culprit is the CPU's task at the start, every event
//!    inside is its own and it stays the CPU's task. **priority** — with the culprit's last
//!    printed prio (sched_switch, wake-up events) before the stretch and its prio at its
//!    switch-out at or after the end when that is at or before the victim's run (rule E3 of
//!    issue 23: both, where both are known), and every prio `sched_pi_setprio` gives it
//!    inside the stretch (after one, its switch-out no longer speaks for the stretch),
//!    against the victim's switch-in prio (or its wake-up's):
//!    `higher_priority` outranks, `fair_share` same rank, `preempt_off` outranked (ranks:
//!    deadline > RT by number > normal, all normal tasks one rank). **irq** —
//!    `hardirq`/`softirq`: an interrupt frame of that type matching the culprit (irq number,
//!    vector, callback function, softirq vector) open over the whole stretch; a matching
//!    frame entered at the same time another closes carries it on (back-to-back softirqs,
//!    two callbacks of one interrupt). Frames come from irq_handler, irq_vectors,
//!    hrtimer_expire (typed by the event's context: `h` hard, `s` soft) and softirq
//!    entry/exit pairs; an exit never traced closes at the next task-context event.
//!    **irqs_off** — an open `irq_disable` on the CPU at the start (whoever opened it:
//!    `__schedule` opens it in the task switched out), or the last task-context event (or the
//!    last event outside hard-IRQ context: softirqs run in threads on PREEMPT_RT) up to the
//!    end, after the culprit's switch-in, is the culprit's with `d`; events emitted with
//!    interrupts off by construction (`rules.rs`) are no evidence (rule E4 of issue 23).
//!    **lost** — no events lost on the CPU inside a classified stretch. **kernel_path** — at
//!    most 1 ms (rule E1 of issue 23), except timer slack: before the wake-up of a `timer`
//!    finding, ending no later than the due time plus the task's timer's `expires -
//!    softexpires`. `unknown`: tiling only.
//!
//! Corpus: every trace of the repository's fixtures (recorded, lab, tracedat, perfetto but the
//! self-contradicting one, explain/synthetic) and of `../shared/fixtures/realworld` that reads as ftrace text,
//! trace.dat or Perfetto (function_graph, latency-tracer output and what fails to read are
//! skipped and counted). Options: the default targets and `all`, both with every wake-up at or
//! above 0 us reported. The `all` findings of traces over 20 MB of events are not checked.
//! Wake-chain findings (`source: chain`) are left to the claims referee
//! (`crates/rtsleuth/tests/referee`), which checks each link's wait as its own task's.

#[path = "evidence/model.rs"]
mod model;
#[path = "evidence/rules.rs"]
mod rules;
#[path = "../../rtsleuth-trace/tests/shared_fixtures/mod.rs"]
mod shared_fixtures;
#[path = "evidence/walk.rs"]
mod walk;

use model::{check_tiling, parse_findings, without_chains, Finding, Violation};
use rtsleuth_analyze::explain::{Explain, ExplainOptions};
use rtsleuth_trace::input::{Format, Input};
use rtsleuth_trace::read::{self, TraceInfo};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;
use walk::Referee;

/// Over this many bytes of events the `all` findings are not checked (test time in debug).
const ALL_LIMIT_BYTES: u64 = 20 << 20;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures")
}

fn files_under(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = dir.canonicalize().and_then(std::fs::read_dir) else {
        return;
    };
    let mut entries: Vec<PathBuf> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            files_under(&p, out);
        } else {
            out.push(p);
        }
    }
}

fn name(p: &Path) -> String {
    p.file_name().unwrap().to_string_lossy().into_owned()
}

/// The traces to check, and whether the shared folder was there.
fn corpus() -> (Vec<PathBuf>, bool) {
    let fx = fixtures();
    let mut all = Vec::new();
    let mut files = Vec::new();
    files_under(&fx.join("recorded"), &mut files);
    all.extend(files.drain(..).filter(|p| {
        let n = name(p);
        !n.ends_with(".json")
            && (n.contains(".dat")
                || (n.starts_with("trace") || n.starts_with("report")) && n.contains(".txt"))
    }));
    files_under(&fx.join("lab"), &mut files);
    // The timerlat tracer's recordings time wake-ups by its samples, which this walk predates:
    // the referee (crates/rtsleuth/tests/referee.rs) checks them.
    all.extend(files.drain(..).filter(|p| {
        let n = name(p);
        let timerlat = p.parent().is_some_and(|d| d.ends_with("timerlat_dat"));
        (n == "trace.txt.zst" || n.starts_with("trace.dat")) && !timerlat
    }));
    files_under(&fx.join("tracedat"), &mut files);
    all.extend(files.drain(..).filter(|p| {
        let n = name(p);
        n.ends_with(".dat") || n.contains("report") && n.contains(".txt")
    }));
    files_under(&fx.join("perfetto"), &mut files);
    // A trace that contradicts itself is the referee's (crates/rtsleuth/tests/referee.rs): this
    // walk predates the unmarked-loss rules and does not model them.
    all.extend(files.drain(..).filter(|p| {
        !name(p).starts_with("recorder_drops_own_switches")
            && Input::open(p.to_str().unwrap()).is_ok_and(|i| i.format == Format::Perfetto)
    }));
    files_under(&fx.join("explain/synthetic"), &mut files);
    all.extend(files.drain(..).filter(|p| name(p).ends_with(".txt")));
    let shared = shared_fixtures::realworld("");
    if let Some(root) = &shared {
        files_under(root, &mut files);
        all.extend(files.drain(..).filter(|p| !name(p).ends_with(".md")));
    }
    (all, shared.is_some())
}

fn options(all: bool) -> ExplainOptions {
    ExplainOptions {
        all,
        top: usize::MAX,
        threshold_us: Some(0.0),
        ..Default::default()
    }
}

/// The output of a latency tracer (irqsoff, wakeup_rt, ...): one section, not an event trace.
/// The nop tracer printed in the latency format is an event trace and is checked.
fn is_latency_tracer(info: &TraceInfo) -> bool {
    match info.header.tracer.as_deref() {
        Some(t) => matches!(
            t,
            "irqsoff"
                | "preemptoff"
                | "preemptirqsoff"
                | "wakeup"
                | "wakeup_rt"
                | "wakeup_dl"
                | "function_graph"
                | "hwlat"
                | "timerlat"
                | "osnoise"
        ),
        None => info.header.latency_line.is_some(),
    }
}

/// What checking one trace found.
struct Checked {
    findings: Vec<Finding>,
    violations: Vec<Violation>,
    events: u64,
    note: String,
}

/// Runs the referee over `input` for the findings of the given documents.
fn referee(input: Input, docs: &[(&str, &Value)]) -> Result<Checked, String> {
    let mut errors = Vec::new();
    let findings: Vec<Finding> = docs
        .iter()
        .flat_map(|(set, doc)| parse_findings(set, doc, &mut errors))
        .collect();
    referee_findings(input, findings, errors)
}

fn referee_findings(
    input: Input,
    findings: Vec<Finding>,
    errors: Vec<String>,
) -> Result<Checked, String> {
    let mut violations: Vec<Violation> = errors
        .into_iter()
        .map(|why| Violation {
            rule: "json",
            finding: usize::MAX,
            stretch: None,
            why,
        })
        .collect();
    for (i, f) in findings.iter().enumerate() {
        check_tiling(i, f, &mut violations);
    }
    let mut r = Referee::new(&findings);
    read::read(input, &mut r).map_err(|e| e.to_string())?;
    let events = r.events;
    violations.extend(r.finish());
    Ok(Checked {
        events,
        findings,
        violations,
        note: String::new(),
    })
}

fn open(p: &Path) -> Result<Input, String> {
    Input::open(p.to_str().unwrap()).map_err(|e| e.to_string())
}

/// Explains `path` with both option sets and checks the findings. `Err` is a skip.
fn check_trace(path: &Path) -> Result<Checked, String> {
    let input = open(path)?;
    if input.format == Format::FunctionGraph {
        return Err("function_graph".into());
    }
    let mut pair = (Explain::new(options(false)), Explain::new(options(true)));
    let info = read::read(input, &mut pair).map_err(|e| format!("read: {e}"))?;
    if is_latency_tracer(&info) {
        return Err(format!(
            "latency tracer output ({})",
            info.header.tracer.as_deref().unwrap_or("?")
        ));
    }
    let big = info.bytes > ALL_LIMIT_BYTES;
    let mut errors = Vec::new();
    let mut findings = Vec::new();
    // One document at a time: they are large.
    for (set, explain) in [("default", &mut pair.0), ("all", &mut pair.1)] {
        if set == "all" && big {
            continue;
        }
        let doc = without_chains(explain.document(&info).json);
        // EVIDENCE_JSON=dir keeps the documents under test there.
        if let Ok(dir) = std::env::var("EVIDENCE_JSON") {
            let stem = path.to_string_lossy().replace('/', "_");
            let file = Path::new(&dir).join(format!("{stem}.{set}.json"));
            std::fs::write(file, serde_json::to_string_pretty(&doc).unwrap()).unwrap();
        }
        findings.extend(parse_findings(set, &doc, &mut errors));
    }
    drop(pair);
    let mut checked = referee_findings(open(path)?, findings, errors)?;
    if big {
        checked.note = format!(
            " ({} MB of events: the `all` pass is not checked)",
            info.bytes >> 20
        );
    }
    Ok(checked)
}

fn describe(trace: &str, c: &Checked, v: &Violation) -> String {
    let Some(f) = c.findings.get(v.finding) else {
        return format!("{trace}: [{}] {}", v.rule, v.why);
    };
    let stretch = v
        .stretch
        .map(|i| format!("\n      stretch #{i}: {}", f.stretches[i]))
        .unwrap_or_default();
    format!("{trace}: [{}] {f}{stretch}\n      why: {}", v.rule, v.why)
}

/// What one checked trace contributes to the report (the findings themselves are dropped as
/// soon as they are judged).
#[derive(Default)]
struct Summary {
    events: u64,
    default: usize,
    all: usize,
    rules: BTreeMap<&'static str, usize>,
    violations: Vec<String>,
    /// Stretches per kind, findings per source and per run_at.
    kinds: BTreeMap<String, usize>,
    sources: BTreeMap<String, usize>,
    note: String,
}

fn summarize(short: &str, c: Checked) -> Summary {
    let mut s = Summary {
        events: c.events,
        note: c.note.clone(),
        ..Default::default()
    };
    for f in &c.findings {
        if f.set == "default" {
            s.default += 1;
        } else {
            s.all += 1;
        }
        *s.sources.entry(f.source.clone()).or_default() += 1;
        *s.sources
            .entry(format!("run_at {}", f.run_at.as_deref().unwrap_or("-")))
            .or_default() += 1;
        for st in &f.stretches {
            *s.kinds.entry(st.kind.clone()).or_default() += 1;
        }
    }
    for v in &c.violations {
        *s.rules.entry(v.rule).or_default() += 1;
        s.violations.push(describe(short, &c, v));
    }
    s
}

#[test]
fn every_finding_holds_up_against_the_events() {
    let t0 = Instant::now();
    let (mut traces, shared) = corpus();
    // EVIDENCE_ONLY=substring narrows the corpus (for working on one trace).
    if let Ok(only) = std::env::var("EVIDENCE_ONLY") {
        traces.retain(|p| p.to_string_lossy().contains(&only));
    }
    let root = fixtures().join("../..").canonicalize().unwrap();
    let shared_root = root.join("../shared/fixtures/realworld");
    let short = |path: &Path| {
        path.strip_prefix(&shared_root)
            .or_else(|_| path.strip_prefix(&root))
            .unwrap_or(path)
            .display()
            .to_string()
    };
    // A few workers (the readers are partly parallel themselves), biggest traces first.
    let mut order: Vec<usize> = (0..traces.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(std::fs::metadata(&traces[i]).map_or(0, |m| m.len())));
    let next = std::sync::atomic::AtomicUsize::new(0);
    type Outcome = Option<(Result<Summary, String>, f64)>;
    let results: std::sync::Mutex<Vec<Outcome>> =
        std::sync::Mutex::new((0..traces.len()).map(|_| None).collect());
    let workers = std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .clamp(1, 4);
    std::thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| loop {
                let k = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(&i) = order.get(k) else {
                    return;
                };
                let started = Instant::now();
                let r = check_trace(&traces[i]).map(|c| summarize(&short(&traces[i]), c));
                results.lock().unwrap()[i] = Some((r, started.elapsed().as_secs_f64()));
            });
        }
    });
    let mut skipped = Vec::new();
    let mut report: Vec<String> = Vec::new();
    let mut by_rule: BTreeMap<&str, usize> = BTreeMap::new();
    let (mut checked, mut findings) = (0, 0);
    let mut kinds: BTreeMap<String, usize> = BTreeMap::new();
    let mut sources: BTreeMap<String, usize> = BTreeMap::new();
    for (path, result) in traces.iter().zip(results.into_inner().unwrap()) {
        let (result, secs) = result.expect("every trace was checked");
        match result {
            Err(why) => skipped.push(format!("{}: {why}", short(path))),
            Ok(s) => {
                println!(
                    "{}: {} events, findings {} default + {} all, {} violations {:?} in {secs:.1}s{}",
                    short(path),
                    s.events,
                    s.default,
                    s.all,
                    s.violations.len(),
                    s.rules,
                    s.note
                );
                checked += 1;
                findings += s.default + s.all;
                for (rule, n) in s.rules {
                    *by_rule.entry(rule).or_default() += n;
                }
                for (k, n) in s.kinds {
                    *kinds.entry(k).or_default() += n;
                }
                for (k, n) in s.sources {
                    *sources.entry(k).or_default() += n;
                }
                report.extend(s.violations);
            }
        }
    }
    if !shared {
        println!("skipped: the shared realworld traces (folder not found)");
    }
    for s in &skipped {
        println!("skipped: {s}");
    }
    println!(
        "{checked} traces checked, {} skipped, {findings} findings, {} violations {by_rule:?} in {:.1}s",
        skipped.len(),
        report.len(),
        t0.elapsed().as_secs_f64()
    );
    println!("checked: findings {sources:?}; stretches {kinds:?}");
    // EVIDENCE_DUMP=file writes every violation there.
    if let Ok(dump) = std::env::var("EVIDENCE_DUMP") {
        std::fs::write(dump, report.join("\n")).unwrap();
    }
    assert!(checked > 0, "no trace was checked");
    if !report.is_empty() {
        panic!(
            "{} violations; the first {}:\n{}",
            report.len(),
            report.len().min(30),
            report[..report.len().min(30)].join("\n")
        );
    }
}

// ------------------------------------------------------------------ the checker's own tests

/// A hand-written trace: cyclictest-100 (prio 19) sleeps on CPU0 with its timer armed; burner
/// (normal, 2000) runs on CPU1; the timer fires on CPU0 at 10.001000 while hog-300 (prio 9)
/// runs there, which keeps CPU0 until 10.001300; cyclictest runs at 10.001300.
const TRACE: &str = "# tracer: nop
#
          cyclictest-100   [000] d..1.    10.000000: hrtimer_start: hrtimer=00000000000000aa function=hrtimer_wakeup expires=10001000000 softexpires=10001000000 mode=ABS
          cyclictest-100   [000] d..2.    10.000010: sched_switch: prev_comm=cyclictest prev_pid=100 prev_prio=19 prev_state=S ==> next_comm=hog next_pid=300 next_prio=9
              <idle>-0     [001] d..2.    10.000015: sched_switch: prev_comm=swapper/1 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=burner next_pid=2000 next_prio=120
              burner-2000  [001] .....    10.000020: tracing_mark_write: burning
                 hog-300   [000] .....    10.000500: tracing_mark_write: hogging
                 hog-300   [000] d.h1.    10.001000: local_timer_entry: vector=236
                 hog-300   [000] d.h1.    10.001001: hrtimer_expire_entry: hrtimer=00000000000000aa function=hrtimer_wakeup now=10001000000
                 hog-300   [000] d.h2.    10.001002: sched_waking: comm=cyclictest pid=100 prio=19 target_cpu=000
                 hog-300   [000] d.h3.    10.001003: sched_wakeup: comm=cyclictest pid=100 prio=19 target_cpu=000
                 hog-300   [000] d.h1.    10.001004: hrtimer_expire_exit: hrtimer=00000000000000aa
                 hog-300   [000] d.h1.    10.001005: local_timer_exit: vector=236
                 hog-300   [000] .....    10.001100: tracing_mark_write: still hogging
              burner-2000  [001] .....    10.001150: tracing_mark_write: burning
                 hog-300   [000] d..2.    10.001300: sched_switch: prev_comm=hog prev_pid=300 prev_prio=9 prev_state=S ==> next_comm=cyclictest next_pid=100 next_prio=19
          cyclictest-100   [000] .....    10.001310: tracing_mark_write: cyclictest runs
              burner-2000  [001] .....    10.002000: tracing_mark_write: burning
";

fn stretch(
    kind: &str,
    phase: &str,
    cpu: u32,
    s: f64,
    e: f64,
    culprit: Option<(&str, i32)>,
) -> Value {
    serde_json::json!({
        "kind": kind, "phase": phase, "cpu": cpu, "start_ts": s, "end_ts": e,
        "culprit": culprit.map(|c| c.0), "culprit_pid": culprit.map(|c| c.1), "detail": ""
    })
}

/// A finding of cyclictest-100 with `timeline`; the components are derived from it.
fn finding(
    source: &str,
    expected: Option<f64>,
    wakeup: f64,
    run: f64,
    timeline: Vec<Value>,
) -> Value {
    let components: Vec<Value> = timeline
        .iter()
        .map(|s| {
            let us = (s["end_ts"].as_f64().unwrap() - s["start_ts"].as_f64().unwrap()) * 1e6;
            serde_json::json!({
                "kind": s["kind"], "phase": s["phase"], "us": us, "start_ts": s["start_ts"],
                "end_ts": s["end_ts"], "cpu": s["cpu"], "culprit": s["culprit"], "detail": ""
            })
        })
        .collect();
    let start = expected.unwrap_or(wakeup);
    serde_json::json!({
        "task": {"comm": "cyclictest", "pid": 100, "prio": 19},
        "cpu": 0, "latency_us": (run - start) * 1e6, "source": source,
        "expected_ts": expected, "wakeup_ts": wakeup, "run_ts": run,
        "root_cause": "higher_priority", "components": components, "timeline": timeline,
        "run_at": "switch", "due": "test"
    })
}

/// The rules each hand-made finding violates, checked against `trace`.
fn rules_broken(trace: &str, f: Value) -> Vec<&'static str> {
    let doc = serde_json::json!({ "findings": [f] });
    let input = Input::from_reader(
        "test",
        Box::new(std::io::Cursor::new(trace.as_bytes().to_vec())),
    )
    .unwrap();
    let c = referee(input, &[("default", &doc)]).unwrap();
    for v in &c.violations {
        println!("{}", describe("test", &c, v));
    }
    let mut rules: Vec<&str> = c.violations.iter().map(|v| v.rule).collect();
    rules.sort_unstable();
    rules.dedup();
    rules
}

/// The honest finding: timer due at 10.001000, its interrupt, then hog (prio 9) keeps CPU0.
fn honest() -> Vec<Value> {
    vec![
        stretch(
            "kernel_path",
            "before_wakeup",
            0,
            10.001000,
            10.001002,
            None,
        ),
        stretch("kernel_path", "after_wakeup", 0, 10.001002, 10.001005, None),
        stretch(
            "higher_priority",
            "after_wakeup",
            0,
            10.001005,
            10.001300,
            Some(("hog-300", 300)),
        ),
    ]
}

#[test]
fn the_checker_passes_an_honest_finding() {
    let f = finding("timer", Some(10.001000), 10.001002, 10.001300, honest());
    assert_eq!(rules_broken(TRACE, f), Vec::<&str>::new());
    let f = finding("wakeup", None, 10.001002, 10.001300, honest()[1..].to_vec());
    assert_eq!(rules_broken(TRACE, f), Vec::<&str>::new());
}

#[test]
fn the_checker_flags_a_black_hole_over_an_event() {
    // hog's mark at 10.000500 lies inside the claimed black hole.
    let mut tl = vec![stretch(
        "black_hole",
        "before_wakeup",
        0,
        10.000400,
        10.001000,
        None,
    )];
    tl.extend(honest());
    let f = finding("timer", Some(10.000400), 10.001002, 10.001300, tl);
    assert!(rules_broken(TRACE, f).contains(&"black_hole"));
}

/// Rule E2 of issue 23: a black hole ends with an interrupt arriving or at the wake-up. hog's
/// mark at 10.000500 is task context with interrupts on: a silence ending there is no black
/// hole; one from there to the timer interrupt at 10.001000 is.
#[test]
fn the_checker_flags_a_black_hole_ending_in_task_context() {
    let mut tl = vec![
        stretch("unknown", "before_wakeup", 0, 10.000400, 10.000500, None),
        stretch("black_hole", "before_wakeup", 0, 10.000500, 10.001000, None),
    ];
    tl.extend(honest());
    let f = finding("timer", Some(10.000400), 10.001002, 10.001300, tl.clone());
    assert_eq!(rules_broken(TRACE, f), Vec::<&str>::new());
    tl[0]["kind"] = "black_hole".into();
    tl[1]["kind"] = "unknown".into();
    let f = finding("timer", Some(10.000400), 10.001002, 10.001300, tl);
    assert_eq!(rules_broken(TRACE, f), ["black_hole"]);
}

/// Rule E1 of issue 23: `kernel_path` lasts at most 1 ms, except timer slack (between the
/// soft and the hard expiry of the task's own timer, `expires=` on its `hrtimer_start`). In
/// TRACE hog holds CPU0 300 us after the wake-up; stretched to 1.3 ms the same wait called
/// kernel_path is over the bound. TRACE's timer has no slack; one with expires 2 ms after
/// softexpires allows a 1.2 ms slack stretch before the wake-up.
#[test]
fn the_checker_flags_a_kernel_path_over_the_bound() {
    let long = TRACE.replace(
        "hog-300   [000] d..2.    10.001300: sched_switch",
        "hog-300   [000] d..2.    10.002300: sched_switch",
    );
    let tl = vec![
        stretch(
            "kernel_path",
            "before_wakeup",
            0,
            10.001000,
            10.001002,
            None,
        ),
        stretch("kernel_path", "after_wakeup", 0, 10.001002, 10.002300, None),
    ];
    let f = finding("timer", Some(10.001000), 10.001002, 10.002300, tl);
    assert_eq!(rules_broken(&long, f), ["kernel_path"]);

    let slack = TRACE.replace(
        "expires=10001000000 softexpires=10001000000",
        "expires=10002000000 softexpires=9999800000",
    );
    let mut tl = vec![stretch(
        "kernel_path",
        "before_wakeup",
        0,
        9.999800,
        10.001000,
        None,
    )];
    tl.extend(honest());
    let f = finding("timer", Some(9.999800), 10.001002, 10.001300, tl.clone());
    // The due time is checked against the timer independently; only the bound matters here.
    assert!(!rules_broken(&slack, f).contains(&"kernel_path"));
    let f = finding("timer", Some(9.999800), 10.001002, 10.001300, tl);
    assert!(rules_broken(TRACE, f).contains(&"kernel_path"));
}

/// Rule E4 of issue 23: a `d` flag is evidence only on an event not emitted with interrupts
/// off by construction. hog's last event before the timer, flagged `d`: a kmem event proves
/// interrupts off, its own hrtimer_start does not.
#[test]
fn the_checker_flags_irqs_off_on_a_flag_set_by_construction() {
    let last = |event: &str| {
        TRACE.replace(
            "hog-300   [000] .....    10.000500: tracing_mark_write: hogging",
            &format!("hog-300   [000] d..1.    10.000500: {event}"),
        )
    };
    let mut tl = vec![stretch(
        "irqs_off",
        "before_wakeup",
        0,
        10.000600,
        10.001000,
        Some(("hog-300", 300)),
    )];
    tl.extend(honest());
    let f = finding("timer", Some(10.000600), 10.001002, 10.001300, tl);
    let kmem = last("mm_page_alloc: page=0000000012345678 pfn=0x1234 order=0 migratetype=0 gfp_flags=GFP_ATOMIC");
    assert!(!rules_broken(&kmem, f.clone()).contains(&"irqs_off"));
    let hrtimer = last("hrtimer_start: hrtimer=00000000000000bb function=tick_nohz_handler expires=10004000000 softexpires=10004000000 mode=ABS");
    assert!(rules_broken(&hrtimer, f).contains(&"irqs_off"));
}

/// Rule E3 of issue 23: a ranked class holds for the culprit's priority at the start and at
/// its switch-out when that is at or before the victim's run. hog switched in at 9 and out at
/// 120 (at the run): 9 outranks cyclictest's 19, 120 does not, so `higher_priority` is a claim
/// about only one of them.
#[test]
fn the_checker_flags_a_class_its_switch_out_priority_contradicts() {
    let changed = TRACE.replace(
        "prev_comm=hog prev_pid=300 prev_prio=9",
        "prev_comm=hog prev_pid=300 prev_prio=120",
    );
    let f = finding("timer", Some(10.001000), 10.001002, 10.001300, honest());
    assert_eq!(rules_broken(TRACE, f.clone()), Vec::<&str>::new());
    assert_eq!(rules_broken(&changed, f), ["priority"]);
}

/// Rule E3: a priority set by `sched_pi_setprio` holds from then on. hog (9) is deboosted to
/// 120 at 10.001100 by a task on CPU1 and then switched out at 120: its wait after that is not
/// `higher_priority`; before it, 9 was its own and the switch-out no longer speaks for it.
#[test]
fn the_checker_follows_priority_inheritance() {
    let deboosted = TRACE
        .replace(
            "              burner-2000  [001] .....    10.001150: tracing_mark_write: burning",
            "              burner-2000  [001] d..3.    10.001100: sched_pi_setprio: comm=hog pid=300 oldprio=9 newprio=120",
        )
        .replace(
            "prev_comm=hog prev_pid=300 prev_prio=9",
            "prev_comm=hog prev_pid=300 prev_prio=120",
        );
    let mut tl = honest();
    tl[2]["end_ts"] = 10.001100.into();
    tl.push(stretch(
        "preempt_off",
        "after_wakeup",
        0,
        10.001100,
        10.001300,
        Some(("hog-300", 300)),
    ));
    let f = finding("timer", Some(10.001000), 10.001002, 10.001300, tl);
    assert_eq!(rules_broken(&deboosted, f), Vec::<&str>::new());
    let f = finding("timer", Some(10.001000), 10.001002, 10.001300, honest());
    assert_eq!(rules_broken(&deboosted, f), ["priority"]);
}

#[test]
fn the_checker_flags_a_lower_ranked_higher_priority_culprit() {
    // burner (normal) cannot outrank cyclictest (prio 19); it also did not run on CPU0.
    let mut tl = honest();
    tl[2] = stretch(
        "higher_priority",
        "after_wakeup",
        1,
        10.001005,
        10.001300,
        Some(("burner-2000", 2000)),
    );
    let f = finding("timer", Some(10.001000), 10.001002, 10.001300, tl);
    assert!(rules_broken(TRACE, f).contains(&"priority"));
}

#[test]
fn the_checker_flags_the_victim_running_in_its_window() {
    // A due time before cyclictest went to sleep: it was still running at 10.000000.
    let mut tl = vec![stretch(
        "unknown",
        "before_wakeup",
        0,
        9.999990,
        10.001000,
        None,
    )];
    tl.extend(honest());
    let f = finding("timer", Some(9.999990), 10.001002, 10.001300, tl);
    assert!(rules_broken(TRACE, f).contains(&"victim_runs"));
}

#[test]
fn the_checker_flags_a_gap_in_the_tiling() {
    let mut tl = honest();
    tl.remove(1);
    let f = finding("timer", Some(10.001000), 10.001002, 10.001300, tl);
    assert!(rules_broken(TRACE, f).contains(&"tiling"));
}

#[test]
fn the_checker_flags_a_false_wakeup_and_a_false_timer() {
    let mut f = finding("timer", Some(10.001000), 10.001002, 10.001310, honest());
    f["timeline"][2]["end_ts"] = serde_json::json!(10.001310);
    f["components"][2]["end_ts"] = serde_json::json!(10.001310);
    f["components"][2]["us"] = serde_json::json!(305.0);
    assert!(rules_broken(TRACE, f).contains(&"wakeup"));
    // Another task's timer: the pointer the task armed is not the one that fired.
    let other = TRACE.replacen(
        "hrtimer=00000000000000aa function=hrtimer_wakeup expires",
        "hrtimer=00000000000000bb function=hrtimer_wakeup expires",
        1,
    );
    let f = finding("timer", Some(10.001000), 10.001002, 10.001300, honest());
    assert!(rules_broken(&other, f).contains(&"due"));
}

/// A task waking every 1 ms for ten cycles, with one interval 20% off.
fn periodic_trace(irregular: bool) -> String {
    let mut t = String::from("# tracer: nop\n#\n");
    for n in 0..10u64 {
        let mut w = 20_000_000 + n * 1_000_000 + 5_000;
        if irregular && n == 5 {
            w += 200_000;
        }
        if n == 9 {
            w += 300_000;
        }
        let secs = |ns: u64| format!("{}.{:06}", ns / 1_000_000_000, ns % 1_000_000_000 / 1000);
        t += &format!("          <idle>-0       [000] d.h2.   {}: sched_waking: comm=cyclictest pid=100 prio=19 target_cpu=000\n", secs(w));
        t += &format!("          <idle>-0       [000] d..2.   {}: sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=cyclictest next_pid=100 next_prio=19\n", secs(w + 10_000));
        t += &format!("      cyclictest-100     [000] d..2.   {}: sched_switch: prev_comm=cyclictest prev_pid=100 prev_prio=19 prev_state=S ==> next_comm=swapper/0 next_pid=0 next_prio=120\n", secs(w + 20_000));
    }
    t
}

#[test]
fn the_checker_flags_a_period_claim_on_an_irregular_history() {
    // Last wake-up at 29.305 ms, due 29.005 ms by the rhythm of the nine before it.
    let tl = vec![
        stretch("kernel_path", "before_wakeup", 0, 0.029005, 0.029305, None),
        stretch("kernel_path", "after_wakeup", 0, 0.029305, 0.029315, None),
    ];
    let f = finding("period", Some(0.029005), 0.029305, 0.029315, tl);
    assert_eq!(
        rules_broken(&periodic_trace(false), f.clone()),
        Vec::<&str>::new()
    );
    assert!(rules_broken(&periodic_trace(true), f).contains(&"due"));
}

/// cyclictest-100's own timer fires in an interrupt on top of it (it was late going to sleep):
/// woken in place, it resumes at the end of the interrupt. On CPU1 a softirq runs a callback.
const IN_PLACE: &str = "# tracer: nop
#
          cyclictest-100   [000] d..1.    10.000000: hrtimer_start: hrtimer=00000000000000aa function=hrtimer_wakeup expires=10000100000 softexpires=10000100000 mode=ABS
          cyclictest-100   [000] .....    10.000090: tracing_mark_write: computing
          cyclictest-100   [000] d.h1.    10.000150: local_timer_entry: vector=236
          cyclictest-100   [000] d.h1.    10.000151: hrtimer_expire_entry: hrtimer=00000000000000aa function=hrtimer_wakeup now=10000151000
          cyclictest-100   [000] d.h2.    10.000152: sched_waking: comm=cyclictest pid=100 prio=19 target_cpu=000
          cyclictest-100   [000] d.h1.    10.000153: hrtimer_expire_exit: hrtimer=00000000000000aa
          cyclictest-100   [000] d.h1.    10.000160: local_timer_exit: vector=236
          cyclictest-100   [000] .....    10.000161: tracing_mark_write: resumed
              burner-2000  [001] ..s1.    10.000100: softirq_entry: vec=8 [action=HRTIMER]
              burner-2000  [001] ..s1.    10.000101: hrtimer_expire_entry: hrtimer=00000000000000cc function=watchdog_fn now=10000101000
              burner-2000  [001] ..s1.    10.000170: hrtimer_expire_exit: hrtimer=00000000000000cc
              burner-2000  [001] ..s1.    10.000171: softirq_exit: vec=8 [action=HRTIMER]
";

fn in_place_finding(after: Value) -> Value {
    let mut f = finding(
        "timer",
        Some(10.000100),
        10.000152,
        10.000160,
        vec![
            stretch(
                "kernel_path",
                "before_wakeup",
                0,
                10.000100,
                10.000150,
                None,
            ),
            stretch(
                "kernel_path",
                "before_wakeup",
                0,
                10.000150,
                10.000152,
                None,
            ),
            after,
        ],
    );
    f["run_at"] = "resumed".into();
    f
}

#[test]
fn the_checker_passes_an_in_place_wakeup_and_flags_a_soft_callback_called_hardirq() {
    // The victim was still running at 10.000090, before its due time: nothing flagged.
    let local_timer = stretch(
        "hardirq",
        "after_wakeup",
        0,
        10.000152,
        10.000160,
        Some(("vector 236 (local_timer)", 0)),
    );
    let mut f = in_place_finding(local_timer);
    f["timeline"][2]["culprit_pid"] = Value::Null;
    f["components"][2]["culprit"] = "vector 236 (local_timer)".into();
    assert_eq!(rules_broken(IN_PLACE, f), Vec::<&str>::new());
    // CPU1's watchdog_fn ran in softirq context, not hard-IRQ.
    let mut tl = honest_cpu1_callback("hardirq");
    assert!(rules_broken(IN_PLACE, in_place_finding(tl.remove(0))).contains(&"irq"));
    let mut tl = honest_cpu1_callback("softirq");
    assert_eq!(
        rules_broken(IN_PLACE, in_place_finding(tl.remove(0))),
        Vec::<&str>::new()
    );
}

fn honest_cpu1_callback(kind: &str) -> Vec<Value> {
    let mut s = stretch(
        kind,
        "after_wakeup",
        1,
        10.000152,
        10.000160,
        Some(("watchdog_fn", 0)),
    );
    s["culprit_pid"] = Value::Null;
    vec![s]
}

/// The engine's own findings on a recorded trace, each mutated into a claim the events do not
/// support, must be caught stretch by stretch.
#[test]
fn the_checker_catches_mutated_engine_findings() {
    let path = fixtures().join("recorded/fifo_equal/trace.txt.zst");
    let mut explain = Explain::new(options(true));
    let info = read::read(open(&path).unwrap(), &mut explain).unwrap();
    let doc = without_chains(explain.document(&info).json);
    let flagged = |doc: &Value, rule: &str| -> Vec<(usize, Option<usize>)> {
        let c = referee(open(&path).unwrap(), &[("default", doc)]).unwrap();
        c.violations
            .iter()
            .filter(|v| v.rule == rule)
            .map(|v| (v.finding, v.stretch))
            .collect()
    };
    type Mutation = fn(&mut Value, &mut Value) -> bool;
    let culprit = |s: &Value| s["culprit"].as_str().map(str::to_string);
    // (rule expected, per stretch mutation returning whether it applied; whole finding when
    // the stretch index does not matter).
    let mutations: [(&str, bool, Mutation); 5] = [
        ("priority", true, |s, _| {
            if s["kind"] != "fair_share" {
                return false;
            }
            s["kind"] = "higher_priority".into();
            true
        }),
        ("task", true, |s, _| {
            if s["culprit_pid"].is_null()
                || !matches!(
                    s["kind"].as_str(),
                    Some("fair_share" | "higher_priority" | "preempt_off" | "irqs_off")
                )
            {
                return false;
            }
            s["culprit_pid"] = 999_999.into();
            s["culprit"] = "ghost-999999".into();
            true
        }),
        ("irq", true, |s, _| {
            let Some(c) = s["culprit"].as_str() else {
                return false;
            };
            let Some(rest) = c.strip_prefix("softirq ") else {
                return false;
            };
            let (n, name) = rest.split_once(' ').unwrap();
            s["culprit"] = format!("softirq {} {name}", n.parse::<u32>().unwrap() + 1).into();
            true
        }),
        ("due", false, |_, f| {
            if f["source"] != "period" {
                return false;
            }
            // Due 10 us earlier than the rhythm says, the timeline following.
            let e = f["expected_ts"].as_f64().unwrap() - 10e-6;
            f["expected_ts"] = e.into();
            f["timeline"][0]["start_ts"] = e.into();
            f["latency_us"] = (f["latency_us"].as_f64().unwrap() + 10.0).into();
            true
        }),
        ("wakeup", false, |_, f| {
            let w = f["wakeup_ts"].as_f64().unwrap();
            f["wakeup_ts"] = (w + 1e-6).into();
            true
        }),
    ];
    let baseline: Vec<Vec<(usize, Option<usize>)>> = mutations
        .iter()
        .map(|(rule, _, _)| flagged(&doc, rule))
        .collect();
    for ((rule, per_stretch, mutate), before) in mutations.iter().zip(baseline) {
        let mut mutated = doc.clone();
        let mut expect = Vec::new();
        for (fi, f) in mutated["findings"]
            .as_array_mut()
            .unwrap()
            .iter_mut()
            .enumerate()
        {
            let mut whole = f.clone();
            if !per_stretch {
                if mutate(&mut Value::Null, &mut whole) {
                    expect.push((fi, None));
                }
                *f = whole;
                continue;
            }
            let n = f["timeline"].as_array().unwrap().len();
            for si in 0..n {
                let was = culprit(&f["timeline"][si]);
                let kind = f["timeline"][si]["kind"].clone();
                let mut s = f["timeline"][si].clone();
                if !mutate(&mut s, &mut whole) {
                    continue;
                }
                // The components follow, so that only the mutated rule can break.
                for c in f["components"].as_array_mut().unwrap() {
                    if c["kind"] == kind && culprit(c) == was {
                        c["kind"] = s["kind"].clone();
                        c["culprit"] = s["culprit"].clone();
                    }
                }
                for t in f["timeline"].as_array_mut().unwrap() {
                    if t["kind"] == kind && culprit(t) == was {
                        t["kind"] = s["kind"].clone();
                        t["culprit"] = s["culprit"].clone();
                        t["culprit_pid"] = s["culprit_pid"].clone();
                    }
                }
                expect.push((fi, Some(si)));
            }
        }
        expect.retain(|e| !before.contains(e));
        let after = flagged(&mutated, rule);
        let missed: Vec<_> = expect.iter().filter(|e| !after.contains(e)).collect();
        println!("{rule}: {} mutated, {} missed", expect.len(), missed.len());
        assert!(
            !expect.is_empty(),
            "{rule}: nothing to mutate in {}",
            path.display()
        );
        assert!(
            missed.is_empty(),
            "{rule}: mutations not caught: {missed:?}"
        );
    }
}
