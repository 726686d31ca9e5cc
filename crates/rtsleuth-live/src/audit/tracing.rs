//! What tracing can show on this machine: tracefs itself, the latency tracers, the events
//! rtsleuth explains latency with, and the `preemptirq` events that name the code that held
//! interrupts or preemption off.

use super::{About, Check, Context, Verdict};
use crate::tracefs::{pick_mount, AvailableEvents, MOUNT_POINTS};
use std::collections::HashSet;

/// The latency tracers and the option that builds each.
const TRACERS: &[(&str, &str)] = &[
    ("irqsoff", "CONFIG_IRQSOFF_TRACER"),
    ("preemptoff", "CONFIG_PREEMPT_TRACER"),
    ("wakeup_rt", "CONFIG_SCHED_TRACER"),
    ("function_graph", "CONFIG_FUNCTION_GRAPH_TRACER"),
    ("hwlat", "CONFIG_HWLAT_TRACER"),
    ("timerlat", "CONFIG_TIMERLAT_TRACER"),
    ("osnoise", "CONFIG_OSNOISE_TRACER"),
];

/// Events a wake-up explanation needs; without the first three it has no wake-ups at all.
const EVENTS: &[&str] = &[
    "sched:sched_switch",
    "sched:sched_waking",
    "sched:sched_wakeup",
    "irq:irq_handler_entry",
    "irq:irq_handler_exit",
    "irq:softirq_entry",
    "irq:softirq_exit",
    "timer:hrtimer_start",
    "timer:hrtimer_expire_entry",
    "timer:hrtimer_expire_exit",
];
const ESSENTIAL: usize = 3;

const PREEMPTIRQ: &[&str] = &[
    "preemptirq:irq_disable",
    "preemptirq:irq_enable",
    "preemptirq:preempt_disable",
    "preemptirq:preempt_enable",
];

/// The four checks, in report order.
pub(super) fn checks(ctx: &Context) -> Vec<Check> {
    let mount = mount_point(ctx);
    let found = match &mount {
        Mount::At(dir) => ctx
            .sys
            .read(&format!("{dir}/available_tracers"))
            .map(|tracers| (dir.as_str(), tracers)),
        _ => None,
    };
    let mut checks = vec![tracefs(&mount, found.is_some())];
    match found {
        Some((dir, available_tracers)) => {
            checks.push(tracers(&available_tracers));
            match AvailableEvents::read(&ctx.sys.path(dir)) {
                Ok(events) => checks.extend([trace_events(&events), preemptirq_events(&events)]),
                Err(_) => checks.extend(
                    [TRACE_EVENTS, PREEMPTIRQ_EVENTS].map(|a| a.unknown("available_events")),
                ),
            }
        }
        None => checks.extend(
            [LATENCY_TRACERS, TRACE_EVENTS, PREEMPTIRQ_EVENTS].map(|a| a.unknown("tracefs")),
        ),
    }
    checks
}

/// Where tracefs is, as far as the tree tells.
enum Mount {
    At(String),
    /// /proc/mounts lists no tracefs.
    NotMounted,
    /// Neither /proc/mounts nor a tracefs directory could be read.
    Unknown,
}

/// The tracefs mount point from /proc/mounts, else the first of the usual mount points that
/// holds tracefs files.
fn mount_point(ctx: &Context) -> Mount {
    let Some(mounts) = ctx.sys.read("/proc/mounts") else {
        return MOUNT_POINTS
            .iter()
            .find(|p| ctx.sys.read(&format!("{p}/available_tracers")).is_some())
            .map_or(Mount::Unknown, |p| Mount::At(p.to_string()));
    };
    pick_mount(&mounts).map_or(Mount::NotMounted, |p| Mount::At(p.to_string()))
}

const TRACEFS: About = About {
    id: "tracefs",
    title: "tracefs",
    why: "every trace rtsleuth records, and every latency tracer, goes through tracefs",
};

fn tracefs(mount: &Mount, readable: bool) -> Check {
    let (value, verdict, fix) = match (mount, readable) {
        (Mount::Unknown, _) => return TRACEFS.unknown("/proc/mounts"),
        (Mount::At(dir), true) => (format!("mounted at {dir}"), Verdict::Ok, None),
        (Mount::At(dir), false) => (
            format!("mounted at {dir}, not readable"),
            Verdict::Warn,
            Some("run as root (or grant access to the tracefs files)".to_string()),
        ),
        (Mount::NotMounted, _) => (
            "not mounted".to_string(),
            Verdict::Bad,
            Some("mount -t tracefs nodev /sys/kernel/tracing".to_string()),
        ),
    };
    TRACEFS.finding(value, verdict, fix)
}

const LATENCY_TRACERS: About = About {
    id: "tracers",
    title: "Latency tracers",
    why: "irqsoff, preemptoff and wakeup_rt catch the worst section the kernel itself measured; function_graph shows where the time went; hwlat, timerlat and osnoise measure the hardware, timer and OS noise under the workload",
};

fn tracers(available_tracers: &str) -> Check {
    let available: HashSet<&str> = available_tracers.split_whitespace().collect();
    let (have, missing): (Vec<_>, Vec<_>) =
        TRACERS.iter().partition(|(t, _)| available.contains(t));
    let names =
        |list: &[&(&str, &str)]| list.iter().map(|(t, _)| *t).collect::<Vec<_>>().join(", ");
    let value = match (have.is_empty(), missing.is_empty()) {
        (_, true) => format!("all: {}", names(&have)),
        (true, false) => format!("none of {}", names(&missing)),
        (false, false) => format!("{}; missing {}", names(&have), names(&missing)),
    };
    let verdict = if missing.is_empty() {
        Verdict::Ok
    } else {
        Verdict::Warn
    };
    let fix = (!missing.is_empty()).then(|| {
        let options: Vec<String> = missing.iter().map(|(_, o)| format!("{o}=y")).collect();
        format!("rebuild the kernel with {}", options.join(" "))
    });
    LATENCY_TRACERS.finding(value, verdict, fix)
}

/// The events of `list` that are available, and those that are not.
fn split(
    list: &[&'static str],
    events: &AvailableEvents,
) -> (Vec<&'static str>, Vec<&'static str>) {
    list.iter().partition(|e| events.contains(e))
}

const TRACE_EVENTS: About = About {
    id: "trace_events",
    title: "Trace events",
    why: "rtsleuth explains a late wake-up from sched_waking/sched_wakeup/sched_switch, the IRQ and softirq events and the hrtimer events",
};

fn trace_events(events: &AvailableEvents) -> Check {
    let (_, missing) = split(EVENTS, events);
    let verdict = if missing.is_empty() {
        Verdict::Ok
    } else if missing.iter().any(|m| EVENTS[..ESSENTIAL].contains(m)) {
        Verdict::Bad
    } else {
        Verdict::Warn
    };
    let value = if missing.is_empty() {
        format!("all {} present", EVENTS.len())
    } else {
        format!("missing {}", missing.join(", "))
    };
    let fix = (verdict != Verdict::Ok).then(|| {
        "rebuild the kernel with CONFIG_FTRACE=y and the event groups' options (sched, irq and timer events come with CONFIG_TRACING)".into()
    });
    TRACE_EVENTS.finding(value, verdict, fix)
}

const PREEMPTIRQ_EVENTS: About = About {
    id: "preemptirq_events",
    title: "preemptirq events",
    why: "irq_disable/enable and preempt_disable/enable name the code that held interrupts or preemption off; without them rtsleuth can only infer irqs-off from late timer interrupts",
};

fn preemptirq_events(events: &AvailableEvents) -> Check {
    let (have, _) = split(PREEMPTIRQ, events);
    let verdict = if have.len() == PREEMPTIRQ.len() {
        Verdict::Ok
    } else {
        Verdict::Warn
    };
    let short = |list: &[&str]| {
        list.iter()
            .map(|e| e.trim_start_matches("preemptirq:"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let value = if have.is_empty() {
        "absent".to_string()
    } else {
        short(&have)
    };
    let fix = (verdict != Verdict::Ok).then(|| {
        "rebuild the kernel with CONFIG_IRQSOFF_TRACER=y CONFIG_PREEMPT_TRACER=y (they enable CONFIG_PREEMPTIRQ_TRACEPOINTS; costs a little on every irq/preempt toggle)".into()
    });
    PREEMPTIRQ_EVENTS.finding(value, verdict, fix)
}
