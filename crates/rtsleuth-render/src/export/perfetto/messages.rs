//! The Perfetto messages only writing needs (field numbers from Perfetto's
//! `protos/perfetto/trace/**.proto`). The ftrace payloads, interned symbols and process trees
//! are the reader's own structs ([`rtsleuth_trace::read::perfetto::messages`]): one declaration per
//! message, so what is written is exactly what is read back.
//!
//! The packet is declared again rather than extending the reader's: the reader must keep
//! skipping track events by their length instead of decoding them.

use prost::{Message, Oneof};
use rtsleuth_trace::read::perfetto::messages::{FtraceEventBundle, InternedData, ProcessTree};

/// `TracePacket`, with the fields the export sets.
#[derive(Clone, PartialEq, Message)]
pub struct TracePacket {
    /// Boot-clock nanoseconds (the default clock of both ftrace and track events).
    #[prost(uint64, optional, tag = "8")]
    pub timestamp: Option<u64>,
    #[prost(uint32, optional, tag = "10")]
    pub trusted_packet_sequence_id: Option<u32>,
    #[prost(message, optional, tag = "12")]
    pub interned_data: Option<InternedData>,
    /// [`SEQ_INCREMENTAL_STATE_CLEARED`] on a sequence's first packet.
    #[prost(uint32, optional, tag = "13")]
    pub sequence_flags: Option<u32>,
    #[prost(oneof = "Data", tags = "1, 2, 11, 60")]
    pub data: Option<Data>,
}

/// The sequence's interning tables start empty here (`TracePacket.SequenceFlags`).
pub const SEQ_INCREMENTAL_STATE_CLEARED: u32 = 1;

#[allow(clippy::large_enum_variant)]
#[derive(Clone, PartialEq, Oneof)]
pub enum Data {
    #[prost(message, tag = "1")]
    FtraceEvents(FtraceEventBundle),
    #[prost(message, tag = "2")]
    ProcessTree(ProcessTree),
    #[prost(message, tag = "11")]
    TrackEvent(TrackEvent),
    #[prost(message, tag = "60")]
    TrackDescriptor(TrackDescriptor),
}

/// A slice begin or end, or an instant, on a track.
#[derive(Clone, PartialEq, Message)]
pub struct TrackEvent {
    #[prost(enumeration = "EventType", optional, tag = "9")]
    pub r#type: Option<i32>,
    #[prost(uint64, optional, tag = "11")]
    pub track_uuid: Option<u64>,
    #[prost(string, optional, tag = "23")]
    pub name: Option<String>,
    #[prost(message, repeated, tag = "4")]
    pub debug_annotations: Vec<DebugAnnotation>,
    /// Flows leaving this slice (an arrow in the UI to the slice that terminates them).
    #[prost(fixed64, repeated, tag = "47")]
    pub flow_ids: Vec<u64>,
    /// Flows ending at this slice.
    #[prost(fixed64, repeated, tag = "48")]
    pub terminating_flow_ids: Vec<u64>,
}

/// `TrackEvent.Type`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, prost::Enumeration)]
#[repr(i32)]
pub enum EventType {
    SliceBegin = 1,
    SliceEnd = 2,
    Instant = 3,
}

/// A named argument of a track event, shown in the UI's slice details.
#[derive(Clone, PartialEq, Message)]
pub struct DebugAnnotation {
    #[prost(string, optional, tag = "10")]
    pub name: Option<String>,
    #[prost(int64, optional, tag = "4")]
    pub int_value: Option<i64>,
    #[prost(string, optional, tag = "6")]
    pub string_value: Option<String>,
}

/// A track: a thread's own (`thread` set) or a named one under `parent_uuid`.
#[derive(Clone, PartialEq, Message)]
pub struct TrackDescriptor {
    #[prost(uint64, optional, tag = "1")]
    pub uuid: Option<u64>,
    #[prost(uint64, optional, tag = "5")]
    pub parent_uuid: Option<u64>,
    #[prost(string, optional, tag = "2")]
    pub name: Option<String>,
    #[prost(message, optional, tag = "4")]
    pub thread: Option<ThreadDescriptor>,
}

#[derive(Clone, PartialEq, Message)]
pub struct ThreadDescriptor {
    /// The thread group (process) id.
    #[prost(int32, optional, tag = "1")]
    pub pid: Option<i32>,
    #[prost(int32, optional, tag = "2")]
    pub tid: Option<i32>,
    #[prost(string, optional, tag = "5")]
    pub thread_name: Option<String>,
}
