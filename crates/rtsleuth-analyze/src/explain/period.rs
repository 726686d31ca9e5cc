//! When was a periodic task due, if the trace shows neither its timer nor a cyclictest mark?
//!
//! Only a strict rhythm counts as evidence. The rule, for the wake-up starting at `w`:
//! - the task's previous [`HISTORY`] wake-ups (starts as [`crate::wakeups`] defines
//!   them) make [`INTERVALS`] intervals, each within 5% of their median `P` (the upper median,
//!   the fifth smallest of eight);
//! - `w` comes at most 1.5 `P` after the previous wake-up: a task that slept longer simply
//!   slept longer, it is not late;
//! - it was then due at the earliest of the projections `w_j + n·P` of those wake-ups onto
//!   `w`'s period (the phase of the least late of them), but never more than one period before
//!   `w` and never after it.
//!
//! A late wake-up breaks the rhythm for the next ones (its interval is off by its lateness), so
//! they are not claimed late on the strength of an estimate: no cascade. What is claimed is
//! an estimate; the source says so (`period`). And it is claimed only where the trace shows
//! what delayed the wake-up: a wake-up whose time before it would be `unknown` is explained
//! from the wake-up instead.

use rtsleuth_trace::event::Timestamp;
use std::collections::VecDeque;

/// Intervals that must agree before a period is trusted.
pub const INTERVALS: usize = 8;
/// Wake-ups kept: the ones those intervals lie between.
const HISTORY: usize = INTERVALS + 1;

/// The due time a rhythm gives, and the period that gave it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rhythmic {
    pub due: Timestamp,
    pub period: u64,
}

#[derive(Debug, Default, Clone)]
pub struct Rhythm {
    starts: VecDeque<Timestamp>,
}

impl Rhythm {
    /// Records a wake-up starting at `w`; returns when it was due if the rule above holds.
    pub fn wake(&mut self, w: Timestamp) -> Option<Rhythmic> {
        let due = self.due(w);
        if self.starts.len() == HISTORY {
            self.starts.pop_front();
        }
        self.starts.push_back(w);
        due
    }

    fn due(&self, w: Timestamp) -> Option<Rhythmic> {
        if self.starts.len() < HISTORY {
            return None;
        }
        // An array, not a vector: this runs at every wake-up of every task.
        let mut intervals = [0u64; INTERVALS];
        let pairs = self.starts.iter().zip(self.starts.iter().skip(1));
        for (slot, (a, b)) in intervals.iter_mut().zip(pairs) {
            *slot = b.saturating_sub(*a);
        }
        intervals.sort_unstable();
        let p = intervals[INTERVALS / 2];
        // `d <= p / 20` without overflow on absurd intervals.
        if p == 0 || intervals.iter().any(|i| i.abs_diff(p) > p / 20) {
            return None;
        }
        let prev = *self.starts.back()?;
        let gap = w.checked_sub(prev)?;
        if gap > p + p / 2 {
            return None;
        }
        let projected = self
            .starts
            .iter()
            .enumerate()
            .map(|(j, s)| s.saturating_add(p.saturating_mul((HISTORY - j) as u64)))
            .min()?;
        let due = projected.max(w.saturating_sub(p)).min(w);
        Some(Rhythmic { due, period: p })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const T0: u64 = 1_000_000_000;
    const P: u64 = 1_000_000;

    /// 1 ms period, 5 µs of ordinary lateness, one wake-up 300 µs late.
    #[test]
    fn a_late_wakeup_is_due_one_period_after_the_rhythm() {
        let mut r = Rhythm::default();
        let mut dues = Vec::new();
        for n in 0..30u64 {
            let late = if n == 15 {
                300_000
            } else {
                5_000 + u64::from(n % 4 == 1) * 1_000
            };
            dues.push(r.wake(T0 + n * P + late).map(|d| d.due));
        }
        // Nine wake-ups make eight intervals.
        assert!(dues[..9].iter().all(Option::is_none), "{dues:?}");
        // The phase is that of the least late recent wake-up: 5 µs after the true deadline.
        assert_eq!(dues[9], Some(T0 + 9 * P + 5_000));
        assert_eq!(dues[15], Some(T0 + 15 * P + 5_000));
        // The late one broke the rhythm: the next nine are not claimed, then it is back.
        assert!(dues[16..25].iter().all(Option::is_none), "{dues:?}");
        assert_eq!(dues[25], Some(T0 + 25 * P + 5_000));
    }

    /// A task that wakes 20 times every 2 ms and then sleeps 7 ms is not 5 ms late.
    #[test]
    fn a_longer_sleep_is_not_lateness() {
        let mut r = Rhythm::default();
        for n in 0..20u64 {
            r.wake(T0 + n * 2 * P);
        }
        assert_eq!(r.wake(T0 + 19 * 2 * P + 7 * P), None);
        // 1.5 periods is the most a gap may be.
        let mut r = Rhythm::default();
        for n in 0..20u64 {
            r.wake(T0 + n * 2 * P);
        }
        let w = T0 + 19 * 2 * P + 3 * P;
        assert_eq!(
            r.wake(w),
            Some(Rhythmic {
                due: T0 + 20 * 2 * P,
                period: 2 * P
            })
        );
    }

    #[test]
    fn never_more_than_one_period_before_the_wakeup() {
        let mut r = Rhythm::default();
        // Exact rhythm, then a wake-up 1.4 periods after the previous one: the projection of
        // the oldest start lies 0.4 periods back.
        for n in 0..9u64 {
            r.wake(T0 + n * P);
        }
        let w = T0 + 8 * P + 1_400_000;
        assert_eq!(r.wake(w).map(|d| d.due), Some(T0 + 9 * P));
    }

    /// Timestamps near the top of the range (a damaged trace) must not overflow.
    #[test]
    fn absurd_timestamps_do_not_overflow() {
        let mut r = Rhythm::default();
        for n in 0..20u64 {
            r.wake(u64::MAX / 2 + n * (u64::MAX / 50));
        }
        r.wake(u64::MAX);
        r.wake(0);
    }

    #[test]
    fn irregular_wakeups_have_no_period() {
        let mut r = Rhythm::default();
        let mut ts = 0;
        for n in 1..40u64 {
            ts += 1_000_000 + (n % 2) * 60_000;
            assert_eq!(r.wake(ts), None);
        }
    }
}
