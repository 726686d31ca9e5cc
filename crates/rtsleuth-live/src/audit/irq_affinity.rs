//! Device IRQs that can land on the measured CPUs. A hard IRQ handler runs before anything
//! else on its CPU and, without PREEMPT_RT, so do the softirqs it raises: a network or storage
//! IRQ on a measured CPU is latency no priority can avoid.

use super::system::{numbered, SystemView};
use super::{About, Check, Context, Verdict};
use crate::cpus::CpuList;
use std::collections::HashMap;

const ABOUT: About = About {
    id: "irq_affinity",
    title: "Device IRQs on measured CPUs",
    why: "a hard IRQ handler runs before any thread on its CPU (and, without PREEMPT_RT, so do the softirqs it raises): a device IRQ on a measured CPU adds its handler time to whatever wake-up it hits. Per-CPU interrupts (local timer, IPIs) cannot be moved and are not counted",
};
/// How many IRQs the value names before "+N more".
const NAMED: usize = 4;

/// One device IRQ's routing.
struct Irq {
    number: usize,
    /// The CPUs it may be routed to.
    allowed: CpuList,
    /// The CPUs it is routed to now, when the kernel reports it.
    effective: Option<CpuList>,
}

fn irqs(ctx: &Context) -> Vec<Irq> {
    let mut numbers: Vec<usize> = ctx
        .sys
        .list("/proc/irq")
        .iter()
        .filter_map(|n| numbered(n, ""))
        .collect();
    numbers.sort_unstable();
    numbers
        .into_iter()
        .filter_map(|number| {
            let list = |file: &str| {
                ctx.sys
                    .read(&format!("/proc/irq/{number}/{file}"))?
                    .parse::<CpuList>()
                    .ok()
            };
            Some(Irq {
                number,
                allowed: list("smp_affinity_list")?,
                effective: list("effective_affinity_list"),
            })
        })
        .collect()
}

/// IRQ number -> handler names, from `/proc/interrupts`. After the counts come the chip, the
/// hardware IRQ and trigger (one or two words depending on the chip) and the actions, which
/// are comma-separated when shared: the name is the last word and the words ending in `,`
/// before it.
fn names(sys: &SystemView) -> HashMap<usize, String> {
    let mut lines = sys.lines("/proc/interrupts").into_iter().flatten();
    let Some(header) = lines.next() else {
        return HashMap::new();
    };
    let columns = header.split_whitespace().count();
    lines
        .filter_map(|line| {
            let mut words = line.split_whitespace();
            let number = words.next()?.strip_suffix(':')?.parse().ok()?;
            let rest: Vec<&str> = words.skip(columns).collect();
            let (last, before) = rest.split_last()?;
            let shared = before.iter().rev().take_while(|w| w.ends_with(','));
            let mut parts: Vec<&str> = shared.copied().collect();
            parts.reverse();
            parts.push(last);
            Some((number, parts.join(" ")))
        })
        .collect()
}

pub(super) fn check(ctx: &Context) -> Check {
    let irqs = irqs(ctx);
    if irqs.is_empty() {
        return ABOUT.unknown("/proc/irq/*/smp_affinity_list");
    }
    let names = names(ctx.sys);
    let touches = |cpus: &CpuList| cpus.as_slice().iter().any(|c| ctx.cpus.contains(*c));
    let handled: Vec<&Irq> = irqs
        .iter()
        .filter(|i| i.effective.as_ref().is_some_and(touches))
        .collect();
    let allowed: Vec<&Irq> = irqs.iter().filter(|i| touches(&i.allowed)).collect();
    let label = |i: &&Irq| match names.get(&i.number) {
        Some(name) => format!("{} {name}", i.number),
        None => i.number.to_string(),
    };
    let mut listed: Vec<String> = handled.iter().take(NAMED).map(label).collect();
    if handled.len() > NAMED {
        listed.push(format!("+{} more", handled.len() - NAMED));
    }
    let (value, verdict) = if !handled.is_empty() {
        (
            format!(
                "{} of {} IRQs routed to them now ({}); {} may be routed there",
                handled.len(),
                irqs.len(),
                listed.join(", "),
                allowed.len()
            ),
            Verdict::Bad,
        )
    } else if !allowed.is_empty() {
        (
            format!(
                "none routed to them now; {} of {} IRQs may be routed there",
                allowed.len(),
                irqs.len()
            ),
            Verdict::Warn,
        )
    } else {
        (
            format!("none of {} IRQs may be routed to them", irqs.len()),
            Verdict::Ok,
        )
    };
    let fix = (verdict != Verdict::Ok).then(|| match ctx.housekeeping() {
        Some(house) => {
            let numbers: Vec<String> = allowed.iter().map(|i| i.number.to_string()).collect();
            format!(
                "for n in {}; do echo {house} > /proc/irq/$n/smp_affinity_list; done (stop irqbalance or set IRQBALANCE_BANNED_CPULIST={}), and boot with irqaffinity={house}",
                numbers.join(" "),
                ctx.cpus
            )
        }
        None => "every online CPU is measured: leave one out of --cpus for device IRQs, then route them there (irqaffinity= at boot, /proc/irq/N/smp_affinity_list at run time)".to_string(),
    });
    ABOUT.finding(value, verdict, fix)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_skip_the_counts_chip_and_hwirq_and_keep_shared_actions() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("proc")).unwrap();
        std::fs::write(
            dir.path().join("proc/interrupts"),
            "           CPU0       CPU1\n\
             \x20 9:          0          0  IO-APIC   9-fasteoi   acpi\n\
             \x2016:        100          3  IO-APIC  16-fasteoi   ehci_hcd:usb1, uhci_hcd:usb2\n\
             \x2011:         12         34     GICv3  27 Level     arch_timer\n\
             LOC:    2495848    2724210   Local timer interrupts\n",
        )
        .unwrap();
        let sys = SystemView::new(dir.path());
        let names = names(&sys);
        assert_eq!(names[&9], "acpi");
        assert_eq!(names[&16], "ehci_hcd:usb1, uhci_hcd:usb2");
        assert_eq!(names[&11], "arch_timer");
        assert_eq!(names.len(), 3);
    }
}
