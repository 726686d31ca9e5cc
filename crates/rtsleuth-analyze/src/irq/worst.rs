//! The worst few of a stream of measurements, in bounded memory: the report lists the longest
//! sections, and a distribution ([`crate::latency::LatencyHistogram`]) covers the rest.

#[derive(Debug, Clone)]
pub struct Worst<T> {
    keep: usize,
    /// Longest first; ties keep the earlier one first.
    items: Vec<(u64, T)>,
}

impl<T> Worst<T> {
    pub fn new(keep: usize) -> Worst<T> {
        Worst {
            keep,
            items: Vec::new(),
        }
    }

    /// Offers a measurement of `ns`; kept if it is among the `keep` longest so far.
    pub fn offer(&mut self, ns: u64, item: T) {
        let at = self.items.partition_point(|(n, _)| *n >= ns);
        if at < self.keep {
            self.items.insert(at, (ns, item));
            self.items.truncate(self.keep);
        }
    }

    pub fn iter(&self) -> impl Iterator<Item = &(u64, T)> {
        self.items.iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_longest_first() {
        let mut w = Worst::new(2);
        for (ns, tag) in [(5, 'a'), (9, 'b'), (5, 'c'), (7, 'd')] {
            w.offer(ns, tag);
        }
        let kept: Vec<_> = w.iter().copied().collect();
        assert_eq!(kept, [(9, 'b'), (7, 'd')]);
    }
}
