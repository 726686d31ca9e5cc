//! One execution of a work item, and the bounded list of the worst ones.

use rtsleuth_trace::event::Timestamp;
use std::cmp::Reverse;

/// What is known of one execution. Functions and workqueues are indexes into the analysis'
/// name tables, so keeping an occurrence allocates nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Occurrence {
    pub work: u64,
    pub function: usize,
    /// From its `workqueue_queue_work`; `None` when the trace has none for this execution.
    pub workqueue: Option<usize>,
    /// The kworker that ran it.
    pub pid: i32,
    pub cpu: u32,
    pub queue_ts: Option<Timestamp>,
    pub activate_ts: Option<Timestamp>,
    pub start_ts: Timestamp,
    pub end_ts: Option<Timestamp>,
    /// Real-time tasks' run time on its CPU between queue and start (bound works only).
    pub rt_wait_ns: Option<u64>,
    /// The last real-time task switched in on its CPU before the start, when `rt_wait_ns > 0`.
    pub rt_culprit: Option<(i32, i32)>,
}

impl Occurrence {
    /// Queue -> execute_start.
    pub fn wait_ns(&self) -> Option<u64> {
        self.queue_ts.map(|q| self.start_ts.saturating_sub(q))
    }

    /// execute_start -> execute_end.
    pub fn exec_ns(&self) -> Option<u64> {
        self.end_ts.map(|e| e.saturating_sub(self.start_ts))
    }
}

/// The `n` executions with the largest key, worst first; equal keys by start time, then pid,
/// so the list does not depend on the order executions complete in. Each keeps a `T`: the
/// occurrence itself, or what is known of it ([`Worst::offer_with`] makes it only when it
/// is kept).
#[derive(Debug)]
pub struct Worst<T = Occurrence> {
    n: usize,
    /// (rank, kept): the rank is (key, start, pid).
    items: Vec<((u64, Timestamp, i32), T)>,
}

impl<T> Worst<T> {
    pub fn new(n: usize) -> Worst<T> {
        Worst {
            n,
            items: Vec::with_capacity(n + 1),
        }
    }

    /// Keeps what `make` gives for the execution of `pid` started at `start`, when `key`
    /// ranks it among the `n` worst.
    pub fn offer_with(
        &mut self,
        (key, start, pid): (u64, Timestamp, i32),
        make: impl FnOnce() -> T,
    ) {
        let rank = |k: u64, s: Timestamp, p: i32| (Reverse(k), s, p);
        let at =
            (self.items).partition_point(|((k, s, p), _)| rank(*k, *s, *p) < rank(key, start, pid));
        if at < self.n {
            self.items.insert(at, ((key, start, pid), make()));
            self.items.truncate(self.n);
        }
    }

    /// What is kept for the execution of `pid` started at `start`.
    pub fn get(&self, pid: i32, start: Timestamp) -> Option<&T> {
        (self.items.iter())
            .find(|((_, s, p), _)| *s == start && *p == pid)
            .map(|(_, t)| t)
    }

    pub fn iter(&self) -> impl Iterator<Item = &T> {
        self.items.iter().map(|(_, t)| t)
    }
}

impl Worst<Occurrence> {
    pub fn offer(&mut self, key: u64, occ: Occurrence) {
        self.offer_with((key, occ.start_ts, occ.pid), || occ);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn occ(start_ts: u64, pid: i32) -> Occurrence {
        Occurrence {
            work: 1,
            function: 0,
            workqueue: None,
            pid,
            cpu: 0,
            queue_ts: None,
            activate_ts: None,
            start_ts,
            end_ts: None,
            rt_wait_ns: None,
            rt_culprit: None,
        }
    }

    #[test]
    fn keeps_the_largest_in_a_stable_order() {
        let mut w = Worst::new(3);
        for (key, start, pid) in [
            (5, 10, 1),
            (9, 20, 1),
            (5, 5, 2),
            (1, 1, 1),
            (9, 15, 3),
            (7, 30, 1),
        ] {
            w.offer(key, occ(start, pid));
        }
        let got: Vec<_> = w.iter().map(|o| (o.start_ts, o.pid)).collect();
        assert_eq!(got, vec![(15, 3), (20, 1), (30, 1)]);
        let mut none = Worst::new(0);
        none.offer(1, occ(1, 1));
        assert_eq!(none.iter().count(), 0);
    }
}
