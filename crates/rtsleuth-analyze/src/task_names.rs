//! The best known name of every pid. Lines often say `<...>` (the kernel's comm cache missed),
//! while sched events carry the real comm in their payload; analyses report the real one.

use rtsleuth_trace::event::{same_comm, Event, EventKind};
use rustc_hash::FxHashMap as HashMap;

#[derive(Debug, Default)]
pub struct TaskNames {
    names: HashMap<i32, String>,
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
        if !switches_out_itself(ev) {
            self.learn(ev.pid, ev.comm);
        }
        match ev.kind {
            EventKind::SchedSwitch {
                prev_comm,
                prev_pid,
                next_comm,
                next_pid,
                ..
            } => {
                self.learn(prev_pid, prev_comm);
                self.learn(next_pid, next_comm);
            }
            EventKind::SchedWaking { comm, pid, .. }
            | EventKind::SchedWakeup { comm, pid, .. }
            | EventKind::SchedWakeupNew { comm, pid, .. }
            | EventKind::SchedMigrateTask { comm, pid, .. }
            | EventKind::SchedProcessExit { comm, pid, .. } => self.learn(pid, comm),
            EventKind::SchedProcessFork {
                child_comm,
                child_pid,
                ..
            } => self.learn(child_pid, child_comm),
            _ => {}
        }
    }

    /// Records `comm` for `pid` unless it is the `<...>` placeholder. Allocates only when the
    /// name changes.
    pub fn learn(&mut self, pid: i32, comm: &str) {
        if !knows(comm) {
            return;
        }
        match self.names.get_mut(&pid) {
            Some(known) if same_comm(known, comm) => {}
            Some(known) => {
                known.clear();
                known.push_str(comm);
            }
            None => {
                self.names.insert(pid, comm.to_string());
            }
        }
    }

    pub fn get(&self, pid: i32) -> &str {
        self.names.get(&pid).map(String::as_str).unwrap_or("<...>")
    }
}

#[cfg(test)]
mod tests {
    use super::TaskNames;
    use rtsleuth_trace::read::ftrace_text::{parse_line, Line, LineContext};

    fn observe(names: &mut TaskNames, line: &str) {
        match parse_line(line, &LineContext::default()) {
            Line::Event(ev, _) => names.observe(&ev),
            other => panic!("not an event: {other:?}"),
        }
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
