//! The event model every reader produces and every analysis consumes.
//!
//! An [`Event`] borrows its strings from the reader's buffer, so reading a trace allocates
//! nothing per event; an analysis that wants to keep a string copies it once per task, not per
//! event. The typed [`EventKind`] holds the events latency work needs; every other event stays
//! available by name with its raw `key=value` payload ([`Event::fields`]).

mod comm;
mod fields;
mod flags;
mod kind;
mod task_state;

pub use comm::{same_bytes, same_comm};
pub use fields::{FieldIter, Fields};
pub use flags::{FlagLayout, Flags};
pub use kind::{EventKind, IrqVector, MarkerKind, NoiseSource, OsnoiseCounts, TimerlatContext};
pub use task_state::TaskState;

/// CPU numbers start at 0 and stay below this: the largest `NR_CPUS` a Linux kernel can be
/// built with (x86's `CONFIG_MAXSMP`). Analyses keep state per CPU number, so a reader treats a
/// larger number as damage (a line not understood, a record skipped with a note) instead of
/// letting one corrupt byte size that state; no event a reader hands out has `cpu >= MAX_CPUS`.
pub const MAX_CPUS: u32 = 8192;

/// Whether `cpu` is a CPU number a kernel can have (below [`MAX_CPUS`]).
pub fn possible_cpu(cpu: u64) -> bool {
    cpu < u64::from(MAX_CPUS)
}

/// The pid of a task the trace does not name: Perfetto's compact scheduling data states only
/// the task a CPU switches to, so what ran before a CPU's first switch is unknown. The kernel
/// has no pid -1; analyses must treat it as unknown, never as a task to blame or rank.
pub const UNKNOWN_PID: i32 = -1;

/// Nanoseconds on the trace clock. For counter clocks (`counter`, `x86-tsc`) the raw count.
pub type Timestamp = u64;

/// Converts a trace timestamp to seconds for display and JSON.
pub fn ts_to_secs(ts: Timestamp) -> f64 {
    ts as f64 / 1e9
}

/// Converts a duration in nanoseconds to microseconds for display and JSON.
pub fn ns_to_us(ns: u64) -> f64 {
    ns as f64 / 1e3
}

/// One trace event: the common fields every ftrace event has, plus its decoded payload.
#[derive(Debug, Clone, PartialEq)]
pub struct Event<'a> {
    pub ts: Timestamp,
    /// Always below [`MAX_CPUS`]: readers skip what names a larger CPU.
    pub cpu: u32,
    /// The task that was running when the event was recorded (the line's `comm-pid`).
    pub pid: i32,
    /// As printed; `<...>` when the kernel had no saved comm for the pid.
    pub comm: &'a str,
    pub tgid: Option<i32>,
    pub flags: Flags,
    /// Event name as printed (`sched_switch`, `local_timer_entry`, `function` for function-tracer
    /// lines).
    pub name: &'a str,
    /// Everything after the event name, as printed.
    pub payload: &'a str,
    pub kind: EventKind<'a>,
}

const PI_SETPRIO: &str = "sched_pi_setprio";

impl<'a> Event<'a> {
    /// The payload's `key=value` fields, for events without a typed decoding.
    pub fn fields(&self) -> Fields<'a> {
        Fields::new(self.payload)
    }

    /// The events without a kind of their own whose payload fields these methods read: a
    /// binary reader that leaves never-typed payloads unprinted still prints these.
    pub const FIELDS_READ: &'static [&'static str] = &[PI_SETPRIO];

    /// `sched_pi_setprio`: the task whose priority priority inheritance changed, and its new
    /// priority (the event is emitted by whoever changes it, often on another CPU).
    pub fn pi_setprio(&self) -> Option<(i32, i32)> {
        if self.name != PI_SETPRIO {
            return None;
        }
        let f = self.fields();
        Some((f.get_i64("pid")? as i32, f.get_i64("newprio")? as i32))
    }

    /// Whether the kernel emits this event with interrupts disabled whatever the code around
    /// it does (it holds the runqueue or timer-base lock, or runs in interrupt context), so
    /// its `d` flag is no evidence that the task had interrupts off. The one list of them
    /// (rule E4 of issue 23): scheduler, timer, hrtimer and queued-work events, softirq
    /// raises, and everything in interrupt context.
    pub fn irqs_off_by_construction(&self) -> bool {
        const NAMES: [&str; 15] = [
            "sched_switch",
            "sched_waking",
            "sched_wakeup",
            "sched_wakeup_new",
            "sched_migrate_task",
            "sched_pi_setprio",
            "hrtimer_start",
            "hrtimer_cancel",
            "hrtimer_init",
            "timer_start",
            "timer_cancel",
            "timer_init",
            "workqueue_queue_work",
            "workqueue_activate_work",
            "softirq_raise",
        ];
        const PREFIXES: [&str; 6] = [
            "sched_stat_",
            "timer_expire_",
            "hrtimer_expire_",
            "irq_",
            "softirq_",
            "local_timer_",
        ];
        if self.flags.hardirq || self.flags.softirq || self.flags.nmi {
            return true;
        }
        // Every reader gives these kinds to the events of the list's names alone, so the kind
        // answers without comparing names (explain asks for every event).
        match self.kind {
            EventKind::SchedSwitch { .. }
            | EventKind::SchedWaking { .. }
            | EventKind::SchedWakeup { .. }
            | EventKind::SchedWakeupNew { .. }
            | EventKind::SchedMigrateTask { .. }
            | EventKind::HrtimerStart { .. }
            | EventKind::HrtimerCancel { .. }
            | EventKind::HrtimerExpireEntry { .. }
            | EventKind::HrtimerExpireExit { .. }
            | EventKind::IrqHandlerEntry { .. }
            | EventKind::IrqHandlerExit { .. }
            | EventKind::SoftirqRaise { .. }
            | EventKind::SoftirqEntry { .. }
            | EventKind::SoftirqExit { .. }
            | EventKind::IrqVectorEntry(_)
            | EventKind::IrqVectorExit(_)
            | EventKind::WorkqueueQueueWork { .. }
            | EventKind::WorkqueueActivateWork { .. } => true,
            _ => PREFIXES.iter().any(|p| self.name.starts_with(p)) || NAMES.contains(&self.name),
        }
    }

    /// Whether the pid column shows who runs on the CPU. osnoise prints a thread's
    /// `thread_noise` from that thread's switch-out, after the `sched_switch` that already
    /// handed the CPU on, still in the outgoing thread's column (docs/claims.md, "CPU's task").
    pub fn shows_current_task(&self) -> bool {
        !matches!(
            self.kind,
            EventKind::OsnoiseNoise {
                source: NoiseSource::Thread,
                ..
            }
        )
    }
}
