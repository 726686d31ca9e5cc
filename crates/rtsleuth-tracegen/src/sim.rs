//! The scheduler simulation: produces a time-ordered stream of abstract
//! events ([`Item`]) that the formatters render and the oracle measures.
//!
//! Invariants kept so every rendering is an internally consistent trace:
//! - each CPU runs exactly one task (or idle) at a time, and every event's
//!   line names the task currently running on its CPU;
//! - `sched_switch` always has `prev` = the current task of that CPU;
//! - every event sits on its own whole microsecond (no two events share a
//!   timestamp), so ordering is unambiguous in every dialect;
//! - all CPUs start idle and all tasks asleep (nothing is "running" before
//!   the trace shows it), and the trace ends with every CPU back to idle.

use std::cmp::Ordering;
use std::collections::{BinaryHeap, HashSet, VecDeque};

use crate::rng::SplitMix64;
use crate::scenario::{Policy, Scenario, TaskSpec};

/// Task index of the idle task (`swapper/N`, pid 0).
pub(crate) const IDLE: u32 = u32::MAX;

/// Semantic flags of an event; rendered as 4, 5 or 7 columns by the variant.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Flags {
    pub irqs_off: bool,
    pub need_resched: bool,
    pub hard: bool,
    pub soft: bool,
    pub preempt: u8,
    pub migrate: u8,
    pub lazy: bool,
}

impl Flags {
    fn task(preempt: u8) -> Flags {
        Flags {
            irqs_off: true,
            preempt,
            ..Flags::default()
        }
    }
    fn hardirq(preempt: u8) -> Flags {
        Flags {
            irqs_off: true,
            hard: true,
            preempt,
            ..Flags::default()
        }
    }
    fn softirq() -> Flags {
        Flags {
            soft: true,
            preempt: 1,
            ..Flags::default()
        }
    }
    fn plain() -> Flags {
        Flags::default()
    }
}

/// How a task left the CPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PrevState {
    /// TASK_INTERRUPTIBLE.
    S,
    /// TASK_UNINTERRUPTIBLE.
    D,
    /// TASK_IDLE (kworkers): report index 0x80.
    I,
    /// Preempted while runnable: `R+` (TASK_REPORT_MAX bit set).
    Preempted,
    /// The idle task switching out: plain `R`.
    Idle,
}

/// One trace event.
#[derive(Clone, Debug)]
pub(crate) enum Kind {
    Switch {
        prev: u32,
        state: PrevState,
        next: u32,
    },
    Waking {
        task: u32,
        target: u32,
    },
    Wakeup {
        task: u32,
        target: u32,
    },
    WakeupNew {
        task: u32,
        target: u32,
    },
    Migrate {
        task: u32,
        orig: u32,
        dest: u32,
    },
    IrqEntry {
        irq: u32,
        name: &'static str,
    },
    IrqExit {
        irq: u32,
    },
    SoftirqRaise {
        vec: u32,
    },
    SoftirqEntry {
        vec: u32,
    },
    SoftirqExit {
        vec: u32,
    },
    LocalTimerEntry,
    LocalTimerExit,
    HrtimerStart {
        timer: u64,
        func: &'static str,
        expires_ns: u64,
        soft_ns: u64,
    },
    HrtimerCancel {
        timer: u64,
    },
    HrtimerExpireEntry {
        timer: u64,
        func: &'static str,
        now_ns: u64,
    },
    HrtimerExpireExit {
        timer: u64,
    },
    WqQueue {
        work: u64,
        func: &'static str,
        wq: &'static str,
        cpu: u32,
    },
    WqActivate {
        work: u64,
    },
    WqStart {
        work: u64,
        func: &'static str,
    },
    WqEnd {
        work: u64,
        func: &'static str,
    },
    Mark {
        text: String,
    },
}

impl Kind {
    /// The kernel event name (trace-cmd renames `tracing_mark_write` to `print`).
    pub(crate) fn name(&self) -> &'static str {
        match self {
            Kind::Switch { .. } => "sched_switch",
            Kind::Waking { .. } => "sched_waking",
            Kind::Wakeup { .. } => "sched_wakeup",
            Kind::WakeupNew { .. } => "sched_wakeup_new",
            Kind::Migrate { .. } => "sched_migrate_task",
            Kind::IrqEntry { .. } => "irq_handler_entry",
            Kind::IrqExit { .. } => "irq_handler_exit",
            Kind::SoftirqRaise { .. } => "softirq_raise",
            Kind::SoftirqEntry { .. } => "softirq_entry",
            Kind::SoftirqExit { .. } => "softirq_exit",
            Kind::LocalTimerEntry => "local_timer_entry",
            Kind::LocalTimerExit => "local_timer_exit",
            Kind::HrtimerStart { .. } => "hrtimer_start",
            Kind::HrtimerCancel { .. } => "hrtimer_cancel",
            Kind::HrtimerExpireEntry { .. } => "hrtimer_expire_entry",
            Kind::HrtimerExpireExit { .. } => "hrtimer_expire_exit",
            Kind::WqQueue { .. } => "workqueue_queue_work",
            Kind::WqActivate { .. } => "workqueue_activate_work",
            Kind::WqStart { .. } => "workqueue_execute_start",
            Kind::WqEnd { .. } => "workqueue_execute_end",
            Kind::Mark { .. } => "tracing_mark_write",
        }
    }
}

/// An event as it will be printed on one line.
#[derive(Clone, Debug)]
pub(crate) struct Ev {
    pub ts_us: u64,
    pub cpu: u32,
    /// Task index running on `cpu` (the line's comm-pid), or [`IDLE`].
    pub cur: u32,
    /// Print `<...>` instead of the comm on this line.
    pub unknown_comm: bool,
    pub flags: Flags,
    pub kind: Kind,
}

/// One output line's worth of content.
#[derive(Clone, Debug)]
pub(crate) enum Item {
    Event(Ev),
    /// Lost events on `cpu`, printed right before that CPU's next event.
    Lost {
        cpu: u32,
        n: u64,
    },
    /// `##### CPU N buffer started ####`.
    BufferStarted {
        cpu: u32,
    },
    /// `[...]`.
    Elided,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum St {
    Unborn,
    Sleeping,
    Pending,
    Running(u32),
    Preempted(u32),
}

#[derive(Debug)]
enum Cond {
    Always,
    /// Only if the task is currently running (anywhere).
    IfRunning(u32),
    /// Only if the task is current on the action's CPU.
    IfCurrent(u32),
    /// Only if the task's wake-up is pending.
    IfPending(u32),
    /// Only if the CPU is not idle.
    CurNotIdle,
}

#[derive(Debug)]
enum Action {
    Spawn,
    Emit {
        cpu: u32,
        kind: Kind,
        flags: Flags,
        cond: Cond,
    },
    SwitchIn {
        task: u32,
        cpu: u32,
    },
    SwitchOut {
        task: u32,
        gen: u32,
    },
}

#[derive(Debug)]
struct Scheduled {
    t: u64,
    action: Action,
}

impl PartialEq for Scheduled {
    fn eq(&self, o: &Self) -> bool {
        self.t == o.t
    }
}
impl Eq for Scheduled {}
impl PartialOrd for Scheduled {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Scheduled {
    fn cmp(&self, o: &Self) -> Ordering {
        // Min-heap on time; times are unique (see `reserve`).
        o.t.cmp(&self.t)
    }
}

struct TaskSt {
    st: St,
    gen: u32,
    last_cpu: u32,
    /// Planned end of the current on-CPU stretch (to resume after preemption).
    run_left: u64,
    run_start: u64,
}

const IRQS: [(u32, &str); 4] = [
    (24, "ahci[0000:00:17.0]"),
    (127, "nvme0q2"),
    (130, "i915"),
    (16, "eth0"),
];
const SOFTIRQS: [u32; 4] = [1, 3, 7, 9];
const WQ_FUNCS: [(&str, &str); 3] = [
    ("vmstat_update", "mm_percpu_wq"),
    ("flush_to_ldisc", "events_unbound"),
    ("blk_mq_run_work_fn", "kblockd"),
];

/// The simulation state machine; call [`Sim::next_item`] until `None`.
pub(crate) struct Sim {
    rng: SplitMix64,
    pub tasks: Vec<TaskSpec>,
    st: Vec<TaskSt>,
    cpus: u32,
    sim_cpus: u32,
    cur: Vec<u32>,
    runq: Vec<Vec<u32>>,
    heap: BinaryHeap<Scheduled>,
    reserved: HashSet<u64>,
    now: u64,
    out: VecDeque<Item>,
    wakeups_left: u64,
    with_waking: bool,
    noise: bool,
    lost: bool,
    buffer_started: bool,
    elided: bool,
    running_wakeups: bool,
    repeated_wakeups: bool,
    pending_lost: Vec<u64>,
    seen_cpu: Vec<bool>,
    any_event: bool,
    spawn_gap: u64,
    timer_base: u64,
    /// (pid, intended latency µs) of every measured cycle, for self-checks.
    pub intended: Vec<(u32, u64)>,
}

impl Sim {
    pub(crate) fn new(sc: &Scenario) -> Sim {
        let tasks = sc.task_specs();
        let mut rng = SplitMix64::new(sc.seed);
        let cpus = sc.cpus;
        let sim_cpus = if sc.empty_cpu && cpus > 1 {
            cpus - 1
        } else {
            cpus
        };
        {
            let mut seen = HashSet::new();
            for t in &tasks {
                assert!(t.pid != 0, "pid 0 is reserved for the idle task");
                assert!(seen.insert(t.pid), "duplicate pid {}", t.pid);
            }
        }
        let start = sc.start_us.unwrap_or_else(|| {
            let bases = [
                130_000_000u64,
                5_891_000_000,
                106_439_000_000,
                214_168_000_000,
            ];
            bases[(sc.seed % 4) as usize] + rng.below(900_000_000)
        });
        let st = tasks
            .iter()
            .map(|t| TaskSt {
                st: if t.forked { St::Unborn } else { St::Sleeping },
                gen: 0,
                last_cpu: t.pinned.unwrap_or(0).min(sim_cpus - 1),
                run_left: 0,
                run_start: 0,
            })
            .collect();
        let mut sim = Sim {
            rng,
            tasks,
            st,
            cpus,
            sim_cpus,
            cur: vec![IDLE; cpus as usize],
            runq: vec![Vec::new(); cpus as usize],
            heap: BinaryHeap::new(),
            reserved: HashSet::new(),
            now: start - 1,
            out: VecDeque::new(),
            wakeups_left: sc.wakeups,
            with_waking: sc.with_waking,
            noise: sc.noise,
            lost: sc.lost_events,
            buffer_started: sc.buffer_started,
            elided: sc.elided,
            running_wakeups: sc.running_wakeups,
            repeated_wakeups: sc.repeated_wakeups,
            pending_lost: vec![0; cpus as usize],
            seen_cpu: vec![false; cpus as usize],
            any_event: false,
            spawn_gap: (60 / u64::from(sim_cpus)).max(4),
            timer_base: 0xffff_9c8a_3fc2_1e00,
            intended: Vec::new(),
        };
        if sim.wakeups_left > 0 {
            sim.schedule(start, Action::Spawn);
        }
        sim
    }

    pub(crate) fn cpus(&self) -> u32 {
        self.cpus
    }

    /// Reserves the first free microsecond >= `t` (and > now).
    fn reserve(&mut self, t: u64) -> u64 {
        let mut t = t.max(self.now + 1);
        while self.reserved.contains(&t) {
            t += 1;
        }
        self.reserved.insert(t);
        t
    }

    fn schedule(&mut self, t: u64, action: Action) -> u64 {
        let t = self.reserve(t);
        self.heap.push(Scheduled { t, action });
        t
    }

    fn emit_at(&mut self, t: u64, cpu: u32, kind: Kind, flags: Flags, cond: Cond) -> u64 {
        self.schedule(
            t,
            Action::Emit {
                cpu,
                kind,
                flags,
                cond,
            },
        )
    }

    /// The next line's content, or `None` once the simulation has drained.
    pub(crate) fn next_item(&mut self) -> Option<Item> {
        loop {
            if let Some(it) = self.out.pop_front() {
                return Some(it);
            }
            let s = self.heap.pop()?;
            self.reserved.remove(&s.t);
            self.now = s.t;
            self.run(s.action);
        }
    }

    fn push_event(&mut self, cpu: u32, flags: Flags, kind: Kind) {
        let c = cpu as usize;
        if self.elided && self.any_event && self.rng.chance(3) {
            self.out.push_back(Item::Elided);
        }
        if self.buffer_started && !self.seen_cpu[c] && self.any_event {
            self.out.push_back(Item::BufferStarted { cpu });
        }
        self.seen_cpu[c] = true;
        if self.pending_lost[c] > 0 {
            self.out.push_back(Item::Lost {
                cpu,
                n: self.pending_lost[c],
            });
            self.pending_lost[c] = 0;
        }
        let cur = self.cur[c];
        let unknown_comm =
            cur != IDLE && self.tasks[cur as usize].flaky_comm && self.rng.chance(80);
        let mut flags = flags;
        if cur != IDLE && !flags.hard && self.rng.chance(50) {
            flags.migrate = 1;
        }
        self.any_event = true;
        self.out.push_back(Item::Event(Ev {
            ts_us: self.now,
            cpu,
            cur,
            unknown_comm,
            flags,
            kind,
        }));
    }

    fn run(&mut self, action: Action) {
        match action {
            Action::Spawn => self.spawn(),
            Action::Emit {
                cpu,
                kind,
                flags,
                cond,
            } => {
                let ok = match cond {
                    Cond::Always => true,
                    Cond::IfRunning(t) => matches!(self.st[t as usize].st, St::Running(_)),
                    Cond::IfCurrent(t) => self.cur[cpu as usize] == t,
                    Cond::IfPending(t) => self.st[t as usize].st == St::Pending,
                    Cond::CurNotIdle => self.cur[cpu as usize] != IDLE,
                };
                if ok {
                    self.push_event(cpu, flags, kind);
                }
            }
            Action::SwitchIn { task, cpu } => self.switch_in(task, cpu),
            Action::SwitchOut { task, gen } => self.switch_out(task, gen),
        }
    }

    fn runtime_for(&mut self, task: u32) -> u64 {
        match self.tasks[task as usize].policy {
            Policy::Fifo(_) => self.rng.range(3, 40),
            Policy::Other(_) => {
                if self.rng.chance(50) {
                    self.rng.range(1000, 8000)
                } else {
                    self.rng.range(8, 500)
                }
            }
        }
    }

    fn start_running(&mut self, task: u32, cpu: u32, run: u64) {
        let ts = &mut self.st[task as usize];
        ts.st = St::Running(cpu);
        ts.gen += 1;
        ts.last_cpu = cpu;
        ts.run_start = self.now;
        let gen = ts.gen;
        self.cur[cpu as usize] = task;
        let end = self.schedule(self.now + run.max(1), Action::SwitchOut { task, gen });
        self.st[task as usize].run_left = end - self.now;
        // A cyclictest-like RT task arms its next period before sleeping.
        if matches!(self.tasks[task as usize].policy, Policy::Fifo(_))
            && end > self.now + 2
            && self.rng.chance(700)
        {
            let at = self.rng.range(self.now + 1, end);
            let timer = self.timer_base + 0x40 * u64::from(task);
            let exp = end * 1000 + self.rng.range(50, 1000) * 1000;
            self.emit_at(
                at,
                cpu,
                Kind::HrtimerStart {
                    timer,
                    func: "hrtimer_wakeup",
                    expires_ns: exp,
                    soft_ns: exp,
                },
                Flags::task(1),
                Cond::IfCurrent(task),
            );
        } else if self.noise && end > self.now + 2 && self.rng.chance(150) {
            let at = self.rng.range(self.now + 1, end);
            let pid = self.tasks[task as usize].pid;
            let text = match self.rng.below(3) {
                0 => format!("B|{pid}|drawFrame"),
                1 => format!("E|{pid}"),
                _ => "hello: phase=1 iter=42".to_string(),
            };
            self.emit_at(
                at,
                cpu,
                Kind::Mark { text },
                Flags::plain(),
                Cond::IfCurrent(task),
            );
        }
    }

    fn switch_in(&mut self, task: u32, cpu: u32) {
        debug_assert_eq!(self.st[task as usize].st, St::Pending);
        let prev = self.cur[cpu as usize];
        let state = if prev == IDLE {
            PrevState::Idle
        } else {
            let p = &mut self.st[prev as usize];
            p.st = St::Preempted(cpu);
            p.gen += 1; // cancels its SwitchOut
            let elapsed = self.now - p.run_start;
            p.run_left = p.run_left.saturating_sub(elapsed).max(1);
            self.runq[cpu as usize].push(prev);
            PrevState::Preempted
        };
        self.push_event(
            cpu,
            Flags::task(2),
            Kind::Switch {
                prev,
                state,
                next: task,
            },
        );
        let run = self.runtime_for(task);
        self.start_running(task, cpu, run);
    }

    fn switch_out(&mut self, task: u32, gen: u32) {
        let ts = &self.st[task as usize];
        if ts.gen != gen {
            return;
        }
        let St::Running(cpu) = ts.st else { return };
        let next = self.runq[cpu as usize].pop().unwrap_or(IDLE);
        let spec = &self.tasks[task as usize];
        let state = if spec.kworker {
            PrevState::I
        } else if self.rng.chance(120) {
            PrevState::D
        } else {
            PrevState::S
        };
        self.push_event(
            cpu,
            Flags::task(2),
            Kind::Switch {
                prev: task,
                state,
                next,
            },
        );
        self.st[task as usize].st = St::Sleeping;
        self.cur[cpu as usize] = IDLE;
        if next != IDLE {
            // A preempted task resumes: a switch-in that is NOT a wake-up.
            let left = self.st[next as usize].run_left;
            self.start_running(next, cpu, left);
        }
    }

    fn spawn(&mut self) {
        let gap = self.rng.range(1, self.spawn_gap * 2);
        let r = self.rng.below(100);
        let did_wake = if r < 60 {
            self.wake_cycle()
        } else if r < 68 && self.running_wakeups {
            self.wake_running();
            false
        } else {
            if self.noise {
                self.noise_burst();
            }
            false
        };
        if did_wake {
            self.wakeups_left -= 1;
        }
        if self.lost && self.rng.chance(8) {
            let c = self.rng.below(u64::from(self.sim_cpus)) as usize;
            self.pending_lost[c] += self.rng.range(1, 300);
        }
        if self.wakeups_left > 0 {
            self.schedule(self.now + gap, Action::Spawn);
        }
    }

    fn rand_cpu(&mut self) -> u32 {
        self.rng.below(u64::from(self.sim_cpus)) as u32
    }

    fn choose_latency(&mut self) -> u64 {
        let r = self.rng.below(1000);
        if r < 700 {
            self.rng.range(2, 60)
        } else if r < 900 {
            self.rng.range(60, 400)
        } else if r < 985 {
            self.rng.range(400, 3000)
        } else {
            self.rng.range(3000, 25000)
        }
    }

    /// Wakes a sleeping (or not yet forked) task and schedules its switch-in
    /// after an exactly chosen latency. Returns false if nobody sleeps.
    fn wake_cycle(&mut self) -> bool {
        let candidates: Vec<u32> = (0..self.tasks.len() as u32)
            .filter(|&i| matches!(self.st[i as usize].st, St::Sleeping | St::Unborn))
            .collect();
        if candidates.is_empty() {
            return false;
        }
        let task = *self.rng.pick(&candidates);
        let ti = task as usize;
        let is_new = self.st[ti].st == St::Unborn;
        let last = self.st[ti].last_cpu;
        let target = match self.tasks[ti].pinned {
            Some(c) if c < self.sim_cpus => c,
            _ => {
                if self.rng.chance(300) {
                    self.rand_cpu()
                } else {
                    last
                }
            }
        };
        self.st[ti].st = St::Pending;
        let fifo = matches!(self.tasks[ti].policy, Policy::Fifo(_));
        let from_timer = fifo && self.rng.chance(600) && !is_new;
        let waker = if from_timer { target } else { self.rand_cpu() };
        let mut t = self.now + 1;
        let mut start = None;
        let wake_flags = if from_timer {
            Flags::hardirq(3)
        } else {
            Flags::task(3)
        };
        let timer = self.timer_base + 0x40 * u64::from(task);
        if from_timer {
            t = self.emit_at(
                t,
                waker,
                Kind::LocalTimerEntry,
                Flags::hardirq(1),
                Cond::Always,
            ) + 1;
            let now_ns = t * 1000;
            t = self.emit_at(
                t,
                waker,
                Kind::HrtimerExpireEntry {
                    timer,
                    func: "hrtimer_wakeup",
                    now_ns,
                },
                Flags::hardirq(1),
                Cond::Always,
            ) + 1;
        }
        if self.with_waking && !is_new {
            let w = self.emit_at(
                t,
                waker,
                Kind::Waking { task, target },
                wake_flags,
                Cond::Always,
            );
            start = Some(w);
            t = w + 1;
        }
        if target != last && !is_new {
            t = self.emit_at(
                t,
                waker,
                Kind::Migrate {
                    task,
                    orig: last,
                    dest: target,
                },
                Flags::task(3),
                Cond::Always,
            ) + 1;
        }
        // With TTWU_QUEUE a remote wake-up completes on the target CPU.
        let wakeup_cpu = if waker != target && !from_timer && self.rng.chance(300) {
            target
        } else {
            waker
        };
        let mut wflags = if wakeup_cpu != waker {
            Flags::hardirq(3)
        } else {
            wake_flags
        };
        wflags.need_resched = self.cur[target as usize] != IDLE;
        let kind = if is_new {
            Kind::WakeupNew { task, target }
        } else {
            Kind::Wakeup { task, target }
        };
        let wu = self.emit_at(t, wakeup_cpu, kind, wflags, Cond::Always);
        let start = start.unwrap_or(wu);
        t = wu + 1;
        if from_timer {
            t = self.emit_at(
                t,
                waker,
                Kind::HrtimerExpireExit { timer },
                Flags::hardirq(1),
                Cond::Always,
            ) + 1;
            t = self.emit_at(
                t,
                waker,
                Kind::LocalTimerExit,
                Flags::hardirq(1),
                Cond::Always,
            ) + 1;
        }
        let lat = self.choose_latency();
        let sw = self.schedule((start + lat).max(t), Action::SwitchIn { task, cpu: target });
        // Counted only when the definition applies: with sched_waking in the
        // trace, a fork's sched_wakeup_new does not start a measurement.
        if !(is_new && self.with_waking) {
            self.intended.push((self.tasks[ti].pid, sw - start));
        }
        // Repeated wake-up while pending: must not restart the measurement.
        if self.repeated_wakeups && !is_new && sw > t + 2 && self.rng.chance(150) {
            let at = self.rng.range(t, sw);
            let at = self.reserve(at);
            if at < sw {
                self.reserved.remove(&at);
                let c = self.rand_cpu();
                let kind = if self.with_waking {
                    Kind::Waking { task, target }
                } else {
                    Kind::Wakeup { task, target }
                };
                self.emit_at(at, c, kind, Flags::task(3), Cond::IfPending(task));
            } else {
                self.reserved.remove(&at);
            }
        }
        true
    }

    /// A wake-up of a task that is already running: must be ignored.
    fn wake_running(&mut self) {
        let running: Vec<u32> = (0..self.tasks.len() as u32)
            .filter(|&i| matches!(self.st[i as usize].st, St::Running(_)))
            .collect();
        if running.is_empty() {
            return;
        }
        let task = *self.rng.pick(&running);
        let St::Running(target) = self.st[task as usize].st else {
            return;
        };
        let waker = self.rand_cpu();
        let mut t = self.now + 1;
        if self.with_waking {
            t = self.emit_at(
                t,
                waker,
                Kind::Waking { task, target },
                Flags::task(3),
                Cond::IfRunning(task),
            ) + 1;
        }
        self.emit_at(
            t,
            waker,
            Kind::Wakeup { task, target },
            Flags::task(3),
            Cond::IfRunning(task),
        );
    }

    fn noise_burst(&mut self) {
        let cpu = self.rand_cpu();
        let t0 = self.now + 1;
        match self.rng.below(6) {
            0 | 1 => {
                let (irq, name) = *self.rng.pick(&IRQS);
                let mut t = self.emit_at(
                    t0,
                    cpu,
                    Kind::IrqEntry { irq, name },
                    Flags::hardirq(1),
                    Cond::Always,
                );
                let vec = *self.rng.pick(&SOFTIRQS);
                let raise = self.rng.chance(500);
                if raise {
                    t = self.emit_at(
                        t + 1,
                        cpu,
                        Kind::SoftirqRaise { vec },
                        Flags::hardirq(1),
                        Cond::Always,
                    );
                }
                let d = self.rng.range(1, 12);
                t = self.emit_at(
                    t + d,
                    cpu,
                    Kind::IrqExit { irq },
                    Flags::hardirq(1),
                    Cond::Always,
                );
                if raise {
                    t = self.emit_at(
                        t + 1,
                        cpu,
                        Kind::SoftirqEntry { vec },
                        Flags::softirq(),
                        Cond::Always,
                    );
                    let d = self.rng.range(1, 30);
                    self.emit_at(
                        t + d,
                        cpu,
                        Kind::SoftirqExit { vec },
                        Flags::softirq(),
                        Cond::Always,
                    );
                }
            }
            2 => {
                let timer = 0xffff_9c8a_7fa1_c8e0 + 0x1000 * u64::from(cpu);
                let mut t = self.emit_at(
                    t0,
                    cpu,
                    Kind::LocalTimerEntry,
                    Flags::hardirq(1),
                    Cond::Always,
                );
                t = self.emit_at(
                    t + 1,
                    cpu,
                    Kind::HrtimerExpireEntry {
                        timer,
                        func: "tick_sched_timer",
                        now_ns: (t + 1) * 1000,
                    },
                    Flags::hardirq(1),
                    Cond::Always,
                );
                let d = self.rng.range(1, 6);
                t = self.emit_at(
                    t + d,
                    cpu,
                    Kind::HrtimerExpireExit { timer },
                    Flags::hardirq(1),
                    Cond::Always,
                );
                t = self.emit_at(
                    t + 1,
                    cpu,
                    Kind::SoftirqRaise { vec: 1 },
                    Flags::hardirq(1),
                    Cond::Always,
                );
                self.emit_at(
                    t + 1,
                    cpu,
                    Kind::LocalTimerExit,
                    Flags::hardirq(1),
                    Cond::Always,
                );
            }
            3 => {
                let timer = 0xffff_b3c1_0f93_be58 + 0x100 * self.rng.below(8);
                let exp = (t0 + self.rng.range(100, 5000)) * 1000;
                let t = self.emit_at(
                    t0,
                    cpu,
                    Kind::HrtimerStart {
                        timer,
                        func: "hrtimer_wakeup",
                        expires_ns: exp,
                        soft_ns: exp - 50_000,
                    },
                    Flags::task(1),
                    Cond::CurNotIdle,
                );
                if self.rng.chance(500) {
                    let d = self.rng.range(2, 50);
                    self.emit_at(
                        t + d,
                        cpu,
                        Kind::HrtimerCancel { timer },
                        Flags::task(1),
                        Cond::CurNotIdle,
                    );
                }
            }
            4 => {
                let (func, wq) = *self.rng.pick(&WQ_FUNCS);
                let work = 0xffff_9c8a_3fc2_7a48 + 0x200 * self.rng.below(16);
                let mut t = self.emit_at(
                    t0,
                    cpu,
                    Kind::WqQueue {
                        work,
                        func,
                        wq,
                        cpu,
                    },
                    Flags::task(1),
                    Cond::Always,
                );
                t = self.emit_at(
                    t + 1,
                    cpu,
                    Kind::WqActivate { work },
                    Flags::task(1),
                    Cond::Always,
                );
                // Executed by the CPU's kworker if it happens to be running.
                if let Some(kw) = (0..self.tasks.len() as u32).find(|&i| {
                    self.tasks[i as usize].kworker && self.tasks[i as usize].pinned == Some(cpu)
                }) {
                    let d = self.rng.range(1, 20);
                    t = self.emit_at(
                        t + d,
                        cpu,
                        Kind::WqStart { work, func },
                        Flags::plain(),
                        Cond::IfCurrent(kw),
                    );
                    let d = self.rng.range(1, 20);
                    self.emit_at(
                        t + d,
                        cpu,
                        Kind::WqEnd { work, func },
                        Flags::plain(),
                        Cond::IfCurrent(kw),
                    );
                }
            }
            _ => {
                let text = format!(
                    "cyclictest: loop {} max {}us",
                    self.rng.below(100_000),
                    self.rng.below(200)
                );
                self.emit_at(
                    t0,
                    cpu,
                    Kind::Mark { text },
                    Flags::plain(),
                    Cond::CurNotIdle,
                );
            }
        }
    }
}
