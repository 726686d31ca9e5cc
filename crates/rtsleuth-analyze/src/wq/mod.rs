//! `rtsleuth wq`: workqueue latency per work function, workqueue and kworker.
//!
//! # Definition
//! - `workqueue_queue_work` (work `W`, function `F`, workqueue `Q`, `cpu=C`) makes `W` pending.
//!   `queue_work()` on a `W` already pending does nothing and traces nothing, but
//!   `mod_delayed_work()` takes a pending `W` back off its list and queues it again (block
//!   layer and writeback works do this all the time), so a second queue event of a pending `W`
//!   is real: `W` runs from the later queueing, which replaces the earlier one (counted as
//!   requeued). A delayed work is traced when its timer queues it, so its delay is not wait.
//! - `workqueue_activate_work` notes when a pending `W` reached the worklist (later than its
//!   queueing when the workqueue's `max_active` held it back).
//! - `workqueue_execute_start` of `W` with function `F` by kworker `P`: if `W` is pending with
//!   the same function, its *wait* is the time since its queueing, counted for `F` and `Q`;
//!   otherwise the execution has no queue event (queued before the trace began, a flush
//!   barrier `wq_barrier_func`, which the kernel inserts without a queue event, or a reused
//!   pointer). A start while `P` still runs a work means that end was missed.
//! - `workqueue_execute_end` of `W` by `P` ends `P`'s execution of `W`: its *execution time*.
//! - Works still executing when the trace ends are unfinished (they appear in the worst waits
//!   but have no execution time), works still pending never started, and `[LOST n EVENTS]`
//!   forgets everything pending and executing.
//! - *Behind real-time tasks*: for a work queued for a CPU (a bound workqueue) and started on
//!   it, the time tasks of kernel prio < 100 ran on that CPU between queue and start, with
//!   the last such task named. Unbound works may run anywhere: not measured.
//!
//! State is one entry per pending work, one per executing kworker, per-CPU real-time totals,
//! and per function / workqueue / kworker histograms: bounded by what the kernel has in
//! flight, never by the trace's length.

mod explained;
mod occurrence;
mod report;
pub(crate) use report::dist_json;
pub use report::WqTimings;
mod rt_time;
mod stats;

use occurrence::{Occurrence, Worst};
use rt_time::RtTime;
use rtsleuth_trace::event::{Event, EventKind, Timestamp};
use rtsleuth_trace::read::{Decode, EventSink};
use rustc_hash::FxHashMap as HashMap;
use stats::{add_once, FunctionStats, KworkerStats, Named, WorkqueueStats};

/// What to show.
#[derive(Debug, Clone)]
pub struct WqOptions {
    /// How many of the worst waits and longest executions to list.
    pub top: usize,
}

impl Default for WqOptions {
    fn default() -> Self {
        WqOptions { top: 10 }
    }
}

/// A queued work that has not started.
#[derive(Debug, Clone, Copy)]
struct Pending {
    ts: Timestamp,
    function: usize,
    workqueue: usize,
    target: Option<u32>,
    activate_ts: Option<Timestamp>,
    /// The target CPU's real-time reading at the queueing.
    rt_reading: Option<u64>,
}

/// What went unmatched, each for a reason the report explains.
#[derive(Debug, Default)]
struct Counts {
    requeued: u64,
    unqueued: u64,
    unfinished: u64,
    unmatched_ends: u64,
    dropped_by_lost: u64,
}

/// The streaming analysis.
#[derive(Debug)]
pub struct Wq {
    functions: Named<FunctionStats>,
    workqueues: Named<WorkqueueStats>,
    kworkers: HashMap<i32, KworkerStats>,
    pending: HashMap<u64, Pending>,
    /// The execution each kworker is in.
    executing: HashMap<i32, Occurrence>,
    rt: RtTime,
    names: super::TaskNames,
    worst_wait: Worst,
    worst_exec: Worst,
    counts: Counts,
    /// What explains the worst waits: the kworker's wake-up by the queueing, as `explain`
    /// cuts it.
    explained: explained::ExplainedWaits,
}

/// The events the analysis reads.
const EVENTS: &[&str] = &[
    "sched_switch",
    "workqueue_queue_work",
    "workqueue_activate_work",
    "workqueue_execute_start",
    "workqueue_execute_end",
];

impl Wq {
    pub fn new(opts: WqOptions) -> Wq {
        Wq {
            worst_wait: Worst::new(opts.top),
            worst_exec: Worst::new(opts.top),
            functions: Named::default(),
            workqueues: Named::default(),
            kworkers: HashMap::default(),
            pending: HashMap::default(),
            executing: HashMap::default(),
            rt: RtTime::default(),
            names: Default::default(),
            counts: Counts::default(),
            explained: explained::ExplainedWaits::new(opts.top),
        }
    }

    fn queue(
        &mut self,
        ts: Timestamp,
        work: u64,
        function: &str,
        workqueue: &str,
        target: Option<u32>,
    ) {
        let function = self.functions.id(function);
        let workqueue = self.workqueues.id(workqueue);
        let wq = self.workqueues.get_mut(workqueue);
        wq.queued += 1;
        add_once(&mut wq.targets, target);
        let pending = Pending {
            ts,
            function,
            workqueue,
            target,
            activate_ts: None,
            rt_reading: target.map(|cpu| self.rt.reading(cpu, ts)),
        };
        if self.pending.insert(work, pending).is_some() {
            self.counts.requeued += 1;
        }
    }

    fn start(&mut self, ev: &Event<'_>, work: u64, function: &str) {
        let function = self.functions.id(function);
        let queued = self
            .pending
            .remove(&work)
            .filter(|p| p.function == function);
        let mut occ = Occurrence {
            work,
            function,
            workqueue: None,
            pid: ev.pid,
            cpu: ev.cpu,
            queue_ts: None,
            activate_ts: None,
            start_ts: ev.ts,
            end_ts: None,
            rt_wait_ns: None,
            rt_culprit: None,
        };
        let f = self.functions.get_mut(function);
        f.executions += 1;
        *f.kworkers.entry(ev.pid).or_default() += 1;
        match queued {
            None => self.counts.unqueued += 1,
            Some(p) => {
                self.explained.started(ev.pid, p.ts, ev.ts);
                let wait = ev.ts.saturating_sub(p.ts);
                f.timing.wait.record(wait, ev.ts);
                add_once(&mut f.workqueues, p.workqueue);
                self.workqueues
                    .get_mut(p.workqueue)
                    .timing
                    .wait
                    .record(wait, ev.ts);
                occ.workqueue = Some(p.workqueue);
                occ.queue_ts = Some(p.ts);
                occ.activate_ts = p.activate_ts;
                if let (Some(before), true) = (p.rt_reading, p.target == Some(ev.cpu)) {
                    let behind = self.rt.reading(ev.cpu, ev.ts).saturating_sub(before);
                    occ.rt_wait_ns = Some(behind);
                    occ.rt_culprit = (behind > 0).then(|| self.rt.last(ev.cpu)).flatten();
                }
            }
        }
        let k = self.kworkers.entry(ev.pid).or_default();
        k.executions += 1;
        add_once(&mut k.cpus, ev.cpu);
        if let Some(unended) = self.executing.insert(ev.pid, occ) {
            self.counts.unfinished += 1;
            self.close(unended);
        }
    }

    fn end(&mut self, ev: &Event<'_>, work: u64) {
        let Some(mut occ) = self.executing.remove(&ev.pid).filter(|o| o.work == work) else {
            self.counts.unmatched_ends += 1;
            return;
        };
        occ.end_ts = Some(ev.ts);
        let exec = ev.ts.saturating_sub(occ.start_ts);
        self.functions
            .get_mut(occ.function)
            .timing
            .exec
            .record(exec, occ.start_ts);
        if let Some(q) = occ.workqueue {
            self.workqueues
                .get_mut(q)
                .timing
                .exec
                .record(exec, occ.start_ts);
        }
        let k = self.kworkers.entry(ev.pid).or_default();
        k.busy_ns = k.busy_ns.saturating_add(exec);
        self.close(occ);
    }

    /// An execution that is over (or will never be seen to end) competes for the worst lists.
    fn close(&mut self, occ: Occurrence) {
        if let Some(w) = occ.wait_ns() {
            self.worst_wait.offer(w, occ);
        }
        if let Some(e) = occ.exec_ns() {
            self.worst_exec.offer(e, occ);
        }
    }
}

impl EventSink for Wq {
    fn event(&mut self, ev: &Event<'_>) {
        self.explained.explain.event(ev);
        self.names.observe(ev);
        match ev.kind {
            EventKind::SchedSwitch {
                next_pid,
                next_prio,
                ..
            } => {
                self.rt.switch(ev.cpu, ev.ts, next_pid, next_prio);
                self.explained.switched_in(next_pid, ev.ts);
            }
            EventKind::WorkqueueQueueWork {
                work,
                function,
                workqueue,
                cpu,
                ..
            } => self.queue(ev.ts, work, function, workqueue, cpu),
            EventKind::WorkqueueActivateWork { work } => {
                if let Some(p) = self.pending.get_mut(&work) {
                    p.activate_ts.get_or_insert(ev.ts);
                }
            }
            EventKind::WorkqueueExecuteStart { work, function } => self.start(ev, work, function),
            EventKind::WorkqueueExecuteEnd { work, .. } => self.end(ev, work),
            _ => {}
        }
    }

    fn decode(&self) -> Decode {
        Decode::Only(EVENTS).union(self.explained.explain.decode())
    }

    fn format(&mut self, format: rtsleuth_trace::input::Format) {
        self.explained.explain.format(format);
    }

    fn history_begins(&mut self, cpu: Option<u32>) {
        self.explained.explain.history_begins(cpu);
    }

    fn lost(&mut self, cpu: Option<u32>, count: Option<u64>) {
        self.explained.explain.lost(cpu, count);
        self.explained.lost();
        self.counts.dropped_by_lost += (self.pending.len() + self.executing.len()) as u64;
        self.pending.clear();
        self.executing.clear();
        self.rt.forget_running();
    }
}
