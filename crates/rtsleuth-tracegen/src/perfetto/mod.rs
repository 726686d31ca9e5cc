//! Large Perfetto traces in the shape Android phones write, for benchmarks: `tracegen
//! perfetto-compact`.
//!
//! What a phone's `traced_probes` writes with `compact_sched` on (the default on recent
//! Android), and what this module writes:
//!
//! - one `FtraceEventBundle` per CPU per read of its ring buffer: every drain period (100 ms
//!   here) each CPU's new events, split into bundles of at most [`CompactSpec::bundle_events`];
//!   so bundles of different CPUs overlap in time and each CPU's are in order;
//! - in each bundle, `sched_switch` and `sched_waking` as `CompactSched` columns (timestamps
//!   delta-coded within the column, the first absolute; comms as indices into the bundle's
//!   `intern_table`; a switch names only the task switched to);
//! - every other event as an ordinary `FtraceEvent` in time order: `sched_wakeup`,
//!   `irq_handler_entry`/`exit`, `softirq_raise`/`entry`/`exit`, `hrtimer_start`,
//!   `hrtimer_expire_entry`/`exit`, `cpu_idle` and atrace `print` markers;
//! - `symbolize_ksyms`: hrtimer functions are iids of `kernel_symbols` interned on the ftrace
//!   sequence (the sequence's first packet clears its incremental state);
//! - a `SystemInfo`, a `ProcessTree` naming every thread, and `FtraceStats` at the start and
//!   the end, each on its own writer sequence.
//!
//! The events come from a small scheduler simulation over a fixed set of Android-like
//! threads: tasks sleep, are woken (often from another CPU), wait on their CPU's run queue,
//! are preempted or block, and CPUs go idle. It is consistent (a task runs on one CPU at a
//! time, is woken only while asleep, and every switch names the task that really was
//! queued), so analyses read it like a real trace; it is not meant to be realistic in its
//! latencies. [`CompactCounts`] says exactly what was written.

mod proto;

use crate::rng::SplitMix64;
use prost::Message;
use proto::{
    Body, CompactSched, CpuIdle, Data, FtraceCpuStats, FtraceEvent, FtraceEventBundle, FtraceStats,
    HrtimerExpireEntry, HrtimerExpireExit, HrtimerStart, InternedData, InternedString,
    IrqHandlerEntry, IrqHandlerExit, Print, Process, ProcessTree, SchedWakeup, Softirq, SystemInfo,
    Thread, TracePacket, Utsname,
};
use std::collections::VecDeque;
use std::io::{self, Write};

/// What to write.
#[derive(Debug, Clone)]
pub struct CompactSpec {
    /// Stop once at least this many ftrace events are written (a few more may follow: the
    /// step that crosses the count is finished).
    pub events: u64,
    /// CPUs (phones have 8).
    pub cpus: u32,
    pub seed: u64,
    /// Events of one CPU per bundle at most (switches and wakings included).
    pub bundle_events: usize,
    /// Every this many nanoseconds each CPU's pending events become a bundle.
    pub drain_ns: u64,
    /// The boot-clock time of the first event.
    pub start_ns: u64,
}

impl CompactSpec {
    pub fn new(events: u64) -> Self {
        CompactSpec {
            events,
            cpus: 8,
            seed: 1,
            bundle_events: 1024,
            drain_ns: 100_000_000,
            start_ns: 1_000_000_000_000,
        }
    }
}

/// What was written, event kind by event kind.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CompactCounts {
    /// `sched_switch` rows of `CompactSched`.
    pub switches: u64,
    /// `sched_waking` rows of `CompactSched`.
    pub wakings: u64,
    pub wakeups: u64,
    pub irq_entries: u64,
    pub irq_exits: u64,
    pub softirq_raises: u64,
    pub softirq_entries: u64,
    pub softirq_exits: u64,
    pub hrtimer_starts: u64,
    pub hrtimer_expire_entries: u64,
    pub hrtimer_expire_exits: u64,
    pub cpu_idles: u64,
    pub prints: u64,
    /// Ftrace bundles, and all packets (bundles and the others).
    pub bundles: u64,
    pub packets: u64,
    pub bytes: u64,
    /// Distinct comms of the task table (idle tasks included).
    pub comms: usize,
    /// The times of the first and the last event.
    pub first_ns: u64,
    pub last_ns: u64,
}

impl CompactCounts {
    /// All ftrace events.
    pub fn events(&self) -> u64 {
        self.switches
            + self.wakings
            + self.wakeups
            + self.irq_entries
            + self.irq_exits
            + self.softirq_raises
            + self.softirq_entries
            + self.softirq_exits
            + self.hrtimer_starts
            + self.hrtimer_expire_entries
            + self.hrtimer_expire_exits
            + self.cpu_idles
            + self.prints
    }
}

/// Writer sequences: traced's own packets, the process tree's, the ftrace data source's.
const SEQ_SERVICE: u32 = 1;
const SEQ_PS: u32 = 2;
const SEQ_FTRACE: u32 = 3;

/// `TracePacket.sequence_flags`: SEQ_INCREMENTAL_STATE_CLEARED | SEQ_NEEDS_INCREMENTAL_STATE.
const SEQ_CLEARED: u32 = 1;
const SEQ_NEEDS_STATE: u32 = 2;

/// The kernel's `prev_state` bits as Perfetto records them.
const TASK_RUNNING: i64 = 0;
const TASK_INTERRUPTIBLE: i64 = 1;
const TASK_UNINTERRUPTIBLE: i64 = 2;
/// `R+`: preempted (TASK_REPORT_MAX on 4.14+ kernels).
const TASK_PREEMPTED: i64 = 0x100;

/// `cpu_idle` state of leaving idle (the kernel's `PWR_EVENT_EXIT`, -1 as u32).
const IDLE_EXIT: u32 = u32::MAX;

/// Kernel functions the hrtimer events name, interned as iids 1.. on the ftrace sequence.
const KSYMS: [&str; 5] = [
    "tick_sched_timer",
    "hrtimer_wakeup",
    "sched_rt_period_timer",
    "it_real_fn",
    "watchdog_timer_fn",
];
const KSYM_TICK: u64 = 1;
const KSYM_WAKEUP: u64 = 2;

/// Interrupt lines: (irq, name), the first is the per-CPU timer.
const IRQS: [(i32, &str); 5] = [
    (11, "arch_timer"),
    (216, "dwc3"),
    (172, "ufshcd"),
    (42, "kgsl-3d0"),
    (307, "synaptics_tcm"),
];

/// Softirq vectors raised from interrupts: TIMER, NET_RX, BLOCK, TASKLET, SCHED, RCU.
const SOFTIRQS: [u32; 6] = [1, 3, 4, 6, 7, 9];

/// atrace slices apps write around their work.
const SLICES: [&str; 6] = [
    "Choreographer#doFrame",
    "DrawFrame",
    "binder transaction",
    "queueBuffer",
    "RenderThread::syncFrameState",
    "Lock contention on thread list lock",
];

struct Task {
    pid: i32,
    tgid: i32,
    comm: String,
    /// Tasks of the same comm share it: the comm's number among the distinct ones.
    comm_id: usize,
    prio: i32,
    /// The CPU its wake-ups usually target.
    home: u32,
    state: State,
    /// When it was last queued: it cannot be switched to before.
    ready: u64,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum State {
    Sleeping,
    Queued,
    Running,
}

/// A process: its tgid, its cmdline and its threads' (comm, prio).
type ProcessSpec = (i32, &'static str, Vec<(String, i32)>);

/// Android-like processes and their threads: (tgid, process name, [(thread comm, prio)]);
/// the first thread is the main one (tid = tgid). Kernel threads are their own process.
fn processes() -> Vec<ProcessSpec> {
    let t = |v: &[(&str, i32)]| -> Vec<(String, i32)> {
        v.iter().map(|&(c, p)| (c.to_string(), p)).collect()
    };
    let mut ps = vec![
        (
            612,
            "/system/bin/surfaceflinger",
            t(&[
                ("surfaceflinger", 97),
                ("RenderEngine", 97),
                ("app", 97),
                ("TimerDispatch", 97),
                ("Binder:612_1", 120),
                ("Binder:612_2", 120),
            ]),
        ),
        (
            1504,
            "system_server",
            t(&[
                ("system_server", 118),
                ("android.ui", 110),
                ("android.anim", 110),
                ("android.display", 110),
                ("HeapTaskDaemon", 124),
                ("Binder:1504_1", 120),
                ("Binder:1504_2", 120),
                ("Binder:1504_3", 120),
            ]),
        ),
        (
            8211,
            "com.google.android.youtube",
            t(&[
                ("android.youtube", 110),
                ("RenderThread", 110),
                ("hwuiTask0", 118),
                ("ExoPlayer:Playb", 116),
                ("MediaCodec_loop", 116),
                ("Binder:8211_1", 120),
                ("pool-3-thread-1", 120),
            ]),
        ),
        (
            1933,
            "com.android.systemui",
            t(&[
                ("ndroid.systemui", 110),
                ("RenderThread", 110),
                ("Binder:1933_2", 120),
                ("SysUiBg", 130),
            ]),
        ),
        (
            705,
            "/system/bin/audioserver",
            t(&[
                ("audioserver", 120),
                ("AudioOut_D", 101),
                ("FastMixer", 96),
                ("FastCapture", 96),
            ]),
        ),
        (
            820,
            "/vendor/bin/hw/android.hardware.graphics.composer@2.4-service",
            t(&[("composer@2.4-se", 97), ("HwBinder:820_1", 97)]),
        ),
        (
            305,
            "/system/bin/logd",
            t(&[
                ("logd", 130),
                ("logd.writer", 130),
                ("logd.reader.per", 130),
            ]),
        ),
        (
            1210,
            "/system/bin/traced_probes",
            t(&[("traced_probes", 120), ("traced_probes1", 120)]),
        ),
        (1180, "/system/bin/traced", t(&[("traced", 120)])),
    ];
    let kernel: [(i32, &str, i32); 10] = [
        (13, "rcu_preempt", 120),
        (14, "rcub/0", 98),
        (12, "ksoftirqd/0", 120),
        (24, "ksoftirqd/1", 120),
        (190, "kworker/u16:3", 120),
        (191, "kworker/u16:7", 120),
        (88, "kworker/0:1H", 100),
        (466, "irq/307-synapti", 49),
        (467, "irq/216-dwc3", 49),
        (31, "migration/2", 0),
    ];
    for (pid, comm, prio) in kernel {
        ps.push((pid, comm, vec![(comm.to_string(), prio)]));
    }
    ps
}

/// One CPU's events not yet written as a bundle.
#[derive(Default)]
struct Pending {
    events: Vec<FtraceEvent>,
    cs: CompactSched,
    /// Absolute times of the last switch and waking rows (for the deltas).
    last_switch: u64,
    last_waking: u64,
    /// Per comm (`Task::comm_id`), its index in `cs.intern_table` plus one (0: not
    /// interned yet).
    interned: Vec<u32>,
    rows: usize,
}

impl Pending {
    fn intern(&mut self, task: &Task) -> u32 {
        let id = task.comm_id;
        if self.interned[id] == 0 {
            self.cs.intern_table.push(task.comm.clone());
            self.interned[id] = self.cs.intern_table.len() as u32;
        }
        self.interned[id] - 1
    }

    fn len(&self) -> usize {
        self.events.len() + self.rows
    }
}

struct Cpu {
    /// When its next step happens.
    clock: u64,
    /// The time of its last event.
    last: u64,
    /// The running task (its idle task when idle).
    cur: usize,
    rq: VecDeque<usize>,
    /// A task of higher priority was queued here: the next step preempts.
    resched: bool,
    pending: Pending,
}

struct Gen<'a, W: Write> {
    w: &'a mut W,
    rng: SplitMix64,
    spec: CompactSpec,
    tasks: Vec<Task>,
    cpus: Vec<Cpu>,
    counts: CompactCounts,
    buf: Vec<u8>,
    /// The ftrace sequence's first packet clears its state and interns the symbols.
    ftrace_started: bool,
    hrtimer: u64,
}

/// Writes a trace of at least `spec.events` ftrace events to `w` (wrap it in a `BufWriter`).
/// Memory: the task table and one bundle per CPU.
pub fn write_compact<W: Write>(w: &mut W, spec: &CompactSpec) -> io::Result<CompactCounts> {
    assert!(spec.cpus >= 1 && spec.cpus <= 64, "1 to 64 CPUs");
    assert!(spec.bundle_events >= 8, "bundles of at least 8 events");
    let mut rng = SplitMix64::new(spec.seed);
    let mut tasks = Vec::new();
    for (tgid, _, threads) in processes() {
        for (i, (comm, prio)) in threads.into_iter().enumerate() {
            let pid = if i == 0 { tgid } else { tgid + i as i32 };
            let home = rng.below(u64::from(spec.cpus)) as u32;
            tasks.push(Task {
                pid,
                tgid,
                comm,
                comm_id: 0,
                prio,
                home,
                state: State::Sleeping,
                ready: 0,
            });
        }
    }
    let first_idle = tasks.len();
    for c in 0..spec.cpus {
        tasks.push(Task {
            pid: 0,
            tgid: 0,
            comm: format!("swapper/{c}"),
            comm_id: 0,
            prio: 120,
            home: c,
            state: State::Running,
            ready: 0,
        });
    }
    let mut comms: Vec<String> = tasks.iter().map(|t| t.comm.clone()).collect();
    comms.sort_unstable();
    comms.dedup();
    for t in &mut tasks {
        t.comm_id = comms.binary_search(&t.comm).expect("every comm is listed");
    }
    let cpus = (0..spec.cpus)
        .map(|c| Cpu {
            clock: spec.start_ns + rng.below(50_000),
            last: 0,
            cur: first_idle + c as usize,
            rq: VecDeque::new(),
            resched: false,
            pending: Pending {
                interned: vec![0; comms.len()],
                ..Pending::default()
            },
        })
        .collect();
    let counts = CompactCounts {
        comms: comms.len(),
        ..CompactCounts::default()
    };
    let mut g = Gen {
        w,
        rng,
        spec: spec.clone(),
        tasks,
        cpus,
        counts,
        buf: Vec::with_capacity(1 << 16),
        ftrace_started: false,
        hrtimer: 0xffff_ff80_1234_0000,
    };
    g.preamble()?;
    // Two tasks queued on every CPU to start with.
    for c in 0..spec.cpus as usize {
        for _ in 0..2 {
            if let Some(t) = g.sleeper() {
                g.tasks[t].state = State::Queued;
                g.cpus[c].rq.push_back(t);
            }
        }
    }
    let mut drain = spec.start_ns + spec.drain_ns;
    while g.counts.events() < spec.events {
        let c = g.next_cpu();
        if g.cpus[c].clock >= drain {
            g.flush_all()?;
            drain += spec.drain_ns;
            continue;
        }
        g.step(c);
        if g.cpus[c].pending.len() >= spec.bundle_events {
            g.flush(c)?;
        }
    }
    g.flush_all()?;
    g.stats(2)?;
    g.counts.last_ns = g.cpus.iter().map(|c| c.last).max().unwrap_or(0);
    Ok(g.counts)
}

impl<W: Write> Gen<'_, W> {
    fn packet(&mut self, p: &TracePacket) -> io::Result<()> {
        self.buf.clear();
        self.buf.push(0x0a);
        p.encode_length_delimited(&mut self.buf)
            .expect("a Vec grows as needed");
        self.w.write_all(&self.buf)?;
        self.counts.packets += 1;
        self.counts.bytes += self.buf.len() as u64;
        Ok(())
    }

    fn preamble(&mut self) -> io::Result<()> {
        self.packet(&TracePacket {
            timestamp: Some(self.spec.start_ns),
            trusted_packet_sequence_id: Some(SEQ_SERVICE),
            previous_packet_dropped: Some(true),
            data: Some(Data::SystemInfo(SystemInfo {
                utsname: Some(Utsname {
                    sysname: Some("Linux".into()),
                    release: Some("5.15.110-android14-11-g1b6d0a5c2f7e".into()),
                    machine: Some("aarch64".into()),
                }),
            })),
            ..TracePacket::default()
        })?;
        let mut tree = ProcessTree::default();
        for (tgid, cmdline, _) in processes() {
            tree.processes.push(Process {
                pid: Some(tgid),
                ppid: Some(if cmdline.starts_with('/') || tgid < 1000 {
                    1
                } else {
                    650
                }),
                cmdline: vec![cmdline.to_string()],
            });
        }
        for t in self.tasks.iter().filter(|t| t.pid != 0) {
            tree.threads.push(Thread {
                tid: Some(t.pid),
                name: Some(t.comm.clone()),
                tgid: Some(t.tgid),
            });
        }
        self.packet(&TracePacket {
            timestamp: Some(self.spec.start_ns),
            trusted_packet_sequence_id: Some(SEQ_PS),
            previous_packet_dropped: Some(true),
            data: Some(Data::ProcessTree(tree)),
            ..TracePacket::default()
        })?;
        self.stats(1)
    }

    /// `FtraceStats` of `phase` (1 start, 2 end): nothing lost.
    fn stats(&mut self, phase: i32) -> io::Result<()> {
        let per_cpu = self.counts.events() / u64::from(self.spec.cpus);
        let cpu_stats = (0..self.spec.cpus)
            .map(|c| FtraceCpuStats {
                cpu: Some(u64::from(c)),
                entries: Some(if phase == 1 { 0 } else { per_cpu }),
                overrun: Some(0),
                dropped_events: Some(0),
            })
            .collect();
        let ts = self.cpus.iter().map(|c| c.last).max().unwrap_or(0);
        self.packet(&TracePacket {
            timestamp: Some(ts.max(self.spec.start_ns)),
            trusted_packet_sequence_id: Some(SEQ_SERVICE),
            data: Some(Data::FtraceStats(FtraceStats {
                phase: Some(phase),
                cpu_stats,
            })),
            ..TracePacket::default()
        })
    }

    fn flush_all(&mut self) -> io::Result<()> {
        for c in 0..self.cpus.len() {
            self.flush(c)?;
        }
        Ok(())
    }

    /// CPU `c`'s pending events as one bundle.
    fn flush(&mut self, c: usize) -> io::Result<()> {
        let n = self.counts.comms;
        let p = std::mem::replace(
            &mut self.cpus[c].pending,
            Pending {
                interned: vec![0; n],
                ..Pending::default()
            },
        );
        if p.len() == 0 {
            return Ok(());
        }
        let compact = p.rows > 0;
        let bundle = FtraceEventBundle {
            cpu: Some(c as u32),
            event: p.events,
            compact_sched: compact.then_some(p.cs),
        };
        let mut packet = TracePacket {
            trusted_packet_sequence_id: Some(SEQ_FTRACE),
            sequence_flags: Some(SEQ_NEEDS_STATE),
            data: Some(Data::FtraceEvents(bundle)),
            ..TracePacket::default()
        };
        if !self.ftrace_started {
            self.ftrace_started = true;
            packet.previous_packet_dropped = Some(true);
            packet.sequence_flags = Some(SEQ_CLEARED | SEQ_NEEDS_STATE);
            packet.interned_data = Some(InternedData {
                kernel_symbols: KSYMS
                    .iter()
                    .zip(1u64..)
                    .map(|(name, iid)| InternedString {
                        iid: Some(iid),
                        str: Some(name.as_bytes().to_vec()),
                    })
                    .collect(),
            });
        }
        self.counts.bundles += 1;
        self.packet(&packet)
    }

    /// The CPU whose next step comes first.
    fn next_cpu(&self) -> usize {
        let mut best = 0;
        for (i, c) in self.cpus.iter().enumerate() {
            if c.clock < self.cpus[best].clock {
                best = i;
            }
        }
        best
    }

    /// A sleeping task, if one turns up in a few tries.
    fn sleeper(&mut self) -> Option<usize> {
        let real = self.tasks.len() - self.cpus.len();
        (0..6)
            .map(|_| self.rng.below(real as u64) as usize)
            .find(|&t| self.tasks[t].state == State::Sleeping)
    }

    fn us(&mut self, lo: u64, hi: u64) -> u64 {
        self.rng.range(lo * 1000, hi * 1000)
    }

    /// A time for CPU `c`'s next event at or after `ts`, after its last one.
    fn at(&mut self, c: usize, ts: u64) -> u64 {
        let cpu = &mut self.cpus[c];
        let ts = ts.max(cpu.last + 1);
        cpu.last = ts;
        if self.counts.first_ns == 0 || ts < self.counts.first_ns {
            self.counts.first_ns = ts;
        }
        ts
    }

    /// [`Self::at`] a random `lo..hi` nanoseconds after `base`.
    fn after(&mut self, c: usize, base: u64, lo: u64, hi: u64) -> u64 {
        let d = self.rng.range(lo, hi);
        self.at(c, base + d)
    }

    fn event(&mut self, c: usize, ts: u64, body: Body) {
        let cur = self.cpus[c].cur;
        let pid = self.tasks[cur].pid as u32;
        self.cpus[c].pending.events.push(FtraceEvent {
            timestamp: Some(ts),
            pid: Some(pid),
            body: Some(body),
        });
    }

    fn step(&mut self, c: usize) {
        let t = self.cpus[c].clock;
        let idle = self.tasks[self.cpus[c].cur].pid == 0;
        if idle {
            if self.cpus[c].rq.is_empty() {
                // Idle: a timer tick now and then, which sometimes wakes a task here.
                if self.rng.chance(400) {
                    self.interrupt(c, t, true);
                }
                // Woken by the tick: leave idle soon; otherwise stay idle a while.
                let pause = match self.cpus[c].rq.is_empty() {
                    true => self.us(300, 4000),
                    false => self.us(5, 30),
                };
                self.cpus[c].clock = self.cpus[c].last.max(t) + pause;
            } else {
                let ts = self.at(c, t);
                self.counts.cpu_idles += 1;
                self.event(
                    c,
                    ts,
                    Body::CpuIdle(CpuIdle {
                        state: Some(IDLE_EXIT),
                        cpu_id: Some(c as u32),
                    }),
                );
                let ts = ts + self.us(2, 8);
                self.switch(c, ts, TASK_RUNNING);
                self.cpus[c].clock = self.cpus[c].last + self.us(5, 60);
            }
            return;
        }
        if std::mem::take(&mut self.cpus[c].resched) && !self.cpus[c].rq.is_empty() {
            self.switch(c, t, TASK_PREEMPTED);
            self.cpus[c].clock = self.cpus[c].last + self.us(5, 200);
            return;
        }
        let r = self.rng.below(100);
        if r < 35 {
            self.wake(c, t);
            self.cpus[c].clock = self.cpus[c].last + self.us(10, 300);
        } else if r < 45 {
            let timer = self.rng.chance(600);
            self.interrupt(c, t, timer);
            self.cpus[c].clock = self.cpus[c].last + self.us(10, 200);
        } else if r < 49 {
            let ts = self.at(c, t);
            let expires = (ts + self.us(100, 20_000)) as i64;
            self.hrtimer += 0x40;
            self.counts.hrtimer_starts += 1;
            let function = *self.rng.pick(&[KSYM_WAKEUP, KSYM_WAKEUP, 3, 4, 5]);
            let hrtimer = self.hrtimer;
            self.event(
                c,
                ts,
                Body::HrtimerStart(HrtimerStart {
                    hrtimer: Some(hrtimer),
                    function: Some(function),
                    expires: Some(expires),
                    softexpires: Some(expires),
                    mode: Some(1),
                }),
            );
            self.cpus[c].clock = ts + self.us(5, 100);
        } else if r < 54 {
            let cur = self.cpus[c].cur;
            let tgid = self.tasks[cur].tgid;
            let slice = *self.rng.pick(&SLICES);
            let ts = self.at(c, t);
            self.counts.prints += 2;
            self.event(
                c,
                ts,
                Body::Print(Print {
                    ip: Some(0xffff_ffc0_0812_3450),
                    buf: Some(format!("B|{tgid}|{slice}\n")),
                }),
            );
            let end = ts + self.us(5, 300);
            let end = self.at(c, end);
            self.event(
                c,
                end,
                Body::Print(Print {
                    ip: Some(0xffff_ffc0_0812_3450),
                    buf: Some(format!("E|{tgid}\n")),
                }),
            );
            self.cpus[c].clock = end + self.us(5, 100);
        } else {
            // Preempted only by a task of at least its priority (a time slice ends).
            let cpu = &self.cpus[c];
            let prio = self.tasks[cpu.cur].prio;
            let rival = cpu.rq.iter().any(|&t| self.tasks[t].prio <= prio);
            let state = if rival && r < 64 {
                TASK_PREEMPTED
            } else if self.rng.chance(60) {
                TASK_UNINTERRUPTIBLE
            } else {
                TASK_INTERRUPTIBLE
            };
            self.switch(c, t, state);
            self.cpus[c].clock = self.cpus[c].last + self.us(20, 800);
        }
    }

    /// CPU `c` switches from its current task (which leaves in `prev_state`) to the head of
    /// its run queue, or to idle.
    fn switch(&mut self, c: usize, ts: u64, prev_state: i64) {
        let prev = self.cpus[c].cur;
        let idle_task = self.tasks.len() - self.cpus.len() + c;
        // The run queue's highest priority (lowest prio), the longest waiting among equals.
        let rq = &mut self.cpus[c].rq;
        let best = (0..rq.len()).min_by_key(|&i| self.tasks[rq[i]].prio);
        let next = best.and_then(|i| rq.remove(i)).unwrap_or(idle_task);
        self.cpus[c].resched = false;
        let ts = self.at(c, ts.max(self.tasks[next].ready));
        if prev != idle_task {
            self.tasks[prev].state = if prev_state == TASK_PREEMPTED {
                self.tasks[prev].ready = ts;
                self.cpus[c].rq.push_back(prev);
                State::Queued
            } else {
                State::Sleeping
            };
        }
        self.tasks[next].state = State::Running;
        self.cpus[c].cur = next;
        let (pid, prio) = (self.tasks[next].pid, self.tasks[next].prio);
        let p = &mut self.cpus[c].pending;
        let comm = p.intern(&self.tasks[next]);
        p.cs.switch_timestamp.push(ts - p.last_switch);
        p.last_switch = ts;
        p.cs.switch_prev_state.push(prev_state);
        p.cs.switch_next_pid.push(pid);
        p.cs.switch_next_prio.push(prio);
        p.cs.switch_next_comm_index.push(comm);
        p.rows += 1;
        self.counts.switches += 1;
        if next == idle_task {
            let ts = ts + self.us(2, 6);
            let ts = self.at(c, ts);
            self.counts.cpu_idles += 1;
            let state = self.rng.below(3) as u32;
            self.event(
                c,
                ts,
                Body::CpuIdle(CpuIdle {
                    state: Some(state),
                    cpu_id: Some(c as u32),
                }),
            );
        }
    }

    /// From CPU `c` at `ts`, wakes a sleeping task (if one is found): `sched_waking` here,
    /// `sched_wakeup` just after, the task queued on its target CPU.
    fn wake(&mut self, c: usize, ts: u64) {
        let Some(task) = self.sleeper() else {
            return;
        };
        let target = if self.rng.chance(850) {
            self.tasks[task].home as usize
        } else {
            c
        };
        let ts = self.at(c, ts);
        let (pid, prio) = (self.tasks[task].pid, self.tasks[task].prio);
        let p = &mut self.cpus[c].pending;
        let comm = p.intern(&self.tasks[task]);
        p.cs.waking_timestamp.push(ts - p.last_waking);
        p.last_waking = ts;
        p.cs.waking_pid.push(pid);
        p.cs.waking_target_cpu.push(target as i32);
        p.cs.waking_prio.push(prio);
        p.cs.waking_comm_index.push(comm);
        p.rows += 1;
        self.counts.wakings += 1;
        let up = ts + self.us(1, 4);
        let up = self.at(c, up);
        self.counts.wakeups += 1;
        let name = self.tasks[task].comm.clone();
        self.event(
            c,
            up,
            Body::SchedWakeup(SchedWakeup {
                comm: Some(name),
                pid: Some(pid),
                prio: Some(prio),
                success: Some(1),
                target_cpu: Some(target as i32),
            }),
        );
        self.tasks[task].state = State::Queued;
        self.tasks[task].ready = up + 1000;
        let tc = &mut self.cpus[target];
        tc.rq.push_back(task);
        let running = self.tasks[tc.cur].prio;
        if self.tasks[tc.cur].pid == 0 {
            // An idle CPU is kicked: it leaves idle soon after.
            let soon = up + self.rng.range(5_000, 60_000);
            tc.clock = tc.clock.min(soon.max(tc.last + 1000));
        } else if prio < running {
            tc.resched = true;
            if target != c {
                let soon = up + self.rng.range(3_000, 30_000);
                tc.clock = tc.clock.min(soon.max(tc.last + 1000));
            }
        }
    }

    /// An interrupt on CPU `c` at `ts`: the timer's (with its hrtimer expiring, sometimes
    /// waking a task) or a device's, maybe raising a softirq run on the way out.
    fn interrupt(&mut self, c: usize, ts: u64, timer: bool) {
        let (irq, name) = if timer {
            IRQS[0]
        } else {
            *self.rng.pick(&IRQS[1..])
        };
        let ts = self.at(c, ts);
        self.counts.irq_entries += 1;
        self.event(
            c,
            ts,
            Body::IrqHandlerEntry(IrqHandlerEntry {
                irq: Some(irq),
                name: Some(name.to_string()),
            }),
        );
        let mut now = ts;
        if timer {
            now = self.after(c, now, 500, 2000);
            self.hrtimer += 0x40;
            let hrtimer = self.hrtimer;
            let wakes = self.rng.chance(300);
            self.counts.hrtimer_expire_entries += 1;
            self.event(
                c,
                now,
                Body::HrtimerExpireEntry(HrtimerExpireEntry {
                    hrtimer: Some(hrtimer),
                    now: Some(now as i64),
                    function: Some(if wakes { KSYM_WAKEUP } else { KSYM_TICK }),
                }),
            );
            if wakes {
                self.wake(c, now + 300);
            }
            now = self.after(c, self.cpus[c].last, 500, 5000);
            self.counts.hrtimer_expire_exits += 1;
            self.event(
                c,
                now,
                Body::HrtimerExpireExit(HrtimerExpireExit {
                    hrtimer: Some(hrtimer),
                }),
            );
        }
        let vec = self.rng.chance(300).then(|| *self.rng.pick(&SOFTIRQS));
        if let Some(vec) = vec {
            now = self.at(c, now + 300);
            self.counts.softirq_raises += 1;
            self.event(c, now, Body::SoftirqRaise(Softirq { vec: Some(vec) }));
        }
        now = self.after(c, now, 1000, 12_000);
        self.counts.irq_exits += 1;
        self.event(
            c,
            now,
            Body::IrqHandlerExit(IrqHandlerExit {
                irq: Some(irq),
                ret: Some(1),
            }),
        );
        if let Some(vec) = vec {
            now = self.at(c, now + 500);
            self.counts.softirq_entries += 1;
            self.event(c, now, Body::SoftirqEntry(Softirq { vec: Some(vec) }));
            now = self.after(c, now, 2000, 40_000);
            self.counts.softirq_exits += 1;
            self.event(c, now, Body::SoftirqExit(Softirq { vec: Some(vec) }));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The packets of a written trace, decoded with the writer's own messages.
    fn packets(bytes: &[u8]) -> Vec<TracePacket> {
        let mut rest = bytes;
        let mut out = Vec::new();
        while !rest.is_empty() {
            assert_eq!(rest[0], 0x0a, "every element is Trace.packet (field 1)");
            rest = &rest[1..];
            let len = prost::encoding::decode_varint(&mut rest).unwrap() as usize;
            out.push(TracePacket::decode(&rest[..len]).unwrap());
            rest = &rest[len..];
        }
        out
    }

    #[test]
    fn bundles_in_the_shape_phones_write() {
        let spec = CompactSpec {
            cpus: 4,
            ..CompactSpec::new(20_000)
        };
        let mut bytes = Vec::new();
        let n = write_compact(&mut bytes, &spec).unwrap();
        let packets = packets(&bytes);
        assert_eq!(packets.len() as u64, n.packets);
        let ftrace: Vec<&TracePacket> = packets
            .iter()
            .filter(|p| p.trusted_packet_sequence_id == Some(SEQ_FTRACE))
            .collect();
        assert_eq!(ftrace.len() as u64, n.bundles);
        // The sequence's first packet clears its state and interns the kernel symbols.
        assert_eq!(
            ftrace[0].sequence_flags,
            Some(SEQ_CLEARED | SEQ_NEEDS_STATE)
        );
        let syms = &ftrace[0].interned_data.as_ref().unwrap().kernel_symbols;
        assert_eq!(syms.len(), KSYMS.len());
        assert!(ftrace[1..].iter().all(|p| p.interned_data.is_none()));
        let (mut rows, mut events, mut last_switch) = (0, 0, vec![0u64; 4]);
        for p in &ftrace {
            let Some(Data::FtraceEvents(b)) = &p.data else {
                panic!("not a bundle")
            };
            assert!(b.event.len() <= spec.bundle_events);
            assert!(b.event.iter().all(|e| e.body.is_some() && e.pid.is_some()));
            events += b.event.len() as u64;
            let Some(cs) = &b.compact_sched else { continue };
            let sw = cs.switch_timestamp.len();
            let wk = cs.waking_timestamp.len();
            assert_eq!(
                [sw, sw, sw, sw],
                [
                    cs.switch_prev_state.len(),
                    cs.switch_next_pid.len(),
                    cs.switch_next_prio.len(),
                    cs.switch_next_comm_index.len()
                ]
            );
            assert_eq!(
                [wk, wk, wk, wk],
                [
                    cs.waking_pid.len(),
                    cs.waking_target_cpu.len(),
                    cs.waking_prio.len(),
                    cs.waking_comm_index.len()
                ]
            );
            let table = cs.intern_table.len() as u32;
            assert!(cs.switch_next_comm_index.iter().all(|&i| i < table));
            assert!(cs.waking_comm_index.iter().all(|&i| i < table));
            // Each comm once per bundle.
            let mut names = cs.intern_table.clone();
            names.sort();
            names.dedup();
            assert_eq!(names.len(), cs.intern_table.len());
            // The first delta of a column is absolute, in time after the CPU's last switch.
            let cpu = b.cpu.unwrap() as usize;
            if sw > 0 {
                assert!(cs.switch_timestamp[0] > last_switch[cpu]);
                last_switch[cpu] = cs.switch_timestamp.iter().sum();
            }
            rows += (sw + wk) as u64;
        }
        assert_eq!(rows, n.switches + n.wakings);
        assert_eq!(events + rows, n.events());
    }
}
