//! A queue kept in blocks of a fixed size, for a CPU's past stretches: pushed at the back,
//! trimmed at the front, searched and walked in between.
//!
//! A ring that doubles copies everything it holds and faults in twice the memory each time it
//! grows; on a busy trace that was a fifth of `explain`'s time. Blocks never move: growing
//! adds one, and the block the front has used up is kept for the back to fill next.

use rtsleuth_trace::input::populate;
use std::collections::VecDeque;

/// Items per block: large enough that the block list stays short, small enough that the one
/// spare block and the partly used ones at both ends cost little.
const BLOCK: usize = 4096;

#[derive(Debug)]
pub struct BlockQueue<T> {
    /// Every block is full but the last; the live items start at `head` in the first.
    blocks: VecDeque<Vec<T>>,
    head: usize,
    len: usize,
    /// A block the front has used up, emptied, for the back's next block.
    spare: Option<Vec<T>>,
}

impl<T> Default for BlockQueue<T> {
    fn default() -> Self {
        BlockQueue {
            blocks: VecDeque::new(),
            head: 0,
            len: 0,
            spare: None,
        }
    }
}

/// An empty block. Past a queue's first, its memory is made present at once
/// ([`populate`]): on a busy trace shorter than the look-back (nothing trimmed, nothing reused)
/// a page fault per page as the blocks filled was a tenth of `explain`'s analysis thread. A
/// queue's first block is left to fill as it goes: on a quiet CPU it stays mostly empty.
fn new_block<T>(busy: bool) -> Vec<T> {
    let mut block = Vec::with_capacity(BLOCK);
    if busy {
        populate(block.spare_capacity_mut());
    }
    block
}

impl<T> BlockQueue<T> {
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn front(&self) -> Option<&T> {
        (self.len > 0).then(|| &self.blocks[0][self.head])
    }

    /// Pushes `item` and returns it where it now lies.
    pub fn push_back(&mut self, item: T) -> &mut T {
        if self.blocks.back().map_or(true, |b| b.len() == BLOCK) {
            let busy = !self.blocks.is_empty();
            let block = self.spare.take().unwrap_or_else(|| new_block(busy));
            self.blocks.push_back(block);
        }
        self.len += 1;
        let block = self.blocks.back_mut().expect("pushed above");
        block.push(item);
        block.last_mut().expect("pushed above")
    }

    pub fn pop_front(&mut self) {
        if self.len == 0 {
            return;
        }
        self.head += 1;
        self.len -= 1;
        // Used up: full and passed, or the last block and now empty.
        if self.head == self.blocks[0].len() {
            let mut block = self.blocks.pop_front().expect("len > 0");
            block.clear();
            self.spare = Some(block);
            self.head = 0;
        }
    }

    /// The item at the back: the last block's last (only the first block starts at `head`).
    pub fn back(&self) -> Option<&T> {
        if self.len == 0 {
            return None;
        }
        self.blocks.back().and_then(|b| b.last())
    }

    /// The item `i` places from the front.
    fn get(&self, i: usize) -> &T {
        let at = self.head + i;
        &self.blocks[at / BLOCK][at % BLOCK]
    }

    /// How many items from the front `pred` holds for, `pred` being true for a prefix. The
    /// search gallops from the back: the questions asked are about the recent past, and a
    /// bisection of a long history missed the cache at each of its twenty steps.
    pub fn partition_point(&self, pred: impl Fn(&T) -> bool) -> usize {
        // `pred` is false from `hi` on; widen the step back until it holds or the front is hit.
        let (mut lo, mut hi, mut step) = (0, self.len, 1);
        while hi > 0 {
            let probe = hi.saturating_sub(step);
            if pred(self.get(probe)) {
                lo = probe + 1;
                break;
            }
            hi = probe;
            step *= 2;
        }
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if pred(self.get(mid)) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo
    }

    /// The items from the `i`th from the front on, in order.
    pub fn iter_from(&self, i: usize) -> impl Iterator<Item = &T> + '_ {
        let at = self.head + i.min(self.len);
        let skip = at % BLOCK;
        self.blocks
            .range(at / BLOCK..)
            .enumerate()
            .flat_map(move |(k, b)| &b[if k == 0 { skip } else { 0 }..])
    }

    /// The items from the back to the front.
    pub fn iter_rev_mut(&mut self) -> impl Iterator<Item = &mut T> + '_ {
        let head = self.head;
        self.blocks
            .iter_mut()
            .enumerate()
            .rev()
            .flat_map(move |(k, b)| b[if k == 0 { head } else { 0 }..].iter_mut().rev())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Pushes, trims and searches across many blocks agree with a plain ring's.
    #[test]
    fn behaves_as_a_ring() {
        let mut h = BlockQueue::default();
        let mut ring = VecDeque::new();
        let mut next = 0u64;
        // Grow past several blocks, trim into the middle of one, and so on.
        for (push, pop) in [
            (10_000, 3),
            (5, 4_100),
            (9_000, 9_000),
            (1, 0),
            (4_096, 7_000),
            (0, 3_000),
            (1, 0),
        ] {
            for _ in 0..push {
                assert_eq!(*h.push_back(next), next);
                ring.push_back(next);
                next += 1;
            }
            for _ in 0..pop {
                h.pop_front();
                ring.pop_front();
            }
            assert_eq!(h.len(), ring.len());
            assert_eq!(h.front(), ring.front());
            assert_eq!(h.back(), ring.back());
            let near_the_back = next.saturating_sub(300)..=next + 1;
            for cut in [0, 1, next / 3, next / 2].into_iter().chain(near_the_back) {
                let i = h.partition_point(|&v| v < cut);
                assert_eq!(i, ring.partition_point(|&v| v < cut));
                assert!(h.iter_from(i).eq(ring.range(i..)), "from {i}");
            }
            assert!(h.iter_rev_mut().map(|v| *v).eq(ring.iter().rev().copied()));
        }
    }

    /// The block the front used up is the back's next one: no new memory in a steady state.
    #[test]
    fn reuses_the_block_the_front_used_up() {
        let mut h = BlockQueue::default();
        for v in 0..BLOCK {
            h.push_back(v);
        }
        let first = h.blocks[0].as_ptr();
        for v in 0..=BLOCK {
            h.pop_front();
            h.push_back(v);
        }
        assert_eq!(h.blocks.back().map(|b| b.as_ptr()), Some(first));
        assert_eq!((h.len(), h.blocks.len()), (BLOCK, 2));
    }
}
