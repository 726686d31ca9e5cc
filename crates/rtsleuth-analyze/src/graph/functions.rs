//! Per-function time: inclusive (the call with everything it called) and exclusive (the
//! function's own code: inclusive minus the inclusive time of its direct children).

use crate::latency::LatencyHistogram;
use rtsleuth_trace::event::Timestamp;
use rustc_hash::FxHashMap;

/// Interned function names and their statistics; a function is an index from here on, so
/// call stacks and trees hold a `u32` instead of a string.
#[derive(Default)]
pub struct Functions {
    ids: FxHashMap<Box<str>, u32>,
    names: Vec<Box<str>>,
    stats: Vec<FuncStats>,
}

#[derive(Default)]
pub struct FuncStats {
    /// Samples are "at" their line number, so `max_at` is the line of the slowest call.
    pub inclusive: LatencyHistogram,
    /// Only the total and the maximum of self time are reported: no distribution is needed,
    /// and a histogram sample per call would be a tenth of the time of a whole pass.
    pub exclusive: SelfTime,
    /// The absolute time of the slowest call (`funcgraph-abstime`).
    pub max_ts: Option<Timestamp>,
}

/// Self time of every completed call of a function; they are as many as its inclusive samples.
#[derive(Default)]
pub struct SelfTime {
    sum_ns: u128,
    max_ns: u64,
}

impl SelfTime {
    fn record(&mut self, ns: u64) {
        self.sum_ns += u128::from(ns);
        self.max_ns = self.max_ns.max(ns);
    }

    pub fn sum_ns(&self) -> u128 {
        self.sum_ns
    }

    pub fn max_ns(&self) -> u64 {
        self.max_ns
    }
}

impl Functions {
    pub fn id(&mut self, name: &str) -> u32 {
        if let Some(&id) = self.ids.get(name) {
            return id;
        }
        let id = self.names.len() as u32;
        self.ids.insert(name.into(), id);
        self.names.push(name.into());
        self.stats.push(FuncStats::default());
        id
    }

    pub fn name(&self, id: u32) -> &str {
        &self.names[id as usize]
    }

    pub fn record(
        &mut self,
        id: u32,
        inclusive_ns: u64,
        exclusive_ns: u64,
        line: u64,
        ts: Option<Timestamp>,
    ) {
        let s = &mut self.stats[id as usize];
        s.inclusive.record(inclusive_ns, line);
        s.exclusive.record(exclusive_ns);
        if s.inclusive.max_at() == line {
            s.max_ts = ts;
        }
    }

    /// Every function that completed at least one timed call, with its name.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &FuncStats)> {
        self.names
            .iter()
            .zip(&self.stats)
            .filter(|(_, s)| s.inclusive.count() > 0)
            .map(|(n, s)| (&**n, s))
    }
}
