//! The `explain` report: per finding a verdict and a timeline ladder, then the aggregate.

use super::cause::{Cause, Phase, Source};
use super::chain::WokenBy;
use super::decompose::KERNEL_PATH_MAX_NS;
use super::finding::{Component, Culprit, Evidence, Finding, Note, RunAt};
use super::period::INTERVALS;
use super::timeline::Irq;
use super::victim::{aggregate_into, Aggregate, Spikes, Target};
use super::{CauseTotal, Explain, Outline, OutlineStretch};
use crate::document::{
    fmt_ts, fmt_ts_nanos, fmt_us, round3, trace_json, Align, Block, Document, Table,
};
use crate::wakeups::RunAt as WakeEnd;
use rtsleuth_trace::event::{ns_to_us, ts_to_secs, TimerlatContext, Timestamp};
use rtsleuth_trace::read::TraceInfo;
use serde_json::{json, Value};

/// Everything a report says about one component, rendered once.
struct Rendered {
    culprit: Option<String>,
    detail: String,
}

impl Explain {
    /// Commits what is still open and picks the reported tasks: the explicit targets, or the
    /// task a cyclictest mark names, or every real-time task explained.
    fn reported_pids(&mut self) -> Vec<i32> {
        self.settle_all();
        self.timerlat_unfinished();
        let filing = self.filing();
        for v in self.victims.values_mut() {
            v.commit(filing);
        }
        let explicit = !self.opts.pids.is_empty() || !self.opts.comms.is_empty() || self.opts.all;
        let mut pids: Vec<i32> = (self.victims.iter())
            .chain(&self.preempted)
            .filter(|(pid, v)| {
                v.wakeups > 0 && (explicit || self.marked.is_empty() || self.marked.contains(pid))
            })
            .map(|(pid, _)| *pid)
            .collect();
        pids.sort_unstable();
        pids.dedup();
        pids
    }

    /// What was filed for `pid`, wake-ups and preemption waits.
    fn target(&self, pid: i32) -> Target<'_> {
        Target {
            woken: self.victims.get(&pid),
            preempted: self.preempted.get(&pid),
        }
    }

    /// The latest wake-up of `pid` explained, as the JSON renders it, and when it ran: when
    /// the queueing of a work at `queued_at` woke it (`source: queued`; what `wq` shows of a
    /// work's wait).
    pub fn queued_finding(&mut self, pid: i32, queued_at: Timestamp) -> Option<(Value, Timestamp)> {
        self.settle_last(pid);
        let f = &self.victims.get(&pid)?.last.as_ref()?.finding;
        let queued = f.source == Source::Queued && f.expected == Some(queued_at);
        queued.then(|| (self.finding_json(f), f.run))
    }

    /// The findings a report shows, worst first: the `top` worst of the reported tasks.
    fn reported_findings(&self, pids: &[i32]) -> Vec<&Finding> {
        let mut findings: Vec<&Finding> =
            pids.iter().flat_map(|p| self.target(*p).worst()).collect();
        findings.sort_by(|a, b| b.latency_ns().cmp(&a.latency_ns()).then(a.run.cmp(&b.run)));
        findings.truncate(self.opts.top);
        findings
    }

    /// The findings the report shows, each with its timeline rendered as the JSON renders it
    /// but with times in nanoseconds: what an export draws.
    pub fn outlines(&mut self) -> Vec<Outline> {
        let pids = self.reported_pids();
        self.reported_findings(&pids)
            .into_iter()
            .map(|f| Outline {
                pid: f.pid,
                comm: self.tasks.get(f.pid).to_string(),
                prio: f.prio,
                cpu: f.cpu,
                source: f.source,
                expected: f.expected,
                wakeup: f.wakeup,
                run: f.run,
                run_at: f.run_at.as_str(),
                latency_ns: f.latency_ns(),
                root_cause: f.root_cause(),
                summary: self.summary(f),
                timeline: f
                    .timeline
                    .iter()
                    .map(|c| {
                        let r = self.render(f, c);
                        OutlineStretch {
                            cause: c.cause,
                            phase: c.phase,
                            cpu: c.cpu,
                            start: c.start,
                            end: c.end,
                            culprit: r.culprit,
                            culprit_pid: culprit_pid(c),
                            detail: r.detail,
                        }
                    })
                    .collect(),
            })
            .collect()
    }

    /// The aggregate the report ends with, with culprits named: over every spike with a
    /// threshold, else over the reported findings. A set of traces adds these up.
    pub fn causes(&mut self) -> Vec<CauseTotal> {
        let pids = self.reported_pids();
        let findings = self.reported_findings(&pids);
        self.aggregate(&pids, &findings)
            .into_iter()
            .map(|((cause, culprit), s)| CauseTotal {
                cause,
                culprit: culprit.map(|c| self.culprit_name(c)),
                culprit_comm: match culprit {
                    Some(Culprit::Task(pid)) => Some(self.tasks.get(pid).to_string()),
                    _ => None,
                },
                spikes: s.spikes,
                total_ns: s.total_ns,
                max_ns: s.max_ns,
            })
            .collect()
    }

    /// Per kind and culprit, the largest total first.
    fn aggregate(
        &self,
        pids: &[i32],
        findings: &[&Finding],
    ) -> Vec<((Cause, Option<Culprit>), Spikes)> {
        let mut aggregate = Aggregate::default();
        if self.opts.threshold_us.is_some() {
            for p in pids {
                self.target(*p).add_aggregate(&mut aggregate);
            }
        } else {
            findings
                .iter()
                .for_each(|f| aggregate_into(&mut aggregate, f));
        }
        sorted(&aggregate)
    }

    /// Why nothing was explained, beyond what the wake-up model says of a trace without
    /// wake-up events: no wait was a target's, the timerlat samples held no whole activation,
    /// or only preemption waits could be (`--preemptions`).
    fn why_nothing(&self) -> Option<String> {
        if let Some(sel) = &self.opts.irq {
            return Some(format!(
                "no wake-up of a target task lies on a wake chain that interrupt {sel} started (the chain needs sched_waking with context flags and irq_handler_entry/exit; `rtsleuth latency --irq {sel}` says which interrupts the trace entered)"
            ));
        }
        let waits = match (self.wakeups.saw_wakeups(), self.opts.preemptions) {
            (true, false) => "wake-up",
            (true, true) => "wake-up or preemption wait",
            (false, true) => "preemption wait",
            (false, false) if self.timerlat.samples > 0 => return Some(format!(
                "it holds {} timerlat samples but no activation with both its irq and its thread sample in the recorded window; `rtsleuth latency` summarises them per CPU and context",
                self.timerlat.samples
            )),
            (false, false) => return Some("--preemptions explains the waits of tasks switched out while still runnable, which sched_switch alone shows".into()),
        };
        let hint = if self.opts.all {
            ""
        } else {
            " (by default: real-time tasks, prio < 100; see --all, --pid, --task)"
        };
        Some(format!("no {waits} of a target task was found{hint}"))
    }

    pub fn document(&mut self, info: &TraceInfo) -> Document {
        let pids = self.reported_pids();
        let findings = self.reported_findings(&pids);
        let aggregate = self.aggregate(&pids, &findings);

        let mut warnings = info.warnings();
        if self.dropped_by_lost > 0 {
            warnings.push(format!(
                "{} wake-ups in flight were not explained because events were lost",
                self.dropped_by_lost
            ));
        }

        let targets: Vec<Value> = pids
            .iter()
            .map(|p| {
                let v = self.target(*p);
                let mut t = json!({"comm": self.tasks.get(*p), "pid": p, "wakeups": v.wakeups(), "spikes": v.spikes()});
                if self.opts.preemptions {
                    t["preemptions"] = v.preemptions().into();
                }
                // Per task, so that `diff` can say which cause grew for which task; only over
                // every spike: without a threshold there is nothing per task to add up.
                if self.opts.threshold_us.is_some() {
                    let mut aggregate = Aggregate::default();
                    v.add_aggregate(&mut aggregate);
                    t["aggregate"] = self.aggregate_json(&sorted(&aggregate));
                }
                t
            })
            .collect();
        let mut trace = trace_json(info);
        self.wakeups.annotate(&mut trace, &mut warnings);
        if pids.is_empty() {
            warnings.extend(self.why_nothing());
        }
        let json = json!({
            "schema": "rtsleuth.explain/1",
            "trace": trace,
            "threshold_us": self.opts.threshold_us,
            "targets": targets,
            "findings": findings.iter().map(|f| self.finding_json(f)).collect::<Vec<_>>(),
            "aggregate": self.aggregate_json(&aggregate),
            "warnings": warnings,
        });

        let mut blocks = vec![self.targets_block(&pids)];
        for (i, f) in findings.iter().enumerate() {
            blocks.push(Block::Lines(String::new(), self.finding_lines(i + 1, f)));
        }
        blocks.push(Block::Table(self.aggregate_table(&aggregate)));
        Document {
            json,
            blocks,
            warnings,
        }
    }

    fn aggregate_json(&self, aggregate: &[((Cause, Option<Culprit>), Spikes)]) -> Value {
        aggregate
            .iter()
            .map(|((cause, culprit), s)| {
                json!({
                    "kind": cause.as_str(),
                    "culprit": culprit.map(|c| self.culprit_name(c)),
                    "spikes": s.spikes,
                    "total_us": ns_to_us(s.total_ns),
                    "max_us": ns_to_us(s.max_ns),
                })
            })
            .collect()
    }

    fn targets_block(&self, pids: &[i32]) -> Block {
        if pids.len() > TARGETS_LISTED {
            return self.targets_summary(pids);
        }
        let mut pairs: Vec<(String, String)> = pids
            .iter()
            .map(|p| {
                let v = self.target(*p);
                let spikes = match self.opts.threshold_us {
                    Some(t) => format!(", {} at or above {} us", v.spikes(), fmt_us(t)),
                    None => String::new(),
                };
                (
                    self.task_name(*p),
                    format!("{} explained{spikes}", self.waits(v)),
                )
            })
            .collect();
        if pids.is_empty() {
            pairs.push(("targets".into(), "none".into()));
        }
        Block::Pairs("Targets".into(), pairs)
    }

    /// Many targets (`--all`): how many tasks and wake-ups, and the tasks with the worst ones.
    fn targets_summary(&self, pids: &[i32]) -> Block {
        let wakeups: u64 = pids.iter().map(|p| self.target(*p).wakeups()).sum();
        let preemptions: u64 = pids.iter().map(|p| self.target(*p).preemptions()).sum();
        let worst_of = |p: &i32| self.target(*p).worst_ns();
        let mut by_worst: Vec<i32> = pids.to_vec();
        by_worst.sort_by_key(|p| std::cmp::Reverse(worst_of(p)));
        let mut pairs = vec![(
            "targets".to_string(),
            format!(
                "{} tasks, {} explained",
                pids.len(),
                self.count_waits(wakeups, preemptions)
            ),
        )];
        if let Some(t) = self.opts.threshold_us {
            let spikes: u64 = pids.iter().map(|p| self.target(*p).spikes()).sum();
            pairs.push((
                "spikes".into(),
                format!("{spikes} at or above {} us", fmt_us(t)),
            ));
        }
        for p in by_worst.iter().take(TARGETS_WORST) {
            pairs.push((
                self.task_name(*p),
                format!(
                    "worst {} us of {}",
                    fmt_us(round3(ns_to_us(worst_of(p)))),
                    self.waits(self.target(*p))
                ),
            ));
        }
        Block::Pairs("Targets".into(), pairs)
    }

    /// How many waits of a target were explained.
    fn waits(&self, t: Target<'_>) -> String {
        self.count_waits(t.wakeups(), t.preemptions())
    }

    /// How many waits: wake-ups, and preemption waits when they are explained too.
    fn count_waits(&self, wakeups: u64, preemptions: u64) -> String {
        match self.opts.preemptions {
            true => format!("{wakeups} wake-ups and {preemptions} preemption waits"),
            false => format!("{wakeups} wake-ups"),
        }
    }

    fn task_name(&self, pid: i32) -> String {
        format!("{}-{pid}", self.tasks.get(pid))
    }

    fn culprit_name(&self, c: Culprit) -> String {
        let n = |id| self.names.get(id);
        match c {
            Culprit::Task(pid) => self.task_name(pid),
            Culprit::Irq { irq, name } => format!("irq {irq} ({})", n(name)),
            Culprit::Vector {
                vector: Some(v),
                name,
            } => format!("vector {v} ({})", n(name)),
            Culprit::Vector { vector: None, name } => format!("vector ({})", n(name)),
            Culprit::Ipi { irq, name, kind } => format!("irq {irq} ({}: {})", n(name), n(kind)),
            Culprit::Callback(function) => n(function).to_string(),
            Culprit::Softirq { vec, action } => format!("softirq {vec} ({})", n(action)),
            Culprit::Noise { name, id } => format!("{}:{id}", n(name)),
        }
    }

    fn render(&self, f: &Finding, c: &Component) -> Rendered {
        let culprit = c.culprit.map(|k| self.culprit_name(k));
        let who = culprit.clone().unwrap_or_default();
        let cpu = c.cpu;
        let (waiter, wprio, phase) = waiter(f, c);
        let victim = self.task_name(waiter);
        let vprio = prio_text(wprio);
        let detail = match c.note {
            Note::InterruptDelivery => format!("the timer interrupt reaching CPU{cpu}"),
            Note::TimerSlack => "its timer's slack: the kernel may fire it any time up to the hard expiry".into(),
            Note::EventsWhileOverdue => format!(
                "CPU{cpu} traced events with interrupts enabled while the timer was overdue: the trace does not show why its interrupt came late"
            ),
            Note::SilenceUnproven => format!(
                "no events on CPU{cpu}, but the trace cannot tell why (the due time is not proven, or this CPU's interrupts or flags are not traced)"
            ),
            Note::UntracedSwitch { pid: 0 } => format!(
                "CPU{cpu} idle, then another task's event with no switch to it traced: when CPU{cpu} left idle is not in the trace"
            ),
            Note::NothingSince { pid: 0 } => format!(
                "CPU{cpu} idle, and nothing on CPU{cpu} traced after its last event while {victim} waited there: whether it stayed idle is not shown"
            ),
            Note::NothingSince { pid } => format!(
                "{} showed last on CPU{cpu}, and nothing on CPU{cpu} traced after it while {victim} waited there: whether it still held CPU{cpu} is not shown",
                self.task_name(pid)
            ),
            Note::UntracedSwitch { pid } => format!(
                "{} showed last on CPU{cpu}, then another task's event with no switch to it traced: who held CPU{cpu} in here is not in the trace",
                self.task_name(pid)
            ),
            Note::UntracedMove { to } => format!(
                "queued on CPU{cpu}, it ran on CPU{to} and no migration was traced: where it waited, and behind what, is not in the trace"
            ),
            Note::WakeInterrupt => "entry and exit of the interrupt that woke it".into(),
            Note::QueuePath => "the work's queueing, on its way to waking its pool's worker".into(),
            Note::WakeCallback => "its own timer callback (hrtimer_wakeup) waking it".into(),
            Note::WakerRun => format!(
                "{who} ran on CPU{cpu} from its switch-in until it woke {}",
                self.woken_next(f, c.start)
            ),
            Note::ReschedIpi => format!("the reschedule IPI to CPU{cpu}"),
            Note::Scheduling => format!("reaching the switch on CPU{cpu}"),
            Note::IdleExit => format!("CPU{cpu} leaving idle"),
            Note::Interrupt if c.cause == Cause::Softirq => format!("{who} ran on CPU{cpu}"),
            Note::SoftirqCallback(function) => format!(
                "{who} ran the hrtimer callback {} on CPU{cpu}",
                self.names.get(function)
            ),
            Note::Interrupt => format!("{who} ran in hard-IRQ context on CPU{cpu}"),
            Note::IrqsOffFlag => format!(
                "{who} ran with interrupts disabled (last event flagged d), so the timer interrupt came late"
            ),
            Note::IrqsOffCaller(caller) if phase == Phase::AfterWakeup => format!(
                "{who} disabled interrupts at {} while {victim} (prio {vprio}) was runnable on CPU{cpu}: it could not be preempted until they were enabled again",
                self.names.get(caller),
            ),
            Note::IrqsOffCaller(caller) => format!(
                "{who} disabled interrupts at {}, so the timer interrupt came late",
                self.names.get(caller)
            ),
            Note::IdleLate => format!(
                "CPU{cpu} was idle and the timer interrupt came late: no events (a deep idle state's exit: a C-state on x86, a PSCI state on ARM; or the hypervisor did not run the vCPU)"
            ),
            Note::SilenceWhileOthersRan { from, to } => format!(
                "no events at all on CPU{cpu} from {} to {} ({} us) while a task held it and other CPUs were traced: not the whole machine stopping; without preemptirq events, kernel code with interrupts off and a vCPU the hypervisor did not run look the same",
                fmt_ts(from),
                fmt_ts(to),
                fmt_us(ns_to_us(to - from))
            ),
            Note::NoEvents { from, to } => format!(
                "no events at all on CPU{cpu} from {} to {} ({} us) with interrupts enabled: SMI, hypervisor or firmware",
                fmt_ts(from),
                fmt_ts(to),
                fmt_us(ns_to_us(to - from))
            ),
            Note::Ran { prio, need_resched, preempt_off_at } => {
                let prio = prio.map_or("?".into(), |p| p.to_string());
                let mut d = match c.cause {
                    Cause::HigherPriority => {
                        format!("{who} (prio {prio}) kept CPU{cpu} while {victim} (prio {vprio}) was runnable")
                    }
                    Cause::FairShare => format!(
                        "{who} (prio {prio}) had CPU{cpu} while {victim} (prio {vprio}) was runnable; same rank, so the scheduler shares the CPU between them (FIFO order, RR slice or CFS fairness)"
                    ),
                    _ => format!(
                        "{who} (prio {prio}) kept CPU{cpu} until a preemption point while {victim} (prio {vprio}) was runnable"
                    ),
                };
                if need_resched {
                    d.push_str("; need-resched (N) was set");
                }
                if let Some(at) = preempt_off_at {
                    d.push_str(&format!("; preemption disabled at {}", self.names.get(at)));
                }
                d
            }
            Note::SilenceThenTask { pid, from, to, irqs_on } => format!(
                "no events on CPU{cpu} from {} to {} ({} us), then {} went on in task context{}, not in an interrupt, while the timer was overdue: CPU{cpu} was running Linux; the trace does not show why its interrupt came late",
                fmt_ts(from),
                fmt_ts(to),
                fmt_us(ns_to_us(to - from)),
                self.task_name(pid),
                if irqs_on { " with interrupts on" } else { "" }
            ),
            Note::PrioChanged { pid, from, to } => format!(
                "{} changed priority from {from} to {to} while holding CPU{cpu} (priority inheritance, or sched_setscheduler): one ranks it differently from the other against {victim} (prio {vprio}), and the trace does not show when it changed",
                self.task_name(pid),
            ),
            Note::VictimPrioChanged { pid, from, to } => format!(
                "{} held CPU{cpu} while {victim} was runnable; {victim} was woken with priority {from} and ran with {to}, which rank {} differently, and the trace does not show when its priority changed",
                self.task_name(pid),
                self.task_name(pid)
            ),
            Note::ChosenOverVictim { pid } => format!(
                "the scheduler switched CPU{cpu} to {}, which {victim} outranks, while {victim} waited there: something the events do not show chose it (RT throttling, the fair server), so it is not preemption held off",
                self.task_name(pid)
            ),
            Note::Unranked { pid } if pid < 0 => format!(
                "CPU{cpu} ran a task the trace does not name (before the CPU's first switch) while {victim} was runnable: it cannot be ranked against it"
            ),
            Note::Unranked { pid } => format!(
                "{} held CPU{cpu} while {victim} was runnable; the trace never printed its priority, so it cannot be ranked against it",
                self.task_name(pid)
            ),
            Note::NoHistory => format!("nothing is known about CPU{cpu} here (before its first event, or events were lost)"),
            Note::OutsideWindow => format!("older than CPU{cpu}'s look-back window"),
            Note::PathOverBound { idle: true } => format!(
                "CPU{cpu} stayed idle {} us after the wake-up was aimed at it: its reschedule IPI or timer came late (hypervisor not running the vCPU, deep idle state); the trace does not tell which",
                fmt_us(ns_to_us(c.ns))
            ),
            Note::PathOverBound { idle: false } => format!(
                "CPU{cpu} spent {} us on what would be the wake-up path, longer than the {} us it takes: the trace does not show what held it",
                fmt_us(ns_to_us(c.ns)),
                fmt_us(ns_to_us(KERNEL_PATH_MAX_NS))
            ),
            Note::Nmi | Note::TimerIrqLate | Note::ThreadNoise | Note::ThreadsUntraced => {
                osnoise_detail(c.note, &who, &victim, cpu)
            }
        };
        Rendered { culprit, detail }
    }

    fn finding_json(&self, f: &Finding) -> Value {
        json!({
            "task": {"comm": self.tasks.get(f.pid), "pid": f.pid, "prio": f.prio},
            "cpu": f.cpu,
            "latency_us": ns_to_us(f.latency_ns()),
            "source": f.source.as_str(),
            "due": self.due_note(f),
            "expected_ts": f.expected.map(ts_to_secs),
            "wakeup_ts": ts_to_secs(f.wakeup),
            "run_ts": ts_to_secs(f.run),
            "run_at": f.run_at.as_str(),
            "wake_end_ts": ts_to_secs(f.wake_end),
            "waker_cpu": f.waker_cpu,
            "root_cause": f.root_cause().as_str(),
            "components": f.components.iter().map(|c| {
                let mut j = self.stretch_json(f, c);
                j["us"] = json!(ns_to_us(c.ns));
                j
            }).collect::<Vec<_>>(),
            "timeline": f.timeline.iter().map(|c| self.stretch_json(f, c)).collect::<Vec<_>>(),
            "chain": (!f.chain.is_empty()).then(|| self.chain_json(f)),
            "summary": self.summary(f),
        })
    }

    fn chain_json(&self, f: &Finding) -> Value {
        let interrupt = match f.evidence {
            Some(Evidence::Interrupt { irq: Some(i), .. }) => Some(self.culprit_name(i.culprit())),
            _ => None,
        };
        (f.chain.iter().enumerate())
            .map(|(i, l)| {
                let mut link = json!({
                    "task": {"comm": self.tasks.get(l.pid), "pid": l.pid, "prio": l.prio},
                    "cpu": l.cpu,
                    "woken_ts": ts_to_secs(l.woken),
                    "run_ts": ts_to_secs(l.run),
                    "wakes_next_ts": ts_to_secs(l.wakes_next),
                    "woken_by": l.woken_by.as_str(),
                });
                if let (0, Some(name)) = (i, &interrupt) {
                    link["interrupt"] = json!(name);
                }
                link
            })
            .collect()
    }

    fn stretch_json(&self, f: &Finding, c: &Component) -> Value {
        let r = self.render(f, c);
        json!({
            "kind": c.cause.as_str(),
            "phase": c.phase.as_str(),
            "start_ts": ts_to_secs(c.start),
            "end_ts": ts_to_secs(c.end),
            "cpu": c.cpu,
            "culprit": r.culprit,
            "culprit_pid": culprit_pid(c),
            "detail": r.detail,
        })
    }

    /// What proved the due time, in words.
    fn due_note(&self, f: &Finding) -> String {
        let mut note = match f.evidence {
            None => "nothing in the trace proves when it was due; only the time from its wake-up is explained".to_string(),
            Some(Evidence::Timer { armed, softexpires, fired }) => format!(
                "it armed hrtimer_wakeup at {} for softexpires={softexpires}, and that timer fired at {}; softexpires converted to the trace clock through the now= of that CPU's latest hrtimer_expire_entry",
                fmt_ts_ns(armed),
                fmt_ts_ns(fired)
            ),
            Some(Evidence::Tracemark { us, mark }) => format!(
                "cyclictest's mark at {} says it ran {} us late",
                fmt_ts_ns(mark),
                fmt_us(us)
            ),
            Some(Evidence::Timerlat { seq, context: TimerlatContext::Irq, latency_ns, at }) => format!(
                "its timer interrupt's timerlat sample #{seq} at {} says the interrupt ran {} us after the timer was due; the trace ends before the thread's own sample (rtla stops tracing there when the IRQ latency crosses its threshold), so only the time to the interrupt is explained",
                fmt_ts_ns(at),
                fmt_us(round3(ns_to_us(latency_ns)))
            ),
            Some(Evidence::Timerlat { seq, latency_ns, at, .. }) => format!(
                "its timerlat sample #{seq} at {} says it ran {} us after its timer was due",
                fmt_ts_ns(at),
                fmt_us(round3(ns_to_us(latency_ns)))
            ),
            Some(Evidence::Interrupt { entry, irq }) => format!(
                "{} entered at {} on CPU{} woke {}",
                self.interrupt_words(irq),
                fmt_ts_ns(entry),
                f.chain.first().map_or(0, |l| l.cpu),
                f.chain.first().map_or("-".into(), |l| self.task_name(l.pid))
            ),
            Some(Evidence::Queued { at, function }) => format!(
                "the work {} was queued at {}, and that queueing woke {}",
                self.names.get(function),
                fmt_ts_ns(at),
                f.chain.first().map_or("it".into(), |l| self.task_name(l.pid))
            ),
            Some(Evidence::Preempted { by }) => format!(
                "it was switched out at {} on CPU{} while still runnable, in favour of {}: it was due to go on running from there",
                fmt_ts_ns(f.wakeup),
                f.waker_cpu,
                by.map_or("the idle task".to_string(), |p| self.task_name(p))
            ),
            Some(Evidence::Period { period }) => format!(
                "its last {INTERVALS} wake-up intervals kept a period of {} us within 5%, and it woke within 1.5 periods of the previous one; due one period after the least late of them (an estimate)",
                fmt_us(round3(ns_to_us(period)))
            ),
        };
        if let (
            Some(l),
            Some(Evidence::Timer {
                armed,
                softexpires,
                fired,
            }),
        ) = (
            f.chain.first().filter(|l| l.woken_by == WokenBy::SoftTimer),
            f.evidence,
        ) {
            note = format!(
                "it armed a soft timer at {} for softexpires={softexpires}, whose callback ran in {}, in softirq context, from {} (that thread was woken after the timer fell due); softexpires converted to the trace clock through the now= of that callback's own hrtimer_expire_entry",
                fmt_ts_ns(armed),
                self.task_name(l.pid),
                fmt_ts_ns(fired)
            );
        }
        if !f.chain.is_empty() {
            note = format!("its wake chain began when {note}; {}", self.chain_text(f));
        }
        if let Some(due) = f.unrecorded_due {
            note.push_str(&format!(
                "; it was due at {}, before the trace's recorded history, so only the time from {} on is explained",
                fmt_ts_ns(due),
                f.expected.map_or("-".into(), fmt_ts_ns)
            ));
        }
        if let Some(due) = f.ran_past_due {
            note.push_str(&format!(
                "; it was due at {} but still ran until {}, so its lateness starts there",
                fmt_ts_ns(due),
                f.expected.map_or("-".into(), fmt_ts_ns)
            ));
        }
        note
    }

    /// One sentence: how late, and the one or two components that made it so.
    fn summary(&self, f: &Finding) -> String {
        let lat = f.latency_ns();
        let mut big: Vec<&Component> = f.components.iter().collect();
        big.sort_by_key(|c| std::cmp::Reverse(c.ns));
        let parts: Vec<String> = big
            .iter()
            .take(2)
            .filter(|c| c.ns > 0)
            .map(|c| {
                format!(
                    "{} us ({}) {}: {}",
                    fmt_us(round3(ns_to_us(c.ns))),
                    percent(c.ns, lat),
                    c.cause.as_str(),
                    self.render(f, c).detail
                )
            })
            .collect();
        let from = match f.source {
            Source::Wakeup => "after its wake-up",
            Source::Preempted => "after it was switched out still runnable",
            Source::Chain => "after its wake chain began",
            Source::Queued => "after its work was queued",
            Source::Timer | Source::Tracemark | Source::Period => "late",
        };
        format!(
            "{} ran {} us {from} on CPU{}: {}",
            self.task_name(f.pid),
            fmt_us(round3(ns_to_us(lat))),
            f.cpu,
            parts.join("; ")
        )
    }

    /// The verdict, then the ladder: milestones (due, interrupt entry, wake-up, switch) with
    /// the components between them.
    fn finding_lines(&self, rank: usize, f: &Finding) -> Vec<String> {
        let lat = f.latency_ns();
        let mut lines = vec![
            format!(
                "#{rank} {} (prio {}) CPU{}: {} us [{}], root cause {}",
                self.task_name(f.pid),
                prio_text(f.prio),
                f.cpu,
                fmt_us(round3(ns_to_us(lat))),
                f.source.as_str(),
                f.root_cause().as_str()
            ),
            format!("   {}", self.summary(f)),
        ];
        let mut rows: Vec<(Timestamp, u8, String)> = Vec::new();
        if let Some(e) = f.expected {
            let how = match f.source {
                _ if f.ran_past_due.is_some() => "due before this, but it still ran until here",
                _ if f.unrecorded_due.is_some() => "due before this, where the trace begins",
                _ if matches!(f.evidence, Some(Evidence::Timerlat { .. })) => {
                    "due: its timerlat sample minus its latency"
                }
                Source::Chain => &format!("due: its wake chain began ({})", self.chain_start(f)),
                Source::Timer => "due: its hrtimer expiry in the trace clock",
                Source::Queued => "due: its work was queued",
                Source::Period => "due: estimated from its period",
                Source::Preempted => &format!(
                    "switched out still runnable on CPU{} (preempted)",
                    f.waker_cpu
                ),
                _ => "due: cyclictest's mark minus its latency",
            };
            rows.push((e, 0, milestone(e, how)));
        }
        if let Some(irq) = f
            .wake_irq_entry
            .filter(|&t| f.expected.map_or(true, |e| t >= e))
        {
            rows.push((
                irq,
                1,
                milestone(irq, &format!("interrupt entry on CPU{}", f.waker_cpu)),
            ));
        }
        rows.extend(self.link_milestones(f));
        // A preemption wait has no wake-up: its wait began at the switch-out.
        rows.extend((f.source != Source::Preempted).then(|| {
            (
                f.wakeup,
                2,
                milestone(
                    f.wakeup,
                    &match f.run_at {
                        RunAt::Timerlat | RunAt::TimerlatIrq => {
                            format!("timer interrupt's sample on CPU{}", f.waker_cpu)
                        }
                        _ => match f.chain.last() {
                            Some(l) => {
                                format!("woken by {} on CPU{}", self.task_name(l.pid), f.waker_cpu)
                            }
                            None => format!("wake-up on CPU{}", f.waker_cpu),
                        },
                    },
                ),
            )
        }));
        rows.push((
            f.run,
            4,
            milestone(
                f.run,
                &match f.run_at {
                    RunAt::Wake(WakeEnd::Switch) => format!("switched in on CPU{}", f.cpu),
                    RunAt::Wake(WakeEnd::Inferred) => format!(
                        "its first event on CPU{} (the switch to it was not traced)",
                        f.cpu
                    ),
                    RunAt::Wake(WakeEnd::Resumed) => {
                        format!(
                            "back in task context on CPU{} (woken before it slept)",
                            f.cpu
                        )
                    }
                    RunAt::Mark if matches!(f.evidence, Some(Evidence::Timerlat { .. })) => {
                        format!("its thread sample on CPU{}", f.cpu)
                    }
                    RunAt::Mark => format!(
                        "cyclictest's mark on CPU{} (its figure counts time after the switch)",
                        f.cpu
                    ),
                    RunAt::Timerlat => format!("its thread sample on CPU{}", f.cpu),
                    RunAt::TimerlatIrq => {
                        format!("the trace ends before its thread sample on CPU{}", f.cpu)
                    }
                },
            ),
        ));
        for c in &f.components {
            let r = self.render(f, c);
            let what = r.culprit.unwrap_or(r.detail);
            let row = format!(
                "      {:>10} us {:>6}  {:<15} {what}",
                fmt_us(round3(ns_to_us(c.ns))),
                percent(c.ns, lat),
                c.cause.as_str()
            );
            // After the milestone it follows: before-phase parts before the wake-up.
            let at = match c.phase {
                Phase::BeforeWakeup => c.start.min(f.wakeup),
                Phase::AfterWakeup => c.start.max(f.wakeup),
            };
            rows.push((at, 3, row));
        }
        rows.sort_by_key(|r| (r.0, r.1));
        lines.extend(rows.into_iter().map(|r| r.2));
        lines
    }

    /// The milestones of a chain's links: each task woken, switched in, and waking the next.
    fn link_milestones(&self, f: &Finding) -> Vec<(Timestamp, u8, String)> {
        let mut rows = Vec::new();
        for l in &f.chain {
            let who = self.task_name(l.pid);
            let by = match l.woken_by {
                WokenBy::Timer => "woken by its timer",
                WokenBy::Interrupt => "woken by the interrupt",
                WokenBy::SoftTimer => "woken after the timer fell due",
                WokenBy::Queue => "woken by its work's queueing",
                WokenBy::Task => "woken",
            };
            rows.push((l.woken, 2, milestone(l.woken, &format!("{who} {by}"))));
            let ran = format!("{who} (prio {}) switched in on CPU{}", l.prio, l.cpu);
            rows.push((l.run, 2, milestone(l.run, &ran)));
        }
        rows
    }

    /// The chain's start in a few words.
    fn chain_start(&self, f: &Finding) -> String {
        let first = f
            .chain
            .first()
            .map_or("-".into(), |l| self.task_name(l.pid));
        match (f.chain.first().map(|l| l.woken_by), f.evidence) {
            (Some(WokenBy::SoftTimer), _) => format!("its own timer's expiry, run by {first}"),
            (_, Some(Evidence::Timer { .. })) => format!("{first}'s hrtimer expiry"),
            (_, Some(Evidence::Queued { function, .. })) => format!(
                "the queueing of the work {} waking {first}",
                self.names.get(function)
            ),
            (_, Some(Evidence::Interrupt { irq, .. })) => {
                format!("{} waking {first}", self.interrupt_words(irq))
            }
            _ => format!("the hard interrupt that woke {first}"),
        }
    }

    /// A chain's interrupt in words: `the hard interrupt irq 25 (virtio0-requests)`.
    fn interrupt_words(&self, irq: Option<Irq>) -> String {
        match irq {
            Some(i) => format!("the hard interrupt {}", self.culprit_name(i.culprit())),
            None => "a hard interrupt".into(),
        }
    }

    /// The chain's links in words, first to last.
    fn chain_text(&self, f: &Finding) -> String {
        let links: Vec<String> = (f.chain.iter())
            .map(|l| {
                format!(
                    "{} woken by {} at {}, switched in on CPU{} at {}, woke the next at {}",
                    self.task_name(l.pid),
                    l.woken_by.as_str(),
                    fmt_ts_ns(l.woken),
                    l.cpu,
                    fmt_ts_ns(l.run),
                    fmt_ts_ns(l.wakes_next)
                )
            })
            .collect();
        format!("{} link(s): {}", links.len(), links.join("; "))
    }

    /// The task a chain link woke at the end of the run starting at `run`.
    fn woken_next(&self, f: &Finding, run: Timestamp) -> String {
        let at = f.chain.iter().position(|l| l.run == run);
        let next = at.and_then(|i| f.chain.get(i + 1)).map_or(f.pid, |l| l.pid);
        self.task_name(next)
    }

    fn aggregate_table(&self, aggregate: &[((Cause, Option<Culprit>), Spikes)]) -> Table {
        let title = match self.opts.threshold_us {
            Some(t) => format!(
                "Aggregate over every {} at least {} us late",
                match self.opts.preemptions {
                    true => "wake-up and preemption wait",
                    false => "wake-up",
                },
                fmt_us(t)
            ),
            None => "Aggregate over the findings above (--threshold US for every spike)".into(),
        };
        let mut t = Table::new(
            &title,
            &[
                ("kind", Align::Left),
                ("culprit", Align::Left),
                ("spikes", Align::Right),
                ("total_us", Align::Right),
                ("max_us", Align::Right),
            ],
        );
        for ((cause, culprit), s) in aggregate {
            t.rows.push(vec![
                cause.as_str().into(),
                culprit.map_or("-".into(), |c| self.culprit_name(c)),
                s.spikes.to_string(),
                fmt_us(round3(ns_to_us(s.total_ns))),
                fmt_us(round3(ns_to_us(s.max_ns))),
            ]);
        }
        t
    }
}

/// Whose wait a stretch is, with that task's priority, and the phase of that wait it lies in:
/// before a chain finding's wake-up, its links wait in turn, each woken in its own right.
fn waiter(f: &Finding, c: &Component) -> (i32, Option<i32>, Phase) {
    if c.start >= f.wakeup {
        return (f.pid, f.prio, c.phase);
    }
    match f.chain.iter().find(|l| c.start < l.run) {
        Some(l) if c.start >= l.woken => (l.pid, Some(l.prio), Phase::AfterWakeup),
        Some(l) => (l.pid, Some(l.prio), Phase::BeforeWakeup),
        None => (f.pid, f.prio, c.phase),
    }
}

/// Up to this many targets are listed one per line; more are summed up.
const TARGETS_LISTED: usize = 8;
/// How many of the worst tasks a summary names.
const TARGETS_WORST: usize = 5;

/// The pid of a component's culprit when it is a task.
/// An aggregate, most time first (ties by kind, so the order does not depend on hashing).
/// Largest total first; ties by kind, then culprit (names in the order the trace showed
/// them), so that the order never depends on a hash map's.
fn sorted(aggregate: &Aggregate) -> Vec<((Cause, Option<Culprit>), Spikes)> {
    let mut v: Vec<_> = aggregate.iter().map(|(k, s)| (*k, *s)).collect();
    v.sort_by(|a, b| b.1.total_ns.cmp(&a.1.total_ns).then(a.0.cmp(&b.0)));
    v
}

fn culprit_pid(c: &Component) -> Option<i32> {
    match c.culprit {
        Some(Culprit::Task(pid)) => Some(pid),
        _ => None,
    }
}

/// The detail of a timerlat activation's stretch that osnoise's events decided.
fn osnoise_detail(note: Note, who: &str, victim: &str, cpu: u32) -> String {
    match note {
        Note::Nmi => format!("an NMI on CPU{cpu} (osnoise nmi_noise)"),
        Note::TimerIrqLate => format!(
            "the timer was due and its interrupt had not run on CPU{cpu}; osnoise shows no other interrupt running, and its events cannot show why (interrupts off, or time outside Linux)"
        ),
        Note::ThreadNoise => format!(
            "{who} ran on CPU{cpu} after {victim}'s timer fired and until it was switched out (osnoise thread_noise); the trace prints no priorities, so whether it outranked {victim} or kept the CPU with preemption off is not shown"
        ),
        _ => format!(
            "osnoise's thread_noise events are not in the trace: which task held CPU{cpu} here is not shown"
        ),
    }
}

/// A priority as printed, or `?` when the trace never printed it.
fn prio_text(prio: Option<i32>) -> String {
    prio.map_or("?".into(), |p| p.to_string())
}

fn milestone(ts: Timestamp, what: &str) -> String {
    format!("   {:>17}  {what}", fmt_ts_ns(ts))
}

/// Seconds with nanoseconds when there are any: calibrated due times are not whole µs.
fn fmt_ts_ns(ts: Timestamp) -> String {
    if ts % 1000 == 0 {
        fmt_ts(ts)
    } else {
        fmt_ts_nanos(ts)
    }
}

fn percent(part: u64, whole: u64) -> String {
    if whole == 0 {
        return "-".into();
    }
    format!("{:.1}%", part as f64 * 100.0 / whole as f64)
}
