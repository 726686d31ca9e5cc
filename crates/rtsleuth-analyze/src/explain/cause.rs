//! The root-cause classes of PRODUCT.md and the two phases of a late wake-up.

/// What a stretch of a late wake-up was spent on. The JSON names are part of the
/// `rtsleuth.explain/1` contract.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Cause {
    /// A hard IRQ handler, x86 vector IRQ or hard-IRQ hrtimer callback other than the wake-up's own.
    Hardirq,
    /// The timer was due but interrupts were disabled on its CPU, so its interrupt came late.
    IrqsOff,
    Softirq,
    /// The victim was runnable while a task of higher priority kept its CPU.
    HigherPriority,
    /// The victim was runnable and should have preempted a task it strictly outranks, which
    /// kept its CPU in a non-preemptible section.
    PreemptOff,
    /// The victim was runnable behind a task the scheduler is not meant to preempt for it, by
    /// design: an equal-priority SCHED_FIFO task, the SCHED_RR slice, CFS/EEVDF fairness.
    FairShare,
    /// The CPU shows no events at all while the timer was overdue: it left Linux (SMI,
    /// hypervisor, firmware) or did not wake from idle.
    BlackHole,
    /// The ordinary cost of the wake-up path: interrupt entry, the wake-up callback, the
    /// switch itself.
    KernelPath,
    /// Time the trace cannot account for (lost events, before the look-back window).
    Unknown,
    /// A task of the wake chain running, from its own switch-in to its waking of the next
    /// task: the application's own path, not a delay the system imposed.
    WakerRun,
}

impl Cause {
    /// Every class, in the order of PRODUCT.md's table (legends list them so).
    pub const ALL: [Cause; 10] = [
        Cause::Hardirq,
        Cause::IrqsOff,
        Cause::Softirq,
        Cause::HigherPriority,
        Cause::PreemptOff,
        Cause::FairShare,
        Cause::BlackHole,
        Cause::KernelPath,
        Cause::Unknown,
        Cause::WakerRun,
    ];

    /// The class a JSON `kind` names.
    pub fn from_name(name: &str) -> Option<Cause> {
        Cause::ALL.into_iter().find(|c| c.as_str() == name)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Cause::Hardirq => "hardirq",
            Cause::IrqsOff => "irqs_off",
            Cause::Softirq => "softirq",
            Cause::HigherPriority => "higher_priority",
            Cause::PreemptOff => "preempt_off",
            Cause::FairShare => "fair_share",
            Cause::BlackHole => "black_hole",
            Cause::KernelPath => "kernel_path",
            Cause::Unknown => "unknown",
            Cause::WakerRun => "waker_run",
        }
    }
}

/// The method an engineer uses by hand: what delayed the wake-up itself, then what delayed the
/// switch once the task was runnable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Phase {
    /// Expected time → `sched_waking`, on the CPU whose interrupt woke the task.
    BeforeWakeup,
    /// `sched_waking` → the `sched_switch` that runs the task, on the CPU it was queued on.
    AfterWakeup,
}

impl Phase {
    pub fn as_str(self) -> &'static str {
        match self {
            Phase::BeforeWakeup => "before_wakeup",
            Phase::AfterWakeup => "after_wakeup",
        }
    }
}

/// How the time the task should have woken was known.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// The expiry of the hrtimer the task armed, converted to the trace clock.
    Timer,
    /// cyclictest's `hit latency threshold (X > Y)` mark: the task ran X µs after it was due.
    Tracemark,
    /// Estimated from the task's own rhythm of wake-ups (see `period`).
    Period,
    /// Nothing says when it was due: only the time after the wake-up is explained.
    Wakeup,
    /// No wake-up: it was switched out while still runnable, so it was due to go on running
    /// from that switch (`--preemptions`).
    Preempted,
    /// Woken by a task at the end of a wake chain that an interrupt or a timer started: due
    /// when that interrupt came or that timer was due (see `chain`).
    Chain,
    /// A kworker woken by the queueing of a work for its pool: due when the work was queued.
    Queued,
}

impl Source {
    pub fn as_str(self) -> &'static str {
        match self {
            Source::Timer => "timer",
            Source::Tracemark => "tracemark",
            Source::Period => "period",
            Source::Wakeup => "wakeup",
            Source::Preempted => "preempted",
            Source::Chain => "chain",
            Source::Queued => "queued",
        }
    }
}
