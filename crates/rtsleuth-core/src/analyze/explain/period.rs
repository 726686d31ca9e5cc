//! When was a periodic task due, if the trace shows neither its timer nor a cyclictest mark?
//!
//! A task that sleeps until absolute deadlines `t0 + n·P` wakes at `t0 + n·P + lateness`. From
//! its wake-ups alone the period is the median of its recent intervals, and the phase is that of
//! its least late recent wake-up: each wake-up is due one period after the previous one was
//! due, shifted by the smallest lateness among the last few (so an error in the estimated period
//! cannot accumulate). The result is an estimate, and the least late recent wake-up counts as
//! on time; the source says so (`period`).

use crate::event::Timestamp;
use std::collections::VecDeque;

/// How many recent intervals and latenesses are kept.
const WINDOW: usize = 16;
/// Wake-ups needed before the rhythm is trusted.
const MIN_INTERVALS: usize = 8;

#[derive(Debug, Default, Clone)]
pub struct Rhythm {
    last_wakeup: Option<Timestamp>,
    last_due: Option<Timestamp>,
    intervals: VecDeque<u64>,
    lateness: VecDeque<u64>,
}

impl Rhythm {
    /// Records a wake-up at `wakeup`; returns when it was due if the task is periodic.
    pub fn wake(&mut self, wakeup: Timestamp) -> Option<Timestamp> {
        if let Some(prev) = self.last_wakeup.replace(wakeup) {
            push(&mut self.intervals, wakeup.saturating_sub(prev));
        }
        let Some(period) = self.period() else {
            self.last_due = Some(wakeup);
            return None;
        };
        let projected = self.last_due.map_or(wakeup, |d| d.saturating_add(period));
        // Earlier than projected: the projection was late, this wake-up sets the phase.
        push(&mut self.lateness, wakeup.saturating_sub(projected));
        let due = if wakeup <= projected {
            wakeup
        } else {
            projected.saturating_add(self.lateness.iter().min().copied().unwrap_or(0))
        };
        self.last_due = Some(due);
        Some(due)
    }

    /// The median recent interval, when at least half of the intervals are within 10% of it.
    fn period(&self) -> Option<u64> {
        if self.intervals.len() < MIN_INTERVALS {
            return None;
        }
        let mut sorted: Vec<u64> = self.intervals.iter().copied().collect();
        sorted.sort_unstable();
        let p = sorted[sorted.len() / 2];
        // `d <= p / 10` is `10·d <= p` for integers, without overflowing on absurd intervals.
        let regular = sorted.iter().filter(|&&i| i.abs_diff(p) <= p / 10).count();
        (p > 0 && regular * 2 >= sorted.len()).then_some(p)
    }
}

fn push(q: &mut VecDeque<u64>, v: u64) {
    if q.len() == WINDOW {
        q.pop_front();
    }
    q.push_back(v);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 1 ms period, 5 µs of ordinary lateness, one wake-up 300 µs late.
    #[test]
    fn a_late_wakeup_is_due_one_period_after_the_previous_one() {
        let mut r = Rhythm::default();
        let mut dues = Vec::new();
        for n in 0..20u64 {
            let late = if n == 15 { 300_000 } else { 5_000 };
            dues.push(r.wake(1_000_000_000 + n * 1_000_000 + late));
        }
        // Eight intervals make a rhythm.
        assert!(dues[..8].iter().all(Option::is_none), "{dues:?}");
        assert_eq!(dues[8], Some(1_000_000_000 + 8 * 1_000_000 + 5_000));
        // The phase is that of the least late wake-up: 5 µs after the true deadline.
        assert_eq!(dues[15], Some(1_000_000_000 + 15 * 1_000_000 + 5_000));
        assert_eq!(dues[16], Some(1_000_000_000 + 16 * 1_000_000 + 5_000));
    }

    /// Timestamps near the top of the range (a damaged trace) must not overflow.
    #[test]
    fn absurd_timestamps_do_not_overflow() {
        let mut r = Rhythm::default();
        for n in 0..20u64 {
            r.wake(u64::MAX / 2 + n * (u64::MAX / 50));
        }
        r.wake(u64::MAX);
    }

    #[test]
    fn irregular_wakeups_have_no_period() {
        let mut r = Rhythm::default();
        let mut ts = 0;
        for n in 1..40u64 {
            ts += n * n * 1000;
            assert_eq!(r.wake(ts), None);
        }
    }
}
