//! Skimming a trace file before reading its events: its process trees, and the CPUs it holds
//! events of.
//!
//! Perfetto writes each trace buffer as a block: the process trees, taken when the trace
//! started, often sit after all the ftrace data. A reader that streams the events would name
//! the tasks of the whole trace only once it reached them; a plain file can be mapped and
//! skimmed for them first (every other packet is skipped by its length), so the tasks are
//! named from the first event whatever the size of the trace. The same skim lists the CPUs
//! with events, so that nothing is measured before every one of them is recorded
//! ([`crate::validity`]): their data reach the buffer on their own schedules.

use super::messages::bundle_field::{COMPACT_SCHED, CPU, EVENT};
use super::messages::ProcessTree;
use super::packets::{Packets, Step};
use crate::input::release::Behind;
use memmap2::Mmap;
use prost::bytes::{Buf, BufMut};
use prost::encoding::{self, DecodeContext, WireType};
use prost::{DecodeError, Message};
use std::collections::BTreeSet;
use std::fs::File;

/// How much of the file is skimmed between two releases of its pages.
const RELEASE_STEP: usize = 8 << 20;

/// A `TracePacket` seen only for its process tree and its bundle's CPU.
#[derive(Clone, PartialEq, Message)]
struct TreePacket {
    #[prost(uint64, optional, tag = "8")]
    timestamp: Option<u64>,
    #[prost(message, optional, tag = "2")]
    process_tree: Option<ProcessTree>,
    #[prost(message, optional, tag = "1")]
    ftrace_events: Option<BundleCpu>,
}

/// An `FtraceEventBundle` seen only for its CPU and whether it holds events. The events and
/// compact columns are stepped over by their length, their insides unread: walking every
/// field of every event cost the skim most of its time, and it ran before any event was read.
/// Like the packet's other fields, which the skim does not read either, their damage is left
/// to the reading proper to find and report.
#[derive(Debug, Default, Clone, PartialEq)]
struct BundleCpu {
    cpu: Option<u32>,
    has_events: bool,
}

impl Message for BundleCpu {
    /// Only the CPU: the skim never writes bundles, and has no events to write.
    fn encode_raw(&self, buf: &mut impl BufMut) {
        if let Some(cpu) = self.cpu {
            encoding::uint32::encode(CPU, &cpu, buf);
        }
    }

    fn merge_field(
        &mut self,
        tag: u32,
        wire_type: WireType,
        buf: &mut impl Buf,
        ctx: DecodeContext,
    ) -> Result<(), DecodeError> {
        match tag {
            CPU => encoding::uint32::merge(wire_type, self.cpu.get_or_insert(0), buf, ctx),
            EVENT | COMPACT_SCHED => {
                encoding::check_wire_type(WireType::LengthDelimited, wire_type)?;
                self.has_events = true;
                encoding::skip_field(wire_type, tag, buf, ctx)
            }
            _ => encoding::skip_field(wire_type, tag, buf, ctx),
        }
    }

    fn encoded_len(&self) -> usize {
        self.cpu
            .map_or(0, |cpu| encoding::uint32::encoded_len(CPU, &cpu))
    }

    fn clear(&mut self) {
        *self = BundleCpu::default();
    }
}

/// What the skim found.
#[derive(Debug, Default)]
pub struct Skim {
    /// The process trees, with the time each was taken.
    pub trees: Vec<(Option<u64>, ProcessTree)>,
    /// The CPUs whose bundles hold events (below [`crate::event::MAX_CPUS`]).
    pub cpus: BTreeSet<u32>,
}

/// Skims the trace in `file`. Damage is skipped as the reading proper skips it (and reports
/// it).
pub fn skim(file: &File) -> Skim {
    let mut skim = Skim::default();
    // SAFETY: the map is only read, and trace files are not rewritten while being analysed.
    let Ok(map) = (unsafe { Mmap::map(file) }) else {
        return skim;
    };
    let mut packets = Packets::<_, TreePacket>::new(&map[..]);
    // Skimmed pages are let go as the skim passes them, so that a big trace does not stay
    // resident in the process.
    // SAFETY: `map` maps the file read-only.
    let mut behind = unsafe { Behind::new(&map, RELEASE_STEP) };
    loop {
        behind.passed(usize::try_from(packets.offset()).unwrap_or(usize::MAX));
        match packets.next() {
            Ok(Step::Packet { packet, .. }) => {
                if let Some(tree) = packet.process_tree {
                    skim.trees.push((packet.timestamp, tree));
                }
                let bundle = packet.ftrace_events.filter(|b| b.has_events);
                if let Some(cpu) = bundle.map(|b| b.cpu.unwrap_or(0)) {
                    if crate::event::possible_cpu(cpu.into()) {
                        skim.cpus.insert(cpu);
                    }
                }
            }
            Ok(Step::Skipped { .. }) => {}
            Ok(Step::End | Step::Truncated { .. }) | Err(_) => return skim,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::read::perfetto::messages::{CompactSched, FtraceEvent, FtraceEventBundle};

    fn skimmed(bundle: &FtraceEventBundle) -> Result<BundleCpu, DecodeError> {
        BundleCpu::decode(&bundle.encode_to_vec()[..])
    }

    /// Events and compact columns say a bundle holds events without being read; their wire
    /// type is still checked, as decoding them would.
    #[test]
    fn a_bundle_holds_events_when_it_has_events_or_compact_columns() {
        let cpu3 = FtraceEventBundle {
            cpu: Some(3),
            ..FtraceEventBundle::default()
        };
        let empty = skimmed(&cpu3).unwrap();
        assert_eq!((empty.cpu, empty.has_events), (Some(3), false));
        let events = FtraceEventBundle {
            event: vec![FtraceEvent::default()],
            ..cpu3.clone()
        };
        assert!(skimmed(&events).unwrap().has_events);
        let compact = FtraceEventBundle {
            compact_sched: Some(CompactSched::default()),
            ..cpu3
        };
        assert!(skimmed(&compact).unwrap().has_events);
        // Field 2 as a varint (key 0x10) is no event.
        assert!(BundleCpu::decode(&[0x08, 0x03, 0x10, 0x01][..]).is_err());
    }
}
