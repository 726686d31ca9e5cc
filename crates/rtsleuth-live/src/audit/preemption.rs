//! The preemption model: how long the kernel may keep a woken RT thread from running. Only
//! PREEMPT_RT makes spinlocks, IRQ handlers and softirqs preemptible; the other models leave
//! non-preemptible sections of milliseconds.

use super::{About, Check, Context, Verdict};

const ABOUT: About = About {
    id: "preemption",
    title: "Preemption model",
    why: "PREEMPT_RT makes spinlocks, IRQ handlers and softirqs preemptible, so a woken RT thread waits only for truly atomic sections; full and lazy leave those sections non-preemptible (occasional spikes of hundreds of us); none and voluntary switch only at explicit preemption points, so any long kernel path (I/O, memory reclaim, another task's syscall) delays it by milliseconds",
};
const DEBUGFS: &str = "/sys/kernel/debug/sched/preempt";

/// The models, as `preempt=` and `/sys/kernel/debug/sched/preempt` name them, with the config
/// option that makes each the (default) model.
const MODELS: &[(&str, &str)] = &[
    ("none", "CONFIG_PREEMPT_NONE"),
    ("voluntary", "CONFIG_PREEMPT_VOLUNTARY"),
    ("full", "CONFIG_PREEMPT"),
    ("lazy", "CONFIG_PREEMPT_LAZY"),
];

pub(super) fn check(ctx: &Context) -> Check {
    let version = ctx.kernel.version.as_deref().unwrap_or("");
    let tokens: Vec<&str> = version.split_whitespace().collect();
    let rt_source = if ctx.sys.read("/sys/kernel/realtime").as_deref() == Some("1") {
        Some("/sys/kernel/realtime = 1")
    } else if ctx.config.enabled("CONFIG_PREEMPT_RT") == Some(true) {
        Some("CONFIG_PREEMPT_RT=y")
    } else if tokens.contains(&"PREEMPT_RT") {
        Some("uname -v")
    } else {
        None
    };
    if let Some(source) = rt_source {
        return ABOUT.finding(format!("PREEMPT_RT ({source})"), Verdict::Ok, None);
    }
    let dynamic = ctx.config.enabled("CONFIG_PREEMPT_DYNAMIC") == Some(true)
        || tokens.contains(&"PREEMPT_DYNAMIC");
    let Some((model, source)) = (if dynamic {
        dynamic_model(ctx)
    } else {
        static_model(ctx, &tokens)
    }) else {
        return ABOUT.unknown("uname -v, the kernel config and /sys/kernel/realtime");
    };
    let verdict = match model {
        "full" | "lazy" => Verdict::Warn,
        _ => Verdict::Bad,
    };
    let mut fix = format!(
        "boot a PREEMPT_RT kernel (Debian: {}; Ubuntu: linux-realtime; or build with CONFIG_PREEMPT_RT=y)",
        debian_rt_package(ctx.arch.as_deref(), ctx.kernel.release.as_deref())
    );
    if dynamic && verdict == Verdict::Bad {
        fix.push_str("; until then boot with preempt=full");
    }
    let dynamic_note = if dynamic { "PREEMPT_DYNAMIC, " } else { "" };
    ABOUT.finding(
        format!("{model} ({dynamic_note}{source})"),
        verdict,
        Some(fix),
    )
}

/// A PREEMPT_DYNAMIC kernel's current model: debugfs names it (in parentheses), else the boot
/// parameter, else the config's default.
fn dynamic_model(ctx: &Context) -> Option<(&'static str, String)> {
    if let Some(text) = ctx.sys.read(DEBUGFS) {
        let current = text
            .split_whitespace()
            .find_map(|t| t.strip_prefix('(')?.strip_suffix(')'));
        if let Some(model) = current.and_then(known_model) {
            return Some((model, DEBUGFS.to_string()));
        }
    }
    if let Some(model) = ctx.cmdline.get("preempt").and_then(known_model) {
        return Some((model, format!("preempt={model} on the command line")));
    }
    configured(ctx).map(|(model, option)| (model, format!("boot default {option}=y")))
}

/// A static kernel's model: the config says, else `uname -v` says PREEMPT (full) or
/// PREEMPT_LAZY, or nothing (none or voluntary, which it does not tell apart).
fn static_model(ctx: &Context, tokens: &[&str]) -> Option<(&'static str, String)> {
    if let Some((model, option)) = configured(ctx) {
        return Some((model, format!("{option}=y")));
    }
    // Without uname -v there is nothing left to go on.
    ctx.kernel.version.as_ref()?;
    let model = if tokens.contains(&"PREEMPT_LAZY") {
        "lazy"
    } else if tokens.contains(&"PREEMPT") {
        "full"
    } else {
        "none or voluntary"
    };
    Some((model, "uname -v".to_string()))
}

/// The model the config selects, most preemptible first (a dynamic config also sets
/// CONFIG_PREEMPT_BUILD options, which are not in [`MODELS`]).
fn configured(ctx: &Context) -> Option<(&'static str, &'static str)> {
    MODELS
        .iter()
        .rev()
        .find(|(_, option)| ctx.config.enabled(option) == Some(true))
        .copied()
}

fn known_model(name: &str) -> Option<&'static str> {
    MODELS.iter().find(|(m, _)| *m == name).map(|(m, _)| *m)
}

/// Debian's PREEMPT_RT kernel metapackage for the machine `uname -m` names or, without it (a
/// kernel older than 6.1 has no `kernel/arch`), the one a Debian release's flavour suffix names.
fn debian_rt_package(arch: Option<&str>, release: Option<&str>) -> &'static str {
    let flavour = release.and_then(|r| r.rsplit('-').next());
    match (arch, flavour) {
        (Some("aarch64"), _) | (None, Some("arm64")) => "linux-image-rt-arm64",
        (Some(a), _) if a.starts_with("arm") => "linux-image-rt-armmp",
        (None, Some("armmp")) => "linux-image-rt-armmp",
        (Some("x86_64"), _) | (None, Some("amd64")) => "linux-image-rt-amd64",
        _ => "linux-image-rt-amd64 / -arm64 / -armmp",
    }
}
