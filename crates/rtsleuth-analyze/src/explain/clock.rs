//! Converting hrtimer expiry times to the trace clock.
//!
//! `hrtimer_start expires=` and `hrtimer_expire_entry now=` are in the timer's clock base
//! (CLOCK_MONOTONIC for cyclictest), while event timestamps are in the trace clock (`local`,
//! `global`, `mono`, a TSC count…). The two differ by an offset that is different per CPU for
//! the `local` clock and drifts slowly. Every `hrtimer_expire_entry` is a calibration point: its
//! timestamp and its `now=` are the same instant on the two clocks. The most recent point of a
//! CPU converts that CPU's expiry times; for the victim's own timer that point is the victim's
//! own `hrtimer_expire_entry`, so the conversion carries no drift at all.
//!
//! One interrupt reads the clock once and runs every expired timer with that reading: all the
//! `hrtimer_expire_entry` events of one pass share one `now=`. Only the first is a calibration
//! point; the later ones come after the earlier callbacks ran, so their `now=` is stale by those
//! callbacks' run time (a 30 ms callback in the lab's `hardirq` scenario made the victim's own
//! entry look 30 ms early in the clock base, hiding the whole spike). An entry whose `now=`
//! repeats the CPU's previous one is therefore not a calibration point.

use rtsleuth_trace::event::Timestamp;

#[derive(Debug, Default)]
pub struct HrtimerClock {
    /// Per CPU: the latest calibration point, as its `now=` (to recognise stale repeats) and
    /// trace time minus clock-base time there.
    points: Vec<Option<(u64, i128)>>,
}

impl HrtimerClock {
    /// An `hrtimer_expire_entry` with `now=` at trace time `ts` on `cpu`.
    pub fn observe(&mut self, cpu: u32, ts: Timestamp, now: u64) {
        let cpu = cpu as usize;
        if cpu >= self.points.len() {
            self.points.resize(cpu + 1, None);
        }
        if self.points[cpu].is_some_and(|(last, _)| last == now) {
            return;
        }
        self.points[cpu] = Some((now, i128::from(ts) - i128::from(now)));
    }

    /// The trace time of clock-base time `base` on `cpu`; `None` before the CPU's first
    /// calibration point or when the result would not be a timestamp.
    pub fn to_trace(&self, cpu: u32, base: u64) -> Option<Timestamp> {
        let (_, offset) = (*self.points.get(cpu as usize)?)?;
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

    /// Numbers from the lab's `stock/hardirq` run: a 30 ms hard-IRQ callback fired with
    /// now=8138140332 at trace time 8.225329; cyclictest's own timer (due at 8138096210) ran in
    /// the same pass, 30 ms later, with the same `now=`. Its due time is 44 us before the pass
    /// began, not 44 us before its own entry.
    #[test]
    fn a_repeated_now_is_not_a_calibration_point() {
        let mut clock = HrtimerClock::default();
        clock.observe(1, 8_225_329_000, 8_138_140_332);
        clock.observe(1, 8_255_824_000, 8_138_140_332);
        assert_eq!(clock.to_trace(1, 8_138_096_210), Some(8_225_284_878));
        // The next pass reads the clock again and calibrates again.
        clock.observe(1, 8_255_867_000, 8_168_681_362);
        assert_eq!(clock.to_trace(1, 8_168_681_362), Some(8_255_867_000));
    }

    #[test]
    fn never_wraps_below_zero() {
        let mut clock = HrtimerClock::default();
        clock.observe(0, 10, 1_000);
        assert_eq!(clock.to_trace(0, 500), None);
        assert_eq!(clock.to_trace(0, 995), Some(5));
    }
}
