//! Wake chains (docs/claims.md, "Wake chains"): a task woken by another task was due when the
//! interrupt or timer that started the work came, not at its own wake-up. Each task woken from
//! a hard interrupt starts a chain; a task it wakes while still running from that wake-up (no
//! switch-out in between) continues it, link by link, up to [`DEPTH`] links.
//!
//! Only wake-ups started by a `sched_waking` whose context flags are printed are followed: the
//! waking runs in the waker's context, while a `sched_wakeup` may run in the target CPU's IPI.

use super::finding::ChainLink;
use super::victim::{Due, Pending};
use crate::wakeups::Wake;
use rtsleuth_trace::event::Timestamp;
use rustc_hash::FxHashMap as HashMap;

pub use crate::waking::CHAIN_DEPTH as DEPTH;

/// What woke a task of a chain.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WokenBy {
    /// Its own `hrtimer_wakeup` timer, in hard-IRQ context: the chain's start.
    Timer,
    /// Another hard interrupt: the chain's start.
    Interrupt,
    /// The task of the link before it.
    Task,
    /// A softirq thread, woken after the victim's own soft timer fell due, whose run of that
    /// timer's callback woke the victim: the chain's start is the timer's due time.
    SoftTimer,
    /// The queueing of a work woke it (a kworker): the chain's start is the queueing
    /// (docs/claims.md, "Works").
    Queue,
}

impl WokenBy {
    pub fn as_str(self) -> &'static str {
        match self {
            WokenBy::Timer => "timer",
            WokenBy::Interrupt => "interrupt",
            WokenBy::Task => "task",
            WokenBy::SoftTimer => "soft_timer",
            WokenBy::Queue => "queue",
        }
    }
}

/// One task of a chain: its wake-up as explain cuts it, its run, and the moment it woke the
/// next task.
#[derive(Debug, Clone)]
pub struct Link {
    pub pending: Pending,
    pub woken_by: WokenBy,
    pub ran: Wake,
    pub wakes_next: Timestamp,
}

impl Link {
    /// What reports show of it.
    pub fn summary(&self) -> ChainLink {
        let w = &self.pending.wake;
        ChainLink {
            pid: w.pid,
            prio: w.ran_prio,
            cpu: self.ran.cpu,
            woken: w.wakeup,
            run: self.ran.run,
            wakes_next: self.wakes_next,
            woken_by: self.woken_by,
        }
    }
}

/// A proven chain: when it started, and its links from the first to the victim's waker.
#[derive(Debug, Clone)]
pub struct Chain {
    pub start: Due,
    pub links: Vec<Link>,
}

/// A task running (or about to) from a wake-up a proven chain led to, or from one an
/// interrupt's exit path did (a softirq thread, which may run a victim's soft timer).
#[derive(Debug)]
struct Holder {
    /// The chain up to the task that woke it (no links: an interrupt woke it); none on an
    /// exit path, where what woke it is not proven.
    before: Option<Chain>,
    own: Pending,
    woken_by: WokenBy,
    ran: Option<Wake>,
}

impl Holder {
    /// It runs from a wake-up in hard-IRQ context or on an interrupt's exit path.
    fn runs_after_interrupt(&self) -> bool {
        self.ran.is_some()
            && self.woken_by != WokenBy::Queue
            && self.before.as_ref().map_or(true, |c| c.links.is_empty())
    }
}

/// The tasks that hold a chain, each until it is switched out.
#[derive(Debug)]
pub struct Chains {
    holders: HashMap<i32, Holder>,
    /// Chains are followed in this input (its context flags can be checked).
    pub followed: bool,
}

impl Default for Chains {
    fn default() -> Self {
        Chains {
            holders: HashMap::default(),
            followed: true,
        }
    }
}

impl Chains {
    /// Whether `pid` runs from a wake-up a chain led to (it can continue the chain).
    pub fn holds(&self, pid: i32) -> bool {
        self.holders
            .get(&pid)
            .is_some_and(|h| h.ran.is_some() && h.before.is_some())
    }

    /// Whether `pid` runs from a wake-up in hard-IRQ context or on an exit path.
    pub fn runs_after_interrupt(&self, pid: i32) -> bool {
        self.holders
            .get(&pid)
            .is_some_and(Holder::runs_after_interrupt)
    }

    /// A hard interrupt, or a work's queueing, woke `own.wake.pid`: a chain starts at `start`.
    pub fn start(&mut self, own: Pending, start: Due, woken_by: WokenBy) {
        let before = Chain {
            start,
            links: Vec::new(),
        };
        self.hold(own, Some(before), woken_by);
    }

    /// An interrupt's exit path woke `own.wake.pid`: no chain, but a soft timer's may start at
    /// its run ([`Chains::soft_timer`]).
    pub fn exit_path(&mut self, own: Pending) {
        self.hold(own, None, WokenBy::SoftTimer);
    }

    /// Softirq thread `thread` ran the callback of the victim's own soft timer, due at `due`,
    /// and woke it (`victim` is its wake-up): the one-link chain from the due time, when the
    /// thread was woken from an interrupt no earlier than that and runs since.
    pub fn soft_timer(&mut self, thread: i32, due: Due, victim: &Pending) -> Option<Chain> {
        let h = (self.holders.get(&thread))
            .filter(|h| h.runs_after_interrupt() && h.own.wake.wakeup >= due.ts)?;
        let ran = h.ran?;
        // The victim's timer was due, not the thread: the thread running before its wake-up
        // does not move the start.
        let pending = Pending {
            last_ran: None,
            ..h.own.clone()
        };
        let link = Link {
            pending,
            woken_by: WokenBy::SoftTimer,
            ran,
            wakes_next: victim.wake.wakeup,
        };
        Some(Chain {
            start: due,
            links: vec![link],
        })
    }

    /// Task `waker` woke `own.wake.pid`: the chain that wake-up ends, when the waker holds one
    /// with room for its link. The woken task then holds it too.
    pub fn continue_from(&mut self, waker: i32, own: Pending) -> Option<Chain> {
        let h = self.holders.get(&waker)?;
        let ran = h.ran?;
        let mut chain = h.before.clone()?;
        if chain.links.len() >= DEPTH {
            return None;
        }
        chain.links.push(Link {
            pending: h.own.clone(),
            woken_by: h.woken_by,
            ran,
            wakes_next: own.wake.wakeup,
        });
        self.hold(own, Some(chain.clone()), WokenBy::Task);
        Some(chain)
    }

    fn hold(&mut self, own: Pending, before: Option<Chain>, woken_by: WokenBy) {
        let holder = Holder {
            before,
            own,
            woken_by,
            ran: None,
        };
        self.holders.insert(holder.own.wake.pid, holder);
    }

    /// `pid` holds no chain (woken by something a chain does not follow, or gone). Called
    /// for most wake-ups, while few tasks hold one: an empty map is not searched.
    #[inline]
    pub fn drop_task(&mut self, pid: i32) {
        if !self.holders.is_empty() {
            self.holders.remove(&pid);
        }
    }

    /// `pid` waits on `cpu` from `ts` on (its waking's target, or a migration).
    pub fn queued(&mut self, pid: i32, cpu: u32, ts: Timestamp) {
        if let Some(h) = self.holders.get_mut(&pid) {
            h.own.wake.queued(cpu, ts);
        }
    }

    /// The wake-up `w` ended: its task runs and may wake the next.
    pub fn ran(&mut self, w: &Wake) {
        if let Some(h) = self.holders.get_mut(&w.pid) {
            if h.own.wake.wakeup == w.start {
                if let Some(prio) = w.prio {
                    h.own.wake.ran_prio = prio;
                }
                h.ran = Some(*w);
            } else {
                self.holders.remove(&w.pid);
            }
        }
    }

    /// Events were lost or the trace contradicts itself: no chain in flight can be proven.
    pub fn clear(&mut self) {
        // Clearing costs the table's capacity even when it is empty, and a trace that
        // contradicts itself often forgets often.
        if !self.holders.is_empty() {
            self.holders.clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::cause::Source;
    use super::super::decompose::WakeUp;
    use super::super::finding::Evidence;
    use super::*;
    use crate::wakeups::RunAt;

    fn pending(pid: i32, ts: Timestamp) -> Pending {
        Pending {
            wake: WakeUp::new(pid, 20, (0, ts), 0),
            due: None,
            last_ran: None,
            chain: None,
        }
    }

    fn start(ts: Timestamp) -> Due {
        Due {
            ts,
            source: Source::Chain,
            evidence: Evidence::Interrupt {
                entry: ts,
                irq: None,
            },
        }
    }

    fn ran(pid: i32, start: Timestamp, run: Timestamp) -> Wake {
        Wake {
            pid,
            start,
            run,
            cpu: 0,
            prio: None,
            run_at: RunAt::Switch,
        }
    }

    #[test]
    fn a_chain_goes_on_while_each_waker_still_runs() {
        let mut c = Chains::default();
        c.start(pending(1, 100), start(90), WokenBy::Interrupt);
        // Not yet switched in: it cannot have woken anyone.
        assert!(c.continue_from(1, pending(2, 150)).is_none());
        c.ran(&ran(1, 100, 200));
        let two = c.continue_from(1, pending(2, 250)).expect("1 runs");
        assert_eq!(two.start.ts, 90);
        assert_eq!(two.links.len(), 1);
        assert_eq!((two.links[0].ran.run, two.links[0].wakes_next), (200, 250));
        c.ran(&ran(2, 250, 300));
        let three = c.continue_from(2, pending(3, 320)).expect("2 runs");
        let pids: Vec<i32> = three.links.iter().map(|l| l.pending.wake.pid).collect();
        assert_eq!(pids, [1, 2]);
        assert_eq!(three.links[1].woken_by, WokenBy::Task);
        // Switched out: what it wakes later is not the chain's doing.
        c.drop_task(2);
        assert!(c.continue_from(2, pending(4, 400)).is_none());
    }

    #[test]
    fn a_chain_stops_at_its_depth() {
        let mut c = Chains::default();
        c.start(pending(1, 0), start(0), WokenBy::Interrupt);
        let woken = |pid: i32| {
            if pid == 1 {
                0
            } else {
                (pid as u64 - 1) * 100 + 50
            }
        };
        for pid in 1..=DEPTH as i32 {
            let t = pid as u64 * 100;
            c.ran(&ran(pid, woken(pid), t));
            let chain = c.continue_from(pid, pending(pid + 1, t + 50)).unwrap();
            assert_eq!(chain.links.len(), pid as usize);
        }
        let last = DEPTH as i32 + 1;
        c.ran(&ran(last, woken(last), 2_000));
        assert!(c.continue_from(last, pending(last + 1, 2_100)).is_none());
    }
}
