//! When a wake-up starts and when it ends: the one definition `latency` and `explain` share,
//! so that every wake-up `explain` reports is one `latency` counts, with the same timestamps.
//!
//! # Definition
//! - A wake-up starts at `sched_waking` (the first event of a wake-up, on the waker's CPU) once
//!   the trace has shown any `sched_waking`; in traces recorded without it, at `sched_wakeup` /
//!   `sched_wakeup_new`. The first `sched_waking` therefore discards every wake-up started the
//!   other way ([`Step::Redefined`]).
//! - It starts only while the task is not running and has no wake-up pending: a second wake-up
//!   of a task already woken does not restart the clock, and a wake-up of a running task is no
//!   wake-up, with one exception: the wake-up emitted in an interrupt on top of the task itself
//!   (its CPU's current task, flags known). The kernel traces a wake-up only for a task that
//!   has already declared itself asleep, so this task was on its way to sleep when, say, its
//!   own timer fired: it was due and goes on where it is, without a switch, *in place*.
//! - It ends at the `sched_switch` that runs the task, on whichever CPU. A task can also be
//!   seen running (the current task of an event) on a CPU the trace never switched it to: the
//!   switch was not traced (some kernels never trace the switch out of an idle CPU), and the
//!   wake-up ends at that first event, an upper bound of the real time ([`RunAt::Inferred`]).
//! - An in-place wake-up ends when its CPU is back in task context: at the last event in
//!   interrupt context before the first task-context event there ([`RunAt::Resumed`]), so the
//!   softirqs run on the way out count and the task's own run after them does not.
//! - try_to_wake_up traces `sched_waking` before it waits for the task to finish switching
//!   out, so a trace can show the waking of a task still running, then its own switch-out
//!   asleep (`prev_state` not R), then `sched_wakeup`. That wake-up is *raced*: it starts at
//!   the switch-out, the first moment the task could run again. A waking of a running task
//!   that never switches out is none (the task never stopped).
//! - Only what the trace recorded is measured ([`rtsleuth_trace::validity`]): a wake-up that starts
//!   before the common window, or that touched a CPU not yet recorded (the waker's, the
//!   target, a migration's destination, the CPU it ran on), is dropped ([`Step::Unmeasured`]).
//! - A trace that contradicts itself (a task switched in on one CPU while the switches say it
//!   runs on another; a switch away from a task the CPU was not running; time going backwards
//!   on one CPU) lost events without saying so: it is treated as a loss on the CPUs involved
//!   ([`Step::Impossible`]). A pid forked anew drops what the trace said of its old task.
//! - The idle task (pid 0) is never measured. `[LOST n EVENTS]` discards every wake-up in
//!   flight, because the events that would end or restart it may be the ones lost, and forgets
//!   who runs where until each CPU's next event says so.

use rtsleuth_trace::event::{Event, EventKind, TaskState, Timestamp};
use rtsleuth_trace::validity::History;
use rustc_hash::FxHashMap as HashMap;

/// What every command that measures wake-ups says of a trace without wake-up events, and
/// what to record instead.
pub const NO_WAKEUP_EVENTS: &str = "the trace has no sched_waking or sched_wakeup events, so no wake-up latency can be measured from it (record sched:sched_waking, or sched:sched_wakeup, with sched:sched_switch); what it holds is still reported";

/// How a wake-up's end is known.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RunAt {
    /// A traced `sched_switch` to the task.
    #[default]
    Switch,
    /// The task's first event on a CPU it was not switched to in the trace.
    Inferred,
    /// Its return to task context on the CPU it never left.
    Resumed,
}

impl RunAt {
    pub fn as_str(self) -> &'static str {
        match self {
            RunAt::Switch => "switch",
            RunAt::Inferred => "inferred",
            RunAt::Resumed => "resumed",
        }
    }
}

/// One wake-up, from its start to the moment the task ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Wake {
    pub pid: i32,
    pub start: Timestamp,
    pub run: Timestamp,
    /// The CPU it ran on.
    pub cpu: u32,
    /// The priority it was switched in with, when the switch says.
    pub prio: Option<i32>,
    pub run_at: RunAt,
}

/// What one event meant for the wake-ups, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// `next` runs on `cpu` from `ts` on, in place of `prev`; `next_prio` when a traced switch
    /// printed it.
    Switch {
        ts: Timestamp,
        cpu: u32,
        prev: i32,
        next: i32,
        next_prio: Option<i32>,
    },
    /// A wake-up of `pid` starts with this event.
    Start {
        pid: i32,
    },
    End(Wake),
    /// The first `sched_waking`: every wake-up started at `sched_wakeup` is discarded, and what
    /// was measured so far followed the other definition.
    Redefined,
    /// The wake-up of `pid` is not measured: it lies (partly) where the trace recorded nothing,
    /// or its pid went to a new task before it ended.
    Unmeasured {
        pid: i32,
    },
    /// `Wake::pid` waited runnable from its switch-out (`prev_state` R or R+: preempted) to
    /// the switch-in that ran it again: a preemption wait, measured like a wake-up.
    Preempted(Wake),
    /// The trace contradicts itself on these CPUs: events were lost there without a marker.
    /// Every wake-up in flight was dropped; what ran there since is not to be trusted.
    Impossible {
        cpus: [u32; 2],
    },
}

#[derive(Debug, Default)]
struct Task {
    /// The CPU it runs on. A task runs on one CPU at a time: a switch away from it on another
    /// CPU (inferred from a stale view of that CPU) does not stop it here.
    on_cpu: Option<u32>,
    /// Start of the wake-up in flight.
    pending: Option<Timestamp>,
    /// The wake-up in flight touched a CPU before that CPU's recorded history began.
    unrecorded: bool,
    /// A `sched_waking` came while it still ran: its switch-out asleep starts the wake-up.
    racing: bool,
    /// Switched out still runnable (preempted): the wait for its next switch-in began here.
    preempted: Option<Timestamp>,
}

/// An in-place wake-up in flight on a CPU.
#[derive(Debug, Clone, Copy)]
struct InPlace {
    pid: i32,
    /// The latest event in interrupt context on the CPU since the wake-up.
    last_irq: Timestamp,
}

/// Per CPU: who runs there, as far as the trace has shown, and an in-place wake-up in flight.
#[derive(Debug, Default, Clone, Copy)]
struct Cpu {
    current: Option<i32>,
    in_place: Option<InPlace>,
}

/// The wake-up tracker. Feed it every event; it appends what each one meant to a buffer the
/// caller drains, so the caller keeps no second copy of this bookkeeping.
#[derive(Debug, Default)]
pub struct Wakeups {
    tasks: HashMap<i32, Task>,
    cpus: Vec<Cpu>,
    waking_seen: bool,
    /// Some wake-up event (`sched_waking`, `sched_wakeup`, `sched_wakeup_new`) was traced.
    wakeup_seen: bool,
    /// Switch-ins inferred from a task seen running that no `sched_switch` put there.
    pub untraced_switches: u64,
    /// Wake-ups in flight discarded by lost events.
    pub dropped_by_lost: u64,
    /// Wake-ups whose task was already running where a CPU's history begins.
    pub dropped_unseen: u64,
    /// Wake-ups that began before the common window or touched a CPU not yet recorded.
    pub dropped_before_window: u64,
    /// Wake-ups started at the task's own switch-out, after a waking that raced it.
    pub raced: u64,
    /// Contradictions treated as losses (see [`Step::Impossible`]).
    pub impossible: u64,
    /// Pids forked anew while the trace still had their old task waiting or running.
    pub pid_reused: u64,
    /// Where each CPU's recorded history begins.
    pub history: History,
}

impl Wakeups {
    /// Adds what the trace's validity did to the measurement to a document's `trace` object
    /// and its warnings: where the common window begins, and what was not measured or was
    /// measured from a raced switch-out.
    pub fn annotate(&self, trace: &mut serde_json::Value, warnings: &mut Vec<String>) {
        let window = self.history.window_start();
        trace["window_start"] = window.map(rtsleuth_trace::event::ts_to_secs).into();
        trace["dropped_before_window"] = self.dropped_before_window.into();
        trace["raced_wakeups"] = self.raced.into();
        trace["impossible_states"] = (self.impossible + self.pid_reused).into();
        if let (Some(w), n) = (window, self.dropped_before_window) {
            warnings.push(format!(
                "older events were overwritten, so each CPU's history begins at a different time: every CPU is recorded from {} on; {n} wake-ups that began earlier, or touched a CPU not yet recorded, were not measured",
                crate::document::fmt_ts(w)
            ));
        } else if self.dropped_before_window > 0 {
            warnings.push(format!(
                "{} wake-ups touched a CPU before its recorded history began and were not measured",
                self.dropped_before_window
            ));
        }
        if !self.wakeup_seen {
            warnings.push(NO_WAKEUP_EVENTS.to_string());
        }
        let silent = self.history.never_seen();
        if !silent.is_empty() {
            warnings.push(format!(
                "CPU {silent:?} recorded no event, and in this trace each CPU's history begins at its first event (older ones may have been overwritten): while waiting for it, no wake-up was measured"
            ));
        }
        if self.impossible > 0 {
            warnings.push(format!(
                "the trace contradicts itself {} times (a task on two CPUs at once, a switch away from a task the CPU was not running, time going backwards on a CPU): events were lost there unmarked, and what was in flight was dropped",
                self.impossible
            ));
        }
        if self.pid_reused > 0 {
            warnings.push(format!(
                "{} pids were forked anew while their old task still waited or ran in the trace (its exit or switch-out was not recorded): the old task's state was dropped",
                self.pid_reused
            ));
        }
        if self.raced > 0 {
            warnings.push(format!(
                "{} wake-ups raced their task's own switch-out (sched_waking before it slept): they are measured from the switch-out",
                self.raced
            ));
        }
    }

    /// Whether the trace holds any wake-up event to start a wake-up at.
    pub fn saw_wakeups(&self) -> bool {
        self.wakeup_seen
    }

    /// The event wake-ups start at: `sched_waking` once the trace has shown one.
    pub fn start_event(&self) -> &'static str {
        if self.waking_seen {
            "sched_waking"
        } else {
            "sched_wakeup"
        }
    }

    pub fn event(&mut self, ev: &Event<'_>, out: &mut Vec<Step>) {
        let cpu = ev.cpu as usize;
        if cpu >= self.cpus.len() {
            self.cpus.resize(cpu + 1, Cpu::default());
        }
        if !self.history.event(ev.ts, ev.cpu) {
            self.contradiction([ev.cpu, ev.cpu], out);
        }
        self.resume_in_place(ev, out);
        match self.cpus[cpu].current {
            // An unknown task (perf prints a dying one as pid -1) says nothing about who runs,
            // nor does a column that names the task a switch just took the CPU from.
            _ if ev.pid < 0 || !ev.shows_current_task() => {}
            Some(pid) if pid == ev.pid => {}
            Some(prev) => {
                self.untraced_switches += 1;
                self.switch(ev.ts, ev.cpu, prev, ev.pid, None, out);
                // When it left is not recorded: a waking that raced it has no switch-out to
                // start from.
                if let Some(t) = self.tasks.get_mut(&prev) {
                    t.racing = false;
                }
            }
            // The first event of a CPU only says who was already running there: a wake-up (or
            // preemption wait) of that task still in flight ended at some untraced moment
            // before, and is dropped.
            None => {
                self.cpus[cpu].current = Some(ev.pid);
                if ev.pid != 0 {
                    let t = self.tasks.entry(ev.pid).or_default();
                    self.dropped_unseen += u64::from(t.pending.take().is_some());
                    t.preempted = None;
                    t.on_cpu = Some(ev.cpu);
                }
            }
        }
        match ev.kind {
            EventKind::SchedWaking {
                pid, target_cpu, ..
            } => self.woken(ev, pid, target_cpu, true, out),
            EventKind::SchedWakeup {
                pid, target_cpu, ..
            }
            | EventKind::SchedWakeupNew {
                pid, target_cpu, ..
            } => self.woken(ev, pid, target_cpu, false, out),
            EventKind::SchedMigrateTask { pid, dest_cpu, .. } => self.touched(pid, dest_cpu),
            EventKind::SchedProcessFork { child_pid, .. } => self.born(child_pid, out),
            EventKind::SchedSwitch {
                prev_pid,
                prev_state,
                next_pid,
                next_prio,
                ..
            } => {
                self.check_switch(ev.cpu, prev_pid, next_pid, out);
                self.switch(ev.ts, ev.cpu, prev_pid, next_pid, next_prio, out);
                self.switched_out(ev.ts, prev_pid, prev_state, out);
                if prev_pid > 0 && prev_state.is_runnable() {
                    self.tasks.entry(prev_pid).or_default().preempted = Some(ev.ts);
                }
            }
            _ => {}
        }
    }

    /// Events were lost (on one CPU or on an unknown one).
    pub fn lost(&mut self) {
        self.drop_in_flight();
        for t in self.tasks.values_mut() {
            t.on_cpu = None;
            t.racing = false;
        }
        // An in-place wake-up's start is its task's pending one, counted above.
        for c in &mut self.cpus {
            c.in_place = None;
            c.current = None;
        }
    }

    /// Drops every wake-up in flight, counted with those lost events dropped, and every
    /// preemption wait.
    fn drop_in_flight(&mut self) {
        for t in self.tasks.values_mut() {
            self.dropped_by_lost += u64::from(t.pending.take().is_some());
            t.preempted = None;
        }
    }

    /// The trace contradicts itself on `cpus`: events went missing there without a marker.
    /// No wake-up in flight is measured across the gap (which CPUs it involved is not
    /// tracked); who runs where is still what the next events show.
    fn contradiction(&mut self, cpus: [u32; 2], out: &mut Vec<Step>) {
        self.impossible += 1;
        self.drop_in_flight();
        for &c in &cpus {
            self.cpus[c as usize].in_place = None;
        }
        out.push(Step::Impossible { cpus });
    }

    /// A traced switch must take the CPU from the task running there and give it to a task
    /// that runs nowhere else; otherwise the switches in between were not recorded.
    fn check_switch(&mut self, cpu: u32, prev: i32, next: i32, out: &mut Vec<Step>) {
        if self.cpus[cpu as usize].current.is_some_and(|c| c != prev) {
            return self.contradiction([cpu, cpu], out);
        }
        let elsewhere = (self.tasks.get(&next))
            .and_then(|t| t.on_cpu)
            .filter(|&other| other != cpu && next != 0);
        if let Some(other) = elsewhere {
            if self.cpus[other as usize].current == Some(next) {
                // This CPU's switch is traced; the other CPU's view of it is what went stale.
                self.contradiction([other, other], out);
            }
        }
    }

    fn woken(
        &mut self,
        ev: &Event<'_>,
        pid: i32,
        target: Option<u32>,
        is_waking: bool,
        out: &mut Vec<Step>,
    ) {
        self.wakeup_seen = true;
        if is_waking && !self.waking_seen {
            self.waking_seen = true;
            self.tasks.values_mut().for_each(|t| t.pending = None);
            out.push(Step::Redefined);
        }
        if pid == 0 {
            return;
        }
        if is_waking != self.waking_seen {
            // The `sched_wakeup` after a `sched_waking`: where the task is queued.
            if let Some(cpu) = target {
                self.touched(pid, cpu);
            }
            if let Some(t) = self.tasks.get_mut(&pid).filter(|t| t.on_cpu.is_some()) {
                // It never stopped running: the waking it raced found it still queued.
                t.racing = false;
            }
            return;
        }
        let t = self.tasks.entry(pid).or_default();
        if t.pending.is_some() {
            return;
        }
        let c = &mut self.cpus[ev.cpu as usize];
        let on_top_of_it =
            ev.pid == pid && ev.flags.known && (ev.flags.hardirq || ev.flags.softirq);
        // The event's own task is running on its CPU, whether or not a switch showed it.
        let in_place = on_top_of_it && c.in_place.is_none();
        if in_place {
            c.in_place = Some(InPlace {
                pid,
                last_irq: ev.ts,
            });
        } else if t.on_cpu.is_some() || on_top_of_it {
            t.racing = is_waking && !on_top_of_it;
            return;
        }
        t.pending = Some(ev.ts);
        // The waker's CPU is recorded here: this event is its own.
        t.unrecorded = false;
        out.push(Step::Start { pid });
        if let Some(cpu) = target {
            self.touched(pid, cpu);
        }
    }

    /// A new task got `pid`: whatever the trace said of an earlier task with that pid (a
    /// wake-up it never ran after, the CPU it ran on) is not this one's. A pid in use again
    /// while its old task still had a wake-up in flight or a CPU is counted as a contradiction.
    fn born(&mut self, pid: i32, out: &mut Vec<Step>) {
        let Some(old) = self.tasks.remove(&pid) else {
            return;
        };
        if old.pending.is_some() {
            out.push(Step::Unmeasured { pid });
        }
        if old.pending.is_some() || old.on_cpu.is_some() {
            self.pid_reused += 1;
        }
    }

    /// The wake-up in flight of `pid` involves `cpu` (queued or moved there).
    fn touched(&mut self, pid: i32, cpu: u32) {
        if let Some(t) = self.tasks.get_mut(&pid) {
            if let Some(start) = t.pending {
                t.unrecorded |= !self.history.recorded_at(cpu, start);
            }
            // A preempted task moved to a CPU not yet recorded: its wait is not measured.
            if t.preempted
                .is_some_and(|start| !self.history.recorded_at(cpu, start))
            {
                t.preempted = None;
            }
        }
    }

    /// `prev` left its CPU: asleep after a waking that raced it, that wake-up starts now.
    fn switched_out(&mut self, ts: Timestamp, prev: i32, state: TaskState, out: &mut Vec<Step>) {
        let Some(t) = self.tasks.get_mut(&prev).filter(|t| t.racing) else {
            return;
        };
        t.racing = false;
        if state.is_runnable() || prev == 0 || t.pending.is_some() {
            return;
        }
        t.pending = Some(ts);
        t.unrecorded = false;
        self.raced += 1;
        out.push(Step::Start { pid: prev });
    }

    /// Ends the in-place wake-up of the event's CPU at the first task-context event there.
    fn resume_in_place(&mut self, ev: &Event<'_>, out: &mut Vec<Step>) {
        let c = &mut self.cpus[ev.cpu as usize];
        let Some(ip) = c.in_place.as_mut() else {
            return;
        };
        if ev.flags.hardirq || ev.flags.softirq || ev.flags.nmi {
            ip.last_irq = ev.ts;
            return;
        }
        let InPlace { pid, last_irq } = *ip;
        c.in_place = None;
        let Some(start) = self.tasks.get_mut(&pid).and_then(|t| t.pending.take()) else {
            return;
        };
        // Resumed before it was woken: time went backwards on the CPU (damaged or unsorted
        // input), as in `switch`; there is no latency to measure.
        if last_irq < start {
            return;
        }
        let wake = Wake {
            pid,
            start,
            run: last_irq,
            cpu: ev.cpu,
            prio: None,
            run_at: RunAt::Resumed,
        };
        self.end(wake, out);
    }

    /// Hands on a wake-up that ended, if all of it lies where the trace recorded every CPU it
    /// may have involved: the common window covers every CPU seen by now (the one it ran on
    /// among them), `unrecorded` those it touched that had shown nothing yet. Inlined, so that
    /// the step is built where it is pushed: copied on from the stack, it was read in loads
    /// that straddled the stores just made, and stalled on store forwarding.
    #[inline(always)]
    fn end(&mut self, w: Wake, out: &mut Vec<Step>) {
        let unrecorded = self.tasks.get(&w.pid).is_some_and(|t| t.unrecorded);
        if unrecorded || !self.history.in_window(w.start) {
            self.dropped_before_window += 1;
            out.push(Step::Unmeasured { pid: w.pid });
        } else {
            out.push(Step::End(w));
        }
    }

    fn switch(
        &mut self,
        ts: Timestamp,
        cpu: u32,
        prev: i32,
        next: i32,
        next_prio: Option<i32>,
        out: &mut Vec<Step>,
    ) {
        self.cpus[cpu as usize].current = Some(next);
        out.push(Step::Switch {
            ts,
            cpu,
            prev,
            next,
            next_prio,
        });
        if prev != 0 {
            let t = self.tasks.entry(prev).or_default();
            if t.on_cpu == Some(cpu) {
                t.on_cpu = None;
            }
        }
        if next == 0 {
            return;
        }
        let t = self.tasks.entry(next).or_default();
        t.on_cpu = Some(cpu);
        let (preempted, pending) = (t.preempted.take(), t.pending.take());
        let run_at = match next_prio {
            Some(_) => RunAt::Switch,
            None => RunAt::Inferred,
        };
        let ran = |start| Wake {
            pid: next,
            start,
            run: ts,
            cpu,
            prio: next_prio,
            run_at,
        };
        // Switched in before it was woken or switched out: CPU clocks out of step or a damaged
        // trace; there is no latency to measure.
        if let Some(start) = preempted.filter(|&s| s <= ts) {
            if self.history.in_window(start) && self.history.recorded_at(cpu, start) {
                out.push(Step::Preempted(ran(start)));
            }
        }
        if let Some(start) = pending.filter(|&s| s <= ts) {
            self.end(ran(start), out);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtsleuth_trace::read::ftrace_text::{parse_line, Line, LineContext};

    fn steps(text: &str) -> Vec<Step> {
        let mut w = Wakeups::default();
        let mut out = Vec::new();
        for l in text.lines() {
            match parse_line(l, &LineContext::default()) {
                Line::Event(ev, _) => w.event(&ev, &mut out),
                other => panic!("not an event: {l} -> {other:?}"),
            }
        }
        out.retain(|s| !matches!(s, Step::Switch { .. }));
        out
    }

    /// The timer fires in an interrupt of the task itself before it could sleep: the wake-up
    /// ends at the last interrupt-context event (the softirq run on the way out), not at the
    /// task's later task-context event (lab `stock/hardirq_in_place`, shortened).
    #[test]
    fn an_in_place_wakeup_ends_when_the_interrupts_are_done() {
        let got = steps(
            "      cyclictest-178     [001] d..1.     5.583000: hrtimer_start: hrtimer=000000006228e63f function=hrtimer_wakeup expires=1 softexpires=1 mode=ABS\n\
             cyclictest-178     [001] d.h2.     5.583232: sched_waking: comm=cyclictest pid=178 prio=19 target_cpu=001\n\
             cyclictest-178     [001] d.h1.     5.613839: local_timer_exit: vector=236\n\
             cyclictest-178     [001] ..s1.     5.613843: softirq_entry: vec=7 [action=SCHED]\n\
             cyclictest-178     [001] ..s1.     5.613899: softirq_exit: vec=9 [action=RCU]\n\
             cyclictest-178     [001] .....     5.614344: tracing_mark_write: hit latency threshold (30925 > 15000)",
        );
        assert_eq!(
            got,
            [
                Step::Redefined,
                Step::Start { pid: 178 },
                Step::End(Wake {
                    pid: 178,
                    start: 5_583_232_000,
                    run: 5_613_899_000,
                    cpu: 1,
                    prio: None,
                    run_at: RunAt::Resumed
                })
            ]
        );
    }

    /// A waking of a task still running elsewhere races its switch-out: the wake-up starts at
    /// that switch-out (100.000020), not at a later waking; further wakings do not restart the
    /// clock; the switch ends it.
    #[test]
    fn only_a_sleeping_task_is_woken_and_only_once() {
        let got = steps(
            "          <idle>-0       [001] d..2.   100.000000: sched_switch: prev_comm=swapper/1 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=ct next_pid=7 next_prio=19\n\
                       bash-9       [000] d..2.   100.000010: sched_waking: comm=ct pid=7 prio=19 target_cpu=001\n\
                         ct-7       [001] d..2.   100.000020: sched_switch: prev_comm=ct prev_pid=7 prev_prio=19 prev_state=S ==> next_comm=swapper/1 next_pid=0 next_prio=120\n\
                       bash-9       [000] d..2.   100.000030: sched_waking: comm=ct pid=7 prio=19 target_cpu=001\n\
                       bash-9       [000] d..2.   100.000040: sched_waking: comm=ct pid=7 prio=19 target_cpu=001\n\
                     <idle>-0       [001] d..2.   100.000050: sched_switch: prev_comm=swapper/1 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=ct next_pid=7 next_prio=19",
        );
        assert_eq!(
            got,
            [
                Step::Redefined,
                Step::Start { pid: 7 },
                Step::End(Wake {
                    pid: 7,
                    start: 100_000_020_000,
                    run: 100_000_050_000,
                    cpu: 1,
                    prio: Some(19),
                    run_at: RunAt::Switch
                })
            ]
        );
    }

    #[test]
    fn lost_events_discard_the_wakeups_in_flight() {
        let mut w = Wakeups::default();
        let mut out = Vec::new();
        for l in [
            "   bash-9 [000] d..2. 100.000030: sched_waking: comm=ct pid=7 prio=19 target_cpu=001",
            "   ct-7   [001] d..2. 100.000050: sched_switch: prev_comm=ct prev_pid=7 prev_prio=19 prev_state=S ==> next_comm=swapper/1 next_pid=0 next_prio=120",
        ] {
            if let Line::Event(ev, _) = parse_line(l, &LineContext::default()) {
                w.event(&ev, &mut out);
                if ev.cpu == 0 {
                    w.lost();
                }
            }
        }
        assert_eq!(w.dropped_by_lost, 1);
        assert!(!out.iter().any(|s| matches!(s, Step::End(_))), "{out:?}");
    }

    /// A task switched out runnable (R+) waits until its next switch-in: 100.000100 to
    /// 100.000400 on CPU 1 after a migration, 300 us; the wait of a task switched out at
    /// 100.000500 is dropped by the lost events after it (100.000600), and one switched out
    /// asleep starts none.
    #[test]
    fn preemption_waits_end_at_the_next_switch_in_unless_events_were_lost() {
        let mut w = Wakeups::default();
        let mut out = Vec::new();
        for l in [
            "  a-10 [000] d..2. 100.000000: sched_switch: prev_comm=x prev_pid=9 prev_prio=120 prev_state=S ==> next_comm=p next_pid=5 next_prio=49",
            "  p-5 [000] d..2. 100.000100: sched_switch: prev_comm=p prev_pid=5 prev_prio=49 prev_state=R+ ==> next_comm=f next_pid=7 next_prio=9",
            "  m-3 [001] d..2. 100.000200: sched_migrate_task: comm=p pid=5 prio=49 orig_cpu=0 dest_cpu=1",
            "  m-3 [001] d..2. 100.000400: sched_switch: prev_comm=m prev_pid=3 prev_prio=120 prev_state=S ==> next_comm=p next_pid=5 next_prio=49",
            "  f-7 [000] d..2. 100.000500: sched_switch: prev_comm=f prev_pid=7 prev_prio=9 prev_state=R ==> next_comm=x next_pid=9 next_prio=120",
            "  x-9 [000] d..2. 100.000600: sched_switch: prev_comm=x prev_pid=9 prev_prio=120 prev_state=S ==> next_comm=f next_pid=7 next_prio=9",
        ] {
            if let Line::Event(ev, _) = parse_line(l, &LineContext::default()) {
                if ev.ts == 100_000_600_000 {
                    w.lost();
                }
                w.event(&ev, &mut out);
            }
        }
        let waits: Vec<Wake> = (out.iter())
            .filter_map(|s| match s {
                Step::Preempted(w) => Some(*w),
                _ => None,
            })
            .collect();
        assert_eq!(
            waits,
            [Wake {
                pid: 5,
                start: 100_000_100_000,
                run: 100_000_400_000,
                cpu: 1,
                prio: Some(49),
                run_at: RunAt::Switch
            }]
        );
    }
}
