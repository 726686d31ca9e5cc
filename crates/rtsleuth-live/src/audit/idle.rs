//! Idle states (C-states on x86, PSCI states on ARM) the measured CPUs may enter: a CPU woken
//! from a deep state first spends the state's exit latency powering back up, before the timer
//! interrupt even runs.

use super::system::numbered;
use super::{per_cpu, About, Check, Context, Verdict};
use crate::cpus::CpuList;

const ABOUT: About = About {
    id: "idle_states",
    title: "Idle states (exit latency)",
    why: "a CPU woken from an idle state first pays its exit latency: states above 5 us show up directly in wake-up latency (rtsleuth measure and cyclictest hold /dev/cpu_dma_latency at 0 while they run, your RT application may not); without cpuidle states the CPU idles with the architecture default (hlt / wfi; in a VM, a VM exit), whose cost the kernel does not report",
};
/// Exit latencies up to this are the shallow states (POLL, C1) an RT CPU may use.
const OK_US: u64 = 5;
/// Beyond this a state costs as much as a whole wake-up on a tuned system.
const BAD_US: u64 = 50;

/// One enabled or disabled idle state.
struct State {
    name: String,
    latency_us: u64,
    disabled: bool,
}

fn states(ctx: &Context, cpu: usize) -> Vec<State> {
    let dir = format!("/sys/devices/system/cpu/cpu{cpu}/cpuidle");
    let mut indices: Vec<usize> = ctx
        .sys
        .list(&dir)
        .iter()
        .filter_map(|n| numbered(n, "state"))
        .collect();
    indices.sort_unstable();
    indices
        .into_iter()
        .filter_map(|k| {
            let read = |file: &str| ctx.sys.read(&format!("{dir}/state{k}/{file}"));
            Some(State {
                name: read("name")?,
                latency_us: read("latency")?.parse().ok()?,
                disabled: read("disable").is_some_and(|d| d != "0"),
            })
        })
        .collect()
}

pub(super) fn check(ctx: &Context) -> Check {
    let mut worst_us = 0;
    let mut deep = Vec::new();
    let per: Vec<(usize, String)> = ctx
        .cpus
        .as_slice()
        .iter()
        .filter_map(|&cpu| {
            let states = states(ctx, cpu);
            let deepest = states
                .iter()
                .filter(|s| !s.disabled)
                .max_by_key(|s| s.latency_us)?;
            worst_us = worst_us.max(deepest.latency_us);
            if deepest.latency_us > OK_US {
                deep.push(cpu);
            }
            let mut value = format!("{} {} us", deepest.name, deepest.latency_us);
            let disabled: Vec<&str> = states
                .iter()
                .filter(|s| s.disabled)
                .map(|s| s.name.as_str())
                .collect();
            if !disabled.is_empty() {
                value.push_str(&format!(" ({} disabled)", disabled.join(", ")));
            }
            Some((cpu, value))
        })
        .collect();
    if per.is_empty() {
        let driver = ctx
            .sys
            .read("/sys/devices/system/cpu/cpuidle/current_driver")
            .unwrap_or_else(|| "unknown".into());
        return ABOUT.finding(
            format!("no idle states listed (cpuidle driver: {driver})"),
            Verdict::Info,
            None,
        );
    }
    let verdict = if worst_us <= OK_US {
        Verdict::Ok
    } else if worst_us <= BAD_US {
        Verdict::Warn
    } else {
        Verdict::Bad
    };
    let list = CpuList::from(deep);
    let fix = (verdict != Verdict::Ok).then(|| {
        let boot = match ctx.is_arm() {
            true => "cpuidle.off=1",
            false => "intel_idle.max_cstate=1 processor.max_cstate=1",
        };
        format!("cpupower -c {list} idle-set -D {} (or boot with {boot}, or echo 1 > /sys/devices/system/cpu/cpuN/cpuidle/stateK/disable)", OK_US + 1)
    });
    ABOUT.finding(format!("deepest enabled: {}", per_cpu(&per)), verdict, fix)
}
