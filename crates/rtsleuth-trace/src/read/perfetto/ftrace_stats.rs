//! The kernel's ring-buffer counters from `FtraceStats`: how many events each CPU's buffer
//! overwrote or dropped between the start and the end of the trace.

use super::messages::FtraceStats;
use crate::event::possible_cpu;
use std::collections::BTreeMap;

const START_OF_TRACE: i32 = 1;
const END_OF_TRACE: i32 = 2;

#[derive(Default)]
pub struct RingCounters {
    /// Overruns plus drops per CPU at the first start-of-trace snapshot.
    start: BTreeMap<u32, u64>,
    /// The same at the last end-of-trace snapshot.
    end: BTreeMap<u32, u64>,
    cpus: Option<u32>,
}

impl RingCounters {
    pub fn add(&mut self, stats: &FtraceStats) {
        // An entry for a CPU no kernel has is damage; its count is not a CPU's loss.
        let possible = stats
            .cpu_stats
            .iter()
            .filter(|c| possible_cpu(c.cpu.unwrap_or(0)));
        for c in possible {
            let cpu = c.cpu.unwrap_or(0) as u32;
            let lost = c.overrun.unwrap_or(0) + c.dropped_events.unwrap_or(0);
            match stats.phase {
                Some(START_OF_TRACE) => {
                    self.start.entry(cpu).or_insert(lost);
                }
                Some(END_OF_TRACE) => {
                    self.end.insert(cpu, lost);
                }
                _ => {}
            }
        }
        let n = (stats.cpu_stats.len() as u32).min(crate::event::MAX_CPUS);
        self.cpus = Some(self.cpus.map_or(n, |c| c.max(n)));
    }

    /// Events each CPU lost during the trace, for the CPUs that lost any.
    pub fn lost(&self) -> Vec<(u32, u64)> {
        self.end
            .iter()
            .map(|(&cpu, &end)| {
                (
                    cpu,
                    end.saturating_sub(self.start.get(&cpu).copied().unwrap_or(0)),
                )
            })
            .filter(|&(_, n)| n > 0)
            .collect()
    }

    /// How many CPUs the system has (the stats have one entry per CPU).
    pub fn cpus(&self) -> Option<u32> {
        self.cpus
    }
}

#[cfg(test)]
mod tests {
    use super::super::messages::FtraceCpuStats;
    use super::*;

    fn stats(phase: i32, counts: &[(u64, u64)]) -> FtraceStats {
        FtraceStats {
            phase: Some(phase),
            cpu_stats: counts
                .iter()
                .enumerate()
                .map(|(cpu, &(overrun, dropped))| FtraceCpuStats {
                    cpu: Some(cpu as u64),
                    overrun: Some(overrun),
                    dropped_events: Some(dropped),
                })
                .collect(),
        }
    }

    #[test]
    fn lost_is_end_minus_start() {
        let mut r = RingCounters::default();
        r.add(&stats(START_OF_TRACE, &[(5, 0), (0, 0)]));
        r.add(&stats(END_OF_TRACE, &[(5, 0), (3, 1)]));
        r.add(&stats(START_OF_TRACE, &[(9, 9), (9, 9)]));
        r.add(&stats(END_OF_TRACE, &[(7, 0), (3, 4)]));
        assert_eq!(r.lost(), [(0, 2), (1, 7)]);
        assert_eq!(r.cpus(), Some(2));
    }
}
