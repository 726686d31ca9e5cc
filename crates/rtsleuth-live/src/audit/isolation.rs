//! CPU isolation of the measured CPUs: `isolcpus=` keeps other tasks off them, `nohz_full=`
//! stops the scheduler tick while one task runs, `rcu_nocbs=` moves RCU callbacks away. Each
//! removes a source of interference that no priority setting can.

use super::cmdline::CpuParam;
use super::{About, Check, Context, Verdict};
use crate::cpus::CpuList;

/// The three checks, in report order.
pub(super) fn checks(ctx: &Context) -> Vec<Check> {
    let nohz = nohz_full(ctx);
    let rcu = rcu_nocbs(ctx, &nohz);
    vec![isolcpus(ctx), coverage(ctx, &NOHZ_FULL, nohz), rcu]
}

/// A CPU-list boot parameter's check, and the fix for a list of CPUs.
struct Param {
    about: About,
    fix: fn(&CpuList) -> String,
}

const ISOLCPUS: Param = Param {
    about: About {
        id: "isolcpus",
        title: "CPU isolation (isolcpus)",
        why: "without isolation the scheduler runs other tasks, kernel threads and unbound work on the measured CPUs: an RT thread preempts them, but pays for their cache footprint and waits out their non-preemptible sections (cpuset partitions isolate too; this check reads only isolcpus=)",
    },
    fix: |t| format!("boot with isolcpus=managed_irq,domain,{t}"),
};

const NOHZ_FULL: Param = Param {
    about: About {
        id: "nohz_full",
        title: "Tickless CPUs (nohz_full)",
        why: "the scheduler tick interrupts a busy measured CPU every 1/HZ seconds (a few us each time, more with RCU and timer work behind it); nohz_full stops it while a single task runs",
    },
    fix: |t| format!("boot with nohz_full={t} (needs a kernel built with CONFIG_NO_HZ_FULL=y)"),
};

const RCU_NOCBS: Param = Param {
    about: About {
        id: "rcu_nocbs",
        title: "RCU callback offload (rcu_nocbs)",
        why: "RCU callbacks run in softirq context on the CPU that queued them, in batches that can take hundreds of us; offloaded CPUs hand them to rcuo kthreads that can run elsewhere",
    },
    fix: |t| format!("boot with rcu_nocbs={t} (nohz_full={t} implies it)"),
};

/// What a CPU-list setting turned out to be.
enum Setting {
    /// The CPUs it covers (possibly none), and where that was read.
    Cpus(CpuList, String),
    /// The kernel cannot do it (built without the option).
    Unsupported(&'static str),
    /// On the command line in a form not parsed here.
    Unparsed(String),
    Unknown,
}

fn from_cmdline(ctx: &Context, name: &str) -> Option<Setting> {
    match ctx.cmdline.cpus(name) {
        CpuParam::Absent => None,
        CpuParam::Cpus(cpus) => Some(Setting::Cpus(cpus, format!("{name}= on the command line"))),
        CpuParam::Unparsed(text) => Some(Setting::Unparsed(format!("{name}={text}"))),
    }
}

/// A sysfs CPU list; the kernel prints `(null)` for an unset one on some versions.
fn sysfs_list(ctx: &Context, path: &str) -> Option<CpuList> {
    let text = ctx.sys.read(path)?;
    if text == "(null)" {
        return Some(CpuList::default());
    }
    text.parse().ok()
}

fn isolcpus(ctx: &Context) -> Check {
    const PATH: &str = "/sys/devices/system/cpu/isolated";
    let setting = sysfs_list(ctx, PATH)
        .map(|cpus| Setting::Cpus(cpus, PATH.into()))
        .or_else(|| from_cmdline(ctx, "isolcpus"))
        .unwrap_or(Setting::Unknown);
    coverage(ctx, &ISOLCPUS, setting)
}

fn nohz_full(ctx: &Context) -> Setting {
    const PATH: &str = "/sys/devices/system/cpu/nohz_full";
    if let Some(cpus) = sysfs_list(ctx, PATH) {
        return Setting::Cpus(cpus, PATH.into());
    }
    if let Some(setting) = from_cmdline(ctx, "nohz_full") {
        return setting;
    }
    match ctx.config.enabled("CONFIG_NO_HZ_FULL") {
        Some(false) => Setting::Unsupported("CONFIG_NO_HZ_FULL"),
        Some(true) => Setting::Cpus(CpuList::default(), "no nohz_full= at boot".into()),
        None => Setting::Unknown,
    }
}

/// RCU callbacks are offloaded from `rcu_nocbs=` CPUs, from `nohz_full=` CPUs (which imply
/// it) and from all CPUs with CONFIG_RCU_NOCB_CPU_DEFAULT_ALL.
fn rcu_nocbs(ctx: &Context, nohz: &Setting) -> Check {
    let mut cpus: Vec<usize> = Vec::new();
    let mut sources = Vec::new();
    let mut setting = None;
    match from_cmdline(ctx, "rcu_nocbs") {
        Some(Setting::Cpus(list, _)) => {
            cpus.extend(list.as_slice());
            sources.push("rcu_nocbs=");
        }
        Some(unparsed) => setting = Some(unparsed),
        None => {}
    }
    if let Setting::Cpus(list, _) = nohz {
        if !list.is_empty() {
            cpus.extend(list.as_slice());
            sources.push("nohz_full=");
        }
    }
    if ctx.config.enabled("CONFIG_RCU_NOCB_CPU_DEFAULT_ALL") == Some(true) {
        if let Some(online) = &ctx.online {
            cpus.extend(online.as_slice());
            sources.push("CONFIG_RCU_NOCB_CPU_DEFAULT_ALL");
        }
    }
    let setting = setting.unwrap_or_else(|| {
        if !sources.is_empty() {
            Setting::Cpus(CpuList::from(cpus), sources.join(", "))
        } else if ctx.config.enabled("CONFIG_RCU_NOCB_CPU") == Some(false) {
            Setting::Unsupported("CONFIG_RCU_NOCB_CPU")
        } else if ctx.cmdline.known() {
            Setting::Cpus(
                CpuList::default(),
                "no rcu_nocbs= or nohz_full= at boot".into(),
            )
        } else {
            Setting::Unknown
        }
    });
    coverage(ctx, &RCU_NOCBS, setting)
}

/// The verdict on a setting that should cover every measured CPU.
fn coverage(ctx: &Context, param: &Param, setting: Setting) -> Check {
    let about = &param.about;
    let fix = || target(ctx).map(|(t, switch)| (param.fix)(&t) + &switch);
    let (value, verdict, fix) = match setting {
        Setting::Unknown => {
            return about.unknown("/proc/cmdline and sysfs");
        }
        Setting::Unparsed(text) => (
            format!("{text} (not read by this audit)"),
            Verdict::Info,
            None,
        ),
        Setting::Unsupported(option) => (
            format!("not supported (kernel built without {option})"),
            Verdict::Warn,
            fix(),
        ),
        Setting::Cpus(cpus, source) => {
            let missing = ctx.cpus.difference(&cpus);
            let shown = if cpus.is_empty() {
                "none".to_string()
            } else {
                cpus.to_string()
            };
            if ctx.cpus.is_empty() {
                (format!("{shown} ({source})"), Verdict::Info, None)
            } else if missing.is_empty() {
                (
                    format!("{shown} ({source}; covers the measured CPUs)"),
                    Verdict::Ok,
                    None,
                )
            } else {
                (
                    format!("{shown} ({source}; measured CPUs {missing} not covered)"),
                    Verdict::Warn,
                    fix(),
                )
            }
        }
    };
    about.finding(value, verdict, fix)
}

/// The CPUs to isolate: the measured ones when others are left for housekeeping, else every
/// online CPU but the first (with a reminder to measure on those); `None` on a single CPU.
fn target(ctx: &Context) -> Option<(CpuList, String)> {
    if ctx.housekeeping().is_some() {
        return Some((ctx.cpus.clone(), String::new()));
    }
    let online = ctx.online.as_ref()?;
    let rest = CpuList::from(online.as_slice().get(1..)?.to_vec());
    (!rest.is_empty()).then(|| {
        let note = format!(
            ", keeping CPU {} for housekeeping, and measure with --cpus {rest}",
            online.as_slice()[0]
        );
        (rest, note)
    })
}
