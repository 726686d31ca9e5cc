//! rtsleuth against the lab's recordings (tests/fixtures/lab/KERNEL/SCENARIO, made by lab/run:
//! a Debian kernel under qemu, one cause injected on CPU 1 by lab/noise or lab/fifo_burst while
//! cyclictest measured CPU 1). The truth comes from outside rtsleuth: expected.json
//! (lab/host/expected.awk over the noise module's own `noise_begin`/`noise_end` events,
//! fifo_burst's mark, the host's SIGSTOP length and cyclictest's mark), the module's own
//! measure of each section (`noise_end actual_ns=`, read through the trace reader that other
//! tests check line by line) and the length each scenario asked for (inject.txt).
//!
//! Every directory found is checked, so fixtures of new kernels or scenarios need no code here.
//!
//! Tolerances. Under TCG emulation the guest loses 1-5 ms at random (lab/noise/README.md), and
//! the trace's stamps around a section differ from the module's own measure of it by up to
//! ~0.5 ms (rt/irqs_off: noise_begin to noise_end 30 473 us, actual_ns 30 058 us). A section's
//! length is therefore compared within max(1 ms, 5 %): a wrong attribution (the tick, another
//! task, half the section) misses that by far more, the sections being 30 ms.

use regex::Regex;
use rtsleuth_analyze::explain::{Explain, ExplainOptions};
use rtsleuth_analyze::graph::{self, GraphOptions};
use rtsleuth_analyze::irq::{Irq, IrqOptions};
use rtsleuth_trace::event::Event;
use rtsleuth_trace::input::Input;
use rtsleuth_trace::read::{self, latency_tracer, Decode, EventSink, NullSink};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// One recorded scenario and its truth.
struct Fixture {
    dir: PathBuf,
    /// `KERNEL/SCENARIO`, for messages.
    name: String,
    want: Value,
}

impl Fixture {
    fn scenario(&self) -> &str {
        self.want["scenario"].as_str().unwrap()
    }

    fn spike(&self) -> bool {
        self.want["spike"].as_bool().unwrap()
    }

    /// The class the trace can prove: a stop whose silence does not end in an interrupt
    /// arriving (`provable: false`, the stop caught a handler or the wake-up path) is only
    /// `unknown` time there.
    fn class(&self) -> &str {
        match self.want["provable"].as_bool() {
            Some(false) => "unknown",
            _ => self.want["class"].as_str().unwrap_or(""),
        }
    }

    /// The host stopped the machine: no culprit, its length measured from outside.
    fn stopped(&self) -> bool {
        self.want["class"] == "black_hole"
    }

    fn num(&self, key: &str) -> f64 {
        self.want[key]
            .as_f64()
            .unwrap_or_else(|| panic!("{}: no number {key} in expected.json", self.name))
    }

    /// The injected timer callback (hardirq).
    fn function(&self) -> &str {
        self.want["function"].as_str().unwrap()
    }

    fn cpu(&self) -> u64 {
        self.want["cpu"].as_u64().unwrap()
    }

    /// `stem`, or `stem.zst` as the lab stores the large ones.
    fn file(&self, stem: &str) -> Option<PathBuf> {
        [stem.to_string(), format!("{stem}.zst")]
            .into_iter()
            .map(|f| self.dir.join(f))
            .find(|p| p.exists())
    }

    /// The event trace as text, then as trace.dat when the kernel's trace-cmd wrote one.
    fn traces(&self) -> Vec<PathBuf> {
        let text = self
            .file("trace.txt")
            .unwrap_or_else(|| panic!("{}: no trace.txt", self.name));
        std::iter::once(text)
            .chain(self.file("trace.dat"))
            .collect()
    }

    /// The section length the scenario asked for (`inject_us=` in inject.txt). The latency
    /// tracer and function_graph phases are separate runs, with no expected.json of their
    /// own: each of their sections busy-waits on the clock for at least this long.
    fn inject_us(&self) -> f64 {
        let text = std::fs::read_to_string(self.dir.join("inject.txt")).unwrap();
        let v = Regex::new(r"inject_us=(\d+)").unwrap().captures(&text);
        v.unwrap_or_else(|| panic!("{}: no inject_us in inject.txt", self.name))[1]
            .parse()
            .unwrap()
    }

    /// The culprit's pid (`comm-pid`; the comm may hold `-`).
    fn culprit_pid(&self) -> i64 {
        let c = self.want["culprit"].as_str().unwrap();
        c.rsplit_once('-').unwrap().1.parse().unwrap()
    }

    fn culprit_comm(&self) -> &str {
        let c = self.want["culprit"].as_str().unwrap();
        c.rsplit_once('-').unwrap().0
    }
}

/// Every `KERNEL/SCENARIO` directory with an expected.json; fails when there is none.
fn fixtures() -> Vec<Fixture> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/lab");
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&root)
        .unwrap_or_else(|e| panic!("{}: {e}", root.display()))
        .flat_map(|k| std::fs::read_dir(k.unwrap().path()).into_iter().flatten())
        .map(|s| s.unwrap().path())
        .filter(|d| d.join("expected.json").exists())
        .collect();
    dirs.sort();
    assert!(!dirs.is_empty(), "no lab fixtures under {}", root.display());
    let found: Vec<Fixture> = dirs
        .into_iter()
        .map(|dir| {
            let want: Value =
                serde_json::from_str(&std::fs::read_to_string(dir.join("expected.json")).unwrap())
                    .unwrap();
            // The directory, not expected.json's kernel/scenario: one scenario can have more
            // than one run (stock/hardirq and stock/hardirq_in_place).
            let name = dir
                .strip_prefix(&root)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            Fixture { dir, name, want }
        })
        .collect();
    let names: Vec<&str> = found.iter().map(|f| f.name.as_str()).collect();
    println!("lab fixtures checked: {}", names.join(" "));
    found
}

fn open(path: &Path) -> Input {
    Input::open(path.to_str().unwrap()).unwrap()
}

/// Whether `name` is the function `f`, bare or with its module (`hardirq_fire [rtsleuth_noise]`,
/// as the kernel prints a module's symbols).
fn is_function(name: &str, f: &str) -> bool {
    name.strip_prefix(f)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with(" ["))
}

/// `got` within `tolerance` of `want`, or a message naming all three.
fn assert_near(what: &str, got: f64, want: f64, tolerance: f64) {
    assert!(
        (got - want).abs() <= tolerance,
        "{what}: {got} is not within {tolerance} of {want}"
    );
}

/// A section's length within max(1 ms, 5 %) (module doc).
fn section_tolerance(us: f64) -> f64 {
    (us * 0.05).max(1000.0)
}

/// A length from a separate run (latency tracer, function_graph) against the requested one:
/// at least that long, at most one tolerance longer.
fn assert_at_least_requested(what: &str, got: f64, requested: f64) {
    assert!(
        got >= requested && got <= requested + section_tolerance(requested),
        "{what}: {got} us for a {requested} us section"
    );
}

/// The longest section the noise module measured (`noise_end actual_ns=`) of `kind` on `cpu`.
struct Longest {
    kind: &'static str,
    cpu: u64,
    us: Option<f64>,
}

impl EventSink for Longest {
    fn event(&mut self, ev: &Event<'_>) {
        if ev.name != "noise_end" {
            return;
        }
        let f = ev.fields();
        if f.get("kind") == Some(self.kind) && f.get_u64("cpu") == Some(self.cpu) {
            let us = f.get_u64("actual_ns").unwrap() as f64 / 1000.0;
            self.us = Some(self.us.map_or(us, |m| m.max(us)));
        }
    }

    fn decode(&self) -> Decode {
        Decode::Only(&[])
    }
}

fn longest_section(fx: &Fixture, kind: &'static str) -> f64 {
    let mut l = Longest {
        kind,
        cpu: fx.cpu(),
        us: None,
    };
    read::read(open(&fx.traces()[0]), &mut l).unwrap();
    l.us.unwrap_or_else(|| panic!("{}: no {kind} section in the trace", fx.name))
}

// ---- explain ----------------------------------------------------------------------------------

/// What explain said about the spike, to compare the text and binary traces.
#[derive(Debug)]
struct Verdict {
    root_cause: String,
    culprit: Value,
    latency_us: f64,
    culprit_us: f64,
}

fn us(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

/// Whether a component of the expected class names the injected culprit.
fn names_culprit(fx: &Fixture, c: &Value) -> bool {
    let culprit = c["culprit"].as_str();
    match fx.class() {
        // A stopped machine has no culprit to name.
        "black_hole" | "unknown" => true,
        // The timer callback.
        "hardirq" => culprit.is_some_and(|c| is_function(c, fx.function())),
        // The injector is a tasklet.
        "softirq" => culprit == Some("softirq 6 (TASKLET)"),
        _ => culprit == fx.want["culprit"].as_str(),
    }
}

/// How much of the victim's wait the injection covered: from the later of its start and the
/// victim's due time to its end; a stopped machine is compared with the host's stop.
fn truth_us(fx: &Fixture, due: f64) -> (f64, f64) {
    let size = fx.num("size_us");
    if fx.stopped() {
        // The host times its SIGSTOP-SIGCONT from outside: signal delivery and qemu stopping
        // its threads are in it, and the guest sees only what passed after the victim was
        // due. 25 % leaves room for that (measured: 2.6 %) and still tells a stop from TCG's
        // few-ms noise.
        return (size, size * 0.25);
    }
    let (start, end) = section(fx);
    let us = (end - start.max(due)) * 1e6;
    (us, section_tolerance(us))
}

/// The µs of the finding's component that ends where the victim ran.
fn last_piece_us(finding: &Value) -> f64 {
    let run = us(&finding["run_ts"]);
    finding["components"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| (us(&c["end_ts"]) - run).abs() < 1e-9)
        .map(|c| us(&c["us"]))
        .sum()
}

/// The injected section's start and end in the trace clock.
fn section(fx: &Fixture) -> (f64, f64) {
    let start = fx.num("start");
    match fx.class() {
        // fifo_burst marks its start; it runs for size_us.
        "higher_priority" => (start, start + fx.num("size_us") / 1e6),
        _ => (start, fx.num("end")),
    }
}

/// Black-hole time rtsleuth found inside the injected section. The injectors spin on the
/// clock, so time the emulator takes from the vCPU during a section (TCG slices its vCPUs: in
/// stock/higher_priority the tick reached CPU 1 2.4 ms late while fifo_burst spun) counts
/// toward the section's length, while rtsleuth rightly names it black_hole: it belongs on the
/// culprit's side when the two are compared.
fn stolen_inside_section(fx: &Fixture, finding: &Value) -> f64 {
    if fx.stopped() {
        return 0.0;
    }
    let (start, end) = section(fx);
    finding["components"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["kind"] == "black_hole")
        .map(|c| {
            // Only the part of the gap that lies inside the section (a gap can begin before).
            let overlap = us(&c["end_ts"]).min(end) - us(&c["start_ts"]).max(start);
            (overlap * 1e6).clamp(0.0, us(&c["us"]))
        })
        .sum()
}

fn explain_one(fx: &Fixture, trace: &Path) -> Option<Verdict> {
    let at = format!(
        "{} {}",
        fx.name,
        trace.file_name().unwrap().to_string_lossy()
    );
    let threshold = fx.num("threshold_us");
    let mut explain = Explain::new(ExplainOptions {
        pids: vec![fx.num("victim_pid") as i32],
        threshold_us: Some(threshold),
        top: usize::MAX,
        ..Default::default()
    });
    let info = read::read(open(trace), &mut explain).unwrap();
    let doc = explain.document(&info).json;
    let findings = doc["findings"].as_array().unwrap();
    let late: Vec<&Value> = findings
        .iter()
        .filter(|f| us(&f["latency_us"]) >= threshold)
        .collect();
    if !fx.spike() {
        assert!(late.is_empty(), "{at}: no spike expected\n{late:#?}");
        return None;
    }
    // cyclictest writes its mark after the late wake-up: the last finding before it. The mark's
    // time is the text's, in whole us; trace.dat's ns stamps can put a switch in the same us
    // after it (armv7-stock/higher_priority: 45.644353216).
    let break_ts = fx.num("break_ts");
    let f = late
        .iter()
        .filter(|f| us(&f["run_ts"]) < break_ts + 1e-6)
        .max_by(|a, b| us(&a["run_ts"]).total_cmp(&us(&b["run_ts"])))
        .unwrap_or_else(|| panic!("{at}: no finding before {break_ts}\n{doc:#}"));
    assert_eq!(f["root_cause"], fx.class(), "{at}\n{f:#}");

    let mine: Vec<&Value> = f["components"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["kind"] == fx.class())
        .collect();
    let main = mine
        .iter()
        .max_by(|a, b| us(&a["us"]).total_cmp(&us(&b["us"])))
        .unwrap();
    assert!(names_culprit(fx, main), "{at}: culprit\n{f:#}");
    let culprit_us: f64 = mine
        .iter()
        .filter(|c| names_culprit(fx, c))
        .map(|c| us(&c["us"]))
        .sum();
    let due = f["expected_ts"].as_f64().unwrap_or(us(&f["wakeup_ts"]));
    let (want, tolerance) = truth_us(fx, due);
    assert_near(
        &format!("{at}: culprit's time (+ black holes inside the section)"),
        culprit_us + stolen_inside_section(fx, f),
        want,
        tolerance,
    );

    // cyclictest takes its time in user space after the switch rtsleuth ends at, and writes
    // its mark after that: its figure exceeds rtsleuth's by at most the switch-to-mark time
    // (measured 46-180 us of 339-865 us). Below, only its truncation to whole us and the
    // text trace's 1 us stamps. A wrong due time or end moves it out of this window.
    let latency = us(&f["latency_us"]);
    let gap = fx.num("cyclictest_us") - latency;
    let to_mark = (break_ts - us(&f["run_ts"])) * 1e6;
    // Woken before it slept (stock/hardirq_in_place: its timer fired in an interrupt of its
    // own), the task never switches; rtsleuth sees it again at its first task-context event,
    // there the mark itself. cyclictest read its clock inside the last piece, the one ending
    // at that event, so its figure falls short of rtsleuth's by at most that piece.
    // The finding ending at the mark itself: 0 in the text, under 1 us in trace.dat, whose
    // stamps are ns where break_ts has whole us.
    let window = if to_mark.abs() < 1.0 {
        -last_piece_us(f) - 5.0..=5.0
    } else {
        -5.0..=to_mark
    };
    assert!(
        window.contains(&gap),
        "{at}: latency {latency} vs cyclictest {}: gap {gap}, window {window:?}",
        fx.num("cyclictest_us")
    );
    Some(Verdict {
        root_cause: f["root_cause"].as_str().unwrap().to_string(),
        culprit: main["culprit"].clone(),
        latency_us: latency,
        culprit_us,
    })
}

/// The scenarios whose victim is woken through a wake chain, not cyclictest
/// (`lab_chains.rs` checks them).
const CHAIN_SCENARIOS: [&str; 2] = ["irq_thread", "timerfd"];

#[test]
fn explain_names_the_injected_cause() {
    let cyclictest = fixtures()
        .into_iter()
        .filter(|fx| !CHAIN_SCENARIOS.contains(&fx.scenario()));
    for fx in cyclictest {
        let verdicts: Vec<Option<Verdict>> =
            fx.traces().iter().map(|t| explain_one(&fx, t)).collect();
        println!("{}: {:?}", fx.name, verdicts);
        // trace.dat has ns stamps where the text has us: a few us apart, nothing more.
        if let [Some(text), Some(dat)] = verdicts.as_slice() {
            assert_eq!(
                (&text.root_cause, &text.culprit),
                (&dat.root_cause, &dat.culprit),
                "{}",
                fx.name
            );
            assert_near(&fx.name, dat.latency_us, text.latency_us, 2.0);
            assert_near(&fx.name, dat.culprit_us, text.culprit_us, 2.0);
        }
    }
}

// ---- irq --------------------------------------------------------------------------------------

fn irq_json(trace: &Path) -> Value {
    let mut irq = Irq::new(IrqOptions {
        top: usize::MAX,
        ..Default::default()
    });
    let (info, section) = latency_tracer::read(open(trace), &mut irq).unwrap();
    irq.document(&info, section.as_ref()).json
}

/// The `cpu` column of the row of duration table `table` that `pick` chooses.
fn per_cpu<'a>(j: &'a Value, table: &str, cpu: u64, pick: impl Fn(&Value) -> bool) -> &'a Value {
    let row = j[table].as_array().unwrap().iter().find(|r| pick(r));
    let row = row.unwrap_or_else(|| panic!("{table}: no such row\n{:#}", j[table]));
    let cpus = row["per_cpu"].as_array().unwrap();
    cpus.iter().find(|c| c["cpu"] == cpu).unwrap()
}

/// The longest preemptirq section in `list` on `cpu`, when the kernel has those events.
fn longest_on<'a>(j: &'a Value, list: &str, cpu: u64) -> Option<&'a Value> {
    j[list]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["cpu"] == cpu)
        .max_by(|a, b| us(&a["us"]).total_cmp(&us(&b["us"])))
}

/// The preemptirq section of the injector: as long as the module measured, from its task,
/// opened in its function (`irqs_off_section`, `preempt_off_section`).
fn assert_preemptirq_section(at: &str, s: &Value, fx: &Fixture, longest: f64) {
    assert_near(at, us(&s["us"]), longest, section_tolerance(longest));
    assert_eq!(s["task"]["pid"], fx.culprit_pid(), "{at}\n{s:#}");
    let opener = format!("{}_section", fx.scenario());
    assert!(
        s["caller"].as_str().unwrap().contains(&opener),
        "{at}\n{s:#}"
    );
}

fn irq_one(fx: &Fixture, trace: &Path) {
    let at = format!(
        "{} {}",
        fx.name,
        trace.file_name().unwrap().to_string_lossy()
    );
    let j = irq_json(trace);
    let cpu = fx.cpu();
    // Sorted by lateness, worst first.
    let late_on_cpu: Vec<&Value> = j["irqs_off_inferred"]["worst"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|w| w["cpu"] == cpu)
        .collect();
    let worst = || {
        *late_on_cpu
            .first()
            .unwrap_or_else(|| panic!("{at}: no late timer on CPU {cpu}"))
    };
    match fx.scenario() {
        "hardirq" => {
            let row = per_cpu(&j, "hrtimers", cpu, |r| {
                is_function(r["function"].as_str().unwrap(), fx.function())
            });
            let longest = longest_section(fx, "hardirq");
            assert_near(&at, us(&row["max_us"]), longest, section_tolerance(longest));
        }
        "softirq" => {
            let row = per_cpu(&j, "softirqs", cpu, |r| r["vec"] == 6);
            let longest = longest_section(fx, "softirq");
            assert_near(&at, us(&row["max_us"]), longest, section_tolerance(longest));
        }
        "irqs_off" => {
            // The worst late timer on the CPU was held off by the section: it fired as the
            // section ended, and was due at most one cyclictest period (1 ms) after it began.
            // When cyclictest had been woken before the section began (expected class
            // preempt_off), its timer was not pending: the next one due was the tick's, one
            // period at the kernels' HZ=250 (4 ms).
            let w = worst();
            assert_eq!(w["kind"], "irqs_off", "{at}\n{w:#}");
            assert_eq!(w["task"]["pid"], fx.culprit_pid(), "{at}\n{w:#}");
            let after_end = (us(&w["irq_ts"]) - fx.num("end")) * 1e6;
            assert!((0.0..=1000.0).contains(&after_end), "{at}\n{w:#}");
            let section = (fx.num("end") - fx.num("start")) * 1e6;
            let due_within = if fx.class() == "irqs_off" {
                1000.0
            } else {
                4000.0
            };
            assert!(us(&w["late_us"]) >= section - due_within, "{at}\n{w:#}");
            if let Some(s) = longest_on(&j, "irqs_off", cpu) {
                assert_preemptirq_section(&at, s, fx, longest_section(fx, "irqs_off"));
            }
        }
        "preempt_off" => {
            if let Some(s) = longest_on(&j, "preempt_off", cpu) {
                assert_preemptirq_section(&at, s, fx, longest_section(fx, "preempt_off"));
            }
        }
        // A stop that caught the timer's handler mid-way (`provable: false`) delays no timer.
        "black_hole" if fx.class() == "black_hole" => {
            // The host stopped the whole machine: the worst late timer on the CPU, blamed on
            // nobody, as late as the stop (25 %: see truth_us).
            let w = worst();
            assert_eq!(w["kind"], "black_hole", "{at}\n{w:#}");
            let size = fx.num("size_us");
            assert_near(&at, us(&w["late_us"]), size, size * 0.25);
        }
        _ => {}
    }
    // Only an interrupts-off cause may hold a timer off past the threshold; a 30 ms timer
    // callback (hardirq) or a preempt-off section must not read as one.
    if !(fx.scenario() == "irqs_off" || fx.spike() && fx.class() == "irqs_off") {
        let threshold = fx.num("threshold_us");
        let wrong: Vec<&&Value> = late_on_cpu
            .iter()
            .filter(|w| w["kind"] == "irqs_off" && us(&w["late_us"]) >= threshold)
            .collect();
        assert!(wrong.is_empty(), "{at}: {wrong:#?}");
    }
}

#[test]
fn irq_measures_the_injected_sections() {
    for fx in fixtures() {
        for trace in fx.traces() {
            irq_one(&fx, &trace);
        }
    }
}

// ---- latency tracers --------------------------------------------------------------------------

/// The header lines the kernel prints, read here with regexes independently of the reader.
fn header_fields(text: &str) -> (u64, u32, String, i32) {
    let latency = Regex::new(r"(?m)^# latency: (\d+) us, #\d+/\d+, CPU#(\d+) ").unwrap();
    let task = Regex::new(r"(?m)^#\s+\| task: (.+)-(\d+) \(").unwrap();
    let (l, t) = (
        latency.captures(text).unwrap(),
        task.captures(text).unwrap(),
    );
    (
        l[1].parse().unwrap(),
        l[2].parse().unwrap(),
        t[1].to_string(),
        t[2].parse().unwrap(),
    )
}

fn read_to_string(path: &Path) -> String {
    let mut text = String::new();
    std::io::Read::read_to_string(&mut open(path).reader, &mut text).unwrap();
    text
}

#[test]
fn latency_tracer_output_names_the_injected_section() {
    let mut checked = 0;
    for fx in fixtures() {
        let Some(path) = fx.file("latency_tracer.txt") else {
            continue;
        };
        let at = &fx.name;
        let (_, t) = latency_tracer::read(open(&path), &mut NullSink).unwrap();
        let t = t.unwrap_or_else(|| panic!("{at}: latency tracer output not recognised"));
        let task = t.task.as_ref().unwrap();
        let (latency, cpu, comm, pid) = header_fields(&read_to_string(&path));
        assert_eq!(
            (
                t.summary.latency_us,
                t.summary.cpu,
                task.comm.as_str(),
                task.pid
            ),
            (latency, cpu, comm.as_str(), pid),
            "{at}"
        );
        let got = t.summary.latency_us as f64;
        let threshold = fx.num("threshold_us");
        match (t.tracer.as_str(), fx.scenario()) {
            // The section is atomic for this tracer: its worst is the section.
            ("irqsoff", "irqs_off" | "hardirq") | ("preemptoff", "preempt_off" | "softirq") => {
                // These tracers trace every function of the section (12 322 entries in
                // tracer/softirq), which under emulation stretches it by up to ~2 ms: 10 %
                // above the request, still far below a second section or a wrong one.
                let requested = fx.inject_us();
                assert!(
                    got >= requested && got <= requested * 1.1,
                    "{at}: {got} us for a {requested} us section"
                );
                if matches!(fx.scenario(), "irqs_off" | "preempt_off") {
                    let opener = format!("{}_section", fx.scenario());
                    for end in [&t.started_at, &t.ended_at] {
                        assert!(end.as_deref().unwrap().contains(&opener), "{at}: {end:?}");
                    }
                    assert_eq!(task.comm, fx.culprit_comm(), "{at}");
                }
            }
            // wakeup_rt ignores a wake-up that cannot preempt the running task
            // (probe_wakeup: p->prio >= current->prio): it never sees cyclictest wait behind
            // the higher-priority burst.
            ("wakeup_rt", "higher_priority") => assert!(got < threshold, "{at}: {got}"),
            // It does see a wake-up that a non-preemptible kernel path holds up.
            ("wakeup_rt", "kernel_path") => {
                assert_eq!(got >= threshold, fx.spike(), "{at}: {got}")
            }
            _ => {}
        }
        checked += 1;
    }
    println!("latency tracer outputs checked: {checked}");
}

// ---- function_graph ---------------------------------------------------------------------------

#[test]
fn graph_singles_out_the_slow_timer_interrupt() {
    for fx in fixtures() {
        let Some(path) = fx.file("function_graph.txt") else {
            continue;
        };
        let at = &fx.name;
        // The timer interrupt's handler the lab graphs: the local APIC's on x86, the generic
        // timer's on ARM (its virtual timer, as qemu's virt machine runs the kernel at EL1).
        let handler = match fx.name.starts_with("arm") {
            true => "arch_timer_handler_virt",
            false => "__sysvec_apic_timer_interrupt",
        };
        let opts = GraphOptions {
            func: Some(handler.into()),
            top: 20,
            threshold_us: 1.0,
        };
        let doc = graph::analyze(path.to_str().unwrap(), &opts).unwrap().json;
        let c = &doc["compare"];
        let requested = fx.inject_us();
        let (slow, base) = (us(&c["slow_us"]), us(&c["base_us"]));
        assert_at_least_requested(at, slow, requested);
        // The median call is an ordinary tick: a few hundred us under TCG at most.
        assert!(base < 1000.0, "{at}: median {base}");
        assert_near(at, us(&c["delta_us"]), slow - base, 0.01);
        // What the slow call has and the median lacks: above all the injector's callback.
        let extra = c["extra"].as_array().unwrap();
        let top = extra
            .iter()
            .max_by(|a, b| us(&a["us"]).total_cmp(&us(&b["us"])))
            .unwrap_or_else(|| panic!("{at}: nothing extra\n{c:#}"));
        assert!(
            is_function(top["function"].as_str().unwrap(), fx.function()),
            "{at}: {top:#}"
        );
        assert!(
            top["path"]
                .as_str()
                .unwrap()
                .starts_with(&format!("{handler} > ")),
            "{at}: {top:#}"
        );
        assert_at_least_requested(at, us(&top["us"]), requested);
    }
}
