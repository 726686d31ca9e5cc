//! What one CPU's user-space detector counts while it runs, in fixed space.

use super::gaps::{Gap, Window};
use super::result::{CpuResult, Spike};
use super::worst::Worst;

/// Counts of windows, measured time and gaps, and the longest gaps; updated from the spinning
/// thread itself, so nothing is shared while it measures.
#[derive(Debug)]
pub struct Tally {
    windows: u64,
    measured_ns: u64,
    gaps: u64,
    max_ns: u64,
    worst: Worst<Gap>,
}

impl Tally {
    pub fn new(top: usize) -> Tally {
        Tally {
            windows: 0,
            measured_ns: 0,
            gaps: 0,
            max_ns: 0,
            worst: Worst::new(top),
        }
    }

    /// Adds a finished window: the time between its first and last read was watched.
    pub fn window(&mut self, window: &Window) {
        self.windows += 1;
        self.measured_ns += window.last - window.first;
    }

    pub fn gap(&mut self, gap: Gap) {
        self.gaps += 1;
        self.max_ns = self.max_ns.max(gap.ns);
        self.worst.push(gap);
    }

    /// The CPU's result; `wall_offset` (CLOCK_REALTIME - CLOCK_MONOTONIC, ns) dates the gaps
    /// in wall-clock time too, for matching them with hypervisor or BMC logs.
    pub fn finish(self, cpu: usize, wall_offset: i64) -> CpuResult {
        CpuResult {
            cpu,
            windows: Some(self.windows),
            measured_ns: Some(self.measured_ns),
            gaps: self.gaps,
            max_ns: self.max_ns,
            nmi_count: None,
            worst: self
                .worst
                .into_sorted()
                .into_iter()
                .map(|g| Spike {
                    ns: g.ns,
                    ts: g.start,
                    wall: g.start.saturating_add_signed(wall_offset),
                })
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_windows_time_and_keeps_the_longest_gaps() {
        let mut t = Tally::new(2);
        t.window(&Window {
            first: 1_000,
            last: 501_000,
            reads: 9,
        });
        t.window(&Window {
            first: 2_000_000,
            last: 2_400_000,
            reads: 9,
        });
        for (ns, start) in [(20_000, 5_000), (90_000, 2_100_000), (15_000, 2_200_000)] {
            t.gap(Gap { ns, start });
        }
        let r = t.finish(3, 1_000_000_000);
        assert_eq!(r.cpu, 3);
        assert_eq!(r.windows, Some(2));
        assert_eq!(r.measured_ns, Some(900_000));
        assert_eq!((r.gaps, r.max_ns), (3, 90_000));
        assert_eq!(
            r.worst,
            vec![
                Spike {
                    ns: 90_000,
                    ts: 2_100_000,
                    wall: 1_002_100_000
                },
                Spike {
                    ns: 20_000,
                    ts: 5_000,
                    wall: 1_000_005_000
                },
            ]
        );
    }
}
