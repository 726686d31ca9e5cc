//! One execution of a work item, and the bounded list of the worst ones.

use crate::event::Timestamp;
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

/// The `n` occurrences with the largest key, worst first; equal keys by start time, then pid,
/// so the list does not depend on the order occurrences complete in.
#[derive(Debug)]
pub struct Worst {
    n: usize,
    items: Vec<(u64, Occurrence)>,
}

impl Worst {
    pub fn new(n: usize) -> Worst {
        Worst {
            n,
            items: Vec::with_capacity(n + 1),
        }
    }

    pub fn offer(&mut self, key: u64, occ: Occurrence) {
        let rank = |(k, o): &(u64, Occurrence)| (Reverse(*k), o.start_ts, o.pid);
        let at = self
            .items
            .partition_point(|item| rank(item) < rank(&(key, occ)));
        if at < self.n {
            self.items.insert(at, (key, occ));
            self.items.truncate(self.n);
        }
    }

    pub fn iter(&self) -> impl Iterator<Item = &Occurrence> {
        self.items.iter().map(|(_, o)| o)
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
