//! A latency distribution in bounded memory.
//!
//! Count, sum, minimum and maximum are exact; percentiles come from an HDR histogram with three
//! significant digits (within 0.1% of the exact nearest-rank value), which costs a few tens of
//! kilobytes per task however many wake-ups it had.

use crate::event::Timestamp;
use hdrhistogram::Histogram;

#[derive(Debug, Clone)]
pub struct LatencyHistogram {
    hist: Histogram<u32>,
    count: u64,
    sum_ns: u128,
    min_ns: u64,
    max_ns: u64,
    /// Timestamp of the `sched_switch` that ended the worst sample.
    max_at: Timestamp,
    /// The task of the worst sample, for per-CPU views.
    max_pid: i32,
}

impl Default for LatencyHistogram {
    fn default() -> Self {
        LatencyHistogram {
            hist: Histogram::new(3).expect("3 significant digits is valid"),
            count: 0,
            sum_ns: 0,
            min_ns: u64::MAX,
            max_ns: 0,
            max_at: 0,
            max_pid: 0,
        }
    }
}

impl LatencyHistogram {
    pub fn record(&mut self, ns: u64, at: Timestamp) {
        self.record_for(ns, at, 0)
    }

    pub fn record_for(&mut self, ns: u64, at: Timestamp, pid: i32) {
        // `record` grows the histogram to fit the value; it can only fail on a bucket overflow
        // (4 billion equal samples), where saturating is the honest fallback.
        if self.hist.record(ns).is_err() {
            self.hist.saturating_record(ns);
        }
        self.count += 1;
        self.sum_ns += u128::from(ns);
        self.min_ns = self.min_ns.min(ns);
        if ns > self.max_ns || self.count == 1 {
            self.max_ns = ns;
            self.max_at = at;
            self.max_pid = pid;
        }
    }

    pub fn merge(&mut self, other: &LatencyHistogram) {
        if other.count == 0 {
            return;
        }
        self.hist
            .add(&other.hist)
            .expect("auto-resizing histograms always merge");
        if other.max_ns > self.max_ns || self.count == 0 {
            self.max_ns = other.max_ns;
            self.max_at = other.max_at;
            self.max_pid = other.max_pid;
        }
        self.count += other.count;
        self.sum_ns += other.sum_ns;
        self.min_ns = self.min_ns.min(other.min_ns);
    }

    pub fn count(&self) -> u64 {
        self.count
    }

    pub fn max_ns(&self) -> u64 {
        self.max_ns
    }

    pub fn max_at(&self) -> Timestamp {
        self.max_at
    }

    pub fn max_pid(&self) -> i32 {
        self.max_pid
    }

    pub fn min_ns(&self) -> Option<u64> {
        (self.count > 0).then_some(self.min_ns)
    }

    pub fn sum_ns(&self) -> u128 {
        self.sum_ns
    }

    pub fn avg_ns(&self) -> f64 {
        if self.count == 0 {
            0.0
        } else {
            self.sum_ns as f64 / self.count as f64
        }
    }

    /// The nearest-rank percentile `q` (0..=100): the lowest value of the HDR bucket holding
    /// that rank, kept within the exact minimum and maximum. Samples that are whole
    /// microseconds (text traces) come out exact.
    pub fn percentile_ns(&self, q: f64) -> u64 {
        if self.count == 0 {
            return 0;
        }
        let v = self.hist.value_at_percentile(q);
        // The bucket holding an exact extreme reports the extreme itself.
        if self.hist.equivalent(v, self.max_ns) {
            return self.max_ns;
        }
        if self.hist.equivalent(v, self.min_ns) {
            return self.min_ns;
        }
        self.hist.lowest_equivalent(v).clamp(self.min_ns, self.max_ns)
    }

    /// Counts in power-of-two microsecond buckets: `(upper bound in us, count)`, the first
    /// bucket being `< 1 us`. Empty buckets at the ends are left out.
    pub fn log2_buckets_us(&self) -> Vec<(u64, u64)> {
        let mut buckets = Vec::new();
        let mut upper_us = 1u64;
        let mut below = 0u64;
        while below < self.count {
            let upper_ns = upper_us * 1000;
            let at_or_below = self.hist.count_between(0, upper_ns - 1);
            buckets.push((upper_us, at_or_below - below));
            below = at_or_below;
            upper_us *= 2;
            if upper_us > 1 << 40 {
                break;
            }
        }
        let first = buckets.iter().position(|b| b.1 > 0).unwrap_or(0);
        buckets.drain(..first);
        buckets
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_moments_and_close_percentiles() {
        let mut h = LatencyHistogram::default();
        for i in 1..=1000u64 {
            h.record(i * 1000, i);
        }
        assert_eq!(h.count(), 1000);
        assert_eq!(h.max_ns(), 1_000_000);
        assert_eq!(h.max_at(), 1000);
        assert_eq!(h.min_ns(), Some(1000));
        assert_eq!(h.avg_ns(), 500_500.0);
        let p50 = h.percentile_ns(50.0) as f64;
        assert!((p50 - 500_000.0).abs() / 500_000.0 < 0.001, "{p50}");
        let p99 = h.percentile_ns(99.0) as f64;
        assert!((p99 - 990_000.0).abs() / 990_000.0 < 0.001, "{p99}");
        assert_eq!(h.percentile_ns(100.0), 1_000_000);
    }

    #[test]
    fn log2_buckets() {
        let mut h = LatencyHistogram::default();
        for ns in [1500, 1800, 3000, 9000, 9000] {
            h.record(ns, 0);
        }
        // 1-2 us: 2 samples, 2-4 us: 1, 4-8 us: 0, 8-16 us: 2.
        assert_eq!(h.log2_buckets_us(), vec![(2, 2), (4, 1), (8, 0), (16, 2)]);
    }

    #[test]
    fn merge_keeps_the_worst() {
        let mut a = LatencyHistogram::default();
        a.record_for(5000, 10, 1);
        let mut b = LatencyHistogram::default();
        b.record_for(9000, 20, 2);
        a.merge(&b);
        assert_eq!(
            (a.count(), a.max_ns(), a.max_at(), a.max_pid()),
            (2, 9000, 20, 2)
        );
    }
}
