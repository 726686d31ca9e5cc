//! The timerlat tracer's own activations, explained from osnoise's noise events.
//!
//! The timerlat tracer (and `rtla timerlat`) arms a timer per CPU for its thread. The timer's
//! interrupt prints the activation's irq-context sample and wakes the thread; the thread prints
//! its thread-context sample as soon as it runs. That sample proves when the timer was due:
//! its own time minus its latency. In between, osnoise's events say what had the CPU, each
//! printed when it ended with its start and its duration net of what interrupted it:
//! `irq_noise` and `softirq_noise` (an interrupt), `nmi_noise`, and `thread_noise` (a task
//! switched out after the timer fired and before the thread ran; the kernel reports it at that
//! switch). The activation is cut at the irq sample (the wake-up):
//! - before it, the timer was due and its interrupt had not run: other interrupts are
//!   `hardirq`/`softirq`, the timer's own interrupt up to its sample `kernel_path`, and the
//!   rest, which these events cannot explain (interrupts off, or outside Linux), `unknown`
//!   beyond the ordinary delivery;
//! - after it, the rest of the timer's own interrupt is `kernel_path`, other interrupts
//!   `hardirq`/`softirq`, the tasks of `thread_noise` hold the CPU (`unknown` with the task
//!   named: these events print no priority, so whether it outranked the thread or kept the CPU
//!   with preemption off is not shown), the idle task leaving idle and the thread's own way to
//!   its sample `kernel_path`.
//!
//! When the trace ends inside an activation after its timer's interrupt (rtla stops tracing
//! there when the IRQ latency crosses its threshold), the activation is explained up to that
//! interrupt's sample.
//!
//! Used when the trace has no scheduler wake-ups of the thread (rtla's own trace); with them,
//! the engine explains its wake-ups as any other task's.

use super::cause::{Cause, Phase, Source};
use super::decompose::MIN_CAUSE_NS;
use super::finding::{Component, Culprit, Evidence, Finding, Note, RunAt};
use super::timeline::{LOOKBACK_NS, MAX_STRETCHES};
use crate::names::Names;
use rtsleuth_trace::event::{Event, EventKind, NoiseSource, TimerlatContext, Timestamp};
use std::collections::VecDeque;

/// What one noise event reported running.
#[derive(Debug, Clone, Copy, PartialEq)]
enum What {
    /// An interrupt: its culprit as a finding names it.
    Interrupt {
        cause: Cause,
        culprit: Culprit,
    },
    Nmi,
    Thread {
        pid: i32,
    },
}

#[derive(Debug, Clone, Copy)]
struct Noise {
    what: What,
    start: Timestamp,
    /// Where it ended: `start` plus its net duration and, for an interrupt, the interrupts
    /// nested in it, which the kernel leaves out of the figure.
    end: Timestamp,
    /// When the event was printed: for a thread, the switch that ended its run.
    reported: Timestamp,
}

/// The irq-context sample of the activation in flight on a CPU.
#[derive(Debug, Clone, Copy)]
struct IrqSample {
    seq: u64,
    ts: Timestamp,
    latency_ns: u64,
    /// The task its interrupt interrupted (the pid column).
    pid: i32,
}

#[derive(Debug, Default)]
struct CpuNoise {
    noise: VecDeque<Noise>,
    irq: Option<IrqSample>,
    /// The pid of the CPU's latest thread sample: its timerlat thread.
    thread: Option<i32>,
}

/// The sample that closes an activation: its thread's, or, when the trace ends before that,
/// its timer interrupt's (`context` says which).
#[derive(Debug, Clone, Copy)]
pub struct ThreadSample {
    pub pid: i32,
    pub cpu: u32,
    pub seq: u64,
    pub context: TimerlatContext,
    pub latency_ns: u64,
    pub ts: Timestamp,
}

impl ThreadSample {
    /// When the timer was due, as the sample proves it.
    pub fn due(&self) -> Timestamp {
        self.ts.saturating_sub(self.latency_ns)
    }

    pub fn evidence(&self) -> Evidence {
        Evidence::Timerlat {
            seq: self.seq,
            context: self.context,
            latency_ns: self.latency_ns,
            at: self.ts,
        }
    }
}

/// osnoise's recent noise per CPU.
#[derive(Debug, Default)]
pub struct Timerlat {
    cpus: Vec<CpuNoise>,
    /// Some `thread_noise` was printed: the tracer reports the tasks that ran.
    threads_traced: bool,
    /// Every timerlat sample seen, of any context.
    pub samples: u64,
}

impl Timerlat {
    fn cpu(&mut self, cpu: u32) -> &mut CpuNoise {
        let i = cpu as usize;
        if i >= self.cpus.len() {
            self.cpus.resize_with(i + 1, CpuNoise::default);
        }
        &mut self.cpus[i]
    }

    /// Feeds an event; returns the activation a thread-context sample closes.
    pub fn event(&mut self, ev: &Event<'_>, names: &mut Names) -> Option<ThreadSample> {
        if let EventKind::TimerlatSample { .. } = ev.kind {
            self.samples += 1;
        }
        match ev.kind {
            EventKind::OsnoiseNoise {
                source,
                name,
                id,
                start_ns,
                duration_ns,
            } => {
                let what = match (source, id) {
                    (NoiseSource::Thread, Some(pid)) => What::Thread { pid },
                    (NoiseSource::Irq, Some(id)) => What::Interrupt {
                        cause: Cause::Hardirq,
                        culprit: Culprit::Noise {
                            name: names.intern(name),
                            id,
                        },
                    },
                    (NoiseSource::Softirq, Some(vec)) => What::Interrupt {
                        cause: Cause::Softirq,
                        culprit: Culprit::Softirq {
                            vec: vec as u32,
                            action: names.intern(name),
                        },
                    },
                    (NoiseSource::Nmi, _) => What::Nmi,
                    _ => return None,
                };
                self.threads_traced |= source == NoiseSource::Thread;
                let c = self.cpu(ev.cpu);
                let end = match source {
                    NoiseSource::Irq | NoiseSource::Softirq => c.gross_end(start_ns, duration_ns),
                    _ => start_ns.saturating_add(duration_ns),
                };
                let noise = Noise {
                    what,
                    start: start_ns,
                    end,
                    reported: ev.ts,
                };
                c.push(noise);
                None
            }
            EventKind::TimerlatSample {
                seq,
                context: TimerlatContext::Irq,
                latency_ns,
            } => {
                let ts = ev.ts;
                self.cpu(ev.cpu).irq = Some(IrqSample {
                    seq,
                    ts,
                    latency_ns,
                    pid: ev.pid,
                });
                None
            }
            EventKind::TimerlatSample {
                seq,
                context: TimerlatContext::Thread,
                latency_ns,
            } => {
                self.cpu(ev.cpu).thread = Some(ev.pid);
                Some(ThreadSample {
                    pid: ev.pid,
                    cpu: ev.cpu,
                    seq,
                    context: TimerlatContext::Thread,
                    latency_ns,
                    ts: ev.ts,
                })
            }
            _ => None,
        }
    }

    /// Events of `cpu` (every CPU for `None`) were lost: nothing in flight there is whole.
    pub fn lost(&mut self, cpu: Option<u32>) {
        for (i, c) in self.cpus.iter_mut().enumerate() {
            if cpu.map_or(true, |n| n as usize == i) {
                *c = CpuNoise::default();
            }
        }
    }

    /// The stretches of activation `s`, from its due time (or from `from`, where the trace
    /// begins to be whole, when that is later) to its sample. `None` when its irq-context
    /// sample is not in the trace, or lies before `from` (`None`: not known yet), or when its
    /// timer interrupted the thread itself: it was on its CPU, not waiting (rtla's user-space
    /// threads when an activation outlasts the period).
    pub fn explain(&mut self, s: &ThreadSample, from: Option<Timestamp>) -> Option<Finding> {
        let threads_traced = self.threads_traced;
        let c = self.cpu(s.cpu);
        let irq = c.irq.take().filter(|i| i.seq == s.seq && i.ts <= s.ts)?;
        if irq.pid == s.pid {
            c.close(s.ts);
            return None;
        }
        let from = from.filter(|&f| f <= irq.ts)?;
        let f = c.activation(s, from, irq.ts, threads_traced);
        c.close(s.ts);
        Some(f)
    }

    /// Closes activation `s` without explaining it (the engine explains the thread's traced
    /// wake-up instead).
    pub fn close(&mut self, s: &ThreadSample) {
        let c = self.cpu(s.cpu);
        c.irq = None;
        c.close(s.ts);
    }

    /// The activations the trace ends inside of, after their timer's interrupt (rtla stops
    /// tracing there when the IRQ latency crosses its threshold): each as far as its irq
    /// sample, for the CPU's thread. `from` is where each CPU's trace is whole.
    pub fn unfinished(&mut self, from: impl Fn(u32) -> Option<Timestamp>) -> Vec<Finding> {
        let mut out = Vec::new();
        for cpu in 0..self.cpus.len() as u32 {
            let c = &mut self.cpus[cpu as usize];
            let (Some(irq), Some(pid)) = (c.irq.take(), c.thread) else {
                continue;
            };
            let Some(from) = from(cpu).filter(|&f| f <= irq.ts) else {
                continue;
            };
            let s = ThreadSample {
                pid,
                cpu,
                seq: irq.seq,
                context: TimerlatContext::Irq,
                latency_ns: irq.latency_ns,
                ts: irq.ts,
            };
            out.push(c.activation(&s, from, irq.ts, self.threads_traced));
        }
        out
    }
}

impl CpuNoise {
    /// An activation ended at `ts`: noise that ended before it cannot reach the next
    /// activation's due time.
    fn close(&mut self, ts: Timestamp) {
        self.noise.retain(|n| n.end > ts);
    }

    /// Activation `s` cut by what had this CPU, from its due time (never before `from`) to its
    /// sample, its thread woken at `wake`.
    fn activation(
        &self,
        s: &ThreadSample,
        from: Timestamp,
        wake: Timestamp,
        threads_traced: bool,
    ) -> Finding {
        let due = s.due().max(from);
        let wake = wake.clamp(due, s.ts);
        let cut = Cut {
            noise: &self.noise,
            cpu: s.cpu,
            victim: s.pid,
            wake,
            threads_traced,
        };
        let timeline = super::finding::join_neighbours(cut.pieces(due, s.ts));
        finding(s, due, wake, timeline)
    }

    /// The end of an interrupt that began at `start` and ran `net` ns itself: the kernel
    /// reports nested interrupts (an IRQ in a softirq, an NMI in either) first, and leaves
    /// their time out of the outer one's duration.
    fn gross_end(&self, start: Timestamp, net: u64) -> Timestamp {
        let interrupt = |w: &What| {
            matches!(
                w,
                What::Nmi
                    | What::Interrupt {
                        cause: Cause::Hardirq,
                        ..
                    }
            )
        };
        let mut nested: Vec<&Noise> = (self.noise.iter())
            .filter(|n| interrupt(&n.what) && n.start >= start)
            .collect();
        nested.sort_by_key(|n| n.start);
        let mut end = start.saturating_add(net);
        for n in nested {
            if n.start >= end {
                break;
            }
            end = end.saturating_add(n.end - n.start);
        }
        end
    }

    fn push(&mut self, n: Noise) {
        while self.noise.len() >= MAX_STRETCHES
            || self
                .noise
                .front()
                .is_some_and(|o| o.end.saturating_add(LOOKBACK_NS) < n.reported)
        {
            self.noise.pop_front();
        }
        self.noise.push_back(n);
    }
}

fn finding(
    s: &ThreadSample,
    from: Timestamp,
    wake: Timestamp,
    mut timeline: Vec<Component>,
) -> Finding {
    let run_at = match s.context {
        TimerlatContext::Irq => RunAt::TimerlatIrq,
        _ => RunAt::Timerlat,
    };
    super::decompose::bound_kernel_path(&mut timeline);
    Finding {
        pid: s.pid,
        prio: None,
        cpu: s.cpu,
        source: Source::Timer,
        expected: Some(from),
        evidence: Some(s.evidence()),
        ran_past_due: None,
        unrecorded_due: (s.due() < from).then_some(s.due()),
        chain: Vec::new(),
        wakeup: wake,
        waker_cpu: s.cpu,
        wake_irq_entry: None,
        run: s.ts,
        run_at,
        wake_end: s.ts,
        components: super::finding::merge(timeline.clone()),
        timeline,
    }
}

/// One activation's window cut by what had its CPU.
struct Cut<'a> {
    noise: &'a VecDeque<Noise>,
    cpu: u32,
    victim: i32,
    wake: Timestamp,
    threads_traced: bool,
}

impl Cut<'_> {
    /// Contiguous pieces tiling `[due, run)`.
    fn pieces(&self, due: Timestamp, run: Timestamp) -> Vec<Component> {
        let inside = |t: Timestamp| t.clamp(due, run);
        let mut cuts: Vec<Timestamp> = vec![due, run, self.wake];
        for n in self.noise {
            cuts.extend([inside(n.start), inside(n.end), inside(n.reported)]);
        }
        cuts.sort_unstable();
        cuts.dedup();
        let mut out = Vec::with_capacity(cuts.len());
        for w in cuts.windows(2) {
            let (a, b) = (w[0], w[1]);
            let phase = if b <= self.wake {
                Phase::BeforeWakeup
            } else {
                Phase::AfterWakeup
            };
            let (cause, culprit, note) = self.judge(a, phase);
            out.push(Component::new(
                cause,
                phase,
                self.cpu,
                (a, b),
                culprit,
                note,
            ));
        }
        short_delays_are_delivery(&mut out);
        out
    }

    /// What had the CPU from `a` on (until the next cut).
    fn judge(&self, a: Timestamp, phase: Phase) -> (Cause, Option<Culprit>, Note) {
        // The innermost interrupt covering `a`: an NMI nests in anything, IRQs in softirqs.
        let covering = |pick: &dyn Fn(&What) -> bool| {
            self.noise
                .iter()
                .filter(|n| pick(&n.what) && n.start <= a && a < n.end)
                .min_by_key(|n| n.end - n.start)
        };
        if covering(&|w| *w == What::Nmi).is_some() {
            return (Cause::Unknown, None, Note::Nmi);
        }
        let hard = |w: &What| {
            matches!(
                w,
                What::Interrupt {
                    cause: Cause::Hardirq,
                    ..
                }
            )
        };
        let soft = |w: &What| {
            matches!(
                w,
                What::Interrupt {
                    cause: Cause::Softirq,
                    ..
                }
            )
        };
        for pick in [&hard as &dyn Fn(&What) -> bool, &soft] {
            if let Some(n) = covering(pick) {
                let What::Interrupt { cause, culprit } = n.what else {
                    unreachable!("picked an interrupt")
                };
                if cause == Cause::Hardirq && n.start <= self.wake && self.wake <= n.end {
                    return (Cause::KernelPath, None, Note::WakeInterrupt);
                }
                return (cause, Some(culprit), Note::Interrupt);
            }
        }
        match phase {
            Phase::BeforeWakeup => (Cause::Unknown, None, Note::TimerIrqLate),
            Phase::AfterWakeup => self.task_at(a),
        }
    }

    /// Who ran in task context at `a`, after the wake-up: the first task whose `thread_noise`
    /// is reported after `a` and whose run had begun by then; the thread itself after the last.
    fn task_at(&self, a: Timestamp) -> (Cause, Option<Culprit>, Note) {
        if !self.threads_traced {
            return (Cause::Unknown, None, Note::ThreadsUntraced);
        }
        let next = self
            .noise
            .iter()
            .filter(|n| matches!(n.what, What::Thread { .. }) && n.reported > a)
            .min_by_key(|n| n.reported);
        match next {
            Some(&Noise {
                what: What::Thread { pid },
                start,
                ..
            }) if start <= a.saturating_add(MIN_CAUSE_NS) => match pid {
                0 => (Cause::KernelPath, None, Note::IdleExit),
                pid if pid == self.victim => (Cause::KernelPath, None, Note::Scheduling),
                pid => (Cause::Unknown, Some(Culprit::Task(pid)), Note::ThreadNoise),
            },
            _ => (Cause::KernelPath, None, Note::Scheduling),
        }
    }
}

/// Before the wake-up, a timer interrupt late by less than a cause is worth is its ordinary
/// delivery.
fn short_delays_are_delivery(pieces: &mut [Component]) {
    for p in pieces
        .iter_mut()
        .filter(|p| p.note == Note::TimerIrqLate && p.ns < MIN_CAUSE_NS)
    {
        p.cause = Cause::KernelPath;
        p.note = Note::InterruptDelivery;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn noise(what: What, start: u64, dur: u64, reported: u64) -> Noise {
        Noise {
            what,
            start,
            end: start + dur,
            reported,
        }
    }

    /// The kernel documentation's stack-dump example (timerlat-tracer.rst), in ns from
    /// 200.2 s: timerlat/7-1001 ran 859978 ns late behind insmod-1026.
    #[test]
    fn the_documented_activation_is_insmods() {
        let mut names = Names::default();
        let local_timer = Culprit::Noise {
            name: names.intern("local_timer"),
            id: 236,
        };
        let irq = |start, dur, rep| {
            let what = What::Interrupt {
                cause: Cause::Hardirq,
                culprit: local_timer,
            };
            noise(what, start, dur, rep)
        };
        let base = 200_200_000_000;
        let mut tl = Timerlat {
            threads_traced: true,
            ..Default::default()
        };
        let c = tl.cpu(7);
        c.noise.extend([
            irq(base + 1_939_376, 7_872, base + 1_948_000),
            irq(base + 2_586_162, 11_855, base + 2_598_000),
            irq(base + 2_939_174, 7_318, base + 2_947_000),
            noise(
                What::Thread { pid: 1026 },
                base + 2_586_933,
                838_681,
                base + 3_444_000,
            ),
        ]);
        c.irq = Some(IrqSample {
            seq: 29800,
            ts: base + 2_587_000,
            latency_ns: 1_616,
            // The interrupt came while insmod held the CPU.
            pid: 1026,
        });
        let s = ThreadSample {
            pid: 1001,
            cpu: 7,
            seq: 29800,
            context: TimerlatContext::Thread,
            latency_ns: 859_978,
            ts: base + 3_445_000,
        };
        let f = tl.explain(&s, Some(base)).expect("an activation");
        assert_eq!(f.latency_ns(), 859_978);
        let insmod: u64 = (f.components.iter())
            .filter(|c| c.culprit == Some(Culprit::Task(1026)))
            .map(|c| c.ns)
            .sum();
        // From the end of the timer's interrupt (2.598017) to the switch (3.444), less the
        // 7.318 us interrupt in between.
        assert_eq!(insmod, 3_444_000 - 2_598_017 - 7_318);
        assert_eq!(f.root_cause(), Cause::Unknown);
        let total: u64 = f.timeline.iter().map(|c| c.ns).sum();
        assert_eq!(total, 859_978);
    }
}
