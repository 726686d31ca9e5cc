//! The running kernel's build configuration, from `/proc/config.gz` (CONFIG_IKCONFIG_PROC) or
//! the distribution's `/boot/config-<release>`: the one place that says how the kernel was
//! built rather than how it is running now.

use super::system::{lines_of, SystemView};
use rtsleuth_trace::input::Compression;
use std::collections::BTreeMap;
use std::io::BufReader;

/// The options the checks ask about; the rest of a config (thousands of lines) is not kept.
const WANTED: &[&str] = &[
    "CONFIG_PREEMPT_RT",
    "CONFIG_PREEMPT",
    "CONFIG_PREEMPT_VOLUNTARY",
    "CONFIG_PREEMPT_NONE",
    "CONFIG_PREEMPT_LAZY",
    "CONFIG_PREEMPT_DYNAMIC",
    "CONFIG_NO_HZ_FULL",
    "CONFIG_RCU_NOCB_CPU",
    "CONFIG_RCU_NOCB_CPU_DEFAULT_ALL",
];

/// The wanted options that are set (`=y`, `=m` or a value), and where they came from.
#[derive(Debug, Default)]
pub(super) struct KConfig {
    options: BTreeMap<String, String>,
    /// The file read, or `None` when no config was found.
    pub source: Option<String>,
}

impl KConfig {
    /// Reads `/proc/config.gz`, else `/boot/config-<release>`; empty when neither is readable.
    pub fn load(sys: &SystemView, release: Option<&str>) -> KConfig {
        const PROC: &str = "/proc/config.gz";
        if let Ok(file) = std::fs::File::open(sys.path(PROC)) {
            let gunzip = Compression::Gzip.wrap(PROC, Box::new(file));
            let config = KConfig::parse(lines_of(BufReader::new(gunzip)), PROC);
            if !config.options.is_empty() {
                return config;
            }
        }
        if let Some(release) = release {
            let boot = format!("/boot/config-{release}");
            if let Some(lines) = sys.lines(&boot) {
                let config = KConfig::parse(lines, &boot);
                if !config.options.is_empty() {
                    return config;
                }
            }
        }
        KConfig::default()
    }

    fn parse(lines: impl Iterator<Item = String>, source: &str) -> KConfig {
        let options: BTreeMap<String, String> = lines
            .filter_map(|line| {
                let (name, value) = line.split_once('=')?;
                WANTED
                    .contains(&name)
                    .then(|| (name.to_string(), value.trim_matches('"').to_string()))
            })
            .collect();
        KConfig {
            options,
            source: Some(source.to_string()),
        }
    }

    /// Whether the config was read at all: without it, "not set" means "unknown".
    pub fn known(&self) -> bool {
        self.source.is_some()
    }

    /// `Some(true)` for `=y`, `Some(false)` when the config was read and the option is not
    /// set, `None` when there is no config.
    pub fn enabled(&self, name: &str) -> Option<bool> {
        self.known()
            .then(|| self.options.get(name).is_some_and(|v| v == "y"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_only_the_wanted_options_and_reads_not_set_as_false() {
        let text = "# CONFIG_PREEMPT is not set\nCONFIG_PREEMPT_RT=y\nCONFIG_HZ=1000\ngarbage\n";
        let config = KConfig::parse(text.lines().map(String::from), "x");
        assert_eq!(config.enabled("CONFIG_PREEMPT_RT"), Some(true));
        assert_eq!(config.enabled("CONFIG_PREEMPT"), Some(false));
        assert_eq!(config.options.len(), 1);
        assert_eq!(KConfig::default().enabled("CONFIG_PREEMPT_RT"), None);
    }
}
