//! Who did a waking, as far as the trace's context flags tell: what `explain`'s wake chains
//! and `latency --irq` both follow (docs/claims.md, "Wake chains"), defined once.
//!
//! - A `sched_waking` runs in its waker's context: flagged hard-IRQ, an interrupt did it;
//!   flagged softirq, a softirq running in its pid's column; neither, the task of that column.
//! - A hard interrupt lasts past its handler's exit while the CPU's events stay flagged
//!   hard-IRQ: a threaded handler's thread is woken after `irq_handler_exit` ([`HardVisit`]).
//! - After an interrupt's last hard-IRQ event its exit path runs in the interrupted task's
//!   column with interrupts off; `irq_exit` wakes the softirq threads there, which looks like
//!   that task's own waking and is not ([`ExitPath`]).

use rtsleuth_trace::event::{Event, EventKind, Timestamp};

/// The most links a wake chain follows; a longer one is unproven.
pub const CHAIN_DEPTH: usize = 8;

/// Which interrupt `--irq` follows (`latency`, `explain`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IrqSelector {
    Number(u32),
    /// A part of the handler's name (`eth0` selects `eth0-rx-0` and `eth0-tx-0`).
    Name(String),
}

impl std::str::FromStr for IrqSelector {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s.trim() {
            "" => Err("an interrupt is a number or a part of its handler's name".into()),
            t if t.bytes().all(|b| b.is_ascii_digit()) => t
                .parse()
                .map(IrqSelector::Number)
                .map_err(|_| format!("{t:?} is no interrupt number")),
            t => Ok(IrqSelector::Name(t.to_string())),
        }
    }
}

impl std::fmt::Display for IrqSelector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            IrqSelector::Number(n) => write!(f, "{n}"),
            IrqSelector::Name(s) => f.write_str(s),
        }
    }
}

impl IrqSelector {
    /// Whether it selects interrupt `irq`, whose handler is `name`.
    pub fn selects(&self, irq: u32, name: &str) -> bool {
        match self {
            IrqSelector::Number(n) => *n == irq,
            IrqSelector::Name(s) => name.contains(s.as_str()),
        }
    }
}

/// Who a `sched_waking` says did the waking, when its flags tell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Waker {
    HardIrq,
    Task(i32),
    /// A softirq running in this task's column (on PREEMPT_RT, its own thread).
    Softirq(i32),
}

impl Waker {
    /// The waker of the wake-up `ev` starts: none for an NMI, the idle task's column, flags not
    /// printed, or an event other than `sched_waking`.
    pub fn of(ev: &Event<'_>) -> Option<Waker> {
        let f = ev.flags;
        if !matches!(ev.kind, EventKind::SchedWaking { .. }) || !f.known || f.nmi {
            return None;
        }
        match (f.hardirq, f.softirq) {
            (true, _) => Some(Waker::HardIrq),
            _ if ev.pid <= 0 => None,
            (false, false) => Some(Waker::Task(ev.pid)),
            (false, true) => Some(Waker::Softirq(ev.pid)),
        }
    }
}

/// The hard interrupt a CPU is in, entered at a timestamp and known by a `T`: kept past its
/// handler's exit until the CPU's first event not flagged hard-IRQ.
#[derive(Debug, Clone, Copy)]
pub struct HardVisit<T> {
    open: Option<(Timestamp, T)>,
}

impl<T> Default for HardVisit<T> {
    fn default() -> Self {
        HardVisit { open: None }
    }
}

impl<T: Copy> HardVisit<T> {
    /// Every event of the CPU, before it is applied: one not flagged hard-IRQ ends the visit.
    pub fn observe(&mut self, ev: &Event<'_>) {
        if !ev.flags.hardirq {
            self.open = None;
        }
    }

    /// The CPU entered a hard interrupt at `ts` with none open.
    pub fn enter(&mut self, ts: Timestamp, what: T) {
        self.open = Some((ts, what));
    }

    pub fn get(&self) -> Option<(Timestamp, T)> {
        self.open
    }
}

/// An interrupt's exit path on a CPU: from the interrupt's last hard-IRQ event to the first
/// event with interrupts on, in another pid column, or switching tasks.
#[derive(Debug, Clone, Copy, Default)]
pub struct ExitPath {
    /// The pid column the exit path runs in.
    tail: Option<i32>,
}

impl ExitPath {
    /// Every event of the CPU, in order.
    pub fn observe(&mut self, ev: &Event<'_>) {
        if ev.flags.hardirq {
            self.tail = Some(ev.pid);
        } else if ev.flags.known
            && (!ev.flags.irqs_off
                || self.tail != Some(ev.pid)
                || matches!(ev.kind, EventKind::SchedSwitch { .. }))
        {
            self.tail = None;
        }
    }

    /// The latest event ran on an interrupt's exit path, as far as the flags show.
    pub fn active(&self) -> bool {
        self.tail.is_some()
    }

    /// The waking `ev` (the latest event observed) ran on the exit path in task context: its
    /// pid column names the interrupted task (or the idle task), not its waker.
    pub fn hides_waker(&self, ev: &Event<'_>) -> bool {
        let f = ev.flags;
        self.active()
            && matches!(ev.kind, EventKind::SchedWaking { .. })
            && !(f.hardirq || f.softirq || f.nmi)
    }
}
