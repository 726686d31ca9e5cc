//! Names and thread groups of tasks. A Perfetto ftrace event carries only the running task's
//! pid; the name ftrace would print beside it is learnt from the `ProcessTree` snapshots and
//! from the comms the scheduler events state, as the trace goes.

use super::bundle::UNKNOWN_COMM;
use super::messages::{Body, ProcessTree};
use crate::event::same_comm;
use rustc_hash::FxHashMap as HashMap;

/// What is known of a task: both are looked up for every event, so they share one entry.
#[derive(Default)]
struct Known {
    comm: Option<String>,
    tgid: Option<i32>,
}

#[derive(Default)]
pub struct TaskNames {
    tasks: HashMap<i32, Known>,
}

impl TaskNames {
    /// Thread names are the kernel's comms; a process's command line only names its main
    /// thread when nothing better is known.
    pub fn apply(&mut self, tree: &ProcessTree) {
        for t in &tree.threads {
            let Some(tid) = t.tid else { continue };
            if let Some(name) = &t.name {
                self.set(tid, name);
            }
            if let Some(tgid) = t.tgid {
                self.tasks.entry(tid).or_default().tgid = Some(tgid);
            }
        }
        for p in &tree.processes {
            let Some(pid) = p.pid else { continue };
            let known = self.tasks.entry(pid).or_default();
            known.tgid = Some(pid);
            if let Some(cmd) = p.cmdline.first().filter(|c| !c.is_empty()) {
                let base = cmd.rsplit('/').next().unwrap_or(cmd);
                known.comm.get_or_insert_with(|| base.to_string());
            }
        }
    }

    /// Learns the comms an event states, before the event itself is named.
    pub fn learn(&mut self, body: &Body) {
        match body {
            Body::SchedSwitch(s) => {
                self.learn_pair(s.prev_pid, &s.prev_comm);
                self.learn_pair(s.next_pid, &s.next_comm);
            }
            Body::SchedWaking(w) | Body::SchedWakeup(w) | Body::SchedWakeupNew(w) => {
                self.learn_pair(w.pid, &w.comm)
            }
            Body::SchedMigrateTask(m) => self.learn_pair(m.pid, &m.comm),
            Body::SchedProcessFork(f) => self.learn_pair(f.child_pid, &f.child_comm),
            Body::TaskNewtask(t) => self.learn_pair(t.pid, &t.comm),
            Body::TaskRename(t) => self.learn_pair(t.pid, &t.newcomm),
            _ => {}
        }
    }

    fn learn_pair(&mut self, pid: Option<i32>, comm: &Option<String>) {
        if let (Some(pid), Some(comm)) = (pid, comm) {
            self.set(pid, comm);
        }
    }

    /// Pid 0 is the idle task, which ftrace prints as `<idle>`; negative pids are unknown
    /// tasks (a compact event before the CPU's first switch) and are never named.
    fn set(&mut self, pid: i32, comm: &str) {
        if pid <= 0 || comm.is_empty() {
            return;
        }
        match &mut self.tasks.entry(pid).or_default().comm {
            Some(c) if same_comm(c, comm) => {}
            Some(c) => comm.clone_into(c),
            none => *none = Some(comm.to_string()),
        }
    }

    /// The name ftrace would print for `pid`, and its thread group.
    pub fn task(&self, pid: i32) -> (&str, Option<i32>) {
        let known = self.tasks.get(&pid);
        let comm = match pid {
            0 => "<idle>",
            _ => known
                .and_then(|k| k.comm.as_deref())
                .unwrap_or(UNKNOWN_COMM),
        };
        (comm, known.and_then(|k| k.tgid))
    }
}

#[cfg(test)]
mod tests {
    use super::super::messages::{Process, SchedSwitch, Thread};
    use super::*;

    #[test]
    fn process_tree_then_events() {
        let mut t = TaskNames::default();
        t.apply(&ProcessTree {
            processes: vec![Process {
                pid: Some(100),
                cmdline: vec!["/system/bin/surfaceflinger".into(), "--x".into()],
            }],
            threads: vec![Thread {
                tid: Some(101),
                name: Some("RenderThread".into()),
                tgid: Some(100),
            }],
        });
        assert_eq!(t.task(100), ("surfaceflinger", Some(100)));
        assert_eq!(t.task(101), ("RenderThread", Some(100)));
        assert_eq!(t.task(102), ("<...>", None));
        t.learn(&Body::SchedSwitch(SchedSwitch {
            prev_pid: Some(0),
            prev_comm: Some("swapper/1".into()),
            next_pid: Some(100),
            next_comm: Some("surfaceflinger".into()),
            ..SchedSwitch::default()
        }));
        assert_eq!((t.task(0).0, t.task(100).0), ("<idle>", "surfaceflinger"));
    }
}
