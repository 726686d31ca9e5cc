//! One explained wake-up: its times and the components its latency is made of.

use super::cause::{Cause, Phase, Source};
use super::chain::WokenBy;
use crate::names::NameId;
use crate::wakeups::RunAt as WakeEnd;
use rtsleuth_trace::event::Timestamp;

/// Who or what a component blames. Names stay ids until a report renders them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Culprit {
    Task(i32),
    Irq {
        irq: u32,
        name: NameId,
    },
    Vector {
        vector: Option<u32>,
        name: NameId,
    },
    /// An ARM IPI handler `irq N (NAME)` and the kind its `ipi_entry` named
    /// (`Function call interrupts`).
    Ipi {
        irq: u32,
        name: NameId,
        kind: NameId,
    },
    /// An hrtimer callback function as the kernel prints it (`timer_callback [irq_noise]`).
    Callback(NameId),
    Softirq {
        vec: u32,
        action: NameId,
    },
    /// An interrupt as osnoise's `irq_noise` names it (`local_timer:236`).
    Noise {
        name: NameId,
        id: i32,
    },
}

/// Why a stretch got its cause: the evidence a report spells out as the component's detail.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Note {
    /// The timer interrupt arrived within the ordinary delivery time.
    InterruptDelivery,
    /// Between the timer's soft and hard expiry: the kernel may fire it anywhere in there.
    TimerSlack,
    /// The CPU ran and traced events with interrupts on while the timer was overdue: the trace
    /// does not show why its interrupt came late.
    EventsWhileOverdue,
    /// No events at all, but nothing proves the task was due then or that this CPU's
    /// interrupts would show (an estimated due time, no interrupt events, no flags).
    SilenceUnproven,
    /// Task `pid` (0: idle) showed last, then another task's event with no switch to it
    /// traced: the CPU changed hands at some moment in here that the trace does not show.
    UntracedSwitch { pid: i32 },
    /// Task `pid` (0: idle) showed last, and the CPU traced nothing after it before the
    /// victim's wait there ended: whether it still held the CPU is not shown.
    NothingSince { pid: i32 },
    /// It was queued on this CPU and ran on CPU `to`, with no migration traced in between.
    UntracedMove { to: u32 },
    /// Entry, exit and dispatch of the interrupt that woke the task.
    WakeInterrupt,
    /// The queueing of a work, on its way to waking the pool's worker.
    QueuePath,
    /// The task's own timer callback (`hrtimer_wakeup`) doing the wake-up.
    WakeCallback,
    /// A task of the wake chain running until it woke the next one.
    WakerRun,
    /// The reschedule IPI that tells a remote CPU to switch.
    ReschedIpi,
    /// A lower-priority task's short way to the switch, or the switch itself.
    Scheduling,
    /// The idle task leaving idle to switch.
    IdleExit,
    /// An interrupt or softirq other than the wake-up's own ran.
    Interrupt,
    /// The softirq ran this hrtimer callback.
    SoftirqCallback(NameId),
    /// The last event before the late interrupt had interrupts disabled.
    IrqsOffFlag,
    /// A `preemptirq:irq_disable` at this caller was still open.
    IrqsOffCaller(NameId),
    /// The CPU was idle and the timer interrupt did not wake it on time.
    IdleLate,
    /// No event at all in `[from, to]` although interrupts were on as far as the trace shows.
    NoEvents { from: Timestamp, to: Timestamp },
    /// The same silence on a busy CPU while other CPUs were traced, in a recording that cannot
    /// show interrupts turned off: not proven to be outside Linux.
    SilenceWhileOthersRan { from: Timestamp, to: Timestamp },
    /// A task ran (the culprit); what its events said.
    Ran {
        prio: Option<i32>,
        need_resched: bool,
        preempt_off_at: Option<NameId>,
    },
    /// No events in `[from, to]`, then the CPU went on in task context (`pid`'s, with
    /// interrupts on when `irqs_on`), not in an interrupt: it was running Linux, and the trace
    /// does not show why the overdue timer's interrupt came late.
    SilenceThenTask {
        pid: i32,
        from: Timestamp,
        to: Timestamp,
        irqs_on: bool,
    },
    /// The task was switched in with priority `from` and out with `to`, which rank it
    /// differently against the victim: which held when is not in the trace.
    PrioChanged { pid: i32, from: i32, to: i32 },
    /// The victim was woken with priority `from` and switched in with `to`, which rank task
    /// `pid` differently: which held while it waited is not in the trace.
    VictimPrioChanged { pid: i32, from: i32, to: i32 },
    /// The scheduler switched to task `pid`, which the victim outranks, while the victim waited
    /// on that CPU: something chose it over the victim (RT throttling, the fair server) that
    /// the events do not show, so it is no section with preemption off.
    ChosenOverVictim { pid: i32 },
    /// A task held the CPU whose priority the trace never printed, or a placeholder for a task
    /// it does not name (a negative pid): it cannot be ranked against the victim.
    Unranked { pid: i32 },
    /// Nothing is known about the CPU here (before its first event, or events were lost).
    NoHistory,
    /// Older than the CPU's look-back window.
    OutsideWindow,
    /// What would be the wake-up path (its interrupt, the reschedule IPI, leaving idle,
    /// reaching the switch) lasted longer than [`super::decompose::KERNEL_PATH_MAX_NS`];
    /// `idle` when the CPU was idle all along.
    PathOverBound { idle: bool },
    /// An NMI (osnoise's `nmi_noise`).
    Nmi,
    /// The timerlat timer was due and osnoise shows no interrupt running: why its interrupt
    /// had not come is not in these events.
    TimerIrqLate,
    /// osnoise's `thread_noise`: the task ran after the timer fired, before the timerlat
    /// thread; no priority is printed with it.
    ThreadNoise,
    /// The trace has no `thread_noise` events: which task ran is not shown.
    ThreadsUntraced,
}

/// Time of one kind, one phase and one culprit. Pieces of the same kind, phase and culprit
/// are merged: `us` is their sum, `start`/`end` the first start and the last end.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Component {
    pub cause: Cause,
    pub phase: Phase,
    pub ns: u64,
    pub start: Timestamp,
    pub end: Timestamp,
    pub cpu: u32,
    pub culprit: Option<Culprit>,
    /// The evidence of the component's longest piece.
    pub note: Note,
    longest: u64,
}

impl Component {
    pub fn new(
        cause: Cause,
        phase: Phase,
        cpu: u32,
        (start, end): (Timestamp, Timestamp),
        culprit: Option<Culprit>,
        note: Note,
    ) -> Component {
        Component {
            cause,
            phase,
            ns: end - start,
            start,
            end,
            cpu,
            culprit,
            note,
            longest: end - start,
        }
    }

    fn same_bucket(&self, other: &Component) -> bool {
        self.cause == other.cause && self.phase == other.phase && self.culprit == other.culprit
    }

    fn absorb(&mut self, other: &Component) {
        self.ns += other.ns;
        self.start = self.start.min(other.start);
        self.end = self.end.max(other.end);
        if let (
            Note::Ran { need_resched, .. },
            Note::Ran {
                need_resched: n, ..
            },
        ) = (&mut self.note, other.note)
        {
            *need_resched |= n;
        }
        if let (Note::NoEvents { from, to }, Note::NoEvents { from: f, to: t }) =
            (&mut self.note, other.note)
        {
            *from = (*from).min(f);
            *to = (*to).max(t);
        } else if other.longest > self.longest {
            self.note = other.note;
        }
        self.longest = self.longest.max(other.longest);
    }
}

/// Joins neighbouring pieces on the same CPU with the same kind, phase and culprit into one
/// stretch. Black holes stay apart: the event between two of them is what splits them.
pub fn join_neighbours(pieces: Vec<Component>) -> Vec<Component> {
    let mut out: Vec<Component> = Vec::with_capacity(pieces.len().min(64));
    for p in pieces.into_iter().filter(|p| p.ns > 0) {
        match out.last_mut() {
            Some(last)
                if last.same_bucket(&p)
                    && last.cpu == p.cpu
                    && last.end == p.start
                    && p.cause != Cause::BlackHole =>
            {
                last.absorb(&p)
            }
            _ => out.push(p),
        }
    }
    out
}

/// Merges components of the same kind, phase and culprit, keeping the order of first
/// appearance.
pub fn merge(pieces: Vec<Component>) -> Vec<Component> {
    let mut out: Vec<Component> = Vec::with_capacity(pieces.len().min(16));
    for p in pieces.into_iter().filter(|p| p.ns > 0) {
        match out.iter_mut().find(|c| c.same_bucket(&p)) {
            Some(c) => c.absorb(&p),
            None => out.push(p),
        }
    }
    out
}

/// Where a finding's wait ends in the trace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunAt {
    /// Where the wake-up ended ([`crate::wakeups`]).
    Wake(WakeEnd),
    /// cyclictest's mark: its figure also held time after the switch (see
    /// `Explain::threshold_mark`).
    Mark,
    /// The timerlat thread's own sample, woken by its timer's irq-context sample
    /// ([`super::timerlat`]).
    Timerlat,
    /// The timer's irq-context sample, where the trace ends before the thread ran.
    TimerlatIrq,
}

impl RunAt {
    pub fn as_str(self) -> &'static str {
        match self {
            RunAt::Wake(end) => end.as_str(),
            RunAt::Mark => "mark",
            RunAt::Timerlat => "timerlat",
            RunAt::TimerlatIrq => "timerlat_irq",
        }
    }
}

/// What proved when the task was due.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Evidence {
    /// The hrtimer it armed at `armed` for `softexpires` (clock base) fired at `fired`.
    Timer {
        armed: Timestamp,
        softexpires: u64,
        fired: Timestamp,
    },
    /// cyclictest's mark at `mark` said it ran `us` late.
    Tracemark { us: f64, mark: Timestamp },
    /// Its wake-ups kept this period (see `period`).
    Period { period: u64 },
    /// The hard interrupt `irq` (when the trace named it), entered at `entry`, woke the first
    /// task of its wake chain.
    Interrupt {
        entry: Timestamp,
        irq: Option<super::timeline::Irq>,
    },
    /// The work `function` was queued at `at`, and its queueing woke the task (a kworker).
    Queued { at: Timestamp, function: NameId },
    /// Its switch-out still runnable (`R`/`R+`), in favour of `by` (`None`: the idle task).
    Preempted { by: Option<i32> },
    /// The timerlat sample `#seq` at `at` (the thread's, or its timer interrupt's) said it
    /// ran `latency_ns` after its timer.
    Timerlat {
        seq: u64,
        context: rtsleuth_trace::event::TimerlatContext,
        latency_ns: u64,
        at: Timestamp,
    },
}

/// A late wake-up and what it was made of.
#[derive(Debug, Clone, PartialEq)]
pub struct Finding {
    pub pid: i32,
    /// The priority the task was switched in with, when the trace printed one.
    pub prio: Option<i32>,
    /// The CPU it ran on.
    pub cpu: u32,
    pub source: Source,
    pub expected: Option<Timestamp>,
    /// What proved `expected`; `None` for `Source::Wakeup`.
    pub evidence: Option<Evidence>,
    /// The due time the evidence gave, when the task still ran after it: `expected` is then
    /// the task's last moment on a CPU, where its lateness can start.
    pub ran_past_due: Option<Timestamp>,
    /// The due time the evidence gave, when it lies before the trace's recorded history:
    /// `expected` is then where that history begins.
    pub unrecorded_due: Option<Timestamp>,
    pub wakeup: Timestamp,
    pub waker_cpu: u32,
    /// When the interrupt that woke it was entered, if it was woken from an interrupt.
    pub wake_irq_entry: Option<Timestamp>,
    pub run: Timestamp,
    /// What `run` is.
    pub run_at: RunAt,
    /// Where the wake-up ended as `latency` measures it (`run`, except past it for a mark).
    pub wake_end: Timestamp,
    /// Contiguous stretches, in time order, from the expected time (or the wake-up) to `run`.
    pub timeline: Vec<Component>,
    /// The timeline merged per kind, phase and culprit; the `ns` add up to
    /// [`Finding::latency_ns`].
    pub components: Vec<Component>,
    /// For `Source::Chain`, the tasks that led to its wake-up, first to last; else empty.
    pub chain: Vec<ChainLink>,
}

/// One task of a chain finding's wake chain, as reports show it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChainLink {
    pub pid: i32,
    /// The priority it ran with (its switch-in's, else its waking's).
    pub prio: i32,
    /// The CPU it ran on and woke the next task from.
    pub cpu: u32,
    pub woken: Timestamp,
    pub run: Timestamp,
    pub wakes_next: Timestamp,
    pub woken_by: WokenBy,
}

impl Finding {
    pub fn latency_ns(&self) -> u64 {
        self.run - self.expected.unwrap_or(self.wakeup)
    }

    /// Whether the finding is filed at `threshold_ns`: at or above it, never below.
    pub fn files_at(&self, threshold_ns: u64) -> bool {
        self.latency_ns() >= threshold_ns
    }

    /// The kind with the most time: the finding's root cause.
    pub fn root_cause(&self) -> Cause {
        let mut totals: Vec<(Cause, u64)> = Vec::new();
        for c in &self.components {
            match totals.iter_mut().find(|(k, _)| *k == c.cause) {
                Some((_, ns)) => *ns += c.ns,
                None => totals.push((c.cause, c.ns)),
            }
        }
        // On a tie the kind seen first wins; an empty finding (zero latency) is the wake-up
        // path's own.
        totals
            .iter()
            .fold(None, |best: Option<(Cause, u64)>, &(k, ns)| match best {
                Some((_, b)) if b >= ns => best,
                _ => Some((k, ns)),
            })
            .map_or(Cause::KernelPath, |(k, _)| k)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn piece(cause: Cause, span: (u64, u64), culprit: Option<Culprit>) -> Component {
        Component::new(cause, Phase::AfterWakeup, 0, span, culprit, Note::Interrupt)
    }

    #[test]
    fn merging_sums_same_kind_phase_and_culprit() {
        let t = Some(Culprit::Task(9));
        let merged = merge(vec![
            piece(Cause::HigherPriority, (10, 110), t),
            piece(Cause::Hardirq, (110, 115), None),
            piece(Cause::HigherPriority, (115, 300), t),
            piece(Cause::HigherPriority, (300, 310), Some(Culprit::Task(8))),
            piece(Cause::KernelPath, (310, 310), None),
        ]);
        assert_eq!(merged.len(), 3);
        assert_eq!(
            (merged[0].ns, merged[0].start, merged[0].end),
            (285, 10, 300)
        );
        assert_eq!(merged[1].cause, Cause::Hardirq);
        assert_eq!(merged[2].culprit, Some(Culprit::Task(8)));
    }

    /// Neighbours join into one stretch, except black holes: an event lies between two.
    #[test]
    fn joining_keeps_the_timeline_contiguous_and_black_holes_apart() {
        let t = Some(Culprit::Task(9));
        let joined = join_neighbours(vec![
            piece(Cause::HigherPriority, (10, 110), t),
            piece(Cause::HigherPriority, (110, 200), t),
            piece(Cause::BlackHole, (200, 250), None),
            piece(Cause::BlackHole, (250, 300), None),
            piece(Cause::HigherPriority, (300, 310), t),
        ]);
        let spans: Vec<(Cause, u64, u64)> =
            joined.iter().map(|c| (c.cause, c.start, c.end)).collect();
        assert_eq!(
            spans,
            [
                (Cause::HigherPriority, 10, 200),
                (Cause::BlackHole, 200, 250),
                (Cause::BlackHole, 250, 300),
                (Cause::HigherPriority, 300, 310),
            ]
        );
    }

    #[test]
    fn the_root_cause_is_the_kind_with_most_time() {
        let f = Finding {
            pid: 1,
            prio: Some(19),
            cpu: 0,
            source: Source::Wakeup,
            expected: None,
            wakeup: 0,
            waker_cpu: 0,
            wake_irq_entry: None,
            run: 100,
            run_at: RunAt::Wake(WakeEnd::Switch),
            wake_end: 100,
            evidence: None,
            ran_past_due: None,
            unrecorded_due: None,
            timeline: Vec::new(),
            chain: Vec::new(),
            components: vec![
                piece(Cause::PreemptOff, (0, 40), Some(Culprit::Task(2))),
                piece(Cause::Hardirq, (40, 80), None),
                piece(Cause::PreemptOff, (80, 100), Some(Culprit::Task(3))),
            ],
        };
        // 60 ns of preempt_off across two culprits beat 40 of hardirq.
        assert_eq!(f.root_cause(), Cause::PreemptOff);
        assert_eq!(f.latency_ns(), 100);
    }
}
