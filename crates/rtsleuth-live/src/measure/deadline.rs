//! The wake-up schedule of one measuring thread, as plain arithmetic on CLOCK_MONOTONIC
//! nanoseconds so that it can be tested without sleeping.
//!
//! Like cyclictest, the schedule is absolute: deadline k is `start + k * interval`, so a late
//! wake-up does not shift the ones after it, and the latency of a wake-up is the time it was
//! read minus the deadline it slept to. Unlike cyclictest, which silently skips the deadlines
//! a very late wake-up has already passed, the skipped ones are counted as overruns.

/// The next absolute deadline and the period.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Deadline {
    next_ns: u64,
    interval_ns: u64,
}

/// What one wake-up measured.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Wake {
    /// How long after its deadline the thread read the clock.
    pub latency_ns: u64,
    /// Deadlines that had already passed when it woke, skipped rather than slept to: sleeping
    /// to a past deadline returns at once, and a thread that keeps doing that spins.
    pub overruns: u64,
}

impl Deadline {
    /// The first deadline is one interval after `now_ns`.
    pub fn start(now_ns: u64, interval_ns: u64) -> Deadline {
        assert!(interval_ns > 0, "a zero interval would spin");
        Deadline {
            next_ns: now_ns + interval_ns,
            interval_ns,
        }
    }

    /// The deadline to sleep to.
    pub fn next_ns(&self) -> u64 {
        self.next_ns
    }

    /// Accounts for a wake-up read at `now_ns` and moves to the first deadline not yet
    /// passed. A clock reading before the deadline (which an absolute sleep cannot return)
    /// counts as zero latency.
    pub fn woke(&mut self, now_ns: u64) -> Wake {
        let latency_ns = now_ns.saturating_sub(self.next_ns);
        self.next_ns += self.interval_ns;
        let mut overruns = 0;
        if now_ns > self.next_ns {
            overruns = (now_ns - self.next_ns).div_ceil(self.interval_ns);
            self.next_ns += overruns * self.interval_ns;
        }
        Wake {
            latency_ns,
            overruns,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn on_time_wakeups_keep_the_absolute_grid() {
        let mut d = Deadline::start(1_000, 100);
        assert_eq!(d.next_ns(), 1_100);
        assert_eq!(
            d.woke(1_107),
            Wake {
                latency_ns: 7,
                overruns: 0
            }
        );
        // The next deadline does not drift by the 7 ns of latency.
        assert_eq!(d.next_ns(), 1_200);
        // Waking exactly on the next deadline is late by one interval, not an overrun.
        assert_eq!(
            d.woke(1_300),
            Wake {
                latency_ns: 100,
                overruns: 0
            }
        );
        assert_eq!(d.next_ns(), 1_300);
    }

    #[test]
    fn a_late_wakeup_skips_the_passed_deadlines_and_counts_them() {
        let mut d = Deadline::start(0, 100);
        // Due at 100, woke at 351: deadlines 200 and 300 have passed, 400 is next.
        assert_eq!(
            d.woke(351),
            Wake {
                latency_ns: 251,
                overruns: 2
            }
        );
        assert_eq!(d.next_ns(), 400);
        // Waking one nanosecond past the next deadline skips exactly that one.
        let mut d = Deadline::start(0, 100);
        assert_eq!(d.woke(201).overruns, 1);
        assert_eq!(d.next_ns(), 300);
    }

    #[test]
    fn a_clock_before_the_deadline_is_zero_latency() {
        let mut d = Deadline::start(0, 100);
        assert_eq!(
            d.woke(90),
            Wake {
                latency_ns: 0,
                overruns: 0
            }
        );
        assert_eq!(d.next_ns(), 200);
    }
}
