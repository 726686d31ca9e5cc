//! RT throttling: once real-time tasks have used `sched_rt_runtime_us` of a
//! `sched_rt_period_us` window, the kernel stops them for the rest of it. A safety net for a
//! runaway RT task on a desktop; on a measurement machine, a silent 50 ms stall.

use super::{About, Check, Context, Verdict};

const ABOUT: About = About {
    id: "rt_throttling",
    title: "RT throttling",
    why: "once RT tasks have used sched_rt_runtime_us of each sched_rt_period_us, the kernel stops all of them for the rest of the period: a measurement under heavy RT load sees a stall of period - runtime (50 ms by default)",
};
const RUNTIME: &str = "/proc/sys/kernel/sched_rt_runtime_us";
const PERIOD: &str = "/proc/sys/kernel/sched_rt_period_us";

pub(super) fn check(ctx: &Context) -> Check {
    let (Some(runtime), Some(period)) = (ctx.sys.read(RUNTIME), ctx.sys.read(PERIOD)) else {
        return ABOUT.unknown(RUNTIME);
    };
    let (value, verdict) = match (runtime.parse::<i64>(), period.parse::<i64>()) {
        (Ok(-1), _) => ("off (sched_rt_runtime_us = -1)".to_string(), Verdict::Ok),
        (Ok(r), Ok(p)) if r >= p => (
            format!("off (runtime {r} us >= period {p} us)"),
            Verdict::Ok,
        ),
        (Ok(r), Ok(p)) if r >= 0 && p > 0 => (
            format!(
                "{r} of {p} us ({:.0}%): RT tasks stop for {} us when they exhaust it",
                r as f64 * 100.0 / p as f64,
                p - r
            ),
            Verdict::Warn,
        ),
        _ => (
            format!("unknown (runtime {runtime:?}, period {period:?})"),
            Verdict::Info,
        ),
    };
    let fix = (verdict == Verdict::Warn)
        .then(|| "sysctl -w kernel.sched_rt_runtime_us=-1 (persist in /etc/sysctl.d/)".into());
    ABOUT.finding(value, verdict, fix)
}
