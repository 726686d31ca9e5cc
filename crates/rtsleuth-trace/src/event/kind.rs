//! Typed payloads of the events latency analysis reasons about.
//!
//! Readers fill these in; analyses match on them and never parse strings. Events not listed here
//! are [`EventKind::Other`] and keep their raw payload on the [`super::Event`].

use super::TaskState;

/// The x86 `irq_vectors` events (`local_timer_entry`, `reschedule_entry`, …) name the vector in
/// the event name; this is that name without the `_entry`/`_exit` suffix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IrqVector<'a> {
    pub name: &'a str,
    pub vector: Option<u32>,
}

/// The different ways user space and the kernel write free text into a trace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MarkerKind {
    /// `tracing_mark_write` (Android atrace, the trace-cmd plugin name for `print` from
    /// `trace_marker`).
    TracingMarkWrite,
    /// `print` (`trace_marker` writes as the kernel prints them, and `trace_printk`).
    Print,
    Bputs,
    Bprint,
    /// The `console` event: a kernel log line.
    Console,
}

/// Where a timerlat sample was taken: in the timer's interrupt handler, in the timerlat
/// thread it woke, or on the return to a user-space workload (`rtla timerlat -u`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum TimerlatContext {
    Irq,
    Thread,
    User,
}

impl TimerlatContext {
    /// The name the kernel prints (`context irq`, `context thread`, `context user-ret`).
    pub fn as_str(self) -> &'static str {
        match self {
            TimerlatContext::Irq => "irq",
            TimerlatContext::Thread => "thread",
            TimerlatContext::User => "user-ret",
        }
    }
}

/// What kind of interference an osnoise noise event measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoiseSource {
    Nmi,
    Irq,
    Softirq,
    Thread,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum EventKind<'a> {
    /// A task printed as [`super::UNKNOWN_PID`] is one the trace does not name; a prio of
    /// `None` is one the trace does not give (Perfetto's compact form before a CPU's first
    /// switch, a Perfetto event without the field). Neither is ever made up.
    SchedSwitch {
        prev_comm: &'a str,
        prev_pid: i32,
        prev_prio: Option<i32>,
        prev_state: TaskState,
        next_comm: &'a str,
        next_pid: i32,
        next_prio: Option<i32>,
    },
    /// `sched_waking`: the wake-up starts (it runs on the waker's CPU).
    SchedWaking {
        comm: &'a str,
        pid: i32,
        prio: i32,
        target_cpu: Option<u32>,
    },
    /// `sched_wakeup`: the task is on a run queue.
    SchedWakeup {
        comm: &'a str,
        pid: i32,
        prio: i32,
        target_cpu: Option<u32>,
    },
    SchedWakeupNew {
        comm: &'a str,
        pid: i32,
        prio: i32,
        target_cpu: Option<u32>,
    },
    SchedMigrateTask {
        comm: &'a str,
        pid: i32,
        prio: i32,
        orig_cpu: u32,
        dest_cpu: u32,
    },
    SchedProcessFork {
        parent_comm: &'a str,
        parent_pid: i32,
        child_comm: &'a str,
        child_pid: i32,
    },
    SchedProcessExit {
        comm: &'a str,
        pid: i32,
        prio: i32,
    },
    IrqHandlerEntry {
        irq: u32,
        name: &'a str,
    },
    IrqHandlerExit {
        irq: u32,
        handled: bool,
    },
    SoftirqRaise {
        vec: u32,
        action: &'a str,
    },
    SoftirqEntry {
        vec: u32,
        action: &'a str,
    },
    SoftirqExit {
        vec: u32,
        action: &'a str,
    },
    /// `hrtimer_start`; `expires` is in the timer's clock base, not necessarily the trace clock.
    HrtimerStart {
        hrtimer: u64,
        function: &'a str,
        expires: u64,
        softexpires: u64,
    },
    /// `hrtimer_expire_entry`; `now` is the clock-base time the callback ran at.
    HrtimerExpireEntry {
        hrtimer: u64,
        now: u64,
        function: &'a str,
    },
    HrtimerExpireExit {
        hrtimer: u64,
    },
    HrtimerCancel {
        hrtimer: u64,
    },
    IrqVectorEntry(IrqVector<'a>),
    IrqVectorExit(IrqVector<'a>),
    IpiRaise {
        reason: &'a str,
    },
    IpiEntry {
        reason: &'a str,
    },
    IpiExit {
        reason: &'a str,
    },
    /// `preemptirq:irq_disable` and friends: `caller` is where the section starts or ends.
    IrqDisable {
        caller: &'a str,
        parent: &'a str,
    },
    IrqEnable {
        caller: &'a str,
        parent: &'a str,
    },
    PreemptDisable {
        caller: &'a str,
        parent: &'a str,
    },
    PreemptEnable {
        caller: &'a str,
        parent: &'a str,
    },
    WorkqueueQueueWork {
        work: u64,
        function: &'a str,
        workqueue: &'a str,
        req_cpu: Option<u32>,
        cpu: Option<u32>,
    },
    WorkqueueActivateWork {
        work: u64,
    },
    WorkqueueExecuteStart {
        work: u64,
        function: &'a str,
    },
    WorkqueueExecuteEnd {
        work: u64,
        function: &'a str,
    },
    Marker {
        kind: MarkerKind,
        text: &'a str,
    },
    SysEnter {
        nr: i64,
    },
    SysExit {
        nr: i64,
        ret: i64,
    },
    /// A function tracer entry: `function <-parent`.
    Function {
        function: &'a str,
        parent: &'a str,
    },
    /// A timerlat sample (the timerlat tracer's output, or `osnoise:timerlat_sample`):
    /// activation `seq` of this CPU's timerlat timer was seen `latency_ns` after the timer's
    /// expiry, in `context`.
    TimerlatSample {
        seq: u64,
        context: TimerlatContext,
        latency_ns: u64,
    },
    /// An osnoise noise event (`irq_noise`, `softirq_noise`, `thread_noise`, `nmi_noise`): on
    /// this CPU, `name` (the IRQ's or softirq's description, the thread's comm; empty for an
    /// NMI) with `id` (vector, softirq number, pid) ran from `start_ns` for `duration_ns`.
    OsnoiseNoise {
        source: NoiseSource,
        name: &'a str,
        id: Option<i32>,
        start_ns: u64,
        duration_ns: u64,
    },
    /// The osnoise tracer's summary of one period of its thread on this CPU: it looped for
    /// `runtime_us`, of which `noise_us` was noise, the longest single noise `max_single_us`,
    /// and `counts` interferences of each source (hardware, NMI, IRQ, softirq, thread).
    OsnoiseSummary {
        runtime_us: u64,
        noise_us: u64,
        max_single_us: u64,
        counts: OsnoiseCounts,
    },
    /// `osnoise:sample_threshold`: the osnoise thread saw a gap of `duration_ns` from
    /// `start_ns` in its time reads, during which `interferences` interruptions entered.
    OsnoiseThreshold {
        start_ns: u64,
        duration_ns: u64,
        interferences: u64,
    },
    Other,
}

/// The osnoise tracer's interference counters of one period.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct OsnoiseCounts {
    pub hw: u64,
    pub nmi: u64,
    pub irq: u64,
    pub softirq: u64,
    pub thread: u64,
}

impl EventKind<'_> {
    /// The (pid, prio) pairs the event states: both tasks of a switch, the woken or migrated
    /// task. A prio the event does not give is no pair.
    pub fn task_prios(&self) -> [Option<(i32, i32)>; 2] {
        match *self {
            EventKind::SchedSwitch {
                prev_pid,
                prev_prio,
                next_pid,
                next_prio,
                ..
            } => [
                prev_prio.map(|p| (prev_pid, p)),
                next_prio.map(|p| (next_pid, p)),
            ],
            EventKind::SchedWaking { pid, prio, .. }
            | EventKind::SchedWakeup { pid, prio, .. }
            | EventKind::SchedWakeupNew { pid, prio, .. }
            | EventKind::SchedMigrateTask { pid, prio, .. } => [Some((pid, prio)), None],
            _ => [None, None],
        }
    }
}
