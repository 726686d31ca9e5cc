//! The N longest gaps of a CPU, in memory bounded by N however many gaps a run finds.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Keeps the `n` greatest values pushed. Space for them is taken up front, so a push from the
/// spinning loop never allocates (an allocation there could itself be a gap).
#[derive(Debug)]
pub struct Worst<T: Ord> {
    n: usize,
    heap: BinaryHeap<Reverse<T>>,
}

impl<T: Ord> Worst<T> {
    pub fn new(n: usize) -> Worst<T> {
        Worst {
            n,
            heap: BinaryHeap::with_capacity(n + 1),
        }
    }

    pub fn push(&mut self, value: T) {
        if self.heap.len() < self.n {
            self.heap.push(Reverse(value));
        } else if self
            .heap
            .peek()
            .is_some_and(|Reverse(least)| value > *least)
        {
            self.heap.pop();
            self.heap.push(Reverse(value));
        }
    }

    /// The kept values, greatest first.
    pub fn into_sorted(self) -> Vec<T> {
        // Ascending order of Reverse(T) is descending order of T.
        self.heap
            .into_sorted_vec()
            .into_iter()
            .map(|r| r.0)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::Worst;

    #[test]
    fn keeps_the_greatest_n_greatest_first() {
        let mut w = Worst::new(3);
        for v in [5, 1, 9, 7, 3, 9, 2] {
            w.push(v);
        }
        assert_eq!(w.into_sorted(), vec![9, 9, 7]);
        let mut few = Worst::new(4);
        few.push(2);
        few.push(8);
        assert_eq!(few.into_sorted(), vec![8, 2]);
    }
}
