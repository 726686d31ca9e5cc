//! `rtsleuth explain`: why each late wake-up of the target tasks was late.
//!
//! # Method
//! A wake-up is measured as in [`crate::analyze::latency`] (`sched_waking`, or `sched_wakeup`
//! in traces without it, to the `sched_switch` that runs the task), and is explained from the
//! time the task was *due*:
//! - **timer**: the task armed an hrtimer (`hrtimer_start function=hrtimer_wakeup`, on the
//!   task's own line) and that timer's callback woke it. It was due at the timer's
//!   `softexpires=` (what the task asked for; the slack is part of the lateness), converted to
//!   the trace clock by [`clock::HrtimerClock`].
//! - **tracemark**: `cyclictest --tracemark` wrote `hit latency threshold (X > Y)` after the
//!   task ran: it was due X µs before it was switched in.
//! - **period**: the task wakes periodically; its due time is estimated from its rhythm
//!   ([`period`]).
//! - **wakeup**: nothing says when it was due; only the time after the wake-up is explained.
//!
//! The latency is then cut into components (see [`decompose`]): every nanosecond from the due
//! time to the switch belongs to exactly one component, so they add up to the latency.
//!
//! # Targets
//! `--pid` / `--task` / `--all`; by default every real-time task (prio below 100), narrowed at
//! the end to the task a cyclictest mark names when the trace has one.
//!
//! # Memory
//! Each CPU keeps a bounded look-back history ([`timeline`]); each target task keeps its wake-up
//! in flight, its last explained one, its `top` worst findings and an aggregate per kind and
//! culprit. Nothing grows with the length of the trace.

mod cause;
mod clock;
mod decompose;
mod finding;
mod period;
mod report;
mod timeline;
mod victim;

pub use cause::{Cause, Phase, Source};
pub use clock::HrtimerClock;

use crate::analyze::names::Names;
use crate::event::{Event, EventKind, Timestamp};
use crate::read::{Decode, EventSink};
use decompose::{decompose, WakeUp};
use finding::{Finding, RunAt};
use rustc_hash::FxHashMap as HashMap;
use timeline::CpuTimeline;
use victim::{Explained, Victim};

/// Which tasks to explain and how much to report.
#[derive(Debug, Clone)]
pub struct ExplainOptions {
    /// Only these pids.
    pub pids: Vec<i32>,
    /// Only tasks whose comm contains one of these.
    pub comms: Vec<String>,
    /// Every task, not only real-time ones.
    pub all: bool,
    /// How many of the worst findings to report.
    pub top: usize,
    /// Explain every wake-up at least this late and aggregate them.
    pub threshold_us: Option<f64>,
}

impl Default for ExplainOptions {
    fn default() -> Self {
        ExplainOptions {
            pids: Vec::new(),
            comms: Vec::new(),
            all: false,
            top: 5,
            threshold_us: None,
        }
    }
}

/// The streaming analysis.
#[derive(Debug)]
pub struct Explain {
    opts: ExplainOptions,
    cpus: Vec<Option<CpuTimeline>>,
    names: Names,
    tasks: crate::analyze::TaskNames,
    /// Last known priority of every task.
    prios: HashMap<i32, i32>,
    clock: HrtimerClock,
    /// The `hrtimer_wakeup` timer each task armed last: (hrtimer, softexpires).
    armed: HashMap<i32, (u64, u64)>,
    victims: HashMap<i32, Victim>,
    waking_seen: bool,
    /// Tasks that wrote cyclictest's `hit latency threshold` mark.
    marked: Vec<i32>,
    dropped_by_lost: u64,
}

impl Explain {
    pub fn new(opts: ExplainOptions) -> Explain {
        Explain {
            opts,
            cpus: Vec::new(),
            names: Names::default(),
            tasks: Default::default(),
            prios: HashMap::default(),
            clock: HrtimerClock::default(),
            armed: HashMap::default(),
            victims: HashMap::default(),
            waking_seen: false,
            marked: Vec::new(),
            dropped_by_lost: 0,
        }
    }

    fn threshold_ns(&self) -> u64 {
        self.opts
            .threshold_us
            .map_or(0, |us| (us * 1e3).round() as u64)
    }

    fn is_target(&self, pid: i32, prio: i32) -> bool {
        if pid == 0 {
            return false;
        }
        let o = &self.opts;
        if !o.pids.is_empty() || !o.comms.is_empty() {
            let comm = self.tasks.get(pid);
            return o.pids.contains(&pid) || o.comms.iter().any(|c| comm.contains(c.as_str()));
        }
        o.all || prio < 100
    }

    /// A wake-up of `pid` by an event on `ev.cpu`, the task to be queued on `target`.
    fn woken(&mut self, ev: &Event<'_>, pid: i32, prio: i32, target: Option<u32>, is_waking: bool) {
        if is_waking && !self.waking_seen {
            // From now on wake-ups start at sched_waking; those started at sched_wakeup are
            // measured by the other definition and are dropped.
            self.waking_seen = true;
            self.victims.values_mut().for_each(|v| v.pending = None);
        }
        if is_waking != self.waking_seen || !self.is_target(pid, prio) {
            return;
        }
        let (threshold, top) = (self.threshold_ns(), self.opts.top);
        let context = timeline(&mut self.cpus, ev.cpu, ev.ts).wake_context();
        let armed = self.armed.get(&pid).copied();
        // A timer wake-up was due at the armed expiry, converted with the calibration of the CPU
        // it fired on (now the timer's own expiry event, the most exact point there is), and
        // never after its callback started.
        let (own_timer, timer_due) = match (armed, context.callback) {
            (Some((hrtimer, softexpires)), Some((fired, entry))) if hrtimer == fired => (
                Some(hrtimer),
                self.clock
                    .to_trace(ev.cpu, softexpires)
                    .map(|due| due.min(entry)),
            ),
            _ => (None, None),
        };
        let v = self.victims.entry(pid).or_default();
        // Its own timer fired in an interrupt of the task itself (the event's task): it expired
        // before the task could sleep. Without flags the return to task context is invisible.
        let in_place = v.running && ev.pid == pid && own_timer.is_some() && ev.flags.known;
        if (v.running && !in_place) || v.pending.is_some() {
            return;
        }
        v.commit(threshold, top);
        let period_due = v.rhythm.wake(ev.ts);
        let due = match (timer_due, period_due) {
            (Some(t), _) => Some((t, Source::Timer)),
            (None, Some(p)) => Some((p, Source::Period)),
            _ => None,
        };
        if own_timer.is_some() {
            self.armed.remove(&pid);
        }
        v.pending = Some(WakeUp {
            pid,
            prio,
            wakeup: ev.ts,
            waker_cpu: ev.cpu,
            context,
            own_timer,
            due,
            queue: vec![(target.unwrap_or(ev.cpu), ev.ts)],
            in_place,
        });
    }

    /// A task woken in place runs again at its first event outside interrupt context on that
    /// CPU; its switch out, if it comes first, is such an event.
    fn resume_in_place(&mut self, ev: &Event<'_>) {
        if ev.flags.hardirq || ev.flags.softirq || ev.flags.nmi {
            return;
        }
        let resumes = self
            .victims
            .get(&ev.pid)
            .and_then(|v| v.pending.as_ref())
            .is_some_and(|w| w.in_place && w.waker_cpu == ev.cpu && ev.ts > w.wakeup);
        if resumes {
            self.switched_in(ev.pid, ev.cpu, ev.ts);
        }
    }

    /// `pid` was switched in on `cpu` at `ts`.
    fn switched_in(&mut self, pid: i32, cpu: u32, ts: Timestamp) {
        let Some(v) = self.victims.get_mut(&pid) else {
            return;
        };
        v.running = true;
        let Some(mut wake) = v.pending.take() else {
            return;
        };
        if wake.wakeup > ts {
            // Switched in before it was woken: CPU clocks out of step or a damaged trace. There
            // is no latency to explain, and `latency` skips such a wake-up too.
            return;
        }
        if wake.queue.last().is_some_and(|&(c, _)| c != cpu) {
            // Moved without a traced migration: it waited on this CPU from the wake-up on.
            wake.queue = vec![(cpu, wake.wakeup)];
        }
        let (expected, source) = match wake.due {
            Some((due, source)) => (Some(due), source),
            None => (None, Source::Wakeup),
        };
        let finding = self.explain(&wake, source, expected, cpu, ts);
        let v = self.victims.get_mut(&pid).expect("victim looked up above");
        v.wakeups += 1;
        v.last = Some(Explained { wake, finding });
    }

    fn explain(
        &self,
        wake: &WakeUp,
        source: Source,
        expected: Option<Timestamp>,
        cpu: u32,
        run: Timestamp,
    ) -> Finding {
        let expected = expected.map(|e| e.min(run));
        Finding {
            pid: wake.pid,
            prio: self.prios.get(&wake.pid).copied().unwrap_or(wake.prio),
            cpu,
            source,
            expected,
            wakeup: wake.wakeup,
            waker_cpu: wake.waker_cpu,
            wake_irq_entry: wake.context.irq_entry,
            run,
            run_at: if wake.in_place {
                RunAt::Resumed
            } else {
                RunAt::Switch
            },
            components: decompose(&self.cpus, &self.names, wake, expected, run),
        }
    }

    /// cyclictest's `hit latency threshold (X > Y)`: the task's last wake-up ran X µs after it
    /// was due. A timer-based expected time is exact and stays; otherwise the mark gives it.
    fn threshold_mark(&mut self, pid: i32, latency_us: f64, mark: Timestamp) {
        if !self.marked.contains(&pid) {
            self.marked.push(pid);
        }
        let Some(done) = self.victims.get(&pid).and_then(|v| v.last.as_ref()) else {
            return;
        };
        if done.finding.source == Source::Timer {
            self.extend_to_mark(pid, latency_us, mark);
            return;
        }
        let run = done.finding.run;
        // The thread cannot have been due after it was woken: a mark smaller than the visible
        // wait (cyclictest rounds to whole µs) starts at the wake-up.
        let expected = run
            .saturating_sub((latency_us * 1e3).round() as u64)
            .min(done.wake.wakeup);
        let finding = self.explain(
            &done.wake,
            Source::Tracemark,
            Some(expected),
            done.finding.cpu,
            run,
        );
        self.replace_last_finding(pid, finding);
    }

    /// cyclictest reads its clock after it is switched in, so its figure also holds what
    /// interrupted it before that read. When its mark says much more than the exactly timed
    /// wake-up (more than [`MARK_EXCESS_NS`]), the time from the switch to the mark is where
    /// the rest went: the finding is explained up to the mark, so that time is named too.
    fn extend_to_mark(&mut self, pid: i32, latency_us: f64, mark: Timestamp) {
        let Some(done) = self.victims.get(&pid).and_then(|v| v.last.as_ref()) else {
            return;
        };
        let marked_ns = (latency_us * 1e3).round() as u64;
        if marked_ns <= done.finding.latency_ns() + MARK_EXCESS_NS || mark <= done.finding.run {
            return;
        }
        let mut finding = self.explain(
            &done.wake,
            Source::Timer,
            done.finding.expected,
            done.finding.cpu,
            mark,
        );
        finding.run_at = RunAt::Mark;
        self.replace_last_finding(pid, finding);
    }

    /// A cyclictest mark re-explained `pid`'s last wake-up.
    fn replace_last_finding(&mut self, pid: i32, finding: Finding) {
        if let Some(done) = self.victims.get_mut(&pid).and_then(|v| v.last.as_mut()) {
            done.finding = finding;
        }
    }
}

/// How far cyclictest's mark may exceed a timer-timed latency before the time after the switch
/// is explained too: cyclictest's own path from the switch to its clock read is tens of µs.
const MARK_EXCESS_NS: u64 = 1_000_000;

/// The history of `cpu`, begun at `ts` if this is its first event.
fn timeline(cpus: &mut Vec<Option<CpuTimeline>>, cpu: u32, ts: Timestamp) -> &mut CpuTimeline {
    let i = cpu as usize;
    if i >= cpus.len() {
        cpus.resize_with(i + 1, || None);
    }
    cpus[i].get_or_insert_with(|| CpuTimeline::new(ts))
}

/// The latency in µs of cyclictest's `hit latency threshold (X > Y)` mark.
fn threshold_latency_us(text: &str) -> Option<f64> {
    let rest = &text[text.find("hit latency threshold (")? + "hit latency threshold (".len()..];
    rest.split_once(" > ")?.0.trim().parse().ok()
}

impl EventSink for Explain {
    fn event(&mut self, ev: &Event<'_>) {
        self.tasks.observe(ev);
        let prios = &self.prios;
        let tl = timeline(&mut self.cpus, ev.cpu, ev.ts);
        let switched = tl.on_event(ev, &mut self.names, |pid| prios.get(&pid).copied());
        for (pid, prio) in ev.kind.task_prios().into_iter().flatten() {
            self.prios.insert(pid, prio);
        }
        self.resume_in_place(ev);
        match ev.kind {
            EventKind::SchedSwitch { prev_pid, .. } => {
                if let Some(v) = self.victims.get_mut(&prev_pid) {
                    v.running = false;
                }
            }
            EventKind::SchedWaking {
                pid,
                prio,
                target_cpu,
                ..
            } => self.woken(ev, pid, prio, target_cpu, true),
            EventKind::SchedWakeup {
                pid,
                prio,
                target_cpu,
                ..
            }
            | EventKind::SchedWakeupNew {
                pid,
                prio,
                target_cpu,
                ..
            } => {
                self.woken(ev, pid, prio, target_cpu, false);
                if let (Some(w), Some(cpu)) = (
                    self.victims.get_mut(&pid).and_then(|v| v.pending.as_mut()),
                    target_cpu,
                ) {
                    if w.queue.last().is_some_and(|&(c, _)| c != cpu) {
                        w.queue.push((cpu, ev.ts));
                    }
                }
            }
            EventKind::SchedMigrateTask { pid, dest_cpu, .. } => {
                if let Some(w) = self.victims.get_mut(&pid).and_then(|v| v.pending.as_mut()) {
                    w.queue.push((dest_cpu, ev.ts));
                }
            }
            EventKind::HrtimerStart {
                hrtimer,
                function,
                softexpires,
                ..
            } if function == "hrtimer_wakeup" && ev.pid != 0 => {
                self.armed.insert(ev.pid, (hrtimer, softexpires));
            }
            EventKind::HrtimerExpireEntry { now, .. } => self.clock.observe(ev.cpu, ev.ts, now),
            EventKind::Marker { text, .. } => {
                if let Some(us) = threshold_latency_us(text) {
                    self.threshold_mark(ev.pid, us, ev.ts);
                }
            }
            _ => {}
        }
        if let Some(pid) = switched {
            self.switched_in(pid, ev.cpu, ev.ts);
        }
    }

    fn decode(&self) -> Decode {
        Decode::Everything
    }

    fn lost(&mut self, cpu: Option<u32>, _count: Option<u64>) {
        for v in self.victims.values_mut() {
            self.dropped_by_lost += u64::from(v.pending.take().is_some());
            v.running = false;
        }
        for (i, tl) in self.cpus.iter_mut().enumerate() {
            if let Some(tl) = tl
                .as_mut()
                .filter(|_| cpu.map_or(true, |c| c as usize == i))
            {
                tl.lost();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_cyclictest_marks() {
        assert_eq!(
            threshold_latency_us("hit latency threshold (1952 > 1000)"),
            Some(1952.0)
        );
        assert_eq!(
            threshold_latency_us("tracing_mark_write: hit latency threshold (37 > 20)"),
            Some(37.0)
        );
        assert_eq!(threshold_latency_us("fifo_burst start 300"), None);
        assert_eq!(threshold_latency_us("hit latency threshold (x > 3)"), None);
    }
}
