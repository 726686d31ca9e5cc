//! What a measuring thread records on each wake-up, and the numbers it adds up to.
//!
//! Counters are exact; percentiles come from an HDR histogram in nanoseconds with three
//! significant digits (exact below 2.048 us, within 0.1% above), allocated with fixed bounds
//! before the thread starts measuring so that recording never allocates. The optional
//! per-microsecond histogram is exact, as cyclictest's `-h` is.

use super::deadline::Wake;
use hdrhistogram::Histogram;
use std::sync::atomic::{AtomicI32, AtomicU64, Ordering::Relaxed};

/// Latencies above this are counted at this value in the percentile histogram (the exact
/// maximum is kept apart). Ten seconds costs about 100 kB per thread.
const HIST_MAX_NS: u64 = 10_000_000_000;

/// The running numbers of one thread, written only by that thread and read by the live view.
/// Single writer: plain relaxed loads and stores, no read-modify-write.
#[derive(Debug)]
pub struct LiveStats {
    pub tid: AtomicI32,
    pub cycles: AtomicU64,
    pub cur_ns: AtomicU64,
    pub min_ns: AtomicU64,
    pub max_ns: AtomicU64,
    pub sum_ns: AtomicU64,
    pub overruns: AtomicU64,
}

impl Default for LiveStats {
    fn default() -> LiveStats {
        LiveStats {
            tid: AtomicI32::new(0),
            cycles: AtomicU64::new(0),
            cur_ns: AtomicU64::new(0),
            min_ns: AtomicU64::new(u64::MAX),
            max_ns: AtomicU64::new(0),
            sum_ns: AtomicU64::new(0),
            overruns: AtomicU64::new(0),
        }
    }
}

/// Counts per whole microsecond of latency (truncated, as cyclictest buckets), up to a limit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UsHistogram {
    /// `counts[us]` wake-ups were `us` to `us + 1` microseconds late.
    pub counts: Vec<u64>,
    /// Wake-ups at least `counts.len()` microseconds late.
    pub overflows: u64,
}

impl UsHistogram {
    pub fn new(max_us: usize) -> UsHistogram {
        UsHistogram {
            counts: vec![0; max_us],
            overflows: 0,
        }
    }

    fn add(&mut self, latency_ns: u64) {
        match self.counts.get_mut((latency_ns / 1000) as usize) {
            Some(c) => *c += 1,
            None => self.overflows += 1,
        }
    }
}

/// Everything one thread records, allocated up front.
pub struct Recorder<'a> {
    live: &'a LiveStats,
    hist: Histogram<u32>,
    us: Option<UsHistogram>,
}

impl<'a> Recorder<'a> {
    /// Allocates the histograms; `hist_us` adds the per-microsecond one.
    pub fn new(live: &'a LiveStats, hist_us: Option<usize>) -> Recorder<'a> {
        Recorder {
            live,
            hist: Histogram::new_with_bounds(1, HIST_MAX_NS, 3).expect("valid fixed bounds"),
            us: hist_us.map(UsHistogram::new),
        }
    }

    /// Adds one wake-up and returns how many there have been. Never allocates: the histograms
    /// have fixed bounds.
    pub fn record(&mut self, wake: Wake) -> u64 {
        let ns = wake.latency_ns;
        let live = self.live;
        live.cur_ns.store(ns, Relaxed);
        let cycles = live.cycles.load(Relaxed) + 1;
        live.cycles.store(cycles, Relaxed);
        live.sum_ns.store(live.sum_ns.load(Relaxed) + ns, Relaxed);
        if ns < live.min_ns.load(Relaxed) {
            live.min_ns.store(ns, Relaxed);
        }
        if ns > live.max_ns.load(Relaxed) {
            live.max_ns.store(ns, Relaxed);
        }
        if wake.overruns > 0 {
            live.overruns
                .store(live.overruns.load(Relaxed) + wake.overruns, Relaxed);
        }
        self.hist.saturating_record(ns.clamp(1, HIST_MAX_NS));
        if let Some(us) = &mut self.us {
            us.add(ns);
        }
        cycles
    }

    /// The numbers so far.
    pub fn summary(self) -> ThreadSummary {
        let live = self.live;
        let cycles = live.cycles.load(Relaxed);
        let (min_ns, max_ns) = (live.min_ns.load(Relaxed), live.max_ns.load(Relaxed));
        let pct = |q| percentile(&self.hist, cycles, q, min_ns, max_ns);
        ThreadSummary {
            cycles,
            min_ns: if cycles == 0 { 0 } else { min_ns },
            sum_ns: live.sum_ns.load(Relaxed),
            p50_ns: pct(50.0),
            p99_ns: pct(99.0),
            p999_ns: pct(99.9),
            max_ns,
            overruns: live.overruns.load(Relaxed),
            histogram: self.us,
        }
    }
}

/// The nearest-rank percentile `q` (0-100) of `n` samples: the exact minimum or maximum when
/// the rank is the first or the last, else the lowest value of the HDR bucket holding it.
fn percentile(h: &Histogram<u32>, n: u64, q: f64, min_ns: u64, max_ns: u64) -> u64 {
    if n == 0 {
        return 0;
    }
    // The rank is computed here because `q * n` a hair above an integer (99.9% of 1000)
    // would otherwise land one rank high.
    let count = n as f64;
    let rank = ((q / 100.0) * count - 1e-9).ceil().clamp(1.0, count);
    if rank == count {
        return max_ns;
    }
    if rank == 1.0 {
        return min_ns;
    }
    let v = h.value_at_quantile((rank - 0.5) / count);
    h.lowest_equivalent(v).clamp(min_ns, max_ns)
}

/// One thread's result.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ThreadSummary {
    pub cycles: u64,
    pub min_ns: u64,
    pub sum_ns: u64,
    pub p50_ns: u64,
    pub p99_ns: u64,
    pub p999_ns: u64,
    pub max_ns: u64,
    /// Deadlines skipped because the thread woke after them.
    pub overruns: u64,
    pub histogram: Option<UsHistogram>,
}

impl ThreadSummary {
    /// The mean latency, rounded to the nanosecond.
    pub fn avg_ns(&self) -> u64 {
        (self.sum_ns + self.cycles / 2)
            .checked_div(self.cycles)
            .unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record_all(samples: &[u64], hist_us: Option<usize>) -> ThreadSummary {
        let live = LiveStats::default();
        let mut r = Recorder::new(&live, hist_us);
        for &latency_ns in samples {
            r.record(Wake {
                latency_ns,
                overruns: u64::from(latency_ns > 1_000_000),
            });
        }
        r.summary()
    }

    #[test]
    fn exact_numbers_from_a_known_sample_set() {
        // 1000 samples: 1..=1000 ns (exact HDR range), then the tail above 2.048 us.
        let mut samples: Vec<u64> = (1..=1000).collect();
        samples[989] = 5_000; // rank 990 (p99) is now 5 us
        samples[998] = 20_000; // rank 999 (p99.9)
        samples[999] = 1_500_000; // the maximum, one overrun
        let s = record_all(&samples, None);
        assert_eq!(s.cycles, 1000);
        assert_eq!(s.min_ns, 1);
        assert_eq!(s.max_ns, 1_500_000);
        assert_eq!(s.overruns, 1);
        // p50 is rank 500.
        assert_eq!(s.p50_ns, 500);
        // Sorted: 1..=989, 991..=998, 5000, 20000, 1_500_000; rank 990 is 991.
        assert_eq!(s.p99_ns, 991);
        // Rank 999 is 20 us: bucket [20000, 20015] reports its lowest value.
        assert_eq!(s.p999_ns, 20_000);
        let sum: u64 = samples.iter().sum();
        assert_eq!(s.sum_ns, sum);
        assert_eq!(s.avg_ns(), (sum + 500) / 1000);
    }

    #[test]
    fn percentiles_in_coarse_buckets_stay_within_the_extremes() {
        // 10001 and 10003 share an 8 ns HDR bucket [10000, 10007]: the maximum is exact.
        let s = record_all(&[10_001, 10_003], None);
        assert_eq!((s.p50_ns, s.p99_ns, s.max_ns), (10_001, 10_003, 10_003));
        assert_eq!(s.min_ns, 10_001);
        let s = record_all(&[], None);
        assert_eq!((s.cycles, s.min_ns, s.p99_ns, s.avg_ns()), (0, 0, 0, 0));
    }

    #[test]
    fn per_microsecond_buckets_truncate_and_overflow() {
        let s = record_all(&[0, 999, 1_000, 2_999, 3_000, 7_000], Some(3));
        let h = s.histogram.unwrap();
        assert_eq!(h.counts, vec![2, 1, 1]);
        assert_eq!(h.overflows, 2);
    }
}
