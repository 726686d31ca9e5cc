//! The kernel command line (`/proc/cmdline`): the boot parameters that isolate CPUs and pick
//! the preemption mode, which no sysfs file reports back (`rcu_nocbs=`, `preempt=`).

use super::system::SystemView;
use crate::cpus::CpuList;

/// `isolcpus=` flags that may precede its CPU list.
const ISOLCPUS_FLAGS: &[&str] = &["nohz", "domain", "managed_irq"];

/// The kernel's own parameters (those after `--` belong to init).
#[derive(Debug, Default)]
pub(super) struct Cmdline {
    params: Vec<(String, Option<String>)>,
    /// Whether `/proc/cmdline` could be read: an empty list then means "no parameters".
    known: bool,
}

/// A CPU-list parameter as the kernel was booted with it.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum CpuParam {
    Absent,
    Cpus(CpuList),
    /// Present but in a form this audit does not read (e.g. the `2-7:2/4` group syntax).
    Unparsed(String),
}

impl Cmdline {
    pub fn load(sys: &SystemView) -> Cmdline {
        sys.read("/proc/cmdline")
            .map(|text| Cmdline::parse(&text))
            .unwrap_or_default()
    }

    /// Whether the command line was read at all.
    pub fn known(&self) -> bool {
        self.known
    }

    fn parse(text: &str) -> Cmdline {
        let params = text
            .split_whitespace()
            .take_while(|word| *word != "--")
            .map(|word| match word.split_once('=') {
                Some((k, v)) => (k.to_string(), Some(v.to_string())),
                None => (word.to_string(), None),
            })
            .collect();
        Cmdline {
            params,
            known: true,
        }
    }

    /// The value of the last occurrence of `name` (the kernel lets the last one win);
    /// `Some("")` for a bare flag.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.params
            .iter()
            .rev()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_deref().unwrap_or(""))
    }

    /// A CPU-list parameter; `isolcpus=` flags are skipped.
    pub fn cpus(&self, name: &str) -> CpuParam {
        let Some(value) = self.get(name) else {
            return CpuParam::Absent;
        };
        let list: Vec<&str> = value
            .split(',')
            .filter(|part| !ISOLCPUS_FLAGS.contains(part))
            .collect();
        match list.join(",").parse() {
            Ok(cpus) => CpuParam::Cpus(cpus),
            Err(_) => CpuParam::Unparsed(value.to_string()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_cpu_lists_skipping_isolcpus_flags_and_init_arguments() {
        let c = Cmdline::parse(
            "quiet isolcpus=managed_irq,domain,2-3 nohz_full=1 nohz_full=2-3 rcu_nocbs=2-7:2/4 -- nohz_full=0",
        );
        assert_eq!(c.cpus("isolcpus"), CpuParam::Cpus("2-3".parse().unwrap()));
        assert_eq!(c.cpus("nohz_full"), CpuParam::Cpus("2-3".parse().unwrap()));
        assert_eq!(c.cpus("rcu_nocbs"), CpuParam::Unparsed("2-7:2/4".into()));
        assert_eq!(c.cpus("irqaffinity"), CpuParam::Absent);
        assert_eq!(c.get("quiet"), Some(""));
    }
}
