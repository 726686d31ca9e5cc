//! The cpufreq governor of each measured CPU: a governor that lowers the clock when the CPU is
//! idle makes the next wake-up run slowly until it ramps up again, and the ramp itself stalls.

use super::{per_cpu, Check, Context, Verdict};
use crate::cpus::CpuList;

const ID: &str = "cpufreq_governor";
const TITLE: &str = "CPU frequency governor";

pub(super) fn check(ctx: &Context) -> Check {
    let governors: Vec<(usize, String)> = ctx
        .cpus
        .as_slice()
        .iter()
        .filter_map(|&cpu| {
            let path = format!("/sys/devices/system/cpu/cpu{cpu}/cpufreq/scaling_governor");
            Some((cpu, ctx.sys.read(&path)?))
        })
        .collect();
    if governors.is_empty() {
        return Check {
            id: ID,
            title: TITLE,
            value: "no cpufreq (fixed clock, or set by firmware or the hypervisor)".into(),
            verdict: Verdict::Info,
            why: "without a cpufreq driver the kernel does not change the clock; the firmware or a hypervisor still may".into(),
            fix: None,
        };
    }
    let slow: Vec<usize> = governors
        .iter()
        .filter(|(_, g)| g != "performance")
        .map(|(cpu, _)| *cpu)
        .collect();
    let verdict = if slow.is_empty() {
        Verdict::Ok
    } else if governors
        .iter()
        .all(|(_, g)| g == "performance" || g == "userspace")
    {
        Verdict::Warn
    } else {
        Verdict::Bad
    };
    let mut value = per_cpu(&governors);
    let unread = ctx.cpus.as_slice().len() - governors.len();
    if unread > 0 {
        value.push_str(&format!(" ({unread} CPUs without cpufreq)"));
    }
    let list = CpuList::from(slow);
    Check {
        id: ID,
        title: TITLE,
        value,
        verdict,
        why: "powersave, schedutil and ondemand lower the clock while the CPU idles, so the code after a wake-up runs slower and frequency changes stall the CPU; userspace holds whatever frequency was last set".into(),
        fix: (verdict != Verdict::Ok).then(|| {
            format!("cpupower -c {list} frequency-set -g performance (or: echo performance > /sys/devices/system/cpu/cpuN/cpufreq/scaling_governor for N in {list})")
        }),
    }
}
