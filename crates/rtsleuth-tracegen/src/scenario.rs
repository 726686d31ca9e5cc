//! What to generate: the output dialect ([`Variant`]) and the trace content
//! ([`Scenario`], [`TaskSpec`]).

use std::fmt;
use std::str::FromStr;

/// The textual dialect of the trace. Every variant renders the *same*
/// simulated event stream, so the wake-up latencies are identical across
/// variants (all timestamps sit on a whole-microsecond grid).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Variant {
    /// `/sys/kernel/tracing/trace` of a kernel >= 5.14: five flag columns
    /// (irqs-off/BH-disabled, need-resched, hardirq/softirq, preempt-depth,
    /// migrate-disable, added by "tracing: Add migrate-disabled counter to
    /// tracing output", 5.14) and `%-7d` pids (padding widened in 5.10).
    Modern5,
    /// 4.x kernels: four flag columns (`d..2`), `%-5d` pids, the older
    /// help header without the migrate-disable line.
    Legacy4,
    /// Modern5 with `options/record-tgid` set: a `(%7d)` TGID column, printed
    /// as `(-------)` when the tgid of the pid is unknown (e.g. idle).
    Tgid,
    /// The Android / atrace shape: a 4.x kernel with record-tgid, i.e. four
    /// flags, `%-5d` pids and a `(%5d)` / `(-----)` TGID column.
    TgidAndroid,
    /// PREEMPT_RT kernels before the RT "lazy preempt" rework (4.x-rt/5.x-rt
    /// patch sets): seven flag columns — irqs-off, need-resched,
    /// need-resched-lazy, hardirq/softirq, preempt-depth, preempt-lazy-depth,
    /// migrate-disable — e.g. `d..h1..`.
    Rt7,
    /// `options/latency-format`: `%8.8s-%-7d %3d` then the flags glued to the
    /// CPU number, a timestamp in whole microseconds followed by `us`, and a
    /// delay mark computed from the distance to the next event.
    LatencyFormat,
    /// `trace-cmd report` (libtraceevent with the sched/hrtimer plugins): no
    /// flags column, `%-5d` pids, event names padded to 20 columns, and the
    /// plugin forms `comm:pid [prio] S ==> comm:pid [prio]`.
    TraceCmdReport,
    /// `trace-cmd report -R`: raw `field=value` payloads with numeric
    /// `prev_state` and unpadded `target_cpu`.
    TraceCmdRaw,
    /// `/sys/kernel/tracing/trace_pipe`: Modern5 lines without any header.
    TracePipe,
}

impl Variant {
    /// All variants, in declaration order.
    pub const ALL: [Variant; 9] = [
        Variant::Modern5,
        Variant::Legacy4,
        Variant::Tgid,
        Variant::TgidAndroid,
        Variant::Rt7,
        Variant::LatencyFormat,
        Variant::TraceCmdReport,
        Variant::TraceCmdRaw,
        Variant::TracePipe,
    ];

    /// The CLI name (`modern5`, `legacy4`, `tgid`, `tgid-android`, `rt7`,
    /// `latency-format`, `trace-cmd`, `trace-cmd-raw`, `trace-pipe`).
    pub fn name(self) -> &'static str {
        match self {
            Variant::Modern5 => "modern5",
            Variant::Legacy4 => "legacy4",
            Variant::Tgid => "tgid",
            Variant::TgidAndroid => "tgid-android",
            Variant::Rt7 => "rt7",
            Variant::LatencyFormat => "latency-format",
            Variant::TraceCmdReport => "trace-cmd",
            Variant::TraceCmdRaw => "trace-cmd-raw",
            Variant::TracePipe => "trace-pipe",
        }
    }

    /// True for the two `trace-cmd report` dialects.
    pub fn is_trace_cmd(self) -> bool {
        matches!(self, Variant::TraceCmdReport | Variant::TraceCmdRaw)
    }
}

impl fmt::Display for Variant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Variant {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let norm = s.to_ascii_lowercase().replace('_', "-");
        let alias = match norm.as_str() {
            "tracecmd" | "trace-cmd-report" | "tracecmdreport" => "trace-cmd",
            "tracecmdraw" | "trace-cmd-r" => "trace-cmd-raw",
            "tracepipe" | "pipe" => "trace-pipe",
            "latency" | "latencyformat" | "lat" => "latency-format",
            "android" | "tgidandroid" => "tgid-android",
            other => other,
        };
        Variant::ALL
            .iter()
            .copied()
            .find(|v| v.name() == alias)
            .ok_or_else(|| {
                let names: Vec<_> = Variant::ALL.iter().map(|v| v.name()).collect();
                format!(
                    "unknown variant {s:?}; expected one of {}",
                    names.join(", ")
                )
            })
    }
}

/// Scheduling class of a task; decides the kernel `prio` printed in events.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Policy {
    /// SCHED_FIFO with user priority 1..=99; kernel prio = 99 - rtprio.
    Fifo(u8),
    /// SCHED_OTHER with a nice value; kernel prio = 120 + nice.
    Other(i8),
}

impl Policy {
    /// The kernel priority as printed by sched events (`prio=`, `[prio]`).
    pub fn kernel_prio(self) -> u32 {
        match self {
            Policy::Fifo(rt) => 99 - u32::from(rt.clamp(1, 99)),
            Policy::Other(nice) => (120 + i32::from(nice.clamp(-20, 19))) as u32,
        }
    }
}

/// One simulated task.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TaskSpec {
    /// Thread id (never 0: pid 0 is the per-CPU idle task).
    pub pid: u32,
    /// Thread-group id (process id).
    pub tgid: u32,
    /// `comm` as the kernel prints it (TASK_COMM_LEN 16, so at most 15
    /// bytes on real systems; see [`Scenario::overlong_comms`]).
    pub comm: String,
    /// Scheduling policy.
    pub policy: Policy,
    /// Pinned to this CPU (wake-ups always target it), or free to migrate.
    pub pinned: Option<u32>,
    /// Kernel worker: sleeps in TASK_IDLE (`prev_state=I`).
    pub kworker: bool,
    /// Some lines print `<...>` instead of its comm (pid missing from the
    /// saved_cmdlines cache); the sched payloads still name it.
    pub flaky_comm: bool,
    /// Does not exist at trace start: its first wake-up is a
    /// `sched_wakeup_new` (fork), which is never preceded by `sched_waking`.
    pub forked: bool,
}

impl TaskSpec {
    /// A SCHED_FIFO task with user priority `rtprio`.
    pub fn fifo(pid: u32, comm: &str, rtprio: u8) -> Self {
        TaskSpec {
            pid,
            tgid: pid,
            comm: comm.to_string(),
            policy: Policy::Fifo(rtprio),
            pinned: None,
            kworker: false,
            flaky_comm: false,
            forked: false,
        }
    }

    /// A SCHED_OTHER task with nice 0.
    pub fn other(pid: u32, comm: &str) -> Self {
        TaskSpec {
            policy: Policy::Other(0),
            ..TaskSpec::fifo(pid, comm, 1)
        }
    }

    /// Sets the thread-group id.
    pub fn tgid(mut self, tgid: u32) -> Self {
        self.tgid = tgid;
        self
    }

    /// Pins the task to `cpu`.
    pub fn pinned(mut self, cpu: u32) -> Self {
        self.pinned = Some(cpu);
        self
    }

    /// Sets the nice value (SCHED_OTHER only).
    pub fn nice(mut self, nice: i8) -> Self {
        self.policy = Policy::Other(nice);
        self
    }

    /// Marks the task as a kernel worker (sleeps with `prev_state=I`).
    pub fn kworker(mut self) -> Self {
        self.kworker = true;
        self
    }

    /// Some of its lines print `<...>` as comm.
    pub fn flaky_comm(mut self) -> Self {
        self.flaky_comm = true;
        self
    }

    /// The task is forked during the trace (first wake-up is `sched_wakeup_new`).
    pub fn forked(mut self) -> Self {
        self.forked = true;
        self
    }

    /// Kernel prio (`prio=` in events).
    pub fn prio(&self) -> u32 {
        self.policy.kernel_prio()
    }
}

/// The trace content, deterministic from `seed`. Build it with
/// `Scenario::new(seed).cpus(4).wakeups(1000)...`.
#[derive(Clone, Debug)]
pub struct Scenario {
    pub(crate) seed: u64,
    pub(crate) cpus: u32,
    pub(crate) tasks: Option<Vec<TaskSpec>>,
    pub(crate) wakeups: u64,
    pub(crate) with_waking: bool,
    pub(crate) lost_events: bool,
    pub(crate) buffer_started: bool,
    pub(crate) elided: bool,
    pub(crate) trailing_newline: bool,
    pub(crate) noise: bool,
    pub(crate) running_wakeups: bool,
    pub(crate) repeated_wakeups: bool,
    pub(crate) overlong_comms: bool,
    pub(crate) spaced_comms: bool,
    pub(crate) empty_cpu: bool,
    pub(crate) start_us: Option<u64>,
    pub(crate) size_limit: Option<u64>,
    pub(crate) max_samples: Option<usize>,
    pub(crate) trace_cmd_version: u32,
}

impl Scenario {
    /// Defaults: 2 CPUs, the default task set, 100 measured wake-ups, with
    /// `sched_waking`, noise, repeated wake-ups and wake-ups of running tasks
    /// on; no lost events, no buffer-started/elided lines, trailing newline.
    pub fn new(seed: u64) -> Self {
        Scenario {
            seed,
            cpus: 2,
            tasks: None,
            wakeups: 100,
            with_waking: true,
            lost_events: false,
            buffer_started: false,
            elided: false,
            trailing_newline: true,
            noise: true,
            running_wakeups: true,
            repeated_wakeups: true,
            overlong_comms: false,
            spaced_comms: false,
            empty_cpu: false,
            start_us: None,
            size_limit: None,
            max_samples: None,
            trace_cmd_version: 6,
        }
    }

    /// Number of CPUs (>= 1).
    pub fn cpus(mut self, n: u32) -> Self {
        self.cpus = n.max(1);
        self
    }

    /// Replaces the default task set (see [`Scenario::default_tasks`]).
    /// Pids must be unique and non-zero; pinned CPUs must exist.
    pub fn tasks(mut self, tasks: Vec<TaskSpec>) -> Self {
        self.tasks = Some(tasks);
        self
    }

    /// Number of measured wake-up cycles to start (sleeping task woken, then
    /// switched in after a chosen latency). `u64::MAX` = until the size limit.
    pub fn wakeups(mut self, n: u64) -> Self {
        self.wakeups = n;
        self
    }

    /// Emit `sched_waking` before each `sched_wakeup` (kernel >= 4.3 with the
    /// event enabled). Off: the trace has no `sched_waking` at all and the
    /// latency definition falls back to `sched_wakeup`/`sched_wakeup_new`.
    pub fn with_waking(mut self, on: bool) -> Self {
        self.with_waking = on;
        self
    }

    /// Sprinkle `CPU:N [LOST n EVENTS]` lines (trace-cmd: `CPU:N [n EVENTS
    /// DROPPED]`); each drops all pending wake-ups in the ground truth.
    pub fn lost_events(mut self, on: bool) -> Self {
        self.lost_events = on;
        self
    }

    /// Print `##### CPU N buffer started ####` before the first event of each
    /// CPU (what the `trace` file does after a ring-buffer overrun). Not
    /// printed by trace_pipe or trace-cmd.
    pub fn buffer_started(mut self, on: bool) -> Self {
        self.buffer_started = on;
        self
    }

    /// Sprinkle `[...]` lines, as found in traces pasted into mails and bugs.
    pub fn elided(mut self, on: bool) -> Self {
        self.elided = on;
        self
    }

    /// End the output with a newline (default) or not.
    pub fn trailing_newline(mut self, on: bool) -> Self {
        self.trailing_newline = on;
        self
    }

    /// IRQ/softirq/hrtimer/timer/workqueue/marker events between wake-ups.
    pub fn noise(mut self, on: bool) -> Self {
        self.noise = on;
        self
    }

    /// Wake-ups of tasks that are currently running (must be ignored).
    pub fn running_wakeups(mut self, on: bool) -> Self {
        self.running_wakeups = on;
        self
    }

    /// Extra wake-ups of a task whose wake-up is already pending (must not
    /// restart the measurement).
    pub fn repeated_wakeups(mut self, on: bool) -> Self {
        self.repeated_wakeups = on;
        self
    }

    /// Use comms longer than the kernel's 15 bytes in the default task set
    /// (`com.google.android.youtube`, `kworker/u8:2-events`): not something
    /// ftrace can print, but tools re-emitting traces do; tests reader
    /// robustness.
    pub fn overlong_comms(mut self, on: bool) -> Self {
        self.overlong_comms = on;
        self
    }

    /// Give tasks of the default set names with `": "`, blanks and colons, as real systems
    /// have them (`tmux: server`, `rs:main Q:Reg`, `kworker/0:1 H`): they must be read by the
    /// columns and fields around them, not cut at the first blank or colon.
    pub fn spaced_comms(mut self, on: bool) -> Self {
        self.spaced_comms = on;
        self
    }

    /// Leave the last CPU without any event (trace-cmd then prints
    /// `CPU N is empty`). Needs >= 2 CPUs.
    pub fn empty_cpu(mut self, on: bool) -> Self {
        self.empty_cpu = on;
        self
    }

    /// First timestamp in microseconds (default: derived from the seed,
    /// sometimes with 6-digit seconds so `%5lu` overflows).
    pub fn start_us(mut self, us: u64) -> Self {
        self.start_us = Some(us);
        self
    }

    /// Stop once the body (everything after the header) reaches this many
    /// bytes; the simulation is cut at that line, pending wake-ups are then
    /// simply not counted.
    pub fn size_limit(mut self, bytes: u64) -> Self {
        self.size_limit = Some(bytes);
        self
    }

    /// Keep at most this many samples per task in [`crate::Expected`]
    /// (counts, max and sums stay exact; `samples_truncated` is set).
    pub fn max_samples(mut self, n: usize) -> Self {
        self.max_samples = Some(n);
        self
    }

    /// `version = N` printed by the trace-cmd variants (6 or 7).
    pub fn trace_cmd_version(mut self, v: u32) -> Self {
        self.trace_cmd_version = v;
        self
    }

    /// The seed.
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// Number of CPUs.
    pub fn cpu_count(&self) -> u32 {
        self.cpus
    }

    /// The task set that will be simulated.
    pub fn task_specs(&self) -> Vec<TaskSpec> {
        match &self.tasks {
            Some(t) => t.clone(),
            None => {
                let mut tasks = Scenario::default_tasks(self.cpus, self.overlong_comms);
                if self.spaced_comms {
                    for t in &mut tasks {
                        t.comm = spaced(&t.comm);
                    }
                }
                tasks
            }
        }
    }

    /// The default task set: per CPU a pinned `cyclictest` (FIFO 80, kernel
    /// prio 19), `ksoftirqd/N` and `kworker/N:1`; plus `irq/24-ahci` (FIFO
    /// 50), `migration/0` (FIFO 99, prio 0), two `Web Content` threads (comm
    /// with a space), `kworker/u8:2`, Android `IntentService[E` and
    /// `android.youtube` (the last 15 bytes of `com.google.android.youtube`, as
    /// ART names threads), `systemd-journal`, `bash` and a forked `bash`.
    pub fn default_tasks(cpus: u32, overlong: bool) -> Vec<TaskSpec> {
        let mut v = Vec::new();
        for c in 0..cpus {
            v.push(
                TaskSpec::fifo(2610 + c, "cyclictest", 80)
                    .tgid(2608)
                    .pinned(c),
            );
        }
        for c in 0..cpus {
            v.push(TaskSpec::other(12 + 7 * c, &format!("ksoftirqd/{c}")).pinned(c));
            v.push(
                TaskSpec::other(40 + c, &format!("kworker/{c}:1"))
                    .pinned(c)
                    .kworker(),
            );
        }
        v.push(TaskSpec::fifo(141, "irq/24-ahci", 50));
        v.push(TaskSpec::fifo(16, "migration/0", 99).pinned(0));
        v.push(TaskSpec::other(3102, "Web Content").tgid(3100));
        v.push(TaskSpec::other(3140, "Web Content").tgid(3100).flaky_comm());
        let kw = if overlong {
            "kworker/u8:2-events"
        } else {
            "kworker/u8:2"
        };
        v.push(TaskSpec::other(187, kw).kworker().flaky_comm());
        v.push(
            TaskSpec::other(5230, "IntentService[E")
                .tgid(5210)
                .flaky_comm(),
        );
        let yt = if overlong {
            "com.google.android.youtube"
        } else {
            "android.youtube"
        };
        v.push(TaskSpec::other(5210, yt).nice(-10));
        v.push(TaskSpec::other(402, "systemd-journal"));
        v.push(TaskSpec::other(2438, "bash"));
        v.push(TaskSpec::other(2442, "bash").forked());
        v
    }
}

/// The name [`Scenario::spaced_comms`] gives a task of the default set.
fn spaced(comm: &str) -> String {
    match comm {
        "systemd-journal" => "tmux: server".to_string(),
        "bash" => "rs:main Q:Reg".to_string(),
        c if c.starts_with("kworker/") && c.ends_with(":1") => format!("{c} H"),
        c => c.to_string(),
    }
}
