//! The cpufreq governor of each measured CPU: a governor that lowers the clock when the CPU is
//! idle makes the next wake-up run slowly until it ramps up again, and the ramp itself stalls.

use super::{per_cpu, About, Check, Context, Verdict};
use crate::cpus::CpuList;

const ABOUT: About = About {
    id: "cpufreq_governor",
    title: "CPU frequency governor",
    why: "powersave, schedutil and ondemand lower the clock while the CPU idles, so the code after a wake-up runs slower and frequency changes stall the CPU; userspace holds whatever frequency was last set; without cpufreq the firmware or a hypervisor may still change it",
};

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
        return ABOUT.finding(
            "no cpufreq (fixed clock, or set by firmware or the hypervisor)",
            Verdict::Info,
            None,
        );
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
    let fix = (verdict != Verdict::Ok).then(|| {
        format!("cpupower -c {list} frequency-set -g performance (or: echo performance > /sys/devices/system/cpu/cpuN/cpufreq/scaling_governor for N in {list})")
    });
    ABOUT.finding(value, verdict, fix)
}
