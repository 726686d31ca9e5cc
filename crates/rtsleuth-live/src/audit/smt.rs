//! Simultaneous multithreading: two hardware threads share one core's execution units and
//! caches, so whatever runs on the sibling slows the measured thread by a varying amount.

use super::{About, Check, Context, Verdict};

const ABOUT: About = About {
    id: "smt",
    title: "SMT (hyper-threading)",
    why: "SMT siblings share a core's execution units and caches: whatever runs on the sibling slows the measured thread by a varying amount",
};

pub(super) fn check(ctx: &Context) -> Check {
    let active = ctx.sys.read("/sys/devices/system/cpu/smt/active");
    let control = ctx.sys.read("/sys/devices/system/cpu/smt/control");
    let (value, verdict) = match (active.as_deref(), control.as_deref()) {
        (None, None) => return ABOUT.unknown("/sys/devices/system/cpu/smt"),
        (_, Some("notsupported")) => ("not supported by the CPU".to_string(), Verdict::Ok),
        (_, Some("notimplemented")) => (
            "unknown (the kernel cannot control SMT on this CPU)".to_string(),
            Verdict::Info,
        ),
        (Some("1"), control) => (
            format!("on (control={})", control.unwrap_or("?")),
            Verdict::Warn,
        ),
        (Some("0"), control) => (
            format!("off (control={})", control.unwrap_or("?")),
            Verdict::Ok,
        ),
        (active, control) => (
            format!(
                "unknown (active={}, control={})",
                active.unwrap_or("?"),
                control.unwrap_or("?")
            ),
            Verdict::Info,
        ),
    };
    let fix = (verdict == Verdict::Warn).then(|| {
        "echo off > /sys/devices/system/cpu/smt/control (or boot with nosmt), or keep the measured CPUs' siblings idle".to_string()
    });
    ABOUT.finding(value, verdict, fix)
}
