//! The clocksource behind `clock_gettime` and every timestamp a measurement takes: the TSC (or
//! arm64's arch counter) is read in user space in nanoseconds; HPET and the ACPI PM timer
//! cost a system call and a slow I/O read each time.

use super::{About, Check, Context, Verdict};

const ABOUT: About = About {
    id: "clocksource",
    title: "Clocksource",
    why: "every timestamp of a measurement reads the clocksource: tsc and arch_sys_counter are read in user space in ns; hpet and acpi_pm need a system call and a slow device read (around 1 us), jiffies has 1/HZ resolution; a paravirtual clock means a guest whose vCPUs the host can stop",
};

const DIR: &str = "/sys/devices/system/clocksource/clocksource0";
/// Counters read directly by the vDSO.
const FAST: &[&str] = &["tsc", "arch_sys_counter", "riscv_clocksource"];
/// Paravirtual clocks: fast, but they say the machine is a guest whose vCPUs the host can stop.
const PARAVIRT: &[&str] = &["kvm-clock", "hyperv_clocksource_tsc_page", "xen"];
/// Clocks read through a system call and a slow device access.
const SLOW: &[&str] = &["hpet", "acpi_pm", "jiffies", "refined-jiffies"];

pub(super) fn check(ctx: &Context) -> Check {
    let Some(current) = ctx.sys.read(&format!("{DIR}/current_clocksource")) else {
        return ABOUT.unknown(DIR);
    };
    let available = ctx
        .sys
        .read(&format!("{DIR}/available_clocksource"))
        .unwrap_or_default();
    let available: Vec<&str> = available.split_whitespace().collect();
    let fast_available = available.iter().copied().find(|c| FAST.contains(c));
    let verdict = if FAST.contains(&current.as_str()) {
        Verdict::Ok
    } else if PARAVIRT.contains(&current.as_str()) {
        Verdict::Warn
    } else if SLOW.contains(&current.as_str()) {
        Verdict::Bad
    } else {
        Verdict::Info
    };
    let fix = match (verdict, fast_available) {
        (Verdict::Ok | Verdict::Info, _) => None,
        (_, Some(fast)) => Some(format!(
            "echo {fast} > {DIR}/current_clocksource (or boot with clocksource={fast}{})",
            if fast == "tsc" { " tsc=reliable" } else { "" }
        )),
        (_, None) => Some(
            "the kernel found no usable fast counter (check dmesg for 'clocksource' and 'tsc' messages: an unstable TSC was rejected)".to_string(),
        ),
    };
    let value = format!("{current} (available: {})", available.join(" "));
    ABOUT.finding(value, verdict, fix)
}
