//! Findings that wait for a CPU's next event. A wait can end while a CPU the task waited on
//! has traced nothing since its running task's last event (the task moved on to another CPU):
//! whether that task still held the CPU up to the move shows only at the CPU's next event, its
//! own or, with no switch traced, another task's (docs/claims.md, task_holds_cpu). Such a
//! finding is explained again once every such CPU has shown one, or earlier when something
//! needs it as the task's latest (a mark about it, a work's wait); explained early, those
//! stretches stay `unknown`. At most [`MAX_DEFERRED`] wait at a time.

use super::finding::{Finding, Note};
use super::victim::{Explained, Pending};
use super::Explain;
use crate::wakeups::Wake;

/// Findings held back at most; past it the oldest is settled as it stands.
const MAX_DEFERRED: usize = 1024;

/// One explained wait held back, as it ended.
#[derive(Debug)]
pub(super) struct Deferred {
    pid: i32,
    /// A preemption wait (`--preemptions`), filed at once when settled.
    preempted: bool,
    /// Still the task's latest wake-up: settled, it becomes the victim's last (which marks
    /// and samples may explain again); once the next wake-up began, it is filed at once.
    as_last: bool,
    pending: Pending,
    wake: Wake,
    /// The task's priority when its wait ended (it may change before the finding settles).
    prio: Option<i32>,
    /// The CPUs whose next event it waits for.
    cpus: Vec<u32>,
}

/// The CPUs whose silence since their task's last event the finding could not judge.
fn unshown(f: &Finding) -> Vec<u32> {
    let mut cpus: Vec<u32> = (f.timeline.iter())
        .filter(|c| matches!(c.note, Note::NothingSince { .. }))
        .map(|c| c.cpu)
        .collect();
    cpus.sort_unstable();
    cpus.dedup();
    cpus
}

impl Explain {
    /// Keeps the finding of the wait `w` (its state `p`) back if a CPU has yet to show who held
    /// it; returns it otherwise.
    pub(super) fn hold_back(
        &mut self,
        preempted: bool,
        pending: Pending,
        wake: &Wake,
        finding: Finding,
    ) -> Option<(Pending, Finding)> {
        let cpus = unshown(&finding);
        if cpus.is_empty() {
            return Some((pending, finding));
        }
        if self.deferred.len() >= MAX_DEFERRED {
            let oldest = self.deferred.remove(0);
            self.settle(oldest);
        }
        self.deferred.push(Deferred {
            pid: wake.pid,
            preempted,
            as_last: !preempted,
            pending,
            wake: *wake,
            prio: finding.prio,
            cpus,
        });
        None
    }

    /// CPU `cpu` traced an event: the findings that waited only for it are explained again.
    /// Called on every event, and mostly nothing waits: inlined, that costs one test rather
    /// than a call that saves and restores registers.
    #[inline(always)]
    pub(super) fn shown(&mut self, cpu: u32) {
        if !self.deferred.is_empty() {
            self.shown_by(cpu);
        }
    }

    fn shown_by(&mut self, cpu: u32) {
        for d in &mut self.deferred {
            d.cpus.retain(|&c| c != cpu);
        }
        self.settle_where(|d| d.cpus.is_empty());
    }

    /// Settles the latest wake-up of `pid` now, if held back: a mark or a work's wait needs
    /// it as the victim's last.
    pub(super) fn settle_last(&mut self, pid: i32) {
        self.settle_where(|d| d.pid == pid && d.as_last);
    }

    /// The next wake-up of `pid` begins: what is held back of it is filed once settled.
    pub(super) fn unlast(&mut self, pid: i32) {
        for d in self.deferred.iter_mut().filter(|d| d.pid == pid) {
            d.as_last = false;
        }
    }

    /// Settles every finding still held back (the trace ended).
    pub(super) fn settle_all(&mut self) {
        self.settle_where(|_| true);
    }

    /// Settles the findings `which` picks. Called on every event: it allocates only when one
    /// is picked.
    fn settle_where(&mut self, which: impl Fn(&Deferred) -> bool) {
        if !self.deferred.iter().any(&which) {
            return;
        }
        let (ready, rest): (Vec<_>, Vec<_>) = std::mem::take(&mut self.deferred)
            .into_iter()
            .partition(|d| which(d));
        self.deferred = rest;
        for d in ready {
            self.settle(d);
        }
    }

    fn settle(&mut self, mut d: Deferred) {
        let finding = Finding {
            prio: d.prio,
            ..self.explain_ended(&mut d.pending, &d.wake)
        };
        let filing = self.filing();
        let map = if d.preempted {
            &mut self.preempted
        } else {
            &mut self.victims
        };
        let Some(v) = map.get_mut(&d.pid) else {
            return;
        };
        if d.as_last {
            v.last = Some(Explained {
                pending: d.pending,
                finding,
            });
        } else {
            v.file(finding, filing);
        }
    }
}
