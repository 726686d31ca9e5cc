//! What a detection run found, whichever detector ran.

use super::settings::{Mode, Settings};
use std::time::Duration;

/// One long gap (user-space detector) or one sample above the threshold (kernel tracer).
/// Ordered by length, then time, so the longest can be kept with [`super::worst::Worst`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Spike {
    /// How long the CPU was gone, in nanoseconds (the kernel reports whole microseconds).
    pub ns: u64,
    /// When: nanoseconds of CLOCK_MONOTONIC, which is the trace clock `mono` and within a
    /// clock adjustment of the default `local`, so a spike can be found in a trace.
    pub ts: u64,
    /// The same moment in CLOCK_REALTIME (nanoseconds since the epoch), for hypervisor, BMC
    /// and firmware logs, which know only wall time.
    pub wall: u64,
}

/// One CPU's findings.
#[derive(Clone, Debug, PartialEq)]
pub struct CpuResult {
    pub cpu: usize,
    /// Windows spun; `None` from the kernel tracer, which reports only windows above threshold.
    pub windows: Option<u64>,
    /// Time actually watched (the spin part of each window); `None` from the kernel tracer.
    pub measured_ns: Option<u64>,
    /// Gaps above the threshold. The kernel counts them per window (`count:`); where it does not
    /// (before Linux 5.7) each reported window counts one.
    pub gaps: u64,
    pub max_ns: u64,
    /// NMIs during the kernel's reported windows, which explain gaps without blaming firmware;
    /// `None` from the user-space detector, which cannot see them.
    pub nmi_count: Option<u64>,
    /// The longest, longest first.
    pub worst: Vec<Spike>,
}

/// The whole run.
#[derive(Clone, Debug, PartialEq)]
pub struct Detection {
    /// `Kernel` or `User`: the detector that ran.
    pub mode: Mode,
    pub settings: Settings,
    /// How long it ran; shorter than asked when interrupted.
    pub elapsed: Duration,
    pub interrupted: bool,
    /// One entry per watched CPU, in CPU order.
    pub cpus: Vec<CpuResult>,
    /// What qualifies the numbers (unparsed kernel lines, clocks that could not be set).
    pub warnings: Vec<String>,
}

impl Detection {
    /// Gaps on all CPUs.
    pub fn total_gaps(&self) -> u64 {
        self.cpus.iter().map(|c| c.gaps).sum()
    }

    /// The longest gap on any CPU.
    pub fn max_ns(&self) -> u64 {
        self.cpus.iter().map(|c| c.max_ns).max().unwrap_or(0)
    }

    /// Time watched on all CPUs, when the detector knows it.
    pub fn measured_ns(&self) -> Option<u64> {
        self.cpus.iter().map(|c| c.measured_ns).sum()
    }

    /// Windows on all CPUs, when the detector knows them.
    pub fn windows(&self) -> Option<u64> {
        self.cpus.iter().map(|c| c.windows).sum()
    }
}
