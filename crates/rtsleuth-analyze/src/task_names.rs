//! The best known name of every pid. Lines often say `<...>` (the kernel's comm cache missed),
//! while sched events carry the real comm in their payload; analyses report the real one.
//! Its last printed priority rides along for the analyses that need it: the events that print
//! priorities name the same tasks, so one lookup serves both.

use rtsleuth_trace::event::{same_comm, Event, EventKind};
use rustc_hash::FxHashMap as HashMap;

#[derive(Debug, Default)]
pub struct TaskNames {
    tasks: HashMap<i32, Task>,
}

/// What is known of one pid. A task whose priority was printed before its name has an empty
/// name, which no comm learnt ever is.
#[derive(Debug, Default)]
struct Task {
    name: String,
    prio: Option<i32>,
}

/// The priorities one event stated, each with the one it replaced (see
/// [`TaskNames::observe_stating_prios`]).
#[derive(Debug, Default, Clone, Copy)]
pub struct PriosStated([Option<(i32, Option<i32>)>; 2]);

impl PriosStated {
    /// The priority `pid` had before the event, if the event stated one for it.
    pub fn before(&self, pid: i32) -> Option<Option<i32>> {
        self.0
            .iter()
            .flatten()
            .find(|(p, _)| *p == pid)
            .map(|(_, was)| *was)
    }
}

/// Whether a comm names its task: not empty, and not the `<...>` of a comm cache miss.
fn knows(comm: &str) -> bool {
    !(comm == "<...>" || comm.is_empty())
}

/// A switch whose payload names the task the line names: that name is learnt after the line's
/// and wins, so the line's need not be looked up (a switch is a third of a busy trace).
fn switches_out_itself(ev: &Event<'_>) -> bool {
    matches!(ev.kind, EventKind::SchedSwitch { prev_pid, prev_comm, .. }
        if prev_pid == ev.pid && knows(prev_comm))
}

impl TaskNames {
    /// Learns names from an event: its line's comm and the comms its payload names.
    pub fn observe(&mut self, ev: &Event<'_>) {
        self.observe_stating::<false>(ev);
    }

    /// [`Self::observe`], and records the priorities the event prints
    /// ([`EventKind::task_prios`]). Returns those it replaced, for a caller that must still
    /// judge by the earlier ones until it is done with the event.
    pub fn observe_stating_prios(&mut self, ev: &Event<'_>) -> PriosStated {
        self.observe_stating::<true>(ev)
    }

    /// One function for both, so that they learn names alike; `PRIOS` is a constant so that
    /// [`Self::observe`] compiles without the priorities.
    fn observe_stating<const PRIOS: bool>(&mut self, ev: &Event<'_>) -> PriosStated {
        if !switches_out_itself(ev) {
            self.learn(ev.pid, ev.comm);
        }
        let [first, second] = if PRIOS {
            ev.kind.task_prios()
        } else {
            [None, None]
        };
        let mut stated = PriosStated::default();
        match ev.kind {
            EventKind::SchedSwitch {
                prev_comm,
                prev_pid,
                next_comm,
                next_pid,
                ..
            } => {
                stated.0[0] = self.learn_stating(prev_pid, prev_comm, first);
                stated.0[1] = self.learn_stating(next_pid, next_comm, second);
            }
            EventKind::SchedWaking { comm, pid, .. }
            | EventKind::SchedWakeup { comm, pid, .. }
            | EventKind::SchedWakeupNew { comm, pid, .. }
            | EventKind::SchedMigrateTask { comm, pid, .. } => {
                stated.0[0] = self.learn_stating(pid, comm, first);
            }
            EventKind::SchedProcessExit { comm, pid, .. } => self.learn(pid, comm),
            EventKind::SchedProcessFork {
                child_comm,
                child_pid,
                ..
            } => self.learn(child_pid, child_comm),
            _ => {}
        }
        stated
    }

    /// Learns `comm` for `pid` and, when `prio` is the event's statement for it, the task's
    /// priority in the same lookup; returns what that statement replaced.
    #[inline(always)]
    fn learn_stating(
        &mut self,
        pid: i32,
        comm: &str,
        prio: Option<(i32, i32)>,
    ) -> Option<(i32, Option<i32>)> {
        let Some((_, prio)) = prio else {
            self.learn(pid, comm);
            return None;
        };
        let task = self.tasks.entry(pid).or_default();
        if knows(comm) {
            name(task, comm);
        }
        Some((pid, task.prio.replace(prio)))
    }

    /// Records `comm` for `pid` unless it is the `<...>` placeholder. Allocates only when the
    /// name changes. Called for most events: inlined, a task already named costs no call.
    #[inline]
    pub fn learn(&mut self, pid: i32, comm: &str) {
        if !knows(comm) {
            return;
        }
        match self.tasks.get_mut(&pid) {
            Some(task) => name(task, comm),
            None => self.add(pid, comm),
        }
    }

    #[inline(never)]
    fn add(&mut self, pid: i32, comm: &str) {
        let name = comm.to_string();
        self.tasks.insert(pid, Task { name, prio: None });
    }

    pub fn get(&self, pid: i32) -> &str {
        match self.tasks.get(&pid) {
            Some(t) if !t.name.is_empty() => &t.name,
            _ => "<...>",
        }
    }

    /// The priority last printed for `pid` (or set with [`Self::set_prio`]).
    pub fn prio(&self, pid: i32) -> Option<i32> {
        self.tasks.get(&pid).and_then(|t| t.prio)
    }

    /// The priority of `pid` as the event that `stated` these found it: before the event's
    /// own statement about it, if it made one.
    pub fn prio_before(&self, stated: &PriosStated, pid: i32) -> Option<i32> {
        stated.before(pid).unwrap_or_else(|| self.prio(pid))
    }

    /// A priority that no scheduler event printed: priority inheritance's.
    pub fn set_prio(&mut self, pid: i32, prio: i32) {
        self.tasks.entry(pid).or_default().prio = Some(prio);
    }
}

/// Names `task` `comm`. Called for most events, and the name is nearly always the one it
/// has: inlined, that is one comparison rather than a call that saves and restores registers.
#[inline(always)]
fn name(task: &mut Task, comm: &str) {
    if !same_comm(&task.name, comm) {
        rename(task, comm);
    }
}

#[inline(never)]
fn rename(task: &mut Task, comm: &str) {
    task.name.clear();
    task.name.push_str(comm);
}

#[cfg(test)]
mod tests {
    use super::{PriosStated, TaskNames};
    use rtsleuth_trace::read::ftrace_text::{parse_line, Line, LineContext};

    fn observe(names: &mut TaskNames, line: &str) {
        match parse_line(line, &LineContext::default()) {
            Line::Event(ev, _) => names.observe(&ev),
            other => panic!("not an event: {other:?}"),
        }
    }

    fn observe_stating(names: &mut TaskNames, line: &str) -> PriosStated {
        match parse_line(line, &LineContext::default()) {
            Line::Event(ev, _) => names.observe_stating_prios(&ev),
            other => panic!("not an event: {other:?}"),
        }
    }

    const SWITCH_12_TO_13: &str = "a-12 [000] d..2. 1.000000: sched_switch: prev_comm=a prev_pid=12 prev_prio=98 prev_state=S ==> next_comm=<...> next_pid=13 next_prio=120";

    /// A switch states both tasks' priorities; what they replaced is answered for those two
    /// tasks only, and the names are learnt as `observe` learns them.
    #[test]
    fn a_switch_states_both_priorities_and_what_they_replaced() {
        let mut names = TaskNames::default();
        let first = observe_stating(&mut names, SWITCH_12_TO_13);
        assert_eq!(
            (first.before(12), first.before(13)),
            (Some(None), Some(None))
        );
        assert_eq!((names.prio(12), names.prio(13)), (Some(98), Some(120)));
        assert_eq!((names.get(12), names.get(13)), ("a", "<...>"));
        let wakeup =
            "b-14 [001] d..2. 1.000100: sched_wakeup: comm=a pid=12 prio=90 target_cpu=000";
        let second = observe_stating(&mut names, wakeup);
        assert_eq!(
            (second.before(12), second.before(13)),
            (Some(Some(98)), None)
        );
        assert_eq!((names.prio(12), names.get(14)), (Some(90), "b"));
    }

    /// A switch from the idle task to itself states pid 0 twice: the priority it had before the
    /// event is the one the first statement replaced, and the second statement stays.
    #[test]
    fn a_task_stated_twice_had_the_priority_before_both() {
        let mut names = TaskNames::default();
        names.set_prio(0, 100);
        let idle = "<idle>-0 [000] d..2. 1.000000: sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=110 prev_state=R ==> next_comm=swapper/0 next_pid=0 next_prio=120";
        let stated = observe_stating(&mut names, idle);
        assert_eq!(
            (stated.before(0), names.prio(0)),
            (Some(Some(100)), Some(120))
        );
    }

    /// The names alone: `observe` keeps no priority.
    #[test]
    fn observe_states_no_priority() {
        let mut names = TaskNames::default();
        observe(&mut names, SWITCH_12_TO_13);
        assert_eq!((names.prio(12), names.get(12)), (None, "a"));
    }

    /// A switch's payload names the task switched out after the line does, so its name wins
    /// unless it is the placeholder; the line still names a task the payload does not.
    #[test]
    fn a_switch_names_its_tasks_after_its_line() {
        let switch = |task: &str, prev: &str, prev_pid: i32| {
            format!("{task} [000] d..2. 1.000000: sched_switch: prev_comm={prev} prev_pid={prev_pid} prev_prio=120 prev_state=S ==> next_comm=next next_pid=13 next_prio=120")
        };
        let mut names = TaskNames::default();
        observe(&mut names, &switch("line-12", "payload", 12));
        assert_eq!((names.get(12), names.get(13)), ("payload", "next"));
        observe(&mut names, &switch("line-12", "<...>", 12));
        assert_eq!(names.get(12), "line");
        observe(&mut names, &switch("other-11", "payload", 12));
        assert_eq!((names.get(11), names.get(12)), ("other", "payload"));
    }
}
