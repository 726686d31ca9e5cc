//! The Perfetto messages the generator writes, declared by hand with `prost` derives. Field
//! numbers and types follow Perfetto's `protos/perfetto/trace/` (`trace_packet.proto`,
//! `ftrace/ftrace_event_bundle.proto`, `ftrace/ftrace_event.proto` and the per-group event
//! protos, `interned_data/interned_data.proto`, `ps/process_tree.proto`,
//! `ftrace/ftrace_stats.proto`). Only what the generator fills in is declared.
//!
//! Perfetto's protos are proto2; repeated scalars in `CompactSched` are `[packed = true]`,
//! which is prost's default for repeated scalars.

use prost::{Message, Oneof};

/// One element of `Trace { repeated TracePacket packet = 1; }`.
#[derive(Clone, PartialEq, Message)]
pub struct TracePacket {
    #[prost(uint64, optional, tag = "8")]
    pub timestamp: Option<u64>,
    #[prost(uint32, optional, tag = "10")]
    pub trusted_packet_sequence_id: Option<u32>,
    #[prost(message, optional, tag = "12")]
    pub interned_data: Option<InternedData>,
    /// 1: SEQ_INCREMENTAL_STATE_CLEARED, 2: SEQ_NEEDS_INCREMENTAL_STATE.
    #[prost(uint32, optional, tag = "13")]
    pub sequence_flags: Option<u32>,
    #[prost(bool, optional, tag = "42")]
    pub previous_packet_dropped: Option<bool>,
    #[prost(oneof = "Data", tags = "1, 2, 34, 45")]
    pub data: Option<Data>,
}

#[allow(clippy::large_enum_variant)]
#[derive(Clone, PartialEq, Oneof)]
pub enum Data {
    #[prost(message, tag = "1")]
    FtraceEvents(FtraceEventBundle),
    #[prost(message, tag = "2")]
    ProcessTree(ProcessTree),
    #[prost(message, tag = "34")]
    FtraceStats(FtraceStats),
    #[prost(message, tag = "45")]
    SystemInfo(SystemInfo),
}

#[derive(Clone, PartialEq, Message)]
pub struct SystemInfo {
    #[prost(message, optional, tag = "1")]
    pub utsname: Option<Utsname>,
}

#[derive(Clone, PartialEq, Message)]
pub struct Utsname {
    #[prost(string, optional, tag = "1")]
    pub sysname: Option<String>,
    #[prost(string, optional, tag = "3")]
    pub release: Option<String>,
    #[prost(string, optional, tag = "4")]
    pub machine: Option<String>,
}

#[derive(Clone, PartialEq, Message)]
pub struct InternedData {
    /// `symbolize_ksyms`: kernel function names, by the iid ftrace events carry in their
    /// function fields.
    #[prost(message, repeated, tag = "26")]
    pub kernel_symbols: Vec<InternedString>,
}

#[derive(Clone, PartialEq, Message)]
pub struct InternedString {
    #[prost(uint64, optional, tag = "1")]
    pub iid: Option<u64>,
    #[prost(bytes = "vec", optional, tag = "2")]
    pub str: Option<Vec<u8>>,
}

#[derive(Clone, PartialEq, Message)]
pub struct ProcessTree {
    #[prost(message, repeated, tag = "1")]
    pub processes: Vec<Process>,
    #[prost(message, repeated, tag = "2")]
    pub threads: Vec<Thread>,
}

#[derive(Clone, PartialEq, Message)]
pub struct Process {
    #[prost(int32, optional, tag = "1")]
    pub pid: Option<i32>,
    #[prost(int32, optional, tag = "2")]
    pub ppid: Option<i32>,
    #[prost(string, repeated, tag = "3")]
    pub cmdline: Vec<String>,
}

#[derive(Clone, PartialEq, Message)]
pub struct Thread {
    #[prost(int32, optional, tag = "1")]
    pub tid: Option<i32>,
    #[prost(string, optional, tag = "2")]
    pub name: Option<String>,
    #[prost(int32, optional, tag = "3")]
    pub tgid: Option<i32>,
}

#[derive(Clone, PartialEq, Message)]
pub struct FtraceStats {
    /// 1: START_OF_TRACE, 2: END_OF_TRACE.
    #[prost(int32, optional, tag = "1")]
    pub phase: Option<i32>,
    #[prost(message, repeated, tag = "2")]
    pub cpu_stats: Vec<FtraceCpuStats>,
}

#[derive(Clone, PartialEq, Message)]
pub struct FtraceCpuStats {
    #[prost(uint64, optional, tag = "1")]
    pub cpu: Option<u64>,
    #[prost(uint64, optional, tag = "2")]
    pub entries: Option<u64>,
    #[prost(uint64, optional, tag = "3")]
    pub overrun: Option<u64>,
    #[prost(uint64, optional, tag = "8")]
    pub dropped_events: Option<u64>,
}

/// The events read from one CPU's ring buffer in one go.
#[derive(Clone, PartialEq, Message)]
pub struct FtraceEventBundle {
    #[prost(uint32, optional, tag = "1")]
    pub cpu: Option<u32>,
    #[prost(message, repeated, tag = "2")]
    pub event: Vec<FtraceEvent>,
    #[prost(message, optional, tag = "4")]
    pub compact_sched: Option<CompactSched>,
}

/// `sched_switch` and `sched_waking` as columns. Each timestamp column is delta-coded from
/// the previous row of the same column in the bundle, its first entry absolute; comms are
/// indices into the bundle's `intern_table`.
#[derive(Clone, PartialEq, Message)]
pub struct CompactSched {
    #[prost(uint64, repeated, tag = "1")]
    pub switch_timestamp: Vec<u64>,
    #[prost(int64, repeated, tag = "2")]
    pub switch_prev_state: Vec<i64>,
    #[prost(int32, repeated, tag = "3")]
    pub switch_next_pid: Vec<i32>,
    #[prost(int32, repeated, tag = "4")]
    pub switch_next_prio: Vec<i32>,
    #[prost(string, repeated, tag = "5")]
    pub intern_table: Vec<String>,
    #[prost(uint32, repeated, tag = "6")]
    pub switch_next_comm_index: Vec<u32>,
    #[prost(uint64, repeated, tag = "7")]
    pub waking_timestamp: Vec<u64>,
    #[prost(int32, repeated, tag = "8")]
    pub waking_pid: Vec<i32>,
    #[prost(int32, repeated, tag = "9")]
    pub waking_target_cpu: Vec<i32>,
    #[prost(int32, repeated, tag = "10")]
    pub waking_prio: Vec<i32>,
    #[prost(uint32, repeated, tag = "11")]
    pub waking_comm_index: Vec<u32>,
}

#[derive(Clone, PartialEq, Message)]
pub struct FtraceEvent {
    #[prost(uint64, optional, tag = "1")]
    pub timestamp: Option<u64>,
    /// `common_pid`: the task running when the event was recorded.
    #[prost(uint32, optional, tag = "2")]
    pub pid: Option<u32>,
    #[prost(oneof = "Body", tags = "3, 13, 17, 24, 25, 26, 36, 37, 551, 553, 554")]
    pub body: Option<Body>,
}

#[derive(Clone, PartialEq, Oneof)]
pub enum Body {
    /// `print` (atrace's `tracing_mark_write`).
    #[prost(message, tag = "3")]
    Print(Print),
    #[prost(message, tag = "13")]
    CpuIdle(CpuIdle),
    #[prost(message, tag = "17")]
    SchedWakeup(SchedWakeup),
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
    #[prost(message, tag = "551")]
    HrtimerStart(HrtimerStart),
    #[prost(message, tag = "553")]
    HrtimerExpireEntry(HrtimerExpireEntry),
    #[prost(message, tag = "554")]
    HrtimerExpireExit(HrtimerExpireExit),
}

#[derive(Clone, PartialEq, Message)]
pub struct Print {
    #[prost(uint64, optional, tag = "1")]
    pub ip: Option<u64>,
    #[prost(string, optional, tag = "2")]
    pub buf: Option<String>,
}

#[derive(Clone, PartialEq, Message)]
pub struct CpuIdle {
    #[prost(uint32, optional, tag = "1")]
    pub state: Option<u32>,
    #[prost(uint32, optional, tag = "2")]
    pub cpu_id: Option<u32>,
}

#[derive(Clone, PartialEq, Message)]
pub struct SchedWakeup {
    #[prost(string, optional, tag = "1")]
    pub comm: Option<String>,
    #[prost(int32, optional, tag = "2")]
    pub pid: Option<i32>,
    #[prost(int32, optional, tag = "3")]
    pub prio: Option<i32>,
    #[prost(int32, optional, tag = "4")]
    pub success: Option<i32>,
    #[prost(int32, optional, tag = "5")]
    pub target_cpu: Option<i32>,
}

#[derive(Clone, PartialEq, Message)]
pub struct Softirq {
    #[prost(uint32, optional, tag = "1")]
    pub vec: Option<u32>,
}

#[derive(Clone, PartialEq, Message)]
pub struct IrqHandlerEntry {
    #[prost(int32, optional, tag = "1")]
    pub irq: Option<i32>,
    #[prost(string, optional, tag = "2")]
    pub name: Option<String>,
}

#[derive(Clone, PartialEq, Message)]
pub struct IrqHandlerExit {
    #[prost(int32, optional, tag = "1")]
    pub irq: Option<i32>,
    #[prost(int32, optional, tag = "2")]
    pub ret: Option<i32>,
}

#[derive(Clone, PartialEq, Message)]
pub struct HrtimerStart {
    #[prost(uint64, optional, tag = "1")]
    pub hrtimer: Option<u64>,
    /// With `symbolize_ksyms`, an iid of the sequence's interned `kernel_symbols`.
    #[prost(uint64, optional, tag = "2")]
    pub function: Option<u64>,
    #[prost(int64, optional, tag = "3")]
    pub expires: Option<i64>,
    #[prost(int64, optional, tag = "4")]
    pub softexpires: Option<i64>,
    #[prost(uint32, optional, tag = "5")]
    pub mode: Option<u32>,
}

#[derive(Clone, PartialEq, Message)]
pub struct HrtimerExpireEntry {
    #[prost(uint64, optional, tag = "1")]
    pub hrtimer: Option<u64>,
    #[prost(int64, optional, tag = "2")]
    pub now: Option<i64>,
    #[prost(uint64, optional, tag = "3")]
    pub function: Option<u64>,
}

#[derive(Clone, PartialEq, Message)]
pub struct HrtimerExpireExit {
    #[prost(uint64, optional, tag = "1")]
    pub hrtimer: Option<u64>,
}
