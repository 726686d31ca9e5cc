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

use super::messages::ProcessTree;
use super::packets::{Packets, Step};
use crate::input::release::Behind;
use memmap2::Mmap;
use prost::Message;
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

/// An `FtraceEventBundle` seen only for its CPU and whether it holds events.
#[derive(Clone, PartialEq, Message)]
struct BundleCpu {
    #[prost(uint32, optional, tag = "1")]
    cpu: Option<u32>,
    #[prost(message, repeated, tag = "2")]
    event: Vec<Nothing>,
    #[prost(message, optional, tag = "4")]
    compact_sched: Option<Nothing>,
}

/// A message whose content is skipped.
#[derive(Clone, PartialEq, Message)]
struct Nothing {}

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
                let bundle = packet.ftrace_events;
                let has_events = |b: &BundleCpu| !b.event.is_empty() || b.compact_sched.is_some();
                if let Some(cpu) = bundle.filter(has_events).map(|b| b.cpu.unwrap_or(0)) {
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
