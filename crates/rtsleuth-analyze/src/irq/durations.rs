//! How long interrupt work ran: hard IRQ handlers (by number), x86 vector IRQs (by vector
//! name), softirqs (by vector) and hrtimer callbacks (by function), each from its `*_entry` to
//! the matching `*_exit` on the same CPU.
//!
//! Each CPU keeps a stack of open frames (interrupts nest: a callback inside the timer vector,
//! a hard IRQ inside a softirq). An exit closes the innermost frame it matches; frames above it
//! whose exits were not traced are dropped unmeasured, and an exit without an entry (the trace
//! began inside it) measures nothing. Memory: one distribution per source and CPU.

use crate::latency::LatencyHistogram;
use crate::names::NameId;
use rtsleuth_trace::event::Timestamp;
use rustc_hash::FxHashMap as HashMap;
use std::collections::BTreeMap;

/// The four kinds of interrupt work, in report order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    Hardirq,
    Vector,
    Softirq,
    Hrtimer,
}

/// What ran: the kind and its identity (IRQ or softirq number, vector or callback name).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Key {
    Hardirq(u32),
    Vector(NameId),
    Softirq(u32),
    Hrtimer(NameId),
}

impl Key {
    pub fn kind(self) -> Kind {
        match self {
            Key::Hardirq(_) => Kind::Hardirq,
            Key::Vector(_) => Kind::Vector,
            Key::Softirq(_) => Kind::Softirq,
            Key::Hrtimer(_) => Kind::Hrtimer,
        }
    }
}

/// One source's durations.
#[derive(Debug)]
pub struct Source {
    pub key: Key,
    /// The IRQ's or softirq's name (`eth0`, `TIMER`), the vector's number.
    pub name: NameId,
    pub vector: Option<u32>,
    pub per_cpu: BTreeMap<u32, LatencyHistogram>,
}

impl Source {
    /// All CPUs together.
    pub fn total(&self) -> LatencyHistogram {
        let mut all = LatencyHistogram::default();
        for h in self.per_cpu.values() {
            all.merge(h);
        }
        all
    }
}

#[derive(Debug, Clone, Copy)]
struct Frame {
    key: Key,
    /// The hrtimer of a callback (several may nest with one function), else 0.
    id: u64,
    start: Timestamp,
    /// The task it interrupted.
    pid: i32,
}

#[derive(Debug, Default)]
pub struct Durations {
    sources: Vec<Source>,
    index: HashMap<Key, usize>,
    open: Vec<Vec<Frame>>,
}

impl Durations {
    /// `key` began on `cpu` at `ts`, interrupting `pid`; `name` and `vector` label it.
    pub fn enter(
        &mut self,
        cpu: u32,
        ts: Timestamp,
        key: Key,
        id: u64,
        label: (NameId, Option<u32>),
        pid: i32,
    ) {
        if !self.index.contains_key(&key) {
            self.index.insert(key, self.sources.len());
            self.sources.push(Source {
                key,
                name: label.0,
                vector: label.1,
                per_cpu: BTreeMap::new(),
            });
        }
        let stack = self.stack(cpu);
        stack.push(Frame {
            key,
            id,
            start: ts,
            pid,
        });
    }

    /// The innermost open frame of `cpu` that `is` matches ended at `ts`.
    pub fn exit(&mut self, cpu: u32, ts: Timestamp, is: impl Fn(Key, u64) -> bool) {
        let stack = self.stack(cpu);
        let Some(depth) = stack.iter().rposition(|f| is(f.key, f.id)) else {
            return;
        };
        let f = stack[depth];
        stack.truncate(depth);
        let i = self.index[&f.key];
        self.sources[i].per_cpu.entry(cpu).or_default().record_for(
            ts.saturating_sub(f.start),
            f.start,
            f.pid,
        );
    }

    /// When the outermost open interrupt of `cpu` began, if one is open.
    pub fn interrupt_entry(&self, cpu: u32) -> Option<Timestamp> {
        self.open.get(cpu as usize)?.first().map(|f| f.start)
    }

    /// Events were lost on `cpu` (every CPU for `None`): its open frames cannot be closed.
    pub fn lost(&mut self, cpu: Option<u32>) {
        for (i, s) in self.open.iter_mut().enumerate() {
            if cpu.map_or(true, |c| c as usize == i) {
                s.clear();
            }
        }
    }

    pub fn sources(&self) -> &[Source] {
        &self.sources
    }

    fn stack(&mut self, cpu: u32) -> &mut Vec<Frame> {
        let i = cpu as usize;
        if i >= self.open.len() {
            self.open.resize_with(i + 1, Vec::new);
        }
        &mut self.open[i]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::names::Names;

    #[test]
    fn nested_frames_and_missing_exits() {
        let mut names = Names::default();
        let timer = names.intern("local_timer");
        let cb = names.intern("hrtimer_wakeup");
        let mut d = Durations::default();
        d.enter(0, 100, Key::Vector(timer), 0, (timer, Some(236)), 7);
        d.enter(0, 102, Key::Hrtimer(cb), 0xab, (cb, None), 7);
        assert_eq!(d.interrupt_entry(0), Some(100));
        d.exit(0, 105, |k, id| k == Key::Hrtimer(cb) && id == 0xab);
        d.exit(0, 110, |k, _| k == Key::Vector(timer));
        assert_eq!(d.interrupt_entry(0), None);
        // An exit with no entry measures nothing.
        d.exit(0, 200, |k, _| k == Key::Softirq(1));
        let got: Vec<(Key, u64, u64, i32)> = d
            .sources()
            .iter()
            .map(|s| {
                let t = s.total();
                (s.key, t.count(), t.max_ns(), t.max_pid())
            })
            .collect();
        assert_eq!(
            got,
            [(Key::Vector(timer), 1, 10, 7), (Key::Hrtimer(cb), 1, 3, 7)]
        );
        // The vector's exit is lost: the next interrupt closes over it unmeasured.
        d.enter(1, 300, Key::Vector(timer), 0, (timer, Some(236)), 0);
        d.enter(1, 301, Key::Softirq(1), 0, (cb, None), 0);
        d.lost(Some(1));
        d.exit(1, 320, |k, _| k == Key::Softirq(1));
        assert_eq!(d.sources()[2].total().count(), 0);
    }
}
