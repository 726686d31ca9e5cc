//! What a measurement run is asked to do, checked before anything is changed on the system,
//! and turned into one plan per measuring thread.

use crate::cpus::CpuList;
use crate::sched::Policy;
use crate::LiveError;
use std::time::Duration;

/// The shortest interval accepted. Below this a thread at SCHED_FIFO spends most of its time
/// in the timer path, which starves the CPU as surely as a busy loop.
pub const MIN_INTERVAL_US: u64 = 50;

/// The most per-microsecond histogram buckets a thread may keep (8 MB of counts each).
pub const MAX_HIST_US: usize = 1_000_000;

/// The settings of one run, as the command line gives them.
#[derive(Clone, Debug, PartialEq)]
pub struct MeasureOptions {
    /// CPUs the threads are pinned to, round-robin.
    pub cpus: CpuList,
    /// How many threads; `None` is one per CPU of `cpus`.
    pub threads: Option<usize>,
    pub policy: Policy,
    /// Priority of the first thread (all threads unless `priospread`).
    pub prio: u32,
    /// Thread i runs at `prio - i` (floored at 1), as cyclictest's `--priospread`.
    pub priospread: bool,
    /// Wake-up period of the first thread.
    pub interval_us: u64,
    /// Thread i's period is `interval_us + i * distance_us`, as cyclictest's `-d`.
    pub distance_us: u64,
    /// Each thread stops after this long; `None` with no `loops` runs until stopped.
    pub duration: Option<Duration>,
    /// Each thread stops after this many wake-ups.
    pub loops: Option<u64>,
    /// Stop everything at the first wake-up later than this (cyclictest's `-b`).
    pub break_us: Option<u64>,
    /// Hand each wake-up later than this to the spike hook and go on (`--explain-every`).
    pub spike_us: Option<u64>,
    /// Keep a per-microsecond histogram up to this many microseconds (cyclictest's `-h`).
    pub hist_us: Option<usize>,
}

impl MeasureOptions {
    /// cyclictest-like defaults on `cpus`: one SCHED_FIFO 80 thread per CPU, every 1000 us,
    /// all at the same priority and interval, until stopped.
    pub fn new(cpus: CpuList) -> MeasureOptions {
        MeasureOptions {
            cpus,
            threads: None,
            policy: Policy::Fifo,
            prio: 80,
            priospread: false,
            interval_us: 1000,
            distance_us: 0,
            duration: None,
            loops: None,
            break_us: None,
            spike_us: None,
            hist_us: None,
        }
    }

    /// How many threads run: `--threads`, else one per CPU.
    pub fn thread_count(&self) -> usize {
        self.threads.unwrap_or(self.cpus.as_slice().len())
    }

    /// The threads to start, or why these settings are refused.
    pub fn plan(&self) -> Result<Vec<ThreadPlan>, LiveError> {
        let invalid = |msg: String| Err(LiveError::Invalid(msg));
        if self.cpus.is_empty() {
            return invalid("no CPU to measure on (empty --cpus)".into());
        }
        if self.interval_us < MIN_INTERVAL_US {
            return invalid(format!(
                "interval {} us is below the {MIN_INTERVAL_US} us minimum: a real-time thread \
                 waking that often would starve its CPU",
                self.interval_us
            ));
        }
        if self.policy != Policy::Other && !(1..=99).contains(&self.prio) {
            return invalid(format!(
                "priority {} is outside 1-99 for {}",
                self.prio,
                self.policy.name()
            ));
        }
        if self.loops == Some(0) {
            return invalid("--loops must be at least 1".into());
        }
        if self.duration == Some(Duration::ZERO) {
            return invalid("--duration must be longer than 0".into());
        }
        if self.break_us.is_some() && self.spike_us.is_some() {
            return invalid(
                "--break stops at the first spike and --explain-every goes on: give one".into(),
            );
        }
        if let Some(n) = self.hist_us {
            if n == 0 || n > MAX_HIST_US {
                return invalid(format!("histogram size {n} us is outside 1-{MAX_HIST_US}"));
            }
        }
        let count = self.thread_count();
        if count == 0 {
            return invalid("--threads must be at least 1".into());
        }
        let cpus = self.cpus.as_slice();
        Ok((0..count)
            .map(|i| ThreadPlan {
                index: i,
                cpu: cpus[i % cpus.len()],
                policy: self.policy,
                prio: self.thread_prio(i),
                interval_ns: (self.interval_us + i as u64 * self.distance_us) * 1000,
            })
            .collect())
    }

    fn thread_prio(&self, i: usize) -> u32 {
        match self.policy {
            Policy::Other => 0,
            _ if self.priospread => self.prio.saturating_sub(i as u32).max(1),
            _ => self.prio,
        }
    }
}

/// One measuring thread's settings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ThreadPlan {
    /// Position among the threads (cyclictest's `T:` number).
    pub index: usize,
    pub cpu: usize,
    pub policy: Policy,
    pub prio: u32,
    pub interval_ns: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(cpus: &str) -> MeasureOptions {
        MeasureOptions::new(cpus.parse().unwrap())
    }

    #[test]
    fn one_thread_per_cpu_at_equal_priority_by_default() {
        let plans = opts("0-1,3").plan().unwrap();
        let got: Vec<_> = plans
            .iter()
            .map(|p| (p.index, p.cpu, p.prio, p.interval_ns))
            .collect();
        assert_eq!(
            got,
            vec![
                (0, 0, 80, 1_000_000),
                (1, 1, 80, 1_000_000),
                (2, 3, 80, 1_000_000)
            ]
        );
    }

    #[test]
    fn threads_round_robin_with_distance_and_priospread() {
        let mut o = opts("2-3");
        o.threads = Some(3);
        o.distance_us = 500;
        o.priospread = true;
        o.prio = 2;
        let got: Vec<_> = o
            .plan()
            .unwrap()
            .iter()
            .map(|p| (p.cpu, p.prio, p.interval_ns))
            .collect();
        assert_eq!(
            got,
            vec![(2, 2, 1_000_000), (3, 1, 1_500_000), (2, 1, 2_000_000)]
        );
        o.policy = Policy::Other;
        assert!(o.plan().unwrap().iter().all(|p| p.prio == 0));
    }

    #[test]
    fn refuses_what_would_spin_or_cannot_run() {
        type Change = fn(&mut MeasureOptions);
        let cases: [(Change, &str); 9] = [
            (|o| o.interval_us = 49, "below the 50 us minimum"),
            (|o| o.prio = 0, "outside 1-99 for fifo"),
            (|o| o.prio = 100, "outside 1-99"),
            (|o| o.cpus = CpuList::default(), "empty --cpus"),
            (|o| o.threads = Some(0), "at least 1"),
            (|o| o.loops = Some(0), "--loops"),
            (|o| o.duration = Some(Duration::ZERO), "--duration"),
            (|o| o.hist_us = Some(0), "histogram size 0"),
            (
                |o| (o.break_us, o.spike_us) = (Some(100), Some(100)),
                "--break stops at the first spike",
            ),
        ];
        for (change, want) in cases {
            let mut o = opts("0");
            change(&mut o);
            let err = o.plan().unwrap_err().to_string();
            assert!(err.contains(want), "{err} lacks {want}");
        }
        let mut o = opts("0");
        o.interval_us = 50;
        assert!(o.plan().is_ok());
    }
}
