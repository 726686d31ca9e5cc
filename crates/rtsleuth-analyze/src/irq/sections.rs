//! Interrupts-off and preemption-off sections measured by the `preemptirq` events
//! (`irq_disable` / `irq_enable`, `preempt_disable` / `preempt_enable`), per CPU.
//!
//! The kernel traces only the outermost transition (interrupts going off when they were on),
//! so a section is one disable and the next enable on the same CPU. A second disable before
//! the enable (a lost enable, or a tool that logs every nesting level) deepens the section
//! instead of restarting it, so a section is never cut short; an enable with nothing open (the
//! trace began inside the section) measures nothing. The longest `keep` sections are kept
//! with their callers, the rest only in a distribution.

use super::worst::Worst;
use crate::latency::LatencyHistogram;
use crate::names::NameId;
use rtsleuth_trace::event::Timestamp;

/// One measured section.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Section {
    pub cpu: u32,
    pub start: Timestamp,
    pub end: Timestamp,
    /// Where it began: the disable's `caller=` and `parent=`.
    pub caller: NameId,
    pub parent: NameId,
    /// The enable's `caller=`: where it ended.
    pub end_caller: NameId,
    /// The task running at the disable.
    pub pid: i32,
}

#[derive(Debug, Clone, Copy)]
struct Open {
    depth: u32,
    start: Timestamp,
    caller: NameId,
    parent: NameId,
    pid: i32,
}

#[derive(Debug)]
pub struct Sections {
    open: Vec<Option<Open>>,
    pub worst: Worst<Section>,
    pub all: LatencyHistogram,
}

impl Sections {
    pub fn new(keep: usize) -> Sections {
        Sections {
            open: Vec::new(),
            worst: Worst::new(keep),
            all: LatencyHistogram::default(),
        }
    }

    pub fn disable(&mut self, cpu: u32, ts: Timestamp, at: (NameId, NameId), pid: i32) {
        let slot = self.slot(cpu);
        match slot {
            Some(o) => o.depth += 1,
            None => {
                *slot = Some(Open {
                    depth: 1,
                    start: ts,
                    caller: at.0,
                    parent: at.1,
                    pid,
                })
            }
        }
    }

    pub fn enable(&mut self, cpu: u32, ts: Timestamp, caller: NameId) {
        let slot = self.slot(cpu);
        let Some(o) = slot else {
            return;
        };
        o.depth -= 1;
        if o.depth > 0 {
            return;
        }
        let o = slot.take().expect("matched above");
        let s = Section {
            cpu,
            start: o.start,
            end: ts.max(o.start),
            caller: o.caller,
            parent: o.parent,
            end_caller: caller,
            pid: o.pid,
        };
        let ns = s.end - s.start;
        self.all.record_for(ns, s.start, s.pid);
        self.worst.offer(ns, s);
    }

    /// Events were lost: an open section's end will never be seen.
    pub fn lost(&mut self, cpu: Option<u32>) {
        for (i, o) in self.open.iter_mut().enumerate() {
            if cpu.map_or(true, |c| c as usize == i) {
                *o = None;
            }
        }
    }

    fn slot(&mut self, cpu: u32) -> &mut Option<Open> {
        let i = cpu as usize;
        if i >= self.open.len() {
            self.open.resize(i + 1, None);
        }
        &mut self.open[i]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::names::Names;

    #[test]
    fn nested_disables_make_one_section() {
        let mut n = Names::default();
        let (a, b, c) = (n.intern("a"), n.intern("b"), n.intern("c"));
        let mut s = Sections::new(4);
        s.enable(0, 5, a); // began before the trace: nothing
        s.disable(0, 10, (a, b), 42);
        s.disable(0, 12, (b, c), 42);
        s.enable(0, 15, c);
        s.disable(1, 11, (c, a), 7); // another CPU is independent
        s.enable(1, 14, a);
        s.enable(0, 30, a);
        let got: Vec<_> = s
            .worst
            .iter()
            .map(|(ns, x)| (*ns, x.cpu, x.caller, x.end_caller))
            .collect();
        assert_eq!(got, [(20, 0, a, a), (3, 1, c, a)]);
        assert_eq!(s.all.count(), 2);
        s.disable(0, 40, (a, b), 1);
        s.lost(None);
        s.enable(0, 50, a);
        assert_eq!(s.all.count(), 2);
    }
}
