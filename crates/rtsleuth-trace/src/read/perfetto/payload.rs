//! Rendering an event body the way the kernel's ftrace text prints it (the events' `TP_printk`
//! formats), so [`crate::event::Event::fields`] and every text consumer see the same payload
//! whichever format the trace came in.
//!
//! Kernel functions are printed by name when the trace interned their symbols, as addresses
//! (`0xffffffc0101a2b3c`) otherwise; kernel pointers as 16 hex digits.

use super::kind::{line, softirq_action};
use super::messages::{Body, GenericValue};
use crate::event::UNKNOWN_PID;
use std::fmt::Write;

/// The rendered payload, and the function name a typed decoding points into.
#[derive(Default)]
pub struct Scratch {
    pub payload: String,
    pub function: String,
}

/// Renders `body` into `out` (both strings are overwritten). `symbol` is the name of the
/// body's kernel function when the trace interned it; otherwise its address is printed.
pub fn render(body: &Body, symbol: Option<&str>, out: &mut Scratch) {
    out.payload.clear();
    out.function.clear();
    match (symbol, body.function()) {
        (Some(name), _) => out.function.push_str(name),
        (None, Some(f)) => {
            let _ = write!(out.function, "{f:#x}");
        }
        (None, None) => {}
    }
    let (p, f) = (&mut out.payload, out.function.as_str());
    // Writing to a String cannot fail.
    let _ = match body {
        Body::Print(e) => write!(p, "{}", line(&e.buf)),
        Body::Console(e) => write!(p, "{}", line(&e.msg)),
        Body::SchedSwitch(e) => {
            let _ = write!(
                p,
                "prev_comm={} prev_pid={} prev_prio={} prev_state=",
                s(&e.prev_comm),
                known(e.prev_pid),
                known(e.prev_prio)
            );
            task_state(e.prev_state.unwrap_or(0), p);
            write!(
                p,
                " ==> next_comm={} next_pid={} next_prio={}",
                s(&e.next_comm),
                known(e.next_pid),
                known(e.next_prio)
            )
        }
        Body::SchedWaking(e) | Body::SchedWakeup(e) | Body::SchedWakeupNew(e) => {
            let _ = write!(p, "comm={} pid={} prio={}", s(&e.comm), i(e.pid), i(e.prio));
            match e.target_cpu {
                Some(c) => write!(p, " target_cpu={c:03}"),
                None => Ok(()),
            }
        }
        Body::SchedMigrateTask(e) => write!(
            p,
            "comm={} pid={} prio={} orig_cpu={} dest_cpu={}",
            s(&e.comm),
            i(e.pid),
            i(e.prio),
            i(e.orig_cpu),
            i(e.dest_cpu)
        ),
        Body::SchedProcessFork(e) => write!(
            p,
            "comm={} pid={} child_comm={} child_pid={}",
            s(&e.parent_comm),
            i(e.parent_pid),
            s(&e.child_comm),
            i(e.child_pid)
        ),
        Body::SchedProcessExit(e) => {
            write!(p, "comm={} pid={} prio={}", s(&e.comm), i(e.pid), i(e.prio))
        }
        Body::SchedProcessFree(e) => {
            write!(p, "comm={} pid={} prio={}", s(&e.comm), i(e.pid), i(e.prio))
        }
        Body::SchedProcessExec(e) => write!(
            p,
            "filename={} pid={} old_pid={}",
            s(&e.filename),
            i(e.pid),
            i(e.old_pid)
        ),
        Body::SchedPiSetprio(e) => write!(
            p,
            "comm={} pid={} oldprio={} newprio={}",
            s(&e.comm),
            i(e.pid),
            i(e.oldprio),
            i(e.newprio)
        ),
        Body::SchedBlockedReason(e) => write!(
            p,
            "pid={} iowait={} caller={f}",
            i(e.pid),
            e.io_wait.unwrap_or(0)
        ),
        Body::CpuFrequency(e) | Body::CpuIdle(e) => write!(
            p,
            "state={} cpu_id={}",
            e.state.unwrap_or(0),
            e.cpu_id.unwrap_or(0)
        ),
        Body::SuspendResume(e) => write!(
            p,
            "{}[{}] {}",
            s(&e.action),
            i(e.val),
            if e.start.unwrap_or(0) != 0 {
                "begin"
            } else {
                "end"
            }
        ),
        Body::IpiEntry(e) | Body::IpiExit(e) => write!(p, "({})", s(&e.reason)),
        Body::IpiRaise(e) => write!(
            p,
            "target_mask={:08x} ({})",
            e.target_cpus.unwrap_or(0),
            s(&e.reason)
        ),
        Body::SoftirqEntry(e) | Body::SoftirqExit(e) | Body::SoftirqRaise(e) => {
            let vec = e.vec.unwrap_or(0);
            write!(p, "vec={vec} [action={}]", softirq_action(vec))
        }
        Body::IrqHandlerEntry(e) => write!(p, "irq={} name={}", i(e.irq), s(&e.name)),
        Body::IrqHandlerExit(e) => write!(
            p,
            "irq={} ret={}",
            i(e.irq),
            if i(e.ret) != 0 {
                "handled"
            } else {
                "unhandled"
            }
        ),
        Body::WorkqueueActivateWork(e) => write!(p, "work struct {:016x}", e.work.unwrap_or(0)),
        Body::WorkqueueExecuteStart(e) | Body::WorkqueueExecuteEnd(e) => {
            write!(p, "work struct {:016x}: function {f}", e.work.unwrap_or(0))
        }
        Body::WorkqueueQueueWork(e) => write!(
            p,
            "work struct={:016x} function={f} workqueue={} req_cpu={} cpu={}",
            e.work.unwrap_or(0),
            s(&e.workqueue),
            i(e.req_cpu),
            i(e.cpu)
        ),
        Body::TaskNewtask(e) => write!(
            p,
            "pid={} comm={} clone_flags={:x} oom_score_adj={}",
            i(e.pid),
            s(&e.comm),
            e.clone_flags.unwrap_or(0),
            i(e.oom_score_adj)
        ),
        Body::TaskRename(e) => write!(
            p,
            "pid={} oldcomm={} newcomm={} oom_score_adj={}",
            i(e.pid),
            s(&e.oldcomm),
            s(&e.newcomm),
            i(e.oom_score_adj)
        ),
        Body::OomScoreAdjUpdate(e) => write!(
            p,
            "pid={} comm={} oom_score_adj={}",
            i(e.pid),
            s(&e.comm),
            i(e.oom_score_adj)
        ),
        Body::SysEnter(e) => {
            let _ = write!(p, "NR {} (", e.id.unwrap_or(0));
            for (n, a) in e.args.iter().enumerate() {
                let _ = write!(p, "{}{a:x}", if n > 0 { ", " } else { "" });
            }
            write!(p, ")")
        }
        Body::SysExit(e) => write!(p, "NR {} = {}", e.id.unwrap_or(0), e.ret.unwrap_or(0)),
        Body::HrtimerStart(e) => {
            let _ = write!(
                p,
                "hrtimer={:016x} function={f} expires={} softexpires={} mode=",
                e.hrtimer.unwrap_or(0),
                e.expires.unwrap_or(0),
                e.softexpires.unwrap_or(0)
            );
            hrtimer_mode(e.mode.unwrap_or(0), p);
            Ok(())
        }
        Body::HrtimerExpireEntry(e) => write!(
            p,
            "hrtimer={:016x} function={f} now={}",
            e.hrtimer.unwrap_or(0),
            e.now.unwrap_or(0)
        ),
        Body::HrtimerExpireExit(e) | Body::HrtimerCancel(e) => {
            write!(p, "hrtimer={:016x}", e.hrtimer.unwrap_or(0))
        }
        Body::Generic(g) => {
            for (n, field) in g.field.iter().enumerate() {
                let _ = write!(p, "{}{}=", if n > 0 { " " } else { "" }, s(&field.name));
                let _ = match &field.value {
                    Some(GenericValue::Str(v)) => write!(p, "{v}"),
                    Some(GenericValue::Int(v)) => write!(p, "{v}"),
                    Some(GenericValue::Uint(v)) => write!(p, "{v}"),
                    None => Ok(()),
                };
            }
            Ok(())
        }
    };
}

fn s(o: &Option<String>) -> &str {
    o.as_deref().unwrap_or("")
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
