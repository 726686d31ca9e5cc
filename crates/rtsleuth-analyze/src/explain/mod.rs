//! `rtsleuth explain`: why each late wake-up of the target tasks was late.
//!
//! # Method
//! A wake-up is what [`crate::wakeups`] defines (the definition `latency` uses, so
//! every finding is one of `latency`'s wake-ups with the same timestamps), and is explained from
//! the time the task was *due*, when the trace proves it:
//! - **timer**: the task armed an hrtimer (`hrtimer_start function=hrtimer_wakeup`, on the
//!   task's own line) and that timer's callback woke it. It was due at the timer's
//!   `softexpires=` (what the task asked for; the slack is part of the lateness), converted to
//!   the trace clock by [`clock::HrtimerClock`].
//! - **tracemark**: `cyclictest --tracemark` wrote `hit latency threshold (X > Y)` after the
//!   task ran: it was due X µs before it was switched in.
//! - **period**: the task's own wake-ups keep a strict rhythm up to this one ([`period`] states
//!   the rule); never more than one period is claimed.
//! - **wakeup**: nothing proves when it was due; only the time after the wake-up is explained.
//!
//! The timerlat tracer's thread is explained from its own samples and osnoise's noise events
//! when the trace has no scheduler wake-ups of it ([`timerlat`]); its sample then proves the
//! due time (source `timer`).
//!
//! A task cannot be late while it still runs: the explained time starts no earlier than its last
//! event in task context before the wake-up. The latency is then cut into stretches (see
//! [`decompose`]), each claiming only what the events show; every nanosecond from the start to
//! the run belongs to exactly one, so they add up to the latency.
//!
//! # Targets
//! `--pid` / `--task` / `--all`; by default every real-time task (prio below 100), narrowed at
//! the end to the task a cyclictest mark names when the trace has one.
//!
//! # Memory
//! Each CPU keeps a bounded look-back history ([`timeline`]); each target task keeps its wake-up
//! in flight, its last explained one, its `top` worst findings and an aggregate per kind and
//! culprit. Nothing grows with the length of the trace.

mod block_queue;
mod cause;
mod cause_total;
mod chain;
mod clock;
mod decompose;
mod deferred;
mod finding;
mod outline;
mod period;
mod queueing;
mod rank;
mod report;
mod timeline;
mod timerlat;
mod victim;

pub use cause::{Cause, Phase, Source};
pub use cause_total::CauseTotal;
pub use clock::HrtimerClock;
pub use outline::{Outline, OutlineStretch};
pub use victim::SAME_WAKEUP_NS;

use crate::names::Names;
use crate::task_names::PriosStated;
use crate::wakeups::{RunAt as WakeEnd, Step, Wake, Wakeups};
use crate::waking::{IrqSelector, Waker};
use chain::{Chain, Chains, Link, WokenBy};
use decompose::{bound_kernel_path, decompose, WakeUp, Window, MIN_CAUSE_NS};
use finding::{join_neighbours, merge, Component, Culprit, Evidence, Finding, Note, RunAt};
use rtsleuth_trace::event::{Event, EventKind, Timestamp};
use rtsleuth_trace::input::Format;
use rtsleuth_trace::read::{Decode, EventSink};
use rustc_hash::FxHashMap as HashMap;
use timeline::{CpuTimeline, Irq, WakeContext};
use victim::{Due, Explained, Filing, Pending, Victim};

/// Which tasks to explain and how much to report.
#[derive(Debug, Clone)]
pub struct ExplainOptions {
    /// Only these pids.
    pub pids: Vec<i32>,
    /// Only tasks whose comm contains one of these.
    pub comms: Vec<String>,
    /// Every task, not only real-time ones.
    pub all: bool,
    /// How many of the worst findings to report.
    pub top: usize,
    /// Explain every wake-up at least this late and aggregate them.
    pub threshold_us: Option<f64>,
    /// Explain preemption waits too: switched out still runnable, until switched in again.
    pub preemptions: bool,
    /// Only wake-ups whose wake chain this interrupt started.
    pub irq: Option<IrqSelector>,
    /// Only kworkers' wake-ups by the queueing of a work (`source: queued`).
    pub works: bool,
    /// Only the wake-up due at this time (trace clock, ns), within 20 µs: the one a measuring
    /// thread timed, however late its others were.
    pub due_ns: Option<Timestamp>,
}

/// A due time given in seconds (`--due`, Python's `due=`) in trace-clock ns; `None` when it
/// is not a time: negative, infinite or NaN.
pub fn due_ns_of_seconds(secs: f64) -> Option<Timestamp> {
    (secs.is_finite() && secs >= 0.0).then(|| (secs * 1e9).round() as Timestamp)
}

impl Default for ExplainOptions {
    fn default() -> Self {
        ExplainOptions {
            pids: Vec::new(),
            comms: Vec::new(),
            all: false,
            top: 5,
            threshold_us: None,
            preemptions: false,
            irq: None,
            works: false,
            due_ns: None,
        }
    }
}

/// When a task was last seen on a CPU.
#[derive(Debug, Clone, Copy)]
struct Running {
    /// Its latest event in any context.
    any: Timestamp,
    /// Its latest event in task context.
    task: Option<Timestamp>,
}

/// The `hrtimer_wakeup` timer a task armed last.
#[derive(Debug, Clone, Copy)]
struct Armed {
    hrtimer: u64,
    softexpires: u64,
    expires: u64,
    at: Timestamp,
}

impl Armed {
    /// The proof of a due time: this arming, and its callback's entry at `fired`.
    fn evidence(&self, fired: Timestamp) -> Evidence {
        Evidence::Timer {
            armed: self.at,
            softexpires: self.softexpires,
            fired,
        }
    }
}

/// The armed timer whose callback woke its task, in the trace clock.
#[derive(Debug, Clone, Copy)]
struct OwnTimer {
    hrtimer: u64,
    /// Its soft expiry: when the task asked to run.
    due: Timestamp,
    /// Its hard expiry, when later than that: the slack in between is the kernel's to use.
    hard: Option<Timestamp>,
    evidence: Evidence,
}

impl OwnTimer {
    fn due(self) -> Due {
        Due {
            ts: self.due,
            source: Source::Timer,
            evidence: self.evidence,
        }
    }
}

/// Where an explained wait ends: on which CPU, when and at what (`run`), and where `latency`
/// ends the wake-up (`run`, except past it for a mark).
#[derive(Debug, Clone, Copy)]
struct End {
    cpu: u32,
    run: Timestamp,
    run_at: RunAt,
    wake_end: Timestamp,
}

impl End {
    fn of(w: &Wake) -> End {
        End {
            cpu: w.cpu,
            run: w.run,
            run_at: RunAt::Wake(w.run_at),
            wake_end: w.run,
        }
    }

    fn of_finding(f: &Finding) -> End {
        End {
            cpu: f.cpu,
            run: f.run,
            run_at: f.run_at,
            wake_end: f.wake_end,
        }
    }
}

/// The streaming analysis.
#[derive(Debug)]
pub struct Explain {
    opts: ExplainOptions,
    cpus: Vec<Option<CpuTimeline>>,
    names: Names,
    /// Names and last known priorities of every task.
    tasks: crate::TaskNames,
    /// The priorities the event being fed states, with those they replace: until the event's
    /// timeline is fed and what it settles is filed, it is judged by the earlier ones.
    stated: PriosStated,
    clock: HrtimerClock,
    armed: HashMap<i32, Armed>,
    /// The other hrtimer each task armed last in its own context (a timerfd's).
    armed_other: HashMap<i32, Armed>,
    /// The hrtimers whose callbacks run now: their expire entry's time and `now=`.
    expiring: HashMap<u64, (Timestamp, u64)>,
    victims: HashMap<i32, Victim>,
    /// Each task's latest event in any context and in task context: a task that ran after its
    /// due time was not waiting then, its first wake-up in the trace included.
    running: HashMap<i32, Running>,
    /// The targets' preemption waits (`--preemptions`), each task's kept as a victim of its
    /// own: the first `sched_waking` redefines wake-ups, not these.
    preempted: HashMap<i32, Victim>,
    wakeups: Wakeups,
    /// The tracker's steps of the current event (kept to reuse its allocation).
    steps: Vec<Step>,
    /// The tasks running from a wake-up a proven wake chain led to.
    chains: Chains,
    /// Tasks that wrote cyclictest's `hit latency threshold` mark.
    marked: Vec<i32>,
    dropped_by_lost: u64,
    timerlat: timerlat::Timerlat,
    /// Findings waiting for a CPU's next event to show who held it.
    deferred: Vec<deferred::Deferred>,
}

impl Explain {
    pub fn new(opts: ExplainOptions) -> Explain {
        Explain {
            opts,
            cpus: Vec::new(),
            names: Names::default(),
            tasks: Default::default(),
            stated: PriosStated::default(),
            clock: HrtimerClock::default(),
            armed: HashMap::default(),
            armed_other: HashMap::default(),
            expiring: HashMap::default(),
            victims: HashMap::default(),
            running: HashMap::default(),
            preempted: HashMap::default(),
            wakeups: Wakeups::default(),
            steps: Vec::new(),
            chains: Chains::default(),
            marked: Vec::new(),
            dropped_by_lost: 0,
            timerlat: timerlat::Timerlat::default(),
            deferred: Vec::new(),
        }
    }

    /// Which findings are filed, from the options.
    fn filing(&self) -> Filing {
        Filing {
            threshold_ns: (self.opts.threshold_us).map_or(0, |us| (us * 1e3).round() as u64),
            due: self.opts.due_ns,
            top: self.opts.top,
        }
    }

    fn is_target(&self, pid: i32, prio: i32) -> bool {
        if pid == 0 {
            return false;
        }
        let o = &self.opts;
        if !o.pids.is_empty() || !o.comms.is_empty() {
            let comm = self.tasks.get(pid);
            return o.pids.contains(&pid) || o.comms.iter().any(|c| comm.contains(c.as_str()));
        }
        o.all || prio < 100
    }

    /// A wake-up of `pid` starts with `ev` (on the waker's CPU).
    fn woken(&mut self, ev: &Event<'_>, pid: i32) {
        let Some((prio, target)) = self.woken_prio(ev, pid) else {
            return;
        };
        let is_target = self.is_target(pid, prio);
        let exit_path = self.chains.followed
            && timeline(&mut self.cpus, ev.cpu, ev.ts)
                .exit_path
                .hides_waker(ev);
        let waker = Waker::of(ev).filter(|_| self.chains.followed && !exit_path);
        let chained = match waker {
            Some(Waker::HardIrq) => true,
            Some(Waker::Task(p)) => self.chains.holds(p),
            Some(Waker::Softirq(p)) => is_target && self.chains.runs_after_interrupt(p),
            None => exit_path,
        };
        if !is_target && !chained {
            self.chains.drop_task(pid);
            return;
        }
        let context = timeline(&mut self.cpus, ev.cpu, ev.ts).wake_context();
        let timer = self.own_timer(ev, pid, context);
        let queued = self.queued(ev);
        let wake = WakeUp {
            context,
            own_timer: timer.map(|t| t.hrtimer),
            slack_until: timer.and_then(|t| t.hard),
            by_queueing: queued.is_some(),
            ..WakeUp::new(pid, prio, (ev.cpu, ev.ts), target.unwrap_or(ev.cpu))
        };
        let (last_ran, on_cpu) =
            (self.running.get(&pid)).map_or((None, None), |r| (r.task, Some(r.any)));
        let own = Pending {
            wake,
            due: timer.map(OwnTimer::due).or(queued),
            last_ran,
            chain: None,
        };
        let chain = match (queued, exit_path) {
            // A work's queueing woke it: due then, and the chains through it start there
            // (docs/claims.md, "Works").
            (Some(q), _) => {
                self.chains.start(own.clone(), q, WokenBy::Queue);
                None
            }
            (None, true) => {
                self.chains.exit_path(own.clone());
                None
            }
            (None, false) => self.follow_chain(waker, timer, own.clone()),
        };
        if !is_target {
            return;
        }
        // Still running after the chain began, it was not waiting for all of it.
        let chain = chain.filter(|c| on_cpu.map_or(true, |r| r <= c.start.ts));
        if !self.selects(chain.as_ref(), own.due) {
            return;
        }
        let filing = self.filing();
        self.unlast(pid);
        let v = self.victims.entry(pid).or_default();
        v.sched_woken = true;
        v.commit(filing);
        let rhythm = v.rhythm.wake(ev.ts);
        let due = match (&chain, own.due, rhythm) {
            (Some(c), _, _) => Some(Due {
                source: Source::Chain,
                ..c.start
            }),
            (None, Some(t), _) => Some(t),
            (None, None, Some(r)) => Some(Due {
                ts: r.due,
                source: Source::Period,
                evidence: Evidence::Period { period: r.period },
            }),
            (None, None, None) => None,
        };
        v.pending = Some(Pending { due, chain, ..own });
    }

    /// The due time of the work whose queueing `ev`, a waking, is part of (docs/claims.md,
    /// "Works"), where context flags let the queueing be tied to it.
    fn queued(&mut self, ev: &Event<'_>) -> Option<Due> {
        let followed = self.chains.followed && matches!(ev.kind, EventKind::SchedWaking { .. });
        let q =
            (timeline(&mut self.cpus, ev.cpu, ev.ts).queueing).filter(|q| q.woke && followed)?;
        Some(Due {
            ts: q.ts,
            source: Source::Queued,
            evidence: Evidence::Queued {
                at: q.ts,
                function: q.function,
            },
        })
    }

    /// Whether `--irq` and `--works` (when given) keep a wake-up that `chain` led to, or that
    /// was due at `due` by itself: a chain the selected interrupt started; a queued work's.
    fn selects(&self, chain: Option<&Chain>, due: Option<Due>) -> bool {
        let works = !self.opts.works
            || (chain.is_none() && due.is_some_and(|d| d.source == Source::Queued));
        works && self.irq_selects(chain)
    }

    /// Whether `--irq` (when given) selects `chain`: one the selected interrupt started.
    fn irq_selects(&self, chain: Option<&Chain>) -> bool {
        let Some(sel) = &self.opts.irq else {
            return true;
        };
        match chain.map(|c| c.start.evidence) {
            Some(Evidence::Interrupt {
                irq: Some(Irq::Handler { irq, name }),
                ..
            }) => sel.selects(irq, self.names.get(name)),
            _ => false,
        }
    }

    /// The priority and target CPU of the wake-up of `pid` that `ev` starts.
    fn woken_prio(&self, ev: &Event<'_>, pid: i32) -> Option<(i32, Option<u32>)> {
        match ev.kind {
            EventKind::SchedWaking {
                prio, target_cpu, ..
            }
            | EventKind::SchedWakeup {
                prio, target_cpu, ..
            }
            | EventKind::SchedWakeupNew {
                prio, target_cpu, ..
            } => Some((prio, target_cpu)),
            // A waking that raced the task's own switch-out: woken as it left this CPU.
            EventKind::SchedSwitch {
                prev_pid,
                prev_prio,
                ..
            } if prev_pid == pid => prev_prio
                .or(self.prio(pid))
                .map(|prio| (prio, Some(ev.cpu))),
            _ => None,
        }
    }

    /// The timer `pid` armed, when its callback is what woke it: due at the armed expiry,
    /// converted with the calibration of the CPU it fired on (now the timer's own expiry event,
    /// the most exact point there is), and never after its callback started.
    fn own_timer(&mut self, ev: &Event<'_>, pid: i32, context: WakeContext) -> Option<OwnTimer> {
        let a = self.armed.get(&pid)?;
        let (fired, entry) = context.callback?;
        if a.hrtimer != fired {
            return None;
        }
        let due = self.clock.to_trace(ev.cpu, a.softexpires)?.min(entry);
        let hard = self.clock.to_trace(ev.cpu, a.expires).map(|h| h.min(entry));
        let timer = OwnTimer {
            hrtimer: a.hrtimer,
            due,
            hard: hard.filter(|&h| h > due),
            evidence: a.evidence(entry),
        };
        self.armed.remove(&pid);
        Some(timer)
    }

    /// Keeps the wake chain `own`'s wake-up starts or continues (docs/claims.md, "Wake
    /// chains"), and returns the chain when another task's waking continued one.
    fn follow_chain(
        &mut self,
        waker: Option<Waker>,
        timer: Option<OwnTimer>,
        own: Pending,
    ) -> Option<Chain> {
        let pid = own.wake.pid;
        if let Some(Waker::Softirq(thread)) = waker {
            self.chains.drop_task(pid);
            let due = self.soft_timer_due(pid, &own.wake.context)?;
            return self.chains.soft_timer(thread, due, &own);
        }
        match (waker, timer, own.wake.context.hard_entry) {
            (Some(Waker::HardIrq), Some(t), _) => {
                self.chains.start(own, t.due(), WokenBy::Timer);
                None
            }
            // Its own sleep's timer, armed before the trace began: when it was due is unknown.
            (Some(Waker::HardIrq), None, _) if self.sleeper_callback(&own.wake.context) => {
                self.chains.drop_task(pid);
                None
            }
            (Some(Waker::HardIrq), None, Some(entry)) => {
                let irq = own.wake.context.hard_irq;
                let due = Due {
                    ts: entry,
                    source: Source::Chain,
                    evidence: Evidence::Interrupt { entry, irq },
                };
                self.chains.start(own, due, WokenBy::Interrupt);
                None
            }
            (Some(Waker::Task(p)), _, _) => {
                let chain = self.chains.continue_from(p, own);
                if chain.is_none() {
                    self.chains.drop_task(pid);
                }
                chain
            }
            _ => {
                self.chains.drop_task(pid);
                None
            }
        }
    }

    /// When the soft timer whose callback is waking `pid` was due, if `pid` armed it itself
    /// (a timerfd's, whose callback runs in a softirq thread on PREEMPT_RT).
    fn soft_timer_due(&self, pid: i32, context: &WakeContext) -> Option<Due> {
        let (fired, entry) = context.callback.filter(|_| context.callback_soft)?;
        let a = self.armed_other.get(&pid).filter(|a| a.hrtimer == fired)?;
        // Converted through this callback's own expire entry: a hard interrupt's nested in
        // the softirq since would have moved the CPU's calibration.
        let &(at, now) = self.expiring.get(&fired)?;
        let due = at.checked_sub(now.checked_sub(a.softexpires)?)?;
        Some(Due {
            ts: due.min(entry),
            source: Source::Timer,
            evidence: a.evidence(entry),
        })
    }

    /// The waking ran inside a sleeper's timer callback (`hrtimer_wakeup`).
    fn sleeper_callback(&self, context: &WakeContext) -> bool {
        (context.callback_function).is_some_and(|f| self.names.get(f) == "hrtimer_wakeup")
    }

    /// `pid` was switched out by `ev` while still runnable, in favour of `by`: with
    /// `--preemptions`, a target's wait for the CPU starts here, due at once.
    fn switched_out_runnable(&mut self, ev: &Event<'_>, pid: i32, prio: Option<i32>, by: i32) {
        let Some(prio) = prio.or(self.prio(pid)) else {
            return;
        };
        if !self.opts.preemptions || !self.is_target(pid, prio) || !self.selects(None, None) {
            return;
        }
        let due = Due {
            ts: ev.ts,
            source: Source::Preempted,
            evidence: Evidence::Preempted {
                by: (by != 0).then_some(by),
            },
        };
        self.preempted.entry(pid).or_default().pending = Some(Pending {
            wake: WakeUp::new(pid, prio, (ev.cpu, ev.ts), ev.cpu),
            due: Some(due),
            last_ran: Some(ev.ts),
            chain: None,
        });
    }

    /// The preemption wait `w` ended (the tracker kept it, so it lies where the trace is
    /// whole): explain it if it is the target's wait that started at `w.start`.
    fn preemption_ran(&mut self, w: &Wake) {
        let Some(mut p) = (self.preempted.get_mut(&w.pid))
            .and_then(|v| v.pending.take())
            .filter(|p| p.wake.wakeup == w.start)
        else {
            return;
        };
        let finding = self.explain_ended(&mut p, w);
        let kept = self.hold_back(true, p, w, finding);
        let filing = self.filing();
        let v = self.preempted.get_mut(&w.pid).expect("taken from above");
        v.wakeups += 1;
        if let Some((_, finding)) = kept {
            v.file(finding, filing);
        }
    }

    /// The wake-up `w` ended: explain it if it is a target's.
    fn ran(&mut self, w: &Wake) {
        let Some(mut p) = self.victims.get_mut(&w.pid).and_then(|v| v.pending.take()) else {
            return;
        };
        let finding = self.explain_ended(&mut p, w);
        let kept = self.hold_back(false, p, w, finding);
        let v = self
            .victims
            .get_mut(&w.pid)
            .expect("victim looked up above");
        v.wakeups += 1;
        if let Some((pending, finding)) = kept {
            v.last = Some(Explained { pending, finding });
        }
    }

    /// Explains the wait `p` that the tracker ended as `w` (a wake-up or a preemption wait),
    /// judged by the priority it was switched in with when the switch printed one.
    fn explain_ended(&self, p: &mut Pending, w: &Wake) -> Finding {
        if let Some(prio) = w.prio {
            p.wake.ran_prio = prio;
        }
        match &p.chain {
            Some(chain) => self.explain_chain(p, chain, w),
            None => self.explain_for_filing(p, p.due, End::of(w)),
        }
    }

    /// Explains a chained wake-up from the chain's start: each link's wait as that task's own
    /// (the first from the start, as its timer or interrupt made it due), each link's run up
    /// to its waking of the next, then the victim's wait after its wake-up.
    fn explain_chain(&self, p: &Pending, chain: &Chain, w: &Wake) -> Finding {
        let mut timeline = Vec::new();
        let mut head: Option<Finding> = None;
        for (i, link) in chain.links.iter().enumerate() {
            let due = (i == 0).then_some(chain.start);
            let r = link.ran;
            let f = self.explain(&link.pending, due, End::of(&r));
            timeline.extend_from_slice(&f.timeline);
            if link.wakes_next > r.run {
                let culprit = Some(Culprit::Task(r.pid));
                let span = (r.run, link.wakes_next);
                let run = Component::new(
                    Cause::WakerRun,
                    Phase::BeforeWakeup,
                    r.cpu,
                    span,
                    culprit,
                    Note::WakerRun,
                );
                timeline.push(run);
            }
            head.get_or_insert(f);
        }
        timeline
            .iter_mut()
            .for_each(|c| c.phase = Phase::BeforeWakeup);
        let own = self.explain(p, None, End::of(w));
        timeline.extend(own.timeline);
        let head = head.expect("a chain has a link");
        Finding {
            source: Source::Chain,
            expected: head.expected,
            evidence: head.evidence,
            ran_past_due: head.ran_past_due,
            components: merge(timeline.clone()),
            timeline,
            chain: chain.links.iter().map(Link::summary).collect(),
            ..own
        }
    }

    /// Explains `p` from its due time (or its wake-up) to `end`.
    fn explain(&self, p: &Pending, due: Option<Due>, end: End) -> Finding {
        self.decomposed(p, self.undecomposed(p, due, end), end)
    }

    /// [`Self::explain`] for a wait that is only filed: one shorter than the threshold, or not
    /// due when `--due` says, never is, so it is not cut into stretches (a mark or sample that
    /// re-times it explains it again). Cutting can only shrink its latency (a period's due time
    /// may be dropped), never grow it or move its due time.
    fn explain_for_filing(&self, p: &Pending, due: Option<Due>, end: End) -> Finding {
        let f = self.undecomposed(p, due, end);
        if !self.filing().files(&f) {
            return f;
        }
        self.decomposed(p, f, end)
    }

    /// `f`, the finding of `p` up to `end`, cut into stretches.
    fn decomposed(&self, p: &Pending, mut f: Finding, end: End) -> Finding {
        let window = Window {
            from: f.expected.unwrap_or(f.wakeup),
            run: end.run,
            run_cpu: end.cpu,
            proven: matches!(f.source, Source::Timer | Source::Tracemark | Source::Chain),
        };
        let mut timeline = join_neighbours(decompose(&self.cpus, &self.names, &p.wake, window));
        bound_kernel_path(&mut timeline);
        if f.source == Source::Period && unexplained_before_wakeup(&timeline) {
            // An estimated due time is worth stating only where the trace shows what delayed
            // the wake-up; otherwise the lateness would be a guess about a guess.
            return self.explain(p, None, end);
        }
        f.components = merge(timeline.clone());
        f.timeline = timeline;
        f
    }

    /// The finding of `p` from `due` to `end`, with no stretches yet.
    fn undecomposed(&self, p: &Pending, due: Option<Due>, end: End) -> Finding {
        let wake = &p.wake;
        let due_ts = due.map(|d| d.ts.min(wake.wakeup).min(end.run));
        // It cannot have waited while it still ran.
        let expected = due_ts.map(|d| d.max(p.last_ran.unwrap_or(0)).min(wake.wakeup));
        Finding {
            pid: wake.pid,
            prio: Some(self.prio(wake.pid).unwrap_or(wake.prio)),
            cpu: end.cpu,
            source: due.map_or(Source::Wakeup, |d| d.source),
            expected,
            evidence: due.map(|d| d.evidence),
            ran_past_due: due_ts.filter(|&d| Some(d) != expected),
            unrecorded_due: None,
            wakeup: wake.wakeup,
            waker_cpu: wake.waker_cpu,
            wake_irq_entry: wake.context.irq_entry,
            run: end.run,
            run_at: end.run_at,
            wake_end: end.wake_end,
            components: Vec::new(),
            timeline: Vec::new(),
            chain: Vec::new(),
        }
    }

    /// cyclictest's `hit latency threshold (X > Y)`: the task's last wake-up ran X µs after it
    /// was due. A timer-based expected time is exact and stays; otherwise the mark gives it.
    fn threshold_mark(&mut self, pid: i32, latency_us: f64, mark: Timestamp) {
        self.settle_last(pid);
        if !self.marked.contains(&pid) {
            self.marked.push(pid);
        }
        // A proven chain says more than a mark does.
        let Some(done) = (self.victims.get(&pid).and_then(|v| v.last.as_ref()))
            .filter(|d| d.pending.chain.is_none())
        else {
            return;
        };
        let f = &done.finding;
        let finding = if f.source == Source::Timer {
            // cyclictest reads its clock after it is switched in, so its figure also holds what
            // interrupted it before that read. When its mark says much more than the exactly
            // timed wake-up, the time from the switch to the mark is where the rest went.
            let marked_ns = (latency_us * 1e3).round() as u64;
            if marked_ns <= f.latency_ns() + MARK_EXCESS_NS || mark <= f.run {
                return;
            }
            let end = End {
                run: mark,
                run_at: RunAt::Mark,
                ..End::of_finding(f)
            };
            self.explain_for_filing(&done.pending, done.pending.due, end)
        } else {
            // The thread cannot have been due after it was woken: a mark smaller than the
            // visible wait (cyclictest rounds to whole µs) starts at the wake-up.
            let due = Due {
                ts: f.run.saturating_sub((latency_us * 1e3).round() as u64),
                source: Source::Tracemark,
                evidence: Evidence::Tracemark {
                    us: latency_us,
                    mark,
                },
            };
            self.explain_for_filing(&done.pending, Some(due), End::of_finding(f))
        };
        if let Some(done) = self.victims.get_mut(&pid).and_then(|v| v.last.as_mut()) {
            done.finding = finding;
        }
    }

    /// A timerlat thread's sample closed its activation: explain it from osnoise's events,
    /// unless the scheduler's wake-ups of the thread are traced (the engine explains those).
    /// Its priority is not printed with the samples; the thread measures latency by design,
    /// so without one it is a default target.
    fn timerlat_sample(&mut self, s: timerlat::ThreadSample) {
        if self.victims.get(&s.pid).is_some_and(|v| v.sched_woken) {
            self.timerlat.close(&s);
            self.timed_by_sample(&s);
            return;
        }
        let from = self.wakeups.history.measured_from(s.cpu);
        if let Some(f) = self.timerlat.explain(&s, from) {
            self.file_timerlat(f);
        }
    }

    /// A timerlat thread whose wake-ups the scheduler's events show: its sample proves when the
    /// wake-up it closes was due, and its figure also holds the time from the switch to the
    /// sample, so that wake-up is explained again from the due time to the sample.
    fn timed_by_sample(&mut self, s: &timerlat::ThreadSample) {
        self.settle_last(s.pid);
        let Some(done) = (self.victims.get(&s.pid).and_then(|v| v.last.as_ref()))
            .filter(|d| d.pending.chain.is_none())
        else {
            return;
        };
        let f = &done.finding;
        // The sample's own wake-up came from its timer, so after the due time (the text
        // prints both to the µs); an earlier one is a previous activation's. Woken in place,
        // the thread was on its CPU when due: no wait for the sample to time.
        let in_place = f.run_at == RunAt::Wake(WakeEnd::Resumed);
        if f.run > s.ts || f.wakeup + 1_000 < s.due() || in_place {
            return;
        }
        // Never before the trace is whole there (V1).
        let from = self
            .wakeups
            .history
            .measured_from(s.cpu)
            .unwrap_or(Timestamp::MAX);
        let due = Due {
            ts: s.due().max(from),
            source: Source::Timer,
            evidence: s.evidence(),
        };
        let end = End {
            run: s.ts,
            run_at: RunAt::Mark,
            ..End::of_finding(f)
        };
        let mut finding = self.explain_for_filing(&done.pending, Some(due), end);
        if s.due() < from {
            finding.unrecorded_due = Some(s.due());
            finding.ran_past_due = finding.ran_past_due.filter(|&d| d > from);
        }
        if let Some(done) = self.victims.get_mut(&s.pid).and_then(|v| v.last.as_mut()) {
            done.finding = finding;
        }
    }

    /// The activations the trace ends inside of, after their timer's interrupt. Filed even for
    /// a thread whose wake-ups the scheduler's events show: that wake-up never ends, and only
    /// the samples tell how late it was.
    fn timerlat_unfinished(&mut self) {
        let history = &self.wakeups.history;
        for f in self.timerlat.unfinished(|cpu| history.measured_from(cpu)) {
            self.file_timerlat(f);
        }
    }

    /// Files an activation explained from its samples, for a target.
    fn file_timerlat(&mut self, mut f: Finding) {
        let prio = self.prio(f.pid);
        if !self.is_target(f.pid, prio.unwrap_or(0)) || !self.selects(None, None) {
            return;
        }
        f.prio = prio;
        let filing = self.filing();
        let v = self.victims.entry(f.pid).or_default();
        v.wakeups += 1;
        v.file(f, filing);
    }

    /// The wake-up of `pid` ended where the trace is not whole: no finding, no chain.
    fn unmeasured(&mut self, pid: i32) {
        self.chains.drop_task(pid);
        if let Some(v) = self.victims.get_mut(&pid) {
            v.pending = None;
        }
    }

    /// The last priority known for `pid`, as the event being fed found it (see `stated`).
    fn prio(&self, pid: i32) -> Option<i32> {
        self.tasks.prio_before(&self.stated, pid)
    }

    /// A task's event in task context: it runs, so it cannot be late before this. In
    /// interrupt context it was the interrupted task: on its CPU, which a wake chain needs to
    /// know. Kept for every task, since its first wake-up may come after it ran.
    fn note_running(&mut self, ev: &Event<'_>) {
        let r = self.running.entry(ev.pid).or_insert(Running {
            any: ev.ts,
            task: None,
        });
        r.any = ev.ts;
        if !(ev.flags.hardirq || ev.flags.softirq || ev.flags.nmi) {
            r.task = Some(ev.ts);
        }
    }

    /// Acts on what the wake-up tracker made of the event (most events make nothing).
    fn follow_steps(&mut self, ev: &Event<'_>) {
        let mut steps = std::mem::take(&mut self.steps);
        for step in steps.drain(..) {
            match step {
                Step::Start { pid } => self.woken(ev, pid),
                Step::End(w) => {
                    self.chains.ran(&w);
                    self.ran(&w);
                }
                // Findings measured the other way are not `latency`'s wake-ups any more.
                Step::Redefined => {
                    self.victims.clear();
                    self.deferred.clear();
                    self.chains.clear();
                }
                Step::Unmeasured { pid } => self.unmeasured(pid),
                Step::Impossible { cpus } => cpus.iter().for_each(|&c| self.forget(Some(c))),
                Step::Preempted(w) => self.preemption_ran(&w),
                // Switched out, it stops running from the wake-up its chain led to.
                Step::Switch { prev, .. } => self.chains.drop_task(prev),
            }
        }
        self.steps = steps;
    }

    /// What the event's own kind tells explain beyond the CPU's history and the wake-ups:
    /// runnable switch-outs, queued wake-ups and migrations, armed and expiring timers,
    /// cyclictest's marks.
    fn follow_kind(&mut self, ev: &Event<'_>) {
        match ev.kind {
            EventKind::SchedSwitch {
                prev_pid,
                prev_prio,
                prev_state,
                next_pid,
                ..
            } if prev_pid > 0 && prev_state.is_runnable() => {
                self.switched_out_runnable(ev, prev_pid, prev_prio, next_pid);
            }
            EventKind::SchedWakeup {
                pid,
                target_cpu: Some(cpu),
                ..
            } => {
                if let Some(p) = self.victims.get_mut(&pid).and_then(|v| v.pending.as_mut()) {
                    p.wake.queued(cpu, ev.ts);
                }
                self.chains.queued(pid, cpu, ev.ts);
            }
            EventKind::SchedMigrateTask { pid, dest_cpu, .. } => {
                for v in [self.victims.get_mut(&pid), self.preempted.get_mut(&pid)] {
                    if let Some(p) = v.and_then(|v| v.pending.as_mut()) {
                        p.wake.queued(dest_cpu, ev.ts);
                    }
                }
                self.chains.queued(pid, dest_cpu, ev.ts);
            }
            EventKind::HrtimerStart {
                hrtimer,
                function,
                softexpires,
                expires,
            } if ev.pid != 0 => {
                let armed = Armed {
                    hrtimer,
                    softexpires,
                    expires,
                    at: ev.ts,
                };
                let own_context = ev.flags.known && !ev.flags.hardirq && !ev.flags.softirq;
                if function == "hrtimer_wakeup" {
                    self.armed.insert(ev.pid, armed);
                } else if own_context {
                    self.armed_other.insert(ev.pid, armed);
                }
            }
            EventKind::HrtimerExpireEntry { now, hrtimer, .. } => {
                self.clock.observe(ev.cpu, ev.ts, now);
                self.expiring.insert(hrtimer, (ev.ts, now));
            }
            EventKind::HrtimerExpireExit { hrtimer } => {
                self.expiring.remove(&hrtimer);
            }
            EventKind::Marker { text, .. } => {
                if let Some(us) = threshold_latency_us(text) {
                    self.threshold_mark(ev.pid, us, ev.ts);
                }
            }
            _ => {}
        }
    }
}

/// Time before the wake-up that the trace cannot account for (beyond the ordinary delivery).
fn unexplained_before_wakeup(timeline: &[finding::Component]) -> bool {
    timeline.iter().any(|c| {
        c.phase == Phase::BeforeWakeup && c.cause == Cause::Unknown && c.ns >= MIN_CAUSE_NS
    })
}

/// How far cyclictest's mark may exceed a timer-timed latency before the time after the switch
/// is explained too: cyclictest's own path from the switch to its clock read is tens of µs.
const MARK_EXCESS_NS: u64 = 1_000_000;

/// The history of `cpu`, begun at `ts` if this is its first event.
fn timeline(cpus: &mut Vec<Option<CpuTimeline>>, cpu: u32, ts: Timestamp) -> &mut CpuTimeline {
    let i = cpu as usize;
    if !matches!(cpus.get(i), Some(Some(_))) {
        begin_timeline(cpus, i, ts);
    }
    cpus[i].as_mut().expect("begun above")
}

/// Begins the history of CPU `i` at `ts`, once per CPU: kept out of [`timeline`], which every
/// event calls, so that it is small enough to be inlined.
#[cold]
fn begin_timeline(cpus: &mut Vec<Option<CpuTimeline>>, i: usize, ts: Timestamp) {
    if i >= cpus.len() {
        cpus.resize_with(i + 1, || None);
    }
    cpus[i] = Some(CpuTimeline::new(ts));
}

/// The latency in µs of cyclictest's `hit latency threshold (X > Y)` mark.
fn threshold_latency_us(text: &str) -> Option<f64> {
    let rest = &text[text.find("hit latency threshold (")? + "hit latency threshold (".len()..];
    rest.split_once(" > ")?.0.trim().parse().ok()
}

impl EventSink for Explain {
    fn event(&mut self, ev: &Event<'_>) {
        self.stated = self.tasks.observe_stating_prios(ev);
        if let Some(s) = self.timerlat.event(ev, &mut self.names) {
            self.timerlat_sample(s);
        }
        let (tasks, stated) = (&self.tasks, &self.stated);
        timeline(&mut self.cpus, ev.cpu, ev.ts)
            .on_event(ev, &mut self.names, |pid| tasks.prio_before(stated, pid));
        self.shown(ev.cpu);
        self.stated = PriosStated::default();
        if let Some((pid, prio)) = ev.pi_setprio() {
            for tl in self.cpus.iter_mut().flatten() {
                tl.set_prio(pid, prio, ev.ts);
            }
            self.tasks.set_prio(pid, prio);
        }
        self.wakeups.event(ev, &mut self.steps);
        if !self.steps.is_empty() {
            self.follow_steps(ev);
        }
        if ev.shows_current_task() {
            self.note_running(ev);
        }
        self.follow_kind(ev);
    }

    fn decode(&self) -> Decode {
        Decode::Typed
    }

    /// perf.data records carry the context flags, but no tool of perf's prints them (`perf
    /// script`), so no one could check a chain there: none is followed.
    fn format(&mut self, format: Format) {
        self.chains.followed = format != Format::PerfData;
    }

    fn lost(&mut self, cpu: Option<u32>, _count: Option<u64>) {
        self.wakeups.lost();
        self.forget(cpu);
        // What follows a loss shows nothing about who held the CPU before it.
        match cpu {
            Some(cpu) => self.shown(cpu),
            None => self.settle_all(),
        }
    }

    fn history_begins(&mut self, cpu: Option<u32>) {
        let late = self.wakeups.history.begins_late(cpu);
        self.wakeups.history.begins(cpu);
        if late {
            // Everything measured so far began before that CPU's history: outside the common
            // window, as every wake-up still in flight.
            self.victims.clear();
            self.preempted.clear();
            self.deferred.clear();
            self.chains.clear();
        }
    }
}

impl Explain {
    /// What was in flight on `cpu` (every CPU for `None`) cannot be trusted: events were lost.
    fn forget(&mut self, cpu: Option<u32>) {
        // Dropped in place: moving each wake-up out would copy it, for every task, each time.
        for v in self.victims.values_mut().filter(|v| v.pending.is_some()) {
            v.pending = None;
            self.dropped_by_lost += 1;
        }
        for v in self.preempted.values_mut() {
            v.pending = None;
        }
        self.chains.clear();
        self.timerlat.lost(cpu);
        for (i, tl) in self.cpus.iter_mut().enumerate() {
            if let Some(tl) = tl
                .as_mut()
                .filter(|_| cpu.map_or(true, |c| c as usize == i))
            {
                tl.lost();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_cyclictest_marks() {
        assert_eq!(
            threshold_latency_us("hit latency threshold (1952 > 1000)"),
            Some(1952.0)
        );
        assert_eq!(
            threshold_latency_us("tracing_mark_write: hit latency threshold (37 > 20)"),
            Some(37.0)
        );
        assert_eq!(threshold_latency_us("fifo_burst start 300"), None);
        assert_eq!(threshold_latency_us("hit latency threshold (x > 3)"), None);
    }
}
