//! The referee's own reading of the scheduler events: its wake-up pairing (docs/claims.md,
//! "Wake-ups"), each CPU's running task by the switches, each task's printed priorities, and
//! the impossible states (a task switched in on two CPUs at once).

use super::raw::{Event, Trace};
use std::collections::{BTreeMap, HashMap};

/// One wake-up in the referee's pairing.
#[derive(Clone, Debug)]
pub struct Wakeup {
    pub pid: i64,
    /// sched_waking (sched_wakeup when the trace has no sched_waking), or
    /// the task's own switch-out for a wake-up that raced it (W1).
    pub start: i64,
    pub raced: bool,
    /// The CPU that ran the waking (the switch-out's CPU for a raced one).
    pub waker_cpu: u32,
    /// Who emitted the waking (its pid column) and in which context, when the peer printed
    /// the context flags: the links of a wake chain (docs/claims.md, "Wake chains").
    pub waker: Waker,
    /// The runqueue CPU from `target_cpu`, then each sched_migrate_task: (from ts, cpu).
    pub rq: Vec<(i64, u32)>,
    /// The first moment the task runs again: its switch-in, or its first event in the pid
    /// column (an interrupt of it shows it current too).
    pub end: i64,
    pub end_cpu: u32,
    pub end_switch: bool,
}

impl Wakeup {
    pub fn latency(&self) -> i64 {
        self.end - self.start
    }

    /// The runqueue CPU at `ts`: the latest of target_cpu / migrations at or before it.
    pub fn rq_cpu_at(&self, ts: i64) -> Option<u32> {
        self.rq
            .iter()
            .rev()
            .find(|(t, _)| *t <= ts)
            .or(self.rq.first())
            .map(|r| r.1)
    }
}

/// The context a waking was emitted in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Waker {
    /// In task context, by this running task.
    Task(i64),
    /// Inside a hard-IRQ frame (a device interrupt, or a timer's expiry).
    HardIrq,
    /// In a softirq run in this task's column (on PREEMPT_RT, its own thread): followed only
    /// to a soft timer the woken task armed itself (claims.md, soft_timer).
    Softirq(i64),
    /// On an interrupt's exit path: the pid column names the interrupted task.
    ExitPath,
    /// By the idle task, in NMI context, or with no context flags printed: not followed.
    Other,
}

impl Waker {
    fn of(e: &Event) -> Waker {
        match e.flags {
            None => Waker::Other,
            Some(_) if e.in_hardirq() => Waker::HardIrq,
            Some(_) if e.pid > 0 && e.in_interrupt() == Some(false) => Waker::Task(e.pid),
            Some(ref f) if e.pid > 0 && f.contains('s') => Waker::Softirq(e.pid),
            Some(_) => Waker::Other,
        }
    }
}

#[derive(Default)]
struct TaskState {
    running_on: Option<u32>,
    pending: Option<Wakeup>,
    /// A sched_waking seen while the task ran (W1), and its switch-out after it, if any.
    raced: Option<(Wakeup, Option<(i64, u32)>)>,
    /// A waking then wakeup while the task ran, with no switch-out (ttwu_runnable): no
    /// wake-up, but the task may resume in place at its next own event.
    in_place: Option<Wakeup>,
    /// Switched out still runnable: the preemption wait in flight.
    preempted: Option<Wakeup>,
}

#[derive(Default)]
pub struct Sched {
    pub wakeups: HashMap<i64, Vec<Wakeup>>,
    /// Per CPU, (ts, pid) each time its running task is shown to change: a switch's
    /// next_pid, or the pid column of any other event (a switch-in that was not traced).
    pub current: BTreeMap<u32, Vec<(i64, i64)>>,
    /// Per CPU, the times of its sched_switch events.
    pub switches: BTreeMap<u32, Vec<i64>>,
    /// Per pid, (ts, prio) of each printed priority of that pid.
    pub prios: HashMap<i64, Vec<(i64, i64)>>,
    /// Wakings of a task still on its CPU that resumed in place (`run_at: resumed`): not
    /// wake-ups (W1, ttwu_runnable), listed only so such findings can be paired.
    pub in_place: HashMap<i64, Vec<Wakeup>>,
    /// Preemption waits (docs/claims.md, "Preemption waits"): from a switch-out while
    /// runnable to the task's next run, paired like wake-ups.
    pub preemptions: HashMap<i64, Vec<Wakeup>>,
    /// (pid, ts): switched in while, by the switches, still running on another CPU (V2).
    pub impossible: Vec<(i64, i64)>,
}

/// `R`, `R+` (preempted), or in raw numeric form 0 or a kernel's preempted marker.
fn runnable(state: &str) -> bool {
    state.starts_with('R') || ["0", "256", "1024", "2048", "4096"].contains(&state)
}

impl Sched {
    pub fn build(t: &Trace) -> Sched {
        let has_waking = t.events.iter().any(|e| e.name == "sched_waking");
        let has_wakeup = t.events.iter().any(|e| e.name == "sched_wakeup");
        let mut s = Sched::default();
        let mut tasks: HashMap<i64, TaskState> = HashMap::new();
        let mut lost = t.lost.iter().peekable();
        let mut exit_path = ExitPath::default();
        for e in &t.events {
            while lost.next_if(|(_, ts)| *ts <= e.ts).is_some() {
                // Wake-ups in flight cross a hole: none is measured.
                for st in tasks.values_mut() {
                    st.pending = None;
                    st.raced = None;
                    st.preempted = None;
                }
            }
            s.prio_of(e);
            let on_exit_path = exit_path.holds(e);
            let cpu_first = t
                .by_cpu
                .get(&e.cpu)
                .is_some_and(|ix| std::ptr::eq(&t.events[ix[0]], e));
            if e.pid >= 0 {
                s.untraced_switch(e, &mut tasks);
            }
            // A switch is an event of the task it takes the CPU from (its pid column): that
            // task ran, whatever the switches before said.
            if e.pid > 0 && e.name == "sched_switch" {
                s.own_event(e, &mut tasks, cpu_first);
            }
            match e.name.as_str() {
                "sched_switch" => s.switch(e, &mut tasks, has_wakeup),
                "sched_waking" => {
                    waking(e, &mut tasks);
                    if on_exit_path {
                        interrupted_is_no_waker(e, &mut tasks);
                    }
                }
                "sched_wakeup" | "sched_wakeup_new" => wakeup(e, &mut tasks, has_waking),
                "sched_migrate_task" => {
                    if let (Some(p), Some(d)) = (e.num("pid"), e.num("dest_cpu")) {
                        if let Some(st) = tasks.get_mut(&p) {
                            for w in [&mut st.pending, &mut st.preempted].into_iter().flatten() {
                                w.rq.push((e.ts, d as u32));
                            }
                        }
                    }
                }
                _ => {}
            }
            if e.pid > 0 && e.name != "sched_switch" {
                s.own_event(e, &mut tasks, cpu_first);
            }
        }
        // Counted by binary search (switches_inside); how many lie inside does not depend
        // on their order.
        for sw in s.switches.values_mut() {
            sw.sort_unstable();
        }
        s
    }

    fn prio_of(&mut self, e: &Event) {
        let mut put = |pid: Option<i64>, prio: Option<i64>| {
            if let (Some(p), Some(q)) = (pid, prio) {
                self.prios.entry(p).or_default().push((e.ts, q));
            }
        };
        match e.name.as_str() {
            "sched_switch" => {
                put(e.num("prev_pid"), e.num("prev_prio"));
                put(e.num("next_pid"), e.num("next_prio"));
            }
            "sched_waking" | "sched_wakeup" | "sched_wakeup_new" => {
                put(e.num("pid"), e.num("prio"))
            }
            "sched_pi_setprio" => put(e.num("pid"), e.num("newprio")),
            _ => {}
        }
    }

    fn switch(&mut self, e: &Event, tasks: &mut HashMap<i64, TaskState>, has_wakeup: bool) {
        let (Some(prev), Some(next)) = (e.num("prev_pid"), e.num("next_pid")) else {
            return;
        };
        let state = e.field("prev_state").unwrap_or("R");
        let p = tasks.entry(prev).or_default();
        p.running_on = None;
        p.in_place = None;
        if let Some((w, out)) = p.raced.as_mut() {
            if runnable(state) {
                p.raced = None;
            } else if out.is_none() {
                *out = Some((e.ts, e.cpu));
                w.start = e.ts;
                w.waker_cpu = e.cpu;
            }
        }
        self.switches.entry(e.cpu).or_default().push(e.ts);
        self.shown_running(e.cpu, e.ts, next);
        // V2: another CPU's task (by its switches and pid column) is the one switched in here.
        let elsewhere = self
            .current
            .iter()
            .any(|(&c, v)| c != e.cpu && v.last().map(|x| x.1) == Some(next));
        if next > 0 && elsewhere {
            self.impossible.push((next, e.ts));
            // Events went missing without a marker: as at one, nothing in flight is measured.
            for st in tasks.values_mut() {
                st.pending = None;
                st.preempted = None;
                st.raced = st.raced.take().filter(|(_, out)| out.is_none());
            }
        }
        if prev > 0 && e.field("prev_state").is_some_and(runnable) {
            // Queued on the switch's own CPU (a switch has no target_cpu).
            tasks.entry(prev).or_default().preempted = Some(new_wakeup(e, prev));
        }
        let n = tasks.entry(next).or_default();
        n.running_on = Some(e.cpu);
        // A raced waking confirmed only by the switch-out, in a trace without sched_wakeup.
        if let Some((w, Some(_))) = n.raced.take() {
            if !has_wakeup && n.pending.is_none() {
                n.pending = Some(w);
            }
        }
        for (w, into) in [
            (n.pending.take(), &mut self.wakeups),
            (n.preempted.take(), &mut self.preemptions),
        ] {
            if let Some(mut w) = w {
                w.end = e.ts;
                w.end_cpu = e.cpu;
                w.end_switch = true;
                into.entry(next).or_default().push(w);
            }
        }
    }

    fn own_event(&mut self, e: &Event, tasks: &mut HashMap<i64, TaskState>, cpu_first: bool) {
        let st = tasks.entry(e.pid).or_default();
        if cpu_first {
            // The CPU's first event: when the task got there is not recorded, so the wake-up
            // (or preemption wait) has no measurable end.
            st.pending = None;
            st.preempted = None;
        }
        if let Some(mut w) = st.in_place.take_if(|w| e.ts > w.start && e.task_context()) {
            w.end = e.ts;
            w.end_cpu = e.cpu;
            self.in_place.entry(e.pid).or_default().push(w);
        }
        for (w, into) in [
            (st.pending.take_if(|w| e.ts > w.start), &mut self.wakeups),
            (
                st.preempted.take_if(|w| e.ts > w.start),
                &mut self.preemptions,
            ),
        ] {
            if let Some(mut w) = w {
                w.end = e.ts;
                w.end_cpu = e.cpu;
                w.end_switch = false;
                into.entry(e.pid).or_default().push(w);
            }
        }
        if st.pending.is_none() && st.raced.is_none() {
            st.running_on = Some(e.cpu);
        }
    }

    /// The task current on `cpu` at `ts`: by the latest switch or event pid column at or
    /// before it (`None` before the CPU's first event).
    pub fn current_at(&self, cpu: u32, ts: i64) -> Option<i64> {
        let sw = self.current.get(&cpu)?;
        let k = sw.partition_point(|(t, _)| *t <= ts);
        (k > 0).then(|| sw[k - 1].1)
    }

    /// An event whose pid column is not the CPU's task: the task it replaced left the CPU
    /// without a traced switch, so it no longer runs there.
    fn untraced_switch(&mut self, e: &Event, tasks: &mut HashMap<i64, TaskState>) {
        let before = self.current_at(e.cpu, e.ts);
        if let Some(old) = before.filter(|&p| p != e.pid && p > 0) {
            let st = tasks.entry(old).or_default();
            if st.running_on == Some(e.cpu) {
                st.running_on = None;
                st.raced = None;
                st.in_place = None;
            }
        }
        self.shown_running(e.cpu, e.ts, e.pid);
    }

    fn shown_running(&mut self, cpu: u32, ts: i64, pid: i64) {
        let v = self.current.entry(cpu).or_default();
        if v.last().map(|c| c.1) != Some(pid) {
            v.push((ts, pid));
        }
    }

    /// Since when the task current on `cpu` at `ts` has been shown running there.
    pub fn switched_in_at(&self, cpu: u32, ts: i64) -> Option<i64> {
        let sw = self.current.get(&cpu)?;
        let k = sw.partition_point(|(t, _)| *t <= ts);
        (k > 0).then(|| sw[k - 1].0)
    }

    /// The sched_switch events on `cpu` strictly inside (lo, hi).
    pub fn switches_inside(&self, cpu: u32, lo: i64, hi: i64) -> usize {
        self.switches.get(&cpu).map_or(0, |sw| {
            let from = sw.partition_point(|t| *t <= lo);
            sw[from..].partition_point(|t| *t < hi)
        })
    }

    /// E3: the priority printed for `pid` by the latest event at or before `ts`.
    pub fn prio_at(&self, pid: i64, ts: i64) -> Option<i64> {
        let v = self.prios.get(&pid)?;
        let k = v.partition_point(|(t, _)| *t <= ts);
        (k > 0).then(|| v[k - 1].1)
    }

    /// The wake-up of `pid` that starts at `ts` (±2 ns); with `in_place`, also a waking
    /// that resumed in place.
    pub fn wakeup_at(&self, pid: i64, ts: i64) -> Option<&Wakeup> {
        self.wakeups
            .get(&pid)?
            .iter()
            .find(|w| (w.start - ts).abs() <= 2)
    }

    /// The preemption wait of `pid` that starts at `ts` (±2 ns).
    pub fn preemption_at(&self, pid: i64, ts: i64) -> Option<&Wakeup> {
        self.preemptions
            .get(&pid)?
            .iter()
            .find(|w| (w.start - ts).abs() <= 2)
    }

    /// A waking of `pid` at `ts` (±2 ns) that resumed in place.
    pub fn in_place_at(&self, pid: i64, ts: i64) -> Option<&Wakeup> {
        self.in_place
            .get(&pid)?
            .iter()
            .find(|w| (w.start - ts).abs() <= 2)
    }
}

/// Per CPU, the pid column an interrupt's exit path runs in: from its last hard-IRQ-flagged
/// event, while the CPU's events stay in that column with interrupts off and no switch.
#[derive(Default)]
struct ExitPath(HashMap<u32, i64>);

impl ExitPath {
    /// Whether `e` (every event is seen, in order) lies on an exit path.
    fn holds(&mut self, e: &Event) -> bool {
        if e.in_hardirq() {
            self.0.insert(e.cpu, e.pid);
            return true;
        }
        let on = self.0.get(&e.cpu) == Some(&e.pid)
            && e.irqs_off() == Some(true)
            && e.name != "sched_switch";
        if !on {
            self.0.remove(&e.cpu);
        }
        on
    }
}

/// A waking on an interrupt's exit path names the interrupted task in its pid column: no
/// chain follows it (claims.md, "Wake chains").
fn interrupted_is_no_waker(e: &Event, tasks: &mut HashMap<i64, TaskState>) {
    let Some(st) = e.num("pid").and_then(|p| tasks.get_mut(&p)) else {
        return;
    };
    let raced = st.raced.as_mut().map(|(w, _)| w);
    for w in st.pending.iter_mut().chain(raced) {
        // The idle task's column too: irq_exit on an idle CPU wakes the softirq threads.
        if w.start == e.ts && matches!(w.waker, Waker::Task(_) | Waker::Other) {
            w.waker = Waker::ExitPath;
        }
    }
}

fn new_wakeup(e: &Event, pid: i64) -> Wakeup {
    let target = e.num("target_cpu").map(|c| c as u32).unwrap_or(e.cpu);
    Wakeup {
        pid,
        start: e.ts,
        raced: false,
        waker_cpu: e.cpu,
        waker: Waker::of(e),
        rq: vec![(e.ts, target)],
        end: 0,
        end_cpu: 0,
        end_switch: false,
    }
}

fn waking(e: &Event, tasks: &mut HashMap<i64, TaskState>) {
    let Some(p) = e.num("pid") else { return };
    let st = tasks.entry(p).or_default();
    if st.pending.is_some() || st.raced.is_some() {
        return;
    }
    if st.running_on.is_some() {
        let mut w = new_wakeup(e, p);
        w.raced = true;
        st.raced = Some((w, None));
    } else {
        st.pending = Some(new_wakeup(e, p));
    }
}

/// sched_wakeup: confirms a raced waking whose task switched out meanwhile (W1), discards one
/// whose task never stopped (ttwu_runnable), or starts a wake-up when the trace has no
/// sched_waking at all.
fn wakeup(e: &Event, tasks: &mut HashMap<i64, TaskState>, waking_traced: bool) {
    let Some(p) = e.num("pid") else { return };
    let st = tasks.entry(p).or_default();
    if let Some((mut w, out)) = st.raced.take() {
        if out.is_some() {
            if let Some(c) = e.num("target_cpu") {
                w.rq = vec![(w.start, c as u32)];
            }
            st.pending = Some(w);
        } else {
            st.in_place = Some(w);
        }
        return;
    }
    if let Some(w) = st.pending.as_mut() {
        // The CPU try_to_wake_up queued it on, from now (a migration on the way was traced).
        if let Some(c) = e.num("target_cpu").map(|c| c as u32) {
            if w.rq.last().map(|r| r.1) != Some(c) {
                w.rq.push((e.ts, c));
            }
        }
        return;
    }
    // A new task's first run (sched_wakeup_new) is no wake-up: nothing made it due.
    if st.running_on.is_none() && e.name == "sched_wakeup" && !waking_traced {
        st.pending = Some(new_wakeup(e, p));
    }
}

#[cfg(test)]
mod tests {
    use super::super::text;
    use super::*;

    fn sched(lines: &str) -> Sched {
        Sched::build(&text::parse(lines))
    }

    /// V2: ct-7 switched in on CPU1 at 3.000300 while CPU0 still runs it (its last event
    /// there is ct-7's) is a contradiction; after CPU0 showed bash-9 running (an untraced
    /// switch away, 3.000200) it is none.
    #[test]
    fn a_task_on_two_cpus_is_impossible_unless_it_visibly_left() {
        let lines = |left: bool| {
            let mut t = String::from("  <idle>-0 [000] d..2. 3.000000: sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=ct next_pid=7 next_prio=19\n");
            if left {
                t += "  bash-9 [000] d..2. 3.000200: sched_stat_runtime: comm=bash pid=9 runtime=1 [ns]\n";
            }
            t += "  <idle>-0 [001] d..2. 3.000300: sched_switch: prev_comm=swapper/1 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=ct next_pid=7 next_prio=19\n";
            t
        };
        assert_eq!(sched(&lines(false)).impossible, vec![(7, 3_000_300_000)]);
        assert!(sched(&lines(true)).impossible.is_empty());
    }

    /// W1: waking while P runs, P's switch-out S, then sched_wakeup: a wake-up from the
    /// switch-out (2.000100) to the switch-in (2.002100): 2000 us, by hand.
    #[test]
    fn raced_waking_counts_from_the_switch_out() {
        let s = sched(
            "  a-10 [000] d..2. 2.000000: sched_switch: prev_comm=x prev_pid=9 prev_prio=120 prev_state=S ==> next_comm=p next_pid=5 next_prio=120
  b-11 [001] d..2. 2.000050: sched_waking: comm=p pid=5 prio=120 target_cpu=000
  p-5 [000] d..2. 2.000100: sched_switch: prev_comm=p prev_pid=5 prev_prio=120 prev_state=S ==> next_comm=f next_pid=7 next_prio=9
  b-11 [001] d..2. 2.000120: sched_wakeup: comm=p pid=5 prio=120 target_cpu=000
  f-7 [000] d..2. 2.002100: sched_switch: prev_comm=f prev_pid=7 prev_prio=9 prev_state=S ==> next_comm=p next_pid=5 next_prio=120
",
        );
        let w = &s.wakeups[&5];
        assert_eq!(w.len(), 1);
        assert_eq!(
            (w[0].start, w[0].end, w[0].raced, w[0].waker_cpu),
            (2_000_100_000, 2_002_100_000, true, 0)
        );
    }

    /// ttwu_runnable: waking and wakeup while P runs, no switch-out between: no wake-up; P's
    /// next task-context event (2.000300) is where it resumed in place.
    #[test]
    fn waking_a_running_task_is_no_wakeup() {
        let s = sched(
            "  a-10 [000] d..2. 2.000000: sched_switch: prev_comm=x prev_pid=9 prev_prio=120 prev_state=S ==> next_comm=p next_pid=5 next_prio=120
  p-5 [000] d.h2. 2.000050: sched_waking: comm=p pid=5 prio=120 target_cpu=000
  p-5 [000] d.h2. 2.000060: sched_wakeup: comm=p pid=5 prio=120 target_cpu=000
  p-5 [000] ..... 2.000300: hrtimer_init: hrtimer=1
",
        );
        assert!(!s.wakeups.contains_key(&5));
        assert_eq!(s.in_place[&5][0].end, 2_000_300_000);
    }

    /// A task switched in without a traced switch ends its wake-up at its first event, even
    /// an interrupt of it (2.000500); a new task's first run is no wake-up.
    #[test]
    fn untraced_switch_in_and_new_tasks() {
        let s = sched(
            "  a-10 [000] d..2. 2.000000: sched_waking: comm=p pid=5 prio=120 target_cpu=000
  a-10 [000] d..2. 2.000010: sched_wakeup_new: comm=n pid=6 prio=120 target_cpu=000
  p-5 [000] d.h1. 2.000500: local_timer_entry: vector=236
  n-6 [000] ..... 2.000900: x: y=1
",
        );
        let w = &s.wakeups[&5];
        assert_eq!((w[0].end, w[0].end_switch), (2_000_500_000, false));
        assert!(!s.wakeups.contains_key(&6));
        assert_eq!(s.current_at(0, 2_000_600_000), Some(5));
    }

    /// A preemption wait runs from the switch-out while runnable (R+, 2.000100) to the next
    /// switch-in (on CPU1 after a migration, 2.000400): 300 us, its runqueue CPU 0 then 1; a
    /// switch-out asleep (S) starts none; one in flight at a lost-events marker is dropped.
    #[test]
    fn preemption_waits_pair_like_wakeups() {
        let s = sched(
            "  a-10 [000] d..2. 2.000000: sched_switch: prev_comm=x prev_pid=9 prev_prio=120 prev_state=S ==> next_comm=p next_pid=5 next_prio=49
  p-5 [000] d..2. 2.000100: sched_switch: prev_comm=p prev_pid=5 prev_prio=49 prev_state=R+ ==> next_comm=f next_pid=7 next_prio=9
  m-3 [001] d..2. 2.000200: sched_migrate_task: comm=p pid=5 prio=49 orig_cpu=0 dest_cpu=1
  m-3 [001] d..2. 2.000400: sched_switch: prev_comm=m prev_pid=3 prev_prio=120 prev_state=S ==> next_comm=p next_pid=5 next_prio=49
  p-5 [001] d..2. 2.000500: sched_switch: prev_comm=p prev_pid=5 prev_prio=49 prev_state=S ==> next_comm=m next_pid=3 next_prio=120
  f-7 [000] d..2. 2.000600: sched_switch: prev_comm=f prev_pid=7 prev_prio=9 prev_state=R ==> next_comm=x next_pid=9 next_prio=120
CPU:0 [LOST 3 EVENTS]
  x-9 [000] d..2. 2.000900: sched_switch: prev_comm=x prev_pid=9 prev_prio=120 prev_state=S ==> next_comm=f next_pid=7 next_prio=9
",
        );
        let w = &s.preemptions[&5];
        assert_eq!(w.len(), 1);
        assert_eq!(
            (w[0].start, w[0].end, w[0].end_cpu, w[0].waker_cpu),
            (2_000_100_000, 2_000_400_000, 1, 0)
        );
        assert_eq!(w[0].rq, vec![(2_000_100_000, 0), (2_000_200_000, 1)]);
        assert!(!s.preemptions.contains_key(&7), "lost at 2.000900");
        assert!(!s.wakeups.contains_key(&5));
    }
}
