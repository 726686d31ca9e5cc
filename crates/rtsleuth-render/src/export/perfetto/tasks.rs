//! Task names for the exported trace. A Perfetto ftrace event carries only its pid; the reader
//! names it from `ProcessTree` thread entries and from the comms earlier events state
//! ([`TaskNames`], the reader's own rules). The export keeps the same [`TaskNames`] as a mirror
//! of what the reader will believe, and writes a thread entry, stamped with the event's time,
//! whenever an event's comm or thread group is not what the reader would say: so the events
//! come back named as they were, and ui.perfetto.dev names the threads.
//!
//! An event whose own fields name its task otherwise (a `sched_switch` whose `prev_comm`
//! differs from the comm printed beside it, as with trace-cmd's stale saved comms) comes back
//! with the name its fields give: the reader learns those after the entry.

use rtsleuth_trace::event::Event;
use rtsleuth_trace::read::perfetto::messages::{Body, ProcessTree, Thread};
use rtsleuth_trace::read::perfetto::tasks::TaskNames;

/// What ftrace prints for a task it has no name for: nothing to carry.
const UNKNOWN_COMM: &str = "<...>";

#[derive(Default)]
pub struct Tasks {
    reader: TaskNames,
}

impl Tasks {
    /// The thread entry to write before `ev` (whose Perfetto body is `body`, if it is
    /// written), when the reader would name its task otherwise.
    pub fn observe(&mut self, ev: &Event<'_>, body: Option<&Body>) -> Option<ProcessTree> {
        let comm =
            (ev.pid > 0 && !ev.comm.is_empty() && ev.comm != UNKNOWN_COMM).then_some(ev.comm);
        let tgid = ev.tgid.filter(|_| ev.pid > 0);
        let (known_comm, known_tgid) = self.reader.task(ev.pid);
        let new_comm = comm.filter(|c| known_comm != *c);
        let new_tgid = tgid.filter(|&t| known_tgid != Some(t));
        let tree = (new_comm.is_some() || new_tgid.is_some()).then(|| ProcessTree {
            processes: Vec::new(),
            threads: vec![Thread {
                tid: Some(ev.pid),
                name: new_comm.map(str::to_string),
                tgid: new_tgid,
            }],
        });
        if let Some(t) = &tree {
            self.reader.apply(t);
        }
        if let Some(b) = body {
            self.reader.learn(b);
        }
        tree
    }

    /// The thread group of `pid`, when the trace said it.
    pub fn tgid(&self, pid: i32) -> Option<i32> {
        self.reader.task(pid).1
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtsleuth_trace::event::{EventKind, Flags};
    use rtsleuth_trace::read::perfetto::messages::SchedWakeup;

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

    fn thread(tree: Option<ProcessTree>) -> Option<(Option<String>, Option<i32>)> {
        tree.map(|t| (t.threads[0].name.clone(), t.threads[0].tgid))
    }

    #[test]
    fn an_entry_when_the_reader_would_name_the_task_otherwise() {
        let mut t = Tasks::default();
        let e = ev(10, "cyclictest", None);
        assert_eq!(
            thread(t.observe(&e, None)),
            Some((Some("cyclictest".into()), None))
        );
        assert_eq!(thread(t.observe(&e, None)), None);
        assert_eq!(thread(t.observe(&ev(10, "<...>", None), None)), None);
        assert_eq!(thread(t.observe(&ev(0, "<idle>", None), None)), None);
        // A group alone, also for a task without a name.
        let e = ev(11, "<...>", Some(9));
        assert_eq!(thread(t.observe(&e, None)), Some((None, Some(9))));
        assert_eq!(t.tgid(11), Some(9));
        // An event names pid 10 otherwise: the next event of pid 10 says its name again.
        let woken = Body::SchedWakeup(SchedWakeup {
            comm: Some("renamed".into()),
            pid: Some(10),
            ..SchedWakeup::default()
        });
        assert_eq!(
            thread(t.observe(&ev(11, "<...>", None), Some(&woken))),
            None
        );
        let e = ev(10, "cyclictest", None);
        assert_eq!(
            thread(t.observe(&e, None)),
            Some((Some("cyclictest".into()), None))
        );
    }
}
