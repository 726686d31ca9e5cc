//! The referee's own walk over the raw events (rules 2 to 4).
//!
//! It shares nothing with the engine: it keeps, per CPU, the task it believes current, the
//! interrupt frames open, the `preemptirq` irqs-off state and the last task-context event; per
//! task its last printed priority, its last armed `hrtimer_wakeup` timer, the starts of its last
//! ten wake-ups and its wake-up in flight (the pairing below); and per finding only what its
//! checks need. The findings' stretches are queued per CPU, sorted by start, and each is
//! checked against the events of its CPU that fall inside it.
//!
//! # Wake-up pairing (the referee's definition)
//! - A wake-up of task P **starts** at `sched_waking` of P — or at `sched_wakeup` /
//!   `sched_wakeup_new` of P while the trace has shown no `sched_waking` at all; the first
//!   `sched_waking` switches definitions and drops every wake-up then pending — provided P is not
//!   running and has no wake-up pending. P is running from a `sched_switch` to it (or an event on
//!   a CPU showing P as that CPU's task) until a `sched_switch` away from it.
//! - Exception, **in place**: a waking emitted in interrupt context (flags known, hardirq or
//!   softirq set: a timer softirq on top of P is the same case as its hard-IRQ timer) on the CPU
//!   where P itself is the current task (`ev.pid == P`) starts a wake-up although P is running.
//! - A wake-up **ends** at the first `sched_switch` with `next_pid == P` (`run_at: switch`), or
//!   at P's first event on a CPU whose current task (as tracked here) was another, known task:
//!   an untraced switch-in (`run_at: inferred`, the engine's name for it). An in-place wake-up
//!   ends at P's first task-context event on that CPU (`resumed`); its `run_ts` may lie
//!   anywhere from the first interrupt exit on that CPU after the waking (when no exit is
//!   traced: the last interrupt-context event there) up to that event.
//! - **Raced**: a `sched_waking` of P while P runs (not in place) raced P's switch-out; P's
//!   next switch away with a sleeping `prev_state` starts its wake-up there (a `sched_wakeup`
//!   of P while it still runs, or a switch away as runnable, cancels it).
//! - Lost events (`lost()`) drop every pending wake-up and forget what the lost CPU(s) ran.
//! - A CPU's first event (of the trace, or after lost events) only says who runs there; a
//!   wake-up of that task still pending ended unrecorded, and is dropped.

use super::model::{fmt_ts, near, Finding, Stretch, Violation, TOL};
use super::rules::{
    irq_culprit, irqs_off_by_construction, period_due, relation_holds, IrqCulprit, RHYTHM_WAKEUPS,
};
use rtsleuth_trace::event::{Event, EventKind};
use rtsleuth_trace::read::{Decode, EventSink};
use std::collections::{HashMap, VecDeque};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ty {
    Hard,
    Soft,
}

#[derive(Debug, Clone, PartialEq)]
enum What {
    Irq(u32),
    Vector(String, Option<u32>),
    Callback(u64, String),
    Softirq(u32),
}

#[derive(Debug, Clone)]
struct Frame {
    id: u64,
    ty: Ty,
    what: What,
}

impl Frame {
    fn matches(&self, c: &IrqCulprit) -> bool {
        match (c, &self.what) {
            (IrqCulprit::Any, _) => true,
            (IrqCulprit::Irq(n), What::Irq(i)) => n == i,
            (IrqCulprit::Vector { vector, name }, What::Vector(n, v)) => {
                n == name && (vector.is_none() || v.is_none() || vector == v)
            }
            (IrqCulprit::Softirq(n), What::Softirq(v)) => n == v,
            (IrqCulprit::Callback(f), What::Callback(_, g)) => f == g,
            _ => false,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum How {
    Switch,
    Untraced,
    Resumed,
}

#[derive(Debug, Clone, Copy)]
pub struct End {
    pub ts: u64,
    /// Where the task ran.
    pub cpu: u32,
    pub how: How,
    /// For `resumed`: the earliest acceptable run (the first interrupt exit after the waking).
    pub lo: u64,
}

#[derive(Debug)]
struct Pending {
    start: u64,
    cpu: u32,
    prio: i32,
    in_place: bool,
    first_exit: Option<u64>,
    /// The latest interrupt-context event on its CPU since an in-place waking.
    last_irq: u64,
    findings: Vec<usize>,
}

#[derive(Debug, Default)]
struct Task {
    on_cpu: Option<u32>,
    prio: Option<i32>,
    armed: Option<u64>,
    /// Its `expires - softexpires`: how late the kernel may fire it by design.
    armed_slack: u64,
    starts: VecDeque<u64>,
    pending: Option<Pending>,
    /// A `sched_waking` came while it ran (not in place): its switch-out asleep starts the
    /// wake-up it raced.
    racing: bool,
    /// Findings whose wake-up ended, waiting for the task's marks until its next wake-up.
    after: Vec<usize>,
}

/// At a wake-up: the `hrtimer_wakeup` timer the task armed last, and the waking CPU's last
/// `hrtimer_expire_entry` with whether it was still open.
#[derive(Debug, Clone, Copy)]
struct TimerProof {
    armed: Option<u64>,
    slack: u64,
    expire: Option<(u64, bool)>,
}

/// What the walk learnt about one finding.
#[derive(Debug, Default)]
struct FState {
    start_seen: bool,
    rejected: Option<String>,
    dropped: Option<String>,
    end: Option<End>,
    victim_prio: Option<i32>,
    /// What the timer rule needs, taken at the wake-up.
    timer: Option<TimerProof>,
    period: Option<Result<(u64, u64), String>>,
    mark_x: Option<f64>,
    marker_at_run: bool,
    /// The victim ran inside its own window (first time seen).
    ran: bool,
}

#[derive(Debug, Clone)]
enum Check {
    BlackHole,
    Task { x: i32 },
    IrqsOff { x: i32 },
    Irq { ty: Ty, culprit: IrqCulprit },
}

#[derive(Debug)]
struct Job {
    fi: usize,
    si: usize,
    cpu: u32,
    start: u64,
    end: u64,
    check: Check,
    failed: bool,
    prio_before: Option<i32>,
    /// The culprit's prio at its switch-out at or after the end, and when.
    prio_after: Option<(i32, u64)>,
    /// Priorities priority inheritance gave the culprit inside the stretch.
    prio_inside: Vec<i32>,
    /// Priority inheritance changed the culprit's prio after the start: its switch-out
    /// no longer tells the prio it had here.
    prio_reset: bool,
    candidates: Vec<u64>,
    /// The frame closed here (and why); another matching one may open at the same time.
    gap: Option<(u64, String)>,
    evidence: bool,
    since: u64,
    /// A black hole began while a task (not idle) held its CPU.
    busy: Option<i32>,
    /// The CPU's first event at or after the end was judged (black holes).
    end_judged: bool,
}

#[derive(Debug, Default)]
struct Cpu {
    current: Option<i32>,
    since: u64,
    stack: Vec<Frame>,
    irq_disabled_by: Option<i32>,
    /// (ts, pid, irqs_off) of the last task-context event with known flags.
    last_task_ctx: Option<(u64, i32, bool)>,
    /// The same for the last event outside hard-IRQ/NMI context (task or softirq context:
    /// irqs off in either holds off the timer interrupt; on PREEMPT_RT softirqs run in
    /// threads). Either one flagged `d` is evidence.
    last_not_hard: Option<(u64, i32, bool)>,
    last_expire: Option<(u64, bool)>,
    last_ts: Option<u64>,
    loss_from: Option<u64>,
    losses: Vec<(u64, u64)>,
    in_place: Option<i32>,
    queue: Vec<usize>,
    next: usize,
    active: Vec<usize>,
    awaiting: Vec<usize>,
}

/// The longest `kernel_path` stretch (rule E1 of issue 23).
const KERNEL_PATH_MAX_NS: u64 = 1_000_000;

/// The second pass over a trace: feed it the events, then [`Referee::finish`].
pub struct Referee<'f> {
    findings: &'f [Finding],
    fs: Vec<FState>,
    jobs: Vec<Job>,
    cpus: Vec<Cpu>,
    tasks: HashMap<i32, Task>,
    by_pid: HashMap<i32, Vec<(u64, usize)>>,
    windows: HashMap<i32, (Vec<usize>, usize, Vec<usize>)>,
    waking_seen: bool,
    frame_ids: u64,
    /// Every event's time, per CPU: whether another CPU was traced inside a black hole.
    event_ts: Vec<Vec<u64>>,
    /// The trace holds `preemptirq` irq_disable / irq_enable events.
    irq_toggles: bool,
    pub violations: Vec<Violation>,
    pub events: u64,
}

fn is_task_ctx(ev: &Event<'_>) -> bool {
    ev.flags.known && !(ev.flags.hardirq || ev.flags.softirq || ev.flags.nmi)
}

/// The threshold figure X of cyclictest's `hit latency threshold (X > Y)`.
fn threshold_x(text: &str) -> Option<f64> {
    const KEY: &str = "hit latency threshold (";
    let rest = &text[text.find(KEY)? + KEY.len()..];
    rest.split_once(" > ")?.0.trim().parse().ok()
}

impl<'f> Referee<'f> {
    pub fn new(findings: &'f [Finding]) -> Referee<'f> {
        let mut r = Referee {
            findings,
            fs: findings.iter().map(|_| FState::default()).collect(),
            jobs: Vec::new(),
            cpus: Vec::new(),
            tasks: HashMap::new(),
            by_pid: HashMap::new(),
            windows: HashMap::new(),
            waking_seen: false,
            frame_ids: 0,
            event_ts: Vec::new(),
            irq_toggles: false,
            violations: Vec::new(),
            events: 0,
        };
        for (fi, f) in findings.iter().enumerate() {
            r.by_pid.entry(f.pid).or_default().push((f.wakeup, fi));
            r.windows.entry(f.pid).or_default().0.push(fi);
            for (si, s) in f.stretches.iter().enumerate() {
                if let Some(check) = r.check_for(fi, si, s) {
                    r.jobs.push(Job {
                        fi,
                        si,
                        cpu: s.cpu,
                        start: s.start,
                        end: s.end,
                        check,
                        failed: false,
                        prio_before: None,
                        prio_after: None,
                        prio_inside: Vec::new(),
                        prio_reset: false,
                        candidates: Vec::new(),
                        gap: None,
                        evidence: false,
                        since: 0,
                        busy: None,
                        end_judged: false,
                    });
                }
            }
        }
        for v in r.by_pid.values_mut() {
            v.sort_unstable();
        }
        for (list, _, _) in r.windows.values_mut() {
            list.sort_by_key(|&fi| findings[fi].window_start());
        }
        for (j, job) in r.jobs.iter().enumerate() {
            let c = job.cpu as usize;
            if r.cpus.len() <= c {
                r.cpus.resize_with(c + 1, Cpu::default);
            }
            r.cpus[c].queue.push(j);
        }
        let jobs = &r.jobs;
        for cpu in &mut r.cpus {
            cpu.queue.sort_by_key(|&j| jobs[j].start);
        }
        r
    }

    fn check_for(&mut self, fi: usize, si: usize, s: &Stretch) -> Option<Check> {
        let culprit_task = |me: &mut Self| match s.culprit_pid {
            Some(x) => Some(x),
            None => {
                me.violation(
                    "culprit",
                    fi,
                    Some(si),
                    "no culprit_pid for a task kind".into(),
                );
                None
            }
        };
        Some(match s.kind.as_str() {
            "black_hole" => Check::BlackHole,
            "higher_priority" | "fair_share" | "preempt_off" => Check::Task {
                x: culprit_task(self)?,
            },
            "irqs_off" => Check::IrqsOff {
                x: culprit_task(self)?,
            },
            "hardirq" => Check::Irq {
                ty: Ty::Hard,
                culprit: irq_culprit(s.culprit.as_deref()),
            },
            "softirq" => Check::Irq {
                ty: Ty::Soft,
                culprit: irq_culprit(s.culprit.as_deref()),
            },
            _ => return None,
        })
    }

    fn violation(&mut self, rule: &'static str, fi: usize, si: Option<usize>, why: String) {
        self.violations.push(Violation {
            rule,
            finding: fi,
            stretch: si,
            why,
        });
    }

    fn job_fail(&mut self, j: usize, rule: &'static str, why: String) {
        let job = &mut self.jobs[j];
        if job.failed {
            return;
        }
        job.failed = true;
        let (fi, si) = (job.fi, job.si);
        self.violation(rule, fi, Some(si), why);
    }

    fn cpu(&mut self, c: u32) -> &mut Cpu {
        let c = c as usize;
        if self.cpus.len() <= c {
            self.cpus.resize_with(c + 1, Cpu::default);
        }
        &mut self.cpus[c]
    }

    fn task(&mut self, pid: i32) -> &mut Task {
        self.tasks.entry(pid).or_default()
    }

    /// Activates the stretches of `c` that start before `ts`: their state at the start is the
    /// CPU's state now.
    fn activate(&mut self, c: u32, ts: Option<u64>) {
        loop {
            let cpu = &self.cpus[c as usize];
            let Some(&j) = cpu.queue.get(cpu.next) else {
                return;
            };
            if ts.is_some_and(|ts| self.jobs[j].start + TOL >= ts) {
                return;
            }
            self.cpus[c as usize].next += 1;
            self.cpus[c as usize].active.push(j);
            let (current, since) = (self.cpus[c as usize].current, self.cpus[c as usize].since);
            let fi = self.jobs[j].fi;
            let start = self.jobs[j].start;
            match self.jobs[j].check.clone() {
                Check::BlackHole => {
                    self.jobs[j].busy = current.filter(|&pid| pid != 0);
                    let source = self.findings[fi].source.as_str();
                    if current == Some(0) && !matches!(source, "timer" | "tracemark") {
                        self.job_fail(
                            j,
                            "black_hole",
                            format!(
                                "CPU{c} was idle at the start and the due time is only `{source}`"
                            ),
                        );
                    }
                }
                Check::Task { x } | Check::IrqsOff { x } => {
                    self.jobs[j].prio_before = self.tasks.get(&x).and_then(|t| t.prio);
                    self.jobs[j].since = since;
                    if current != Some(x) {
                        self.job_fail(
                            j,
                            "task",
                            format!(
                                "at {} CPU{c}'s current task is {}, not the culprit {x}",
                                fmt_ts(start),
                                who(current)
                            ),
                        );
                    }
                    if matches!(self.jobs[j].check, Check::IrqsOff { .. }) {
                        // Whoever opened it: `__schedule` opens it in the task switched out, and
                        // the task switched in closes it.
                        self.jobs[j].evidence = self.cpus[c as usize].irq_disabled_by.is_some();
                    }
                }
                Check::Irq { ty, culprit } => {
                    let cands: Vec<u64> = self.cpus[c as usize]
                        .stack
                        .iter()
                        .filter(|f| f.ty == ty && f.matches(&culprit))
                        .map(|f| f.id)
                        .collect();
                    if cands.is_empty() {
                        let stack = format!("{:?}", self.cpus[c as usize].stack);
                        self.job_fail(
                            j,
                            "irq",
                            format!("no open {ty:?} interrupt frame matching the culprit at the start; open frames: {stack}"),
                        );
                    }
                    self.jobs[j].candidates = cands;
                }
            }
        }
    }

    /// Closes the stretches of `c` that ended before `ts` (all of them when `ts` is `None`).
    fn finalize(&mut self, c: u32, ts: Option<u64>) {
        let mut i = 0;
        while i < self.cpus[c as usize].active.len() {
            let j = self.cpus[c as usize].active[i];
            if ts.is_some_and(|ts| self.jobs[j].end + TOL >= ts) {
                i += 1;
                continue;
            }
            self.cpus[c as usize].active.swap_remove(i);
            let (s, e) = (self.jobs[j].start, self.jobs[j].end);
            if let Some(&(from, to)) = self.cpus[c as usize]
                .losses
                .iter()
                .find(|&&(from, to)| from < e && to > s)
            {
                self.job_fail(
                    j,
                    "lost",
                    format!(
                        "events were lost on CPU{c} between {} and {}",
                        fmt_ts(from),
                        fmt_ts(to)
                    ),
                );
            }
            if let Some((g, why)) = self.jobs[j].gap.take() {
                if g + TOL < e {
                    self.job_fail(j, "irq", why);
                }
            }
            match self.jobs[j].check {
                Check::IrqsOff { x } => {
                    let since = self.jobs[j].since;
                    let cpu = &self.cpus[c as usize];
                    let flagged = [cpu.last_task_ctx, cpu.last_not_hard]
                        .into_iter()
                        .flatten()
                        .any(|(t, pid, off)| pid == x && off && t >= since);
                    if !self.jobs[j].evidence && !flagged {
                        let last = (cpu.last_task_ctx, cpu.last_not_hard);
                        self.job_fail(
                            j,
                            "irqs_off",
                            format!(
                                "no evidence: no open irq_disable on the CPU at the start, and neither the last task-context event nor the last one outside hard-IRQ context up to the end ({last:?}) is {x}'s with `d`"
                            ),
                        );
                    }
                }
                Check::Task { x } if self.cpus[c as usize].current == Some(x) => {
                    self.cpus[c as usize].awaiting.push(j);
                }
                _ => {}
            }
        }
    }

    /// A black hole's CPU must come back with an interrupt arriving, unless the hole ends at
    /// the wake-up: `ev` is the CPU's first event at or after the end of the holes it closes.
    fn judge_black_hole_end(&mut self, ev: &Event<'_>) {
        let arriving = ev.flags.hardirq
            || matches!(ev.name, "irq_handler_entry" | "hrtimer_expire_entry")
            || matches!(ev.kind, EventKind::IrqVectorEntry(_))
            || (ev.name == "irq_disable"
                && ev
                    .fields()
                    .get("caller")
                    .is_some_and(|c| c.starts_with("irqentry_enter")));
        let c = ev.cpu as usize;
        for k in 0..self.cpus[c].active.len() {
            let j = self.cpus[c].active[k];
            let job = &mut self.jobs[j];
            if !matches!(job.check, Check::BlackHole) || job.end_judged || ev.ts + TOL < job.end {
                continue;
            }
            job.end_judged = true;
            let at_wakeup = self.findings[job.fi].wakeup.abs_diff(job.end) <= TOL;
            if !arriving && !at_wakeup {
                self.job_fail(
                    j,
                    "black_hole",
                    format!(
                        "CPU{c} came back at {} with {}-{} {} (flags {:?}), not an interrupt arriving",
                        fmt_ts(ev.ts),
                        ev.comm,
                        ev.pid,
                        ev.name,
                        ev.flags
                    ),
                );
            }
        }
    }

    /// Checks an event of CPU `c` against the active stretches before it is applied.
    fn check_before(&mut self, ev: &Event<'_>) {
        let c = ev.cpu as usize;
        for k in 0..self.cpus[c].active.len() {
            let j = self.cpus[c].active[k];
            let job = &self.jobs[j];
            if job.failed || ev.ts + TOL >= job.end {
                continue;
            }
            match job.check {
                Check::BlackHole => self.job_fail(
                    j,
                    "black_hole",
                    format!(
                        "event on CPU{c} at {}: {}-{} {}",
                        fmt_ts(ev.ts),
                        ev.comm,
                        ev.pid,
                        ev.name
                    ),
                ),
                Check::Task { x } | Check::IrqsOff { x } if ev.pid != x => self.job_fail(
                    j,
                    "task",
                    format!(
                        "event of {}-{} on CPU{c} at {} ({}), the culprit is {x}",
                        ev.comm,
                        ev.pid,
                        fmt_ts(ev.ts),
                        ev.name
                    ),
                ),
                _ => {}
            }
        }
    }

    /// Checks the state after an event of CPU `c` was applied.
    fn check_after(&mut self, ev: &Event<'_>) {
        let c = ev.cpu as usize;
        for k in 0..self.cpus[c].active.len() {
            let j = self.cpus[c].active[k];
            if self.jobs[j].failed || ev.ts + TOL >= self.jobs[j].end {
                continue;
            }
            match self.jobs[j].check {
                Check::Task { x } | Check::IrqsOff { x } if self.cpus[c].current != Some(x) => {
                    let now = self.cpus[c].current;
                    self.job_fail(
                        j,
                        "task",
                        format!(
                            "at {} CPU{c}'s task became {} ({})",
                            fmt_ts(ev.ts),
                            who(now),
                            ev.name
                        ),
                    )
                }
                Check::Irq { ty, ref culprit } => {
                    let culprit = culprit.clone();
                    let stack = &self.cpus[c].stack;
                    let job = &mut self.jobs[j];
                    job.candidates
                        .retain(|id| stack.iter().any(|f| f.id == *id));
                    if !job.candidates.is_empty() {
                        continue;
                    }
                    // A matching frame opened at the time the last one closed (back-to-back
                    // softirqs, two callbacks of one interrupt) carries the stretch on.
                    let fresh: Vec<u64> = stack
                        .iter()
                        .filter(|f| f.ty == ty && f.matches(&culprit))
                        .map(|f| f.id)
                        .collect();
                    match job.gap.take() {
                        None if fresh.is_empty() => {
                            job.gap = Some((
                                ev.ts,
                                format!(
                                    "the interrupt frame closed at {} ({} of {}-{})",
                                    fmt_ts(ev.ts),
                                    ev.name,
                                    ev.comm,
                                    ev.pid
                                ),
                            ))
                        }
                        Some((g, _)) if !fresh.is_empty() && ev.ts <= g + TOL => {
                            job.candidates = fresh
                        }
                        None => job.candidates = fresh,
                        Some((g, why)) if ev.ts > g + TOL => self.job_fail(j, "irq", why),
                        Some(gap) => job.gap = Some(gap),
                    }
                }
                _ => {}
            }
        }
    }

    /// Another task's switch-in on `c`: the stretches waiting for their culprit's switch-out
    /// learn its priority there, if it is this switch.
    fn resolve_awaiting(&mut self, c: u32, ts: u64, prev: Option<(i32, i32)>) {
        let waiting = std::mem::take(&mut self.cpus[c as usize].awaiting);
        for j in waiting {
            if let (Check::Task { x }, Some((pid, prio))) = (&self.jobs[j].check, prev) {
                if *x == pid {
                    self.jobs[j].prio_after = Some((prio, ts));
                }
            }
        }
    }

    fn set_current(&mut self, c: u32, pid: i32, ts: u64) {
        let old = self.cpus[c as usize].current;
        if let Some(y) = old.filter(|&y| y != 0) {
            let t = self.task(y);
            if t.on_cpu == Some(c) {
                t.on_cpu = None;
            }
        }
        self.cpus[c as usize].current = Some(pid);
        self.cpus[c as usize].since = ts;
        if pid != 0 {
            let prev_cpu = self.task(pid).on_cpu.replace(c);
            if let Some(c2) = prev_cpu.filter(|&c2| c2 != c) {
                if self.cpus[c2 as usize].current == Some(pid) {
                    self.cpus[c2 as usize].current = None;
                }
            }
        }
    }

    fn end_wakeup(&mut self, pid: i32, end: End, prio: i32) {
        let Some(p) = self.task(pid).pending.take() else {
            return;
        };
        if p.in_place && self.cpus[p.cpu as usize].in_place == Some(pid) {
            self.cpus[p.cpu as usize].in_place = None;
        }
        for &fi in &p.findings {
            self.fs[fi].end = Some(end);
            self.fs[fi].victim_prio = Some(prio);
        }
        self.task(pid).after.extend(p.findings);
    }

    fn start_wakeup(&mut self, ev: &Event<'_>, pid: i32, prio: i32) {
        if pid == 0 {
            return;
        }
        let c = ev.cpu;
        let in_place = ev.flags.known && (ev.flags.hardirq || ev.flags.softirq) && ev.pid == pid;
        let fis: Vec<usize> = self
            .by_pid
            .get(&pid)
            .map(|v| {
                let from = v.partition_point(|&(w, _)| w + TOL < ev.ts);
                v[from..]
                    .iter()
                    .take_while(|(w, _)| near(*w, ev.ts))
                    .map(|&(_, fi)| fi)
                    .collect()
            })
            .unwrap_or_default();
        let t = self.task(pid);
        let reason = match (&t.pending, t.on_cpu) {
            (Some(p), _) => Some(format!(
                "{} of {pid}: a wake-up started at {} is still pending",
                ev.name,
                fmt_ts(p.start)
            )),
            (None, Some(on)) if !in_place => {
                t.racing = ev.name == "sched_waking";
                Some(format!(
                    "{} of {pid}: the task is running on CPU{on} (not in place: {})",
                    ev.name,
                    if ev.pid == pid {
                        "not in interrupt context"
                    } else {
                        "woken from another task"
                    }
                ))
            }
            _ => None,
        };
        if let Some(r) = reason {
            for fi in fis {
                if !self.fs[fi].start_seen {
                    self.fs[fi].rejected = Some(r.clone());
                }
            }
            return;
        }
        t.starts.push_back(ev.ts);
        if t.starts.len() > RHYTHM_WAKEUPS {
            t.starts.pop_front();
        }
        t.after.clear();
        let (armed, slack) = (t.armed, t.armed_slack);
        let starts: Vec<u64> = t.starts.iter().copied().collect();
        let in_place = in_place && t.on_cpu == Some(c);
        t.pending = Some(Pending {
            start: ev.ts,
            cpu: c,
            prio,
            in_place,
            first_exit: None,
            last_irq: ev.ts,
            findings: fis.clone(),
        });
        if in_place {
            self.cpus[c as usize].in_place = Some(pid);
        }
        let expire = self.cpus[c as usize].last_expire;
        for fi in fis {
            let st = &mut self.fs[fi];
            st.start_seen = true;
            st.timer = Some(TimerProof {
                armed,
                slack,
                expire,
            });
            if self.findings[fi].source == "period" {
                st.period = Some(period_due(&starts));
            }
        }
    }

    fn push_frame(&mut self, c: u32, ty: Ty, what: What) {
        self.frame_ids += 1;
        let id = self.frame_ids;
        self.cpus[c as usize].stack.push(Frame { id, ty, what });
    }

    fn pop_frame(&mut self, c: u32, ts: u64, is: impl Fn(&What) -> bool) {
        let cpu = &mut self.cpus[c as usize];
        if let Some(at) = cpu.stack.iter().rposition(|f| is(&f.what)) {
            cpu.stack.truncate(at);
        }
        if let Some(pid) = cpu.in_place {
            if let Some(p) = self.tasks.get_mut(&pid).and_then(|t| t.pending.as_mut()) {
                p.first_exit.get_or_insert(ts);
            }
        }
    }

    /// Applies one event to the walk's state (the pairing and the CPU's state).
    /// `sched_pi_setprio`: the task's prio from now on, whatever CPU it runs on. Stretches of
    /// other CPUs that began before it are activated first, so that they see the prio it
    /// replaces (lab armv7-rt/black_hole: init boosted on CPU0 as its stretch on CPU1 ended).
    fn pi_setprio(&mut self, ev: &Event<'_>) {
        let f = ev.fields();
        let (Some(pid), Some(prio)) = (f.get_i64("pid"), f.get_i64("newprio")) else {
            return;
        };
        for c in 0..self.cpus.len() as u32 {
            self.activate(c, Some(ev.ts));
        }
        let (pid, prio, ts) = (pid as i32, prio as i32, ev.ts);
        self.task(pid).prio = Some(prio);
        for job in &mut self.jobs {
            if !matches!(job.check, Check::Task { x } if x == pid)
                || ts + TOL < job.start
                || job.prio_after.is_some()
            {
                continue;
            }
            job.prio_reset = true;
            if job.start + TOL < ts && ts + TOL < job.end {
                job.prio_inside.push(prio);
            }
        }
    }

    fn apply(&mut self, ev: &Event<'_>) {
        let c = ev.cpu;
        let ts = ev.ts;
        let p = ev.pid;
        if ev.name == "sched_pi_setprio" {
            self.pi_setprio(ev);
        }
        // The event's task is its CPU's current task.
        let current = self.cpus[c as usize].current;
        if current != Some(p) {
            self.resolve_awaiting(c, 0, None);
            self.set_current(c, p, ts);
            if current.is_none() && p != 0 {
                // Already running where this CPU's history begins: its switch-in was never
                // recorded, so a wake-up of it still pending cannot be measured.
                if let Some(t) = self.tasks.get_mut(&p) {
                    t.pending = None;
                }
            } else if current.is_some() && p != 0 {
                if let Some(prio) = self
                    .tasks
                    .get(&p)
                    .and_then(|t| t.pending.as_ref())
                    .map(|w| w.prio)
                {
                    self.end_wakeup(
                        p,
                        End {
                            ts,
                            cpu: c,
                            how: How::Untraced,
                            lo: ts,
                        },
                        prio,
                    );
                }
            }
        }
        if ev.flags.known && !is_task_ctx(ev) {
            if let Some(ip) = self.cpus[c as usize].in_place {
                if let Some(w) = self.tasks.get_mut(&ip).and_then(|t| t.pending.as_mut()) {
                    w.last_irq = ts;
                }
            }
        }
        let evidence = !irqs_off_by_construction(ev.name, ev.flags.hardirq, ev.flags.softirq);
        if ev.flags.known && !ev.flags.hardirq && !ev.flags.nmi && evidence {
            self.cpus[c as usize].last_not_hard = Some((ts, p, ev.flags.irqs_off));
        }
        if is_task_ctx(ev) && evidence {
            self.cpus[c as usize].last_task_ctx = Some((ts, p, ev.flags.irqs_off));
        }
        if is_task_ctx(ev) {
            self.cpus[c as usize].stack.clear();
            let resumes = self
                .tasks
                .get(&p)
                .and_then(|t| t.pending.as_ref())
                .filter(|w| w.in_place && w.cpu == c)
                .map(|w| (w.prio, w.first_exit.unwrap_or(w.last_irq)));
            if let Some((prio, lo)) = resumes {
                self.end_wakeup(
                    p,
                    End {
                        ts,
                        cpu: c,
                        how: How::Resumed,
                        lo,
                    },
                    prio,
                );
            }
        }
        match ev.kind {
            EventKind::SchedSwitch {
                prev_pid,
                prev_prio,
                prev_state,
                next_pid,
                next_prio,
                ..
            } => {
                // A prio the trace does not give (Perfetto compact_sched) stays unknown.
                if prev_prio.is_some() {
                    self.task(prev_pid).prio = prev_prio;
                }
                if next_prio.is_some() {
                    self.task(next_pid).prio = next_prio;
                }
                self.resolve_awaiting(c, ts, prev_prio.map(|p| (prev_pid, p)));
                for k in 0..self.cpus[c as usize].active.len() {
                    let j = self.cpus[c as usize].active[k];
                    if matches!(self.jobs[j].check, Check::Task { x } if x == prev_pid) {
                        if let Some(p) = prev_prio {
                            self.jobs[j].prio_after.get_or_insert((p, ts));
                        }
                    }
                }
                if prev_pid != 0 && self.task(prev_pid).on_cpu == Some(c) {
                    self.task(prev_pid).on_cpu = None;
                }
                if self.cpus[c as usize].current == Some(prev_pid) {
                    self.cpus[c as usize].current = None;
                }
                self.set_current(c, next_pid, ts);
                let raced = std::mem::take(&mut self.task(prev_pid).racing);
                if let (true, Some(prio)) = (raced && prev_pid != 0, prev_prio) {
                    if !prev_state.is_runnable() {
                        self.start_wakeup(ev, prev_pid, prio);
                    }
                }
                let waking_prio = self.tasks.get(&next_pid).and_then(|t| t.pending.as_ref());
                let next_prio = next_prio.or(waking_prio.map(|w| w.prio));
                if let (true, Some(next_prio)) = (next_pid != 0, next_prio) {
                    self.end_wakeup(
                        next_pid,
                        End {
                            ts,
                            cpu: c,
                            how: How::Switch,
                            lo: ts,
                        },
                        next_prio,
                    );
                }
            }
            EventKind::SchedWaking { pid, prio, .. } => {
                self.task(pid).prio = Some(prio);
                if !self.waking_seen {
                    self.waking_seen = true;
                    self.drop_pending(format!(
                        "dropped at the trace's first sched_waking ({})",
                        fmt_ts(ts)
                    ));
                }
                self.start_wakeup(ev, pid, prio);
            }
            EventKind::SchedWakeup { pid, prio, .. }
            | EventKind::SchedWakeupNew { pid, prio, .. } => {
                self.task(pid).prio = Some(prio);
                if !self.waking_seen {
                    self.start_wakeup(ev, pid, prio);
                } else if self.task(pid).on_cpu.is_some() {
                    // It never stopped running: the waking it raced found it still queued.
                    self.task(pid).racing = false;
                }
            }
            EventKind::IrqHandlerEntry { irq, .. } => self.push_frame(c, Ty::Hard, What::Irq(irq)),
            EventKind::IrqVectorEntry(v) => {
                self.push_frame(c, Ty::Hard, What::Vector(v.name.to_string(), v.vector))
            }
            EventKind::HrtimerExpireEntry {
                hrtimer, function, ..
            } => {
                self.cpus[c as usize].last_expire = Some((hrtimer, true));
                let ty = if ev.flags.known {
                    if ev.flags.hardirq {
                        Some(Ty::Hard)
                    } else if ev.flags.softirq {
                        Some(Ty::Soft)
                    } else {
                        None
                    }
                } else {
                    // Callbacks run only in interrupt context: inside the traced interrupt,
                    // else the hard interrupt whose entry was not traced (perf script of
                    // sched/irq/timer events has neither flags nor irq_vectors).
                    Some(
                        self.cpus[c as usize]
                            .stack
                            .last()
                            .map_or(Ty::Hard, |f| f.ty),
                    )
                };
                if let Some(ty) = ty {
                    self.push_frame(c, ty, What::Callback(hrtimer, function.to_string()));
                }
            }
            EventKind::SoftirqEntry { vec, .. } => self.push_frame(c, Ty::Soft, What::Softirq(vec)),
            EventKind::IrqHandlerExit { irq, .. } => {
                self.pop_frame(c, ts, |w| matches!(w, What::Irq(i) if *i == irq))
            }
            EventKind::IrqVectorExit(v) => {
                self.pop_frame(c, ts, |w| matches!(w, What::Vector(n, _) if n == v.name))
            }
            EventKind::HrtimerExpireExit { hrtimer } => {
                if let Some((h, open)) = &mut self.cpus[c as usize].last_expire {
                    if *h == hrtimer {
                        *open = false;
                    }
                }
                self.pop_frame(
                    c,
                    ts,
                    |w| matches!(w, What::Callback(h, _) if *h == hrtimer),
                )
            }
            EventKind::SoftirqExit { vec, .. } => {
                self.pop_frame(c, ts, |w| matches!(w, What::Softirq(v) if *v == vec))
            }
            EventKind::IrqDisable { .. } => self.cpus[c as usize].irq_disabled_by = Some(p),
            EventKind::IrqEnable { .. } => self.cpus[c as usize].irq_disabled_by = None,
            EventKind::HrtimerStart {
                hrtimer,
                function,
                softexpires,
                expires,
            } if function == "hrtimer_wakeup" && p != 0 => {
                let t = self.task(p);
                t.armed = Some(hrtimer);
                t.armed_slack = expires.saturating_sub(softexpires);
            }
            EventKind::Marker { text, .. } => {
                let x = threshold_x(text);
                let after = self
                    .tasks
                    .get(&p)
                    .map(|t| t.after.clone())
                    .unwrap_or_default();
                for fi in after {
                    let st = &mut self.fs[fi];
                    if st.mark_x.is_none() {
                        st.mark_x = x;
                    }
                    if near(ts, self.findings[fi].run) {
                        st.marker_at_run = true;
                    }
                }
            }
            _ => {}
        }
    }

    fn drop_pending(&mut self, why: String) {
        let mut dropped = Vec::new();
        for t in self.tasks.values_mut() {
            if let Some(p) = t.pending.take() {
                dropped.extend(p.findings);
            }
        }
        for fi in dropped {
            self.fs[fi].dropped = Some(why.clone());
        }
        for cpu in &mut self.cpus {
            cpu.in_place = None;
        }
    }

    /// Rule 4, the victim never runs inside its own window.
    fn check_victim(&mut self, ev: &Event<'_>) {
        let mut pids = [None, None, None];
        if !ev.flags.known || is_task_ctx(ev) {
            pids[0] = Some(ev.pid);
        }
        if let EventKind::SchedSwitch {
            prev_pid, next_pid, ..
        } = ev.kind
        {
            pids[1] = Some(prev_pid);
            pids[2] = Some(next_pid);
        }
        for pid in pids.into_iter().flatten() {
            let Some((list, next, active)) = self.windows.get_mut(&pid) else {
                continue;
            };
            while let Some(&fi) = list.get(*next) {
                if self.findings[fi].window_start() + TOL >= ev.ts {
                    break;
                }
                active.push(fi);
                *next += 1;
            }
            let findings = self.findings;
            let fs = &self.fs;
            let end_of = |fi: usize| -> u64 {
                let f = &findings[fi];
                match (f.run_at.as_deref(), fs[fi].end) {
                    (Some("mark"), Some(e)) => e.ts.min(f.run),
                    _ => f.run,
                }
            };
            active.retain(|&fi| end_of(fi) > ev.ts + TOL);
            let hits: Vec<usize> = active.clone();
            for fi in hits {
                if self.fs[fi].ran {
                    continue;
                }
                self.fs[fi].ran = true;
                let why = format!(
                    "the victim runs inside its window: {}-{} on CPU{} at {} ({}{})",
                    ev.comm,
                    ev.pid,
                    ev.cpu,
                    fmt_ts(ev.ts),
                    ev.name,
                    if ev.pid == pid { "" } else { " naming it" }
                );
                self.violation("victim_runs", fi, None, why);
            }
        }
    }

    /// Ends the walk and judges what needs the whole trace.
    pub fn finish(mut self) -> Vec<Violation> {
        for c in 0..self.cpus.len() as u32 {
            if let Some(from) = self.cpus[c as usize].loss_from.take() {
                self.cpus[c as usize].losses.push((from, u64::MAX));
            }
            self.activate(c, None);
            self.finalize(c, None);
        }
        for fi in 0..self.findings.len() {
            self.judge_wakeup(fi);
            self.judge_due(fi);
            self.judge_kernel_path(fi);
        }
        for j in 0..self.jobs.len() {
            self.judge_priority(j);
        }
        if !self.irq_toggles {
            for j in 0..self.jobs.len() {
                self.judge_busy_silence(j);
            }
        }
        self.violations
    }

    /// A busy CPU's silence is outside Linux only if the whole machine fell silent: without
    /// irq_disable events, interrupts off in kernel code look the same on one CPU.
    fn judge_busy_silence(&mut self, j: usize) {
        let job = &self.jobs[j];
        let (Check::BlackHole, Some(pid), false) = (&job.check, job.busy, job.failed) else {
            return;
        };
        // Its middle half: the CPUs of a stopped machine resume a little apart.
        let q = (job.end - job.start) / 4;
        let (from, to) = (job.start + q, job.end - q);
        let inside = self.event_ts.iter().enumerate().find_map(|(o, ts)| {
            let i = ts.partition_point(|&t| t <= from);
            (o != job.cpu as usize && ts.get(i).is_some_and(|&t| t < to)).then(|| (o, ts[i]))
        });
        if let Some((o, t)) = inside {
            let (fi, si, c) = (job.fi, job.si, job.cpu);
            self.violation(
                "black_hole",
                fi,
                Some(si),
                format!(
                    "CPU{c} held task {pid} and CPU{o} traced an event at {} in the middle half of the silence, in a trace without irq_disable/irq_enable",
                    fmt_ts(t)
                ),
            );
        }
    }

    fn judge_wakeup(&mut self, fi: usize) {
        let f = &self.findings[fi];
        let st = &self.fs[fi];
        let why = if !st.start_seen {
            Some(match &st.rejected {
                Some(r) => format!("no wake-up starts at wakeup_ts in the referee's pairing: {r}"),
                None => {
                    "no wake-up of the task starts at wakeup_ts in the referee's pairing".into()
                }
            })
        } else if let Some(d) = &st.dropped {
            Some(format!("the wake-up was {d}"))
        } else if let Some(end) = st.end {
            let run_at = f.run_at.as_deref();
            let ok = match (run_at, end.how) {
                (Some("switch"), How::Switch) | (Some("inferred"), How::Untraced) => {
                    near(end.ts, f.run)
                }
                (Some("resumed"), How::Resumed) => end.lo <= f.run + TOL && f.run <= end.ts + TOL,
                (Some("mark"), _) => end.ts <= f.run + TOL && st.marker_at_run,
                (None, How::Resumed) => end.lo <= f.run + TOL && f.run <= end.ts + TOL,
                (None, _) => near(end.ts, f.run) || (end.ts <= f.run && st.marker_at_run),
                _ => false,
            };
            if !ok {
                Some(format!(
                    "the wake-up ends at {} on CPU{} ({:?}{}), run_ts is {} (run_at {:?}{})",
                    fmt_ts(end.ts),
                    end.cpu,
                    end.how,
                    if end.how == How::Resumed {
                        format!(", run accepted from {}", fmt_ts(end.lo))
                    } else {
                        String::new()
                    },
                    fmt_ts(f.run),
                    run_at,
                    if run_at == Some("mark") && !st.marker_at_run {
                        "; no marker of the task at run_ts"
                    } else {
                        ""
                    }
                ))
            } else if end.cpu != f.cpu {
                Some(format!(
                    "the task ran on CPU{}, the finding says cpu {}",
                    end.cpu, f.cpu
                ))
            } else {
                None
            }
        } else {
            Some("the wake-up never ends in the referee's pairing".into())
        };
        if let Some(why) = why {
            self.violation("wakeup", fi, None, why);
        }
    }

    /// `kernel_path` is the wake-up's own path: at most [`KERNEL_PATH_MAX_NS`], except the
    /// slack of the task's own timer before the wake-up.
    fn judge_kernel_path(&mut self, fi: usize) {
        let f = &self.findings[fi];
        let slack_end = match (f.source.as_str(), f.expected, self.fs[fi].timer) {
            ("timer", Some(due), Some(t)) => due + t.slack,
            _ => 0,
        };
        let bad: Vec<(usize, String)> = (f.stretches.iter().enumerate())
            .filter(|(_, s)| s.kind == "kernel_path" && s.end - s.start > KERNEL_PATH_MAX_NS + TOL)
            .filter(|(_, s)| !(s.phase == "before_wakeup" && s.end <= slack_end + TOL))
            .map(|(si, s)| {
                let why = format!(
                    "kernel_path of {} ns, over the 1 ms bound and not the timer's slack (up to {})",
                    s.end - s.start,
                    fmt_ts(slack_end)
                );
                (si, why)
            })
            .collect();
        for (si, why) in bad {
            self.violation("kernel_path", fi, Some(si), why);
        }
    }

    fn judge_due(&mut self, fi: usize) {
        let f = &self.findings[fi];
        let st = &self.fs[fi];
        if !st.start_seen {
            return; // the wake-up rule already failed: nothing to hang the due time on
        }
        let why = match f.source.as_str() {
            "wakeup" => f
                .expected
                .map(|e| format!("source wakeup with expected_ts {}", fmt_ts(e))),
            "timer" => match (f.expected, st.timer) {
                (None, _) => Some("source timer without expected_ts".into()),
                (Some(e), _) if e > f.wakeup + TOL => Some("expected_ts after wakeup_ts".into()),
                (
                    _,
                    Some(TimerProof {
                        armed: Some(armed),
                        expire: Some((fired, true)),
                        ..
                    }),
                ) if armed == fired => None,
                (_, t) => Some(format!(
                    "no proof of the task's own timer (its last hrtimer_wakeup armed, the waking CPU's last hrtimer_expire_entry and whether still open): {t:?}"
                )),
            },
            "tracemark" => match (f.expected, st.mark_x) {
                (None, _) => Some("source tracemark without expected_ts".into()),
                (_, None) => Some(
                    "no `hit latency threshold` mark of the task after run_ts and before its next wake-up".into(),
                ),
                (Some(e), Some(x)) => {
                    let visible_us = (f.run.saturating_sub(f.wakeup)) as f64 / 1e3;
                    let fits = (f.latency_us - x).abs() <= 1.0;
                    let clamped = near(e, f.wakeup) && x <= visible_us + 1.0;
                    (!(fits || clamped)).then(|| {
                        format!(
                            "the mark says {x} us, the finding {} us (visible wait {visible_us} us)",
                            f.latency_us
                        )
                    })
                }
            },
            "period" => match (f.expected, &st.period) {
                (None, _) => Some("source period without expected_ts".into()),
                (_, None) => Some("no rhythm computed (internal)".into()),
                (_, Some(Err(e))) => Some(format!("the rhythm rule does not hold: {e}")),
                (Some(e), Some(Ok((m, due)))) => {
                    if e.abs_diff(*due) > TOL {
                        Some(format!(
                            "expected_ts {} but the rhythm rule gives {} (period {m} ns)",
                            fmt_ts(e),
                            fmt_ts(*due)
                        ))
                    } else if e > f.wakeup + TOL || f.wakeup.saturating_sub(e) > m + TOL {
                        Some(format!("expected_ts not within one period ({m} ns) before the wake-up"))
                    } else {
                        None
                    }
                }
            },
            other => Some(format!("unknown source {other}")),
        };
        if let Some(why) = why {
            self.violation("due", fi, None, why);
        }
    }

    fn judge_priority(&mut self, j: usize) {
        let job = &self.jobs[j];
        let Check::Task { x } = job.check else {
            return;
        };
        let kind = self.findings[job.fi].stretches[job.si].kind.as_str();
        let Some(p) = self.fs[job.fi].victim_prio else {
            return; // the wake-up rule reports it
        };
        let run = self.findings[job.fi].run;
        let after = (job
            .prio_after
            .filter(|&(_, t)| t <= run + TOL && !job.prio_reset))
        .map(|(xp, _)| xp);
        let mut known: Vec<i32> = [job.prio_before, after].into_iter().flatten().collect();
        known.extend(&job.prio_inside);
        if known.is_empty() {
            // Its only printed priority is a later switch-out's.
            known.extend(job.prio_after.map(|(xp, _)| xp));
        }
        let ok = !known.is_empty() && known.iter().all(|&xp| relation_holds(kind, xp, p));
        if !ok {
            let why = format!(
                "{kind}: culprit {x} has prio {:?} before the stretch / {:?} inside / {:?} at its switch-out, the victim prio {p}",
                job.prio_before, job.prio_inside, job.prio_after
            );
            let (fi, si) = (job.fi, job.si);
            self.violation("priority", fi, Some(si), why);
        }
    }
}

fn who(pid: Option<i32>) -> String {
    pid.map_or("unknown".into(), |p| p.to_string())
}

impl EventSink for Referee<'_> {
    fn event(&mut self, ev: &Event<'_>) {
        self.events += 1;
        let c = ev.cpu;
        if self.event_ts.len() <= c as usize {
            self.event_ts.resize_with(c as usize + 1, Vec::new);
        }
        self.event_ts[c as usize].push(ev.ts);
        self.irq_toggles |= matches!(ev.name, "irq_disable" | "irq_enable");
        self.cpu(c);
        if let Some(from) = self.cpus[c as usize].loss_from.take() {
            self.cpus[c as usize].losses.push((from, ev.ts));
        }
        // Stretches that began (and perhaps ended) before this event see the CPU as it was.
        self.activate(c, Some(ev.ts));
        self.judge_black_hole_end(ev);
        self.finalize(c, Some(ev.ts));
        self.check_before(ev);
        self.apply(ev);
        self.check_after(ev);
        self.check_victim(ev);
        self.cpus[c as usize].last_ts = Some(ev.ts);
    }

    fn decode(&self) -> Decode {
        Decode::Everything
    }

    fn lost(&mut self, cpu: Option<u32>, _count: Option<u64>) {
        self.drop_pending("dropped by lost events".into());
        let cpus: Vec<u32> = match cpu {
            Some(c) => {
                self.cpu(c);
                vec![c]
            }
            None => (0..self.cpus.len() as u32).collect(),
        };
        for c in cpus {
            self.resolve_awaiting(c, 0, None);
            let cpu = &mut self.cpus[c as usize];
            cpu.loss_from = Some(cpu.last_ts.unwrap_or(0));
            let was = cpu.current.take();
            cpu.stack.clear();
            cpu.irq_disabled_by = None;
            cpu.last_task_ctx = None;
            cpu.last_not_hard = None;
            cpu.last_expire = None;
            if let Some(t) = was.and_then(|p| self.tasks.get_mut(&p)) {
                if t.on_cpu == Some(c) {
                    t.on_cpu = None;
                }
            }
        }
    }
}
