//! An event of the model as the Perfetto ftrace event that the reader
//! ([`rtsleuth_trace::read::perfetto`]) turns back into the same [`EventKind`]: the export writes
//! exactly the kinds that survive the round trip, so reading the file back can be checked
//! event for event.
//!
//! - the scheduler's own events, IRQ, softirq, hrtimer and IPI events: their typed Perfetto
//!   messages;
//! - x86 `irq_vectors` (`local_timer_entry`…) and `preemptirq` (`irq_disable`…), which Perfetto
//!   has no message for: generic events with the fields ftrace prints, which the reader decodes
//!   with the text decoder;
//! - markers (`trace_marker`, cyclictest's `--tracemark`): `print`, so explain still finds
//!   cyclictest's mark. They come back as `MarkerKind::Print`.
//!
//! Kernel functions (`hrtimer_start function=`) are written as indices into the sequence's
//! interned kernel symbols, which is how Perfetto stores symbolized functions.

use super::symbols::Symbols;
use rtsleuth_trace::event::{Event, EventKind, IrqVector};
use rtsleuth_trace::read::perfetto::messages::{
    Body, FtraceEvent, Generic, GenericField, GenericValue, Hrtimer, HrtimerExpireEntry,
    HrtimerStart, Ipi, IpiRaise, IrqHandlerEntry, IrqHandlerExit, Print, SchedMigrateTask,
    SchedProcessExit, SchedProcessFork, SchedSwitch, SchedWakeup, Softirq,
};
use rtsleuth_trace::read::perfetto::softirq_action;

/// The Perfetto event for `ev`, or `None` for a kind the export does not carry.
pub fn ftrace_event(ev: &Event<'_>, symbols: &mut Symbols) -> Option<FtraceEvent> {
    let body = body(ev, symbols)?;
    Some(FtraceEvent {
        timestamp: Some(ev.ts),
        // The field is unsigned; the reader reads it back as the same i32.
        pid: Some(ev.pid as u32),
        body: Some(body),
    })
}

/// The message of the one family that carries `ev`'s kind (each leaves the kinds it does not
/// carry, `None`, to the next); `None` for a kind no family carries.
fn body(ev: &Event<'_>, symbols: &mut Symbols) -> Option<Body> {
    switches_and_wakeups(ev.kind)
        .or_else(|| tasks(ev.kind))
        .or_else(|| interrupts(ev.kind))
        .or_else(|| hrtimers(ev.kind, symbols))
        .or_else(|| untyped(ev))
}

fn switches_and_wakeups(kind: EventKind<'_>) -> Option<Body> {
    Some(match kind {
        EventKind::SchedSwitch {
            prev_comm,
            prev_pid,
            prev_prio,
            prev_state,
            next_comm,
            next_pid,
            next_prio,
        } => Body::SchedSwitch(SchedSwitch {
            prev_comm: s(prev_comm),
            prev_pid: Some(prev_pid),
            prev_prio,
            prev_state: prev_state.to_report_bits().map(|b| b as i64),
            next_comm: s(next_comm),
            next_pid: Some(next_pid),
            next_prio,
        }),
        EventKind::SchedWaking {
            comm,
            pid,
            prio,
            target_cpu,
        } => Body::SchedWaking(wakeup(comm, pid, prio, cpu(target_cpu))),
        EventKind::SchedWakeup {
            comm,
            pid,
            prio,
            target_cpu,
        } => Body::SchedWakeup(wakeup(comm, pid, prio, cpu(target_cpu))),
        EventKind::SchedWakeupNew {
            comm,
            pid,
            prio,
            target_cpu,
        } => Body::SchedWakeupNew(wakeup(comm, pid, prio, cpu(target_cpu))),
        _ => return None,
    })
}

/// Migrations, forks and exits.
fn tasks(kind: EventKind<'_>) -> Option<Body> {
    Some(match kind {
        EventKind::SchedMigrateTask {
            comm,
            pid,
            prio,
            orig_cpu,
            dest_cpu,
        } => Body::SchedMigrateTask(SchedMigrateTask {
            comm: s(comm),
            pid: Some(pid),
            prio: Some(prio),
            orig_cpu: Some(orig_cpu as i32),
            dest_cpu: Some(dest_cpu as i32),
        }),
        EventKind::SchedProcessFork {
            parent_comm,
            parent_pid,
            child_comm,
            child_pid,
        } => Body::SchedProcessFork(SchedProcessFork {
            parent_comm: s(parent_comm),
            parent_pid: Some(parent_pid),
            child_comm: s(child_comm),
            child_pid: Some(child_pid),
        }),
        EventKind::SchedProcessExit { comm, pid, prio } => {
            Body::SchedProcessExit(SchedProcessExit {
                comm: s(comm),
                pid: Some(pid),
                prio: Some(prio),
            })
        }
        _ => return None,
    })
}

/// Hard IRQs, softirqs and IPIs.
fn interrupts(kind: EventKind<'_>) -> Option<Body> {
    Some(match kind {
        EventKind::IrqHandlerEntry { irq, name } => Body::IrqHandlerEntry(IrqHandlerEntry {
            irq: Some(irq as i32),
            name: s(name),
        }),
        EventKind::IrqHandlerExit { irq, handled } => Body::IrqHandlerExit(IrqHandlerExit {
            irq: Some(irq as i32),
            ret: Some(i32::from(handled)),
        }),
        // Perfetto stores only the vector; the reader names it from the kernel's table, so a
        // vector the table names differently would not come back the same.
        EventKind::SoftirqRaise { vec, action } if softirq_action(vec) == action => {
            Body::SoftirqRaise(Softirq { vec: Some(vec) })
        }
        EventKind::SoftirqEntry { vec, action } if softirq_action(vec) == action => {
            Body::SoftirqEntry(Softirq { vec: Some(vec) })
        }
        EventKind::SoftirqExit { vec, action } if softirq_action(vec) == action => {
            Body::SoftirqExit(Softirq { vec: Some(vec) })
        }
        EventKind::IpiRaise { reason } => Body::IpiRaise(IpiRaise {
            target_cpus: None,
            reason: s(reason),
        }),
        EventKind::IpiEntry { reason } => Body::IpiEntry(Ipi { reason: s(reason) }),
        EventKind::IpiExit { reason } => Body::IpiExit(Ipi { reason: s(reason) }),
        _ => return None,
    })
}

fn hrtimers(kind: EventKind<'_>, symbols: &mut Symbols) -> Option<Body> {
    Some(match kind {
        EventKind::HrtimerStart {
            hrtimer,
            function,
            expires,
            softexpires,
        } => Body::HrtimerStart(HrtimerStart {
            hrtimer: Some(hrtimer),
            function: Some(symbols.intern(function)),
            expires: Some(expires as i64),
            softexpires: Some(softexpires as i64),
            mode: None,
        }),
        EventKind::HrtimerExpireEntry {
            hrtimer,
            now,
            function,
        } => Body::HrtimerExpireEntry(HrtimerExpireEntry {
            hrtimer: Some(hrtimer),
            now: Some(now as i64),
            function: Some(symbols.intern(function)),
        }),
        EventKind::HrtimerExpireExit { hrtimer } => Body::HrtimerExpireExit(Hrtimer {
            hrtimer: Some(hrtimer),
        }),
        EventKind::HrtimerCancel { hrtimer } => Body::HrtimerCancel(Hrtimer {
            hrtimer: Some(hrtimer),
        }),
        _ => return None,
    })
}

/// The events without a typed message of their own: markers as `print`, x86 `irq_vectors`
/// and `preemptirq` as generic events under the event's own name.
fn untyped(ev: &Event<'_>) -> Option<Body> {
    Some(match ev.kind {
        EventKind::Marker { text, .. } => Body::Print(Print { buf: s(text) }),
        EventKind::IrqVectorEntry(IrqVector { vector, .. })
        | EventKind::IrqVectorExit(IrqVector { vector, .. }) => generic(
            ev.name,
            [("vector", vector.map(|v| GenericValue::Uint(v.into())))],
        ),
        EventKind::IrqDisable { caller, parent }
        | EventKind::IrqEnable { caller, parent }
        | EventKind::PreemptDisable { caller, parent }
        | EventKind::PreemptEnable { caller, parent } => generic(
            ev.name,
            [
                ("caller", Some(GenericValue::Str(caller.into()))),
                ("parent", Some(GenericValue::Str(parent.into()))),
            ],
        ),
        _ => return None,
    })
}

fn s(v: &str) -> Option<String> {
    Some(v.to_string())
}

fn cpu(c: Option<u32>) -> Option<i32> {
    c.map(|c| c as i32)
}

fn wakeup(comm: &str, pid: i32, prio: i32, target_cpu: Option<i32>) -> SchedWakeup {
    SchedWakeup {
        comm: Some(comm.to_string()),
        pid: Some(pid),
        prio: Some(prio),
        target_cpu,
    }
}

/// An event Perfetto has no message for, as its name and the fields ftrace prints, in order.
fn generic<const N: usize>(name: &str, fields: [(&str, Option<GenericValue>); N]) -> Body {
    Body::Generic(Generic {
        event_name: Some(name.to_string()),
        field: fields
            .into_iter()
            .map(|(name, value)| GenericField {
                name: Some(name.to_string()),
                value,
            })
            .collect(),
    })
}
