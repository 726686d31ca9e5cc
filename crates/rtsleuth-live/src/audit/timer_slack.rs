//! Timer slack: how much later than asked the kernel may fire a non-RT task's timer, to batch
//! wake-ups. SCHED_FIFO/RR threads get none, so it matters only for threads measured or run
//! at SCHED_OTHER, and it is inherited, so a raised value (systemd `TimerSlackNSec=`) spreads.

use super::{Check, Context, Verdict};

const ID: &str = "timer_slack";
const TITLE: &str = "Timer slack";
const PATH: &str = "/proc/self/timerslack_ns";
/// The kernel's default, 50 us.
const DEFAULT_NS: u64 = 50_000;

pub(super) fn check(ctx: &Context) -> Check {
    let why = format!("a SCHED_OTHER thread's timers may fire up to its slack late (kernel default {DEFAULT_NS} ns, inherited from the parent); SCHED_FIFO/RR threads have none");
    let Some(text) = ctx.sys.read(PATH) else {
        return Check::unknown(ID, TITLE, PATH, &why);
    };
    let (value, verdict) = match text.parse::<u64>() {
        Ok(ns) if ns <= DEFAULT_NS => (format!("{ns} ns (this process)"), Verdict::Ok),
        Ok(ns) => (
            format!("{ns} ns (this process; above the {DEFAULT_NS} ns default)"),
            Verdict::Warn,
        ),
        Err(_) => (format!("unknown ({text:?})"), Verdict::Info),
    };
    Check {
        id: ID,
        title: TITLE,
        value,
        verdict,
        why,
        fix: (verdict == Verdict::Warn).then(|| {
            "run the measured threads at SCHED_FIFO, or lower the slack where it is raised (systemd TimerSlackNSec=, prctl(PR_SET_TIMERSLACK))".into()
        }),
    }
}
