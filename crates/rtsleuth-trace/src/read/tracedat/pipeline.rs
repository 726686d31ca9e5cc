//! Reading in three stages: one thread merges the CPUs' records into batches, whichever thread
//! is free decodes batches into events, and the calling thread hands the events to the
//! analysis in batch order. The analysis is the one step that must run in order; everything
//! else overlaps with it. A few batches are in flight at most ([`Threads::in_flight`]).

use super::batch::{self, Batch, Decoded, UNNAMED};
use super::board::{Board, StopOnPanic, Work};
use super::bytes::Fault;
use super::comms::LearntComms;
use super::decode::Planner;
use super::merge::Merger;
use super::Metadata;
use crate::read::spawn::spawn_with;
use crate::read::{EventSink, Record, TraceInfo};
use std::sync::Arc;
use std::thread::{Builder, Scope};

/// How a read shares out its work: `workers` threads besides the calling one (0: all on the
/// calling thread), and at most `in_flight` batches between the merge and the analysis.
#[derive(Debug, Clone, Copy)]
pub struct Threads {
    pub workers: usize,
    pub in_flight: usize,
}

impl Threads {
    /// All cores but the analysis's, at least one thread and no more than a few (beyond that
    /// the analysis, not decoding, is the limit).
    pub fn for_this_machine() -> Threads {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        Threads::with(cores.saturating_sub(1).clamp(1, 4))
    }

    /// `workers` threads, with four batches in flight for each thread (fewer made the VM's
    /// two cores wait for each other: 61 -> 64 ms for `latency` on a 1.2 M-event file).
    pub const fn with(workers: usize) -> Threads {
        Threads {
            workers,
            in_flight: 4 * workers + 4,
        }
    }
}

/// Reads every record of `merger` into `sink` on `threads`, and returns the pages and chunks
/// that were skipped as damaged.
pub fn run<'scope, 'm: 'scope>(
    scope: &'scope Scope<'scope, '_>,
    meta: &'m Metadata<'m>,
    merger: Merger<'m>,
    threads: Threads,
    info: &mut TraceInfo,
    sink: &mut (dyn EventSink + Send),
) -> Vec<Fault> {
    let mut reader = InOrder {
        comms: LearntComms::default(),
        planner: Planner::new(meta, sink.decode()),
    };
    let faults = match threads.workers {
        0 => reader.inline(meta, merger, info, sink),
        _ => reader.threaded(scope, meta, merger, threads, info, sink),
    };
    reader.planner.finish(&mut info.notes);
    faults
}

/// What the in-order stage keeps: the task names learnt so far, and the counts of records
/// that could not be decoded.
struct InOrder<'m> {
    comms: LearntComms,
    planner: Planner<'m>,
}

impl<'m> InOrder<'m> {
    fn inline(
        &mut self,
        meta: &'m Metadata<'m>,
        mut merger: Merger<'m>,
        info: &mut TraceInfo,
        sink: &mut (dyn EventSink + Send),
    ) -> Vec<Fault> {
        let mut spare = Batch::new(meta);
        while merger.fill(&mut spare) {
            let decoded = batch::decode(spare, &mut self.planner);
            self.hand_on(&decoded, info, sink);
            spare = decoded.into_owner();
        }
        merger.faults()
    }

    /// Merging on a thread of its own, decoding shared out ([`Board`]), the analysis on this
    /// thread. A thread that cannot be started (a process at its thread limit) leaves the work
    /// to the ones that could, down to reading in line.
    fn threaded<'scope>(
        &mut self,
        scope: &'scope Scope<'scope, '_>,
        meta: &'m Metadata<'m>,
        merger: Merger<'m>,
        threads: Threads,
        info: &mut TraceInfo,
        sink: &mut (dyn EventSink + Send),
    ) -> Vec<Fault>
    where
        'm: 'scope,
    {
        let board = Arc::new(Board::new(threads.in_flight));
        let decode = sink.decode();
        let merge = {
            let board = Arc::clone(&board);
            move |merger| merge_batches(meta, merger, Planner::new(meta, decode), &board)
        };
        let merging = match spawn_with(scope, merger, merge) {
            Ok(m) => m,
            Err(merger) => return self.inline(meta, merger, info, sink),
        };
        let decoding: Vec<_> = (1..threads.workers)
            .map_while(|_| {
                let board = Arc::clone(&board);
                let work = move || decode_batches(Planner::new(meta, decode), &board);
                Builder::new().spawn_scoped(scope, work).ok()
            })
            .collect();
        self.in_order(&board, info, sink);
        for worker in decoding {
            self.planner.absorb_counts(join(worker));
        }
        let (planner, faults) = join(merging);
        self.planner.absorb_counts(planner);
        faults
    }

    /// Hands the decoded batches on in order, decoding one whenever the next is not ready.
    fn in_order(
        &mut self,
        board: &Shared<'m>,
        info: &mut TraceInfo,
        sink: &mut (dyn EventSink + Send),
    ) {
        let _stop = StopOnPanic(board);
        loop {
            match board.in_order_work() {
                Work::HandOn(d) => {
                    self.hand_on(&d, info, sink);
                    let mut b = d.into_owner();
                    b.clear(); // lets go of its chunks now
                    board.recycle(b);
                }
                Work::Decode(seq, b) => board.decoded(seq, batch::decode(b, &mut self.planner)),
                Work::Merge(_) | Work::Stop => return,
            }
        }
    }

    /// Hands one batch's events to the sink, naming the tasks `saved_cmdlines` did not. A
    /// batch whose every task is named goes as one block, which a [`crate::read::Parallel`]
    /// pair of analyses takes on two threads.
    fn hand_on(
        &mut self,
        d: &Decoded<'m>,
        info: &mut TraceInfo,
        sink: &mut (dyn EventSink + Send),
    ) {
        let events = d.borrow_dependent();
        info.saw_records(&events.seen, &events.records);
        if events.unnamed.is_empty() {
            for &(_, name, pid) in &events.learnt {
                self.comms.learn(pid, name);
            }
            sink.records(&events.records);
            return;
        }
        let mut unnamed = events.unnamed.iter().copied().peekable();
        let mut learnt = events.learnt.iter().copied().peekable();
        for (i, record) in events.records.iter().enumerate() {
            let i = i as u32;
            while let Some((_, name, pid)) = learnt.next_if(|l| l.0 == i) {
                self.comms.learn(pid, name);
            }
            match record {
                Record::Event(ev) if unnamed.next_if_eq(&i).is_some() => {
                    let mut named = ev.clone();
                    named.comm = self.comms.get(ev.pid).unwrap_or(UNNAMED);
                    sink.event(&named);
                }
                r => sink.records(std::slice::from_ref(r)),
            }
        }
    }
}

/// The merging thread: merges the records into batches, and decodes batches too when enough
/// are waiting. Returns its decoding counts and the damaged pages it skipped.
fn merge_batches<'m>(
    meta: &'m Metadata<'m>,
    mut merger: Merger<'m>,
    mut planner: Planner<'m>,
    board: &Shared<'m>,
) -> (Planner<'m>, Vec<Fault>) {
    let _stop = StopOnPanic(board);
    loop {
        match board.merger_work() {
            Work::Merge(spare) => {
                let mut b = spare.unwrap_or_else(|| Batch::new(meta));
                let more = merger.fill(&mut b);
                board.add(more.then_some(b));
                if !more {
                    break;
                }
            }
            Work::Decode(seq, b) => board.decoded(seq, batch::decode(b, &mut planner)),
            Work::HandOn(_) | Work::Stop => break,
        }
    }
    // The last batches still want decoding.
    (decode_batches(planner, board), merger.faults())
}

/// A decoding thread: decodes batches until there are no more, and returns its counts.
fn decode_batches<'m>(mut planner: Planner<'m>, board: &Shared<'m>) -> Planner<'m> {
    let _stop = StopOnPanic(board);
    loop {
        match board.decoder_work() {
            Work::Decode(seq, b) => board.decoded(seq, batch::decode(b, &mut planner)),
            _ => return planner,
        }
    }
}

/// The board between the threads, with the reader's batches.
type Shared<'m> = Board<Batch<'m>, Decoded<'m>>;

/// A thread's result; its panic goes on up.
fn join<T>(handle: std::thread::ScopedJoinHandle<'_, T>) -> T {
    handle
        .join()
        .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
}
