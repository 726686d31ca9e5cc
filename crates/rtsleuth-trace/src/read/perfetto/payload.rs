//! Rendering an event body the way the kernel's ftrace text prints it (the events' `TP_printk`
//! formats), so [`crate::event::Event::fields`] and every text consumer see the same payload
//! whichever format the trace came in.
//!
//! Kernel functions are printed by name when the trace interned their symbols, as addresses
//! (`0xffffffc0101a2b3c`) otherwise; kernel pointers as 16 hex digits.

use super::kind::{line, s, softirq_action};
use super::messages::{
    Body, CpuState, Generic, GenericValue, HrtimerExpireEntry, HrtimerStart, IpiRaise,
    IrqHandlerExit, OomScoreAdjUpdate, QueueWork, SchedBlockedReason, SchedMigrateTask,
    SchedPiSetprio, SchedProcessExec, SchedProcessFork, SchedSwitch, SchedWakeup, Softirq,
    SuspendResume, SysEnter, TaskNewtask, TaskRename, Work,
};
use crate::event::UNKNOWN_PID;
use std::fmt::{self, Write};

/// The rendered payload, and the function name a typed decoding points into.
#[derive(Default)]
pub struct Scratch {
    pub payload: String,
    pub function: String,
}

/// Renders `body` into `out` (both strings are overwritten; the payload only when `text`).
/// `symbol` is the name of the body's kernel function when the trace interned it; otherwise
/// its address is printed.
pub fn render(body: &Body, symbol: Option<&str>, text: bool, out: &mut Scratch) {
    out.payload.clear();
    out.function.clear();
    match (symbol, body.function()) {
        (Some(name), _) => out.function.push_str(name),
        (None, Some(f)) => {
            let _ = write!(out.function, "{f:#x}");
        }
        (None, None) => {}
    }
    if text {
        // Writing to a String cannot fail.
        let _ = payload(body, out.function.as_str(), &mut out.payload);
    }
}

/// Writes the event's line as its `TP_printk` format prints it; `f` is the event's kernel
/// function as [`render`] names it. The match lists every body, so a body added to the
/// messages cannot go without a rendering.
fn payload(body: &Body, f: &str, p: &mut String) -> fmt::Result {
    match body {
        Body::Print(e) => write!(p, "{}", line(&e.buf)),
        Body::Console(e) => write!(p, "{}", line(&e.msg)),
        Body::SchedSwitch(e) => sched_switch(e, p),
        Body::SchedWaking(e) | Body::SchedWakeup(e) | Body::SchedWakeupNew(e) => wakeup(e, p),
        Body::SchedMigrateTask(e) => migrate_task(e, p),
        Body::SchedProcessFork(e) => process_fork(e, p),
        Body::SchedProcessExit(e) => comm_pid_prio(&e.comm, e.pid, e.prio, p),
        Body::SchedProcessFree(e) => comm_pid_prio(&e.comm, e.pid, e.prio, p),
        Body::SchedProcessExec(e) => process_exec(e, p),
        Body::SchedPiSetprio(e) => pi_setprio(e, p),
        Body::SchedBlockedReason(e) => blocked_reason(e, f, p),
        Body::CpuFrequency(e) | Body::CpuIdle(e) => cpu_state(e, p),
        Body::SuspendResume(e) => suspend_resume(e, p),
        Body::IpiEntry(e) | Body::IpiExit(e) => write!(p, "({})", s(&e.reason)),
        Body::IpiRaise(e) => ipi_raise(e, p),
        Body::SoftirqEntry(e) | Body::SoftirqExit(e) | Body::SoftirqRaise(e) => softirq(e, p),
        Body::IrqHandlerEntry(e) => write!(p, "irq={} name={}", i(e.irq), s(&e.name)),
        Body::IrqHandlerExit(e) => irq_handler_exit(e, p),
        Body::WorkqueueActivateWork(e) => write!(p, "work struct {:016x}", e.work.unwrap_or(0)),
        Body::WorkqueueExecuteStart(e) | Body::WorkqueueExecuteEnd(e) => execute_work(e, f, p),
        Body::WorkqueueQueueWork(e) => queue_work(e, f, p),
        Body::TaskNewtask(e) => task_newtask(e, p),
        Body::TaskRename(e) => task_rename(e, p),
        Body::OomScoreAdjUpdate(e) => oom_score_adj_update(e, p),
        Body::SysEnter(e) => sys_enter(e, p),
        Body::SysExit(e) => write!(p, "NR {} = {}", e.id.unwrap_or(0), e.ret.unwrap_or(0)),
        Body::HrtimerStart(e) => hrtimer_start(e, f, p),
        Body::HrtimerExpireEntry(e) => hrtimer_expire_entry(e, f, p),
        Body::HrtimerExpireExit(e) | Body::HrtimerCancel(e) => {
            write!(p, "hrtimer={:016x}", e.hrtimer.unwrap_or(0))
        }
        Body::Generic(g) => generic(g, p),
    }
}

// The scheduler's events.

fn sched_switch(e: &SchedSwitch, p: &mut String) -> fmt::Result {
    write!(
        p,
        "prev_comm={} prev_pid={} prev_prio={} prev_state=",
        s(&e.prev_comm),
        known(e.prev_pid),
        known(e.prev_prio)
    )?;
    task_state(e.prev_state.unwrap_or(0), p);
    write!(
        p,
        " ==> next_comm={} next_pid={} next_prio={}",
        s(&e.next_comm),
        known(e.next_pid),
        known(e.next_prio)
    )
}

fn wakeup(e: &SchedWakeup, p: &mut String) -> fmt::Result {
    comm_pid_prio(&e.comm, e.pid, e.prio, p)?;
    match e.target_cpu {
        Some(c) => write!(p, " target_cpu={c:03}"),
        None => Ok(()),
    }
}

/// The start of the wake-ups' lines, and the whole of `sched_process_exit`'s and `_free`'s.
fn comm_pid_prio(
    comm: &Option<String>,
    pid: Option<i32>,
    prio: Option<i32>,
    p: &mut String,
) -> fmt::Result {
    write!(p, "comm={} pid={} prio={}", s(comm), i(pid), i(prio))
}

fn migrate_task(e: &SchedMigrateTask, p: &mut String) -> fmt::Result {
    write!(
        p,
        "comm={} pid={} prio={} orig_cpu={} dest_cpu={}",
        s(&e.comm),
        i(e.pid),
        i(e.prio),
        i(e.orig_cpu),
        i(e.dest_cpu)
    )
}

fn process_fork(e: &SchedProcessFork, p: &mut String) -> fmt::Result {
    write!(
        p,
        "comm={} pid={} child_comm={} child_pid={}",
        s(&e.parent_comm),
        i(e.parent_pid),
        s(&e.child_comm),
        i(e.child_pid)
    )
}

fn process_exec(e: &SchedProcessExec, p: &mut String) -> fmt::Result {
    write!(
        p,
        "filename={} pid={} old_pid={}",
        s(&e.filename),
        i(e.pid),
        i(e.old_pid)
    )
}

fn pi_setprio(e: &SchedPiSetprio, p: &mut String) -> fmt::Result {
    write!(
        p,
        "comm={} pid={} oldprio={} newprio={}",
        s(&e.comm),
        i(e.pid),
        i(e.oldprio),
        i(e.newprio)
    )
}

fn blocked_reason(e: &SchedBlockedReason, f: &str, p: &mut String) -> fmt::Result {
    write!(
        p,
        "pid={} iowait={} caller={f}",
        i(e.pid),
        e.io_wait.unwrap_or(0)
    )
}

// Power management.

fn cpu_state(e: &CpuState, p: &mut String) -> fmt::Result {
    write!(
        p,
        "state={} cpu_id={}",
        e.state.unwrap_or(0),
        e.cpu_id.unwrap_or(0)
    )
}

fn suspend_resume(e: &SuspendResume, p: &mut String) -> fmt::Result {
    write!(
        p,
        "{}[{}] {}",
        s(&e.action),
        i(e.val),
        if e.start.unwrap_or(0) != 0 {
            "begin"
        } else {
            "end"
        }
    )
}

// Interrupts.

fn ipi_raise(e: &IpiRaise, p: &mut String) -> fmt::Result {
    write!(
        p,
        "target_mask={:08x} ({})",
        e.target_cpus.unwrap_or(0),
        s(&e.reason)
    )
}

fn softirq(e: &Softirq, p: &mut String) -> fmt::Result {
    let vec = e.vec.unwrap_or(0);
    write!(p, "vec={vec} [action={}]", softirq_action(vec))
}

fn irq_handler_exit(e: &IrqHandlerExit, p: &mut String) -> fmt::Result {
    write!(
        p,
        "irq={} ret={}",
        i(e.irq),
        if i(e.ret) != 0 {
            "handled"
        } else {
            "unhandled"
        }
    )
}

// Workqueues.

fn execute_work(e: &Work, f: &str, p: &mut String) -> fmt::Result {
    write!(p, "work struct {:016x}: function {f}", e.work.unwrap_or(0))
}

fn queue_work(e: &QueueWork, f: &str, p: &mut String) -> fmt::Result {
    write!(
        p,
        "work struct={:016x} function={f} workqueue={} req_cpu={} cpu={}",
        e.work.unwrap_or(0),
        s(&e.workqueue),
        i(e.req_cpu),
        i(e.cpu)
    )
}

// Tasks.

fn task_newtask(e: &TaskNewtask, p: &mut String) -> fmt::Result {
    write!(
        p,
        "pid={} comm={} clone_flags={:x} oom_score_adj={}",
        i(e.pid),
        s(&e.comm),
        e.clone_flags.unwrap_or(0),
        i(e.oom_score_adj)
    )
}

fn task_rename(e: &TaskRename, p: &mut String) -> fmt::Result {
    write!(
        p,
        "pid={} oldcomm={} newcomm={} oom_score_adj={}",
        i(e.pid),
        s(&e.oldcomm),
        s(&e.newcomm),
        i(e.oom_score_adj)
    )
}

fn oom_score_adj_update(e: &OomScoreAdjUpdate, p: &mut String) -> fmt::Result {
    write!(
        p,
        "pid={} comm={} oom_score_adj={}",
        i(e.pid),
        s(&e.comm),
        i(e.oom_score_adj)
    )
}

// System calls.

fn sys_enter(e: &SysEnter, p: &mut String) -> fmt::Result {
    write!(p, "NR {} (", e.id.unwrap_or(0))?;
    for (n, a) in e.args.iter().enumerate() {
        write!(p, "{}{a:x}", if n > 0 { ", " } else { "" })?;
    }
    write!(p, ")")
}

// High-resolution timers.

fn hrtimer_start(e: &HrtimerStart, f: &str, p: &mut String) -> fmt::Result {
    write!(
        p,
        "hrtimer={:016x} function={f} expires={} softexpires={} mode=",
        e.hrtimer.unwrap_or(0),
        e.expires.unwrap_or(0),
        e.softexpires.unwrap_or(0)
    )?;
    hrtimer_mode(e.mode.unwrap_or(0), p);
    Ok(())
}

fn hrtimer_expire_entry(e: &HrtimerExpireEntry, f: &str, p: &mut String) -> fmt::Result {
    write!(
        p,
        "hrtimer={:016x} function={f} now={}",
        e.hrtimer.unwrap_or(0),
        e.now.unwrap_or(0)
    )
}

/// An event Perfetto had no proto for: its fields as `name=value`, space-separated.
fn generic(g: &Generic, p: &mut String) -> fmt::Result {
    for (n, field) in g.field.iter().enumerate() {
        write!(p, "{}{}=", if n > 0 { " " } else { "" }, s(&field.name))?;
        match &field.value {
            Some(GenericValue::Str(v)) => write!(p, "{v}")?,
            Some(GenericValue::Int(v)) => write!(p, "{v}")?,
            Some(GenericValue::Uint(v)) => write!(p, "{v}")?,
            None => {}
        }
    }
    Ok(())
}

fn i(o: Option<i32>) -> i32 {
    o.unwrap_or(0)
}

/// A switch's pid or prio as printed: `?` when the trace does not give it (see
/// [`crate::event::UNKNOWN_PID`]), where a 0 would name the idle task or the highest priority.
fn known(o: Option<i32>) -> String {
    match o {
        Some(v) if v != UNKNOWN_PID => v.to_string(),
        _ => "?".into(),
    }
}

/// `prev_state` as the kernel (4.14 and later) prints it: the letters of the set bits joined
/// by `|` (`R` when none is set), and `+` when the task was preempted.
pub fn task_state(bits: i64, out: &mut String) {
    const LETTERS: &[u8; 8] = b"SDTtXZPI";
    let mut any = false;
    for (bit, &letter) in LETTERS.iter().enumerate() {
        if bits & (1 << bit) != 0 {
            if any {
                out.push('|');
            }
            out.push(letter as char);
            any = true;
        }
    }
    if !any {
        out.push('R');
    }
    if bits & 0x100 != 0 {
        out.push('+');
    }
}

/// `enum hrtimer_mode` as the kernel prints it (`ABS`, `REL|PINNED|HARD`…).
fn hrtimer_mode(mode: u32, out: &mut String) {
    out.push_str(if mode & 1 != 0 { "REL" } else { "ABS" });
    for (bit, name) in [(2, "|PINNED"), (4, "|SOFT"), (8, "|HARD")] {
        if mode & bit != 0 {
            out.push_str(name);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::TaskState;

    fn state(bits: i64) -> String {
        let mut s = String::new();
        task_state(bits, &mut s);
        s
    }

    #[test]
    fn task_state_letters() {
        assert_eq!(state(0), "R");
        assert_eq!(state(0x100), "R+");
        assert_eq!(state(1), "S");
        assert_eq!(state(0x82), "D|I");
        assert_eq!(state(0x101), "S+");
    }

    /// The letters and the typed state are two views of the same bits; the text readers turn
    /// the letters into the state, so both paths must agree.
    #[test]
    fn letters_and_typed_state_agree() {
        for bits in 0..0x200i64 {
            assert_eq!(
                TaskState::parse(&state(bits)),
                TaskState::from_report_bits(bits as u64),
                "bits {bits:#x} print as {}",
                state(bits)
            );
        }
    }

    #[test]
    fn hrtimer_modes() {
        let mut s = String::new();
        hrtimer_mode(0, &mut s);
        s.push(' ');
        hrtimer_mode(0b1011, &mut s);
        assert_eq!(s, "ABS REL|PINNED|HARD");
    }
}
