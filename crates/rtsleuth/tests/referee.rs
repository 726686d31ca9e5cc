//! The referee: docs/claims.md as a test. It runs the built `rtsleuth explain --json` on every
//! trace of the corpus and checks each finding against the raw events as the peers' own
//! decoders print them (text as printed, `trace-cmd report`, Perfetto's Python classes,
//! `perf script`). It shares no code with rtsleuth: its own line parser, its own wake-up
//! pairing, its own interrupt frames.
//!
//! Rules are listed once, in [`RULES`], each enforced or not yet: a violation of an enforced
//! rule fails the test; the others are counted and printed. `REFEREE_ALL=1` enforces every
//! rule; `REFEREE_REPORT=1` never fails and prints the counts; `REFEREE_ONLY=substring`
//! narrows the corpus; `REFEREE_DUMP=file` writes every violation there.
//!
//! Corpus: tests/fixtures/{lab,recorded,tracedat,explain,perfetto,rtla} and ../shared/fixtures/realworld
//! (which holds the Perfetto traces the perfetto folder's references describe); the
//! function_graph and latency-tracer outputs are not event traces and are left out by name.
//! Each trace is explained three times (default targets, `--all`, and `--all --preemptions`,
//! each `--top 20 --threshold 0`). A trace the peer or the engine cannot read is a skip; each
//! folder has a minimum number of traces checked ([`MINIMUM`]). On a machine without one of the
//! peers ([`PEERS`]) the test prints `skipped: ...` and passes, unless `CI` is set.
//!
//! A soak's lines (`rtsleuth.spike/1`) are checked apart, from the recorded soak's findings
//! file and measure document ([`soak`]).

#[path = "referee/chains.rs"]
mod chains;
mod common;
#[path = "referee/finding.rs"]
mod finding;
#[path = "referee/frames.rs"]
mod frames;
#[path = "referee/mutate.rs"]
mod mutate;
#[path = "referee/peers.rs"]
mod peers;
#[path = "referee/raw.rs"]
mod raw;
#[path = "referee/rules_chain.rs"]
mod rules_chain;
#[path = "referee/rules_stretch.rs"]
mod rules_stretch;
#[path = "referee/rules_timeline.rs"]
mod rules_timeline;
#[path = "referee/rules_timerlat.rs"]
mod rules_timerlat;
#[path = "referee/rules_wakeup.rs"]
mod rules_wakeup;
#[path = "referee/sched.rs"]
mod sched;
#[path = "referee/segments.rs"]
mod segments;
#[path = "referee/soak.rs"]
mod soak;
#[path = "referee/text.rs"]
mod text;
#[path = "referee/works.rs"]
mod works;

use finding::Finding;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// Every rule, and whether a violation fails the test. A rule the engine still breaks is
/// listed as not enforced, with why, and its violations are counted.
pub const RULES: &[(&str, bool)] = &[
    ("tiling", true),
    ("components", true),
    ("root_cause", true),
    ("due_evidence", true),
    ("victim_never_runs", true),
    ("lost_events", true),
    ("stretch_cpu", true),
    ("task_holds_cpu", true),
    ("wakeup_pairing", true),
    ("E4_irqs_off_not_preempt_off", true),
    ("json", true),
    ("irq_frame_open", true),
    ("completeness", true),
    // Issue 27: enforced ahead of the engine's chains; pipe_chain and the PREEMPT_RT lab
    // traces fail it until they land.
    ("chain_required", true),
    ("chain_start", true),
    ("chain_links", true),
    ("queued_path", true),
    ("V1_common_window", true),
    ("V2_impossible_state", true),
    ("E1_kernel_path_bound", true),
    ("E2_black_hole", true),
    ("E3_rank", true),
    ("E3_unknown_task", true),
    ("E4_irqs_off_evidence", true),
    ("thread_noise_holds", true),
    ("E3_chosen_over_victim", true),
];

/// Options of each run: the default targets, every task, and every task's preemption waits
/// with its wake-ups; top 20, every wait counted.
const RUNS: &[(&str, &[&str])] = &[
    ("default", &["--top", "20", "--threshold", "0"]),
    ("all", &["--all", "--top", "20", "--threshold", "0"]),
    (
        "preemptions",
        &["--all", "--preemptions", "--top", "20", "--threshold", "0"],
    ),
    (
        "works",
        &["--all", "--works", "--top", "20", "--threshold", "0"],
    ),
];
const TOP: usize = 20;

/// The peers whose decoding the referee checks against, as probes for [`common::peers_ready`]:
/// without `CI` a machine that lacks one skips the referee and says so; with `CI` it fails.
const PEERS: &[&[&str]] = &[
    &["sh", "-c", "command -v trace-cmd"],
    &["perf", "--version"],
    PERFETTO_PYTHON,
];
const PEERS_INSTALL: &str =
    "apt-get install trace-cmd linux-perf; pip install perfetto; .ci/run installs them";
/// Perfetto's Python classes, which `referee/perfetto_lines.py` decodes with.
const PERFETTO_PYTHON: &[&str] = &[
    "python3",
    "-c",
    "import perfetto.protos.perfetto.trace.perfetto_trace_pb2",
];

/// Traces checked at least, per folder (a skip beyond these fails the test).
const MINIMUM: &[(&str, usize)] = &[
    ("tests/fixtures/lab", 46),
    ("tests/fixtures/recorded", 38),
    ("tests/fixtures/tracedat", 9),
    ("tests/fixtures/explain", 13),
    ("tests/fixtures/perfetto", 2),
    ("tests/fixtures/rtla", 5),
    ("realworld", 30),
];

/// What the rules look at: the trace as the peer printed it and what the referee derives.
pub struct Ctx {
    pub trace: raw::Trace,
    pub sched: sched::Sched,
    pub frames: BTreeMap<u32, frames::CpuFrames>,
    pub window: Option<i64>,
}

impl Ctx {
    pub fn new(trace: raw::Trace) -> Ctx {
        Ctx {
            sched: sched::Sched::build(&trace),
            frames: frames::build(&trace),
            window: trace.window_start(),
            trace,
        }
    }
}

#[derive(Clone, Debug)]
pub struct Violation {
    pub rule: &'static str,
    pub stretch: Option<usize>,
    pub why: String,
}

/// The violations of one finding (or of a document).
#[derive(Default)]
pub struct Out(pub Vec<Violation>);

impl Out {
    pub fn put(&mut self, rule: &'static str, stretch: Option<usize>, why: String) {
        self.0.push(Violation { rule, stretch, why });
    }
}

/// Every per-finding rule, in claims.md order.
pub fn check_finding(f: &Finding, cx: &Ctx) -> Vec<Violation> {
    if f.source == "chain" {
        return check_chain(f, cx);
    }
    let mut out = Out::default();
    rules_timeline::tiling(f, &mut out);
    rules_timeline::components_add_up(f, &mut out);
    rules_timeline::root_cause_is_largest(f, &mut out);
    rules_timeline::common_window(f, cx, &mut out);
    if f.run_at.starts_with("timerlat") {
        rules_timerlat::timerlat_pairing(f, cx, &mut out);
    } else {
        rules_wakeup::wakeup_pairing(f, cx, &mut out);
    }
    rules_wakeup::due_evidence(f, cx, &mut out);
    rules_wakeup::queued_path(f, cx, &mut out);
    rules_wakeup::victim_never_runs(f, cx, &mut out);
    rules_wakeup::no_lost_events_inside(f, cx, &mut out);
    rules_wakeup::no_impossible_state(f, cx, &mut out);
    rules_wakeup::chain_required(f, cx, &mut out);
    rules_chain::no_chain_listed(f, &mut out);
    stretch_rules(f, cx, &mut out);
    out.0
}

/// The rules over each stretch, shared by a finding and each link's wait of a chain.
fn stretch_rules(f: &Finding, cx: &Ctx, out: &mut Out) {
    rules_timeline::kernel_path_bound(f, cx, out);
    rules_stretch::stretch_cpu(f, cx, out);
    rules_stretch::black_hole(f, cx, out);
    rules_stretch::task_holds_cpu(f, cx, out);
    rules_stretch::unknown_task_not_ranked(f, cx, out);
    rules_stretch::rank_matches_class(f, cx, out);
    rules_stretch::chosen_over_victim(f, cx, out);
    rules_stretch::irq_frame_open(f, cx, out);
    rules_stretch::irqs_off_evidence(f, cx, out);
    rules_stretch::irqs_off_not_preempt_off(f, cx, out);
    rules_timerlat::thread_noise_holds(f, cx, out);
}

/// A chain finding (docs/claims.md, "Wake chains"): the finding's own rules on the whole,
/// the chain's rules, and the stretch rules on each link's wait as a finding of the link's
/// task, its violations naming the whole timeline's stretches.
fn check_chain(f: &Finding, cx: &Ctx) -> Vec<Violation> {
    let mut out = Out::default();
    rules_timeline::tiling(f, &mut out);
    rules_timeline::components_add_up(f, &mut out);
    rules_timeline::root_cause_is_largest(f, &mut out);
    rules_timeline::common_window(f, cx, &mut out);
    rules_wakeup::wakeup_pairing(f, cx, &mut out);
    rules_wakeup::due_evidence(f, cx, &mut out);
    rules_wakeup::queued_path(f, cx, &mut out);
    rules_wakeup::victim_never_runs(f, cx, &mut out);
    rules_wakeup::no_lost_events_inside(f, cx, &mut out);
    rules_wakeup::no_impossible_state(f, cx, &mut out);
    let cut = segments::cut(f, |l| switched_in(l, cx));
    rules_chain::chain_start(f, &cut, cx, &mut out);
    rules_chain::chain_links(f, &cut, cx, &mut out);
    for seg in &cut.segments {
        let mut own = Out::default();
        if seg.link.is_some() {
            rules_wakeup::wakeup_pairing(&seg.finding, cx, &mut own);
            rules_wakeup::no_lost_events_inside(&seg.finding, cx, &mut own);
        }
        rules_wakeup::queued_path(&seg.finding, cx, &mut own);
        stretch_rules(&seg.finding, cx, &mut own);
        out.0.extend(own.0.into_iter().map(|v| Violation {
            stretch: v.stretch.map(|i| seg.index[i]),
            ..v
        }));
    }
    out.0
}

/// A link's run is its switch-in unless the referee saw it start with its first event (a
/// switch-in that was not traced): the `run_at` its wait is checked with.
fn switched_in(l: &finding::Link, cx: &Ctx) -> bool {
    cx.sched
        .wakeup_at(l.pid, l.woken)
        .map_or(true, |w| w.end_switch)
}

/// Which waits a run explains.
#[derive(Clone, Copy)]
pub struct Waits {
    /// The default targets: only wake-ups where the task's printed prio is real-time.
    pub rt_only: bool,
    /// `--preemptions`: preemption waits too.
    pub preemptions: bool,
    /// `--works`: only wake-ups a work's queueing did (docs/claims.md, "Works").
    pub works: bool,
}

/// completeness: every wake-up of a target (referee's pairing, inside the common window; for
/// the default targets, only the wake-ups where its printed prio is real-time, below 100),
/// and every preemption wait with `--preemptions`, that is later than the least late finding
/// shown (any, when fewer than `--top` were shown) has a finding; and a target's `spikes` at
/// `--threshold 0` count at least the referee's waits of it.
pub fn completeness(doc: &Value, findings: &[Finding], cx: &Ctx, waits: Waits, out: &mut Out) {
    let least = if findings.len() < TOP {
        0
    } else {
        findings
            .iter()
            .map(|f| (f.latency_us * 1e3) as i64)
            .min()
            .unwrap_or(0)
    };
    let window = cx.window.unwrap_or(i64::MIN);
    for t in doc["targets"].as_array().into_iter().flatten() {
        let Some(pid) = t["pid"].as_i64() else {
            continue;
        };
        let preempted = cx.sched.preemptions.get(&pid).filter(|_| waits.preemptions);
        let mine: Vec<&sched::Wakeup> = (cx.sched.wakeups.get(&pid).into_iter().flatten())
            .chain(preempted.into_iter().flatten())
            .filter(|w| w.start >= window)
            .filter(|w| !waits.rt_only || cx.sched.prio_at(pid, w.start).is_some_and(|p| p < 100))
            .filter(|w| !waits.works || works::queueing_of(w, cx).is_ok())
            .collect();
        if !cx.sched.wakeups.contains_key(&pid) {
            rules_timerlat::activations_found(pid, findings, least, cx, out);
        }
        let spikes = t["spikes"].as_u64().unwrap_or(0) as usize;
        if mine.len() > spikes {
            out.put(
                "completeness",
                None,
                format!("pid {pid}: {} wake-ups, spikes {spikes}", mine.len()),
            );
        }
        for w in mine.iter().filter(|w| w.latency() > least + 2) {
            let found = findings.iter().any(|f| {
                f.pid == pid && ((f.wakeup - w.start).abs() <= 2 || (f.run - w.end).abs() <= 2)
            });
            if !found {
                out.put(
                    "completeness",
                    None,
                    format!(
                        "pid {pid} {} {:.6} ran {:.6} ({} us{}) has no finding",
                        match preempted.is_some_and(|v| v.iter().any(|x| std::ptr::eq(x, *w))) {
                            true => "preempted",
                            false => "woken",
                        },
                        w.start as f64 / 1e9,
                        w.end as f64 / 1e9,
                        w.latency() / 1000,
                        if w.raced {
                            ", raced its switch-out"
                        } else {
                            ""
                        }
                    ),
                );
            }
        }
    }
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

fn files_under(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
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

/// Not event traces, or not traces: left out of the corpus by name.
fn excluded(p: &Path) -> bool {
    let n = p.file_name().unwrap().to_string_lossy();
    let s = p.to_string_lossy();
    [
        "README",
        ".md",
        ".json",
        ".py",
        ".sh",
        "function_graph",
        "funcgraph",
        "latency_tracer",
        "rtla.txt",
        "cyclictest",
        "inject",
        "kernel.txt",
        "stops.txt",
        "host_stop",
        "recording.txt",
        "stress.txt",
        "hwlat",
        "kallsyms",
        "lost-stats",
        "latency-report",
        "latency-recording",
        "lost-recording",
        "lost-cyclictest",
        "/tracedat/cyclictest",
        "trace-latency-format",
        "func-graph",
    ]
    .iter()
    .any(|x| n.contains(x) || s.contains(x))
        || s.contains("/audit/")
}

fn corpus() -> Vec<(String, PathBuf)> {
    let r = root();
    let mut out = Vec::new();
    let folders = [
        ("tests/fixtures/lab", r.join("tests/fixtures/lab")),
        ("tests/fixtures/recorded", r.join("tests/fixtures/recorded")),
        ("tests/fixtures/tracedat", r.join("tests/fixtures/tracedat")),
        ("tests/fixtures/explain", r.join("tests/fixtures/explain")),
        ("tests/fixtures/perfetto", r.join("tests/fixtures/perfetto")),
        ("tests/fixtures/rtla", r.join("tests/fixtures/rtla")),
        ("realworld", r.join("../shared/fixtures/realworld")),
    ];
    for (name, dir) in folders {
        let mut files = Vec::new();
        files_under(&dir, &mut files);
        out.extend(
            files
                .into_iter()
                .filter(|p| !excluded(p))
                .map(|p| (name.to_string(), p)),
        );
    }
    out
}

/// `rtsleuth explain --json` with `args`.
pub fn explain(path: &Path, args: &[&str]) -> Result<Value, String> {
    let out = Command::new(env!("CARGO_BIN_EXE_rtsleuth"))
        .arg("explain")
        .arg("--json")
        .args(args)
        .arg(path)
        .output()
        .map_err(|e| e.to_string())?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        return Err(format!(
            "explain failed: {}",
            err.lines().next().unwrap_or("")
        ));
    }
    serde_json::from_slice(&out.stdout).map_err(|e| e.to_string())
}

/// The text tracer a file's header names, when it is not an event trace (`nop`).
fn latency_tracer(trace: &raw::Trace, path: &Path) -> Option<String> {
    let head = peers::bytes(path).ok()?;
    let head = String::from_utf8_lossy(&head[..head.len().min(4096)]).into_owned();
    let tracer = head
        .lines()
        .find_map(|l| l.strip_prefix("# tracer: "))?
        .trim()
        .to_string();
    // The timerlat tracer prints its samples among the enabled events.
    let events_trace = tracer == "nop" || tracer == "timerlat";
    (!events_trace || trace.events.is_empty()).then_some(tracer)
}

/// One trace's outcome: findings checked and violations per rule, or why it was skipped.
struct Checked {
    peer: &'static str,
    findings: usize,
    violations: Vec<(String, Violation)>,
}

/// Every trace's check, in the corpus's order, as many at a time as there are CPUs: the peers
/// and the checks are one thread each, and this is the suite's longest test after the static
/// builds.
fn check_all(corpus: &[(String, PathBuf)]) -> Vec<Result<Checked, String>> {
    let next = AtomicUsize::new(0);
    let done: Vec<Mutex<Option<Result<Checked, String>>>> =
        corpus.iter().map(|_| Mutex::new(None)).collect();
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get());
    std::thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some((_, path)) = corpus.get(i) else {
                    break;
                };
                *done[i].lock().unwrap() = Some(check_trace(path));
            });
        }
    });
    done.into_iter()
        .map(|d| d.into_inner().unwrap().expect("every trace checked"))
        .collect()
}

fn check_trace(path: &Path) -> Result<Checked, String> {
    let (peer, trace) = peers::read(path)?;
    if let Some(t) = latency_tracer(&trace, path) {
        return Err(format!("tracer {t}: not an event trace"));
    }
    if trace.events.is_empty() {
        return Err("the peer printed no events".into());
    }
    let cx = Ctx::new(trace);
    let mut checked = Checked {
        peer: peer.name(),
        findings: 0,
        violations: Vec::new(),
    };
    for (set, args) in RUNS {
        let doc = explain(path, args)?;
        let (findings, bad) = finding::findings(set, &doc);
        for why in bad {
            checked.violations.push((
                set.to_string(),
                Violation {
                    rule: "json",
                    stretch: None,
                    why,
                },
            ));
        }
        for f in &findings {
            for v in check_finding(f, &cx) {
                let s = v
                    .stretch
                    .map(|i| format!("\n      stretch #{i}: {}", f.timeline[i]))
                    .unwrap_or_default();
                checked.violations.push((format!("{f}{s}"), v));
            }
        }
        let mut out = Out::default();
        let waits = Waits {
            rt_only: *set == "default",
            preemptions: args.contains(&"--preemptions"),
            works: args.contains(&"--works"),
        };
        completeness(&doc, &findings, &cx, waits, &mut out);
        for v in out.0 {
            checked.violations.push((format!("[{set}] document"), v));
        }
        checked.findings += findings.len();
    }
    Ok(checked)
}

fn enforced(rule: &str) -> bool {
    std::env::var("REFEREE_ALL").is_ok() || RULES.iter().any(|(r, on)| *r == rule && *on)
}

#[test]
fn every_claim_holds_against_the_peers_decoding() {
    if !common::peers_ready(PEERS, PEERS_INSTALL) {
        return;
    }
    let t0 = std::time::Instant::now();
    let mut corpus = corpus();
    if let Ok(only) = std::env::var("REFEREE_ONLY") {
        corpus.retain(|(_, p)| p.to_string_lossy().contains(&only));
    }
    let r = root();
    let short = |p: &Path| p.strip_prefix(&r).unwrap_or(p).display().to_string();
    let mut per_folder: BTreeMap<String, usize> = BTreeMap::new();
    let mut per_rule: BTreeMap<&str, usize> = BTreeMap::new();
    let mut report = Vec::new();
    let mut skipped = Vec::new();
    let (mut findings, mut traces) = (0, 0);
    for ((folder, path), checked) in corpus.iter().zip(check_all(&corpus)) {
        match checked {
            Err(why) => skipped.push(format!("{}: {why}", short(path))),
            Ok(c) => {
                traces += 1;
                findings += c.findings;
                *per_folder.entry(folder.clone()).or_default() += 1;
                let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
                for (what, v) in &c.violations {
                    *counts.entry(v.rule).or_default() += 1;
                    *per_rule.entry(v.rule).or_default() += 1;
                    report.push((
                        v.rule,
                        format!("{}: [{}] {what}\n      why: {}", short(path), v.rule, v.why),
                    ));
                }
                println!(
                    "{} ({}): {} findings, violations {counts:?}",
                    short(path),
                    c.peer,
                    c.findings
                );
            }
        }
    }
    for s in &skipped {
        println!("skipped: {s}");
    }
    println!(
        "{traces} traces, {} skipped, {findings} findings checked in {:.1}s",
        skipped.len(),
        t0.elapsed().as_secs_f64()
    );
    for (rule, on) in RULES {
        let n = per_rule.get(rule).copied().unwrap_or(0);
        println!(
            "rule {rule:24} {:12} {n} violations",
            if *on { "enforced" } else { "NOT ENFORCED" }
        );
    }
    if let Ok(dump) = std::env::var("REFEREE_DUMP") {
        let all: Vec<&str> = report.iter().map(|(_, s)| s.as_str()).collect();
        std::fs::write(dump, all.join("\n")).unwrap();
    }
    if std::env::var("REFEREE_REPORT").is_ok() {
        return;
    }
    if std::env::var("REFEREE_ONLY").is_err() {
        for (folder, min) in MINIMUM {
            let n = per_folder.get(*folder).copied().unwrap_or(0);
            assert!(
                n >= *min,
                "{folder}: {n} traces checked, at least {min} expected (skips: {skipped:#?})"
            );
        }
    }
    let failing: Vec<&String> = report
        .iter()
        .filter(|(r, _)| enforced(r))
        .map(|(_, s)| s)
        .collect();
    assert!(
        failing.is_empty(),
        "{} violations of enforced rules; the first {}:\n{}",
        failing.len(),
        failing.len().min(30),
        failing
            .iter()
            .take(30)
            .map(|s| s.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    );
}
