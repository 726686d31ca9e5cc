//! Converting hrtimer expiry times to the trace clock.
//!
//! `hrtimer_start expires=` and `hrtimer_expire_entry now=` are in the timer's clock base
//! (CLOCK_MONOTONIC for cyclictest), while event timestamps are in the trace clock (`local`,
//! `global`, `mono`, a TSC count…). The two differ by an offset that is different per CPU for
//! the `local` clock and drifts slowly. Every `hrtimer_expire_entry` is a calibration point: its
//! timestamp and its `now=` are the same instant on the two clocks. The most recent point of a
//! CPU converts that CPU's expiry times; for the victim's own timer that point is the victim's
//! own `hrtimer_expire_entry`, so the conversion carries no drift at all.

use crate::event::Timestamp;

#[derive(Debug, Default)]
pub struct HrtimerClock {
    /// Per CPU: trace time minus clock-base time at the latest `hrtimer_expire_entry`.
    offsets: Vec<Option<i128>>,
}

impl HrtimerClock {
    /// An `hrtimer_expire_entry` with `now=` at trace time `ts` on `cpu`.
    pub fn observe(&mut self, cpu: u32, ts: Timestamp, now: u64) {
        let cpu = cpu as usize;
        if cpu >= self.offsets.len() {
            self.offsets.resize(cpu + 1, None);
        }
        self.offsets[cpu] = Some(i128::from(ts) - i128::from(now));
    }

    /// The trace time of clock-base time `base` on `cpu`; `None` before the CPU's first
    /// calibration point or when the result would not be a timestamp.
    pub fn to_trace(&self, cpu: u32, base: u64) -> Option<Timestamp> {
        let offset = (*self.offsets.get(cpu as usize)?)?;
        Timestamp::try_from(i128::from(base) + offset).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Numbers from `tests/fixtures/recorded/fifo_above/trace.txt`: cyclictest armed its timer
    /// for 653533723737 (monotonic); it fired at trace time 653.572056 with now=653533727893,
    /// so it was due 4.156 µs before that: at 653.572051844 in the trace clock.
    #[test]
    fn converts_with_the_latest_point_of_the_cpu() {
        let mut clock = HrtimerClock::default();
        assert_eq!(clock.to_trace(0, 653_533_723_737), None);
        clock.observe(0, 653_571_069_000, 653_532_741_563);
        clock.observe(0, 653_572_056_000, 653_533_727_893);
        assert_eq!(clock.to_trace(0, 653_533_723_737), Some(653_572_051_844));
        // Another CPU's clock is not this one's.
        assert_eq!(clock.to_trace(1, 653_533_723_737), None);
        clock.observe(1, 653_000_000_000, 653_000_000_000);
        assert_eq!(clock.to_trace(1, 5), Some(5));
    }

    #[test]
    fn never_wraps_below_zero() {
        let mut clock = HrtimerClock::default();
        clock.observe(0, 10, 1_000);
        assert_eq!(clock.to_trace(0, 500), None);
        assert_eq!(clock.to_trace(0, 995), Some(5));
    }
}
