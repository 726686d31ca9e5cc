//! Cutting one late wake-up into stretches, from the CPUs' recent history.
//!
//! The latency runs from the expected time to the moment the task ran. Before the wake-up, the
//! CPU whose interrupt woke the task is examined: other interrupts running when the timer was
//! due are `hardirq`, the wake-up's own interrupt is `kernel_path`, and task time while the
//! timer was overdue means its interrupt came late. Each claim needs its evidence:
//! - `irqs_off` when the trace shows interrupts disabled (a `preemptirq` section still open, or
//!   the task's last event before that time flagged `d`);
//! - `black_hole` only for a silence (no event at all on the CPU) that ends with an interrupt
//!   arriving (or with the wake-up), when the due time is proven
//!   (timer or cyclictest mark), the trace shows this CPU's interrupts, and interrupts were on
//!   as far as the flags show; and, when a task (not idle) held the CPU and the recording has
//!   no `preemptirq` irq_disable/enable to prove interrupts stayed on, only when no other CPU
//!   was traced in the middle half of the silence: a whole machine going silent is an SMI or a
//!   stopped VM (whose CPUs resume a little apart), one busy CPU going silent may as well be
//!   kernel code with interrupts off, so that is `unknown`;
//! - between the timer's soft and hard expiry, `kernel_path` (the slack the kernel may use);
//! - anything else (events with interrupts on while the timer was overdue, a silence the trace
//!   cannot account for) is `unknown`: the trace does not show why.
//!
//! After the wake-up, the CPU the task was queued on is examined: a task the scheduler must
//! prefer ([`super::rank`]) is `higher_priority`, one of the same rank `fair_share`, one the
//! victim strictly outranks that kept the CPU `preempt_off` (`irqs_off` with its caller while a
//! `preemptirq` irq_disable was open), each by the task's own priority:
//! a task switched out with a priority that ranks differently from the one it was switched in
//! with, or whose priority (or pid) the trace never printed, is `unknown`, with no culprit;
//! other interrupts `hardirq` and `softirq`. Every nanosecond lands in exactly one stretch; what the history does not cover is
//! `unknown`.

use super::cause::{Cause, Phase};
use super::finding::{Component, Culprit, Note};
use super::rank;
use super::timeline::{Activity, CpuTimeline, Irq, Stretch, WakeContext};
use crate::names::{NameId, Names};
use rtsleuth_trace::event::Timestamp;
use std::cmp::Ordering;

/// A stretch shorter than this, of an overdue timer or of a lower-priority task keeping the
/// CPU, is the ordinary cost of interrupt delivery or of reaching the switch, not a cause.
pub const MIN_CAUSE_NS: u64 = 10_000;

/// The longest stretch that may be called `kernel_path`. The wake-up path (interrupt entry,
/// callback, reschedule IPI, leaving idle, reaching the switch) costs microseconds; a CPU that
/// stays in it for milliseconds was held by something the trace does not show (a vCPU the
/// hypervisor did not run, a deep idle state), so longer is `unknown`. Timer slack is exempt:
/// the timer's own `expires=` proves the kernel was allowed that time.
pub const KERNEL_PATH_MAX_NS: u64 = 1_000_000;

/// The wake-up being explained.
#[derive(Debug, Clone)]
pub struct WakeUp {
    pub pid: i32,
    /// The woken task's priority when it was woken: who outranks it.
    pub prio: i32,
    /// The priority its switch-in printed. Another one means it changed while the task
    /// waited, at a moment the trace does not show (Android's binder lends priorities).
    pub ran_prio: i32,
    pub wakeup: Timestamp,
    pub waker_cpu: u32,
    pub context: WakeContext,
    /// The hrtimer the task armed, when that timer's callback woke it.
    pub own_timer: Option<u64>,
    /// When that timer's hard expiry was, in the trace clock: until then the kernel may run it
    /// late by design (timer slack).
    pub slack_until: Option<Timestamp>,
    /// The CPUs the task waited on, each from when: the wake-up's target, then migrations.
    pub queue: Vec<(u32, Timestamp)>,
    /// A work's queueing woke it (a kworker): before the wake-up is that queueing's path.
    pub by_queueing: bool,
}

impl WakeUp {
    /// A wait of `pid` (priority `prio`) that began on `waker_cpu` at `ts`, queued on `queue`;
    /// no interrupt context, no timer of its own.
    pub fn new(pid: i32, prio: i32, (waker_cpu, ts): (u32, Timestamp), queue: u32) -> WakeUp {
        WakeUp {
            pid,
            prio,
            ran_prio: prio,
            wakeup: ts,
            waker_cpu,
            context: WakeContext::default(),
            own_timer: None,
            slack_until: None,
            queue: vec![(queue, ts)],
            by_queueing: false,
        }
    }

    /// It waits on `cpu` from `ts` on (its wake-up's target, or a migration).
    pub fn queued(&mut self, cpu: u32, ts: Timestamp) {
        if self.queue.last().is_some_and(|&(c, _)| c != cpu) {
            self.queue.push((cpu, ts));
        }
    }
}

/// What the stretches are judged by, beyond the wake-up itself.
#[derive(Debug, Clone, Copy)]
pub struct Window {
    /// Where the explained time starts: the due time, or the wake-up.
    pub from: Timestamp,
    /// Where it ends.
    pub run: Timestamp,
    /// The CPU it ran on. When that is not the last CPU of the wake-up's queue, it moved there
    /// without a traced migration, at a time the trace does not show.
    pub run_cpu: u32,
    /// The due time is proven (its timer or a cyclictest mark), not estimated.
    pub proven: bool,
}

/// The stretches of the window, contiguous and in time order.
pub fn decompose(
    cpus: &[Option<CpuTimeline>],
    names: &Names,
    w: &WakeUp,
    win: Window,
) -> Vec<Component> {
    let mut pieces = Vec::new();
    let judge = Judge { names, w, win };
    let before = (win.from, w.wakeup.min(win.run));
    if before.0 < before.1 && w.by_queueing {
        // Only the queueing's own events lie in here (docs/claims.md, "Works").
        let phase = Phase::BeforeWakeup;
        let path = Component::new(
            Cause::KernelPath,
            phase,
            w.waker_cpu,
            before,
            None,
            Note::QueuePath,
        );
        pieces.push(path);
    } else if before.0 < before.1 {
        let from = (w.waker_cpu, win.from);
        judge.cover(cpus, from, before, Phase::BeforeWakeup, &mut pieces);
    }
    let moved_untraced = w.queue.last().is_some_and(|&(cpu, _)| cpu != win.run_cpu);
    for (i, &(cpu, queued)) in w.queue.iter().enumerate() {
        let to = w.queue.get(i + 1).map_or(win.run, |&(_, t)| t).min(win.run);
        let from = queued.max(w.wakeup).max(win.from);
        if to <= from {
            continue;
        }
        if moved_untraced && i + 1 == w.queue.len() {
            // Somewhere in here it left this CPU's queue for the one it ran on; which CPU held
            // it when is not in the trace, so neither CPU's activity is its cause.
            let note = Note::UntracedMove { to: win.run_cpu };
            let piece = Component::new(
                Cause::Unknown,
                Phase::AfterWakeup,
                cpu,
                (from, to),
                None,
                note,
            );
            pieces.push(piece);
        } else {
            let queued = queued.max(w.wakeup);
            judge.cover(
                cpus,
                (cpu, queued),
                (from, to),
                Phase::AfterWakeup,
                &mut pieces,
            );
        }
    }
    brief_preemption_is_the_path(&mut pieces);
    pieces
}

/// Stretches of the joined timeline that would be `kernel_path` but last longer than
/// [`KERNEL_PATH_MAX_NS`] are `unknown`: the trace does not show what held the CPU that long.
pub fn bound_kernel_path(timeline: &mut [Component]) {
    for c in timeline.iter_mut().filter(|c| {
        c.cause == Cause::KernelPath && c.ns > KERNEL_PATH_MAX_NS && c.note != Note::TimerSlack
    }) {
        c.cause = Cause::Unknown;
        c.note = Note::PathOverBound {
            idle: c.note == Note::IdleExit,
        };
    }
}

/// A task the victim outranks that got out of the way within [`MIN_CAUSE_NS`] in all (with
/// preemption or interrupts off, or chosen over the victim) was only on its way to the switch.
fn brief_preemption_is_the_path(pieces: &mut [Component]) {
    let mut totals: Vec<(i32, u64)> = Vec::new();
    for (pid, ns) in pieces
        .iter()
        .filter_map(|p| Some((outranked_holder(p)?, p.ns)))
    {
        match totals.iter_mut().find(|(p, _)| *p == pid) {
            Some((_, sum)) => *sum += ns,
            None => totals.push((pid, ns)),
        }
    }
    for p in pieces.iter_mut() {
        let Some(pid) = outranked_holder(p) else {
            continue;
        };
        if totals.iter().any(|&(q, ns)| q == pid && ns < MIN_CAUSE_NS) {
            p.cause = Cause::KernelPath;
            p.culprit = None;
            p.note = Note::Scheduling;
        }
    }
}

/// The task the victim outranks that kept the CPU in a piece after the wake-up, if any.
fn outranked_holder(p: &Component) -> Option<i32> {
    match (p.cause, p.note, p.culprit) {
        (Cause::Unknown, Note::ChosenOverVictim { pid }, _) => Some(pid),
        (Cause::PreemptOff, _, Some(Culprit::Task(pid))) => Some(pid),
        (Cause::IrqsOff, _, Some(Culprit::Task(pid))) if p.phase == Phase::AfterWakeup => Some(pid),
        _ => None,
    }
}

struct Judge<'a> {
    names: &'a Names,
    w: &'a WakeUp,
    win: Window,
}

/// Which part of a task stretch a piece lies in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Part {
    /// Between the stretch's first and last event: events no more than a silence apart.
    Events,
    /// After its last event: nothing at all on the CPU.
    Silent,
}

/// The silence after a task's last event in a stretch whose end nothing shows it held: a
/// task's event followed with no switch to it traced, or nothing followed yet. Who held the
/// CPU there is not recorded, so no one is named (claims.md, task_holds_cpu). The victim's own
/// stretch is judged as usual.
fn unshown_tail(s: &Stretch, part: Part, victim: i32) -> Option<(Cause, Option<Culprit>, Note)> {
    let Activity::Task { pid, .. } = s.activity else {
        return None;
    };
    if part != Part::Silent || pid == victim {
        return None;
    }
    let note = match (s.ended_untraced, s.open) {
        (true, _) => Note::UntracedSwitch { pid },
        (false, true) => Note::NothingSince { pid },
        (false, false) => return None,
    };
    Some((Cause::Unknown, None, note))
}

impl Judge<'_> {
    /// Appends the pieces of `[from, to)` on `cpu`, where the victim waits from `queued` on
    /// after its wake-up.
    fn cover(
        &self,
        cpus: &[Option<CpuTimeline>],
        (cpu, queued): (u32, Timestamp),
        (from, to): (Timestamp, Timestamp),
        phase: Phase,
        out: &mut Vec<Component>,
    ) {
        let piece =
            |cause, span, culprit, note| Component::new(cause, phase, cpu, span, culprit, note);
        let Some(Some(tl)) = cpus.get(cpu as usize) else {
            out.push(piece(Cause::Unknown, (from, to), None, Note::NoHistory));
            return;
        };
        let mut cursor = from;
        if tl.earliest() > from {
            let end = tl.earliest().min(to);
            out.push(piece(
                Cause::Unknown,
                (from, end),
                None,
                Note::OutsideWindow,
            ));
            cursor = end;
        }
        for s in tl.between(cursor, to) {
            let span = (s.start.max(cursor), s.end.min(to));
            if span.1 <= span.0 {
                continue;
            }
            cursor = span.1;
            if let Activity::Irq { irq, seq } = s.activity {
                let own = cpu == self.w.waker_cpu && self.w.context.seq == Some(seq);
                let (cause, culprit, note) = self.interrupt(irq, own, phase);
                out.push(piece(cause, span, culprit, note));
                continue;
            }
            let quiet = s.last_event.clamp(span.0, span.1);
            // Before the wake-up, task time up to the timer's hard expiry is its slack.
            let slack_until = self.w.slack_until.filter(|_| phase == Phase::BeforeWakeup);
            for (part, (a, b)) in [
                (Part::Events, (span.0, quiet)),
                (Part::Silent, (quiet, span.1)),
            ] {
                let cut = slack_until.map_or(a, |hard| hard.clamp(a, b));
                if cut > a {
                    out.push(piece(Cause::KernelPath, (a, cut), None, Note::TimerSlack));
                }
                if b > cut {
                    // The middle half: the CPUs of a stopped machine resume a little apart.
                    let others_traced = || {
                        let q = (b - cut) / 4;
                        (cpus.iter().enumerate())
                            .filter(|(i, _)| *i != cpu as usize)
                            .flat_map(|(_, t)| t.as_ref())
                            .any(|t| t.traced_within(cut + q, b - q))
                    };
                    let (cause, culprit, note) = match (phase, unshown_tail(&s, part, self.w.pid)) {
                        (_, Some(judged)) => judged,
                        (Phase::BeforeWakeup, None) => {
                            self.overdue(tl, &s, (cut, b), part, &others_traced)
                        }
                        (Phase::AfterWakeup, None) => self.waiting(&s, queued),
                    };
                    out.push(piece(cause, (cut, b), culprit, note));
                }
            }
        }
    }

    fn interrupt(&self, irq: Irq, own: bool, phase: Phase) -> (Cause, Option<Culprit>, Note) {
        match irq {
            Irq::Callback { hrtimer, .. } if own && self.w.own_timer == Some(hrtimer) => {
                (Cause::KernelPath, None, Note::WakeCallback)
            }
            Irq::Callback {
                function,
                softirq: Some(_),
                ..
            } => (
                Cause::Softirq,
                Some(irq.culprit()),
                Note::SoftirqCallback(function),
            ),
            Irq::Softirq { .. } | Irq::Callback { soft: true, .. } => {
                (Cause::Softirq, Some(irq.culprit()), Note::Interrupt)
            }
            Irq::Callback { .. } => (Cause::Hardirq, Some(irq.culprit()), Note::Interrupt),
            _ if own => (Cause::KernelPath, None, Note::WakeInterrupt),
            Irq::Vector { name, .. } | Irq::Ipi { kind: name, .. }
                if phase == Phase::AfterWakeup && is_resched(self.names, name) =>
            {
                (Cause::KernelPath, None, Note::ReschedIpi)
            }
            Irq::Vector { .. } | Irq::Handler { .. } | Irq::Ipi { .. } => {
                (Cause::Hardirq, Some(irq.culprit()), Note::Interrupt)
            }
        }
    }

    /// Task time on the waker's CPU while the timer was due: why did its interrupt not come?
    fn overdue(
        &self,
        tl: &CpuTimeline,
        s: &Stretch,
        (from, to): (Timestamp, Timestamp),
        part: Part,
        others_traced: &dyn Fn() -> bool,
    ) -> (Cause, Option<Culprit>, Note) {
        let Activity::Task { pid, .. } = s.activity else {
            return (Cause::Unknown, None, Note::NoHistory);
        };
        if self.w.context.hard_entry.is_some_and(|e| e <= from) && to <= self.w.wakeup {
            // After the waking interrupt's entry, events stayed hard-IRQ up to the waking
            // (its frames' exits came first): still that interrupt.
            return (Cause::KernelPath, None, Note::WakeInterrupt);
        }
        if to - from < MIN_CAUSE_NS {
            return (Cause::KernelPath, None, Note::InterruptDelivery);
        }
        let task = Some(Culprit::Task(pid));
        if let Some(caller) = s.irqs_off_at {
            if is_path_caller(self.names, caller) {
                // Interrupts went off because the interrupt arrived (its entry), or to switch.
                return (Cause::KernelPath, None, Note::InterruptDelivery);
            }
            return (Cause::IrqsOff, task, Note::IrqsOffCaller(caller));
        }
        let flagged_off = pid != 0 && s.last_irqs_off;
        match part {
            Part::Events if flagged_off && !s.irqs_on_seen => {
                (Cause::IrqsOff, task, Note::IrqsOffFlag)
            }
            Part::Events => (Cause::Unknown, None, Note::EventsWhileOverdue),
            Part::Silent if flagged_off && !s.ended_irqs_on => {
                (Cause::IrqsOff, task, Note::IrqsOffFlag)
            }
            Part::Silent if self.win.proven && tl.irqs_traced && (pid == 0 || tl.flags_known) => {
                self.silence(tl, s, pid, (from, to), others_traced)
            }
            Part::Silent => (Cause::Unknown, None, Note::SilenceUnproven),
        }
    }

    /// No event at all while the timer was overdue, on a CPU whose interrupts and flags show.
    fn silence(
        &self,
        tl: &CpuTimeline,
        s: &Stretch,
        pid: i32,
        (from, to): (Timestamp, Timestamp),
        others_traced: &dyn Fn() -> bool,
    ) -> (Cause, Option<Culprit>, Note) {
        // A black hole ends with the interrupt it held back (or the wake-up itself); a CPU
        // that went on in task context was visibly running Linux.
        if to != self.w.wakeup && !(to == s.end && s.ended_by_interrupt) {
            let irqs_on = s.ended_irqs_on;
            let note = Note::SilenceThenTask {
                pid,
                from,
                to,
                irqs_on,
            };
            (Cause::Unknown, None, note)
        } else if pid == 0 {
            (Cause::BlackHole, None, Note::IdleLate)
        } else if !tl.irq_toggles_traced && others_traced() {
            let note = Note::SilenceWhileOthersRan { from, to };
            (Cause::Unknown, None, note)
        } else {
            (Cause::BlackHole, None, Note::NoEvents { from, to })
        }
    }

    /// A task on the CPU the woken task waits for, there since `queued`.
    fn waiting(&self, s: &Stretch, queued: Timestamp) -> (Cause, Option<Culprit>, Note) {
        let Activity::Task { pid, prio } = s.activity else {
            return (Cause::Unknown, None, Note::NoHistory);
        };
        if pid == 0 {
            return (Cause::KernelPath, None, Note::IdleExit);
        }
        if pid == self.w.pid {
            return (Cause::KernelPath, None, Note::Scheduling);
        }
        let note = Note::Ran {
            prio,
            need_resched: s.need_resched,
            preempt_off_at: s.preempt_off_at,
        };
        // A task the trace does not name (a placeholder pid) or whose priority it never
        // printed cannot be ranked against the victim.
        let Some(prio) = prio.filter(|_| pid > 0) else {
            return (Cause::Unknown, None, Note::Unranked { pid });
        };
        let cause = self.class(prio, self.w.prio);
        if self.class(prio, self.w.ran_prio) != cause {
            let note = Note::VictimPrioChanged {
                pid,
                from: self.w.prio,
                to: self.w.ran_prio,
            };
            return (Cause::Unknown, None, note);
        }
        if let Some(out) = s
            .prio_out
            .filter(|&out| self.class(out, self.w.prio) != cause)
        {
            let note = Note::PrioChanged {
                pid,
                from: prio,
                to: out,
            };
            return (Cause::Unknown, None, note);
        }
        if cause == Cause::PreemptOff && s.task_since >= queued {
            // The scheduler switched to it while the victim it ranks below waited here: RT
            // throttling or the fair server chose it, which the events do not show.
            return (Cause::Unknown, None, Note::ChosenOverVictim { pid });
        }
        let culprit = Some(Culprit::Task(pid));
        let irqs_off_at = s.irqs_off_at.filter(|&c| !is_path_caller(self.names, c));
        match irqs_off_at.filter(|_| cause == Cause::PreemptOff) {
            // Not even an interrupt could make it switch: interrupts were off, at this caller.
            Some(caller) => (Cause::IrqsOff, culprit, Note::IrqsOffCaller(caller)),
            None => (cause, culprit, note),
        }
    }

    /// The ranked class of a task of priority `prio` keeping a victim of `victim`'s waiting.
    fn class(&self, prio: i32, victim: i32) -> Cause {
        match rank::compare(prio, victim) {
            Ordering::Greater => Cause::HigherPriority,
            Ordering::Equal => Cause::FairShare,
            Ordering::Less => Cause::PreemptOff,
        }
    }
}

/// Interrupts turned off by the path itself: the entry of an arriving interrupt, or the
/// scheduler switching tasks.
fn is_path_caller(names: &Names, caller: NameId) -> bool {
    let name = names.get(caller);
    name.starts_with("irqentry_enter") || name.starts_with("__schedule")
}

/// The reschedule IPI is how a wake-up on another CPU makes this one switch: part of the path.
/// x86 names its vector `reschedule`, ARM's `ipi_entry` the kind `Rescheduling interrupts`.
fn is_resched(names: &Names, name: NameId) -> bool {
    matches!(names.get(name), "reschedule" | "Rescheduling interrupts")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `check` with a judge of a prio-19 victim woken at 1 000 on CPU 0, run at 5 000.
    fn with_judge(check: impl FnOnce(&Judge)) {
        let names = Names::default();
        let w = WakeUp::new(100, 19, (0, 1_000), 0);
        let win = Window {
            from: 1_000,
            run: 5_000,
            run_cpu: 0,
            proven: false,
        };
        check(&Judge {
            names: &names,
            w: &w,
            win,
        });
    }

    /// Rule E3 of issue 23 (point 8): a task whose priority the trace never printed, or the
    /// placeholder a Perfetto trace shows before a CPU's first switch (pid -1, prio -1, which
    /// would otherwise rank as SCHED_DEADLINE), is never the culprit of a ranked class.
    #[test]
    fn an_unranked_task_is_never_a_ranked_culprit() {
        let held_by = |pid, prio| Stretch {
            end: 5_000,
            ..Stretch::new(0, Activity::Task { pid, prio })
        };
        with_judge(|judge| {
            for (pid, prio) in [(-1, Some(-1)), (-1, Some(0)), (7, None)] {
                assert_eq!(
                    judge.waiting(&held_by(pid, prio), 1_000),
                    (Cause::Unknown, None, Note::Unranked { pid }),
                    "pid {pid} prio {prio:?}"
                );
            }
            // A task with its own printed priority is ranked as before.
            let (cause, culprit, _) = judge.waiting(&held_by(7, Some(9)), 1_000);
            assert_eq!(
                (cause, culprit),
                (Cause::HigherPriority, Some(Culprit::Task(7)))
            );
        });
    }

    /// A task the victim (prio 19) outranks that held the CPU since before the victim was
    /// queued there (1 000) kept it with preemption off; one switched in at or after that was
    /// chosen over the victim by something the events do not show.
    #[test]
    fn a_lower_task_switched_in_over_the_victim_is_no_preempt_off() {
        let since = |task_since| Stretch {
            end: 5_000,
            task_since,
            ..Stretch::new(
                2_000,
                Activity::Task {
                    pid: 7,
                    prio: Some(120),
                },
            )
        };
        with_judge(|judge| {
            let (cause, culprit, _) = judge.waiting(&since(500), 1_000);
            assert_eq!(
                (cause, culprit),
                (Cause::PreemptOff, Some(Culprit::Task(7)))
            );
            for t in [1_000, 2_000] {
                assert_eq!(
                    judge.waiting(&since(t), 1_000),
                    (Cause::Unknown, None, Note::ChosenOverVictim { pid: 7 })
                );
            }
        });
    }
}
