//! Task names for the exported trace. A Perfetto ftrace event carries only its pid; the name
//! ftrace printed beside it travels in `ProcessTree` thread entries, one written when a pid is
//! first seen with a name (or its name or thread group changes), stamped with that event's time
//! so the reader names the events from then on, and ui.perfetto.dev names the thread.

use crate::event::Event;
use crate::read::perfetto::messages::{ProcessTree, Thread};
use std::collections::HashMap;

/// What ftrace prints for a task it has no name for: nothing to carry.
const UNKNOWN_COMM: &str = "<...>";

#[derive(Default)]
pub struct Tasks {
    known: HashMap<i32, (String, Option<i32>)>,
}

impl Tasks {
    /// The thread entry to write for `ev`'s task, when it says something new.
    pub fn observe(&mut self, ev: &Event<'_>) -> Option<ProcessTree> {
        // The idle task is `<idle>` to every reader without being told.
        if ev.pid <= 0 || ev.comm.is_empty() || ev.comm == UNKNOWN_COMM {
            return None;
        }
        let now = (ev.comm, ev.tgid);
        match self.known.get_mut(&ev.pid) {
            Some((comm, tgid)) if comm == ev.comm && (ev.tgid.is_none() || *tgid == ev.tgid) => {
                return None
            }
            Some((comm, tgid)) => {
                ev.comm.clone_into(comm);
                *tgid = now.1.or(*tgid);
            }
            None => {
                self.known.insert(ev.pid, (now.0.to_string(), now.1));
            }
        }
        Some(ProcessTree {
            processes: Vec::new(),
            threads: vec![Thread {
                tid: Some(ev.pid),
                name: Some(ev.comm.to_string()),
                tgid: self.tgid(ev.pid),
            }],
        })
    }

    /// The thread group of `pid`, when the trace said it.
    pub fn tgid(&self, pid: i32) -> Option<i32> {
        self.known.get(&pid).and_then(|(_, tgid)| *tgid)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::{EventKind, Flags};

    fn ev(pid: i32, comm: &str, tgid: Option<i32>) -> Event<'_> {
        Event {
            ts: 1,
            cpu: 0,
            pid,
            comm,
            tgid,
            flags: Flags::UNKNOWN,
            name: "x",
            payload: "",
            kind: EventKind::Other,
        }
    }

    #[test]
    fn a_thread_entry_when_a_name_or_group_is_new() {
        let mut t = Tasks::default();
        let tree = t.observe(&ev(10, "cyclictest", None)).unwrap();
        assert_eq!(tree.threads[0].tid, Some(10));
        assert_eq!(tree.threads[0].name.as_deref(), Some("cyclictest"));
        assert_eq!(t.observe(&ev(10, "cyclictest", None)), None);
        assert_eq!(t.observe(&ev(10, "<...>", None)), None);
        assert_eq!(t.observe(&ev(0, "<idle>", None)), None);
        let tree = t.observe(&ev(10, "cyclictest", Some(9))).unwrap();
        assert_eq!(tree.threads[0].tgid, Some(9));
        // A line without the TGID column does not forget the group.
        assert_eq!(t.observe(&ev(10, "cyclictest", None)), None);
        let tree = t.observe(&ev(10, "renamed", None)).unwrap();
        assert_eq!(tree.threads[0].tgid, Some(9));
        assert_eq!(t.tgid(10), Some(9));
    }
}
