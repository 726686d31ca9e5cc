//! A batch: a few thousand records of the merged trace, in time order, with the buffers their
//! bytes are in. Batches are decoded into events on worker threads while the analysis takes
//! the events of earlier ones, so decoding no longer shares the analysis's thread.

use super::cpu_stream::Buf;
use super::decode::{Planner, Prepared};
use super::Metadata;
use crate::event::Event;
use crate::read::seen::Seen;
use crate::read::Record;
use self_cell::self_cell;
use std::ops::Range;

/// Records per batch: enough that handing a batch between threads costs nothing per event,
/// few enough that the batches in flight stay a few megabytes.
pub const BATCH_RECORDS: usize = 4096;

/// One record of the merged order: 32 bytes, as the merging thread writes a few million of
/// them a second.
#[derive(Clone, Copy)]
pub enum Raw {
    Event {
        /// Already converted to the trace clock's nanoseconds (or counts).
        ts: u64,
        cpu: u32,
        /// Index into [`Batch::bufs`], and where the record's bytes are in that page.
        buf: u32,
        start: u32,
        len: u32,
    },
    /// The ring buffer lost events on `cpu` before the next record of that CPU.
    Lost { cpu: u32, count: Option<u64> },
}

/// The records of one batch and everything their events will borrow.
pub struct Batch<'m> {
    meta: &'m Metadata<'m>,
    pub bufs: Vec<Buf<'m>>,
    pub raws: Vec<Raw>,
    /// Filled in by the worker, one per raw record: what [`Planner::prepare`] made of it
    /// (`None`: not an event it could decode) and its printed payload in `text`.
    prepared: Vec<(Option<Prepared>, Range<usize>)>,
    /// The payload texts the worker printed.
    text: String,
}

impl<'m> Batch<'m> {
    pub fn new(meta: &'m Metadata<'m>) -> Batch<'m> {
        Batch {
            meta,
            bufs: Vec::new(),
            raws: Vec::with_capacity(BATCH_RECORDS + 16),
            prepared: Vec::new(),
            text: String::new(),
        }
    }

    /// Empties the batch for the next records, keeping its allocations.
    pub fn clear(&mut self) {
        self.bufs.clear();
        self.raws.clear();
        self.prepared.clear();
        self.text.clear();
    }

    /// The bytes of a record.
    fn data(&self, buf: u32, start: u32, len: u32) -> &[u8] {
        let (start, len) = (start as usize, len as usize);
        &self.bufs[buf as usize][start..start + len]
    }
}

/// The events of a batch, in its order.
pub struct Events<'a> {
    pub records: Vec<Record<'a>>,
    /// Indices (in `records`) of the events whose task `saved_cmdlines` does not name: their
    /// names come from the switches before them, which only the in-order reader has seen.
    pub unnamed: Vec<u32>,
    /// Switches to tasks `saved_cmdlines` does not name: index, and the name and pid of the
    /// task switched in.
    pub learnt: Vec<(u32, &'a str, i32)>,
    /// The records' times, CPUs and losses, for [`crate::read::TraceInfo`].
    pub seen: Seen,
}

self_cell!(
    /// A batch and its events, which borrow its buffers and text.
    pub struct Decoded<'m> {
        owner: Batch<'m>,
        #[covariant]
        dependent: Events,
    }
);

/// Prints the payload text each record needs, then types every event: the work a worker
/// thread does for the reader.
pub fn decode<'m>(mut batch: Batch<'m>, planner: &mut Planner<'m>) -> Decoded<'m> {
    let mut prepared = std::mem::take(&mut batch.prepared);
    prepared.clear();
    for raw in &batch.raws {
        let from = batch.text.len();
        let p = match *raw {
            Raw::Event {
                buf, start, len, ..
            } => {
                let (start, len) = (start as usize, len as usize);
                let data = &batch.bufs[buf as usize][start..start + len];
                planner.prepare(data, &mut batch.text)
            }
            Raw::Lost { .. } => None,
        };
        prepared.push((p, from..batch.text.len()));
    }
    batch.prepared = prepared;
    let planner = &*planner;
    Decoded::new(batch, |b| events(b, planner))
}

/// The events of a prepared batch.
fn events<'a, 'm: 'a>(b: &'a Batch<'m>, planner: &Planner<'m>) -> Events<'a> {
    let mut out = Events {
        records: Vec::with_capacity(b.raws.len()),
        unnamed: Vec::new(),
        learnt: Vec::new(),
        seen: Seen::default(),
    };
    for (raw, (prepared, text)) in b.raws.iter().zip(&b.prepared) {
        let (ts, cpu, prepared, bytes, text) = match (*raw, prepared) {
            (Raw::Lost { cpu, count }, _) => {
                out.seen.lost(count);
                out.records.push(Record::Lost {
                    cpu: Some(cpu),
                    count,
                });
                continue;
            }
            (Raw::Event { .. }, None) => continue,
            (
                Raw::Event {
                    ts,
                    cpu,
                    buf,
                    start,
                    len,
                },
                Some(p),
            ) => (ts, cpu, *p, b.data(buf, start, len), &b.text[text.clone()]),
        };
        let Some(d) = planner.untyped(prepared, bytes, text) else {
            continue;
        };
        let (index, name) = (out.records.len() as u32, d.name);
        let cmdlines = &b.meta.cmdlines;
        if let Some((next, pid)) =
            planner.switched_in(prepared, bytes, |pid| cmdlines.get(pid).is_none())
        {
            out.learnt.push((index, next, pid));
        }
        let comm = match d.pid {
            0 => "<idle>",
            pid => cmdlines.get(pid).unwrap_or_else(|| {
                out.unnamed.push(index);
                UNNAMED
            }),
        };
        out.seen.event(ts, cpu);
        out.records.push(Record::Event(Event {
            ts,
            cpu,
            pid: d.pid,
            comm,
            tgid: None,
            flags: d.flags,
            name: d.name,
            payload: d.payload,
            kind: d.kind,
        }));
        // Typed in place, in the event the analysis will read.
        if let Some(Record::Event(ev)) = out.records.last_mut() {
            planner.type_into(prepared, name, bytes, text, &mut ev.kind);
        }
    }
    out
}

/// What trace-cmd prints for a task it has no name for.
pub const UNNAMED: &str = "<...>";
