//! When each CPU's detector spins: windows on a fixed grid, staggered between CPUs.
//!
//! Windows sit on an absolute grid (`start + k * window`) rather than "sleep window - width
//! after each spin", so a late wake-up does not push every later window back and a run of
//! `duration` holds a predictable number of windows. The grid of the i-th of n CPUs is shifted
//! by `i * window / n`: with the default 50% duty on two CPUs one of them is always free, so
//! the machine stays usable, where spinning every CPU at once would freeze it for `width`.

/// The spin windows of one CPU's detector; all times in nanoseconds of CLOCK_MONOTONIC.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Schedule {
    /// Where window 0 starts.
    first: u64,
    window: u64,
    width: u64,
    /// No window may end after this.
    end: u64,
}

impl Schedule {
    /// The schedule of the `index`-th of `count` detectors of a run that starts at `start` and
    /// lasts `duration`.
    pub fn new(
        start: u64,
        duration: u64,
        window: u64,
        width: u64,
        index: usize,
        count: usize,
    ) -> Schedule {
        let shift = window * index as u64 / count.max(1) as u64;
        Schedule {
            first: start + shift,
            window,
            width,
            end: start + duration,
        }
    }

    /// The start of the first window that begins at or after `now` and still ends in the run,
    /// so a detector that overran (or woke late) skips to the next whole window.
    pub fn next_start(&self, now: u64) -> Option<u64> {
        let k = now.saturating_sub(self.first).div_ceil(self.window);
        let start = self.first + k * self.window;
        (start + self.width <= self.end).then_some(start)
    }

    /// How many windows the run holds when none is missed (the tests' check on the grid).
    #[cfg(test)]
    pub fn windows(&self) -> u64 {
        match self.end.checked_sub(self.first + self.width) {
            Some(room) => room / self.window + 1,
            None => 0,
        }
    }

    /// How long each window spins.
    pub fn width(&self) -> u64 {
        self.width
    }
}

#[cfg(test)]
mod tests {
    use super::Schedule;

    const MS: u64 = 1_000_000;

    #[test]
    fn two_seconds_of_100_in_500_ms_hold_four_windows_on_each_cpu() {
        let cpu0 = Schedule::new(1000, 2000 * MS, 500 * MS, 100 * MS, 0, 2);
        let cpu1 = Schedule::new(1000, 2000 * MS, 500 * MS, 100 * MS, 1, 2);
        assert_eq!(cpu0.windows(), 4);
        assert_eq!(cpu1.windows(), 4);
        assert_eq!(cpu0.next_start(0), Some(1000));
        assert_eq!(cpu1.next_start(0), Some(1000 + 250 * MS));
        // The last windows: 1500..1600 ms and 1750..1850 ms; nothing fits after them.
        assert_eq!(cpu0.next_start(1000 + 1500 * MS), Some(1000 + 1500 * MS));
        assert_eq!(cpu0.next_start(1000 + 1500 * MS + 1), None);
        assert_eq!(cpu1.next_start(1000 + 1600 * MS), Some(1000 + 1750 * MS));
        assert_eq!(cpu1.next_start(1000 + 1750 * MS + 1), None);
    }

    #[test]
    fn an_overrun_skips_to_the_next_whole_window() {
        let s = Schedule::new(0, 10_000 * MS, 1000 * MS, 500 * MS, 0, 1);
        assert_eq!(s.windows(), 10);
        assert_eq!(s.next_start(MS), Some(1000 * MS));
        assert_eq!(s.next_start(2000 * MS), Some(2000 * MS));
        assert_eq!(s.next_start(2000 * MS + 1), Some(3000 * MS));
        // Window 9 (9000..9500 ms) is the last.
        assert_eq!(s.next_start(8600 * MS), Some(9000 * MS));
        assert_eq!(s.next_start(9000 * MS + 1), None);
    }

    #[test]
    fn a_run_shorter_than_one_spin_has_no_window() {
        let s = Schedule::new(0, 400 * MS, 1000 * MS, 500 * MS, 0, 1);
        assert_eq!(s.windows(), 0);
        assert_eq!(s.next_start(0), None);
        // Three CPUs split the window in thirds.
        let third = Schedule::new(0, 10_000 * MS, 900 * MS, 100 * MS, 2, 3);
        assert_eq!(third.next_start(0), Some(600 * MS));
        assert_eq!(third.windows(), 11);
    }
}
