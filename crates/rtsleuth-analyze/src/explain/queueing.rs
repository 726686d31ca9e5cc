//! A work's queueing waking its pool's worker (docs/claims.md, "Works"): `__queue_work`
//! traces `workqueue_queue_work`, then `workqueue_activate_work`, then wakes an idle kworker,
//! all in the queuer's context. A waking that follows a queueing on its CPU with nothing else
//! in between is that queueing's; the kworker was due when the work was queued.

use crate::names::{NameId, Names};
use rtsleuth_trace::event::{Event, EventKind, Timestamp};

/// A queueing on a CPU, followed so far only by its own activation (and, once `woke`, by the
/// waking it did).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Queueing {
    pub ts: Timestamp,
    pub function: NameId,
    work: u64,
    /// The pid column and the context it ran in: its events all share them.
    pid: i32,
    context: (bool, bool),
    /// The latest event was the waking it did.
    pub woke: bool,
}

impl Queueing {
    fn continued_by(&self, ev: &Event<'_>) -> bool {
        ev.pid == self.pid && context(ev) == self.context && !self.woke
    }
}

fn context(ev: &Event<'_>) -> (bool, bool) {
    (ev.flags.hardirq, ev.flags.softirq)
}

/// Sets `queueing` to the one the CPU's latest event `ev` continues: begun by it, or kept by
/// its activation or by the waking that ends it. Any other event ends it; without context
/// flags nothing can be tied. In place, since every event passes here.
pub fn follow(queueing: &mut Option<Queueing>, ev: &Event<'_>, names: &mut Names) {
    match ev.kind {
        EventKind::WorkqueueQueueWork { work, function, .. } if ev.flags.known => {
            *queueing = Some(Queueing {
                ts: ev.ts,
                function: names.intern(function),
                work,
                pid: ev.pid,
                context: context(ev),
                woke: false,
            })
        }
        EventKind::WorkqueueActivateWork { work } => {
            if !queueing.is_some_and(|q| q.continued_by(ev) && q.work == work) {
                *queueing = None;
            }
        }
        EventKind::SchedWaking { .. } => match queueing {
            Some(q) if q.continued_by(ev) => q.woke = true,
            _ => *queueing = None,
        },
        _ => *queueing = None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtsleuth_trace::read::ftrace_text::{parse_line, Line, LineContext};

    fn run(lines: &[&str]) -> Option<Queueing> {
        let mut names = Names::default();
        let mut q = None;
        for l in lines {
            let Line::Event(ev, _) = parse_line(l, &LineContext::default()) else {
                panic!("not an event: {l}");
            };
            follow(&mut q, &ev, &mut names);
        }
        q
    }

    const QUEUE: &str = "              sh-9451    [001] d..1. 13014.866319: workqueue_queue_work: work struct=00000000867b278f function=refresh_vm_stats workqueue=events req_cpu=0 cpu=0";
    const ACTIVATE: &str = "              sh-9451    [001] d..1. 13014.866320: workqueue_activate_work: work struct 00000000867b278f function=refresh_vm_stats ";
    const WAKING: &str = "              sh-9451    [001] d..3. 13014.866321: sched_waking: comm=kworker/0:1 pid=28684 prio=120 target_cpu=000";

    /// The recorded wq fixture's queueing, activation and waking of kworker/0:1.
    #[test]
    fn the_waking_after_a_queueing_is_its() {
        let q = run(&[QUEUE, ACTIVATE, WAKING]).expect("the waking continues it");
        assert!(q.woke);
        assert_eq!(q.ts, 13_014_866_319_000);
    }

    #[test]
    fn anything_else_between_ends_it() {
        let other = "              sh-9451    [001] d..1. 13014.866320: sched_stat_runtime: comm=sh pid=9451 runtime=1 [ns]";
        assert_eq!(run(&[QUEUE, other, WAKING]), None);
        let elsewhere = "              sh-9451    [001] d.h1. 13014.866321: sched_waking: comm=kworker/0:1 pid=28684 prio=120 target_cpu=000";
        assert_eq!(run(&[QUEUE, ACTIVATE, elsewhere]), None);
        // One queueing wakes one worker.
        assert_eq!(run(&[QUEUE, ACTIVATE, WAKING, WAKING]), None);
    }
}
