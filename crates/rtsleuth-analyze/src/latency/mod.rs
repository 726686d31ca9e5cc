//! `rtsleuth latency`: per-task wake-up latency, a superset of `perf sched latency`.
//!
//! # Definition
//! A task's *wake-up latency* is the time from the moment it is woken to the moment it runs,
//! as [`crate::wakeups`] defines both ends (the definition `explain` shares):
//! `sched_waking` (or `sched_wakeup` in traces without it) to the `sched_switch` that runs the
//! task on whichever CPU, or to its first event where the switch was not traced, or, for a task
//! woken in an interrupt on top of itself, to its return to task context. The sample belongs to
//! the CPU it ran on and carries that switch's `next_prio`. Preemption (`prev_state=R`/`R+`) is
//! not a wake-up: the time a preempted task waits is not counted here (`perf sched latency`
//! counts it too; `explain` accounts for it).
//!
//! Per task it also counts runtime (the sum of on-CPU intervals that start and end inside the
//! trace) and switches (how many times the task was switched in).

mod histogram;
mod irq_reach;
mod irq_report;
mod osnoise;
mod per_task;
mod preemption;
mod report;
mod timerlat;

pub use crate::waking::IrqSelector;
pub use histogram::{Bucket, Figures, LatencyHistogram};
pub use per_task::TaskLatency;
pub(crate) use report::hist_json;
pub use report::SortKey;

use super::wakeups::{Step, Wake, Wakeups};
use rtsleuth_trace::event::{Event, EventKind, Timestamp};
use rtsleuth_trace::read::{Decode, EventSink};
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
    /// Give every task row its own histogram (`histogram` in the JSON), for a report that
    /// draws one per task; the text and CSV tables do not change.
    pub task_histograms: bool,
    /// Also measure, per thread it led to, the time from this interrupt's entry to the
    /// thread running ([`irq_reach`]).
    pub irq: Option<IrqSelector>,
}

/// Per-task state and statistics.
#[derive(Debug, Default)]
struct Task {
    prio: Option<i32>,
    /// The CPU it was switched in on, and when.
    running_since: Option<(u32, Timestamp)>,
    runtime_ns: u64,
    switches: u64,
    lat: LatencyHistogram,
    /// Its preemption waits (switched out runnable -> switched in again).
    preempted: LatencyHistogram,
}

/// The streaming analysis.
#[derive(Debug)]
pub struct Latency {
    opts: LatencyOptions,
    tasks: HashMap<i32, Task>,
    per_cpu: BTreeMap<u32, LatencyHistogram>,
    names: super::TaskNames,
    wakeups: Wakeups,
    timerlat: timerlat::Timerlat,
    osnoise: osnoise::Osnoise,
    preemption: preemption::Preemption,
    irq: Option<irq_reach::IrqReach>,
    /// The tracker's steps of the current event (kept to reuse its allocation).
    steps: Vec<Step>,
}

impl Latency {
    pub fn new(opts: LatencyOptions) -> Self {
        Latency {
            irq: opts.irq.clone().map(irq_reach::IrqReach::new),
            opts,
            tasks: HashMap::default(),
            per_cpu: BTreeMap::new(),
            names: Default::default(),
            wakeups: Wakeups::default(),
            timerlat: timerlat::Timerlat::default(),
            osnoise: osnoise::Osnoise::default(),
            preemption: preemption::Preemption::default(),
            steps: Vec::new(),
        }
    }

    fn cpu_selected(&self, cpu: u32) -> bool {
        self.opts.cpus.is_empty() || self.opts.cpus.contains(&cpu)
    }

    /// The first `sched_waking` decides the definition for the whole trace: samples measured
    /// from `sched_wakeup` before it belong to the other definition and are discarded.
    fn redefine(&mut self) {
        self.per_cpu.clear();
        for t in self.tasks.values_mut() {
            t.lat = LatencyHistogram::default();
        }
    }

    /// A task's first known priority comes from its wake-up event; a switch's is preferred.
    fn learn_prio(&mut self, ev: &Event<'_>) {
        if let EventKind::SchedWaking { pid, prio, .. }
        | EventKind::SchedWakeup { pid, prio, .. }
        | EventKind::SchedWakeupNew { pid, prio, .. } = ev.kind
        {
            if pid != 0 {
                self.tasks.entry(pid).or_default().prio.get_or_insert(prio);
            }
        }
    }

    fn switch(&mut self, ts: Timestamp, cpu: u32, prev: i32, next: i32, next_prio: Option<i32>) {
        let selected = self.cpu_selected(cpu);
        if prev != 0 {
            let t = self.tasks.entry(prev).or_default();
            // A switch away from it on a CPU it has since left does not end its run.
            if let Some((_, since)) = t.running_since.take_if(|(c, _)| *c == cpu) {
                if selected {
                    // Saturating: a damaged trace's absurd timestamps must not wrap the sum.
                    t.runtime_ns = t.runtime_ns.saturating_add(ts.saturating_sub(since));
                }
            }
        }
        if next == 0 {
            return;
        }
        let t = self.tasks.entry(next).or_default();
        if next_prio.is_some() {
            t.prio = next_prio;
        }
        t.running_since = Some((cpu, ts));
        if selected {
            t.switches += 1;
        }
    }

    /// A lost switch-out would make the next on-CPU interval wrong: forgets the runs on
    /// `cpus` (on every CPU for `None`).
    fn forget_runs(&mut self, cpus: Option<&[u32]>) {
        for t in self.tasks.values_mut() {
            if cpus.map_or(true, |cpus| {
                t.running_since.is_some_and(|(c, _)| cpus.contains(&c))
            }) {
                t.running_since = None;
            }
        }
    }

    fn ran(&mut self, w: &Wake) {
        if !self.cpu_selected(w.cpu) {
            return;
        }
        let lat = w.run - w.start;
        self.tasks.entry(w.pid).or_default().lat.record(lat, w.run);
        self.per_cpu
            .entry(w.cpu)
            .or_default()
            .record_for(lat, w.run, w.pid);
    }

    /// What the wake-up tracker's `step` of `ev` means for the chains `--irq` follows.
    fn follow_irq(&mut self, ev: &Event<'_>, step: &Step) {
        let counted = match step {
            Step::End(w) => self.cpu_selected(w.cpu),
            _ => false,
        };
        let Some(irq) = &mut self.irq else {
            return;
        };
        match *step {
            Step::Start { pid } => irq.started(ev, pid),
            Step::End(ref w) => irq.ran(w, counted),
            Step::Switch { prev, .. } => irq.switched_out(prev),
            Step::Unmeasured { pid } => irq.forget(pid),
            Step::Impossible { .. } => irq.clear(),
            // Only a sched_waking's context can tie a wake-up to the interrupt.
            Step::Redefined | Step::Preempted(_) => {}
        }
    }

    /// A preemption wait ended: the task's distribution and its CPU's.
    fn preempted(&mut self, w: &Wake) {
        if !self.cpu_selected(w.cpu) {
            return;
        }
        let ns = w.run - w.start;
        let t = self.tasks.entry(w.pid).or_default();
        t.preempted.record(ns, w.run);
        self.preemption.waited(w.cpu, ns, w.run, w.pid);
    }

    /// Acts on what the wake-up tracker made of the event (most events make nothing, and
    /// skip this).
    fn follow_steps(&mut self, ev: &Event<'_>) {
        let mut steps = std::mem::take(&mut self.steps);
        if self.irq.is_some() {
            for step in &steps {
                self.follow_irq(ev, step);
            }
        }
        for step in steps.drain(..) {
            match step {
                Step::Switch {
                    ts,
                    cpu,
                    prev,
                    next,
                    next_prio,
                } => self.switch(ts, cpu, prev, next, next_prio),
                Step::End(w) => self.ran(&w),
                Step::Preempted(w) => self.preempted(&w),
                Step::Redefined => self.redefine(),
                Step::Impossible { cpus } => self.forget_runs(Some(&cpus)),
                Step::Start { .. } | Step::Unmeasured { .. } => {}
            }
        }
        self.steps = steps;
    }
}

impl EventSink for Latency {
    fn event(&mut self, ev: &Event<'_>) {
        if matches!(
            ev.kind,
            EventKind::SchedWaking { .. }
                | EventKind::SchedWakeup { .. }
                | EventKind::SchedWakeupNew { .. }
                | EventKind::SchedSwitch { .. }
        ) {
            self.names.observe(ev);
        }
        self.timerlat.observe(ev);
        self.osnoise.observe(ev);
        self.wakeups.event(ev, &mut self.steps);
        self.learn_prio(ev);
        if let Some(irq) = &mut self.irq {
            irq.observe(ev);
        }
        if !self.steps.is_empty() {
            self.follow_steps(ev);
        }
    }

    fn decode(&self) -> Decode {
        match self.irq {
            // Any interrupt's entry ends the visit of the one before; x86 names its vectors'
            // events freely, so every event is decoded.
            Some(_) => Decode::Typed,
            None => Decode::LATENCY,
        }
    }

    fn lost(&mut self, _cpu: Option<u32>, _count: Option<u64>) {
        self.wakeups.lost();
        self.forget_runs(None);
        if let Some(irq) = &mut self.irq {
            irq.clear();
        }
    }

    fn history_begins(&mut self, cpu: Option<u32>) {
        self.wakeups.history.begins(cpu);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtsleuth_trace::read::ftrace_text::read_bytes;

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

    /// With `task_histograms`, each row carries its own buckets, which hold its wake-ups.
    #[test]
    fn task_histograms_count_each_tasks_wake_ups() {
        let mut lat = Latency::new(LatencyOptions {
            task_histograms: true,
            ..LatencyOptions::default()
        });
        let text = "          <idle>-0       [001] d.h3.   100.000000: sched_waking: comm=ct pid=7 prio=19 target_cpu=001\n\
                      <idle>-0       [001] d..2.   100.000003: sched_switch: prev_comm=swapper/1 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=ct next_pid=7 next_prio=19\n\
                          ct-7       [001] d..2.   100.000020: sched_switch: prev_comm=ct prev_pid=7 prev_prio=19 prev_state=S ==> next_comm=swapper/1 next_pid=0 next_prio=120\n\
                      <idle>-0       [001] d.h3.   100.001000: sched_waking: comm=ct pid=7 prio=19 target_cpu=001\n\
                      <idle>-0       [001] d..2.   100.001040: sched_switch: prev_comm=swapper/1 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=ct next_pid=7 next_prio=19\n";
        let info = read_bytes("t", text.as_bytes().to_vec(), 1 << 16, &mut lat).unwrap();
        let tasks = lat.document(&info).json["tasks"].clone();
        // 3 us in [2, 4), 40 us in [32, 64).
        assert_eq!(
            tasks[0]["histogram"],
            serde_json::json!([
                {"lt_us": 4, "count": 1}, {"lt_us": 8, "count": 0}, {"lt_us": 16, "count": 0},
                {"lt_us": 32, "count": 0}, {"lt_us": 64, "count": 1},
            ])
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
        // Only that the trace has no wake-up events: nothing is said of what was inferred.
        assert_eq!(warnings, [crate::wakeups::NO_WAKEUP_EVENTS], "{warnings:?}");
    }
}
