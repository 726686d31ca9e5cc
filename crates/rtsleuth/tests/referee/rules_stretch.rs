//! Rules for each stretch against the events of its CPU (docs/claims.md "Stretches"): its
//! CPU, black_hole (E2), the task culprits and their rank (E3), interrupt frames, irqs_off
//! evidence (E4).

use super::finding::{Finding, Stretch};
use super::frames::{self, Ctx as Irq};
use super::raw::{is_interrupt_event, Event};
use super::rules_wakeup::own_wakeup;
use super::{Ctx, Out};
use std::cmp::Ordering;

pub const RANKED: [&str; 3] = ["higher_priority", "fair_share", "preempt_off"];

/// stretch_cpu: a before-wakeup stretch is on the CPU that ran the waking; an after-wakeup
/// one on the task's runqueue CPU at its start (target_cpu, then migrations).
pub fn stretch_cpu(f: &Finding, cx: &Ctx, out: &mut Out) {
    let timerlat = f.run_at.starts_with("timerlat");
    let w = own_wakeup(f, cx);
    if w.is_none() && !timerlat {
        return;
    }
    for (i, s) in f.timeline.iter().enumerate() {
        let want = if let Some(w) = w.filter(|_| !timerlat) {
            if s.before {
                Some(w.waker_cpu)
            } else {
                w.rq_cpu_at(s.start)
            }
        } else {
            Some(f.cpu)
        };
        if want.is_some_and(|c| c != s.cpu) {
            out.put(
                "stretch_cpu",
                Some(i),
                format!("the CPU there is CPU{}", want.unwrap()),
            );
        }
    }
}

/// E2 black_hole: no event of the CPU strictly inside, and the CPU's first event at or after
/// the end is an interrupt arriving (or h-flagged), or the end is the wake-up.
pub fn black_hole(f: &Finding, cx: &Ctx, out: &mut Out) {
    for (i, s) in f
        .timeline
        .iter()
        .enumerate()
        .filter(|(_, s)| s.kind == "black_hole")
    {
        if let Some(e) = cx.trace.inside(s.cpu, s.start + 2, s.end - 2).next() {
            out.put(
                "E2_black_hole",
                Some(i),
                format!(
                    "{} of CPU{} at {:.6} inside",
                    e.name,
                    s.cpu,
                    e.ts as f64 / 1e9
                ),
            );
            continue;
        }
        if (s.end - f.wakeup).abs() <= 2 {
            continue;
        }
        let next = cx.trace.first_from(s.cpu, s.end - 2);
        if !next.is_some_and(arrival) {
            let what = next.map_or("nothing".into(), |e| format!("{} ({:?})", e.name, e.flags));
            out.put(
                "E2_black_hole",
                Some(i),
                format!("followed by {what}, not an interrupt arriving"),
            );
        }
    }
}

/// An interrupt arriving: its entry, an event in hard-IRQ context, or the entry code turning
/// interrupts off (traced before the vector's entry where preemptirq events are on).
fn arrival(e: &Event) -> bool {
    let n = e.name.as_str();
    e.in_hardirq()
        || n == "irq_handler_entry"
        || n == "hrtimer_expire_entry"
        || (n.ends_with("_entry") && n != "softirq_entry" && is_interrupt_event(n))
        || (n == "irq_disable"
            && e.field("caller")
                .is_some_and(|c| c.starts_with("irqentry_enter")))
}

/// Rank of a printed prio: deadline (negative) > RT (lower number higher) > normal (one rank).
fn rank(prio: i64) -> (u8, i64) {
    match prio {
        p if p < 0 => (2, 0),
        p if p < 100 => (1, -p),
        _ => (0, 0),
    }
}

/// The class a culprit of prio `c` has against a victim of prio `v`.
fn class(c: i64, v: i64) -> &'static str {
    match rank(c).cmp(&rank(v)) {
        Ordering::Greater => "higher_priority",
        Ordering::Equal => "fair_share",
        Ordering::Less => "preempt_off",
    }
}

/// task_holds_cpu: the culprit of a task kind is the CPU's task at the start by the switches,
/// no switch happens inside, every event inside is its own, and so is the CPU's next event
/// from the end on (another task's there was switched in untraced, at a time not recorded).
pub fn task_holds_cpu(f: &Finding, cx: &Ctx, out: &mut Out) {
    for (i, s) in f.timeline.iter().enumerate() {
        let task_kind = RANKED.contains(&s.kind.as_str()) || s.kind == "irqs_off";
        let Some(pid) = s.culprit_pid.filter(|_| task_kind) else {
            continue;
        };
        if cx.sched.current_at(s.cpu, s.start) != Some(pid) {
            let cur = cx.sched.current_at(s.cpu, s.start);
            out.put(
                "task_holds_cpu",
                Some(i),
                format!("CPU{} ran {cur:?} at the start", s.cpu),
            );
        } else if cx.sched.switches_inside(s.cpu, s.start, s.end) > 0 {
            out.put("task_holds_cpu", Some(i), "a switch inside".into());
        } else if let Some(e) = cx
            .trace
            .inside(s.cpu, s.start, s.end)
            .find(|e| e.pid != pid && e.pid >= 0)
        {
            out.put(
                "task_holds_cpu",
                Some(i),
                format!("{} of pid {} inside", e.name, e.pid),
            );
        } else if let Some(e) = cx
            .trace
            .first_from(s.cpu, s.end - 2)
            .filter(|e| e.pid != pid && e.pid >= 0)
        {
            out.put(
                "task_holds_cpu",
                Some(i),
                format!(
                    "the CPU's next event, {} at {:.6}, is pid {}'s: no switch shows when it got the CPU",
                    e.name,
                    e.ts as f64 / 1e9,
                    e.pid
                ),
            );
        }
        if s.culprit
            .as_ref()
            .is_some_and(|c| !c.ends_with(&format!("-{pid}")))
        {
            out.put(
                "task_holds_cpu",
                Some(i),
                "culprit string names another pid".into(),
            );
        }
    }
}

/// E3 unknown task: a ranked class always names a culprit task whose prio was printed.
pub fn unknown_task_not_ranked(f: &Finding, cx: &Ctx, out: &mut Out) {
    for (i, s) in f
        .timeline
        .iter()
        .enumerate()
        .filter(|(_, s)| RANKED.contains(&s.kind.as_str()))
    {
        let known = s
            .culprit_pid
            .is_some_and(|p| p >= 0 && cx.sched.prio_at(p, s.start).is_some());
        if !known {
            out.put(
                "E3_unknown_task",
                Some(i),
                format!("culprit {:?} has no printed prio", s.culprit_pid),
            );
        }
    }
}

/// E3 rank: the culprit's own latest printed prio at the start, against the victim's, gives
/// the stretch's class; the victim's prio at its switch-in and the culprit's at the
/// switch-out ending its hold (at or before the run) give the same class.
pub fn rank_matches_class(f: &Finding, cx: &Ctx, out: &mut Out) {
    for (i, s) in f
        .timeline
        .iter()
        .enumerate()
        .filter(|(_, s)| RANKED.contains(&s.kind.as_str()))
    {
        let Some(pid) = s.culprit_pid else { continue };
        let Some(c) = cx.sched.prio_at(pid, s.start) else {
            continue;
        };
        let v = cx.sched.prio_at(f.pid, s.start).unwrap_or(f.prio);
        if class(c, v) != s.kind {
            out.put(
                "E3_rank",
                Some(i),
                format!("culprit prio {c} vs victim prio {v} is {}", class(c, v)),
            );
            continue;
        }
        if let Some(ran) = victim_run_prio(cx, f, s.start) {
            if class(c, ran) != s.kind {
                out.put(
                    "E3_rank",
                    Some(i),
                    format!("the victim ran with prio {ran}: {}", class(c, ran)),
                );
                continue;
            }
        }
        if let Some(out_prio) = switch_out_prio(cx, s, pid, f.run) {
            if class(out_prio, v) != s.kind {
                out.put(
                    "E3_rank",
                    Some(i),
                    format!(
                        "culprit left the CPU with prio {out_prio}: {}",
                        class(out_prio, v)
                    ),
                );
            }
        }
    }
}

/// E3_chosen_over_victim: a preempt_off culprit already held the stretch's CPU before the
/// victim was queued there (the runqueue entry's time); one switched in as or after the
/// victim was queued there (by the very switch that preempted it, say) was chosen over it.
pub fn chosen_over_victim(f: &Finding, cx: &Ctx, out: &mut Out) {
    let Some(w) = own_wakeup(f, cx) else { return };
    for (i, s) in (f.timeline.iter().enumerate())
        .filter(|(_, s)| !s.before && s.kind == "preempt_off" && s.culprit_pid.is_some())
    {
        let queued = (w.rq.iter().rev())
            .find(|(t, _)| *t <= s.start)
            .or(w.rq.first())
            .filter(|(_, c)| *c == s.cpu)
            .map(|(t, _)| *t);
        let (Some(queued), Some(since)) = (queued, cx.sched.switched_in_at(s.cpu, s.start)) else {
            continue;
        };
        if since >= queued {
            out.put(
                "E3_chosen_over_victim",
                Some(i),
                format!(
                    "the culprit got CPU{} at {:.6}, after the victim was queued there at {:.6}",
                    s.cpu,
                    since as f64 / 1e9,
                    queued as f64 / 1e9
                ),
            );
        }
    }
}

/// The prio the victim's switch-in at the run prints.
fn victim_run_prio(cx: &Ctx, f: &Finding, start: i64) -> Option<i64> {
    let at = (f.cpu, f.run - 3, f.run + 3);
    prio_at_switch(cx, at, "next", f.pid, start)
}

/// The prio the culprit left the CPU with.
fn switch_out_prio(cx: &Ctx, s: &Stretch, pid: i64, run: i64) -> Option<i64> {
    prio_at_switch(cx, (s.cpu, s.end - 3, run + 3), "prev", pid, s.start)
}

/// The `{side}_prio` of the first sched_switch on `cpu` in (lo, hi) whose `{side}_pid` is
/// `pid`, when nothing printed for `pid` between `start` and that switch (a traced
/// sched_pi_setprio) already explains a change.
fn prio_at_switch(
    cx: &Ctx,
    (cpu, lo, hi): (u32, i64, i64),
    side: &str,
    pid: i64,
    start: i64,
) -> Option<i64> {
    let (pid_field, prio_field) = (format!("{side}_pid"), format!("{side}_prio"));
    let switch = cx
        .trace
        .inside(cpu, lo, hi)
        .find(|e| e.name == "sched_switch" && e.num(&pid_field) == Some(pid))?;
    let unchanged = cx.sched.prio_at(pid, switch.ts - 1) == cx.sched.prio_at(pid, start);
    unchanged.then(|| switch.num(&prio_field)).flatten()
}

/// irq_frame_open: a hardirq/softirq stretch lies inside frames of that type naming its
/// culprit on its CPU.
pub fn irq_frame_open(f: &Finding, cx: &Ctx, out: &mut Out) {
    for (i, s) in f.timeline.iter().enumerate() {
        let ctx = match s.kind.as_str() {
            "hardirq" => Irq::Hard,
            "softirq" => Irq::Soft,
            _ => continue,
        };
        let culprit = s.culprit.as_deref().unwrap_or("");
        let none = frames::CpuFrames::default();
        let fr = cx.frames.get(&s.cpu).unwrap_or(&none);
        if !frames::covered(fr, ctx, culprit, s.start + 2, s.end - 2) {
            out.put(
                "irq_frame_open",
                Some(i),
                format!("no {} frame of {culprit} over it", s.kind),
            );
        }
    }
}

/// Events that run with interrupts off by construction: their `d` is no evidence (E4).
fn d_by_construction(e: &Event) -> bool {
    let n = e.name.as_str();
    matches!(
        n,
        "sched_switch"
            | "sched_waking"
            | "sched_wakeup"
            | "sched_wakeup_new"
            | "sched_migrate_task"
            | "sched_pi_setprio"
            | "hrtimer_start"
            | "hrtimer_cancel"
            | "hrtimer_init"
            | "timer_start"
            | "timer_cancel"
            | "timer_init"
            | "workqueue_queue_work"
            | "workqueue_activate_work"
            | "softirq_raise"
    ) || n.starts_with("sched_stat_")
        || n.starts_with("timer_expire_")
        || n.starts_with("hrtimer_expire_")
        || n.starts_with("irq_")
        || n.starts_with("local_timer_")
        || is_interrupt_event(n)
        || e.in_interrupt() == Some(true)
}

/// An `irq_disable` open over [a, b] on the CPU: the latest irq_disable/irq_enable at or
/// before a is a disable, and no irq_enable inside.
pub fn irq_disable_open(cx: &Ctx, cpu: u32, a: i64, b: i64) -> bool {
    let last = cx
        .trace
        .before(cpu, a + 2)
        .find(|e| e.name == "irq_disable" || e.name == "irq_enable");
    last.is_some_and(|e| e.name == "irq_disable")
        && !cx.trace.inside(cpu, a, b).any(|e| e.name == "irq_enable")
}

/// E4 irqs_off_evidence: an open irq_disable over the stretch; or, before the wake-up, the
/// culprit's last task-context event since its switch-in, at or before the start, that is not
/// `d` by construction says `d`, and no task-context event of the CPU inside says interrupts
/// on.
pub fn irqs_off_evidence(f: &Finding, cx: &Ctx, out: &mut Out) {
    for (i, s) in f
        .timeline
        .iter()
        .enumerate()
        .filter(|(_, s)| s.kind == "irqs_off")
    {
        if irq_disable_open(cx, s.cpu, s.start, s.end) {
            continue;
        }
        let holder = s
            .culprit_pid
            .or_else(|| cx.sched.current_at(s.cpu, s.start));
        let since = cx.sched.switched_in_at(s.cpu, s.start).unwrap_or(i64::MIN);
        let flagged = s.before
            && cx
                .trace
                .before(s.cpu, s.start + 2)
                .take_while(|e| e.ts >= since)
                .find(|e| Some(e.pid) == holder && e.task_context() && !d_by_construction(e))
                .is_some_and(|e| e.irqs_off() == Some(true));
        let enabled_inside = cx
            .trace
            .inside(s.cpu, s.start, s.end)
            .any(|e| e.task_context() && e.irqs_off() == Some(false));
        if !flagged || enabled_inside {
            out.put(
                "E4_irqs_off_evidence",
                Some(i),
                "no irq_disable open and no `d` evidence".into(),
            );
        }
    }
}

/// E4 after the wake-up: where an `irq_disable` is open on the runqueue CPU over a stretch,
/// interrupts were off: the stretch is `irqs_off` (with the caller), not `preempt_off`.
pub fn irqs_off_not_preempt_off(f: &Finding, cx: &Ctx, out: &mut Out) {
    for (i, s) in f.timeline.iter().enumerate() {
        if s.kind == "preempt_off" && !s.before && irq_disable_open(cx, s.cpu, s.start, s.end) {
            out.put(
                "E4_irqs_off_not_preempt_off",
                Some(i),
                "an irq_disable is open over it".into(),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::{text, Ctx};
    use super::*;

    /// console_unlock disables interrupts on CPU0 at 1.000000 and enables them at 1.500000;
    /// a stretch after the wake-up at 1.1–1.4 there is irqs_off, never preempt_off.
    #[test]
    fn an_open_irq_disable_is_irqs_off_not_preempt_off() {
        let cx = Ctx::new(text::parse(
            "  k-9 [000] d..1. 1.000000: irq_disable: caller=console_unlock+0x1/0x2 parent=x
  k-9 [000] ...1. 1.500000: irq_enable: caller=console_unlock+0x3/0x4 parent=x
",
        ));
        let stretch = |kind: &str| Stretch {
            kind: kind.into(),
            before: false,
            cpu: 0,
            start: 1_100_000_000,
            end: 1_400_000_000,
            culprit: None,
            culprit_pid: None,
            detail: String::new(),
        };
        let finding = |kind: &str| Finding {
            set: "t".into(),
            comm: "v".into(),
            pid: 5,
            prio: 10,
            cpu: 0,
            latency_us: 300_000.0,
            source: "wakeup".into(),
            expected: None,
            wakeup: 1_100_000_000,
            run: 1_400_000_000,
            run_at: "switch".into(),
            root_cause: kind.into(),
            components: Vec::new(),
            chain: Vec::new(),
            timeline: vec![stretch(kind)],
        };
        let mut out = Out::default();
        irqs_off_not_preempt_off(&finding("preempt_off"), &cx, &mut out);
        irqs_off_evidence(&finding("irqs_off"), &cx, &mut out);
        let rules: Vec<&str> = out.0.iter().map(|v| v.rule).collect();
        assert_eq!(rules, ["E4_irqs_off_not_preempt_off"]);
    }

    /// untraced_out's lines: rt-23953 is woken in an interrupt on tokio-rt-worker-75, whose
    /// last event is the interrupt's exit at 2.067897; rt's first event at 2.067946 has no
    /// switch to it. tokio-75 named for 2.067897-2.067946 is flagged; up to its last event it
    /// is not.
    #[test]
    fn a_holder_past_an_untraced_switch_is_flagged() {
        let cx = Ctx::new(text::parse(
            "  stress-1 [000] d..2. 2.000000: sched_switch: prev_comm=stress prev_pid=1 prev_prio=120 prev_state=R ==> next_comm=tokio-rt-worker next_pid=75 next_prio=120
  tokio-rt-worker-75 [000] d.h1. 2.067890: local_timer_entry: vector=236
  tokio-rt-worker-75 [000] d.h3. 2.067891: sched_waking: comm=rt pid=23953 prio=19 target_cpu=000
  tokio-rt-worker-75 [000] dNh1. 2.067897: local_timer_exit: vector=236
  rt-23953 [000] ..... 2.067946: hrtimer_setup: hrtimer=1 clockid=CLOCK_MONOTONIC mode=ABS
",
        ));
        let held_to = |end: i64| Finding {
            set: "t".into(),
            comm: "rt".into(),
            pid: 23953,
            prio: 19,
            cpu: 0,
            latency_us: 55.0,
            source: "wakeup".into(),
            expected: None,
            wakeup: 2_067_891_000,
            run: 2_067_946_000,
            run_at: "inferred".into(),
            root_cause: "preempt_off".into(),
            components: Vec::new(),
            chain: Vec::new(),
            timeline: vec![Stretch {
                kind: "preempt_off".into(),
                before: false,
                cpu: 0,
                start: 2_067_000_000,
                end,
                culprit: Some("tokio-rt-worker-75".into()),
                culprit_pid: Some(75),
                detail: String::new(),
            }],
        };
        let flagged = |end| {
            let mut out = Out::default();
            task_holds_cpu(&held_to(end), &cx, &mut out);
            out.0.len()
        };
        assert_eq!((flagged(2_067_946_000), flagged(2_067_897_000)), (1, 0));
    }

    /// The lab's tracer/black_hole run: CPU1 is silent until 4.548972, and the first event
    /// after is the entry code's `irq_disable caller=irqentry_enter` (the overdue timer
    /// interrupt arriving, traced before its vector): a black hole. A silence that ends in an
    /// `irq_disable` by a syscall's exit path ended in task context: not one.
    #[test]
    fn a_black_hole_may_end_with_the_entry_codes_irq_disable() {
        let trace = |caller: &str| {
            Ctx::new(text::parse(&format!(
                "  ct-82 [001] d..1. 4.486559: hrtimer_start: hrtimer=1 function=hrtimer_wakeup expires=1 softexpires=1 mode=ABS
  <idle>-0 [001] d..1. 4.548972: irq_disable: caller={caller} parent=0x0
  <idle>-0 [001] d.h1. 4.549000: local_timer_entry: vector=236
"
            )))
        };
        let finding = Finding {
            set: "t".into(),
            comm: "ct".into(),
            pid: 82,
            prio: 19,
            cpu: 1,
            latency_us: 62_441.0,
            source: "timer".into(),
            expected: Some(4_486_559_000),
            wakeup: 4_549_000_000,
            run: 4_549_000_000,
            run_at: "switch".into(),
            root_cause: "black_hole".into(),
            components: Vec::new(),
            chain: Vec::new(),
            timeline: vec![Stretch {
                kind: "black_hole".into(),
                before: true,
                cpu: 1,
                start: 4_486_559_000,
                end: 4_548_972_000,
                culprit: None,
                culprit_pid: None,
                detail: String::new(),
            }],
        };
        let rules = |caller: &str| {
            let mut out = Out::default();
            black_hole(&finding, &trace(caller), &mut out);
            out.0.iter().map(|v| v.rule).collect::<Vec<_>>()
        };
        assert!(rules("irqentry_enter+0x2a/0x50").is_empty());
        assert_eq!(
            rules("syscall_exit_to_user_mode+0xe7/0x110"),
            ["E2_black_hole"]
        );
    }

    /// The lab's rt/black_hole run: init-179 is boosted to 49 (sched_pi_setprio at 5.661879),
    /// switched in at 49 (5.661907), deboosted to 120 at 5.661952 and switched out at 120
    /// (5.661996). Over 5.661907–5.661952 it outranked cyclictest-190 (120): higher_priority
    /// holds; its switch-out prio is explained by the traced deboost. Without the setprio
    /// lines, the same switch-out contradicts the claim.
    #[test]
    fn a_traced_deboost_explains_the_switch_out_priority() {
        let lines = |pi: bool| {
            let setprio = |t: &str, old: u32, new: u32| {
                format!("  irq-162 [001] D..32 {t}: sched_pi_setprio: comm=init pid=179 oldprio={old} newprio={new}\n")
            };
            let mut t = String::new();
            if pi {
                t += &setprio("5.661879", 120, 49);
            }
            t += "  irq-162 [001] d..2. 5.661907: sched_switch: prev_comm=irq prev_pid=162 prev_prio=49 prev_state=D ==> next_comm=init next_pid=179 next_prio=49\n";
            if pi {
                t += &setprio("5.661952", 49, 120);
            }
            t += "  init-179 [001] d..2. 5.661996: sched_switch: prev_comm=init prev_pid=179 prev_prio=120 prev_state=R+ ==> next_comm=ct next_pid=190 next_prio=120\n";
            Ctx::new(text::parse(&t))
        };
        let finding = Finding {
            set: "t".into(),
            comm: "ct".into(),
            pid: 190,
            prio: 120,
            cpu: 1,
            latency_us: 45.0,
            source: "wakeup".into(),
            expected: None,
            wakeup: 5_661_907_000,
            run: 5_661_996_000,
            run_at: "switch".into(),
            root_cause: "higher_priority".into(),
            components: Vec::new(),
            chain: Vec::new(),
            timeline: vec![Stretch {
                kind: "higher_priority".into(),
                before: false,
                cpu: 1,
                start: 5_661_907_000,
                end: 5_661_952_000,
                culprit: Some("init-179".into()),
                culprit_pid: Some(179),
                detail: String::new(),
            }],
        };
        let rules = |pi: bool| {
            let mut out = Out::default();
            rank_matches_class(&finding, &lines(pi), &mut out);
            out.0.iter().map(|v| v.rule).collect::<Vec<_>>()
        };
        assert!(rules(true).is_empty(), "{:?}", rules(true));
        assert_eq!(rules(false), ["E3_rank"]);
    }
}
