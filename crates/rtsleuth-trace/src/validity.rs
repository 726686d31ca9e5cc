//! Where a trace may be measured: the one place that decides it, so that no analysis measures
//! across what the recorder did not keep.
//!
//! A ring buffer in overwrite mode keeps each CPU's most recent events: a busy CPU's recorded
//! history then begins seconds after a quiet one's, and before it nothing of that CPU is known.
//! A task woken while one of its possible CPUs was not yet recorded may have waited, run or
//! moved there without a trace, so a wake-up is measured only when it starts inside the
//! *common window*, where every CPU is recorded (Perfetto's trace processor crops ftrace data to
//! the same point).
//!
//! A CPU's history begins at its first event when its older events may have been overwritten
//! (the readers call [`crate::read::EventSink::history_begins`]: the text header's
//! `entries-in-buffer/entries-written`, `##### CPU n buffer started ####`, trace.dat's per-CPU
//! overruns say so; a Perfetto file never does, but its buffer is a ring by default); otherwise
//! at the recording's start, which is every CPU's.
//! A CPU with no event at all restricts nothing: an overwritten buffer is full of events.
//!
//! Memory: one entry per CPU that has events (CPU numbers are bounded by the readers).

use crate::event::{possible_cpu, Timestamp};
use rustc_hash::FxHashSet as HashSet;
use serde::Serialize;

/// First and last event of one CPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct CpuSpan {
    pub first: Timestamp,
    pub last: Timestamp,
}

/// The recorded history of every CPU, fed each event in trace order.
#[derive(Debug, Default, Clone)]
pub struct History {
    /// Every CPU's older events may have been overwritten.
    all_overwritten: bool,
    /// CPUs named as overwritten (trace.dat's overruns, the text header's CPU count, `CPU n
    /// buffer started`): each has events, and is not recorded before its first one.
    named: HashSet<u32>,
    /// How many named CPUs have shown no event yet.
    unseen: usize,
    trace_start: Option<Timestamp>,
    /// Indexed by CPU number (events' CPUs are below `MAX_CPUS`), up to the largest seen: a
    /// lookup for every event, which a hash map made a few per cent of `latency` on trace.dat.
    cpus: Vec<Option<CpuSpan>>,
    /// The latest history start of the CPUs seen so far: where the common window begins.
    window_start: Timestamp,
}

impl History {
    /// Whether naming `cpu` overwritten now moves the common window past every event already
    /// seen: a CPU with no event yet, named after the trace began (the kernel's text prints
    /// `##### CPU n buffer started ####` at that CPU's first event, and a tracer's own header,
    /// timerlat's, may say nothing of overwriting before it).
    pub fn begins_late(&self, cpu: Option<u32>) -> bool {
        cpu.is_some_and(|c| !self.named.contains(&c) && self.span(c).is_none())
            && self.trace_start.is_some()
    }

    /// Earlier events of `cpu` (every CPU for `None`) were overwritten: its history begins at
    /// its first event.
    pub fn begins(&mut self, cpu: Option<u32>) {
        let Some(cpu) = cpu else {
            self.all_overwritten = true;
            let firsts = self.cpus.iter().flatten().map(|s| s.first);
            self.window_start = firsts.fold(self.window_start, Timestamp::max);
            return;
        };
        if !self.named.insert(cpu) {
            return;
        }
        match self.span(cpu) {
            Some(s) => self.window_start = self.window_start.max(s.first),
            None => self.unseen += 1,
        }
    }

    fn overwritten(&self, cpu: u32) -> bool {
        self.all_overwritten || self.named.contains(&cpu)
    }

    /// Notes an event; false when it is older than the previous event of its CPU (the CPU's
    /// order is broken: what was in flight there cannot be trusted). Called for every event:
    /// inlined, the common case (a CPU already seen) costs no call.
    #[inline]
    pub fn event(&mut self, ts: Timestamp, cpu: u32) -> bool {
        self.trace_start.get_or_insert(ts);
        match self.cpus.get_mut(cpu as usize).and_then(Option::as_mut) {
            Some(s) if ts < s.last => return false,
            Some(s) => s.last = ts,
            None => self.first_event(ts, cpu),
        }
        true
    }

    /// The first event of `cpu`: its recorded history begins.
    #[inline(never)]
    fn first_event(&mut self, ts: Timestamp, cpu: u32) {
        // No reader hands out such an event (see `MAX_CPUS`).
        if !possible_cpu(u64::from(cpu)) {
            return;
        }
        if self.cpus.len() <= cpu as usize {
            self.cpus.resize(cpu as usize + 1, None);
        }
        self.cpus[cpu as usize] = Some(CpuSpan {
            first: ts,
            last: ts,
        });
        if self.named.contains(&cpu) {
            self.unseen -= 1;
        }
        if self.overwritten(cpu) {
            self.window_start = self.window_start.max(ts);
        }
    }

    /// Where something on `cpu` can be measured from: the common window's start, never before
    /// the trace's first event nor, when the CPU was overwritten, before its own first event.
    /// `None` while that is not known (a CPU named overwritten has shown no event yet).
    pub fn measured_from(&self, cpu: u32) -> Option<Timestamp> {
        let own = match self.overwritten(cpu) {
            true => self.span(cpu)?.first,
            false => 0,
        };
        let start = self.trace_start?.max(self.window_start).max(own);
        (self.unseen == 0).then_some(start)
    }

    /// Whether `cpu` is recorded from `ts` on: its history began at or before `ts`.
    pub fn recorded_at(&self, cpu: u32, ts: Timestamp) -> bool {
        if !self.overwritten(cpu) {
            return true;
        }
        self.span(cpu).is_some_and(|s| s.first <= ts)
    }

    /// Whether something that began at `ts` lies in the common window, as far as the CPUs seen
    /// so far and those named overwritten tell: never before the trace's first event.
    pub fn in_window(&self, ts: Timestamp) -> bool {
        ts >= self.window_start && self.trace_start.is_some_and(|t| ts >= t) && self.unseen == 0
    }

    /// Where the common window begins, when some CPU's history begins late.
    pub fn window_start(&self) -> Option<Timestamp> {
        let overwritten = self.all_overwritten || !self.named.is_empty();
        (overwritten && Some(self.window_start) > self.trace_start).then_some(self.window_start)
    }

    /// Named CPUs that never showed an event: while they were expected, nothing was measured.
    pub fn never_seen(&self) -> Vec<u32> {
        let mut v: Vec<u32> = (self.named.iter())
            .filter(|&&c| self.span(c).is_none())
            .copied()
            .collect();
        v.sort_unstable();
        v
    }

    /// Where `cpu`'s history begins (the recording's start unless it was overwritten).
    pub fn history_start(&self, cpu: u32) -> Option<Timestamp> {
        let span = self.span(cpu)?;
        Some(if self.overwritten(cpu) {
            span.first
        } else {
            self.trace_start.unwrap_or(span.first)
        })
    }

    /// Every CPU with events, in CPU order.
    pub fn spans(&self) -> Vec<(u32, CpuSpan)> {
        let cpus = (0..).zip(&self.cpus);
        cpus.filter_map(|(c, s)| Some((c, (*s)?))).collect()
    }

    fn span(&self, cpu: u32) -> Option<&CpuSpan> {
        self.cpus.get(cpu as usize)?.as_ref()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The lab's rt/kernel_path capture (`#P:2`, entries 35099/171563): CPU0 recorded from
    /// 178.938529 s, CPU1 (`CPU 1 buffer started`) from 187.36 s. Nothing before 187.36 s is
    /// in the common window: CPU1, named by the header, had shown nothing yet.
    #[test]
    fn an_overwritten_trace_is_measured_where_every_cpu_is_recorded() {
        let mut h = History::default();
        h.begins(Some(0));
        h.begins(Some(1));
        h.event(178_938_529_000, 0);
        assert!(!h.recorded_at(1, 178_993_693_000));
        assert!(!h.in_window(178_993_693_000), "CPU1 is not recorded yet");
        h.event(187_360_000_000, 1);
        assert!(!h.in_window(178_993_693_000));
        assert!(h.in_window(187_360_000_000));
        assert_eq!(h.window_start(), Some(187_360_000_000));
        assert_eq!(h.history_start(0), Some(178_938_529_000));
    }

    /// The lab's arm64-rt/kernel_path timerlat buffer: timerlat's header says nothing of
    /// overwriting, and `CPU 1 buffer started` comes at CPU1's first event (444.738407 s), after
    /// CPU0's events from 433.995289 s: only then is everything before known to be outside.
    #[test]
    fn a_cpu_named_after_the_trace_began_moves_the_window_past_it() {
        let mut h = History::default();
        assert!(
            !h.begins_late(Some(1)),
            "before any event the window is still open"
        );
        h.event(433_995_289_000, 0);
        assert!(h.begins_late(Some(1)));
        assert!(
            !h.begins_late(Some(0)),
            "CPU0 has events: its history began at the first"
        );
        h.begins(Some(1));
        assert!(!h.begins_late(Some(1)), "named once");
        assert!(!h.in_window(440_000_000_000));
        h.event(444_738_407_000, 1);
        assert_eq!(h.window_start(), Some(444_738_407_000));
    }

    /// Spans come back in CPU order with their first and last events; a CPU no kernel has
    /// (which no reader hands out) is not kept.
    #[test]
    fn spans_in_cpu_order_and_no_impossible_cpu() {
        let mut h = History::default();
        for (ts, cpu) in [(10, 3), (11, 0), (12, 3), (13, crate::event::MAX_CPUS)] {
            assert!(h.event(ts, cpu));
        }
        assert!(!h.event(9, 0), "older than CPU0's last event");
        let span = |first, last| CpuSpan { first, last };
        assert_eq!(h.spans(), [(0, span(11, 11)), (3, span(10, 12))]);
        assert_eq!(h.history_start(3), Some(10));
        assert_eq!(h.history_start(1), None);
        assert_eq!(h.cpus.len(), 4);
    }

    /// Without overwriting every CPU is recorded from the start, however late its first event.
    #[test]
    fn a_whole_recording_is_measured_everywhere() {
        let mut h = History::default();
        h.event(1_000, 0);
        h.event(9_000, 1);
        assert!(h.recorded_at(1, 2_000) && h.recorded_at(3, 2_000) && h.in_window(2_000));
        assert_eq!(h.window_start(), None);
        assert_eq!(h.history_start(1), Some(1_000));
    }

    /// A trace that says it was overwritten without naming CPUs (Perfetto): the CPUs seen
    /// so far decide.
    #[test]
    fn without_a_cpu_count_the_cpus_seen_decide() {
        let mut h = History::default();
        h.begins(None);
        h.event(1_000, 0);
        assert!(h.in_window(1_500) && !h.recorded_at(1, 1_500));
        h.event(2_000, 1);
        assert!(!h.in_window(1_500) && h.in_window(2_000));
        assert!(h.never_seen().is_empty());
    }

    /// trace.dat's per-CPU stats name the CPU that overran; the others are whole.
    #[test]
    fn only_the_overrun_cpu_begins_late() {
        let mut h = History::default();
        h.begins(Some(1));
        h.event(1_000, 0);
        h.event(5_000, 1);
        assert!(h.recorded_at(0, 2_000) && !h.recorded_at(1, 2_000));
        assert_eq!(h.window_start(), Some(5_000));
    }

    #[test]
    fn time_going_backwards_on_one_cpu_is_refused() {
        let mut h = History::default();
        assert!(h.event(10, 0) && h.event(5, 1) && h.event(20, 0));
        assert!(!h.event(15, 0));
        assert!(
            h.event(20, 0),
            "the CPU's order goes on from its latest event"
        );
    }
}
