//! Distributions of a set, one per key matched across traces (a task, an interrupt source, a
//! work function): each trace's histogram is merged in, so the set's percentiles are those of
//! all the samples together, never an average of the traces' percentiles.

use crate::latency::LatencyHistogram;
use std::collections::{BTreeMap, BTreeSet};

/// One key's distribution over the set.
#[derive(Debug, Default)]
pub struct Merged {
    pub hist: LatencyHistogram,
    /// How many traces had samples of it.
    pub traces: u64,
    /// The trace of its largest sample.
    pub max_trace: String,
}

#[derive(Debug)]
pub struct MergedHistograms<K> {
    entries: BTreeMap<K, Merged>,
}

impl<K> Default for MergedHistograms<K> {
    fn default() -> Self {
        MergedHistograms {
            entries: BTreeMap::new(),
        }
    }
}

impl<K: Ord + Clone> MergedHistograms<K> {
    /// Adds the distributions of one trace; a key met several times in it (a task's pids)
    /// counts that trace once. Empty distributions add nothing.
    pub fn add_trace<'h>(
        &mut self,
        path: &str,
        parts: impl IntoIterator<Item = (K, &'h LatencyHistogram)>,
    ) {
        let mut seen = BTreeSet::new();
        for (key, h) in parts.into_iter().filter(|(_, h)| h.count() > 0) {
            let m = self.entries.entry(key.clone()).or_default();
            if m.hist.count() == 0 || h.max_ns() > m.hist.max_ns() {
                m.max_trace = path.to_string();
            }
            m.hist.merge(h);
            if seen.insert(key) {
                m.traces += 1;
            }
        }
    }

    pub fn get(&self, key: &K) -> Option<&Merged> {
        self.entries.get(key)
    }

    /// Every key, the largest sample first (ties in key order).
    pub fn worst_first(&self) -> Vec<(&K, &Merged)> {
        let mut rows: Vec<_> = self.entries.iter().collect();
        rows.sort_by(|a, b| b.1.hist.max_ns().cmp(&a.1.hist.max_ns()).then(a.0.cmp(b.0)));
        rows
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn traces_counted_once_per_key_and_the_worst_trace_kept() {
        let mut m = MergedHistograms::default();
        let (a, b, none) = (
            LatencyHistogram::of_us(&[1, 2]),
            LatencyHistogram::of_us(&[30]),
            LatencyHistogram::of_us(&[]),
        );
        m.add_trace("t1", [("x", &a), ("x", &a), ("y", &none)]);
        m.add_trace("t2", [("x", &b), ("z", &a)]);
        let x = m.get(&"x").unwrap();
        assert_eq!(
            (x.hist.count(), x.traces, x.max_trace.as_str()),
            (5, 2, "t2")
        );
        assert!(m.get(&"y").is_none());
        let order: Vec<&str> = m.worst_first().into_iter().map(|(k, _)| *k).collect();
        assert_eq!(order, ["x", "z"]);
    }
}
