//! `rtsleuth irq`: where interrupt work and interrupts-off time went.
//!
//! - Durations of hard IRQ handlers, x86 vector IRQs, softirqs and hrtimer callbacks, per
//!   source and CPU ([`durations`]).
//! - Interrupts-off and preemption-off sections from the `preemptirq` events ([`sections`]).
//! - The latency tracer's section, when the trace is an `irqsoff` / `preemptoff` / … output
//!   ([`rtsleuth_trace::read::latency_tracer`]).
//! - Interrupts-off inferred from late timer interrupts, which every kernel with the timer
//!   events shows ([`late_timers`]).
//!
//! Callers and parents are looked up in a small table of known culprits ([`culprits`]).
//! Memory: per source and CPU, per open frame or section, the `top` worst of each list and a
//! distribution; nothing grows with the trace.

pub mod culprits;
mod durations;
mod late_timers;
mod report;
pub(crate) use report::dist_json;
pub use report::IrqWork;
mod sections;
mod worst;

use crate::names::Names;
use crate::TaskNames;
use durations::{Durations, Key};
use late_timers::{Expiry, LateTimers};
use rtsleuth_trace::event::{Event, EventKind};
use rtsleuth_trace::read::{Decode, EventSink};
use sections::Sections;

/// What to report.
#[derive(Debug, Clone)]
pub struct IrqOptions {
    /// Only this CPU.
    pub cpu: Option<u32>,
    /// How many rows per table and sections per list.
    pub top: usize,
    /// A hard timer interrupt this late (µs) or more counts as interrupts-off.
    pub late_us: f64,
}

impl Default for IrqOptions {
    fn default() -> Self {
        IrqOptions {
            cpu: None,
            top: 10,
            late_us: 100.0,
        }
    }
}

/// The streaming analysis.
#[derive(Debug)]
pub struct Irq {
    opts: IrqOptions,
    names: Names,
    tasks: TaskNames,
    durations: Durations,
    irqs_off: Sections,
    preempt_off: Sections,
    late: LateTimers,
}

impl Irq {
    pub fn new(opts: IrqOptions) -> Irq {
        let keep = opts.top.max(1);
        let late_ns = (opts.late_us.max(0.0) * 1e3).round() as u64;
        Irq {
            names: Names::default(),
            tasks: TaskNames::default(),
            durations: Durations::default(),
            irqs_off: Sections::new(keep),
            preempt_off: Sections::new(keep),
            late: LateTimers::new(late_ns, keep),
            opts,
        }
    }
}

impl EventSink for Irq {
    fn event(&mut self, ev: &Event<'_>) {
        self.tasks.observe(ev);
        if self.opts.cpu.is_some_and(|c| c != ev.cpu) {
            return;
        }
        let (cpu, ts, pid) = (ev.cpu, ev.ts, ev.pid);
        let names = &mut self.names;
        let d = &mut self.durations;
        match ev.kind {
            EventKind::IrqHandlerEntry { irq, name } => {
                let n = names.intern(name);
                d.enter(cpu, ts, Key::Hardirq(irq), 0, (n, None), pid);
            }
            EventKind::IrqHandlerExit { irq, .. } => d.exit(cpu, ts, |k, _| k == Key::Hardirq(irq)),
            EventKind::IrqVectorEntry(v) => {
                let n = names.intern(v.name);
                d.enter(cpu, ts, Key::Vector(n), 0, (n, v.vector), pid);
            }
            EventKind::IrqVectorExit(v) => {
                let n = names.intern(v.name);
                d.exit(cpu, ts, |k, _| k == Key::Vector(n));
            }
            EventKind::SoftirqEntry { vec, action } => {
                let n = names.intern(action);
                d.enter(cpu, ts, Key::Softirq(vec), 0, (n, None), pid);
            }
            EventKind::SoftirqExit { vec, .. } => d.exit(cpu, ts, |k, _| k == Key::Softirq(vec)),
            EventKind::HrtimerExpireEntry {
                hrtimer,
                now,
                function,
            } => {
                let f = names.intern(function);
                let irq_entry = d.interrupt_entry(cpu);
                d.enter(cpu, ts, Key::Hrtimer(f), hrtimer, (f, None), pid);
                // Without a flag column, a callback inside a traced interrupt is a hard one.
                let hard = if ev.flags.known {
                    ev.flags.hardirq
                } else {
                    irq_entry.is_some()
                };
                let e = Expiry {
                    cpu,
                    ts,
                    hrtimer,
                    now,
                    function: f,
                    pid,
                    irq_entry,
                    tick: matches!(function, "tick_nohz_handler" | "tick_sched_timer"),
                };
                self.late.expired(e, hard);
            }
            EventKind::HrtimerExpireExit { hrtimer } => d.exit(cpu, ts, |k, id| {
                matches!(k, Key::Hrtimer(_)) && id == hrtimer
            }),
            EventKind::HrtimerStart {
                hrtimer, expires, ..
            } => {
                let by_idle = pid == 0 && ev.flags.known && !ev.flags.hardirq && !ev.flags.softirq;
                self.late.armed(hrtimer, expires, ts, by_idle);
            }
            EventKind::HrtimerCancel { hrtimer } => self.late.cancelled(hrtimer),
            EventKind::IrqDisable { caller, parent } => {
                let at = (names.intern(caller), names.intern(parent));
                self.irqs_off.disable(cpu, ts, at, pid);
            }
            EventKind::IrqEnable { caller, .. } => {
                self.irqs_off.enable(cpu, ts, names.intern(caller));
            }
            EventKind::PreemptDisable { caller, parent } => {
                let at = (names.intern(caller), names.intern(parent));
                self.preempt_off.disable(cpu, ts, at, pid);
            }
            EventKind::PreemptEnable { caller, .. } => {
                self.preempt_off.enable(cpu, ts, names.intern(caller));
            }
            _ => {}
        }
        let f = ev.flags;
        if f.known && !(f.hardirq || f.softirq || f.nmi) {
            self.late.task_event(cpu, ts, f.irqs_off);
        }
    }

    fn decode(&self) -> Decode {
        Decode::Typed
    }

    fn lost(&mut self, cpu: Option<u32>, _count: Option<u64>) {
        self.durations.lost(cpu);
        self.irqs_off.lost(cpu);
        self.preempt_off.lost(cpu);
    }
}
