//! Simultaneous multithreading: two hardware threads share one core's execution units and
//! caches, so whatever runs on the sibling slows the measured thread by a varying amount.

use super::{About, Check, Context, Verdict};
use crate::cpus::CpuList;

const ABOUT: About = About {
    id: "smt",
    title: "SMT (hyper-threading)",
    why: "SMT siblings share a core's execution units and caches: whatever runs on the sibling slows the measured thread by a varying amount",
};

pub(super) fn check(ctx: &Context) -> Check {
    let active = ctx.sys.read("/sys/devices/system/cpu/smt/active");
    let control = ctx.sys.read("/sys/devices/system/cpu/smt/control");
    let (value, verdict) = match (active.as_deref(), control.as_deref()) {
        (None, None) | (_, Some("notimplemented")) => match from_topology(ctx) {
            Some(found) => found,
            None if control.is_some() => (
                "unknown (the kernel cannot control SMT on this CPU)".to_string(),
                Verdict::Info,
            ),
            None => return ABOUT.unknown("/sys/devices/system/cpu/smt"),
        },
        (_, Some("notsupported")) => ("not supported by the CPU".to_string(), Verdict::Ok),
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

/// Where the kernel has no SMT control (ARM kernels: `notimplemented`, or no `smt` directory),
/// the topology still says which CPUs share a core: each measured CPU's `thread_siblings_list`.
fn from_topology(ctx: &Context) -> Option<(String, Verdict)> {
    if ctx.cpus.is_empty() {
        return None;
    }
    let mut shared = Vec::new();
    for &cpu in ctx.cpus.as_slice() {
        let path = format!("/sys/devices/system/cpu/cpu{cpu}/topology/thread_siblings_list");
        let siblings: CpuList = ctx.sys.read(&path)?.parse().ok()?;
        if siblings.as_slice().iter().any(|&s| s != cpu) {
            shared.push(cpu);
        }
    }
    Some(match shared.is_empty() {
        true => (
            "none: each measured CPU is a core of its own (topology/thread_siblings_list)".into(),
            Verdict::Ok,
        ),
        false => (
            format!(
                "CPU {} share a core with another CPU (topology/thread_siblings_list)",
                CpuList::from(shared)
            ),
            Verdict::Warn,
        ),
    })
}
