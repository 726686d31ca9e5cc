//! What each CPU was doing, kept as a bounded history of stretches.
//!
//! A CPU's time is cut into stretches by what runs on it: a task (from `sched_switch`, or
//! inferred when an event shows another task running), or the innermost interrupt frame (hard
//! IRQ handler, x86 vector, hard-IRQ hrtimer callback, softirq). A stretch also keeps what the
//! events inside it said: the flags of its last event and the preemptirq section open during it.
//! Consecutive events with the same activity extend one stretch, so the history grows with
//! changes of activity, not with events, and is trimmed to a look-back window: `explain` needs
//! only the recent past of each CPU, never the whole trace.
//!
//! A silence of [`SILENCE_NS`] or more also ends a stretch, so every stretch is events no more
//! than that apart from its start to its last event, then nothing until its end: the silent tail
//! `[last_event, end)` is the only place a stretch can claim that the CPU showed nothing.

use super::block_queue::BlockQueue;
use super::finding::Culprit;
use super::queueing::{self, Queueing};
use crate::names::{NameId, Names};
use crate::waking::{ExitPath, HardVisit};
use rtsleuth_trace::event::{Event, EventKind, Flags, Timestamp};

/// How far back a CPU's history reaches. A late wake-up longer than this is explained up to
/// the window and the rest is `unknown`.
pub const LOOKBACK_NS: u64 = 2_000_000_000;
/// The most stretches kept per CPU, whatever their age (88 bytes each: 46 MB per CPU), so a
/// storm of interrupts cannot grow the history without bound.
pub const MAX_STRETCHES: usize = 1 << 19;
const _: () = assert!(std::mem::size_of::<Stretch>() == 88);
/// The shortest silence that ends a stretch: shorter gaps between events are the ordinary pace
/// of a busy CPU, and no cause shorter than this is named anyway.
pub const SILENCE_NS: u64 = super::decompose::MIN_CAUSE_NS;

/// One level of interrupt context.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Irq {
    Handler {
        irq: u32,
        name: NameId,
    },
    Vector {
        vector: Option<u32>,
        name: NameId,
    },
    /// An ARM IPI: the handler `irq N (NAME)` (NAME is `IPI`) once its `ipi_entry` said which
    /// kind it runs (`Rescheduling interrupts`), which the handler's own entry does not.
    Ipi {
        irq: u32,
        name: NameId,
        kind: NameId,
    },
    /// An hrtimer callback run from the timer interrupt, or `soft`ly from the HRTIMER softirq
    /// (PREEMPT_RT runs the callbacks of non-hard timers there, in `ktimers/N`): the one
    /// `softirq` names when its entry was traced, else known soft by the entry's flags only.
    Callback {
        hrtimer: u64,
        function: NameId,
        softirq: Option<(u32, NameId)>,
        soft: bool,
    },
    Softirq {
        vec: u32,
        action: NameId,
    },
}

impl Irq {
    /// The culprit that names it: a callback the softirq runs is that softirq's.
    pub fn culprit(self) -> Culprit {
        match self {
            Irq::Handler { irq, name } => Culprit::Irq { irq, name },
            Irq::Vector { vector, name } => Culprit::Vector { vector, name },
            Irq::Ipi { irq, name, kind } => Culprit::Ipi { irq, name, kind },
            Irq::Callback {
                softirq: Some((vec, action)),
                ..
            }
            | Irq::Softirq { vec, action } => Culprit::Softirq { vec, action },
            Irq::Callback { function, .. } => Culprit::Callback(function),
        }
    }

    /// Runs in hard-interrupt context: not a softirq, nor a callback the softirq runs.
    fn is_hard(&self) -> bool {
        !matches!(self, Irq::Softirq { .. } | Irq::Callback { soft: true, .. })
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Activity {
    /// Nothing known yet: before the CPU's first event, or after lost events.
    Unknown,
    /// A task in task context; pid 0 is the idle task.
    Task { pid: i32, prio: Option<i32> },
    /// `seq` numbers the CPU's outermost interrupts, so the stretches of one interrupt (entry,
    /// callbacks, exit) can be told from those of the next.
    Irq { irq: Irq, seq: u32 },
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Stretch {
    pub start: Timestamp,
    pub end: Timestamp,
    pub activity: Activity,
    /// The last event recorded inside the stretch (its start when there was none).
    pub last_event: Timestamp,
    /// The task's last event in task context that can show it (not one emitted with
    /// interrupts off by construction, [`Event::irqs_off_by_construction`]) since it was
    /// switched in or interrupted had interrupts disabled.
    pub last_irqs_off: bool,
    /// Some event inside, in task context, showed interrupts on.
    pub irqs_on_seen: bool,
    /// The event that ended the stretch was in task context with interrupts on: whatever held
    /// them off before had let go by then.
    pub ended_irqs_on: bool,
    /// Another task's event ended the stretch with no switch to it traced: the CPU changed
    /// hands at some moment after the stretch's last event that the trace does not show.
    pub ended_untraced: bool,
    /// The stretch is the CPU's open one, stretched to the moment asked about: nothing traced
    /// on the CPU since its last event shows who holds it now.
    pub open: bool,
    /// The event that ended the stretch was an interrupt arriving (an interrupt, vector or
    /// hrtimer entry, the entry code's `irq_disable`, or any event in hard-IRQ context): a silence ending so may have been
    /// outside Linux; one ending in task context was not.
    pub ended_by_interrupt: bool,
    /// Some event inside had a reschedule request pending (`N`).
    pub need_resched: bool,
    /// A `preemptirq:irq_disable` without its `irq_enable` yet: where interrupts went off.
    pub irqs_off_at: Option<NameId>,
    /// The same for `preempt_disable`.
    pub preempt_off_at: Option<NameId>,
    /// A task stretch's priority at the switch-out that ended the task's run, when it differs
    /// from the one it was switched in with.
    pub prio_out: Option<i32>,
    /// When the task of a task stretch got the CPU: its switch-in, or the first event that
    /// showed it there.
    pub task_since: Timestamp,
}

impl Stretch {
    pub(super) fn new(ts: Timestamp, activity: Activity) -> Stretch {
        Stretch {
            start: ts,
            end: ts,
            activity,
            last_event: ts,
            last_irqs_off: false,
            irqs_on_seen: false,
            ended_irqs_on: false,
            ended_untraced: false,
            open: false,
            ended_by_interrupt: false,
            need_resched: false,
            irqs_off_at: None,
            preempt_off_at: None,
            prio_out: None,
            task_since: ts,
        }
    }
}

/// What an event shows of the stretch it is in (see [`CpuTimeline::observe`]). An event that
/// may end its stretch (an exit, a switch) is marked in it once it is closed: marked before,
/// the fields just written were read back at once in the wide loads of the stretch's copy,
/// which the store buffer cannot serve, a stall at every exit and switch.
#[derive(Debug, Clone, Copy)]
struct Mark {
    ts: Timestamp,
    /// Whether interrupts were off, when the event can show it in task context.
    irqs_off: Option<bool>,
    /// In task context with interrupts on.
    irqs_on: bool,
    /// A reschedule is pending.
    resched: bool,
}

impl Mark {
    fn apply(self, s: &mut Stretch) {
        s.end = s.end.max(self.ts);
        s.last_event = self.ts;
        if let Some(off) = self.irqs_off {
            s.last_irqs_off = off;
        }
        s.irqs_on_seen |= self.irqs_on;
        s.need_resched |= self.resched;
    }
}

#[derive(Debug, Clone, Copy)]
struct Frame {
    irq: Irq,
    start: Timestamp,
}

/// What was executing on a CPU at a wake-up.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WakeContext {
    /// The outermost interrupt, when the wake-up happened in interrupt context.
    pub seq: Option<u32>,
    /// When that interrupt was entered.
    pub irq_entry: Option<Timestamp>,
    /// When the outermost hard interrupt open was entered (a softirq may enclose it): where a
    /// wake chain that a device or timer interrupt started begins.
    pub hard_entry: Option<Timestamp>,
    /// That hard interrupt.
    pub hard_irq: Option<Irq>,
    /// The innermost hrtimer callback: its timer and entry time.
    pub callback: Option<(u64, Timestamp)>,
    /// That callback's function.
    pub callback_function: Option<NameId>,
    /// That callback runs in a softirq (a timer that is not a hard one, on PREEMPT_RT).
    pub callback_soft: bool,
}

#[derive(Debug)]
pub struct CpuTimeline {
    history: BlockQueue<Stretch>,
    current: Stretch,
    /// Who runs in task context.
    task: Activity,
    stack: Vec<Frame>,
    seq: u32,
    /// The hard interrupt this CPU is in, entered at `.0` as outermost interrupt `.1`: kept
    /// past its frames' exits while events are still flagged hard-IRQ (a threaded handler's
    /// thread is woken after the handler returned).
    hard_visit: HardVisit<(u32, Irq)>,
    /// An interrupt's exit path, where irq_exit wakes the softirq threads in the interrupted
    /// task's column.
    pub exit_path: ExitPath,
    /// A work's queueing the latest events continue, up to the waking it does.
    pub queueing: Option<Queueing>,
    irqs_off_at: Option<NameId>,
    preempt_off_at: Option<NameId>,
    /// A reschedule was requested (an `N` flag, often only on the interrupt that woke someone)
    /// and no switch has happened since: the task running is holding the CPU past it.
    resched: bool,
    /// An interrupt entry was traced on this CPU: the trace shows its interrupts, so their
    /// absence means something.
    pub irqs_traced: bool,
    /// The trace prints this CPU's context flags, so interrupts on can be told from off. A
    /// property of the recording, not of one stretch: a task switched in has shown no flags of
    /// its own yet, and the switch's `d` is the scheduler's.
    pub flags_known: bool,
    /// A `preemptirq` irq_disable or irq_enable was traced on this CPU: interrupts turned off
    /// by kernel code show in the trace, so a silence with none open had them on.
    pub irq_toggles_traced: bool,
    /// When the running task's priority was last stated (its switch-in, or priority
    /// inheritance changing it): its switch-out speaks for the stretches since.
    prio_stated_at: Timestamp,
    /// When the running task got the CPU (see [`Stretch::task_since`]).
    task_since: Timestamp,
    /// The event being fed is in task context with interrupts on (it ends a stretch so).
    event_irqs_on: bool,
    /// The event being fed is an interrupt arriving (it ends a stretch so).
    event_interrupt: bool,
    /// The event being fed shows another task than the one switched in (it ends a stretch so).
    event_untraced: bool,
    /// The event being fed runs with interrupts off by construction: its `d` says nothing.
    event_by_construction: bool,
    /// The task's last event that can show it had interrupts off, since the task was switched
    /// in or interrupted (an interrupt arriving proves they were on).
    irqs_off_evidence: bool,
}

impl CpuTimeline {
    pub fn new(ts: Timestamp) -> CpuTimeline {
        CpuTimeline {
            history: BlockQueue::default(),
            current: Stretch::new(ts, Activity::Unknown),
            task: Activity::Unknown,
            stack: Vec::new(),
            seq: 0,
            hard_visit: HardVisit::default(),
            exit_path: ExitPath::default(),
            queueing: None,
            irqs_off_at: None,
            preempt_off_at: None,
            resched: false,
            irqs_traced: false,
            flags_known: false,
            irq_toggles_traced: false,
            prio_stated_at: ts,
            task_since: ts,
            event_irqs_on: false,
            event_interrupt: false,
            event_untraced: false,
            event_by_construction: false,
            irqs_off_evidence: false,
        }
    }

    /// Feeds one event of this CPU. `prio_of` gives a task's last known priority for
    /// switch-ins the trace did not record.
    pub fn on_event(
        &mut self,
        ev: &Event<'_>,
        names: &mut Names,
        prio_of: impl Fn(i32) -> Option<i32>,
    ) {
        let ts = ev.ts;
        self.hard_visit.observe(ev);
        self.exit_path.observe(ev);
        queueing::follow(&mut self.queueing, ev, names);
        let in_irq = ev.flags.hardirq || ev.flags.softirq || ev.flags.nmi;
        self.event_irqs_on = ev.flags.known && !in_irq && !ev.flags.irqs_off;
        self.event_interrupt = ev.flags.hardirq
            || match ev.kind {
                EventKind::IrqHandlerEntry { .. }
                | EventKind::IrqVectorEntry(_)
                | EventKind::HrtimerExpireEntry { .. } => true,
                // With preemptirq events, the entry code's own irq_disable is the first trace
                // of an arriving interrupt.
                EventKind::IrqDisable { caller, .. } => caller.starts_with("irqentry_enter"),
                _ => false,
            };
        self.event_by_construction = ev.irqs_off_by_construction();
        let shows_task = ev.shows_current_task();
        self.event_untraced =
            shows_task && matches!(self.task, Activity::Task { pid, .. } if pid != ev.pid);
        self.flags_known = ev.flags.known;
        if ts.saturating_sub(self.current.last_event) >= SILENCE_NS {
            self.push_current(ts, self.current.activity);
        }
        let task_context = if ev.flags.known {
            !in_irq
        } else {
            self.stack.is_empty()
        };
        if ev.flags.known && !in_irq && !self.stack.is_empty() {
            // The exits of these frames were not traced (the trace started inside them, or
            // they were lost): the event proves the CPU is back in task context.
            self.stack.clear();
            self.refresh(ts);
        }
        if shows_task {
            self.current_task(ev, prio_of);
        }
        match ev.kind {
            EventKind::IrqHandlerEntry { irq, name } => {
                let name = names.intern(name);
                self.enter(ts, Irq::Handler { irq, name }, ev.flags);
            }
            EventKind::IrqVectorEntry(v) => {
                let name = names.intern(v.name);
                let irq = Irq::Vector {
                    vector: v.vector,
                    name,
                };
                self.enter(ts, irq, ev.flags);
            }
            EventKind::IpiEntry { reason } => {
                let kind = names.intern(reason);
                self.name_ipi(kind);
            }
            // Timer callbacks run in interrupt context: without flags (perf script, trace-cmd
            // report) and without a traced interrupt entry around it, the entry itself says so.
            EventKind::HrtimerExpireEntry {
                hrtimer, function, ..
            } if !(task_context && ev.flags.known) => {
                let function = names.intern(function);
                let softirq = self.stack.iter().rev().find_map(|f| match f.irq {
                    Irq::Softirq { vec, action } => Some((vec, action)),
                    _ => None,
                });
                let soft = softirq.is_some() || ev.flags.known && !ev.flags.hardirq;
                let irq = Irq::Callback {
                    hrtimer,
                    function,
                    softirq,
                    soft,
                };
                self.enter(ts, irq, ev.flags);
            }
            EventKind::SoftirqEntry { vec, action } => {
                let action = names.intern(action);
                self.enter(ts, Irq::Softirq { vec, action }, ev.flags);
            }
            EventKind::IrqHandlerExit { irq, .. } => self.exit(
                ts,
                ev.flags,
                |f| matches!(f, Irq::Handler { irq: i, .. } | Irq::Ipi { irq: i, .. } if i == irq),
            ),
            EventKind::IrqVectorExit(v) => self.exit(
                ts,
                ev.flags,
                |f| matches!(f, Irq::Vector { name, .. } if names.get(name) == v.name),
            ),
            EventKind::HrtimerExpireExit { hrtimer } => self.exit(
                ts,
                ev.flags,
                |f| matches!(f, Irq::Callback { hrtimer: h, .. } if h == hrtimer),
            ),
            EventKind::SoftirqExit { vec, .. } => self.exit(
                ts,
                ev.flags,
                |f| matches!(f, Irq::Softirq { vec: v, .. } if v == vec),
            ),
            EventKind::SchedSwitch {
                next_pid,
                next_prio,
                ..
            } => {
                let mark = self.observe(ts, ev.flags, true);
                self.resched = false;
                self.irqs_off_evidence = false;
                if let [Some((prev_pid, prev_prio)), _] = ev.kind.task_prios() {
                    self.learn_prio(prev_pid, prev_prio);
                }
                self.task = Activity::Task {
                    pid: next_pid,
                    prio: next_prio,
                };
                (self.prio_stated_at, self.task_since) = (ts, ts);
                // A softirq preempted in its thread (PREEMPT_RT) goes with that thread: what
                // runs next is the next task, not the softirq.
                self.stack.clear();
                if let Some(s) = self.refresh(ts) {
                    mark.apply(s);
                }
            }
            EventKind::IrqDisable { caller, .. }
            | EventKind::IrqEnable { caller, .. }
            | EventKind::PreemptDisable { caller, .. }
            | EventKind::PreemptEnable { caller, .. }
                if task_context || irq_toggle_in_softirq(ev) =>
            {
                let at = Some(names.intern(caller));
                self.irq_toggles_traced |= matches!(
                    ev.kind,
                    EventKind::IrqDisable { .. } | EventKind::IrqEnable { .. }
                );
                match ev.kind {
                    EventKind::IrqDisable { .. } => self.irqs_off_at = at,
                    EventKind::IrqEnable { .. } => self.irqs_off_at = None,
                    EventKind::PreemptDisable { .. } => self.preempt_off_at = at,
                    _ => self.preempt_off_at = None,
                }
                // The event opens the new stretch: its flags are what the CPU showed last.
                self.refresh(ts);
                self.note(ts, ev.flags, true);
            }
            _ => self.note(ts, ev.flags, task_context),
        }
    }

    /// Every event names the CPU's current task (in interrupt context, the interrupted one).
    /// A task other than the one the trace switched in was switched in without a traced
    /// `sched_switch`, at the latest now.
    fn current_task(&mut self, ev: &Event<'_>, prio_of: impl Fn(i32) -> Option<i32>) {
        if matches!(self.task, Activity::Task { pid, .. } if pid == ev.pid) {
            return;
        }
        self.task = Activity::Task {
            pid: ev.pid,
            prio: prio_of(ev.pid),
        };
        (self.prio_stated_at, self.task_since) = (ev.ts, ev.ts);
        self.irqs_off_evidence = false;
        self.refresh(ev.ts);
    }

    /// The switch-out of `pid` prints its priority. One switched in with another priority
    /// changed it while it held the CPU (`sched_setscheduler`, priority inheritance), which its
    /// stretches record; one whose priority was never printed before has it only from here:
    /// its stretches stay unranked (claims.md, E3: a task's priority at a moment is the last
    /// one printed at or before it).
    fn learn_prio(&mut self, pid: i32, prio: i32) {
        let since = self.prio_stated_at;
        if !restate_prio(&mut self.current, since, pid, prio) {
            return;
        }
        // Mostly the stretch before the current one began before `since`: the walk through
        // the blocks, about 70 instructions to set up at every switch, is then not begun.
        if self.history.back().map_or(true, |s| s.start < since) {
            return;
        }
        for s in self.history.iter_rev_mut() {
            if !restate_prio(s, since, pid, prio) {
                break;
            }
        }
    }

    /// Priority inheritance set `pid`'s priority to `prio` at `ts`: if it runs here, its time
    /// from now on is judged by it.
    pub fn set_prio(&mut self, pid: i32, prio: i32, ts: Timestamp) {
        let Activity::Task { pid: p, prio: q } = &mut self.task else {
            return;
        };
        if *p != pid || *q == Some(prio) {
            return;
        }
        *q = Some(prio);
        // No event of this CPU ends the stretch: it says nothing of interrupts.
        (
            self.event_irqs_on,
            self.event_interrupt,
            self.event_untraced,
        ) = (false, false, false);
        let ts = ts.max(self.current.start);
        self.prio_stated_at = ts;
        self.refresh(ts);
    }

    fn enter(&mut self, ts: Timestamp, irq: Irq, flags: Flags) {
        self.irqs_traced = true;
        self.irqs_off_evidence = false;
        if self.stack.is_empty() {
            self.seq = self.seq.wrapping_add(1);
        }
        if irq.is_hard() && !self.stack.iter().any(|f| f.irq.is_hard()) {
            self.hard_visit.enter(ts, (self.seq, irq));
        }
        self.stack.push(Frame { irq, start: ts });
        self.refresh(ts);
        self.note(ts, flags, false);
    }

    /// An `ipi_entry` names the kind of the IPI its handler runs: the innermost frame, when it
    /// is a handler, becomes that IPI from its entry on (the stretches it already made too).
    /// Without a traced handler entry around it the kind names nothing.
    fn name_ipi(&mut self, kind: NameId) {
        let Some(frame) = self.stack.last_mut() else {
            return;
        };
        let Irq::Handler { irq, name } = frame.irq else {
            return;
        };
        let was = Activity::Irq {
            irq: frame.irq,
            seq: self.seq,
        };
        frame.irq = Irq::Ipi { irq, name, kind };
        let now = Activity::Irq {
            irq: frame.irq,
            seq: self.seq,
        };
        let since = frame.start;
        let made = self.history.iter_rev_mut();
        for s in std::iter::once(&mut self.current).chain(made) {
            if s.activity != was || s.start < since {
                break;
            }
            s.activity = now;
        }
    }

    /// Leaves the innermost frame `is` matches, and the frames above it whose exits are
    /// missing; an exit with no matching entry (the trace began inside it) changes nothing.
    fn exit(&mut self, ts: Timestamp, flags: Flags, is: impl Fn(Irq) -> bool) {
        let mark = self.observe(ts, flags, false);
        let stretch = match self.stack.iter().rposition(|f| is(f.irq)) {
            Some(depth) => {
                self.stack.truncate(depth);
                self.refresh(ts)
            }
            None => Some(&mut self.current),
        };
        if let Some(s) = stretch {
            mark.apply(s);
        }
    }

    /// An event inside the current stretch.
    fn note(&mut self, ts: Timestamp, flags: Flags, task_context: bool) {
        self.observe(ts, flags, task_context)
            .apply(&mut self.current);
    }

    /// What an event says of the CPU, kept here; and what it says of its stretch, returned.
    fn observe(&mut self, ts: Timestamp, flags: Flags, task_context: bool) -> Mark {
        let shows_irqs = task_context && !self.event_by_construction;
        if shows_irqs {
            self.irqs_off_evidence = flags.irqs_off;
        }
        self.resched |= flags.resched_pending();
        Mark {
            ts,
            irqs_off: shows_irqs.then_some(flags.irqs_off),
            irqs_on: task_context && flags.known && !flags.irqs_off,
            resched: self.resched,
        }
    }

    /// Starts a new stretch at `ts` if what runs has changed. Returns the stretch an event
    /// at `ts` belongs to: the current one, or the one just closed (`None` if that was empty,
    /// and dropped). Inlined where the task was just set, against a store-forwarding stall
    /// that it did not remove: on a switch the new activity is still read back in wider
    /// loads than the task was just stored in (docs/speed.md, 2026-11-29 evening, "tried,
    /// not kept").
    #[inline(always)]
    fn refresh(&mut self, ts: Timestamp) -> Option<&mut Stretch> {
        let activity = match self.stack.last() {
            Some(f) => Activity::Irq {
                irq: f.irq,
                seq: self.seq,
            },
            None => self.task,
        };
        let s = &self.current;
        // Only a task's stretches are judged by the sections open over them: a toggle inside
        // a softirq's frame does not cut it.
        let same_sections = matches!(activity, Activity::Irq { .. })
            || (s.irqs_off_at == self.irqs_off_at && s.preempt_off_at == self.preempt_off_at);
        if s.activity == activity && same_sections {
            return Some(&mut self.current);
        }
        self.push_current(ts, activity)
    }

    /// Ends the current stretch at `ts` and begins one of `activity` there. Returns the
    /// stretch it ended, where it is now kept; `None` if that was empty, and dropped.
    fn push_current(&mut self, ts: Timestamp, activity: Activity) -> Option<&mut Stretch> {
        let mut next = Stretch::new(ts, activity);
        next.irqs_off_at = self.irqs_off_at;
        next.preempt_off_at = self.preempt_off_at;
        next.need_resched = self.resched;
        next.task_since = self.task_since;
        next.last_irqs_off = self.irqs_off_evidence && matches!(activity, Activity::Task { .. });
        let mut done = std::mem::replace(&mut self.current, next);
        done.end = ts;
        done.ended_irqs_on = self.event_irqs_on;
        done.ended_untraced = self.event_untraced;
        done.ended_by_interrupt = self.event_interrupt;
        while self
            .history
            .front()
            .is_some_and(|f| f.end.saturating_add(LOOKBACK_NS) < ts)
        {
            self.history.pop_front();
        }
        if done.end <= done.start {
            return None;
        }
        // Room is made before the push, so the ring never needs more than the bound.
        if self.history.len() >= MAX_STRETCHES {
            self.history.pop_front();
        }
        Some(self.history.push_back(done))
    }

    /// Events were lost on this CPU: nothing is known about it until its next event.
    pub fn lost(&mut self) {
        let ts = self.current.end;
        (
            self.event_irqs_on,
            self.event_interrupt,
            self.event_untraced,
        ) = (false, false, false);
        self.irqs_off_evidence = false;
        self.stack.clear();
        self.task = Activity::Unknown;
        self.irqs_off_at = None;
        self.preempt_off_at = None;
        self.refresh(ts);
    }

    pub fn wake_context(&self) -> WakeContext {
        let visit = self.hard_visit.get().filter(|_| self.stack.is_empty());
        WakeContext {
            seq: (!self.stack.is_empty())
                .then_some(self.seq)
                .or(visit.map(|v| v.1 .0)),
            irq_entry: self.stack.first().map(|f| f.start).or(visit.map(|v| v.0)),
            hard_entry: (self.stack.iter().find(|f| f.irq.is_hard()))
                .map(|f| f.start)
                .or(visit.map(|v| v.0)),
            hard_irq: (self.stack.iter().find(|f| f.irq.is_hard()))
                .map(|f| f.irq)
                .or(visit.map(|v| v.1 .1)),
            callback: self.stack.iter().rev().find_map(|f| match f.irq {
                Irq::Callback { hrtimer, .. } => Some((hrtimer, f.start)),
                _ => None,
            }),
            callback_function: self.stack.iter().rev().find_map(|f| match f.irq {
                Irq::Callback { function, .. } => Some(function),
                _ => None,
            }),
            callback_soft: self.stack.iter().rev().find_map(|f| match f.irq {
                Irq::Callback { soft, .. } => Some(soft),
                _ => None,
            }) == Some(true),
        }
    }

    /// Where the history begins.
    pub fn earliest(&self) -> Timestamp {
        self.history.front().unwrap_or(&self.current).start
    }

    /// Whether the CPU recorded an event strictly inside `(from, to)`, as far as its history
    /// shows: a stretch starting there, or a stretch's last event there.
    pub fn traced_within(&self, from: Timestamp, to: Timestamp) -> bool {
        let inside = |t: Timestamp| from < t && t < to;
        self.between(from, to)
            .any(|s| inside(s.start) || inside(s.last_event))
    }

    /// The stretches overlapping `[from, to)`, in order. The current stretch lasts until the
    /// CPU's next event, so it reaches `to`.
    pub fn between(&self, from: Timestamp, to: Timestamp) -> impl Iterator<Item = Stretch> + '_ {
        let first = self.history.partition_point(|s| s.end <= from);
        let current = Stretch {
            end: self.current.end.max(to),
            open: true,
            ..self.current
        };
        self.history
            .iter_from(first)
            .copied()
            .chain(std::iter::once(current))
            .take_while(move |s| s.start < to)
    }
}

/// An interrupts toggle in softirq context outside any hard interrupt (the tail of
/// `handle_softirqs` after its last action): it changes the CPU's interrupt state as one in
/// task context does.
fn irq_toggle_in_softirq(ev: &Event<'_>) -> bool {
    let f = ev.flags;
    f.known
        && f.softirq
        && !f.hardirq
        && !f.nmi
        && matches!(
            ev.kind,
            EventKind::IrqDisable { .. } | EventKind::IrqEnable { .. }
        )
}

/// One stretch of [`CpuTimeline::learn_prio`]'s walk back from the switch-out of `pid`, which
/// printed `prio`: a stretch of `pid` since `since` that ran with another priority (or none)
/// gets `prio` as it ended. Whether the walk goes on: past interrupts and `pid`'s stretches,
/// back to `since`.
fn restate_prio(s: &mut Stretch, since: Timestamp, pid: i32, prio: i32) -> bool {
    if s.start < since {
        return false;
    }
    match s.activity {
        Activity::Task { pid: p, prio: q } if p == pid => {
            if q != Some(prio) {
                s.prio_out = Some(prio);
            }
            true
        }
        Activity::Irq { .. } => true,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtsleuth_trace::read::ftrace_text::{parse_line, Line, LineContext};

    fn feed(tl: &mut CpuTimeline, names: &mut Names, lines: &str) {
        for l in lines.lines() {
            match parse_line(l, &LineContext::default()) {
                Line::Event(ev, _) => tl.on_event(&ev, names, |_| Some(120)),
                other => panic!("not an event: {l} -> {other:?}"),
            }
        }
    }

    /// Interrupts turned off and on in softirq context (rcu_core inside the RCU softirq, then
    /// the tail of handle_softirqs after it) change the CPU's state as in task context: the
    /// task's stretch after the softirq is interrupts-off from handle_softirqs's disable to the
    /// enable, and no longer after it. Lines of the lab's tracer/irqs_off run.
    #[test]
    fn follows_interrupts_toggled_in_softirq_context() {
        let mut names = Names::default();
        let mut tl = CpuTimeline::new(1);
        feed(
            &mut tl,
            &mut names,
            " noise_irqs_off/-116     [001] dNs..    36.701389: softirq_entry: vec=9 [action=RCU]
 noise_irqs_off/-116     [001] dNs..    36.701511: irq_disable: caller=rcu_core+0x87f/0xa40 parent=0x0
 noise_irqs_off/-116     [001] dNs..    36.701516: irq_enable: caller=rcu_core+0x49e/0xa40 parent=0x0
 noise_irqs_off/-116     [001] .Ns..    36.701518: softirq_exit: vec=9 [action=RCU]
 noise_irqs_off/-116     [001] dNs..    36.701519: irq_disable: caller=handle_softirqs+0x31d/0x3a0 parent=0x0
 noise_irqs_off/-116     [001] dNs..    36.701521: preempt_enable: caller=irq_exit_rcu+0x7b/0xa0 parent=irq_exit_rcu+0x7b/0xa0
 noise_irqs_off/-116     [001] dN.1.    36.701528: preempt_disable: caller=irqentry_exit+0x21/0x60 parent=irqentry_exit+0x21/0x60
 noise_irqs_off/-116     [001] dN.1.    36.701529: irq_enable: caller=preempt_schedule_irq+0x3b/0xe0 parent=0x0
 noise_irqs_off/-116     [001] d..2.    36.701551: sched_switch: prev_comm=noise_irqs_off/ prev_pid=116 prev_prio=120 prev_state=R+ ==> next_comm=cyclictest next_pid=115 next_prio=19",
        );
        let handle = names.intern("handle_softirqs+0x31d/0x3a0");
        let s: Vec<(u64, u64, bool, Option<NameId>)> = tl
            .between(36_701_389_000, 36_701_551_000)
            .map(|s| {
                let irq = matches!(s.activity, Activity::Irq { .. });
                (s.start, s.end, irq, s.irqs_off_at)
            })
            .collect();
        assert_eq!(
            s,
            [
                // 122 us without events end a stretch (the excerpt leaves the RCU work out).
                (36_701_389_000, 36_701_511_000, true, None),
                (36_701_511_000, 36_701_518_000, true, None),
                (36_701_518_000, 36_701_519_000, false, None),
                (36_701_519_000, 36_701_528_000, false, Some(handle)),
                (36_701_528_000, 36_701_529_000, false, Some(handle)),
                (36_701_529_000, 36_701_551_000, false, None),
            ]
        );
    }

    /// The stretches of a timer interrupt that wakes a task while another one runs.
    #[test]
    fn cuts_time_by_what_runs() {
        let mut names = Names::default();
        let mut tl = CpuTimeline::new(0);
        feed(
            &mut tl,
            &mut names,
            "      fifo_burst-17318   [000] d..2.   653.572043: sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=fifo_burst next_pid=17318 next_prio=9
      fifo_burst-17318   [000] d.h..   653.572055: local_timer_entry: vector=236
      fifo_burst-17318   [000] d.h..   653.572056: hrtimer_expire_entry: hrtimer=000000006252f71a function=hrtimer_wakeup now=653533727893
      fifo_burst-17318   [000] d.h2.   653.572056: sched_waking: comm=cyclictest pid=17321 prio=19 target_cpu=000
      fifo_burst-17318   [000] d.h..   653.572058: hrtimer_expire_exit: hrtimer=000000006252f71a
      fifo_burst-17318   [000] d.h..   653.572060: local_timer_exit: vector=236
      fifo_burst-17318   [000] ...1.   653.572071: tracing_mark_write: fifo_burst start 300
      fifo_burst-17318   [000] d..2.   653.572381: sched_switch: prev_comm=fifo_burst prev_pid=17318 prev_prio=9 prev_state=S ==> next_comm=cyclictest next_pid=17321 next_prio=19",
        );
        let s: Vec<(u64, u64, Activity)> = tl
            .between(653_572_000_000, 653_572_400_000)
            .map(|s| (s.start, s.end, s.activity))
            .collect();
        let timer = names.intern("hrtimer_wakeup");
        let local = names.intern("local_timer");
        let burst = Activity::Task {
            pid: 17318,
            prio: Some(9),
        };
        let vector = Activity::Irq {
            irq: Irq::Vector {
                vector: Some(236),
                name: local,
            },
            seq: 1,
        };
        assert_eq!(
            s,
            [
                (0, 653_572_043_000, Activity::Unknown),
                (653_572_043_000, 653_572_055_000, burst),
                (653_572_055_000, 653_572_056_000, vector),
                (
                    653_572_056_000,
                    653_572_058_000,
                    Activity::Irq {
                        irq: Irq::Callback {
                            hrtimer: 0x6252f71a,
                            function: timer,
                            softirq: None,
                            soft: false
                        },
                        seq: 1
                    }
                ),
                (653_572_058_000, 653_572_060_000, vector),
                // 11 us without events end a stretch.
                (653_572_060_000, 653_572_071_000, burst),
                (653_572_071_000, 653_572_381_000, burst),
                (
                    653_572_381_000,
                    653_572_400_000,
                    Activity::Task {
                        pid: 17321,
                        prio: Some(19)
                    }
                ),
            ]
        );
        // Right after the interrupt fifo_burst traced nothing until its marker: a silent tail.
        let after_irq = tl.between(653_572_070_000, 653_572_071_000).next().unwrap();
        assert_eq!(after_irq.last_event, 653_572_060_000);
        // Its spin after the marker is silent too, with interrupts on at the marker.
        let spin = tl.between(653_572_100_000, 653_572_101_000).next().unwrap();
        assert_eq!(spin.last_event, 653_572_071_000);
        assert!(!spin.last_irqs_off && tl.flags_known);
    }

    /// An exit or a switch is the last event of the stretch it ends: its time and its flags
    /// are that stretch's, and a reschedule it shows pending goes on into the next.
    #[test]
    fn an_exit_or_a_switch_is_the_last_event_of_its_stretch() {
        let mut names = Names::default();
        let mut tl = CpuTimeline::new(0);
        feed(
            &mut tl,
            &mut names,
            "               a-10      [000] d....     1.000000: sched_waking: comm=b pid=11 prio=120 target_cpu=000
               a-10      [000] d.h..     1.000002: irq_handler_entry: irq=5 name=eth0
               a-10      [000] dNh..     1.000004: irq_handler_exit: irq=5 ret=handled
               a-10      [000] .N...     1.000005: sched_wakeup: comm=b pid=11 prio=120 target_cpu=000
               a-10      [000] dN.2.     1.000006: sched_switch: prev_comm=a prev_pid=10 prev_prio=120 prev_state=S ==> next_comm=b next_pid=11 next_prio=120",
        );
        let s: Vec<(u64, u64, u64, bool, bool)> = tl
            .between(1_000_000_000, 1_000_008_000)
            .map(|s| (s.start, s.end, s.last_event, s.need_resched, s.irqs_on_seen))
            .collect();
        assert_eq!(
            s,
            [
                (1_000_000_000, 1_000_002_000, 1_000_000_000, false, false),
                // The handler's exit, with the reschedule it asked for.
                (1_000_002_000, 1_000_004_000, 1_000_004_000, true, false),
                // The switch, and the wake-up with interrupts on before it.
                (1_000_004_000, 1_000_006_000, 1_000_006_000, true, true),
                (1_000_006_000, 1_000_008_000, 1_000_006_000, false, false),
            ]
        );
    }

    /// PREEMPT_RT runs soft hrtimers in `ktimers/N`: its flags say softirq even where the
    /// softirq's own entry is not in the trace, and the callback is then no hard interrupt.
    #[test]
    fn a_callback_flagged_softirq_is_soft() {
        let mut names = Names::default();
        let mut tl = CpuTimeline::new(1);
        feed(
            &mut tl,
            &mut names,
            "       ktimers/1-31      [001] ..s.3   231.703470: hrtimer_expire_entry: hrtimer=82dcf75d function=hrtimer_wakeup now=231441974352",
        );
        let s = tl.between(231_703_470_000, 231_703_471_000).next().unwrap();
        let Activity::Irq { irq, .. } = s.activity else {
            panic!("{:?}", s.activity);
        };
        assert!(matches!(
            irq,
            Irq::Callback {
                soft: true,
                softirq: None,
                ..
            }
        ));
        assert!(!irq.is_hard());
    }

    /// An ARM IPI is one handler (`IPI`) for every kind; its ipi_entry names the kind, and the
    /// whole handler is that IPI from its entry, the stretch already made before it included.
    #[test]
    fn an_ipi_entry_names_its_handler() {
        let mut names = Names::default();
        let mut tl = CpuTimeline::new(1);
        feed(
            &mut tl,
            &mut names,
            "          <idle>-0       [001] dnh..     2.602372: irq_handler_entry: irq=1 name=IPI
          <idle>-0       [001] dnh..     2.602391: ipi_entry: (Rescheduling interrupts)
          <idle>-0       [001] dNh..     2.602397: ipi_exit: (Rescheduling interrupts)
          <idle>-0       [001] dNh..     2.602399: irq_handler_exit: irq=1 ret=handled
          <idle>-0       [001] d..2.     2.602420: sched_switch: prev_comm=swapper/1 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=init next_pid=179 next_prio=120",
        );
        let ipi = Irq::Ipi {
            irq: 1,
            name: names.intern("IPI"),
            kind: names.intern("Rescheduling interrupts"),
        };
        let s: Vec<(u64, u64, Activity)> = tl
            .between(2_602_372_000, 2_602_399_000)
            .map(|s| (s.start, s.end, s.activity))
            .collect();
        let seq = 1;
        assert_eq!(
            s,
            [
                // 19 us without events inside the handler: a stretch of its own, renamed too.
                (
                    2_602_372_000,
                    2_602_391_000,
                    Activity::Irq { irq: ipi, seq }
                ),
                (
                    2_602_391_000,
                    2_602_399_000,
                    Activity::Irq { irq: ipi, seq }
                ),
            ]
        );
        assert_eq!(
            ipi.culprit(),
            Culprit::Ipi {
                irq: 1,
                name: names.intern("IPI"),
                kind: names.intern("Rescheduling interrupts")
            }
        );
    }

    /// A wake chain an interrupt starts begins at the hard interrupt, not at a softirq that
    /// it interrupted.
    #[test]
    fn the_hard_entry_skips_an_enclosing_softirq() {
        let mut names = Names::default();
        let mut tl = CpuTimeline::new(0);
        feed(
            &mut tl,
            &mut names,
            "          <idle>-0       [000] ..s1.   10.000100: softirq_entry: vec=3 [action=NET_RX]
          <idle>-0       [000] d.H1.   10.000150: irq_handler_entry: irq=25 name=virtio0-input.0",
        );
        let c = tl.wake_context();
        assert_eq!(c.irq_entry, Some(10_000_100_000));
        assert_eq!(c.hard_entry, Some(10_000_150_000));
    }

    /// irq_exit wakes the softirq threads after the interrupt's last hard-IRQ event, in the
    /// interrupted task's pid column with interrupts off: its exit path, not that task.
    #[test]
    fn the_exit_path_of_an_interrupt_is_its_tail() {
        let mut names = Names::default();
        let mut tl = CpuTimeline::new(0);
        feed(
            &mut tl,
            &mut names,
            "      cyclictest-194     [001] d.h..     4.943275: local_timer_exit: vector=236
      cyclictest-194     [001] d..2.     4.943278: sched_waking: comm=ksoftirqd/1 pid=35 prio=120 target_cpu=001",
        );
        assert!(tl.exit_path.active());
        feed(
            &mut tl,
            &mut names,
            "      cyclictest-194     [001] ....1     4.943300: tracing_mark_write: back",
        );
        assert!(!tl.exit_path.active());
        feed(
            &mut tl,
            &mut names,
            "      cyclictest-194     [001] d.h..     4.943400: local_timer_exit: vector=236
      cyclictest-194     [001] d..2.     4.943410: sched_switch: prev_comm=cyclictest prev_pid=194 prev_prio=19 prev_state=S ==> next_comm=swapper/1 next_pid=0 next_prio=120
          <idle>-0       [001] d..2.     4.943420: sched_waking: comm=ksoftirqd/1 pid=35 prio=120 target_cpu=001",
        );
        assert!(!tl.exit_path.active());
    }

    /// A threaded handler's thread is woken in hard-IRQ context after the handler's exit: the
    /// waking is still the interrupt's, until an event outside hard-IRQ context.
    #[test]
    fn the_interrupt_lasts_past_its_handler_while_events_are_hard() {
        let mut names = Names::default();
        let mut tl = CpuTimeline::new(0);
        feed(
            &mut tl,
            &mut names,
            "           sleep-191     [001] dNh1.     4.654086: irq_handler_entry: irq=25 name=virtio0-requests
           sleep-191     [001] dNh1.     4.654089: irq_handler_exit: irq=25 ret=handled
           sleep-191     [001] dNh3.     4.654092: sched_waking: comm=irq/25-virtio0- pid=162 prio=49 target_cpu=001",
        );
        let c = tl.wake_context();
        assert_eq!(
            (c.irq_entry, c.hard_entry),
            (Some(4_654_086_000), Some(4_654_086_000))
        );
        assert_eq!(c.seq, Some(1));
        feed(
            &mut tl,
            &mut names,
            "           sleep-191     [001] dN.2.     4.654109: sched_stat_runtime: comm=exe pid=191 runtime=45575 [ns]",
        );
        assert_eq!(tl.wake_context(), WakeContext::default());
    }

    #[test]
    fn the_wake_context_names_the_interrupt_and_the_callback() {
        let mut names = Names::default();
        let mut tl = CpuTimeline::new(0);
        feed(
            &mut tl,
            &mut names,
            "          <idle>-0       [000] d.h1.   653.571068: local_timer_entry: vector=236
          <idle>-0       [000] d.h1.   653.571069: hrtimer_expire_entry: hrtimer=00000000ba4c36c1 function=hrtimer_wakeup now=653532741563",
        );
        assert_eq!(
            tl.wake_context(),
            WakeContext {
                seq: Some(1),
                irq_entry: Some(653_571_068_000),
                hard_entry: Some(653_571_068_000),
                hard_irq: Some(Irq::Vector {
                    vector: Some(236),
                    name: names.intern("local_timer")
                }),
                callback: Some((0xba4c36c1, 653_571_069_000)),
                callback_function: Some(names.intern("hrtimer_wakeup")),
                callback_soft: false,
            }
        );
        // A task-context event proves the exits were missed.
        feed(
            &mut tl,
            &mut names,
            "          <idle>-0       [000] d..2.   653.571081: sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=cyclictest next_pid=17321 next_prio=19",
        );
        assert_eq!(tl.wake_context(), WakeContext::default());
    }

    #[test]
    fn history_is_bounded_by_the_look_back_window() {
        let mut names = Names::default();
        let mut tl = CpuTimeline::new(0);
        for i in 0..10_000u64 {
            let ts = i * 1_000_000; // one interrupt per ms for 10 s
            let secs = |t: u64| format!("{}.{:06}", t / 1_000_000_000, t % 1_000_000_000 / 1000);
            feed(
                &mut tl,
                &mut names,
                &format!(
                    "  <idle>-0 [000] d.h1. {}: local_timer_entry: vector=236\n  <idle>-0 [000] d.h1. {}: local_timer_exit: vector=236",
                    secs(ts),
                    secs(ts + 5_000)
                ),
            );
        }
        assert!(
            tl.earliest() >= 9_999_000_000 - LOOKBACK_NS - 1_000_000,
            "{}",
            tl.earliest()
        );
        assert!(tl.history.len() <= 2 * 2_001, "{}", tl.history.len());
    }
}
