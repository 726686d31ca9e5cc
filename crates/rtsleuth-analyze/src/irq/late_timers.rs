//! Interrupts-off inferred from late timer interrupts, for the kernels (most production ones)
//! that have neither the `preemptirq` events nor the latency tracers.
//!
//! An hrtimer is programmed to fire at `expires=` (`hrtimer_start`); its interrupt reads the
//! clock once and runs every expired callback with that time, `now=` of
//! `hrtimer_expire_entry`. Both are in the timer's clock base, so `now − expires` is how late
//! the interrupt came, with no clock conversion at all. A hard-IRQ timer much later than the
//! ordinary delivery means the CPU could not take the interrupt: interrupts were disabled by
//! the task it interrupted (`irqs_off`), or, when that task is the idle task, the CPU was not
//! running Linux code that could disable them (deep idle exit, hypervisor, SMI: `black_hole`).
//!
//! Soft timers (expired from the softirq, as most are on PREEMPT_RT) are late by the softirq's
//! own delay and are not counted. One interrupt counts once, by its first timer. A timer armed
//! when already due counts from when it was armed. The due time in the trace clock comes from
//! [`HrtimerClock`], calibrated by the same event.
//!
//! A trace can miss a re-arm: this VM's CPU 1 never records its idle task's own events, so the
//! tick stopped and restarted in idle shows only its old `expires=`. An interrupt runs every
//! expired timer of its CPU, so when another timer interrupt entered on that CPU after the due
//! time, the timer was not pending as traced: such an expiry is counted as `stale`, not late.
//! Likewise the tick (`tick_nohz_handler`, `tick_sched_timer`) of an idle CPU is stopped and
//! re-armed by the idle task itself: unless the trace saw the idle task arm it, its expiry in
//! idle is `stale` too.

use super::worst::Worst;
use crate::explain::HrtimerClock;
use crate::latency::LatencyHistogram;
use crate::names::NameId;
use rtsleuth_trace::event::Timestamp;
use rustc_hash::FxHashMap as HashMap;

/// One timer interrupt that came late.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LateTimer {
    pub cpu: u32,
    /// When it was due, in the trace clock.
    pub due: Timestamp,
    /// When the interrupt was entered (its vector or handler entry, else the callback).
    pub irq_entry: Timestamp,
    pub function: NameId,
    /// The task the interrupt interrupted: the one that kept it out.
    pub pid: i32,
    /// The last task-context event on the CPU before the interrupt, if after the due time:
    /// its time and whether it had interrupts disabled.
    pub witness: Option<(Timestamp, bool)>,
}

impl LateTimer {
    /// Did the idle task hold the CPU (so nothing disabled interrupts)?
    pub fn idle(&self) -> bool {
        self.pid == 0
    }

    /// As `explain` decides: `irqs_off` when the task's last event after the due time had
    /// interrupts disabled, `black_hole` when the trace shows nothing that kept them off (an
    /// idle CPU, no event, or interrupts on).
    pub fn kind(&self) -> &'static str {
        match self.witness {
            Some((_, true)) if !self.idle() => "irqs_off",
            _ => "black_hole",
        }
    }
}

/// A hard-IRQ `hrtimer_expire_entry`, with what the CPU was doing.
#[derive(Debug, Clone, Copy)]
pub struct Expiry {
    pub cpu: u32,
    pub ts: Timestamp,
    pub hrtimer: u64,
    pub now: u64,
    pub function: NameId,
    pub pid: i32,
    /// The entry of the interrupt it runs in, if traced.
    pub irq_entry: Option<Timestamp>,
    /// The timer is the scheduler tick.
    pub tick: bool,
}

#[derive(Debug)]
pub struct LateTimers {
    threshold_ns: u64,
    clock: HrtimerClock,
    /// Armed timers: (expires, when armed, armed by the idle task in task context).
    armed: HashMap<u64, (u64, Timestamp, bool)>,
    /// Per CPU: the current and the previous timer interrupt.
    irqs: Vec<Interrupts>,
    /// Per CPU: the last task-context event and whether it had interrupts off.
    last_task_event: Vec<Option<(Timestamp, bool)>>,
    /// Every hard timer interrupt's lateness.
    pub all: LatencyHistogram,
    pub worst: Worst<LateTimer>,
    /// Interrupts at or above the threshold.
    pub late: u64,
    /// Expiries whose traced `expires=` an earlier interrupt proves out of date.
    pub stale: u64,
}

impl LateTimers {
    pub fn new(threshold_ns: u64, keep: usize) -> LateTimers {
        LateTimers {
            threshold_ns,
            clock: HrtimerClock::default(),
            armed: HashMap::default(),
            irqs: Vec::new(),
            last_task_event: Vec::new(),
            all: LatencyHistogram::default(),
            worst: Worst::new(keep),
            late: 0,
            stale: 0,
        }
    }

    pub fn threshold_ns(&self) -> u64 {
        self.threshold_ns
    }

    pub fn armed(&mut self, hrtimer: u64, expires: u64, ts: Timestamp, by_idle: bool) {
        self.armed.insert(hrtimer, (expires, ts, by_idle));
    }

    pub fn cancelled(&mut self, hrtimer: u64) {
        self.armed.remove(&hrtimer);
    }

    /// A task-context event on `cpu`: the evidence for what the CPU was doing.
    pub fn task_event(&mut self, cpu: u32, ts: Timestamp, irqs_off: bool) {
        *slot(&mut self.last_task_event, cpu) = Some((ts, irqs_off));
    }

    /// A timer's callback starts; `hard` says it is in hard-IRQ context.
    pub fn expired(&mut self, e: Expiry, hard: bool) {
        self.clock.observe(e.cpu, e.ts, e.now);
        let Some((expires, armed_at, by_idle)) = self.armed.remove(&e.hrtimer) else {
            return;
        };
        if !hard {
            return;
        }
        let entry = e.irq_entry.unwrap_or(e.ts);
        let irqs = slot(&mut self.irqs, e.cpu);
        if irqs.current != Some(entry) {
            irqs.previous = irqs.current.replace(entry);
            irqs.counted = false;
        }
        if irqs.counted {
            return;
        }
        let previous = irqs.previous;
        let due = self
            .clock
            .to_trace(e.cpu, expires)
            .unwrap_or(e.ts)
            .max(armed_at);
        if previous.is_some_and(|p| p > due) || (e.tick && e.pid == 0 && !by_idle) {
            self.stale += 1;
            return;
        }
        let late_ns = e.ts.saturating_sub(due);
        slot(&mut self.irqs, e.cpu).counted = true;
        self.all.record_for(late_ns, e.ts, e.pid);
        if late_ns < self.threshold_ns {
            return;
        }
        self.late += 1;
        let witness = slot(&mut self.last_task_event, e.cpu).filter(|(ts, _)| *ts >= due);
        let late = LateTimer {
            cpu: e.cpu,
            due,
            irq_entry: entry,
            function: e.function,
            pid: e.pid,
            witness,
        };
        self.worst.offer(late_ns, late);
    }
}

/// The timer interrupts of one CPU, by their entry time.
#[derive(Debug, Clone, Default)]
struct Interrupts {
    current: Option<Timestamp>,
    previous: Option<Timestamp>,
    /// The current one has been counted.
    counted: bool,
}

fn slot<T: Default + Clone>(v: &mut Vec<T>, cpu: u32) -> &mut T {
    let i = cpu as usize;
    if i >= v.len() {
        v.resize(i + 1, T::default());
    }
    &mut v[i]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::names::Names;

    /// `tests/fixtures/recorded/fifo_below/trace.txt`: cyclictest armed `c0cd7fe3` for
    /// 629845788023 at 629.883189; the interrupt entered at 629.884786 and the callback ran at
    /// 629.884788 with now=629846451477: 663.454 us late, due at 629.884124546, on idle CPU 0.
    #[test]
    fn the_late_interrupt_of_fifo_below() {
        let mut n = Names::default();
        let f = n.intern("hrtimer_wakeup");
        let mut l = LateTimers::new(100_000, 3);
        l.armed(0xc0cd7fe3, 629_845_788_023, 629_883_189_000, false);
        l.task_event(0, 629_883_195_000, true);
        let e = Expiry {
            cpu: 0,
            ts: 629_884_788_000,
            hrtimer: 0xc0cd7fe3,
            now: 629_846_451_477,
            function: f,
            pid: 0,
            irq_entry: Some(629_884_786_000),
            tick: false,
        };
        l.expired(e, true);
        let (ns, t) = l.worst.iter().next().copied().unwrap();
        assert_eq!(ns, 663_454);
        assert_eq!(
            (t.due, t.irq_entry, t.pid, t.witness),
            (629_884_124_546, 629_884_786_000, 0, None)
        );
        assert!(t.idle());
        assert_eq!(t.kind(), "black_hole");
        let masked = LateTimer {
            pid: 12,
            witness: Some((629_884_500_000, true)),
            ..t
        };
        assert_eq!(masked.kind(), "irqs_off");
        assert_eq!(
            LateTimer {
                witness: None,
                ..masked
            }
            .kind(),
            "black_hole"
        );
        // The same interrupt's second timer is not counted again; soft timers never are.
        l.armed(0x82144063, 629_845_788_023, 629_883_189_000, false);
        l.expired(
            Expiry {
                hrtimer: 0x82144063,
                ts: 629_884_794_000,
                ..e
            },
            true,
        );
        l.armed(7, 1, 0, false);
        l.expired(
            Expiry {
                hrtimer: 7,
                irq_entry: None,
                ..e
            },
            false,
        );
        assert_eq!((l.all.count(), l.late), (1, 1));
        // A timer whose traced expiry passed before that interrupt was re-armed unseen.
        l.armed(9, 629_845_000_000, 629_883_000_000, false);
        l.expired(
            Expiry {
                hrtimer: 9,
                ts: 629_890_000_000,
                now: 629_851_663_477,
                irq_entry: Some(629_889_990_000),
                ..e
            },
            true,
        );
        assert_eq!((l.all.count(), l.late, l.stale), (1, 1, 1));
        // An idle CPU's tick armed from its own interrupt, not by the idle task: stale.
        l.armed(10, 629_845_000_000, 629_870_000_000, false);
        l.expired(
            Expiry {
                hrtimer: 10,
                ts: 629_900_000_000,
                irq_entry: None,
                tick: true,
                ..e
            },
            true,
        );
        l.armed(11, 629_862_000_000, 629_899_000_000, true);
        l.expired(
            Expiry {
                hrtimer: 11,
                ts: 629_910_000_000,
                now: 629_871_663_477,
                irq_entry: None,
                tick: true,
                ..e
            },
            true,
        );
        assert_eq!((l.all.count(), l.late, l.stale), (2, 2, 2));
    }
}
