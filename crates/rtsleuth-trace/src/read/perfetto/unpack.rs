//! Unpacking each ftrace bundle into its events as soon as its packet is decoded, on the
//! thread that decodes packets ([`super::ahead`]). What this needs (the kernel symbols each
//! sequence interned, the task each CPU last switched to) comes from the packets in stream
//! order, which that thread sees too, so the thread that merges and hands events on is left
//! with the merge.

use super::bundle::{self, Expanded, Running};
use super::compact::CompactError;
use super::messages::{Data, TracePacket};
use super::symbols::Symbols;
use crate::event::MAX_CPUS;
use rustc_hash::FxHashMap as HashMap;

/// A bundle's events, or why its compact columns could not be unpacked.
pub type Events = Result<Expanded, CompactError>;

/// A packet, and the events of its ftrace bundle when it has one; the bundle keeps its other
/// fields, its events and compact columns having been taken out.
#[derive(Debug)]
pub struct Unpacked {
    pub packet: TracePacket,
    /// `None` for a packet without a bundle, or whose bundle names a CPU no kernel has.
    pub events: Option<Events>,
}

/// What unpacking learns from the packets in order.
#[derive(Default)]
pub struct Unpacker {
    symbols: Symbols,
    /// The task each (sequence, CPU) last switched to.
    running: HashMap<(u32, u32), Running>,
}

impl Unpacker {
    pub fn unpack(&mut self, mut packet: TracePacket) -> Unpacked {
        let seq = packet.trusted_packet_sequence_id.unwrap_or(0);
        let cleared = packet.sequence_flags.unwrap_or(0) & 1 != 0
            || packet.incremental_state_cleared == Some(true);
        self.symbols
            .packet(seq, cleared, packet.interned_data.as_ref());
        let events = match &mut packet.data {
            Some(Data::FtraceEvents(b)) if b.bundle.cpu.unwrap_or(0) < MAX_CPUS => {
                let cpu = b.bundle.cpu.unwrap_or(0);
                let running = self.running.entry((seq, cpu)).or_default();
                let symbols = &self.symbols;
                let events = std::mem::take(&mut b.bundle.event);
                let compact = b.bundle.compact_sched.take();
                Some(bundle::expand(events, compact, running, |id| {
                    symbols.name(seq, id).cloned()
                }))
            }
            _ => None,
        };
        Unpacked { packet, events }
    }
}
