//! The ftrace name and the typed [`EventKind`] of a Perfetto event body.

use super::messages::Body;
use crate::event::{EventKind, MarkerKind, TaskState, UNKNOWN_PID};

/// The name ftrace gives the event (for a generic event, the name Perfetto recorded).
pub fn name(body: &Body) -> &str {
    match body {
        Body::Print(_) => "print",
        Body::SchedSwitch(_) => "sched_switch",
        Body::CpuFrequency(_) => "cpu_frequency",
        Body::CpuIdle(_) => "cpu_idle",
        Body::SchedWakeup(_) => "sched_wakeup",
        Body::SchedBlockedReason(_) => "sched_blocked_reason",
        Body::SchedWaking(_) => "sched_waking",
        Body::IpiEntry(_) => "ipi_entry",
        Body::IpiExit(_) => "ipi_exit",
        Body::IpiRaise(_) => "ipi_raise",
        Body::SoftirqEntry(_) => "softirq_entry",
        Body::SoftirqExit(_) => "softirq_exit",
        Body::SoftirqRaise(_) => "softirq_raise",
        Body::IrqHandlerEntry(_) => "irq_handler_entry",
        Body::IrqHandlerExit(_) => "irq_handler_exit",
        Body::WorkqueueActivateWork(_) => "workqueue_activate_work",
        Body::WorkqueueExecuteEnd(_) => "workqueue_execute_end",
        Body::WorkqueueExecuteStart(_) => "workqueue_execute_start",
        Body::WorkqueueQueueWork(_) => "workqueue_queue_work",
        Body::SuspendResume(_) => "suspend_resume",
        Body::SchedWakeupNew(_) => "sched_wakeup_new",
        Body::TaskNewtask(_) => "task_newtask",
        Body::TaskRename(_) => "task_rename",
        Body::SchedProcessExec(_) => "sched_process_exec",
        Body::SchedProcessExit(_) => "sched_process_exit",
        Body::SchedProcessFork(_) => "sched_process_fork",
        Body::SchedProcessFree(_) => "sched_process_free",
        Body::OomScoreAdjUpdate(_) => "oom_score_adj_update",
        Body::Generic(g) => g.event_name.as_deref().unwrap_or(""),
        Body::SysEnter(_) => "sys_enter",
        Body::SysExit(_) => "sys_exit",
        Body::SchedPiSetprio(_) => "sched_pi_setprio",
        Body::Console(_) => "console",
        Body::SchedMigrateTask(_) => "sched_migrate_task",
        Body::HrtimerStart(_) => "hrtimer_start",
        Body::HrtimerCancel(_) => "hrtimer_cancel",
        Body::HrtimerExpireEntry(_) => "hrtimer_expire_entry",
        Body::HrtimerExpireExit(_) => "hrtimer_expire_exit",
    }
}

/// The typed decoding, from the body and its rendering ([`super::payload::render`]).
/// `function` is the text standing for the body's kernel function (an address: Perfetto does
/// not store the symbol unless asked to intern it, which this reader does not read). A generic
/// event (one Perfetto had no proto for, such as x86's `local_timer_entry`) is printed as its
/// `name=value` fields, which is how ftrace prints most events, so the text reader's decoder
/// types it.
pub fn kind<'a>(body: &'a Body, function: &'a str, payload: &'a str) -> EventKind<'a> {
    if let Body::Generic(_) = body {
        return crate::read::ftrace_text::payload::decode(name(body), payload);
    }
    // Each family types its own events and leaves the others (`None`) to the next.
    scheduling(body)
        .or_else(|| processes(body))
        .or_else(|| interrupts(body))
        .or_else(|| hrtimers(body, function))
        .or_else(|| workqueue(body, function))
        .or_else(|| markers_and_syscalls(body))
        .unwrap_or(EventKind::Other)
}

fn scheduling(body: &Body) -> Option<EventKind<'_>> {
    Some(match body {
        // A field the event lacks is unknown: pid 0 would be the idle task, prio 0 the
        // highest real-time priority.
        Body::SchedSwitch(e) => EventKind::SchedSwitch {
            prev_comm: s(&e.prev_comm),
            prev_pid: e.prev_pid.unwrap_or(UNKNOWN_PID),
            prev_prio: e.prev_prio,
            prev_state: TaskState::from_report_bits(e.prev_state.unwrap_or(0) as u64),
            next_comm: s(&e.next_comm),
            next_pid: e.next_pid.unwrap_or(UNKNOWN_PID),
            next_prio: e.next_prio,
        },
        Body::SchedWaking(e) => EventKind::SchedWaking {
            comm: s(&e.comm),
            pid: e.pid.unwrap_or(0),
            prio: e.prio.unwrap_or(0),
            target_cpu: cpu(e.target_cpu),
        },
        Body::SchedWakeup(e) => EventKind::SchedWakeup {
            comm: s(&e.comm),
            pid: e.pid.unwrap_or(0),
            prio: e.prio.unwrap_or(0),
            target_cpu: cpu(e.target_cpu),
        },
        Body::SchedWakeupNew(e) => EventKind::SchedWakeupNew {
            comm: s(&e.comm),
            pid: e.pid.unwrap_or(0),
            prio: e.prio.unwrap_or(0),
            target_cpu: cpu(e.target_cpu),
        },
        Body::SchedMigrateTask(e) => EventKind::SchedMigrateTask {
            comm: s(&e.comm),
            pid: e.pid.unwrap_or(0),
            prio: e.prio.unwrap_or(0),
            orig_cpu: e.orig_cpu.unwrap_or(0) as u32,
            dest_cpu: e.dest_cpu.unwrap_or(0) as u32,
        },
        _ => return None,
    })
}

fn processes(body: &Body) -> Option<EventKind<'_>> {
    Some(match body {
        Body::SchedProcessFork(e) => EventKind::SchedProcessFork {
            parent_comm: s(&e.parent_comm),
            parent_pid: e.parent_pid.unwrap_or(0),
            child_comm: s(&e.child_comm),
            child_pid: e.child_pid.unwrap_or(0),
        },
        Body::SchedProcessExit(e) => EventKind::SchedProcessExit {
            comm: s(&e.comm),
            pid: e.pid.unwrap_or(0),
            prio: e.prio.unwrap_or(0),
        },
        _ => return None,
    })
}

/// Hard IRQs, softirqs and IPIs.
fn interrupts(body: &Body) -> Option<EventKind<'_>> {
    Some(match body {
        Body::IrqHandlerEntry(e) => EventKind::IrqHandlerEntry {
            irq: e.irq.unwrap_or(0) as u32,
            name: s(&e.name),
        },
        Body::IrqHandlerExit(e) => EventKind::IrqHandlerExit {
            irq: e.irq.unwrap_or(0) as u32,
            handled: e.ret.unwrap_or(0) != 0,
        },
        Body::SoftirqRaise(e) => EventKind::SoftirqRaise {
            vec: e.vec.unwrap_or(0),
            action: softirq_action(e.vec.unwrap_or(0)),
        },
        Body::SoftirqEntry(e) => EventKind::SoftirqEntry {
            vec: e.vec.unwrap_or(0),
            action: softirq_action(e.vec.unwrap_or(0)),
        },
        Body::SoftirqExit(e) => EventKind::SoftirqExit {
            vec: e.vec.unwrap_or(0),
            action: softirq_action(e.vec.unwrap_or(0)),
        },
        Body::IpiRaise(e) => EventKind::IpiRaise {
            reason: s(&e.reason),
        },
        Body::IpiEntry(e) => EventKind::IpiEntry {
            reason: s(&e.reason),
        },
        Body::IpiExit(e) => EventKind::IpiExit {
            reason: s(&e.reason),
        },
        _ => return None,
    })
}

fn hrtimers<'a>(body: &'a Body, function: &'a str) -> Option<EventKind<'a>> {
    Some(match body {
        Body::HrtimerStart(e) => EventKind::HrtimerStart {
            hrtimer: e.hrtimer.unwrap_or(0),
            function,
            expires: e.expires.unwrap_or(0) as u64,
            softexpires: e.softexpires.unwrap_or(0) as u64,
        },
        Body::HrtimerExpireEntry(e) => EventKind::HrtimerExpireEntry {
            hrtimer: e.hrtimer.unwrap_or(0),
            now: e.now.unwrap_or(0) as u64,
            function,
        },
        Body::HrtimerExpireExit(e) => EventKind::HrtimerExpireExit {
            hrtimer: e.hrtimer.unwrap_or(0),
        },
        Body::HrtimerCancel(e) => EventKind::HrtimerCancel {
            hrtimer: e.hrtimer.unwrap_or(0),
        },
        _ => return None,
    })
}

fn workqueue<'a>(body: &'a Body, function: &'a str) -> Option<EventKind<'a>> {
    Some(match body {
        Body::WorkqueueQueueWork(e) => EventKind::WorkqueueQueueWork {
            work: e.work.unwrap_or(0),
            function,
            workqueue: s(&e.workqueue),
            req_cpu: cpu(e.req_cpu),
            cpu: cpu(e.cpu),
        },
        Body::WorkqueueActivateWork(e) => EventKind::WorkqueueActivateWork {
            work: e.work.unwrap_or(0),
        },
        Body::WorkqueueExecuteStart(e) => EventKind::WorkqueueExecuteStart {
            work: e.work.unwrap_or(0),
            function,
        },
        Body::WorkqueueExecuteEnd(e) => EventKind::WorkqueueExecuteEnd {
            work: e.work.unwrap_or(0),
            function,
        },
        _ => return None,
    })
}

fn markers_and_syscalls(body: &Body) -> Option<EventKind<'_>> {
    Some(match body {
        Body::Print(e) => EventKind::Marker {
            kind: MarkerKind::Print,
            text: line(&e.buf),
        },
        Body::Console(e) => EventKind::Marker {
            kind: MarkerKind::Console,
            text: line(&e.msg),
        },
        Body::SysEnter(e) => EventKind::SysEnter {
            nr: e.id.unwrap_or(0),
        },
        Body::SysExit(e) => EventKind::SysExit {
            nr: e.id.unwrap_or(0),
            ret: e.ret.unwrap_or(0),
        },
        _ => return None,
    })
}

fn cpu(c: Option<i32>) -> Option<u32> {
    c.and_then(|c| u32::try_from(c).ok())
}

/// An optional string field's text, empty when the event lacks it.
pub(super) fn s(o: &Option<String>) -> &str {
    o.as_deref().unwrap_or("")
}

/// Text written to the trace, without the newline `trace_marker` writes usually end with.
pub fn line(text: &Option<String>) -> &str {
    text.as_deref().unwrap_or("").trim_end_matches('\n')
}

/// The kernel's softirq vector names (`include/linux/interrupt.h`).
pub fn softirq_action(vec: u32) -> &'static str {
    const NAMES: [&str; 10] = [
        "HI", "TIMER", "NET_TX", "NET_RX", "BLOCK", "IRQ_POLL", "TASKLET", "SCHED", "HRTIMER",
        "RCU",
    ];
    NAMES.get(vec as usize).copied().unwrap_or("")
}
