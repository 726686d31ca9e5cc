//! Putting the events of every stream into one time order with bounded memory.
//!
//! Items are queued a bundle at a time and handed out in place, by reference: a bundle's
//! events are large, and moving each one into a queue and out again was most of the merge.
//!
//! A stream is one CPU of one writer sequence: Perfetto writes each CPU's ring buffer in
//! bundles that are in time order, but bundles of different CPUs interleave, and separate
//! ftrace data sources (separate sequences) can lag each other by seconds. Each stream is a
//! queue; the earliest head is handed out once no stream can still deliver something earlier:
//! a stream with queued events will not (its events are in order), an empty stream will not
//! before the last time it delivered. An empty stream whose sequence has moved on by more than
//! `idle` nanoseconds is not waited for: Perfetto drains every CPU of a data source several
//! times a second, so such a CPU is idle or offline (a hotplugged CPU would otherwise hold
//! everything back). Streams are found as they appear, so nothing is handed out before
//! `warmup` items have arrived (by then every data source has written), and at most `cap`
//! items wait: past that the earliest goes out regardless, and anything later found to be
//! earlier is late (the caller counts it as out of order).
//!
//! Ties are broken by CPU, then by arrival, so the order is that of a stable sort of the whole
//! trace by (time, CPU). Streams are few (CPUs times ftrace data sources), so finding the
//! earliest head is a scan rather than a heap; and as nothing changes between two pushes but
//! the queues items are taken from, what a scan found (the earliest stream, the head it must
//! stay before, the time every empty stream has passed) holds for every item handed out until
//! the next push or until a stream runs empty.

use rustc_hash::FxHashMap as HashMap;
use std::collections::VecDeque;

pub struct Merger<T> {
    streams: Vec<Stream<T>>,
    /// Each stream's head, [`NONE`] for an empty one: a scan reads these few words, not the
    /// queues. (Derived from the streams, and kept: scanning the runs instead made `latency`
    /// on 8 M compact_sched events 5 % slower, 812 → 857 ms best of 7.)
    heads: Vec<Key>,
    index: HashMap<(u32, u32), usize>,
    /// The latest time each sequence delivered.
    sequences: HashMap<u32, u64>,
    queued: usize,
    arrivals: u64,
    limits: Limits,
    /// The last scan's findings, while they hold.
    scan: Option<Scan>,
    /// The earliest time an empty stream that is waited for delivered (`u64::MAX` for none):
    /// what goes out must be before it. Known until a push or an emptied stream changes it.
    waited: Option<u64>,
    /// The items of runs all handed out, for [`Merger::spent`].
    spent: Vec<Vec<T>>,
}

/// Where an item stands in the order: time, CPU, arrival.
type Key = (u64, u32, u64);

/// The key of no item, after every other.
const NONE: Key = (u64::MAX, u32::MAX, u64::MAX);

/// What a scan of the streams' heads found.
#[derive(Clone, Copy)]
struct Scan {
    /// The stream with the earliest head.
    best: usize,
    /// The earliest head of the other streams: `best` stays the earliest while its head is
    /// before this.
    runner_up: Key,
}

/// How long the merge waits, in events and in trace time.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub warmup: u64,
    pub cap: usize,
    pub idle: u64,
}

struct Stream<T> {
    seq: u32,
    cpu: u32,
    /// Only the first run may have handed out all its items.
    runs: VecDeque<Run<T>>,
    /// The latest time this stream delivered: it will deliver nothing earlier.
    last_ts: u64,
}

/// Items queued together, in time order; they are dropped with the run.
struct Run<T> {
    /// Each item's time and arrival.
    keys: Vec<(u64, u64)>,
    items: Vec<T>,
    /// The next item to hand out.
    next: usize,
}

impl<T> Run<T> {
    fn head(&self) -> Option<(u64, u64)> {
        self.keys.get(self.next).copied()
    }
}

impl<T> Stream<T> {
    fn head(&self) -> Key {
        let head = self.runs.iter().find_map(Run::head);
        head.map_or(NONE, |(ts, arrival)| (ts, self.cpu, arrival))
    }

    fn is_empty(&self) -> bool {
        self.head() == NONE
    }

    /// The time of the last item queued and not yet handed out.
    fn back_ts(&self) -> Option<u64> {
        let run = self.runs.back()?;
        run.keys
            .last()
            .filter(|_| run.head().is_some())
            .map(|k| k.0)
    }

    /// Queues a run whose items are in order and not before what is queued.
    fn append(&mut self, keys: Vec<(u64, u64)>, items: Vec<T>) {
        self.runs.push_back(Run {
            keys,
            items,
            next: 0,
        });
    }

    /// Puts a run that overlaps what is queued, or is out of order itself, in place: every
    /// item still queued and the run's become one run, sorted by time, equal times in
    /// arrival order. Bundles of one CPU rarely overlap, so this is rarely needed.
    fn merge_in(&mut self, keys: Vec<(u64, u64)>, items: Vec<T>) {
        let mut all: Vec<((u64, u64), T)> = Vec::new();
        for mut run in self.runs.drain(..) {
            let next = run.next;
            all.extend(run.keys.drain(next..).zip(run.items.drain(next..)));
        }
        all.extend(keys.into_iter().zip(items));
        all.sort_by_key(|(key, _)| *key);
        let (keys, items) = all.into_iter().unzip();
        self.append(keys, items);
    }
}

impl<T> Merger<T> {
    pub fn new(limits: Limits) -> Self {
        Merger {
            streams: Vec::new(),
            heads: Vec::new(),
            index: HashMap::default(),
            sequences: HashMap::default(),
            queued: 0,
            arrivals: 0,
            limits,
            scan: None,
            waited: None,
            spent: Vec::new(),
        }
    }

    /// Queues `item` of CPU `cpu` of sequence `seq`, at `ts`.
    pub fn push(&mut self, seq: u32, cpu: u32, ts: u64, item: T) {
        self.push_run(seq, cpu, vec![item], [ts]);
    }

    /// Queues `items` of CPU `cpu` of sequence `seq` (a bundle's events, in order), at `times`,
    /// one for each item.
    pub fn push_run(
        &mut self,
        seq: u32,
        cpu: u32,
        items: Vec<T>,
        times: impl IntoIterator<Item = u64>,
    ) {
        let keys: Vec<(u64, u64)> = times.into_iter().zip(self.arrivals..).collect();
        assert_eq!(keys.len(), items.len(), "one time for each item");
        let Some(&(start, _)) = keys.first() else {
            return;
        };
        let latest = keys.iter().map(|k| k.0).max().unwrap_or(start);
        let in_order = keys.windows(2).all(|w| w[0].0 <= w[1].0);
        let i = self.stream(seq, cpu);
        let stream = &mut self.streams[i];
        self.arrivals += keys.len() as u64;
        self.queued += keys.len();
        if in_order && stream.back_ts().map_or(true, |back| back <= start) {
            stream.append(keys, items);
        } else {
            stream.merge_in(keys, items);
        }
        stream.last_ts = stream.last_ts.max(latest);
        self.heads[i] = stream.head();
        let seq_latest = self.sequences.entry(seq).or_insert(latest);
        *seq_latest = (*seq_latest).max(latest);
        self.scan = None;
        self.waited = None;
    }

    /// The index of stream (`seq`, `cpu`), made if it is new.
    fn stream(&mut self, seq: u32, cpu: u32) -> usize {
        let next = self.streams.len();
        let i = *self.index.entry((seq, cpu)).or_insert(next);
        if i == next {
            self.streams.push(Stream {
                seq,
                cpu,
                runs: VecDeque::new(),
                last_ts: 0,
            });
            self.heads.push(NONE);
        }
        i
    }

    /// The latest time stream (`seq`, `cpu`) delivered, if it has delivered anything.
    pub fn last_ts(&self, seq: u32, cpu: u32) -> Option<u64> {
        self.index
            .get(&(seq, cpu))
            .map(|&i| self.streams[i].last_ts)
    }

    /// The earliest item, if it is certain that nothing earlier can still arrive (or too much
    /// is waiting): `(ts, cpu, item)`.
    pub fn pop_ready(&mut self) -> Option<(u64, u32, &T)> {
        let scan = match self.scan {
            Some(scan) if self.heads[scan.best] < scan.runner_up => scan,
            _ => *self.scan.insert(self.scanned()?),
        };
        let ts = self.heads[scan.best].0;
        let Limits { warmup, cap, .. } = self.limits;
        let ready = self.queued > cap || (self.arrivals >= warmup && ts < self.waited());
        ready.then(|| self.take(scan.best))
    }

    /// The earliest item whatever may come: for the end of the trace.
    pub fn pop_any(&mut self) -> Option<(u64, u32, &T)> {
        let best = self.scanned()?.best;
        Some(self.take(best))
    }

    /// The items of the runs all handed out since the last call, for the caller to free where
    /// it likes.
    pub fn spent(&mut self) -> Vec<Vec<T>> {
        std::mem::take(&mut self.spent)
    }

    /// Scans the streams' heads; `None` when every stream is empty.
    fn scanned(&self) -> Option<Scan> {
        let (mut best, mut first, mut runner_up) = (0, NONE, NONE);
        for (i, &head) in self.heads.iter().enumerate() {
            if head < first {
                (best, first, runner_up) = (i, head, first);
            } else if head < runner_up {
                runner_up = head;
            }
        }
        (first != NONE).then_some(Scan { best, runner_up })
    }

    fn waited(&mut self) -> u64 {
        let idle = self.limits.idle;
        let (streams, sequences) = (&self.streams, &self.sequences);
        *self.waited.get_or_insert_with(|| {
            streams
                .iter()
                .filter(|s| s.is_empty())
                .filter(|s| sequences[&s.seq].saturating_sub(s.last_ts) <= idle)
                .map(|s| s.last_ts)
                .min()
                .unwrap_or(u64::MAX)
        })
    }

    /// Hands out stream `i`'s head, setting aside the run before it that is all handed out.
    fn take(&mut self, i: usize) -> (u64, u32, &T) {
        let stream = &mut self.streams[i];
        if stream.runs.front().is_some_and(|r| r.head().is_none()) {
            self.spent.extend(stream.runs.pop_front().map(|r| r.items));
        }
        let run = stream
            .runs
            .front_mut()
            .expect("a scan names a non-empty stream");
        let (at, ts) = (run.next, run.keys[run.next].0);
        run.next += 1;
        self.heads[i] = stream.head();
        if self.heads[i] == NONE {
            // It may now be waited for. (The scan holds: the stream emptied was the best one,
            // whose missing head calls for a new scan.)
            self.waited = None;
        }
        self.queued -= 1;
        let stream = &self.streams[i];
        (ts, stream.cpu, &stream.runs[0].items[at])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn merger(warmup: u64, cap: usize) -> Merger<&'static str> {
        Merger::new(Limits {
            warmup,
            cap,
            idle: 1000,
        })
    }

    fn drain(m: &mut Merger<&'static str>) -> Vec<&'static str> {
        std::iter::from_fn(|| m.pop_ready().map(|(_, _, x)| *x)).collect()
    }

    #[test]
    fn interleaved_cpus_come_out_in_time_order() {
        let mut m = merger(0, 100);
        m.push(1, 0, 10, "a10");
        m.push(1, 0, 30, "a30");
        m.push(1, 1, 20, "b20");
        m.push(1, 1, 40, "b40");
        // CPU 0 is empty after a30 and delivered up to 30: b40 may still be preceded.
        assert_eq!(drain(&mut m), ["a10", "b20", "a30"]);
        m.push(1, 0, 50, "a50");
        assert_eq!(drain(&mut m), ["b40"]);
        assert_eq!(m.pop_any().map(|x| *x.2), Some("a50"));
        assert_eq!(m.pop_any(), None);
    }

    #[test]
    fn a_lagging_sequence_holds_the_others_back() {
        let mut m = merger(0, 100);
        m.push(1, 0, 100, "s1");
        m.push(2, 0, 10, "t10");
        m.push(1, 0, 200, "s2");
        assert_eq!(drain(&mut m), ["t10"]);
        m.push(2, 0, 150, "t150");
        assert_eq!(drain(&mut m), ["s1", "t150"]);
    }

    #[test]
    fn ties_go_by_cpu_then_arrival() {
        let mut m = merger(0, 100);
        m.push(1, 3, 10, "cpu3");
        m.push(1, 1, 10, "cpu1-first");
        m.push(2, 1, 10, "cpu1-second");
        m.push(1, 0, 10, "cpu0");
        let all: Vec<_> = std::iter::from_fn(|| m.pop_any().map(|x| *x.2)).collect();
        assert_eq!(all, ["cpu0", "cpu1-first", "cpu1-second", "cpu3"]);
    }

    #[test]
    fn warmup_waits_and_cap_forces() {
        let mut m = merger(10, 2);
        m.push(1, 0, 10, "a");
        m.push(1, 0, 20, "b");
        assert_eq!(drain(&mut m), Vec::<&str>::new());
        // Over the cap: the earliest goes out although the warm-up is not over.
        m.push(1, 0, 30, "c");
        assert_eq!(drain(&mut m), ["a"]);
        // A stream found after that can deliver something earlier than what went out.
        m.push(1, 1, 5, "late");
        assert_eq!(drain(&mut m), ["late"]);
    }

    #[test]
    fn an_idle_cpu_is_not_waited_for() {
        let mut m = merger(0, 100);
        m.push(1, 6, 10, "cpu6");
        m.push(1, 0, 500, "a500");
        // CPU 6 delivered up to 10 and its sequence is at 500: it may still deliver.
        assert_eq!(drain(&mut m), ["cpu6"]);
        // Its sequence is now 1490 past it, more than `idle`: CPU 6 is idle.
        m.push(1, 0, 1500, "a1500");
        assert_eq!(drain(&mut m), ["a500", "a1500"]);
    }

    /// A bundle's items go out one by one among the other streams', each bundle's run dropped
    /// once its last item is out.
    #[test]
    fn runs_interleave_item_by_item() {
        let mut m = merger(0, 100);
        m.push_run(1, 0, vec!["a10", "a30", "a50"], [10, 30, 50]);
        m.push_run(1, 1, vec!["b20", "b40"], [20, 40]);
        m.push_run(1, 1, vec![], []);
        assert_eq!(m.queued, 5);
        let all: Vec<_> = std::iter::from_fn(|| m.pop_any().map(|x| *x.2)).collect();
        assert_eq!(all, ["a10", "b20", "a30", "b40", "a50"]);
        assert!(m.streams.iter().all(|s| s.runs.len() <= 1));
    }

    #[test]
    fn an_overlap_within_a_stream_is_put_in_place() {
        let mut m = merger(0, 100);
        m.push(1, 0, 10, "a");
        m.push(1, 0, 30, "c");
        m.push(1, 0, 20, "b");
        m.push(1, 0, 20, "b2");
        m.push_run(1, 0, vec!["e", "d", "b3"], [50, 40, 20]);
        let all: Vec<_> = std::iter::from_fn(|| m.pop_any().map(|x| *x.2)).collect();
        assert_eq!(all, ["a", "b", "b2", "b3", "c", "d", "e"]);
    }
}
