//! The referee's self-test: real findings made false on purpose must be flagged, each by the
//! rule that states the broken claim. Every kind is the source of some mutation, over several
//! traces. A mutation applies only where the raw events make the mutated claim false by
//! themselves (e.g. a stretch turned `black_hole` must hold an event of its CPU).

use super::finding::{Finding, Stretch};
use super::rules_stretch::{irq_disable_open, RANKED};
use super::rules_wakeup::{armed_timer, chain_due, own_wakeup};
use super::{check_finding, completeness, explain, peers, Ctx, Out, Waits};
use std::collections::BTreeMap;

const TRACES: &[&str] = &[
    "tests/fixtures/lab/rt/higher_priority/trace.txt.zst",
    "tests/fixtures/lab/tracer/irqs_off/trace.txt.zst",
    "tests/fixtures/lab/stock/softirq/trace.txt.zst",
    "tests/fixtures/lab/tracer/preempt_off/trace.txt.zst",
    "tests/fixtures/lab/rt/black_hole/trace.txt.zst",
    "tests/fixtures/lab/rt/kernel_path/trace.txt.zst",
    "tests/fixtures/recorded/fifo_above/trace.txt",
    "tests/fixtures/recorded/sleeper_cpu1/trace.txt.zst",
    "tests/fixtures/explain/synthetic/mixed.txt",
    "../shared/fixtures/realworld/lisa/tests/assets/sched_load/trace.dat",
    "tests/fixtures/lab/rt/hardirq/trace.txt.zst",
    "tests/fixtures/recorded/pipe_chain/trace.txt.zst",
    "tests/fixtures/recorded/wq/trace.txt.zst",
    "tests/fixtures/recorded/untraced_out/trace.txt.zst",
];
const KINDS: [&str; 9] = [
    "hardirq",
    "irqs_off",
    "softirq",
    "higher_priority",
    "preempt_off",
    "fair_share",
    "black_hole",
    "kernel_path",
    "unknown",
];
/// The chain mutations: each must have been applied once the engine prints chain findings.
const CHAIN_MUTATIONS: [&str; 5] = [
    "chain start moved earlier",
    "first link woken_by swapped",
    "link pid replaced",
    "waker_run culprit changed",
    "chain dropped",
];
const QUEUED_MUTATIONS: [&str; 3] = [
    "queueing moved earlier",
    "queueing's path renamed",
    "wake-up claimed queued",
];
/// Mutations of one type from one source kind per trace, at most (debug-build time).
const PER_TRACE: usize = 6;

/// The runs mutated explain every task's wake-ups and preemption waits.
const ALL: Waits = Waits {
    rt_only: false,
    preemptions: true,
    works: false,
};
const ARGS: &[&str] = &["--all", "--preemptions", "--top", "20", "--threshold", "0"];

/// How many mutations of each (type, source kind) a trace has had.
type Budget = BTreeMap<(&'static str, String), usize>;

struct Mutation {
    /// Index of the real finding mutated, and of the stretch.
    of: usize,
    at: Option<usize>,
    name: &'static str,
    /// The kind of the stretch mutated, or "finding".
    source: String,
    expect: &'static str,
    finding: Finding,
}

fn count(vs: &[super::Violation], rule: &str) -> usize {
    vs.iter().filter(|v| v.rule == rule).count()
}

/// The real finding already breaks `rule` where the mutation would: the mutation could undo
/// the engine's error instead of making one, so it is not applied.
fn already_broken(vs: &[super::Violation], rule: &str, at: Option<usize>) -> bool {
    vs.iter()
        .any(|v| v.rule == rule && (at.is_none() || v.stretch == at))
}

fn with_stretch(f: &Finding, i: usize, edit: impl FnOnce(&mut Stretch)) -> Finding {
    let mut m = f.clone();
    edit(&mut m.timeline[i]);
    m
}

/// Has an event of its CPU strictly inside (a fact of the trace, not of the referee's rules).
fn holds_event(cx: &Ctx, s: &Stretch) -> bool {
    cx.trace
        .inside(s.cpu, s.start + 2, s.end - 2)
        .next()
        .is_some()
}

/// Queues a mutation unless its (type, source) had its share; builds it only then (findings
/// can hold thousands of stretches).
fn put(
    out: &mut Vec<Mutation>,
    budget: &mut Budget,
    key: (usize, Option<usize>, &'static str, &str, &'static str),
    build: impl FnOnce() -> Finding,
) {
    let (of, at, name, source, expect) = key;
    let n = budget.entry((name, source.to_string())).or_default();
    if *n < PER_TRACE {
        *n += 1;
        out.push(Mutation {
            of,
            at,
            name,
            source: source.to_string(),
            expect,
            finding: build(),
        });
    }
}

/// Facts of the whole trace a mutation's precondition needs (computed once per trace).
struct Facts {
    irq_disable: bool,
    marks: bool,
}

impl Facts {
    fn of(cx: &Ctx) -> Facts {
        Facts {
            irq_disable: cx.trace.events.iter().any(|e| e.name == "irq_disable"),
            marks: cx
                .trace
                .events
                .iter()
                .any(|e| e.fields.contains("hit latency threshold")),
        }
    }
}

fn stretch_mutations(
    of: usize,
    f: &Finding,
    cx: &Ctx,
    facts: &Facts,
    b: &mut Budget,
    out: &mut Vec<Mutation>,
) {
    // A waker's run belongs to no link's wait: chain_mutations makes those false.
    let waits = f.timeline.iter().enumerate();
    for (i, s) in waits.filter(|(_, s)| s.kind != "waker_run") {
        let src = s.kind.clone();
        let mut put = |name, expect, build: &dyn Fn() -> Finding| {
            put(out, b, (of, Some(i), name, &src, expect), build)
        };
        if RANKED.contains(&s.kind.as_str())
            && s.culprit_pid
                .is_some_and(|p| cx.sched.prio_at(p, s.start).is_some())
        {
            for k in RANKED.iter().filter(|k| **k != s.kind) {
                put("wrong ranked class", "E3_rank", &|| {
                    with_stretch(f, i, |m| m.kind = k.to_string())
                });
            }
        }
        if s.kind == "hardirq" || s.kind == "softirq" {
            let other = if s.kind == "hardirq" {
                "softirq"
            } else {
                "hardirq"
            };
            if cx
                .trace
                .inside(s.cpu, s.start - 2, s.end + 2)
                .all(|e| e.flags.is_some())
            {
                put("hard/soft swapped", "irq_frame_open", &|| {
                    with_stretch(f, i, |m| m.kind = other.into())
                });
            }
        }
        put("interrupt that never ran", "irq_frame_open", &|| {
            with_stretch(f, i, |m| {
                m.kind = "hardirq".into();
                m.culprit = Some("irq 4242 (bogus)".into());
                m.culprit_pid = None;
            })
        });
        if s.kind != "black_hole" && holds_event(cx, s) {
            put("black_hole over events", "E2_black_hole", &|| {
                with_stretch(f, i, |m| m.kind = "black_hole".into())
            });
        }
        if s.end - s.start > 0 && f.pid != cx.sched.current_at(s.cpu, s.start).unwrap_or(-9) {
            put("victim as culprit", "task_holds_cpu", &|| {
                with_stretch(f, i, |m| {
                    m.kind = "higher_priority".into();
                    m.culprit = Some(format!("{}-{}", f.comm, f.pid));
                    m.culprit_pid = Some(f.pid);
                })
            });
        }
        put("placeholder culprit", "E3_unknown_task", &|| {
            with_stretch(f, i, |m| {
                m.kind = "higher_priority".into();
                m.culprit = Some("<...>--1".into());
                m.culprit_pid = Some(-1);
            })
        });
        let on = cx
            .trace
            .inside(s.cpu, s.start + 2, s.end - 2)
            .any(|e| e.task_context() && e.irqs_off() == Some(false));
        if s.kind != "irqs_off" && on && !facts.irq_disable {
            put(
                "irqs_off with interrupts on",
                "E4_irqs_off_evidence",
                &|| with_stretch(f, i, |m| m.kind = "irqs_off".into()),
            );
        }
        if s.kind == "irqs_off" && !s.before && irq_disable_open(cx, s.cpu, s.start, s.end) {
            put(
                "irqs_off called preempt_off",
                "E4_irqs_off_not_preempt_off",
                &|| with_stretch(f, i, |m| m.kind = "preempt_off".into()),
            );
        }
        let holder = cx.sched.current_at(s.cpu, s.start).filter(|&p| p > 0);
        let handed_on = |p| {
            cx.trace
                .first_from(s.cpu, s.end - 2)
                .is_some_and(|e| e.pid != p && e.pid >= 0)
        };
        if let Some(p) = holder.filter(|&p| s.kind == "unknown" && p != f.pid && handed_on(p)) {
            put("holder past its last event", "task_holds_cpu", &|| {
                with_stretch(f, i, |m| {
                    m.kind = "preempt_off".into();
                    m.culprit = Some(format!("task-{p}"));
                    m.culprit_pid = Some(p);
                })
            });
        }
        if let Some(p) = holder.filter(|_| s.detail.starts_with("the scheduler switched")) {
            put(
                "chosen task called preempt_off",
                "E3_chosen_over_victim",
                &|| {
                    with_stretch(f, i, |m| {
                        m.kind = "preempt_off".into();
                        m.culprit = Some(format!("task-{p}"));
                        m.culprit_pid = Some(p);
                    })
                },
            );
        }
        if s.kind == "kernel_path" {
            put("kernel_path past 1 ms", "E1_kernel_path_bound", &|| {
                with_stretch(f, i, |m| m.end = m.start + 1_500_000)
            });
        }
        let other_cpu = cx.trace.by_cpu.keys().copied().find(|&c| c != s.cpu);
        if let Some(c) = other_cpu {
            put("wrong cpu", "stretch_cpu", &|| {
                with_stretch(f, i, |m| m.cpu = c)
            });
        }
    }
}

fn finding_mutations(
    of: usize,
    f: &Finding,
    cx: &Ctx,
    facts: &Facts,
    b: &mut Budget,
    out: &mut Vec<Mutation>,
) {
    let mut put = |name, expect, build: &dyn Fn() -> Finding| {
        put(out, b, (of, None, name, "finding", expect), build)
    };
    put("wakeup_ts shifted", "wakeup_pairing", &|| {
        let mut m = f.clone();
        m.wakeup += 1_000;
        m
    });
    if f.run_at == "switch" {
        put("run_ts shifted", "wakeup_pairing", &|| {
            let mut m = f.clone();
            m.run -= 1_000;
            m
        });
    }
    let mut sums: BTreeMap<&str, f64> = BTreeMap::new();
    for c in &f.components {
        *sums.entry(c.kind.as_str()).or_default() += c.us;
    }
    if let Some((k, _)) = sums
        .iter()
        .find(|(k, us)| **k != f.root_cause && **us < sums[f.root_cause.as_str()] - 0.01)
    {
        put("root_cause not the largest", "root_cause", &|| {
            let mut m = f.clone();
            m.root_cause = k.to_string();
            m
        });
    }
    if cx.trace.overwritten {
        if let Some(w) = cx.window {
            put("due before the common window", "V1_common_window", &|| {
                let mut m = f.clone();
                m.expected = Some(w - 1_000_000);
                m
            });
        }
    }
    let ev = &cx.trace.events;
    let k = ev.partition_point(|e| e.ts < f.window_start());
    if let Some(e) = ev[..k]
        .iter()
        .rev()
        .find(|e| e.pid == f.pid && e.task_context())
    {
        put(
            "window over the victim running",
            "victim_never_runs",
            &|| {
                let mut m = f.clone();
                m.expected = Some(e.ts - 1_000);
                m
            },
        );
    }
    if f.source == "preempted" {
        put("preemption wait due earlier", "due_evidence", &|| {
            let mut m = f.clone();
            m.expected = m.expected.map(|e| e - 1_000);
            m
        });
    } else if !cx.sched.preemptions.contains_key(&f.pid) {
        put("wake-up called a preemption", "due_evidence", &|| {
            let mut m = f.clone();
            m.source = "preempted".into();
            m.expected = Some(m.wakeup);
            m
        });
    }
    if !facts.marks && f.source != "tracemark" {
        put("tracemark without a mark", "due_evidence", &|| {
            let mut m = f.clone();
            m.source = "tracemark".into();
            m.expected = Some(m.expected.unwrap_or(m.wakeup));
            m
        });
    }
}

/// The due time a chain's start can be moved to that its own evidence denies: 50 us before
/// the interrupt's entry, or before its timer was armed.
fn earlier_start(f: &Finding, cx: &Ctx) -> Option<i64> {
    let first = f.chain.first()?;
    if first.woken_by != "timer" {
        return f.expected.map(|e| e - 50_000);
    }
    let seg = super::segments::cut(f, |_| true)
        .segments
        .into_iter()
        .next()?;
    armed_timer(&seg.finding, cx).map(|e| e.ts - 50_000)
}

/// A queued finding's due time and path, and a queued due time claimed for another wake-up
/// (docs/claims.md, "Works").
fn queued_mutations(of: usize, f: &Finding, b: &mut Budget, out: &mut Vec<Mutation>) {
    let mut put = |at, name, expect, build: &dyn Fn() -> Finding| {
        put(out, b, (of, at, name, "queued", expect), build)
    };
    if f.source != "queued" {
        if f.source == "wakeup" {
            put(None, "wake-up claimed queued", "due_evidence", &|| {
                let mut m = f.clone();
                m.source = "queued".into();
                m.expected = Some(m.wakeup);
                m
            });
        }
        return;
    }
    put(None, "queueing moved earlier", "due_evidence", &|| {
        let mut m = f.clone();
        m.expected = m.expected.map(|e| e - 50_000);
        m
    });
    if let Some(i) = f.timeline.iter().position(|s| s.before) {
        put(Some(i), "queueing's path renamed", "queued_path", &|| {
            with_stretch(f, i, |s| s.kind = "unknown".into())
        });
    }
}

fn chain_mutations(of: usize, f: &Finding, cx: &Ctx, b: &mut Budget, out: &mut Vec<Mutation>) {
    if f.source != "chain" || f.chain.is_empty() {
        return;
    }
    let mut put = |at, name, src: &str, expect, build: &dyn Fn() -> Finding| {
        put(out, b, (of, at, name, src, expect), build)
    };
    if let Some(e) = earlier_start(f, cx) {
        put(
            None,
            "chain start moved earlier",
            "chain",
            "chain_start",
            &|| {
                let mut m = f.clone();
                m.expected = Some(e);
                m
            },
        );
    }
    put(
        None,
        "first link woken_by swapped",
        "chain",
        "chain_start",
        &|| {
            let mut m = f.clone();
            m.chain[0].woken_by = match m.chain[0].woken_by.as_str() {
                "timer" => "interrupt".into(),
                _ => "timer".into(),
            };
            m
        },
    );
    if f.chain[0].interrupt.is_some() {
        put(
            None,
            "chain's interrupt renamed",
            "chain",
            "chain_start",
            &|| {
                let mut m = f.clone();
                m.chain[0].interrupt = Some("irq 9999 (elsewhere)".into());
                m
            },
        );
    }
    for k in 0..f.chain.len() {
        put(None, "link pid replaced", "chain", "chain_links", &|| {
            let mut m = f.clone();
            m.chain[k].pid = f.pid;
            m
        });
    }
    for (i, _) in (f.timeline.iter().enumerate()).filter(|(_, s)| s.kind == "waker_run") {
        put(
            Some(i),
            "waker_run culprit changed",
            "waker_run",
            "chain_links",
            &|| {
                with_stretch(f, i, |m| {
                    m.culprit = Some(format!("{}-{}", f.comm, f.pid));
                    m.culprit_pid = Some(f.pid);
                })
            },
        );
    }
    let due = own_wakeup(f, cx).and_then(|w| chain_due(w, cx));
    if due.is_some() {
        put(None, "chain dropped", "chain", "chain_required", &|| {
            let mut m = f.clone();
            m.source = "wakeup".into();
            m.expected = None;
            m.chain.clear();
            m.timeline.retain(|s| s.start >= f.wakeup);
            m
        });
    }
}

#[test]
fn mutated_findings_are_flagged() {
    let root = super::root();
    let mut applied: BTreeMap<(&str, String), (usize, usize)> = BTreeMap::new();
    let mut kinds_seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut missed = Vec::new();
    let (mut chains, mut queued) = (0, 0);
    for t in TRACES {
        let path = root.join(t);
        let (_, trace) = peers::read(&path).unwrap();
        let cx = Ctx::new(trace);
        let doc = explain(&path, ARGS).unwrap();
        let (findings, _) = super::finding::findings("all", &doc);
        let mut budget = Budget::new();
        let mut ms = Vec::new();
        let facts = Facts::of(&cx);
        // Real findings the referee pairs with a wait of its own are the ones mutated.
        for (of, f) in findings
            .iter()
            .enumerate()
            .filter(|(_, f)| own_wakeup(f, &cx).is_some())
        {
            stretch_mutations(of, f, &cx, &facts, &mut budget, &mut ms);
            finding_mutations(of, f, &cx, &facts, &mut budget, &mut ms);
            chain_mutations(of, f, &cx, &mut budget, &mut ms);
            queued_mutations(of, f, &mut budget, &mut ms);
        }
        queued += findings.iter().filter(|f| f.source == "queued").count();
        chains += findings.iter().filter(|f| f.source == "chain").count();
        let mut baseline: BTreeMap<usize, Vec<super::Violation>> = BTreeMap::new();
        for m in ms {
            let base = baseline
                .entry(m.of)
                .or_insert_with(|| check_finding(&findings[m.of], &cx));
            if already_broken(base, m.expect, m.at) {
                continue;
            }
            let before = count(base, m.expect);
            let after = count(&check_finding(&m.finding, &cx), m.expect);
            let e = applied.entry((m.name, m.source.clone())).or_default();
            e.0 += 1;
            *kinds_seen.entry(m.source.clone()).or_default() += 1;
            if after > before {
                e.1 += 1;
            } else {
                missed.push(format!(
                    "{t}: {} ({} stretch) not flagged by {}: {}",
                    m.name, m.source, m.expect, m.finding
                ));
            }
        }
        // Completeness: the worst finding left out must be missed.
        if let Some(worst) = findings.first().filter(|f| own_wakeup(f, &cx).is_some()) {
            let rest: Vec<Finding> = findings[1..].to_vec();
            let (mut a, mut b) = (Out::default(), Out::default());
            completeness(&doc, &findings, &cx, ALL, &mut a);
            completeness(&doc, &rest, &cx, ALL, &mut b);
            let e = applied
                .entry(("finding dropped", "finding".into()))
                .or_default();
            e.0 += 1;
            if count(&b.0, "completeness") > count(&a.0, "completeness") {
                e.1 += 1;
            } else {
                missed.push(format!(
                    "{t}: dropping {worst} is not flagged by completeness"
                ));
            }
        }
    }
    for ((name, source), (n, flagged)) in &applied {
        println!("{name:32} from {source:16} {flagged}/{n} flagged");
    }
    for k in KINDS {
        assert!(
            kinds_seen.get(k).copied().unwrap_or(0) > 0,
            "no mutation of a {k} stretch"
        );
    }
    assert!(queued > 0, "no queued finding to mutate");
    for name in QUEUED_MUTATIONS {
        assert!(
            applied.keys().any(|(n, _)| *n == name),
            "{queued} queued findings, but no {name:?} mutation"
        );
    }
    // Until the engine prints chains there is nothing to mutate; from then on, every one.
    for name in CHAIN_MUTATIONS.iter().filter(|_| chains > 0) {
        assert!(
            applied.keys().any(|(n, _)| n == name),
            "{chains} chain findings, but no {name:?} mutation"
        );
    }
    assert!(
        missed.is_empty(),
        "{} mutations not flagged:\n{}",
        missed.len(),
        missed.join("\n")
    );
}
