//! The k-way merge of the CPUs' records into batches in time order (ties in CPU order).
//!
//! A CPU usually has a run of records before another CPU's next one, so the CPU at the top of
//! the heap keeps going until it passes the runner-up, without a heap operation per record.

use super::batch::{Batch, Raw, BATCH_RECORDS};
use super::bytes::Fault;
use super::cpu_stream::{CpuStream, Pending};
use super::options::Tsc2Nsec;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// How a record's raw timestamp becomes the trace clock's value as trace-cmd shows it: TSC
/// cycles converted when the file says how, then the file's fixed offset.
#[derive(Clone, Copy)]
pub struct Clock {
    pub tsc: Option<Tsc2Nsec>,
    pub offset: i64,
}

impl Clock {
    fn timestamp(self, raw: u64) -> u64 {
        let ts = self.tsc.map_or(raw, |t| t.to_ns(raw));
        ts.wrapping_add_signed(self.offset)
    }
}

pub struct Merger<'f> {
    streams: Vec<CpuStream<'f>>,
    clock: Clock,
    heap: BinaryHeap<Reverse<(u64, usize)>>,
    /// Each stream's next record, taken from it but not yet batched.
    heads: Vec<Option<Pending>>,
    /// Per stream: the generation of its page in the batch being filled, and its index there.
    held: Vec<Option<(u64, u32)>>,
}

impl<'f> Merger<'f> {
    pub fn new(mut streams: Vec<CpuStream<'f>>, clock: Clock) -> Merger<'f> {
        let mut heap = BinaryHeap::new();
        let heads: Vec<Option<Pending>> = streams.iter_mut().map(CpuStream::next).collect();
        for (i, head) in heads.iter().enumerate() {
            if let Some(h) = head {
                heap.push(Reverse((h.ts, i)));
            }
        }
        Merger {
            held: vec![None; streams.len()],
            streams,
            clock,
            heap,
            heads,
        }
    }

    /// Fills the emptied `batch` with the next records in order, up to [`BATCH_RECORDS`];
    /// false when there were none left.
    pub fn fill(&mut self, batch: &mut Batch<'f>) -> bool {
        batch.clear();
        self.held.fill(None);
        while batch.raws.len() < BATCH_RECORDS {
            let Some(Reverse((_, i))) = self.heap.pop() else {
                break;
            };
            let runner_up = self.heap.peek().map(|Reverse(k)| *k);
            let mut pending = self.heads[i].take();
            while let Some(p) = pending {
                let full = batch.raws.len() >= BATCH_RECORDS;
                if full || runner_up.is_some_and(|r| (p.ts, i) > r) {
                    self.heap.push(Reverse((p.ts, i)));
                    self.heads[i] = Some(p);
                    break;
                }
                self.push(i, p, batch);
                pending = self.streams[i].next();
            }
        }
        !batch.raws.is_empty()
    }

    /// Adds stream `i`'s record `p` to the batch, after the loss its page reports if any.
    fn push(&mut self, i: usize, p: Pending, batch: &mut Batch<'f>) {
        let s = &mut self.streams[i];
        if let Some(missed) = s.lost.take() {
            batch.raws.push(Raw::Lost {
                cpu: s.cpu,
                count: missed.count(),
            });
        }
        let buf = match self.held[i] {
            Some((generation, b)) if generation == s.generation => b,
            _ => {
                let b = batch.bufs.len() as u32;
                batch.bufs.push(s.shared_buf());
                self.held[i] = Some((s.generation, b));
                b
            }
        };
        batch.raws.push(Raw::Event {
            ts: self.clock.timestamp(p.ts),
            cpu: s.cpu,
            buf,
            start: p.start,
            len: p.len,
        });
    }

    /// The damaged pages and chunks the streams skipped.
    pub fn faults(self) -> Vec<Fault> {
        self.streams.into_iter().flat_map(|s| s.faults).collect()
    }
}
