//! `audit`: is this machine set up for real-time measurement? A list of read-only checks
//! (preemption model, CPU frequency, idle states, SMT, isolation, RT throttling, IRQ affinity,
//! timer slack, tracing, clocksource), each with the value found, a verdict, why it matters and
//! the command or boot parameter that fixes it.
//!
//! Every read goes through a [`SystemView`] rooted at a directory, so the checks run unchanged
//! on the live system and on fixture trees; nothing here writes anywhere.

mod clocksource;
mod cmdline;
mod cpufreq;
mod idle;
mod irq_affinity;
mod isolation;
mod kconfig;
mod preemption;
mod report;
mod smt;
mod system;
mod throttling;
mod timer_slack;
mod tracing;

pub use system::SystemView;

use crate::cpus::CpuList;
use crate::LiveError;
use cmdline::Cmdline;
use kconfig::KConfig;
use serde::Serialize;

/// How a setting suits RT measurement.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// Set up as an RT system should be.
    Ok,
    /// Costs latency or accuracy in some cases; worth fixing on a dedicated RT machine.
    Warn,
    /// Will show up in the measured latencies.
    Bad,
    /// Not applicable here, or could not be read.
    Info,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Ok => "ok",
            Verdict::Warn => "warn",
            Verdict::Bad => "bad",
            Verdict::Info => "info",
        }
    }
}

/// One finding.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Check {
    /// Stable identifier (JSON consumers key on it).
    pub id: &'static str,
    pub title: &'static str,
    /// What was found, short.
    pub value: String,
    pub verdict: Verdict,
    /// Why the setting matters for latency.
    pub why: String,
    /// The command or boot parameter that fixes it; `None` when there is nothing to do.
    pub fix: Option<String>,
}

/// What every finding of one check repeats: its id, title and why it matters.
struct About {
    id: &'static str,
    title: &'static str,
    why: &'static str,
}

impl About {
    fn finding(&self, value: impl Into<String>, verdict: Verdict, fix: Option<String>) -> Check {
        Check {
            id: self.id,
            title: self.title,
            value: value.into(),
            verdict,
            why: self.why.to_string(),
            fix,
        }
    }

    /// The finding when the check's inputs could not be read.
    fn unknown(&self, missing: &str) -> Check {
        self.finding(
            format!("unknown ({missing} not readable)"),
            Verdict::Info,
            None,
        )
    }
}

/// The ids of every check, in report order.
pub const CHECK_IDS: &[&str] = &[
    "preemption",
    "cpufreq_governor",
    "idle_states",
    "smt",
    "isolcpus",
    "nohz_full",
    "rcu_nocbs",
    "rt_throttling",
    "irq_affinity",
    "timer_slack",
    "tracefs",
    "tracers",
    "trace_events",
    "preemptirq_events",
    "clocksource",
];

/// What the kernel says it is (`uname -r`, `uname -v`).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Kernel {
    pub release: Option<String>,
    pub version: Option<String>,
}

/// The audit of one machine.
#[derive(Clone, Debug)]
pub struct Audit {
    pub kernel: Kernel,
    /// The CPUs the measurement runs on, which the per-CPU checks look at.
    pub cpus: CpuList,
    pub checks: Vec<Check>,
    /// What limited the audit (e.g. no online-CPU list).
    pub warnings: Vec<String>,
}

/// What every check may consult, read once.
struct Context<'a> {
    sys: &'a SystemView,
    kernel: Kernel,
    /// The measured CPUs.
    cpus: CpuList,
    /// The online CPUs, when known.
    online: Option<CpuList>,
    cmdline: Cmdline,
    config: KConfig,
    /// The machine (`uname -m`: x86_64, aarch64, armv7l), which names packages and boot options.
    arch: Option<String>,
}

impl Context<'_> {
    /// The online CPUs that are not measured: where IRQs and housekeeping should go.
    fn housekeeping(&self) -> Option<CpuList> {
        let rest = self.online.as_ref()?.difference(&self.cpus);
        (!rest.is_empty()).then_some(rest)
    }

    /// An ARM kernel: the idle states are PSCI's, the Debian kernel packages arm64 and armmp.
    fn is_arm(&self) -> bool {
        self.arch
            .as_deref()
            .is_some_and(|a| a.starts_with("arm") || a == "aarch64")
    }
}

impl Audit {
    /// Audits the machine `sys` shows, for measurement on `cpus` (default: all online CPUs).
    /// Unreadable files become "unknown" findings; only a `cpus` that names offline CPUs is
    /// an error.
    pub fn run(sys: &SystemView, cpus: Option<CpuList>) -> Result<Audit, LiveError> {
        let online = sys
            .read("/sys/devices/system/cpu/online")
            .and_then(|t| t.parse::<CpuList>().ok());
        let mut warnings = Vec::new();
        let cpus = match (cpus, &online) {
            (Some(cpus), Some(online)) => {
                let offline = cpus.difference(online);
                if !offline.is_empty() {
                    return Err(LiveError::Invalid(format!(
                        "--cpus {cpus}: CPU {offline} not online (online: {online})"
                    )));
                }
                cpus
            }
            (Some(cpus), None) => cpus,
            (None, Some(online)) => online.clone(),
            (None, None) => {
                warnings.push(
                    "/sys/devices/system/cpu/online is not readable: the per-CPU checks have no CPUs to look at (pass --cpus)"
                        .to_string(),
                );
                CpuList::default()
            }
        };
        let kernel = Kernel {
            release: sys.read("/proc/sys/kernel/osrelease"),
            version: sys.read("/proc/sys/kernel/version"),
        };
        let config = KConfig::load(sys, kernel.release.as_deref());
        let ctx = Context {
            sys,
            cmdline: Cmdline::load(sys),
            config,
            kernel,
            cpus,
            online,
            arch: sys.read("/proc/sys/kernel/arch"),
        };
        let mut checks = vec![
            preemption::check(&ctx),
            cpufreq::check(&ctx),
            idle::check(&ctx),
            smt::check(&ctx),
        ];
        checks.extend(isolation::checks(&ctx));
        checks.push(throttling::check(&ctx));
        checks.push(irq_affinity::check(&ctx));
        checks.push(timer_slack::check(&ctx));
        checks.extend(tracing::checks(&ctx));
        checks.push(clocksource::check(&ctx));
        debug_assert_eq!(
            checks.iter().map(|c| c.id).collect::<Vec<_>>(),
            CHECK_IDS,
            "CHECK_IDS is out of date"
        );
        Ok(Audit {
            kernel: ctx.kernel,
            cpus: ctx.cpus,
            checks,
            warnings,
        })
    }

    /// How many checks got each verdict: (ok, warn, bad, info).
    pub fn summary(&self) -> [(Verdict, usize); 4] {
        [Verdict::Ok, Verdict::Warn, Verdict::Bad, Verdict::Info]
            .map(|v| (v, self.checks.iter().filter(|c| c.verdict == v).count()))
    }

    /// The check with this id.
    pub fn check(&self, id: &str) -> Option<&Check> {
        self.checks.iter().find(|c| c.id == id)
    }
}

/// A per-CPU value summarised: `performance` when all CPUs agree, else
/// `powersave on 0-1, performance on 2-3` (groups in order of their first CPU).
fn per_cpu(values: &[(usize, String)]) -> String {
    let mut groups: Vec<(&str, Vec<usize>)> = Vec::new();
    for (cpu, value) in values {
        match groups.iter_mut().find(|(v, _)| v == value) {
            Some((_, cpus)) => cpus.push(*cpu),
            None => groups.push((value, vec![*cpu])),
        }
    }
    if let [(value, _)] = groups.as_slice() {
        return value.to_string();
    }
    groups
        .into_iter()
        .map(|(value, cpus)| format!("{value} on {}", CpuList::from(cpus)))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn per_cpu_values_are_grouped_by_value() {
        let v = |s: &str| s.to_string();
        assert_eq!(per_cpu(&[(0, v("a")), (1, v("a"))]), "a");
        assert_eq!(
            per_cpu(&[(0, v("a")), (1, v("b")), (2, v("a")), (3, v("b"))]),
            "a on 0,2, b on 1,3"
        );
        assert_eq!(per_cpu(&[]), "");
    }
}
