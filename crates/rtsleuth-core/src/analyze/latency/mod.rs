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
//! - A task can be seen running on a CPU (it is the current task of an event there) without
//!   any traced `sched_switch` to it: the kernel or the tracer dropped the switch (on some
//!   kernels the switch out of an idle CPU is never traced). It was switched in by then, so
//!   the wake-up ends at that first event, an upper bound of the real latency; the report says
//!   how many wake-ups ended this way.
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
    /// The task each CPU runs, as far as the trace has shown.
    current: Vec<Option<i32>>,
    /// Switch-ins inferred from a task seen running that no `sched_switch` put there.
    untraced_switches: u64,
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
            current: Vec::new(),
            untraced_switches: 0,
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

    /// `prio` is the woken task's priority as the wake-up event prints it; a priority from a
    /// `sched_switch` is preferred when there is one.
    fn woken(&mut self, pid: i32, prio: i32, ts: Timestamp, is_waking: bool) {
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
        t.prio.get_or_insert(prio);
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

    /// Every event's line names the task running on its CPU. A task there that the trace
    /// never switched in had its `sched_switch` dropped: it is switched in now.
    fn check_running(&mut self, ev: &Event<'_>) {
        let cpu = ev.cpu as usize;
        if cpu >= self.current.len() {
            self.current.resize(cpu + 1, None);
        }
        match self.current[cpu] {
            Some(pid) if pid == ev.pid => {}
            Some(prev) => {
                self.untraced_switches += 1;
                self.switch(ev.ts, ev.cpu, prev, ev.pid, None);
            }
            // The first event of a CPU: whoever it shows was already running.
            None => self.current[cpu] = Some(ev.pid),
        }
    }

    /// `next_prio` is `None` for an inferred switch, which keeps the task's known priority.
    fn switch(
        &mut self,
        ts: Timestamp,
        cpu: u32,
        prev_pid: i32,
        next_pid: i32,
        next_prio: Option<i32>,
    ) {
        if let Some(slot) = self.current.get_mut(cpu as usize) {
            *slot = Some(next_pid);
        }
        let selected = self.cpu_selected(cpu);
        if prev_pid != 0 {
            let t = self.tasks.entry(prev_pid).or_default();
            if let Some(since) = t.running_since.take() {
                if selected {
                    // Saturating: a damaged trace's absurd timestamps must not wrap the sum.
                    t.runtime_ns = t.runtime_ns.saturating_add(ts.saturating_sub(since));
                }
            }
            t.running = false;
        }
        if next_pid == 0 {
            return;
        }
        let waking_seen = self.waking_seen;
        let t = self.tasks.entry(next_pid).or_default();
        if next_prio.is_some() {
            t.prio = next_prio;
        }
        t.running = true;
        t.running_since = Some(ts);
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
            if let Some(lat) = ts.checked_sub(start) {
                t.lat.record(lat, ts);
                self.per_cpu
                    .entry(cpu)
                    .or_default()
                    .record_for(lat, ts, next_pid);
            }
        }
    }
}

impl EventSink for Latency {
    fn event(&mut self, ev: &Event<'_>) {
        self.check_running(ev);
        match ev.kind {
            EventKind::SchedWaking { pid, prio, .. } => {
                self.names.observe(ev);
                self.woken(pid, prio, ev.ts, true)
            }
            EventKind::SchedWakeup { pid, prio, .. }
            | EventKind::SchedWakeupNew { pid, prio, .. } => {
                self.names.observe(ev);
                self.woken(pid, prio, ev.ts, false)
            }
            EventKind::SchedSwitch {
                prev_pid,
                next_pid,
                next_prio,
                ..
            } => {
                self.names.observe(ev);
                self.switch(ev.ts, ev.cpu, prev_pid, next_pid, Some(next_prio))
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
        // Who runs where is unknown again until the next event of each CPU shows it.
        self.current.iter_mut().for_each(|c| *c = None);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::read::ftrace_text::read_bytes;

    fn measure(text: &str) -> (serde_json::Value, Vec<String>) {
        let mut lat = Latency::new(LatencyOptions::default());
        let info = read_bytes("t", text.as_bytes().to_vec(), 1 << 16, &mut lat).unwrap();
        let doc = lat.document(&info);
        (doc.json["tasks"].clone(), doc.warnings)
    }

    /// On some kernels the switch out of an idle CPU is never traced: the woken task simply
    /// shows up running. Its wake-up ends at its first event there, not at some later switch.
    #[test]
    fn a_task_seen_running_was_switched_in() {
        let (tasks, warnings) = measure(
            "          <idle>-0       [001] d.h3.   100.000000: sched_waking: comm=ct pid=7 prio=19 target_cpu=001\n\
                       <idle>-0       [001] dNh4.   100.000002: sched_wakeup: comm=ct pid=7 prio=19 target_cpu=001\n\
                           ct-7       [001] d..1.   100.000010: hrtimer_start: hrtimer=ffff1 function=hrtimer_wakeup expires=1 softexpires=1\n\
                           ct-7       [001] d..2.   100.000020: sched_switch: prev_comm=ct prev_pid=7 prev_prio=19 prev_state=S ==> next_comm=swapper/1 next_pid=0 next_prio=120\n\
                       <idle>-0       [001] d.h3.   100.001000: sched_waking: comm=ct pid=7 prio=19 target_cpu=001\n\
                       <idle>-0       [001] d..2.   100.001005: sched_switch: prev_comm=swapper/1 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=ct next_pid=7 next_prio=19\n",
        );
        let ct = &tasks[0];
        assert_eq!(
            (ct["pid"].as_i64(), ct["prio"].as_i64()),
            (Some(7), Some(19))
        );
        assert_eq!(ct["wakeups"], 2);
        assert_eq!(ct["switches"], 2);
        // 10 us to its first event (the untraced switch), then 5 us to a traced switch.
        assert_eq!(
            (ct["max_us"].as_f64(), ct["min_us"].as_f64()),
            (Some(10.0), Some(5.0))
        );
        assert_eq!(ct["runtime_us"].as_f64(), Some(10.0));
        assert!(
            warnings
                .iter()
                .any(|w| w.starts_with("1 switch-ins were not in the trace")),
            "{warnings:?}"
        );
    }

    /// The first event of each CPU only says who runs there; nothing is inferred from it.
    #[test]
    fn the_first_event_of_a_cpu_is_not_a_switch() {
        let (tasks, warnings) = measure(
            "              ct-7       [000] d..2.   100.000020: sched_switch: prev_comm=ct prev_pid=7 prev_prio=19 prev_state=S ==> next_comm=swapper/0 next_pid=0 next_prio=120\n\
                         bash-9       [001] .....   100.000030: sys_enter: NR 1 (1, 2, 3)\n",
        );
        assert_eq!(tasks.as_array().unwrap().len(), 0, "{tasks}");
        assert!(warnings.is_empty(), "{warnings:?}");
    }
}
