//! What a detection run is asked to do, checked before anything touches the machine.

use crate::cpus::CpuList;
use crate::LiveError;
use std::time::Duration;

/// The largest share of each window a detector may spin. Above it a SCHED_FIFO spinner runs into
/// RT throttling (`sched_rt_runtime_us`, 950000 of 1000000 by default), and the throttled time
/// would then be reported as if the hardware had stolen it.
pub const MAX_DUTY: f64 = 0.95;

/// The longest single spin, for the same reason: the throttle counts per
/// `sched_rt_period_us` (1 s), so a 2 s spin at 10% duty is still throttled after 0.95 s.
pub const MAX_WIDTH_US: u64 = 950_000;

/// Which detector runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// The kernel's `hwlat` tracer when `available_tracers` lists it, else the user-space one.
    Auto,
    /// The kernel's `hwlat` tracer (interrupts off while it samples); an error where it is missing.
    Kernel,
    /// SCHED_FIFO threads reading the clock in a loop, one per CPU.
    User,
}

impl Mode {
    pub fn name(self) -> &'static str {
        match self {
            Mode::Auto => "auto",
            Mode::Kernel => "kernel",
            Mode::User => "user",
        }
    }
}

impl std::str::FromStr for Mode {
    type Err = LiveError;

    fn from_str(text: &str) -> Result<Mode, LiveError> {
        match text {
            "auto" => Ok(Mode::Auto),
            "kernel" => Ok(Mode::Kernel),
            "user" => Ok(Mode::User),
            _ => Err(LiveError::Invalid(format!(
                "unknown mode {text:?} (auto, kernel or user)"
            ))),
        }
    }
}

/// A detection run: the kernel's own knobs (width, window, threshold) plus what the user-space
/// detector adds (priority, how many gaps to keep).
#[derive(Clone, Debug, PartialEq)]
pub struct Settings {
    /// How long each window spins, in microseconds.
    pub width_us: u64,
    /// The period of the windows, in microseconds.
    pub window_us: u64,
    /// Gaps longer than this (microseconds) are recorded.
    pub threshold_us: u64,
    /// How long the whole run lasts.
    pub duration: Duration,
    /// The CPUs to watch.
    pub cpus: CpuList,
    /// SCHED_FIFO priority of the user-space detector threads.
    pub prio: u32,
    /// How many of the longest gaps each CPU keeps for the report.
    pub top: usize,
}

impl Settings {
    /// The share of each window spent spinning.
    pub fn duty(&self) -> f64 {
        self.width_us as f64 / self.window_us as f64
    }

    /// Refuses settings that are impossible, would measure the scheduler instead of the
    /// hardware, or would leave the machine unusable.
    pub fn validate(&self) -> Result<(), LiveError> {
        let bad = |m: String| Err(LiveError::Invalid(m));
        if self.width_us == 0 {
            return bad("--width must be above 0 us".into());
        }
        if self.width_us >= self.window_us {
            return bad(format!(
                "--width ({} us) must be shorter than --window ({} us): the detector must give \
                 the CPU back in every window",
                self.width_us, self.window_us
            ));
        }
        if self.width_us as f64 > MAX_DUTY * self.window_us as f64 {
            return bad(format!(
                "--width {} us of --window {} us spins {:.0}% of the time; above {:.0}% a \
                 SCHED_FIFO spinner is throttled by the kernel (sched_rt_runtime_us) and the \
                 throttling would be reported as hardware latency",
                self.width_us,
                self.window_us,
                100.0 * self.duty(),
                100.0 * MAX_DUTY
            ));
        }
        if self.width_us > MAX_WIDTH_US {
            return bad(format!(
                "--width {} us is above {MAX_WIDTH_US} us: RT throttling allows at most 950 ms \
                 of spinning per second, so a longer spin would be throttled and the throttling \
                 reported as hardware latency",
                self.width_us
            ));
        }
        if self.threshold_us == 0 {
            return bad("--threshold must be above 0 us (every clock read would be a gap)".into());
        }
        if self.threshold_us >= self.width_us {
            return bad(format!(
                "--threshold ({} us) must be shorter than --width ({} us)",
                self.threshold_us, self.width_us
            ));
        }
        if self.duration.is_zero() {
            return bad("--duration must be above 0".into());
        }
        if self.cpus.is_empty() {
            return bad("--cpus selects no CPU".into());
        }
        if !(1..=99).contains(&self.prio) {
            return bad(format!(
                "--prio {} is not a SCHED_FIFO priority (1-99)",
                self.prio
            ));
        }
        if self.top == 0 {
            return bad("--top must be at least 1".into());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok() -> Settings {
        Settings {
            width_us: 500_000,
            window_us: 1_000_000,
            threshold_us: 10,
            duration: Duration::from_secs(10),
            cpus: "0-1".parse().unwrap(),
            prio: 99,
            top: 10,
        }
    }

    fn refused(change: impl FnOnce(&mut Settings), says: &str) {
        let mut s = ok();
        change(&mut s);
        let err = s.validate().unwrap_err().to_string();
        assert!(err.contains(says), "{err:?} should say {says:?}");
    }

    #[test]
    fn the_kernel_defaults_are_accepted() {
        ok().validate().unwrap();
        let mut most = ok();
        most.width_us = 950_000;
        most.validate().unwrap();
    }

    #[test]
    fn refuses_what_cannot_measure_hardware() {
        refused(
            |s| s.width_us = s.window_us,
            "must be shorter than --window",
        );
        refused(
            |s| s.width_us = 2 * s.window_us,
            "must be shorter than --window",
        );
        refused(|s| s.width_us = 950_001, "spins 95% of the time");
        refused(
            |s| {
                s.width_us = 960_000;
                s.window_us = 10_000_000
            },
            "is above 950000 us",
        );
        refused(|s| s.width_us = 0, "--width must be above 0");
        refused(|s| s.threshold_us = 0, "--threshold must be above 0");
        refused(|s| s.threshold_us = 500_000, "must be shorter than --width");
        refused(|s| s.duration = Duration::ZERO, "--duration");
        refused(|s| s.cpus = CpuList::default(), "selects no CPU");
        refused(|s| s.prio = 0, "not a SCHED_FIFO priority");
        refused(|s| s.prio = 100, "not a SCHED_FIFO priority");
        refused(|s| s.top = 0, "--top");
    }

    #[test]
    fn modes_parse_by_name_only() {
        assert_eq!("kernel".parse::<Mode>().unwrap(), Mode::Kernel);
        assert_eq!("user".parse::<Mode>().unwrap().name(), "user");
        let err = "smi".parse::<Mode>().unwrap_err().to_string();
        assert!(err.contains("auto, kernel or user"), "{err}");
    }
}
