//! The few Perfetto protobuf messages the reader needs, written by hand with `prost` derives
//! (field numbers from Perfetto's `protos/perfetto/trace/**.proto`). Everything else in a
//! trace (track events, perf samples, configs…) is skipped by `prost` as unknown fields, so
//! its cost is one length-prefixed skip.
//!
//! Only the fields the reader uses are declared: a field left out is skipped, which also keeps
//! old and new Perfetto versions decodable where a field changed its type.

use super::checked_bundle::CheckedBundle;
use prost::{Message, Oneof};

/// One element of the `Trace { repeated TracePacket packet = 1; }` stream.
#[derive(Clone, PartialEq, Message)]
pub struct TracePacket {
    /// When the packet's data was collected (boot clock, like the ftrace events by default).
    #[prost(uint64, optional, tag = "8")]
    pub timestamp: Option<u64>,
    /// The writer sequence: packets of one sequence arrive in the order they were written.
    #[prost(uint32, optional, tag = "10")]
    pub trusted_packet_sequence_id: Option<u32>,
    /// Non-zero when packets of this sequence were lost before this one (also set on the first
    /// packet of every sequence).
    #[prost(uint32, optional, tag = "42")]
    pub previous_packet_dropped: Option<u32>,
    /// New entries of the sequence's interning tables.
    #[prost(message, optional, tag = "12")]
    pub interned_data: Option<InternedData>,
    /// Bit 0 (SEQ_INCREMENTAL_STATE_CLEARED): the sequence's interning tables start afresh.
    #[prost(uint32, optional, tag = "13")]
    pub sequence_flags: Option<u32>,
    /// The same, as older Perfetto versions write it.
    #[prost(bool, optional, tag = "41")]
    pub incremental_state_cleared: Option<bool>,
    #[prost(oneof = "Data", tags = "1, 2, 34, 45, 50")]
    pub data: Option<Data>,
}

/// One packet is decoded at a time and taken apart at once, so the variants' sizes do not
/// matter.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, PartialEq, Oneof)]
pub enum Data {
    #[prost(message, tag = "1")]
    FtraceEvents(CheckedBundle),
    #[prost(message, tag = "2")]
    ProcessTree(ProcessTree),
    #[prost(message, tag = "34")]
    FtraceStats(FtraceStats),
    #[prost(message, tag = "45")]
    SystemInfo(SystemInfo),
    /// Deflate-compressed packets (`--compress`); not read, only reported.
    #[prost(bytes = "vec", tag = "50")]
    CompressedPackets(Vec<u8>),
}

/// The recording machine, written once at the start of a trace.
#[derive(Clone, PartialEq, Message)]
pub struct SystemInfo {
    #[prost(message, optional, tag = "1")]
    pub utsname: Option<Utsname>,
}

/// `uname(2)` without the host name.
#[derive(Clone, PartialEq, Message)]
pub struct Utsname {
    /// `uname -r`.
    #[prost(string, optional, tag = "3")]
    pub release: Option<String>,
}

#[derive(Clone, PartialEq, Message)]
pub struct InternedData {
    /// Kernel function names (`FtraceConfig.symbolize_ksyms`), by the index ftrace events
    /// carry in their function fields.
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

/// The events read from one CPU's kernel ring buffer in one go, in time order.
#[derive(Clone, PartialEq, Message)]
pub struct FtraceEventBundle {
    #[prost(uint32, optional, tag = "1")]
    pub cpu: Option<u32>,
    #[prost(message, repeated, tag = "2")]
    pub event: Vec<FtraceEvent>,
    /// The kernel lost events on this CPU between the previous bundle and this one.
    #[prost(bool, optional, tag = "3")]
    pub lost_events: Option<bool>,
    #[prost(message, optional, tag = "4")]
    pub compact_sched: Option<CompactSched>,
    /// Set when the ftrace clock is not `boot` (1 unknown, 2 global, 3 local, 4 mono_raw).
    #[prost(int32, optional, tag = "5")]
    pub ftrace_clock: Option<i32>,
    /// Places where Perfetto could not parse the ring buffer: it skipped the rest of that
    /// kernel page, so its events are missing.
    #[prost(message, repeated, tag = "8")]
    pub error: Vec<FtraceError>,
    /// A kernel page Perfetto could not parse, kept raw (Android, `debug_ftrace_abi`): its
    /// events are missing.
    #[prost(bytes = "vec", optional, tag = "512")]
    pub broken_abi_trace_page: Option<Vec<u8>>,
    // The fields below are not used; they are declared so that their wire types are checked.
    // Undeclared, they would be skipped unseen, and a damaged key that turns an `event` into
    // one of them would lose that event without a word (see `checked_bundle`).
    #[prost(int64, optional, tag = "6")]
    pub ftrace_timestamp: Option<i64>,
    #[prost(int64, optional, tag = "7")]
    pub boot_timestamp: Option<i64>,
    #[prost(uint64, optional, tag = "9")]
    pub last_read_event_timestamp: Option<u64>,
    #[prost(uint64, optional, tag = "10")]
    pub previous_bundle_end_timestamp: Option<u64>,
    #[prost(message, repeated, tag = "11")]
    pub generic_event_descriptors: Vec<GenericEventDescriptor>,
}

/// Field numbers of [`FtraceEventBundle`], for the decoders written by hand that read a few
/// of its fields (the skim's `BundleCpu`, the capped `CheckedBundle`).
pub mod bundle_field {
    pub const CPU: u32 = 1;
    pub const EVENT: u32 = 2;
    pub const COMPACT_SCHED: u32 = 4;
}

/// Field numbers of [`TracePacket`], for the skim's `TreePacket`, written by hand.
pub mod packet_field {
    pub const FTRACE_EVENTS: u32 = 1;
    pub const PROCESS_TREE: u32 = 2;
    pub const TIMESTAMP: u32 = 8;
}

#[derive(Clone, PartialEq, Message)]
pub struct FtraceError {
    /// The ftrace clock time of the page holding the record that did not parse.
    #[prost(uint64, optional, tag = "1")]
    pub timestamp: Option<u64>,
    /// Perfetto's `FtraceParseStatus`.
    #[prost(int32, optional, tag = "2")]
    pub status: Option<i32>,
}

/// Declared for its wire types only (see `FtraceEventBundle`).
#[derive(Clone, PartialEq, Message)]
pub struct GenericEventDescriptor {
    #[prost(int32, optional, tag = "1")]
    pub field_id: Option<i32>,
    #[prost(bytes = "vec", optional, tag = "2")]
    pub event_descriptor: Option<Vec<u8>>,
    #[prost(string, optional, tag = "3")]
    pub group_name: Option<String>,
}

/// `sched_switch` and `sched_waking` of a bundle as columns: timestamps delta-coded from the
/// previous event of the same column (the first absolute), comms as indices into
/// `intern_table`. A compact switch has no `prev_*`: they are the `next_*` of the CPU's
/// previous switch.
#[derive(Clone, PartialEq, Message)]
pub struct CompactSched {
    #[prost(string, repeated, tag = "5")]
    pub intern_table: Vec<String>,
    #[prost(uint64, repeated, tag = "1")]
    pub switch_timestamp: Vec<u64>,
    #[prost(int64, repeated, tag = "2")]
    pub switch_prev_state: Vec<i64>,
    #[prost(int32, repeated, tag = "3")]
    pub switch_next_pid: Vec<i32>,
    #[prost(int32, repeated, tag = "4")]
    pub switch_next_prio: Vec<i32>,
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
    /// Nanoseconds on the ftrace clock.
    #[prost(uint64, optional, tag = "1")]
    pub timestamp: Option<u64>,
    /// The task that was running (the kernel's `common_pid`).
    #[prost(uint32, optional, tag = "2")]
    pub pid: Option<u32>,
    #[prost(
        oneof = "Body",
        tags = "3, 4, 11, 13, 17, 18, 20, 21, 22, 23, 24, 25, 26, 36, 37, 56, 57, 58, 59, 113, 114, 235, 236, 237, 238, 239, 240, 326, 327, 329, 330, 353, 408, 491, 551, 552, 553, 554"
    )]
    pub body: Option<Body>,
}

impl Body {
    /// The kernel function the event names: an address, or with `symbolize_ksyms` an index
    /// into the sequence's interned `kernel_symbols`.
    pub fn function(&self) -> Option<u64> {
        match self {
            Body::HrtimerStart(e) => e.function,
            Body::HrtimerExpireEntry(e) => e.function,
            Body::WorkqueueQueueWork(e) => e.function,
            Body::WorkqueueExecuteStart(e) | Body::WorkqueueExecuteEnd(e) => e.function,
            Body::SchedBlockedReason(e) => e.caller,
            _ => None,
        }
    }
}

/// The ftrace events the reader names. Perfetto knows hundreds more; those arrive without a
/// body and are counted, not emitted.
#[derive(Clone, PartialEq, Oneof)]
pub enum Body {
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
    #[prost(message, tag = "18")]
    SchedBlockedReason(SchedBlockedReason),
    #[prost(message, tag = "20")]
    SchedWaking(SchedWakeup),
    #[prost(message, tag = "21")]
    IpiEntry(Ipi),
    #[prost(message, tag = "22")]
    IpiExit(Ipi),
    #[prost(message, tag = "23")]
    IpiRaise(IpiRaise),
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
    #[prost(message, tag = "56")]
    WorkqueueActivateWork(Work),
    #[prost(message, tag = "57")]
    WorkqueueExecuteEnd(Work),
    #[prost(message, tag = "58")]
    WorkqueueExecuteStart(Work),
    #[prost(message, tag = "59")]
    WorkqueueQueueWork(QueueWork),
    #[prost(message, tag = "113")]
    SuspendResume(SuspendResume),
    #[prost(message, tag = "114")]
    SchedWakeupNew(SchedWakeup),
    #[prost(message, tag = "235")]
    TaskNewtask(TaskNewtask),
    #[prost(message, tag = "236")]
    TaskRename(TaskRename),
    #[prost(message, tag = "237")]
    SchedProcessExec(SchedProcessExec),
    #[prost(message, tag = "238")]
    SchedProcessExit(SchedProcessExit),
    #[prost(message, tag = "239")]
    SchedProcessFork(SchedProcessFork),
    #[prost(message, tag = "240")]
    SchedProcessFree(SchedProcessFree),
    #[prost(message, tag = "326")]
    OomScoreAdjUpdate(OomScoreAdjUpdate),
    /// An event Perfetto had no proto for when it was built, described by name and fields.
    #[prost(message, tag = "327")]
    Generic(Generic),
    #[prost(message, tag = "329")]
    SysEnter(SysEnter),
    #[prost(message, tag = "330")]
    SysExit(SysExit),
    #[prost(message, tag = "353")]
    SchedPiSetprio(SchedPiSetprio),
    #[prost(message, tag = "408")]
    Console(Console),
    #[prost(message, tag = "491")]
    SchedMigrateTask(SchedMigrateTask),
    #[prost(message, tag = "551")]
    HrtimerStart(HrtimerStart),
    #[prost(message, tag = "552")]
    HrtimerCancel(Hrtimer),
    #[prost(message, tag = "553")]
    HrtimerExpireEntry(HrtimerExpireEntry),
    #[prost(message, tag = "554")]
    HrtimerExpireExit(Hrtimer),
}

#[derive(Clone, PartialEq, Message)]
pub struct Print {
    #[prost(string, optional, tag = "2")]
    pub buf: Option<String>,
}

#[derive(Clone, PartialEq, Message)]
pub struct SchedSwitch {
    #[prost(string, optional, tag = "1")]
    pub prev_comm: Option<String>,
    #[prost(int32, optional, tag = "2")]
    pub prev_pid: Option<i32>,
    #[prost(int32, optional, tag = "3")]
    pub prev_prio: Option<i32>,
    /// The kernel's `prev_state` bits (4.14 and later: 0x1 S … 0x80 I, 0x100 preempted).
    #[prost(int64, optional, tag = "4")]
    pub prev_state: Option<i64>,
    #[prost(string, optional, tag = "5")]
    pub next_comm: Option<String>,
    #[prost(int32, optional, tag = "6")]
    pub next_pid: Option<i32>,
    #[prost(int32, optional, tag = "7")]
    pub next_prio: Option<i32>,
}

/// `sched_wakeup`, `sched_waking` and `sched_wakeup_new` share one layout.
#[derive(Clone, PartialEq, Message)]
pub struct SchedWakeup {
    #[prost(string, optional, tag = "1")]
    pub comm: Option<String>,
    #[prost(int32, optional, tag = "2")]
    pub pid: Option<i32>,
    #[prost(int32, optional, tag = "3")]
    pub prio: Option<i32>,
    #[prost(int32, optional, tag = "5")]
    pub target_cpu: Option<i32>,
}

#[derive(Clone, PartialEq, Message)]
pub struct SchedBlockedReason {
    #[prost(int32, optional, tag = "1")]
    pub pid: Option<i32>,
    #[prost(uint64, optional, tag = "2")]
    pub caller: Option<u64>,
    #[prost(uint32, optional, tag = "3")]
    pub io_wait: Option<u32>,
}

#[derive(Clone, PartialEq, Message)]
pub struct SchedMigrateTask {
    #[prost(string, optional, tag = "1")]
    pub comm: Option<String>,
    #[prost(int32, optional, tag = "2")]
    pub pid: Option<i32>,
    #[prost(int32, optional, tag = "3")]
    pub prio: Option<i32>,
    #[prost(int32, optional, tag = "4")]
    pub orig_cpu: Option<i32>,
    #[prost(int32, optional, tag = "5")]
    pub dest_cpu: Option<i32>,
}

#[derive(Clone, PartialEq, Message)]
pub struct SchedProcessFork {
    #[prost(string, optional, tag = "1")]
    pub parent_comm: Option<String>,
    #[prost(int32, optional, tag = "2")]
    pub parent_pid: Option<i32>,
    #[prost(string, optional, tag = "3")]
    pub child_comm: Option<String>,
    #[prost(int32, optional, tag = "4")]
    pub child_pid: Option<i32>,
}

#[derive(Clone, PartialEq, Message)]
pub struct SchedProcessExit {
    #[prost(string, optional, tag = "1")]
    pub comm: Option<String>,
    #[prost(int32, optional, tag = "2")]
    pub pid: Option<i32>,
    #[prost(int32, optional, tag = "4")]
    pub prio: Option<i32>,
}

#[derive(Clone, PartialEq, Message)]
pub struct SchedProcessFree {
    #[prost(string, optional, tag = "1")]
    pub comm: Option<String>,
    #[prost(int32, optional, tag = "2")]
    pub pid: Option<i32>,
    #[prost(int32, optional, tag = "3")]
    pub prio: Option<i32>,
}

#[derive(Clone, PartialEq, Message)]
pub struct SchedProcessExec {
    #[prost(string, optional, tag = "1")]
    pub filename: Option<String>,
    #[prost(int32, optional, tag = "2")]
    pub pid: Option<i32>,
    #[prost(int32, optional, tag = "3")]
    pub old_pid: Option<i32>,
}

#[derive(Clone, PartialEq, Message)]
pub struct SchedPiSetprio {
    #[prost(string, optional, tag = "1")]
    pub comm: Option<String>,
    #[prost(int32, optional, tag = "2")]
    pub newprio: Option<i32>,
    #[prost(int32, optional, tag = "3")]
    pub oldprio: Option<i32>,
    #[prost(int32, optional, tag = "4")]
    pub pid: Option<i32>,
}

/// `cpu_idle` and `cpu_frequency`: a state (C-state index or kHz) and the CPU it is for.
#[derive(Clone, PartialEq, Message)]
pub struct CpuState {
    #[prost(uint32, optional, tag = "1")]
    pub state: Option<u32>,
    #[prost(uint32, optional, tag = "2")]
    pub cpu_id: Option<u32>,
}

#[derive(Clone, PartialEq, Message)]
pub struct SuspendResume {
    #[prost(string, optional, tag = "1")]
    pub action: Option<String>,
    #[prost(int32, optional, tag = "2")]
    pub val: Option<i32>,
    #[prost(uint32, optional, tag = "3")]
    pub start: Option<u32>,
}

#[derive(Clone, PartialEq, Message)]
pub struct Ipi {
    #[prost(string, optional, tag = "1")]
    pub reason: Option<String>,
}

#[derive(Clone, PartialEq, Message)]
pub struct IpiRaise {
    #[prost(uint32, optional, tag = "1")]
    pub target_cpus: Option<u32>,
    #[prost(string, optional, tag = "2")]
    pub reason: Option<String>,
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

/// `workqueue_activate_work`, `_execute_start` and `_execute_end`; `function` is a kernel
/// address.
#[derive(Clone, PartialEq, Message)]
pub struct Work {
    #[prost(uint64, optional, tag = "1")]
    pub work: Option<u64>,
    #[prost(uint64, optional, tag = "2")]
    pub function: Option<u64>,
}

/// `workqueue_queue_work`. Older Perfetto versions put the workqueue in field 3 (first as a
/// pointer, then as a string); only the current field 6 is read.
#[derive(Clone, PartialEq, Message)]
pub struct QueueWork {
    #[prost(uint64, optional, tag = "1")]
    pub work: Option<u64>,
    #[prost(uint64, optional, tag = "2")]
    pub function: Option<u64>,
    #[prost(int32, optional, tag = "4")]
    pub req_cpu: Option<i32>,
    #[prost(int32, optional, tag = "5")]
    pub cpu: Option<i32>,
    #[prost(string, optional, tag = "6")]
    pub workqueue: Option<String>,
}

#[derive(Clone, PartialEq, Message)]
pub struct TaskNewtask {
    #[prost(int32, optional, tag = "1")]
    pub pid: Option<i32>,
    #[prost(string, optional, tag = "2")]
    pub comm: Option<String>,
    #[prost(uint64, optional, tag = "3")]
    pub clone_flags: Option<u64>,
    #[prost(int32, optional, tag = "4")]
    pub oom_score_adj: Option<i32>,
}

#[derive(Clone, PartialEq, Message)]
pub struct TaskRename {
    #[prost(int32, optional, tag = "1")]
    pub pid: Option<i32>,
    #[prost(string, optional, tag = "2")]
    pub oldcomm: Option<String>,
    #[prost(string, optional, tag = "3")]
    pub newcomm: Option<String>,
    #[prost(int32, optional, tag = "4")]
    pub oom_score_adj: Option<i32>,
}

#[derive(Clone, PartialEq, Message)]
pub struct OomScoreAdjUpdate {
    #[prost(string, optional, tag = "1")]
    pub comm: Option<String>,
    #[prost(int32, optional, tag = "2")]
    pub oom_score_adj: Option<i32>,
    #[prost(int32, optional, tag = "3")]
    pub pid: Option<i32>,
}

#[derive(Clone, PartialEq, Message)]
pub struct Generic {
    #[prost(string, optional, tag = "1")]
    pub event_name: Option<String>,
    #[prost(message, repeated, tag = "2")]
    pub field: Vec<GenericField>,
}

#[derive(Clone, PartialEq, Message)]
pub struct GenericField {
    #[prost(string, optional, tag = "1")]
    pub name: Option<String>,
    #[prost(oneof = "GenericValue", tags = "3, 4, 5")]
    pub value: Option<GenericValue>,
}

#[derive(Clone, PartialEq, Oneof)]
pub enum GenericValue {
    #[prost(string, tag = "3")]
    Str(String),
    #[prost(int64, tag = "4")]
    Int(i64),
    #[prost(uint64, tag = "5")]
    Uint(u64),
}

#[derive(Clone, PartialEq, Message)]
pub struct SysEnter {
    #[prost(int64, optional, tag = "1")]
    pub id: Option<i64>,
    #[prost(uint64, repeated, tag = "2")]
    pub args: Vec<u64>,
}

#[derive(Clone, PartialEq, Message)]
pub struct SysExit {
    #[prost(int64, optional, tag = "1")]
    pub id: Option<i64>,
    #[prost(int64, optional, tag = "2")]
    pub ret: Option<i64>,
}

#[derive(Clone, PartialEq, Message)]
pub struct Console {
    #[prost(string, optional, tag = "1")]
    pub msg: Option<String>,
}

#[derive(Clone, PartialEq, Message)]
pub struct HrtimerStart {
    #[prost(uint64, optional, tag = "1")]
    pub hrtimer: Option<u64>,
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

/// `hrtimer_cancel` and `hrtimer_expire_exit`.
#[derive(Clone, PartialEq, Message)]
pub struct Hrtimer {
    #[prost(uint64, optional, tag = "1")]
    pub hrtimer: Option<u64>,
}

/// Names of threads and processes, from `/proc`, written at the start (and on new pids).
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

/// The kernel's per-CPU ring-buffer counters, written at the start and at the end of a trace.
#[derive(Clone, PartialEq, Message)]
pub struct FtraceStats {
    /// 1 at the start of the trace, 2 at its end.
    #[prost(int32, optional, tag = "1")]
    pub phase: Option<i32>,
    #[prost(message, repeated, tag = "2")]
    pub cpu_stats: Vec<FtraceCpuStats>,
}

#[derive(Clone, PartialEq, Message)]
pub struct FtraceCpuStats {
    #[prost(uint64, optional, tag = "1")]
    pub cpu: Option<u64>,
    /// Events overwritten before they were read (overwrite mode).
    #[prost(uint64, optional, tag = "3")]
    pub overrun: Option<u64>,
    /// Events dropped because the buffer was full (non-overwrite mode).
    #[prost(uint64, optional, tag = "8")]
    pub dropped_events: Option<u64>,
}
