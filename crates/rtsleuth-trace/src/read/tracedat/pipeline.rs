//! Reading in three stages: one thread merges the CPUs' records into batches, workers decode
//! batches into events, and the calling thread hands the events to the analysis in batch
//! order. The analysis is the one step that must run in order; everything else overlaps with
//! it. Channels between the stages are bounded, so a few batches are in flight at most.

use super::batch::{self, Batch, Decoded, UNNAMED};
use super::bytes::Fault;
use super::comms::LearntComms;
use super::decode::Planner;
use super::merge::Merger;
use super::Metadata;
use crate::read::spawn::spawn_with;
use crate::read::{EventSink, Record, TraceInfo};
use std::collections::BTreeMap;
use std::sync::mpsc::{sync_channel, Receiver};
use std::sync::{Arc, Mutex};
use std::thread::{Builder, Scope};

/// How many threads decode: all but the one the analysis runs on, at least one, and no more
/// than a few (the analysis, not decoding, is the limit beyond that).
pub fn workers() -> usize {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    cores.saturating_sub(1).clamp(1, 4)
}

/// Reads every record of `merger` into `sink` with `workers` decoding threads (0: decode on
/// this thread), and returns the pages and chunks that were skipped as damaged.
pub fn run<'scope, 'm: 'scope>(
    scope: &'scope Scope<'scope, '_>,
    meta: &'m Metadata<'m>,
    merger: Merger<'m>,
    workers: usize,
    info: &mut TraceInfo,
    sink: &mut (dyn EventSink + Send),
) -> Vec<Fault> {
    let mut reader = InOrder {
        comms: LearntComms::default(),
        planner: Planner::new(meta, sink.decode()),
    };
    let faults = match workers {
        0 => reader.inline(meta, merger, info, sink),
        n => reader.threaded(scope, meta, merger, n, info, sink),
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

    /// The three stages on their threads. A thread that cannot be started (a process at its
    /// thread limit) leaves the work to the ones that could, down to reading in line.
    fn threaded<'scope>(
        &mut self,
        scope: &'scope Scope<'scope, '_>,
        meta: &'m Metadata<'m>,
        merger: Merger<'m>,
        workers: usize,
        info: &mut TraceInfo,
        sink: &mut (dyn EventSink + Send),
    ) -> Vec<Fault>
    where
        'm: 'scope,
    {
        let (to_decode, batches) = sync_channel::<(u64, Batch<'m>)>(workers * 2);
        let batches = Arc::new(Mutex::new(batches));
        let (done, decoded) = sync_channel::<(u64, Decoded<'m>)>(workers * 2);
        let decode = sink.decode();
        let decoding: Vec<_> = (0..workers)
            .map_while(|_| {
                let (batches, done) = (Arc::clone(&batches), done.clone());
                let work = move || decode_batches(Planner::new(meta, decode), &batches, &done);
                Builder::new().spawn_scoped(scope, work).ok()
            })
            .collect();
        drop(done);
        if decoding.is_empty() {
            return self.inline(meta, merger, info, sink);
        }
        let (spent, recycled) = sync_channel::<Batch<'m>>(workers * 4);
        let merge = move |mut merger: Merger<'m>| {
            for seq in 0.. {
                let mut b = recycled.try_recv().unwrap_or_else(|_| Batch::new(meta));
                // A closed channel means the reader stopped early.
                if !merger.fill(&mut b) || to_decode.send((seq, b)).is_err() {
                    break;
                }
            }
            merger.faults()
        };
        let merging = match spawn_with(scope, merger, merge) {
            Ok(m) => m,
            // Dropping the channels ends the workers.
            Err(merger) => return self.inline(meta, merger, info, sink),
        };
        let recycle = |d: Decoded<'m>| {
            let mut b = d.into_owner();
            b.clear(); // lets go of its chunks now
            let _ = spent.try_send(b);
        };
        self.in_order(&decoded, recycle, info, sink);
        drop(decoded);
        for worker in decoding {
            self.planner.absorb_counts(join(worker));
        }
        join(merging)
    }

    /// Takes the decoded batches as workers finish them and hands them on in order.
    fn in_order(
        &mut self,
        decoded: &Receiver<(u64, Decoded<'m>)>,
        mut recycle: impl FnMut(Decoded<'m>),
        info: &mut TraceInfo,
        sink: &mut (dyn EventSink + Send),
    ) {
        let mut waiting = BTreeMap::new();
        let mut next = 0;
        while let Ok((seq, d)) = decoded.recv() {
            waiting.insert(seq, d);
            while let Some(d) = waiting.remove(&next) {
                self.hand_on(&d, info, sink);
                recycle(d);
                next += 1;
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
        count(&events.records, info);
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

/// Counts a batch's events and losses into the trace's info.
fn count(records: &[Record<'_>], info: &mut TraceInfo) {
    for record in records {
        match record {
            Record::Event(ev) => info.saw_record(ev.ts, ev.cpu),
            Record::Lost { count, .. } => {
                info.lost_events += count.unwrap_or(0);
                info.lines.lost_markers += 1;
            }
            Record::HistoryBegins { .. } => {}
        }
    }
}

/// A worker: decodes batches until there are no more, and returns its counts.
fn decode_batches<'m>(
    mut planner: Planner<'m>,
    batches: &Mutex<Receiver<(u64, Batch<'m>)>>,
    done: &std::sync::mpsc::SyncSender<(u64, Decoded<'m>)>,
) -> Planner<'m> {
    loop {
        // The lock is held only to take the next batch, not while decoding it.
        let next = batches
            .lock()
            .map_err(drop)
            .and_then(|b| b.recv().map_err(drop));
        let Ok((seq, b)) = next else {
            return planner;
        };
        if done.send((seq, batch::decode(b, &mut planner))).is_err() {
            return planner;
        }
    }
}

/// A thread's result; its panic goes on up.
fn join<T>(handle: std::thread::ScopedJoinHandle<'_, T>) -> T {
    handle
        .join()
        .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
}
