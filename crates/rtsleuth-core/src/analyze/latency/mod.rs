//! `rtsleuth latency`: per-task wake-up latency, a superset of `perf sched latency`.
//!
//! # Definition
//! A task's *wake-up latency* is the time from the moment it is woken to the `sched_switch`
//! that puts it on a CPU:
//! - The wake-up starts at `sched_waking` (the first event of a wake-up, emitted on the
//!   waker's CPU) when the trace contains any `sched_waking` event; in traces recorded without
//!   it, at `sched_wakeup` / `sched_wakeup_new`.
//! - It starts only while the task is not running and has no wake-up pending: a second wake-up
//!   of a task already woken does not restart the clock (the task has been runnable since the
//!   first one), and a wake-up of a running task is not a wake-up at all.
//! - It ends at the next `sched_switch` whose `next_pid` is the task, on whichever CPU: a task
//!   woken on one CPU and migrated to another is measured across the migration. The sample
//!   belongs to that CPU and carries that switch's `next_prio`.
//! - Preemption (`prev_state=R`/`R+`) is not a wake-up: the time a preempted task waits is
//!   not counted here (`perf sched latency` counts it too; `explain` accounts for it).
//! - The idle task (pid 0) is never measured. A wake-up still pending at the end of the trace
//!   is not counted, and `[LOST n EVENTS]` drops every pending wake-up, because the events that
//!   would end or restart it may be the ones lost.
//!
//! Per task it also counts runtime (the sum of on-CPU intervals that start and end inside the
//! trace) and switches (how many times the task was switched in).

mod histogram;
mod report;

pub use histogram::LatencyHistogram;
pub use report::SortKey;

use crate::event::{Event, EventKind, Timestamp};
use crate::read::{Decode, EventSink};
use rustc_hash::FxHashMap as HashMap;
use std::collections::BTreeMap;

/// What to measure and show.
#[derive(Debug, Clone, Default)]
pub struct LatencyOptions {
    /// Only these pids (empty: all).
    pub pids: Vec<i32>,
    /// Only tasks whose comm contains one of these (empty: all).
    pub comms: Vec<String>,
    /// Only samples and runtime on these CPUs (empty: all).
    pub cpus: Vec<u32>,
    /// Only real-time tasks (kernel prio below 100).
    pub rt_only: bool,
    pub sort: SortKey,
    /// Print a latency histogram.
    pub hist: bool,
}

/// Per-task state and statistics.
#[derive(Debug, Default)]
struct Task {
    prio: Option<i32>,
    running_since: Option<Timestamp>,
    running: bool,
    pending_waking: Option<Timestamp>,
    pending_wakeup: Option<Timestamp>,
    runtime_ns: u64,
    switches: u64,
    lat: LatencyHistogram,
}

/// The streaming analysis.
#[derive(Debug)]
pub struct Latency {
    opts: LatencyOptions,
    tasks: HashMap<i32, Task>,
    per_cpu: BTreeMap<u32, LatencyHistogram>,
    names: super::TaskNames,
    /// Set at the first `sched_waking`: from then on only `sched_waking` starts a wake-up.
    waking_seen: bool,
    dropped_by_lost: u64,
}

impl Latency {
    pub fn new(opts: LatencyOptions) -> Self {
        Latency {
            opts,
            tasks: HashMap::default(),
            per_cpu: BTreeMap::new(),
            names: Default::default(),
            waking_seen: false,
            dropped_by_lost: 0,
        }
    }

    fn cpu_selected(&self, cpu: u32) -> bool {
        self.opts.cpus.is_empty() || self.opts.cpus.contains(&cpu)
    }

    /// The first `sched_waking` decides the definition for the whole trace: samples measured
    /// from `sched_wakeup` before it belong to the other definition and are discarded. (Before
    /// the first `sched_waking` no waking-based wake-up can exist, so nothing is lost.)
    fn switch_to_waking(&mut self) {
        self.waking_seen = true;
        self.per_cpu.clear();
        for t in self.tasks.values_mut() {
            t.lat = LatencyHistogram::default();
            t.pending_wakeup = None;
        }
    }

    fn woken(&mut self, pid: i32, ts: Timestamp, is_waking: bool) {
        if pid == 0 {
            return;
        }
        if is_waking && !self.waking_seen {
            self.switch_to_waking();
        }
        if !is_waking && self.waking_seen {
            return;
        }
        let t = self.tasks.entry(pid).or_default();
        if t.running {
            return;
        }
        let pending = if is_waking {
            &mut t.pending_waking
        } else {
            &mut t.pending_wakeup
        };
        pending.get_or_insert(ts);
    }

    fn switch(&mut self, ev: &Event<'_>, prev_pid: i32, next_pid: i32, next_prio: i32) {
        let cpu = ev.cpu;
        let selected = self.cpu_selected(cpu);
        if prev_pid != 0 {
            let t = self.tasks.entry(prev_pid).or_default();
            if let Some(since) = t.running_since.take() {
                if selected {
                    t.runtime_ns += ev.ts.saturating_sub(since);
                }
            }
            t.running = false;
        }
        if next_pid == 0 {
            return;
        }
        let waking_seen = self.waking_seen;
        let t = self.tasks.entry(next_pid).or_default();
        t.prio = Some(next_prio);
        t.running = true;
        t.running_since = Some(ev.ts);
        if selected {
            t.switches += 1;
        }
        let start = if waking_seen {
            t.pending_waking.take()
        } else {
            t.pending_wakeup.take()
        };
        t.pending_waking = None;
        t.pending_wakeup = None;
        if let (Some(start), true) = (start, selected) {
            if let Some(lat) = ev.ts.checked_sub(start) {
                t.lat.record(lat, ev.ts);
                self.per_cpu
                    .entry(cpu)
                    .or_default()
                    .record_for(lat, ev.ts, next_pid);
            }
        }
    }
}

impl EventSink for Latency {
    fn event(&mut self, ev: &Event<'_>) {
        match ev.kind {
            EventKind::SchedWaking { pid, .. } => {
                self.names.observe(ev);
                self.woken(pid, ev.ts, true)
            }
            EventKind::SchedWakeup { pid, .. } | EventKind::SchedWakeupNew { pid, .. } => {
                self.names.observe(ev);
                self.woken(pid, ev.ts, false)
            }
            EventKind::SchedSwitch {
                prev_pid,
                next_pid,
                next_prio,
                ..
            } => {
                self.names.observe(ev);
                self.switch(ev, prev_pid, next_pid, next_prio)
            }
            _ => {}
        }
    }

    fn decode(&self) -> Decode {
        Decode::SCHED
    }

    fn lost(&mut self, _cpu: Option<u32>, _count: Option<u64>) {
        for t in self.tasks.values_mut() {
            let had = t.pending_waking.take().is_some() | t.pending_wakeup.take().is_some();
            self.dropped_by_lost += u64::from(had);
            // A lost switch-out would make the next on-CPU interval wrong.
            t.running_since = None;
        }
    }
}
