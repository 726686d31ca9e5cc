//! The latency metrics a diff compares and a gate names, and how much a percentile can be trusted.

use super::run::Stats;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Metric {
    Count,
    Avg,
    P50,
    P99,
    P999,
    Max,
}

/// Below this many samples above a percentile it is "weak": a p99.9 of 500 wake-ups is their
/// maximum, and one outlier more or less moves it anywhere. Ten samples beyond it means a p99
/// needs 1000 wake-ups and a p99.9 10 000.
pub const MIN_TAIL: u64 = 10;

impl Metric {
    pub const ALL: [Metric; 6] = [
        Metric::Count,
        Metric::Avg,
        Metric::P50,
        Metric::P99,
        Metric::P999,
        Metric::Max,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Metric::Count => "count",
            Metric::Avg => "avg",
            Metric::P50 => "p50",
            Metric::P99 => "p99",
            Metric::P999 => "p99.9",
            Metric::Max => "max",
        }
    }

    pub fn parse(s: &str) -> Option<Metric> {
        Metric::ALL.into_iter().find(|m| m.name() == s)
    }

    /// Microseconds, or a number of wake-ups for `count`.
    pub fn is_count(self) -> bool {
        self == Metric::Count
    }

    pub fn of(self, s: &Stats) -> f64 {
        match self {
            Metric::Count => s.count as f64,
            Metric::Avg => s.avg_us,
            Metric::P50 => s.p50_us,
            Metric::P99 => s.p99_us,
            Metric::P999 => s.p999_us,
            Metric::Max => s.max_us,
        }
    }

    /// The percentile in thousandths, for the percentiles.
    fn permille(self) -> Option<u64> {
        match self {
            Metric::P50 => Some(500),
            Metric::P99 => Some(990),
            Metric::P999 => Some(999),
            _ => None,
        }
    }

    /// How many of `count` samples lie above this percentile: `count` minus its nearest rank
    /// `ceil(q * count)`, as `latency` and `measure` compute it.
    pub fn tail_samples(self, count: u64) -> Option<u64> {
        let q = self.permille()?;
        let rank = (count * q).div_ceil(1000).clamp(1, count.max(1));
        Some(count.saturating_sub(rank))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_above_a_percentile() {
        assert_eq!(Metric::P99.tail_samples(1000), Some(10));
        assert_eq!(Metric::P99.tail_samples(3992), Some(39));
        assert_eq!(Metric::P999.tail_samples(3992), Some(3));
        assert_eq!(Metric::P999.tail_samples(10_000), Some(10));
        assert_eq!(Metric::P50.tail_samples(1), Some(0));
        assert_eq!(Metric::P50.tail_samples(0), Some(0));
        assert_eq!(Metric::Max.tail_samples(100), None);
        assert_eq!(Metric::parse("p99.9"), Some(Metric::P999));
        assert_eq!(Metric::parse("p999"), None);
    }
}
