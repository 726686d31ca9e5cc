//! Rules about wake chains (docs/claims.md, "Wake chains"): the chain's proven start
//! (chain_start), each link being one the referee follows itself and each waker's run being
//! one `waker_run` stretch (chain_links).

use super::chains::{self, lost_between, DEPTH};
use super::finding::{Finding, Link, Stretch};
use super::frames::Frame;
use super::rules_timeline::TOL;
use super::rules_wakeup::own_wakeup;
use super::sched::{Waker, Wakeup};
use super::segments::Cut;
use super::{Ctx, Out};

/// The seconds of a trace time, for messages.
fn s(ts: i64) -> f64 {
    ts as f64 / 1e9
}

/// chain_start: 1 to 8 links; the first link's own wake-up was woken in hard-IRQ context,
/// by its timer (the due_evidence timer rule for its task, the waking inside its
/// hrtimer_wakeup expiry) or by another interrupt (expected_ts is the entry of the outermost
/// hard-IRQ frame open at the waking).
pub fn chain_start(f: &Finding, cut: &Cut, cx: &Ctx, out: &mut Out) {
    let n = f.chain.len();
    if !(1..=DEPTH).contains(&n) {
        out.put("chain_start", None, format!("{n} links, not 1 to {DEPTH}"));
    }
    let Some(l) = f.chain.first() else { return };
    let Some(w) = cx.sched.wakeup_at(l.pid, l.woken) else {
        let why = format!(
            "the first link's woken_ts starts no wake-up of pid {}",
            l.pid
        );
        out.put("chain_start", None, why);
        return;
    };
    if l.woken_by == "soft_timer" {
        return soft_timer_start(f, cx, out);
    }
    if l.woken_by == "queue" {
        return queue_start(f, w, cx, out);
    }
    if w.waker != Waker::HardIrq {
        let why = format!(
            "the first link was woken by {:?}, not in hard-IRQ context",
            w.waker
        );
        out.put("chain_start", None, why);
    }
    let open = chains::hard_frames_at(w, cx);
    let why = match l.woken_by.as_str() {
        "timer" if !open.last().is_some_and(|f| chains::timer_frame(f)) => {
            "woken_by timer, but the waking is in no hrtimer_wakeup expiry".to_string()
        }
        "timer" => return timer_start(f, cut, cx, out),
        "interrupt" => match (open.first(), open.last()) {
            (None, _) => "no hard-IRQ frame open at the waking".to_string(),
            (_, Some(i)) if chains::timer_frame(i) => {
                "woken by its own timer's expiry: woken_by is timer".to_string()
            }
            (Some(o), _) if f.expected.is_some_and(|e| (e - o.entry).abs() <= TOL) => {
                return interrupt_named(l, o, w.waker_cpu, cx, out)
            }
            (Some(o), _) => format!(
                "the outermost hard-IRQ frame at the waking ({}) entered at {:.9}",
                o.label,
                s(o.entry)
            ),
        },
        by => format!("the first link is woken_by {by:?}, not timer or interrupt"),
    };
    out.put("chain_start", None, why);
}

/// The first link's `interrupt` names the outermost frame `o` on `cpu` as a culprit is
/// named: `irq N (NAME)` or `vector V (NAME)` from its entry event, a callback's function.
fn interrupt_named(l: &Link, o: &Frame, cpu: u32, cx: &Ctx, out: &mut Out) {
    let entry =
        (cx.trace.inside(cpu, o.entry - 1, o.entry + 1)).find(|e| e.name.ends_with("_entry"));
    let want = match entry {
        Some(e) if e.name == "irq_handler_entry" => {
            format!("{} ({})", o.label, e.field("name").unwrap_or(""))
        }
        Some(e) if o.label.starts_with("vector") => {
            format!("{} ({})", o.label, e.name.trim_end_matches("_entry"))
        }
        _ => o.label.clone(),
    };
    if l.interrupt.as_deref() != Some(want.as_str()) {
        let why = format!(
            "the first link's interrupt is {:?}, not {want:?}",
            l.interrupt
        );
        out.put("chain_start", None, why);
    }
}

/// A queue start (docs/claims.md, "Works"): the first link's own wake-up `w` is a work's
/// queueing's waking, and expected_ts is that queueing.
fn queue_start(f: &Finding, w: &Wakeup, cx: &Ctx, out: &mut Out) {
    if let Err(why) = super::works::due_at(w, cx, f.expected, TOL) {
        out.put("chain_start", None, format!("woken_by queue: {why}"));
    }
}

/// A soft-timer start: the referee's own soft-timer start of the victim's wake-up has the
/// link's thread, and expected_ts is its due time (within 2 us: the clocks' conversion).
fn soft_timer_start(f: &Finding, cx: &Ctx, out: &mut Out) {
    let st = own_wakeup(f, cx).and_then(|w| chains::soft_timer(w, cx));
    let why = match (st, f.expected) {
        (None, _) => "woken_by soft_timer, but the referee finds no soft-timer start".to_string(),
        (Some(st), _) if st.thread.pid != f.chain[0].pid => {
            format!("the soft timer ran in pid {}", st.thread.pid)
        }
        (Some(st), Some(e)) if (e - st.due).abs() <= 2_000 => return,
        (Some(st), _) => format!(
            "expected_ts is not the soft timer's due time {:.9}",
            s(st.due)
        ),
    };
    out.put("chain_start", None, why);
}

/// A timer start: the due_evidence timer rule holds for the first link's task as the victim.
fn timer_start(f: &Finding, cut: &Cut, cx: &Ctx, out: &mut Out) {
    let Some(seg) = cut.segments.iter().find(|g| g.link == Some(0)) else {
        return;
    };
    let mut due = Out::default();
    super::rules_wakeup::due_evidence(&seg.finding, cx, &mut due);
    for v in due.0 {
        let why = format!(
            "timer start of {}-{}: {}",
            seg.finding.comm, f.chain[0].pid, v.why
        );
        out.put("chain_start", None, why);
    }
}

/// chain_links: each link is a link the referee follows (its wake-up from woken_ts to
/// run_ts on its CPU, woken by the previous link's task; it wakes the next at wakes_next_ts
/// in task context on that CPU, with no switch or lost events on the way), the times are in
/// order, each waker's run is exactly one waker_run stretch held by its task, and the
/// referee's own chain from the victim's wake-up has the same tasks.
pub fn chain_links(f: &Finding, cut: &Cut, cx: &Ctx, out: &mut Out) {
    for (i, l) in f.chain.iter().enumerate() {
        link_holds(f, i, l, cx, out);
    }
    in_order(f, out);
    waker_runs(f, cx, out);
    for &(k, i) in &cut.in_runs {
        let why = format!(
            "a {} stretch inside link {i}'s run: the waker's run is one waker_run stretch",
            f.timeline[k].kind
        );
        out.put("chain_links", Some(k), why);
    }
    same_as_referee(f, cx, out);
}

/// The task woken at a link's wakes_next_ts: the next link's, or the victim.
fn next_of(f: &Finding, i: usize) -> (i64, i64) {
    match f.chain.get(i + 1) {
        Some(n) => (n.pid, n.woken),
        None => (f.pid, f.wakeup),
    }
}

/// One link against the referee's wake-ups and the raw events of its CPU.
fn link_holds(f: &Finding, i: usize, l: &Link, cx: &Ctx, out: &mut Out) {
    let mut bad =
        |why: String| out.put("chain_links", None, format!("link {i} ({}): {why}", l.pid));
    if i > 0 && l.woken_by != "task" {
        bad(format!("woken_by {:?}, not task", l.woken_by));
    }
    match cx.sched.wakeup_at(l.pid, l.woken) {
        None => bad(format!(
            "woken_ts {:.9} starts no wake-up of it",
            s(l.woken)
        )),
        Some(w) if (w.end - l.run).abs() > TOL || w.end_cpu != l.cpu => bad(format!(
            "its wake-up ends at {:.9} on CPU{}",
            s(w.end),
            w.end_cpu
        )),
        Some(_) => {}
    }
    let (next_pid, next_woken) = next_of(f, i);
    if (l.wakes_next - next_woken).abs() > TOL {
        bad(format!(
            "wakes_next_ts is not {:.9}, when pid {next_pid} was woken",
            s(next_woken)
        ));
    }
    let waking = cx
        .trace
        .inside(l.cpu, l.wakes_next - TOL - 1, l.wakes_next + TOL + 1)
        .any(|e| {
            matches!(e.name.as_str(), "sched_waking" | "sched_wakeup")
                && e.num("pid") == Some(next_pid)
                && e.pid == l.pid
                && match l.woken_by.as_str() {
                    // It runs the victim's timer callback in a softirq (claims.md, soft_timer).
                    "soft_timer" => !e.in_hardirq() && e.flags.is_some(),
                    _ => e.in_interrupt() == Some(false),
                }
        });
    if !waking {
        bad(format!(
            "no waking of pid {next_pid} in its task context on CPU{} at wakes_next_ts",
            l.cpu
        ));
    }
    if cx.sched.switches_inside(l.cpu, l.run, l.wakes_next) > 0 {
        bad(format!(
            "a switch on CPU{} between its run and its waking",
            l.cpu
        ));
    }
    if lost_between(cx, l.cpu, l.run, l.wakes_next) {
        bad(format!(
            "events lost on CPU{} between its run and its waking",
            l.cpu
        ));
    }
}

/// expected_ts <= each link's woken_ts <= run_ts <= wakes_next_ts <= ... <= wakeup_ts <=
/// run_ts.
fn in_order(f: &Finding, out: &mut Out) {
    let mut times = vec![f.window_start()];
    for l in &f.chain {
        times.extend([l.woken, l.run, l.wakes_next]);
    }
    times.extend([f.wakeup, f.run]);
    if let Some(k) = times.windows(2).position(|p| p[0] > p[1] + TOL) {
        let why = format!(
            "times out of order: {:.9} then {:.9}",
            s(times[k]),
            s(times[k + 1])
        );
        out.put("chain_links", None, why);
    }
}

/// The link whose run [run_ts, wakes_next_ts] on its CPU a waker_run stretch is exactly.
fn run_of<'a>(f: &'a Finding, st: &Stretch) -> Option<(usize, &'a Link)> {
    f.chain.iter().enumerate().find(|(_, l)| {
        (st.start - l.run).abs() <= TOL && (st.end - l.wakes_next).abs() <= TOL && st.cpu == l.cpu
    })
}

/// Each waker_run stretch is one link's run, held by the link's task (its CPU's task over it,
/// no switch, no other task's event inside), once; each link that ran before waking the next
/// has one.
fn waker_runs(f: &Finding, cx: &Ctx, out: &mut Out) {
    let mut seen = vec![0; f.chain.len()];
    for (k, st) in f
        .timeline
        .iter()
        .enumerate()
        .filter(|(_, s)| s.kind == "waker_run")
    {
        let Some((i, l)) = run_of(f, st) else {
            out.put("chain_links", Some(k), "waker_run is no link's run".into());
            continue;
        };
        seen[i] += 1;
        if let Err(why) = held_by(st, l.pid, cx) {
            out.put("chain_links", Some(k), format!("link {i}'s run: {why}"));
        }
    }
    for (i, l) in f.chain.iter().enumerate() {
        // A zero-length run may be left out.
        let want = if l.wakes_next > l.run + TOL {
            1..=1
        } else {
            0..=1
        };
        if !want.contains(&seen[i]) {
            let why = format!("link {i}'s run has {} waker_run stretches", seen[i]);
            out.put("chain_links", None, why);
        }
    }
}

/// The waker's run is its task's: named by pid, the CPU's task at its start, no switch and
/// no event of another task inside.
fn held_by(st: &Stretch, pid: i64, cx: &Ctx) -> Result<(), String> {
    if st.culprit_pid != Some(pid)
        || !st
            .culprit
            .as_ref()
            .is_some_and(|c| c.ends_with(&format!("-{pid}")))
    {
        return Err(format!(
            "culprit {:?} ({:?}), not pid {pid}",
            st.culprit, st.culprit_pid
        ));
    }
    if cx.sched.current_at(st.cpu, st.start + TOL) != Some(pid) {
        return Err(format!(
            "CPU{} ran {:?}",
            st.cpu,
            cx.sched.current_at(st.cpu, st.start + TOL)
        ));
    }
    if cx.sched.switches_inside(st.cpu, st.start, st.end) > 0 {
        return Err("a switch inside".into());
    }
    match (cx.trace.inside(st.cpu, st.start + TOL, st.end - TOL))
        .find(|e| e.pid != pid && e.pid >= 0)
    {
        Some(e) => Err(format!("{} of pid {} inside", e.name, e.pid)),
        None => Ok(()),
    }
}

/// The referee's own chain back from the victim's wake-up has as many links, of the same
/// tasks.
fn same_as_referee(f: &Finding, cx: &Ctx, out: &mut Out) {
    let Some(w) = own_wakeup(f, cx) else { return };
    let mine: Vec<i64> = chains::follow(w, cx)
        .unwrap_or_default()
        .iter()
        .map(|w| w.pid)
        .collect();
    let theirs: Vec<i64> = f.chain.iter().map(|l| l.pid).collect();
    if mine != theirs {
        let why = match mine.is_empty() {
            true => "the referee proves no chain back from this wake-up".to_string(),
            false => format!("the referee's chain is pids {mine:?}"),
        };
        out.put("chain_links", None, why);
    }
}

/// A finding of another source lists no chain.
pub fn no_chain_listed(f: &Finding, out: &mut Out) {
    if !f.chain.is_empty() {
        let why = format!(
            "source {} with a chain of {} links",
            f.source,
            f.chain.len()
        );
        out.put("chain_links", None, why);
    }
}

#[cfg(test)]
mod tests {
    use super::super::finding::{Component, Finding, Link, Stretch};
    use super::super::{check_finding, peers, root, Ctx};
    use std::collections::BTreeSet;

    /// A time of pipe_chain's trace, in ns after 49176 s.
    fn t(ns: i64) -> i64 {
        49_176_000_000_000 + ns
    }

    fn stretch(kind: &str, cpu: u32, (start, end): (i64, i64), culprit: &str) -> Stretch {
        Stretch {
            kind: kind.into(),
            before: end <= 122_725_000,
            cpu,
            start: t(start),
            end: t(end),
            culprit: (!culprit.is_empty()).then(|| culprit.to_string()),
            culprit_pid: culprit.rsplit_once('-').and_then(|(_, p)| p.parse().ok()),
            detail: String::new(),
        }
    }

    /// pipe_chain's seq 992 as its README derives it by hand: the producer (17895, CPU0) due
    /// at 122679.084 by its timer, CPU0 silent until the timer interrupt at 122707, woken
    /// inside it at 122708, run at 122723, waking the consumer (17894) at 122725; the
    /// consumer behind fifo_burst on CPU1 until 126023.
    fn seq_992() -> Finding {
        let timeline = vec![
            stretch("black_hole", 0, (122_679_084, 122_707_000), ""),
            stretch(
                "hardirq",
                0,
                (122_707_000, 122_708_000),
                "vector 236 (local_timer)",
            ),
            stretch(
                "hardirq",
                0,
                (122_708_000, 122_715_000),
                "vector 236 (local_timer)",
            ),
            stretch("kernel_path", 0, (122_715_000, 122_723_000), ""),
            stretch("waker_run", 0, (122_723_000, 122_725_000), "producer-17895"),
            stretch(
                "higher_priority",
                1,
                (122_725_000, 126_023_000),
                "fifo_burst-17892",
            ),
        ];
        let mut components: Vec<Component> = Vec::new();
        for s in &timeline {
            let us = (s.end - s.start) as f64 / 1e3;
            match components
                .iter_mut()
                .find(|c| c.kind == s.kind && c.culprit == s.culprit)
            {
                Some(c) => c.us += us,
                None => components.push(Component {
                    kind: s.kind.clone(),
                    culprit: s.culprit.clone(),
                    us,
                }),
            }
        }
        Finding {
            set: "t".into(),
            comm: "consumer".into(),
            pid: 17894,
            prio: 29,
            cpu: 1,
            latency_us: 3343.916,
            source: "chain".into(),
            expected: Some(t(122_679_084)),
            wakeup: t(122_725_000),
            run: t(126_023_000),
            run_at: "switch".into(),
            root_cause: "higher_priority".into(),
            components,
            timeline,
            chain: vec![Link {
                pid: 17895,
                comm: "producer".into(),
                prio: 19,
                cpu: 0,
                woken: t(122_708_000),
                run: t(122_723_000),
                wakes_next: t(122_725_000),
                woken_by: "timer".into(),
                interrupt: None,
            }],
        }
    }

    fn rules(f: &Finding, cx: &Ctx) -> BTreeSet<&'static str> {
        check_finding(f, cx).iter().map(|v| v.rule).collect()
    }

    /// The chain by hand holds every rule; each of its claims made false is flagged by the
    /// rule stating it.
    #[test]
    fn pipe_chains_worst_chain_by_hand() {
        let path = root().join("tests/fixtures/recorded/pipe_chain/trace.txt.zst");
        let cx = Ctx::new(peers::read(&path).unwrap().1);
        let f = seq_992();
        assert_eq!(
            check_finding(&f, &cx).len(),
            0,
            "{:?}",
            check_finding(&f, &cx)
        );
        let mutated = |edit: &dyn Fn(&mut Finding)| {
            let mut m = seq_992();
            edit(&mut m);
            rules(&m, &cx)
        };
        // Armed at 120712: due before that, the timer cannot have been.
        assert!(mutated(&|m| m.expected = Some(t(120_700_000))).contains("chain_start"));
        assert!(mutated(&|m| m.chain[0].woken_by = "interrupt".into()).contains("chain_start"));
        assert!(mutated(&|m| m.chain[0].pid = 17892).contains("chain_links"));
        assert!(mutated(&|m| m.chain[0].wakes_next -= 1_000).contains("chain_links"));
        assert!(mutated(&|m| m.timeline[4].culprit_pid = Some(0)).contains("chain_links"));
        assert!(mutated(&|m| m.timeline[4].kind = "kernel_path".into()).contains("chain_links"));
        assert!(mutated(&|m| m.timeline[2].cpu = 1).contains("stretch_cpu"));
        let dropped = mutated(&|m| {
            m.source = "wakeup".into();
            m.expected = None;
            m.chain.clear();
        });
        assert!(dropped.contains("chain_required"));
    }
}
