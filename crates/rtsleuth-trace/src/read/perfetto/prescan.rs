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
use super::messages::packet_field;
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
#[derive(Debug, Default, Clone, PartialEq)]
struct TreePacket {
    timestamp: Option<u64>,
    process_tree: Option<ProcessTree>,
    ftrace_events: Option<BundleCpu>,
}

impl Message for TreePacket {
    /// Only the timestamp and the tree: the skim never writes packets.
    fn encode_raw(&self, buf: &mut impl BufMut) {
        if let Some(ts) = self.timestamp {
            encoding::uint64::encode(packet_field::TIMESTAMP, &ts, buf);
        }
        if let Some(tree) = &self.process_tree {
            encoding::message::encode(packet_field::PROCESS_TREE, tree, buf);
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
            packet_field::TIMESTAMP => {
                encoding::uint64::merge(wire_type, self.timestamp.get_or_insert(0), buf, ctx)
            }
            packet_field::PROCESS_TREE => {
                let tree = self.process_tree.get_or_insert_with(ProcessTree::default);
                encoding::message::merge(wire_type, tree, buf, ctx)
            }
            packet_field::FTRACE_EVENTS => {
                let bundle = self.ftrace_events.get_or_insert_with(BundleCpu::default);
                if wire_type == WireType::LengthDelimited && bundle.skim_in_place(buf) {
                    return Ok(());
                }
                encoding::message::merge(wire_type, bundle, buf, ctx)
            }
            _ => encoding::skip_field(wire_type, tag, buf, ctx),
        }
    }

    fn encoded_len(&self) -> usize {
        self.timestamp.map_or(0, |ts| {
            encoding::uint64::encoded_len(packet_field::TIMESTAMP, &ts)
        }) + self.process_tree.as_ref().map_or(0, |tree| {
            encoding::message::encoded_len(packet_field::PROCESS_TREE, tree)
        })
    }

    fn clear(&mut self) {
        *self = TreePacket::default();
    }
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

impl BundleCpu {
    /// Merges the bundle whose length and bytes `buf` holds next, when they lie in one piece
    /// and its fields up to its first event are ones prost would take as this does; true
    /// then, with `buf` past the bundle. Otherwise false, with neither changed, for prost to
    /// decode it ([`BundleCpu::skim_fields`] says what is read).
    fn skim_in_place(&mut self, buf: &mut impl Buf) -> bool {
        let mut bytes = buf.chunk();
        let Ok(len) = encoding::decode_varint(&mut bytes) else {
            return false;
        };
        let header = buf.chunk().len() - bytes.len();
        let Some(fields) = usize::try_from(len).ok().and_then(|n| bytes.get(..n)) else {
            return false;
        };
        let mut merged = self.clone();
        if merged.skim_fields(fields).is_none() {
            return false;
        }
        *self = merged;
        buf.advance(header + fields.len());
        true
    }

    /// The fields of a bundle up to its first event or compact columns, when its CPU came
    /// before them (as Perfetto writes it, first of all): the rest is not read. A busy trace's
    /// bundles hold hundreds of events each, and walking them read every byte of the file
    /// before the first event was (the skim of 8 M events took 48 ms so, 14 ms now); a CPU
    /// field repeated after the events, which no writer does, is not seen. Before that: a
    /// varint CPU, other fields skipped if varints or length-delimited; `None` at anything
    /// else (another wire type, a field number 0, a bad varint or length), which prost judges
    /// instead.
    fn skim_fields(&mut self, mut fields: &[u8]) -> Option<()> {
        while !fields.is_empty() {
            let key = u32::try_from(encoding::decode_varint(&mut fields).ok()?).ok()?;
            let tag = Some(key >> 3).filter(|&t| t > 0)?;
            match (tag, key & 7) {
                (CPU, 0) => self.cpu = Some(encoding::decode_varint(&mut fields).ok()? as u32),
                (CPU, _) => return None,
                (EVENT | COMPACT_SCHED, 0) => return None,
                (_, 0) => drop(encoding::decode_varint(&mut fields).ok()?),
                (_, 2) => {
                    let len = usize::try_from(encoding::decode_varint(&mut fields).ok()?).ok()?;
                    fields = fields.get(len..)?;
                    self.has_events |= tag == EVENT || tag == COMPACT_SCHED;
                    if self.has_events && self.cpu.is_some() {
                        return Some(());
                    }
                }
                _ => return None,
            }
        }
        Some(())
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
    let mut packets = Packets::<_, TreePacket>::over(&map[..]);
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

    /// The packet as prost alone decodes it: every field of every bundle walked.
    #[derive(Clone, PartialEq, Message)]
    struct Walked {
        #[prost(uint64, optional, tag = "8")]
        timestamp: Option<u64>,
        #[prost(message, optional, tag = "2")]
        process_tree: Option<ProcessTree>,
        #[prost(message, optional, tag = "1")]
        ftrace_events: Option<BundleCpu>,
    }

    fn varint(v: u64, out: &mut Vec<u8>) {
        encoding::encode_varint(v, out);
    }

    /// A field: its key, then `value` as it is (a varint) or with its length before it.
    fn field(tag: u32, wire_type: u64, value: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        varint(u64::from(tag) << 3 | wire_type, &mut out);
        if wire_type == 2 {
            varint(value.len() as u64, &mut out);
        }
        out.extend(value);
        out
    }

    /// A packet with a timestamp and the bundles whose fields are given.
    fn packet(bundles: &[&[Vec<u8>]]) -> Vec<u8> {
        let mut out = field(packet_field::TIMESTAMP, 0, &[0x2a]);
        for fields in bundles {
            out.extend(field(packet_field::FTRACE_EVENTS, 2, &fields.concat()));
        }
        out
    }

    /// The skim's packet against prost's walk: what each made of the packet, errors alike.
    fn both(bytes: &[u8]) -> (String, String) {
        let show = |r: Result<(Option<u64>, Option<BundleCpu>), DecodeError>| match r {
            Ok(v) => format!("{v:?}"),
            Err(_) => "error".to_string(),
        };
        let skim = TreePacket::decode(bytes).map(|p| (p.timestamp, p.ftrace_events));
        let walked = Walked::decode(bytes).map(|p| (p.timestamp, p.ftrace_events));
        (show(skim), show(walked))
    }

    /// A bundle's CPU and whether it holds events come out as prost's full walk has them,
    /// errors included, wherever its CPU is and whatever other fields it has, but in one
    /// case: a bundle is read up to its first event once its CPU is known, so a CPU field
    /// repeated after the events (prost keeps the last) and damage after the first event are
    /// not seen.
    #[test]
    fn the_skim_reads_bundles_as_prost_does_up_to_the_first_event() {
        let cpu = |c: u8| field(CPU, 0, &[c]);
        let event = field(EVENT, 2, &[0x08, 0x01, 0x10, 0x02]);
        let compact = field(COMPACT_SCHED, 2, &[0x0a, 0x00]);
        let (lost, clock) = (field(3, 0, &[1]), field(5, 0, &[2]));
        let same: [&[&[Vec<u8>]]; 9] = [
            &[&[cpu(3), event.clone(), event.clone(), compact.clone()]],
            &[&[event.clone(), cpu(5), event.clone()]],
            &[&[cpu(2)]],
            &[&[]],
            &[&[cpu(1), lost.clone(), clock.clone(), compact.clone()]],
            &[&[cpu(1)], std::slice::from_ref(&event)],
            &[&[cpu(4), event.clone()], &[cpu(6)]],
            // A CPU that is not a varint, an event that is not length-delimited.
            &[&[field(CPU, 2, &[1]), event.clone()]],
            &[&[cpu(1), field(EVENT, 0, &[1])]],
        ];
        for bundles in same {
            let (skim, walked) = both(&packet(bundles));
            assert_eq!(skim, walked, "{bundles:?}");
        }
        assert_eq!(
            both(&packet(&[&[cpu(3), event.clone()]])).0,
            "(Some(42), Some(BundleCpu { cpu: Some(3), has_events: true }))"
        );
        // A bundle longer than its packet, a field number 0, a key past 32 bits: errors for
        // both.
        let mut long = packet(&[&[cpu(1), event.clone()]]);
        long.truncate(long.len() - 1);
        let zero = packet(&[&[field(0, 0, &[1]), event.clone()]]);
        let mut wide = Vec::new();
        varint(1 << 33 | 1 << 3, &mut wide);
        let wide = packet(&[&[wide, vec![1], event.clone()]]);
        for bytes in [long, zero, wide] {
            assert_eq!(both(&bytes), ("error".into(), "error".into()));
        }
        // What the skim does not read.
        let repeated = packet(&[&[cpu(1), event.clone(), cpu(2)]]);
        let (skim, walked) = both(&repeated);
        assert!(skim.contains("cpu: Some(1)") && walked.contains("cpu: Some(2)"));
        let damaged = packet(&[&[cpu(1), event.clone(), vec![0x12, 0x7f]]]);
        assert_eq!(both(&damaged).1, "error");
        assert!(both(&damaged).0.contains("cpu: Some(1), has_events: true"));
    }
}
