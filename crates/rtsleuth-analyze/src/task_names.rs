//! The best known name of every pid. Lines often say `<...>` (the kernel's comm cache missed),
//! while sched events carry the real comm in their payload; analyses report the real one.

use rtsleuth_trace::event::{Event, EventKind};
use rustc_hash::FxHashMap as HashMap;

#[derive(Debug, Default)]
pub struct TaskNames {
    names: HashMap<i32, String>,
}

impl TaskNames {
    /// Learns names from an event: its line's comm and the comms its payload names.
    pub fn observe(&mut self, ev: &Event<'_>) {
        self.learn(ev.pid, ev.comm);
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
        if comm == "<...>" || comm.is_empty() {
            return;
        }
        match self.names.get_mut(&pid) {
            Some(known) if known == comm => {}
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
