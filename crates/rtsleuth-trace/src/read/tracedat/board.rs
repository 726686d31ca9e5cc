//! Where the threads of a trace.dat read meet. The merging thread adds batches; whichever
//! thread is free decodes the oldest batch nobody has taken yet; the in-order thread takes the
//! decoded batches in order, and decodes one itself while the batch it needs is not ready.
//!
//! Sharing the decoding this way keeps both cores of a small machine busy with two threads.
//! With a thread per stage, the scheduler often put the merging thread and the in-order one on
//! the same core, and they took turns there while the decoding thread's core sat half idle.

use std::collections::{BTreeMap, VecDeque};
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};

/// Merged batches the merging thread keeps ready for other threads before it decodes one
/// itself.
const READY: usize = 2;

/// The shared state, behind one lock held only to move a batch in or out: `M` is a merged
/// batch, `D` a decoded one.
pub struct Board<M, D> {
    state: Mutex<State<M, D>>,
    changed: Condvar,
    /// Batches merged but not yet handed on (waiting, being decoded, or decoded): the bound on
    /// the memory in flight.
    limit: usize,
}

struct State<M, D> {
    merged: VecDeque<(u64, M)>,
    decoded: BTreeMap<u64, D>,
    spare: Vec<M>,
    /// The sequence number of the next batch merged, and of the next one handed on.
    added: u64,
    handed: u64,
    /// The merging thread has no more batches.
    merged_all: bool,
    /// A thread stopped early (a panic): the others stop too instead of waiting for it.
    stopped: bool,
    /// Threads waiting on the condition: a change wakes them only when there are any.
    sleepers: usize,
    /// Whether the merging thread merges more: it stops at the limit and starts again only
    /// once half the batches in flight have been handed on.
    refilling: bool,
}

impl<M, D> State<M, D> {
    /// Batches merged but not yet handed on.
    fn in_flight(&self) -> usize {
        (self.added - self.handed) as usize
    }
}

/// What a thread should do next.
pub enum Work<M, D> {
    /// Merge into a new batch, or into this emptied one, then [`Board::add`] it.
    Merge(Option<M>),
    /// Decode this batch, then [`Board::decoded`] it.
    Decode(u64, M),
    /// Hand this batch on, then [`Board::recycle`] its emptied batch (in-order thread only).
    HandOn(D),
    /// Nothing more to do.
    Stop,
}

impl<M, D> Board<M, D> {
    pub fn new(limit: usize) -> Board<M, D> {
        let state = State {
            merged: VecDeque::new(),
            decoded: BTreeMap::new(),
            spare: Vec::new(),
            added: 0,
            handed: 0,
            merged_all: false,
            stopped: false,
            sleepers: 0,
            refilling: true,
        };
        Board {
            state: Mutex::new(state),
            changed: Condvar::new(),
            limit: limit.max(READY + 1),
        }
    }

    /// The merging thread's next step: merge while it is refilling and fewer than [`READY`]
    /// batches are waiting, else decode the oldest waiting one.
    ///
    /// Refilling only from half the limit (not as soon as one batch is handed on) wakes the
    /// merging thread once for several batches: woken for each one, it kept taking the core
    /// of the analysis, and `report` on a 1.2 M-event file took 6 % longer than with a thread
    /// per stage (and 4 % less than that with this).
    pub fn merger_work(&self) -> Work<M, D> {
        self.wait_for(|s| {
            if s.in_flight() >= self.limit {
                s.refilling = false;
            } else if self.may_refill(s) {
                s.refilling = true;
            }
            if s.stopped {
                Some(Work::Stop)
            } else if s.refilling && s.merged.len() < READY {
                Some(Work::Merge(s.spare.pop()))
            } else {
                s.merged.pop_front().map(|(seq, b)| Work::Decode(seq, b))
            }
        })
    }

    /// A decoding thread's next step: the oldest waiting batch, until there are no more.
    pub fn decoder_work(&self) -> Work<M, D> {
        self.wait_for(|s| {
            if s.stopped {
                return Some(Work::Stop);
            }
            match s.merged.pop_front() {
                Some((seq, b)) => Some(Work::Decode(seq, b)),
                None => s.merged_all.then_some(Work::Stop),
            }
        })
    }

    /// The in-order thread's next step: the next batch in order once decoded, meanwhile the
    /// oldest waiting batch to decode; stop when every batch has been handed on.
    pub fn in_order_work(&self) -> Work<M, D> {
        self.wait_for(|s| {
            if s.stopped {
                return Some(Work::Stop);
            }
            if let Some(d) = s.decoded.remove(&s.handed) {
                return Some(Work::HandOn(d));
            }
            match s.merged.pop_front() {
                Some((seq, b)) => Some(Work::Decode(seq, b)),
                None => (s.merged_all && s.added == s.handed).then_some(Work::Stop),
            }
        })
    }

    /// A merged batch (`None`: the merger has no more).
    pub fn add(&self, batch: Option<M>) {
        self.change(|s| match batch {
            Some(b) => {
                s.merged.push_back((s.added, b));
                s.added += 1;
            }
            None => s.merged_all = true,
        });
    }

    pub fn decoded(&self, seq: u64, d: D) {
        self.change(|s| {
            s.decoded.insert(seq, d);
        });
    }

    /// The batch handed on last, emptied for the merger to fill again. Only the merging
    /// thread waits for this, and only until half the limit is reached.
    pub fn recycle(&self, b: M) {
        let mut s = self.lock();
        s.handed += 1;
        s.spare.push(b);
        if s.sleepers > 0 && self.may_refill(&s) {
            self.changed.notify_all();
        }
    }

    /// Whether few enough batches are in flight for the merging thread to start refilling:
    /// the one test behind both its decision and the wake-up that leads to it.
    fn may_refill(&self, s: &State<M, D>) -> bool {
        s.in_flight() <= self.limit / 2
    }

    /// Tells every thread to stop: the one calling it is unwinding.
    pub fn stop(&self) {
        self.change(|s| s.stopped = true);
    }

    fn lock(&self) -> MutexGuard<'_, State<M, D>> {
        // A thread that panicked holding the lock left the state whole (every change is one
        // step), and `stopped` says what happened.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn change(&self, f: impl FnOnce(&mut State<M, D>)) {
        let mut s = self.lock();
        f(&mut s);
        if s.sleepers > 0 {
            self.changed.notify_all();
        }
    }

    fn wait_for(&self, mut next: impl FnMut(&mut State<M, D>) -> Option<Work<M, D>>) -> Work<M, D> {
        let mut s = self.lock();
        loop {
            if let Some(work) = next(&mut s) {
                return work;
            }
            s.sleepers += 1;
            s = self.changed.wait(s).unwrap_or_else(PoisonError::into_inner);
            s.sleepers -= 1;
        }
    }
}

/// Stops the board's other threads when the thread holding it unwinds.
pub struct StopOnPanic<'b, M, D>(pub &'b Board<M, D>);

impl<M, D> Drop for StopOnPanic<'_, M, D> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.stop();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Board, StopOnPanic, Work};
    use crate::testing::finishes;
    use std::time::Duration;

    /// Batches are numbers, decoding doubles them; `fail_at` makes decoding that number panic.
    type Numbers = Board<u64, u64>;

    fn decode(n: u64, fail_at: Option<u64>) -> u64 {
        assert_ne!(Some(n), fail_at, "decoding failed");
        n * 2
    }

    fn merger(board: &Numbers, count: u64, fail_at: Option<u64>) {
        let _stop = StopOnPanic(board);
        let mut made = 0;
        loop {
            match board.merger_work() {
                Work::Merge(_) if made == count => {
                    board.add(None);
                    return decoder(board, fail_at);
                }
                Work::Merge(_) => {
                    board.add(Some(made));
                    made += 1;
                }
                Work::Decode(seq, n) => board.decoded(seq, decode(n, fail_at)),
                Work::HandOn(_) | Work::Stop => return,
            }
        }
    }

    fn decoder(board: &Numbers, fail_at: Option<u64>) {
        let _stop = StopOnPanic(board);
        while let Work::Decode(seq, n) = board.decoder_work() {
            board.decoded(seq, decode(n, fail_at));
        }
    }

    /// The in-order thread's loop: what it handed on, and the most batches ever in flight.
    fn in_order(board: &Numbers, fail_at: Option<u64>) -> (Vec<u64>, usize) {
        let _stop = StopOnPanic(board);
        let (mut out, mut most) = (Vec::new(), 0);
        loop {
            match board.in_order_work() {
                Work::HandOn(d) => {
                    let s = board.lock();
                    most = most.max(s.in_flight());
                    drop(s);
                    out.push(d);
                    board.recycle(d / 2);
                }
                Work::Decode(seq, n) => board.decoded(seq, decode(n, fail_at)),
                Work::Merge(_) | Work::Stop => return (out, most),
            }
        }
    }

    /// Runs the three kinds of thread over `count` batches; fails the test if they hang.
    fn run(count: u64, decoders: usize, fail_at: Option<u64>) -> std::thread::Result<Vec<u64>> {
        finishes(Duration::from_secs(60), move || {
            let board = Numbers::new(6);
            std::thread::scope(|scope| {
                scope.spawn(|| merger(&board, count, fail_at));
                for _ in 0..decoders {
                    scope.spawn(|| decoder(&board, fail_at));
                }
                let (out, most) = in_order(&board, fail_at);
                assert!(most <= 6, "{most} batches in flight");
                out
            })
        })
    }

    #[test]
    fn batches_are_handed_on_in_order_whoever_decodes_them() {
        for decoders in [0, 1, 3] {
            let out = run(500, decoders, None).expect("no panic");
            let doubled: Vec<u64> = (0..500).map(|n| n * 2).collect();
            assert_eq!(out, doubled, "{decoders} decoders");
        }
        assert_eq!(run(0, 1, None).expect("no panic"), Vec::<u64>::new());
    }

    /// A panic on any thread reaches the caller instead of leaving the others waiting.
    #[test]
    fn a_panic_anywhere_stops_every_thread() {
        for decoders in [0, 1, 3] {
            for fail_at in [0, 7, 499] {
                assert!(
                    run(500, decoders, Some(fail_at)).is_err(),
                    "{decoders} {fail_at}"
                );
            }
        }
    }
}
