//! A latency distribution in bounded memory.
//!
//! Count, sum, minimum and maximum are exact; percentiles come from an HDR histogram with three
//! significant digits (within 0.1% of the exact nearest-rank value), which costs a few tens of
//! kilobytes per task however many wake-ups it had. Up to [`FEW`] samples are kept as they are
//! instead, and read as the histogram would read them: most tasks of a busy system are woken
//! a few times in a trace, and a histogram that reached a second holds 80 KB of buckets.
//!
//! Text traces print microseconds, so while every sample is a whole microsecond the histogram
//! counts microseconds: percentiles below 2 ms are then exact. The first sample with a finer
//! part switches it to nanoseconds.

use hdrhistogram::Histogram;
use rtsleuth_trace::event::{ns_to_us, ts_to_secs, Timestamp};
use std::borrow::Cow;
use std::sync::{LazyLock, OnceLock};

/// Samples in `[lower_ns, upper_ns)`, counted together.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bucket {
    pub lower_ns: u64,
    pub upper_ns: u64,
    pub count: u64,
}

/// What every report says of a distribution, in µs and trace-clock seconds; each `None` when
/// nothing was measured (a 0 would read as "no latency").
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Figures {
    pub count: u64,
    pub avg_us: Option<f64>,
    pub min_us: Option<f64>,
    pub p50_us: Option<f64>,
    pub p99_us: Option<f64>,
    pub p999_us: Option<f64>,
    pub max_us: Option<f64>,
    pub max_at_ts: Option<f64>,
}

#[derive(Debug, Clone)]
pub struct LatencyHistogram {
    /// The samples, in units, while there are at most [`FEW`]; empty once `hist` holds them.
    few: Vec<u64>,
    /// Made at the sample after the [`FEW`]th: most tasks of a busy system are never woken in
    /// a trace, and most others a few times.
    hist: Option<Histogram<u32>>,
    /// Nanoseconds per histogram unit: 1000 while all samples are whole microseconds, else 1.
    unit: u64,
    count: u64,
    sum_ns: u128,
    min_ns: u64,
    max_ns: u64,
    /// Timestamp of the `sched_switch` that ended the worst sample.
    max_at: Timestamp,
    /// The task of the worst sample, for per-CPU views.
    max_pid: i32,
    /// The percentiles of [`REPORTED`], found at the first request and kept until the next
    /// sample: a report asks for them several times per task, and each is a scan of the
    /// histogram's buckets (tens of thousands of them once a sample reaches a second).
    reported: OnceLock<[u64; 3]>,
}

/// The percentiles every report prints.
const REPORTED: [f64; 3] = [50.0, 99.0, 99.9];

/// The most samples kept as they are. Sorting 64 numbers for a percentile costs less than
/// scanning a histogram's buckets; on a 64 k-event Android trace 236 of 284 tasks stay here.
const FEW: usize = 64;

/// Which values a histogram counts together depends only on its precision, not on the
/// range it has grown to: this one answers it for samples kept as they are.
static BUCKETS: LazyLock<Histogram<u32>> = LazyLock::new(new_histogram);

impl Default for LatencyHistogram {
    fn default() -> Self {
        LatencyHistogram {
            few: Vec::new(),
            hist: None,
            unit: 1000,
            count: 0,
            sum_ns: 0,
            min_ns: u64::MAX,
            max_ns: 0,
            max_at: 0,
            max_pid: 0,
            reported: OnceLock::new(),
        }
    }
}

impl LatencyHistogram {
    /// Its figures, as the reports print them.
    pub fn figures(&self) -> Figures {
        let measured = self.count > 0;
        let us = |ns: u64| measured.then(|| ns_to_us(ns));
        Figures {
            count: self.count,
            avg_us: measured.then(|| self.avg_ns() / 1e3),
            min_us: self.min_ns().map(ns_to_us),
            p50_us: us(self.percentile_ns(50.0)),
            p99_us: us(self.percentile_ns(99.0)),
            p999_us: us(self.percentile_ns(99.9)),
            max_us: us(self.max_ns),
            max_at_ts: measured.then(|| ts_to_secs(self.max_at)),
        }
    }

    /// A histogram of whole-microsecond samples, for tests.
    #[cfg(test)]
    pub(crate) fn of_us(us: &[u64]) -> Self {
        let mut h = LatencyHistogram::default();
        for &u in us {
            h.record(u * 1000, 0);
        }
        h
    }

    pub fn record(&mut self, ns: u64, at: Timestamp) {
        self.record_for(ns, at, 0)
    }

    pub fn record_for(&mut self, ns: u64, at: Timestamp, pid: i32) {
        self.reported.take();
        if in_units(ns, self.unit).1 != 0 {
            self.switch_to_nanoseconds();
        }
        let v = in_units(ns, self.unit).0;
        match &mut self.hist {
            Some(h) => add(h, v, 1),
            None if self.few.len() < FEW => self.few.push(v),
            None => add(self.grown(), v, 1),
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

    /// Re-expresses the counts so far in nanoseconds (bucket by bucket: exact below 2 ms).
    fn switch_to_nanoseconds(&mut self) {
        if self.unit == 1 {
            return;
        }
        self.unit = 1;
        for v in &mut self.few {
            *v = BUCKETS.lowest_equivalent(*v) * 1000;
        }
        let Some(old) = self.hist.take() else {
            return;
        };
        let mut ns = new_histogram();
        for v in old.iter_recorded() {
            let value = old.lowest_equivalent(v.value_iterated_to()) * 1000;
            add(&mut ns, value, u64::from(v.count_at_value()));
        }
        self.hist = Some(ns);
    }

    pub fn merge(&mut self, other: &LatencyHistogram) {
        if other.count == 0 {
            return;
        }
        self.reported.take();
        let mut converted = None;
        let theirs = if self.unit == other.unit || self.count == 0 {
            self.unit = other.unit;
            other
        } else {
            self.switch_to_nanoseconds();
            converted.insert(other.clone()).switch_to_nanoseconds();
            converted.as_ref().expect("just set")
        };
        match &theirs.hist {
            None if self.hist.is_none() && self.few.len() + theirs.few.len() <= FEW => {
                self.few.extend_from_slice(&theirs.few);
            }
            _ => {
                let mine = self.grown();
                if let Some(h) = &theirs.hist {
                    mine.add(h).expect("auto-resizing histograms always merge");
                }
                add_each(mine, &theirs.few);
            }
        }
        if other.max_ns > self.max_ns || self.count == 0 {
            self.max_ns = other.max_ns;
            self.max_at = other.max_at;
            self.max_pid = other.max_pid;
        }
        self.count += other.count;
        self.sum_ns += other.sum_ns;
        self.min_ns = self.min_ns.min(other.min_ns);
    }

    /// The histogram, made from the samples kept so far if there is none yet.
    fn grown(&mut self) -> &mut Histogram<u32> {
        let few = std::mem::take(&mut self.few);
        self.hist.get_or_insert_with(|| histogram_of(&few))
    }

    /// The histogram, or one made of the samples kept, for the readings that walk buckets.
    fn buckets_of(&self) -> Cow<'_, Histogram<u32>> {
        match &self.hist {
            Some(h) => Cow::Borrowed(h),
            None => Cow::Owned(histogram_of(&self.few)),
        }
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
    /// that rank, kept within the exact minimum and maximum. Exact when it is the minimum or
    /// the maximum, or when samples are whole microseconds (text traces) below 2.048 ms;
    /// within 0.1% otherwise.
    pub fn percentile_ns(&self, q: f64) -> u64 {
        match REPORTED.iter().position(|&r| r == q) {
            Some(i) => self.reported.get_or_init(|| REPORTED.map(|r| self.scan(r)))[i],
            None => self.scan(q),
        }
    }

    /// [`Self::percentile_ns`], from the buckets.
    fn scan(&self, q: f64) -> u64 {
        if self.count == 0 {
            return 0;
        }
        let u = self.unit;
        // The nearest rank, computed here: HDR's own `ceil(q / 100 * n)` lands one rank high
        // when the product is a hair above an integer (99.9% of 1000 = 999.0000000000001).
        let n = self.count as f64;
        let rank = ((q / 100.0) * n - 1e-9).ceil().clamp(1.0, n);
        // A value in the bucket holding that rank: only its bucket is read from here on.
        let (h, v) = match &self.hist {
            Some(h) => (h, h.value_at_quantile((rank - 0.5) / n)),
            None => {
                let mut sorted = self.few.clone();
                sorted.sort_unstable();
                let Some(&at) = sorted.get(rank as usize - 1) else {
                    return 0;
                };
                (&*BUCKETS, at)
            }
        };
        // The bucket holding an exact extreme reports the extreme itself.
        if h.equivalent(v, self.max_ns / u) {
            return self.max_ns;
        }
        if h.equivalent(v, self.min_ns / u) {
            return self.min_ns;
        }
        (h.lowest_equivalent(v) * u).clamp(self.min_ns, self.max_ns)
    }

    /// The histogram's own buckets, lowest first, empty ones left out: what another tool needs
    /// to merge distributions (add the counts of equal or overlapping buckets) and take a
    /// nearest-rank percentile of the union to this histogram's precision, where averaging
    /// the percentiles of the parts would be wrong.
    pub fn buckets(&self) -> Vec<Bucket> {
        if self.count == 0 {
            return Vec::new();
        }
        let h = self.buckets_of();
        h.iter_recorded()
            .map(|v| {
                let at = v.value_iterated_to();
                Bucket {
                    lower_ns: h.lowest_equivalent(at) * self.unit,
                    upper_ns: (h.highest_equivalent(at) + 1) * self.unit,
                    count: u64::from(v.count_at_value()),
                }
            })
            .collect()
    }

    /// Counts in power-of-two microsecond buckets: `(upper bound in us, count)`, the first
    /// bucket being `< 1 us`. Empty buckets at the ends are left out.
    pub fn log2_buckets_us(&self) -> Vec<(u64, u64)> {
        if self.count == 0 {
            return Vec::new();
        }
        let hist = self.buckets_of();
        let mut buckets = Vec::new();
        let mut upper_us = 1u64;
        let mut below = 0u64;
        while below < self.count {
            let upper_ns = upper_us * 1000;
            let at_or_below = hist.count_between(0, upper_ns / self.unit - 1);
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

/// `ns` in whole `unit`s and what is left over. The two units a histogram uses get constant
/// divisors: a division by the field itself cost a `div` instruction per sample, as much as
/// the histogram's own work.
fn in_units(ns: u64, unit: u64) -> (u64, u64) {
    match unit {
        1 => (ns, 0),
        1000 => (ns / 1000, ns % 1000),
        u => (ns / u, ns % u),
    }
}

fn new_histogram() -> Histogram<u32> {
    Histogram::new(3).expect("3 significant digits is valid")
}

/// A histogram of `values`, one sample each.
fn histogram_of(values: &[u64]) -> Histogram<u32> {
    let mut h = new_histogram();
    add_each(&mut h, values);
    h
}

/// Adds one sample of each of `values`.
fn add_each(h: &mut Histogram<u32>, values: &[u64]) {
    values.iter().for_each(|&v| add(h, v, 1));
}

/// Adds `n` samples of `v` units. `record_n` grows the histogram to fit; it can only fail on a
/// bucket overflow (4 billion equal samples), where saturating is the honest fallback.
fn add(h: &mut Histogram<u32>, v: u64, n: u64) {
    if h.record_n(v, n as u32).is_err() {
        h.saturating_record_n(v, n as u32);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_and_what_is_left_over() {
        assert_eq!(in_units(1_234_567, 1000), (1234, 567));
        assert_eq!(in_units(1_234_567, 1), (1_234_567, 0));
        assert_eq!(in_units(10, 3), (3, 1));
    }

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

    /// The kept percentiles are dropped by each new sample and each merge: asked before and
    /// after, they follow the samples.
    #[test]
    fn kept_percentiles_follow_new_samples_and_merges() {
        let mut h = LatencyHistogram::of_us(&[10, 20, 30]);
        assert_eq!(h.figures().p50_us, Some(20.0));
        assert_eq!(h.percentile_ns(99.0), 30_000);
        h.record(40_000, 0);
        h.record(50_000, 0);
        assert_eq!(h.figures().p50_us, Some(30.0));
        assert_eq!(h.percentile_ns(99.9), 50_000);
        h.merge(&LatencyHistogram::of_us(&[60, 70, 80, 90, 100]));
        assert_eq!(h.percentile_ns(50.0), 50_000);
        assert_eq!(h.figures().p99_us, Some(100.0));
        assert_eq!(h.percentile_ns(70.0), 70_000);
    }

    #[test]
    fn whole_microseconds_are_exact_and_finer_samples_switch_units() {
        let mut h = LatencyHistogram::default();
        for us in [311, 312, 313, 1999] {
            h.record(us * 1000, 0);
        }
        assert_eq!(h.percentile_ns(50.0), 312_000);
        assert_eq!(h.percentile_ns(75.0), 313_000);
        h.record(1_500, 0);
        assert_eq!(h.unit, 1);
        assert_eq!(h.percentile_ns(20.0), 1_500);
        let p = h.percentile_ns(60.0) as f64;
        assert!((p - 312_000.0).abs() / 312_000.0 < 0.001, "{p}");
        assert_eq!(h.percentile_ns(100.0), 1_999_000);
        assert_eq!(h.count(), 5);
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

    /// Whole microseconds get one-microsecond buckets: a query over them is exact.
    #[test]
    fn buckets_hold_every_sample() {
        let mut h = LatencyHistogram::default();
        for us in [3, 3, 7, 5000] {
            h.record(us * 1000, 0);
        }
        let b = h.buckets();
        assert_eq!(
            b[..2],
            [
                Bucket {
                    lower_ns: 3000,
                    upper_ns: 4000,
                    count: 2
                },
                Bucket {
                    lower_ns: 7000,
                    upper_ns: 8000,
                    count: 1
                },
            ]
        );
        // Above 2048 units HDR's buckets widen; 5000 us still falls in the last one.
        assert!(
            b[2].lower_ns <= 5_000_000 && 5_000_000 < b[2].upper_ns,
            "{b:?}"
        );
        assert_eq!(b.iter().map(|b| b.count).sum::<u64>(), 4);
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

    /// Every reading of a histogram: what a report can print of it.
    fn readings(h: &LatencyHistogram) -> (Vec<u64>, Vec<Bucket>, Vec<(u64, u64)>) {
        let qs = [0.0, 1.0, 25.0, 50.0, 63.0, 90.0, 99.0, 99.9, 100.0];
        let pcts = qs.iter().map(|&q| h.percentile_ns(q)).collect();
        (pcts, h.buckets(), h.log2_buckets_us())
    }

    /// The same histogram with its samples moved into buckets: how every histogram was read
    /// before samples were kept as they are.
    fn in_buckets(h: &LatencyHistogram) -> LatencyHistogram {
        let mut b = h.clone();
        b.grown();
        b.reported.take();
        assert!(b.few.is_empty() && b.hist.is_some());
        b
    }

    /// Samples of a few ns to seconds, whole microseconds for `whole_us`.
    fn samples(seed: &mut u64, n: usize, whole_us: bool) -> Vec<u64> {
        (0..n)
            .map(|_| {
                *seed ^= *seed << 13;
                *seed ^= *seed >> 7;
                *seed ^= *seed << 17;
                let ns = (*seed >> 20) % (1 << (*seed % 31 + 3)).max(1);
                if whole_us {
                    ns / 1000 * 1000
                } else {
                    ns
                }
            })
            .collect()
    }

    /// Samples kept as they are read exactly as buckets do: every percentile, bucket and
    /// power-of-two count, in microseconds and nanoseconds, across the switch between them,
    /// and after every kind of merge (kept with kept, past the bound, with a grown histogram).
    #[test]
    fn kept_samples_read_as_buckets_do() {
        let mut seed = 0x9e37_79b9_7f4a_7c15;
        for n in [1, 2, 3, 7, FEW - 1, FEW] {
            for (whole_us, finer_last) in [(true, false), (false, false), (true, true)] {
                let mut h = LatencyHistogram::default();
                for ns in samples(&mut seed, n, whole_us) {
                    h.record(ns, 0);
                }
                if finer_last {
                    h.record(1_500, 0);
                }
                assert!(h.hist.is_none() || n == FEW && finer_last);
                assert_eq!(readings(&h), readings(&in_buckets(&h)), "n {n}");
                for m in [1, FEW / 2, FEW + 3] {
                    for theirs_whole_us in [true, false] {
                        let mut other = LatencyHistogram::default();
                        for ns in samples(&mut seed, m, theirs_whole_us) {
                            other.record(ns, 0);
                        }
                        let mut kept = h.clone();
                        kept.merge(&other);
                        let mut bucketed = in_buckets(&h);
                        bucketed.merge(&other);
                        assert_eq!(kept.count(), (n + m + usize::from(finer_last)) as u64);
                        assert_eq!(readings(&kept), readings(&bucketed), "n {n} m {m}");
                    }
                }
            }
        }
    }
}
