//! Finding the process trees of a trace file before reading its events.
//!
//! Perfetto writes each trace buffer as a block: the process trees, taken when the trace
//! started, often sit after all the ftrace data. A reader that streams the events would name
//! the tasks of the whole trace only once it reached them; a plain file can be mapped and
//! skimmed for them first (every other packet is skipped by its length), so the tasks are
//! named from the first event whatever the size of the trace.

use super::messages::ProcessTree;
use super::packets::{Packets, Step};
use memmap2::Mmap;
use prost::Message;
use std::fs::File;

/// A `TracePacket` seen only for its process tree.
#[derive(Clone, PartialEq, Message)]
struct TreePacket {
    #[prost(uint64, optional, tag = "8")]
    timestamp: Option<u64>,
    #[prost(message, optional, tag = "2")]
    process_tree: Option<ProcessTree>,
}

/// The process trees of the trace in `file`, with the time each was taken. Damage is skipped
/// as the reading proper skips it (and reports it).
pub fn process_trees(file: &File) -> Vec<(Option<u64>, ProcessTree)> {
    // SAFETY: the map is only read, and trace files are not rewritten while being analysed.
    let Ok(map) = (unsafe { Mmap::map(file) }) else {
        return Vec::new();
    };
    let mut packets = Packets::<_, TreePacket>::new(&map[..]);
    let mut trees = Vec::new();
    loop {
        match packets.next() {
            Ok(Step::Packet { packet, .. }) => {
                if let Some(tree) = packet.process_tree {
                    trees.push((packet.timestamp, tree));
                }
            }
            Ok(Step::Skipped { .. }) => {}
            Ok(Step::End | Step::Truncated { .. }) | Err(_) => return trees,
        }
    }
}
