//! Cutting one late wake-up into components, from the CPUs' recent history.
//!
//! The latency runs from the expected time to the switch. Before the wake-up, the CPU whose
//! interrupt woke the task is examined: other interrupts running when the timer was due are
//! `hardirq`, the wake-up's own interrupt is `kernel_path`, and task time while the timer was
//! overdue means its interrupt came late: `irqs_off` when the trace shows interrupts disabled
//! (a `preemptirq` section, or the last event flagged `d`), `black_hole` when it shows nothing
//! (idle, or no events with interrupts on). After the wake-up, the CPU the task was queued on
//! is examined: tasks of higher priority are `higher_priority`, tasks of lower or equal
//! priority that kept the CPU are `preempt_off`, other interrupts `hardirq` and `softirq`.
//! Every nanosecond lands in exactly one component; what the history does not cover is
//! `unknown`.

use super::cause::{Cause, Phase, Source};
use super::finding::{merge, Component, Culprit, Note};
use super::timeline::{Activity, CpuTimeline, Irq, Stretch, WakeContext};
use crate::analyze::names::{NameId, Names};
use crate::event::Timestamp;

/// A stretch shorter than this, of an overdue timer or of a lower-priority task keeping the
/// CPU, is the ordinary cost of interrupt delivery or of reaching the switch, not a cause.
pub const MIN_CAUSE_NS: u64 = 10_000;

/// The wake-up being explained.
#[derive(Debug, Clone)]
pub struct WakeUp {
    pub pid: i32,
    /// The woken task's priority: who outranks it.
    pub prio: i32,
    pub wakeup: Timestamp,
    pub waker_cpu: u32,
    pub context: WakeContext,
    /// The hrtimer the task armed, when that timer's callback woke it.
    pub own_timer: Option<u64>,
    /// When it was due, in the trace clock, and how that is known.
    pub due: Option<(Timestamp, Source)>,
    /// The CPUs the task waited on, each from when: the wake-up's target, then migrations.
    pub queue: Vec<(u32, Timestamp)>,
    /// Woken by its own timer while still on its CPU: the timer expired before the task could
    /// sleep (a late cycle), so it goes on where it is, with no switch, once the CPU returns to
    /// it from the interrupts.
    pub in_place: bool,
}

/// The components of `[expected, run]` (of `[wakeup, run]` without an expected time).
pub fn decompose(
    cpus: &[Option<CpuTimeline>],
    names: &Names,
    w: &WakeUp,
    expected: Option<Timestamp>,
    run: Timestamp,
) -> Vec<Component> {
    let mut pieces = Vec::new();
    if let Some(expected) = expected.filter(|&e| e < w.wakeup) {
        cover(
            cpus,
            names,
            w,
            w.waker_cpu,
            (expected, w.wakeup),
            Phase::BeforeWakeup,
            &mut pieces,
        );
    }
    for (i, &(cpu, from)) in w.queue.iter().enumerate() {
        let to = w.queue.get(i + 1).map_or(run, |&(_, t)| t).min(run);
        let from = from.max(w.wakeup);
        if to > from {
            cover(
                cpus,
                names,
                w,
                cpu,
                (from, to),
                Phase::AfterWakeup,
                &mut pieces,
            );
        }
    }
    let mut merged = merge(pieces);
    // A lower-priority task that got out of the way quickly was only on its way to the switch.
    for c in &mut merged {
        if c.cause == Cause::PreemptOff && c.ns < MIN_CAUSE_NS && c.phase == Phase::AfterWakeup {
            c.cause = Cause::KernelPath;
            c.culprit = None;
            c.note = Note::Scheduling;
        }
    }
    merge(merged)
}

/// Appends the pieces of `[from, to)` on `cpu`.
fn cover(
    cpus: &[Option<CpuTimeline>],
    names: &Names,
    w: &WakeUp,
    cpu: u32,
    (from, to): (Timestamp, Timestamp),
    phase: Phase,
    out: &mut Vec<Component>,
) {
    let Some(Some(tl)) = cpus.get(cpu as usize) else {
        out.push(Component::new(
            Cause::Unknown,
            phase,
            cpu,
            (from, to),
            None,
            Note::NoHistory,
        ));
        return;
    };
    let mut cursor = from;
    if tl.earliest() > from {
        let end = tl.earliest().min(to);
        out.push(Component::new(
            Cause::Unknown,
            phase,
            cpu,
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
        let (cause, culprit, note) = classify(names, w, cpu, &s, span, phase);
        out.push(Component::new(cause, phase, cpu, span, culprit, note));
    }
}

fn classify(
    names: &Names,
    w: &WakeUp,
    cpu: u32,
    s: &Stretch,
    span: (Timestamp, Timestamp),
    phase: Phase,
) -> (Cause, Option<Culprit>, Note) {
    match s.activity {
        Activity::Unknown => (Cause::Unknown, None, Note::NoHistory),
        Activity::Irq { irq, seq } => {
            let own_irq = cpu == w.waker_cpu && w.context.seq == Some(seq);
            classify_irq(names, w, irq, own_irq, phase)
        }
        Activity::Task { pid, prio } => match phase {
            Phase::BeforeWakeup => overdue(pid, s, span),
            Phase::AfterWakeup => waiting(w, pid, prio, s),
        },
    }
}

fn classify_irq(
    names: &Names,
    w: &WakeUp,
    irq: Irq,
    own_irq: bool,
    phase: Phase,
) -> (Cause, Option<Culprit>, Note) {
    match irq {
        Irq::Callback { hrtimer, .. } if own_irq && w.own_timer == Some(hrtimer) => {
            (Cause::KernelPath, None, Note::WakeCallback)
        }
        Irq::Callback { function, .. } => (
            Cause::Hardirq,
            Some(Culprit::Callback(function)),
            Note::Interrupt,
        ),
        Irq::Softirq { vec, action } => (
            Cause::Softirq,
            Some(Culprit::Softirq { vec, action }),
            Note::Interrupt,
        ),
        _ if own_irq => (Cause::KernelPath, None, Note::WakeInterrupt),
        Irq::Vector { name, .. } if phase == Phase::AfterWakeup && is_resched(names, name) => {
            (Cause::KernelPath, None, Note::ReschedIpi)
        }
        Irq::Vector { vector, name } => (
            Cause::Hardirq,
            Some(Culprit::Vector { vector, name }),
            Note::Interrupt,
        ),
        Irq::Handler { irq, name } => (
            Cause::Hardirq,
            Some(Culprit::Irq { irq, name }),
            Note::Interrupt,
        ),
    }
}

/// The reschedule IPI is how a wake-up on another CPU makes this one switch: part of the path.
fn is_resched(names: &Names, name: NameId) -> bool {
    names.get(name) == "reschedule"
}

/// Task time on the waker's CPU while the timer was due: why did its interrupt not come?
fn overdue(
    pid: i32,
    s: &Stretch,
    (from, to): (Timestamp, Timestamp),
) -> (Cause, Option<Culprit>, Note) {
    if to - from < MIN_CAUSE_NS {
        return (Cause::KernelPath, None, Note::InterruptDelivery);
    }
    let task = Some(Culprit::Task(pid));
    if let Some(caller) = s.irqs_off_at {
        return (Cause::IrqsOff, task, Note::IrqsOffCaller(caller));
    }
    if pid == 0 {
        return (Cause::BlackHole, None, Note::IdleLate);
    }
    if s.last_irqs_off {
        return (Cause::IrqsOff, task, Note::IrqsOffFlag);
    }
    // The stretch may go on past the window (a wake-up from task context): its last event
    // can lie after it.
    let gap = (s.last_event.clamp(from, to), to);
    (
        Cause::BlackHole,
        None,
        Note::NoEvents {
            from: gap.0,
            to: gap.1,
        },
    )
}

/// A task on the CPU the woken task waits for.
fn waiting(w: &WakeUp, pid: i32, prio: Option<i32>, s: &Stretch) -> (Cause, Option<Culprit>, Note) {
    if pid == 0 {
        return (Cause::KernelPath, None, Note::IdleExit);
    }
    if pid == w.pid {
        return (Cause::KernelPath, None, Note::Scheduling);
    }
    let note = Note::Ran {
        prio,
        need_resched: s.need_resched,
        preempt_off_at: s.preempt_off_at,
    };
    match prio {
        Some(p) if p < w.prio => (Cause::HigherPriority, Some(Culprit::Task(pid)), note),
        Some(_) => (Cause::PreemptOff, Some(Culprit::Task(pid)), note),
        None => (Cause::Unknown, Some(Culprit::Task(pid)), note),
    }
}
