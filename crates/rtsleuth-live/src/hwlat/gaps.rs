//! Finding gaps in a stream of clock reads: the heart of the user-space detector.
//!
//! A thread that does nothing but read the clock sees consecutive values a few tens of
//! nanoseconds apart. When the CPU is taken away — an SMI, the hypervisor running another vCPU,
//! firmware, or (as seen from user space) an interrupt — the next read comes late and the
//! difference between two reads is how long the CPU was gone.

/// One stretch of time the reading loop did not run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Gap {
    /// How long, in nanoseconds (first, so gaps order by length).
    pub ns: u64,
    /// When it began: the last read before it, nanoseconds of CLOCK_MONOTONIC.
    pub start: u64,
}

/// What one spin window saw.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Window {
    /// The first and the last clock read.
    pub first: u64,
    pub last: u64,
    /// How many times the clock was read.
    pub reads: u64,
}

/// Reads `clock` in a loop for `width` nanoseconds from its first value (or until `stop` says
/// so) and hands every gap longer than `threshold` to `found`, in order.
///
/// The clock is a parameter so that the same loop the detector runs is tested on made-up
/// times; `stop` is asked every read because reading an atomic costs a nanosecond next to the
/// clock read's tens.
pub fn scan(
    mut clock: impl FnMut() -> u64,
    width: u64,
    threshold: u64,
    mut stop: impl FnMut() -> bool,
    mut found: impl FnMut(Gap),
) -> Window {
    let first = clock();
    let mut prev = first;
    let mut reads = 1;
    loop {
        let now = clock();
        reads += 1;
        let delta = now.saturating_sub(prev);
        if delta > threshold {
            found(Gap {
                ns: delta,
                start: prev,
            });
        }
        prev = now;
        if now.saturating_sub(first) >= width || stop() {
            break;
        }
    }
    Window {
        first,
        last: prev,
        reads,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs `scan` over fixed clock values and returns the window and the gaps.
    fn over(times: &[u64], width: u64, threshold: u64) -> (Window, Vec<Gap>) {
        let mut it = times.iter().copied();
        let mut gaps = Vec::new();
        let w = scan(
            || it.next().expect("scan read past the made-up clock"),
            width,
            threshold,
            || false,
            |g| gaps.push(g),
        );
        (w, gaps)
    }

    #[test]
    fn reports_only_gaps_above_the_threshold_with_their_start() {
        let times = [
            100, 150, 200, 10_200, 10_250, 10_300, 20_301, 20_350, 30_000,
        ];
        let (w, gaps) = over(&times, 29_900, 10_000);
        assert_eq!(
            gaps,
            vec![
                // 200 -> 10_200 is exactly the threshold: not above it.
                Gap {
                    ns: 10_001,
                    start: 10_300
                },
            ]
        );
        assert_eq!(
            w,
            Window {
                first: 100,
                last: 30_000,
                reads: 9
            }
        );
        // 20_350 -> 30_000 is 9_650: under the threshold as well.
        let (_, lower) = over(&times, 29_900, 9_000);
        assert_eq!(
            lower,
            vec![
                Gap {
                    ns: 10_000,
                    start: 200
                },
                Gap {
                    ns: 10_001,
                    start: 10_300
                },
                Gap {
                    ns: 9_650,
                    start: 20_350
                },
            ]
        );
    }

    #[test]
    fn stops_at_the_first_read_past_the_width() {
        let (w, gaps) = over(&[0, 10, 20, 30, 40, 50], 25, 5);
        assert_eq!(gaps.len(), 3);
        assert_eq!((w.last, w.reads), (30, 4));
    }

    #[test]
    fn a_clock_going_backwards_is_no_gap_and_stop_ends_early() {
        let (_, gaps) = over(&[1000, 900, 950, 3000], 2000, 100);
        assert_eq!(
            gaps,
            vec![Gap {
                ns: 2050,
                start: 950
            }]
        );
        let mut t = 0;
        let mut asked = 0;
        let w = scan(
            || {
                t += 7;
                t
            },
            1_000_000,
            100,
            || {
                asked += 1;
                asked == 3
            },
            |_| panic!("no gap"),
        );
        assert_eq!((w.first, w.last, w.reads), (7, 28, 4));
    }
}
