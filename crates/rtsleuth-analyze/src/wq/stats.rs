//! The aggregates kept per work function, per workqueue and per kworker: distributions in
//! bounded histograms, never samples.

use super::super::latency::LatencyHistogram;
use rustc_hash::FxHashMap as HashMap;
use std::collections::BTreeMap;

/// Entries named by a kernel string (a function symbol, a workqueue name), each given a small
/// index at first sight so that per-event state holds indexes, not strings.
#[derive(Debug)]
pub struct Named<T> {
    index: HashMap<String, usize>,
    entries: Vec<(String, T)>,
}

impl<T: Default> Named<T> {
    /// The index of `name`, adding an entry the first time (the only allocation).
    pub fn id(&mut self, name: &str) -> usize {
        if let Some(&i) = self.index.get(name) {
            return i;
        }
        let i = self.entries.len();
        self.index.insert(name.to_string(), i);
        self.entries.push((name.to_string(), T::default()));
        i
    }
}

impl<T> Named<T> {
    pub fn name(&self, id: usize) -> &str {
        &self.entries[id].0
    }

    pub fn get_mut(&mut self, id: usize) -> &mut T {
        &mut self.entries[id].1
    }

    pub fn iter(&self) -> impl Iterator<Item = (usize, &str, &T)> {
        self.entries
            .iter()
            .enumerate()
            .map(|(i, (n, t))| (i, n.as_str(), t))
    }
}

impl<T> Default for Named<T> {
    fn default() -> Self {
        Named {
            index: HashMap::default(),
            entries: Vec::new(),
        }
    }
}

/// Queue -> start and start -> end distributions.
#[derive(Debug, Default)]
pub struct Timing {
    pub wait: LatencyHistogram,
    pub exec: LatencyHistogram,
}

#[derive(Debug, Default)]
pub struct FunctionStats {
    pub timing: Timing,
    /// `workqueue_execute_start`s, with or without a queue event.
    pub executions: u64,
    /// Executions per kworker pid.
    pub kworkers: BTreeMap<i32, u64>,
    /// The workqueues it was queued on (indexes), usually one.
    pub workqueues: Vec<usize>,
}

#[derive(Debug, Default)]
pub struct WorkqueueStats {
    pub timing: Timing,
    pub queued: u64,
    /// The `cpu=` values of its queue events (`None`: negative, an unbound pool); bounded by
    /// the number of CPUs.
    pub targets: Vec<Option<u32>>,
}

#[derive(Debug, Default)]
pub struct KworkerStats {
    pub executions: u64,
    /// Time inside work functions (executions with both ends in the trace).
    pub busy_ns: u64,
    /// The CPUs it executed works on.
    pub cpus: Vec<u32>,
}

/// Adds `v` to a short set kept as a vector.
pub fn add_once<V: PartialEq>(set: &mut Vec<V>, v: V) {
    if !set.contains(&v) {
        set.push(v);
    }
}
