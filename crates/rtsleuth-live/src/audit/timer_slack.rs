//! Timer slack: how much later than asked the kernel may fire a non-RT task's timer, to batch
//! wake-ups. SCHED_FIFO/RR threads get none, so it matters only for threads measured or run
//! at SCHED_OTHER, and it is inherited, so a raised value (systemd `TimerSlackNSec=`) spreads.

use super::{About, Check, Context, Verdict};

const ABOUT: About = About {
    id: "timer_slack",
    title: "Timer slack",
    why: "a SCHED_OTHER thread's timers may fire up to its slack late (kernel default 50000 ns, inherited from the parent); SCHED_FIFO/RR threads have none",
};
const PATH: &str = "/proc/self/timerslack_ns";
/// The kernel's default, 50 us.
const DEFAULT_NS: u64 = 50_000;

pub(super) fn check(ctx: &Context) -> Check {
    let Some(text) = ctx.sys.read(PATH) else {
        return ABOUT.unknown(PATH);
    };
    let (value, verdict) = match text.parse::<u64>() {
        Ok(ns) if ns <= DEFAULT_NS => (format!("{ns} ns (this process)"), Verdict::Ok),
        Ok(ns) => (
            format!("{ns} ns (this process; above the {DEFAULT_NS} ns default)"),
            Verdict::Warn,
        ),
        Err(_) => (format!("unknown ({text:?})"), Verdict::Info),
    };
    let fix = (verdict == Verdict::Warn).then(|| {
        "run the measured threads at SCHED_FIFO, or lower the slack where it is raised (systemd TimerSlackNSec=, prctl(PR_SET_TIMERSLACK))".into()
    });
    ABOUT.finding(value, verdict, fix)
}
