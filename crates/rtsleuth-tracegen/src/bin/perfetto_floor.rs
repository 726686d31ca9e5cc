//! `perfetto_floor TRACE`: the "prost decode-only" floor of `bench/perfetto.sh`.
//!
//! Decodes every `TracePacket` of a Perfetto trace with `prost` into Perfetto's message
//! structure (Trace → TracePacket → FtraceEventBundle → FtraceEvent / CompactSched) and
//! touches each event's timestamp and type, nothing more: no ordering, no naming, no
//! analysis. It is what any prost-based reader pays before doing its work, so rtsleuth's time
//! over this one is the cost of everything rtsleuth does beyond decoding.
//!
//! The messages are declared here, independently of rtsleuth's reader, with the fields
//! Perfetto's protos give them (`protos/perfetto/trace/ftrace/*.proto`) for the events the
//! benchmark traces hold; an event type not declared is still counted (as having no body),
//! other packets (process trees, perf samples, …) are skipped as unknown fields.
//!
//! Reads the file in 256 KiB blocks, one packet at a time, on one thread. Prints
//! `events N packets P bundles B` (N: ordinary events plus compact switch and waking rows).

use prost::{Message, Oneof};
use std::fs::File;
use std::io::{self, BufReader, Read};
use std::process::ExitCode;

#[derive(Clone, PartialEq, Message)]
struct TracePacket {
    #[prost(message, optional, tag = "1")]
    ftrace_events: Option<FtraceEventBundle>,
}

#[derive(Clone, PartialEq, Message)]
struct FtraceEventBundle {
    #[prost(uint32, optional, tag = "1")]
    cpu: Option<u32>,
    #[prost(message, repeated, tag = "2")]
    event: Vec<FtraceEvent>,
    #[prost(message, optional, tag = "4")]
    compact_sched: Option<CompactSched>,
}

#[derive(Clone, PartialEq, Message)]
struct CompactSched {
    #[prost(uint64, repeated, tag = "1")]
    switch_timestamp: Vec<u64>,
    #[prost(int64, repeated, tag = "2")]
    switch_prev_state: Vec<i64>,
    #[prost(int32, repeated, tag = "3")]
    switch_next_pid: Vec<i32>,
    #[prost(int32, repeated, tag = "4")]
    switch_next_prio: Vec<i32>,
    #[prost(string, repeated, tag = "5")]
    intern_table: Vec<String>,
    #[prost(uint32, repeated, tag = "6")]
    switch_next_comm_index: Vec<u32>,
    #[prost(uint64, repeated, tag = "7")]
    waking_timestamp: Vec<u64>,
    #[prost(int32, repeated, tag = "8")]
    waking_pid: Vec<i32>,
    #[prost(int32, repeated, tag = "9")]
    waking_target_cpu: Vec<i32>,
    #[prost(int32, repeated, tag = "10")]
    waking_prio: Vec<i32>,
    #[prost(uint32, repeated, tag = "11")]
    waking_comm_index: Vec<u32>,
}

#[derive(Clone, PartialEq, Message)]
struct FtraceEvent {
    #[prost(uint64, optional, tag = "1")]
    timestamp: Option<u64>,
    #[prost(uint32, optional, tag = "2")]
    pid: Option<u32>,
    #[prost(
        oneof = "Body",
        tags = "3, 4, 11, 13, 17, 20, 24, 25, 26, 36, 37, 114, 235, 236, 238, 240, 326, 551, 553, 554"
    )]
    body: Option<Body>,
}

#[derive(Clone, PartialEq, Oneof)]
enum Body {
    #[prost(message, tag = "3")]
    Print(Print),
    #[prost(message, tag = "4")]
    SchedSwitch(SchedSwitch),
    #[prost(message, tag = "11")]
    CpuFrequency(CpuState),
    #[prost(message, tag = "13")]
    CpuIdle(CpuState),
    #[prost(message, tag = "17")]
    SchedWakeup(SchedWakeup),
    #[prost(message, tag = "20")]
    SchedWaking(SchedWakeup),
    #[prost(message, tag = "24")]
    SoftirqEntry(Softirq),
    #[prost(message, tag = "25")]
    SoftirqExit(Softirq),
    #[prost(message, tag = "26")]
    SoftirqRaise(Softirq),
    #[prost(message, tag = "36")]
    IrqHandlerEntry(IrqHandlerEntry),
    #[prost(message, tag = "37")]
    IrqHandlerExit(IrqHandlerExit),
    #[prost(message, tag = "114")]
    SchedWakeupNew(SchedWakeup),
    #[prost(message, tag = "235")]
    TaskNewtask(TaskNewtask),
    #[prost(message, tag = "236")]
    TaskRename(TaskRename),
    #[prost(message, tag = "238")]
    SchedProcessExit(SchedProcessExit),
    #[prost(message, tag = "240")]
    SchedProcessFree(SchedProcessFree),
    #[prost(message, tag = "326")]
    OomScoreAdjUpdate(OomScoreAdjUpdate),
    #[prost(message, tag = "551")]
    HrtimerStart(HrtimerStart),
    #[prost(message, tag = "553")]
    HrtimerExpireEntry(HrtimerExpireEntry),
    #[prost(message, tag = "554")]
    HrtimerExpireExit(Hrtimer),
}

impl Body {
    /// A small number per event type, to touch it.
    fn kind(&self) -> usize {
        match self {
            Body::Print(_) => 1,
            Body::SchedSwitch(_) => 2,
            Body::CpuFrequency(_) => 3,
            Body::CpuIdle(_) => 4,
            Body::SchedWakeup(_) => 5,
            Body::SchedWaking(_) => 6,
            Body::SoftirqEntry(_) => 7,
            Body::SoftirqExit(_) => 8,
            Body::SoftirqRaise(_) => 9,
            Body::IrqHandlerEntry(_) => 10,
            Body::IrqHandlerExit(_) => 11,
            Body::SchedWakeupNew(_) => 12,
            Body::TaskNewtask(_) => 13,
            Body::TaskRename(_) => 14,
            Body::SchedProcessExit(_) => 15,
            Body::SchedProcessFree(_) => 16,
            Body::OomScoreAdjUpdate(_) => 17,
            Body::HrtimerStart(_) => 18,
            Body::HrtimerExpireEntry(_) => 19,
            Body::HrtimerExpireExit(_) => 20,
        }
    }
}

#[derive(Clone, PartialEq, Message)]
struct Print {
    #[prost(uint64, optional, tag = "1")]
    ip: Option<u64>,
    #[prost(string, optional, tag = "2")]
    buf: Option<String>,
}

#[derive(Clone, PartialEq, Message)]
struct SchedSwitch {
    #[prost(string, optional, tag = "1")]
    prev_comm: Option<String>,
    #[prost(int32, optional, tag = "2")]
    prev_pid: Option<i32>,
    #[prost(int32, optional, tag = "3")]
    prev_prio: Option<i32>,
    #[prost(int64, optional, tag = "4")]
    prev_state: Option<i64>,
    #[prost(string, optional, tag = "5")]
    next_comm: Option<String>,
    #[prost(int32, optional, tag = "6")]
    next_pid: Option<i32>,
    #[prost(int32, optional, tag = "7")]
    next_prio: Option<i32>,
}

#[derive(Clone, PartialEq, Message)]
struct CpuState {
    #[prost(uint32, optional, tag = "1")]
    state: Option<u32>,
    #[prost(uint32, optional, tag = "2")]
    cpu_id: Option<u32>,
}

#[derive(Clone, PartialEq, Message)]
struct SchedWakeup {
    #[prost(string, optional, tag = "1")]
    comm: Option<String>,
    #[prost(int32, optional, tag = "2")]
    pid: Option<i32>,
    #[prost(int32, optional, tag = "3")]
    prio: Option<i32>,
    #[prost(int32, optional, tag = "4")]
    success: Option<i32>,
    #[prost(int32, optional, tag = "5")]
    target_cpu: Option<i32>,
}

#[derive(Clone, PartialEq, Message)]
struct Softirq {
    #[prost(uint32, optional, tag = "1")]
    vec: Option<u32>,
}

#[derive(Clone, PartialEq, Message)]
struct IrqHandlerEntry {
    #[prost(int32, optional, tag = "1")]
    irq: Option<i32>,
    #[prost(string, optional, tag = "2")]
    name: Option<String>,
    #[prost(uint32, optional, tag = "3")]
    handler: Option<u32>,
}

#[derive(Clone, PartialEq, Message)]
struct IrqHandlerExit {
    #[prost(int32, optional, tag = "1")]
    irq: Option<i32>,
    #[prost(int32, optional, tag = "2")]
    ret: Option<i32>,
}

#[derive(Clone, PartialEq, Message)]
struct TaskNewtask {
    #[prost(int32, optional, tag = "1")]
    pid: Option<i32>,
    #[prost(string, optional, tag = "2")]
    comm: Option<String>,
    #[prost(uint64, optional, tag = "3")]
    clone_flags: Option<u64>,
    #[prost(int32, optional, tag = "4")]
    oom_score_adj: Option<i32>,
}

#[derive(Clone, PartialEq, Message)]
struct TaskRename {
    #[prost(int32, optional, tag = "1")]
    pid: Option<i32>,
    #[prost(string, optional, tag = "2")]
    oldcomm: Option<String>,
    #[prost(string, optional, tag = "3")]
    newcomm: Option<String>,
    #[prost(int32, optional, tag = "4")]
    oom_score_adj: Option<i32>,
}

#[derive(Clone, PartialEq, Message)]
struct SchedProcessExit {
    #[prost(string, optional, tag = "1")]
    comm: Option<String>,
    #[prost(int32, optional, tag = "2")]
    pid: Option<i32>,
    #[prost(int32, optional, tag = "3")]
    tgid: Option<i32>,
    #[prost(int32, optional, tag = "4")]
    prio: Option<i32>,
}

#[derive(Clone, PartialEq, Message)]
struct SchedProcessFree {
    #[prost(string, optional, tag = "1")]
    comm: Option<String>,
    #[prost(int32, optional, tag = "2")]
    pid: Option<i32>,
    #[prost(int32, optional, tag = "3")]
    prio: Option<i32>,
}

#[derive(Clone, PartialEq, Message)]
struct OomScoreAdjUpdate {
    #[prost(string, optional, tag = "1")]
    comm: Option<String>,
    #[prost(int32, optional, tag = "2")]
    oom_score_adj: Option<i32>,
    #[prost(int32, optional, tag = "3")]
    pid: Option<i32>,
}

#[derive(Clone, PartialEq, Message)]
struct HrtimerStart {
    #[prost(uint64, optional, tag = "1")]
    hrtimer: Option<u64>,
    #[prost(uint64, optional, tag = "2")]
    function: Option<u64>,
    #[prost(int64, optional, tag = "3")]
    expires: Option<i64>,
    #[prost(int64, optional, tag = "4")]
    softexpires: Option<i64>,
    #[prost(uint32, optional, tag = "5")]
    mode: Option<u32>,
}

#[derive(Clone, PartialEq, Message)]
struct HrtimerExpireEntry {
    #[prost(uint64, optional, tag = "1")]
    hrtimer: Option<u64>,
    #[prost(int64, optional, tag = "2")]
    now: Option<i64>,
    #[prost(uint64, optional, tag = "3")]
    function: Option<u64>,
}

#[derive(Clone, PartialEq, Message)]
struct Hrtimer {
    #[prost(uint64, optional, tag = "1")]
    hrtimer: Option<u64>,
}

/// What was touched: per-type counts and a sum of every timestamp (so nothing is optimised
/// away).
#[derive(Default)]
struct Touched {
    by_kind: [u64; 21],
    compact_rows: u64,
    ts_sum: u64,
    packets: u64,
    bundles: u64,
}

impl Touched {
    fn bundle(&mut self, b: FtraceEventBundle) {
        self.bundles += 1;
        for ev in &b.event {
            self.ts_sum = self.ts_sum.wrapping_add(ev.timestamp.unwrap_or(0));
            self.by_kind[ev.body.as_ref().map_or(0, Body::kind)] += 1;
        }
        if let Some(cs) = &b.compact_sched {
            for column in [&cs.switch_timestamp, &cs.waking_timestamp] {
                let mut ts = 0u64;
                for d in column {
                    ts = ts.wrapping_add(*d);
                    self.ts_sum = self.ts_sum.wrapping_add(ts);
                }
                self.compact_rows += column.len() as u64;
            }
        }
    }

    fn events(&self) -> u64 {
        self.by_kind.iter().sum::<u64>() + self.compact_rows
    }
}

/// A varint from `r`, or `None` at a clean end of the stream.
fn varint(r: &mut impl Read) -> io::Result<Option<u64>> {
    let mut value = 0u64;
    for i in 0..10 {
        let mut b = [0u8];
        if r.read(&mut b)? == 0 {
            return match i {
                0 => Ok(None),
                _ => Err(io::ErrorKind::UnexpectedEof.into()),
            };
        }
        value |= u64::from(b[0] & 0x7f) << (7 * i);
        if b[0] < 0x80 {
            return Ok(Some(value));
        }
    }
    Err(io::Error::new(
        io::ErrorKind::InvalidData,
        "varint over 10 bytes",
    ))
}

fn run(path: &str) -> io::Result<Touched> {
    let mut r = BufReader::with_capacity(256 << 10, File::open(path)?);
    let mut buf = Vec::new();
    let mut t = Touched::default();
    while let Some(key) = varint(&mut r)? {
        if key != 0x0a {
            let msg = format!("key {key:#x} where a TracePacket (0x0a) was expected");
            return Err(io::Error::new(io::ErrorKind::InvalidData, msg));
        }
        let len = varint(&mut r)?.ok_or(io::ErrorKind::UnexpectedEof)? as usize;
        buf.resize(len, 0);
        r.read_exact(&mut buf)?;
        let packet = TracePacket::decode(buf.as_slice())
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
        t.packets += 1;
        if let Some(b) = packet.ftrace_events {
            t.bundle(b);
        }
    }
    Ok(t)
}

fn main() -> ExitCode {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: perfetto_floor TRACE");
        return ExitCode::FAILURE;
    };
    match run(&path) {
        Ok(t) => {
            println!(
                "events {} packets {} bundles {} (timestamp sum {:#x})",
                t.events(),
                t.packets,
                t.bundles,
                t.ts_sum
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("perfetto_floor: {path}: {e}");
            ExitCode::FAILURE
        }
    }
}
