//! Decoding packets ahead, on a thread of their own. Turning bytes into `TracePacket`s needs
//! nothing but the bytes and was a third of reading a trace; unpacking their ftrace bundles
//! into events ([`Unpacker`]) needs only what earlier packets said, and was another fifth.
//! The merge and the analysis, which must see the packets in order, take them from a bounded
//! queue of batches.

use super::bundle::Record;
use super::messages::TracePacket;
use super::packets::{Packets, Source, Step};
use super::unpack::{Unpacked, Unpacker};
use crate::read::spawn::spawn_with;
use std::io;
use std::sync::mpsc::{channel, sync_channel, Receiver, Sender};
use std::thread::{Scope, ScopedJoinHandle};

/// A batch closes at this many packets or bytes, whichever comes first: enough that the
/// hand-over costs nothing per packet, little enough that the decoded messages in flight stay
/// a few megabytes (they take several times their encoded size). On 8 M compact_sched events
/// 1 MB batches held 77 MB resident and 128 KB ones 42 MB, and ran 5 % faster.
const BATCH_PACKETS: usize = 256;
const BATCH_BYTES: u64 = 128 << 10;

/// Batches decoded and not yet taken.
const QUEUED: usize = 2;

type Item = io::Result<Step<Unpacked>>;

/// Events handed on and done with. They go back to the thread that unpacked them to be freed
/// there: freeing another thread's allocations cost both threads (mimalloc queues such frees
/// for the owner to collect), a tenth of the merging thread's time.
pub type Spent = Vec<Vec<Record>>;

/// The packets of a stream in order, as [`Packets::next`] gives them, unpacked.
pub enum Ahead<'scope, S> {
    /// No thread could be started: decoded here.
    InLine(Packets<S, TracePacket>, Unpacker),
    Threaded {
        batches: Receiver<Vec<Item>>,
        batch: std::vec::IntoIter<Item>,
        spent: Sender<Spent>,
        decoder: ScopedJoinHandle<'scope, Packets<S, TracePacket>>,
    },
}

impl<'scope, S: Source + Send + 'scope> Ahead<'scope, S> {
    pub fn start(scope: &'scope Scope<'scope, '_>, packets: Packets<S, TracePacket>) -> Self {
        let (give, batches) = sync_channel(QUEUED);
        let (spent, given_back) = channel::<Spent>();
        let work = move |mut packets| {
            let mut unpacker = Unpacker::default();
            loop {
                given_back.try_iter().for_each(drop);
                let (batch, last) = next_batch(&mut packets, &mut unpacker);
                // A closed queue means the reader stopped early.
                if give.send(batch).is_err() || last {
                    return packets;
                }
            }
        };
        match spawn_with(scope, packets, work) {
            Ok(decoder) => Ahead::Threaded {
                batches,
                batch: Vec::new().into_iter(),
                spent,
                decoder,
            },
            Err(packets) => Ahead::InLine(packets, Unpacker::default()),
        }
    }

    pub fn next(&mut self) -> Item {
        match self {
            Ahead::InLine(packets, unpacker) => next(packets, unpacker),
            Ahead::Threaded { batches, batch, .. } => loop {
                if let Some(item) = batch.next() {
                    return item;
                }
                // The thread stops only after the end, a cut or an error, which the reader
                // stops at too.
                *batch = batches.recv().unwrap_or_default().into_iter();
                if batch.len() == 0 {
                    return Ok(Step::End);
                }
            },
        }
    }

    /// Takes events back to be freed by the thread that made them (here when there is none).
    pub fn give_back(&self, events: Spent) {
        if let Ahead::Threaded { spent, .. } = self {
            // A thread that has ended frees nothing more; the events are freed here.
            let _ = spent.send(events);
        }
    }

    /// The packets, for how far they went and the damage that ended them.
    pub fn finish(self) -> Packets<S, TracePacket> {
        match self {
            Ahead::InLine(packets, _) => packets,
            Ahead::Threaded {
                batches, decoder, ..
            } => {
                drop(batches);
                decoder
                    .join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
            }
        }
    }
}

/// The next packet, unpacked.
fn next<S: Source>(packets: &mut Packets<S, TracePacket>, unpacker: &mut Unpacker) -> Item {
    packets
        .next()
        .map(|step| step.map(|packet| unpacker.unpack(packet)))
}

/// The next packets up to a batch's size, and whether the batch ends with what ends the
/// stream (its end, a cut or a read error).
fn next_batch<S: Source>(
    packets: &mut Packets<S, TracePacket>,
    unpacker: &mut Unpacker,
) -> (Vec<Item>, bool) {
    let (mut batch, start) = (Vec::new(), packets.offset());
    while batch.len() < BATCH_PACKETS && packets.offset() - start < BATCH_BYTES {
        let item = next(packets, unpacker);
        let last = !matches!(item, Ok(Step::Packet { .. } | Step::Skipped { .. }));
        batch.push(item);
        if last {
            return (batch, true);
        }
    }
    (batch, false)
}

#[cfg(test)]
mod tests {
    use super::*;
    use prost::Message;

    /// Every step as text, then how far the packets went.
    fn steps(mut next: impl FnMut() -> Item) -> Vec<String> {
        let mut out = Vec::new();
        loop {
            let step = next();
            let last = !matches!(step, Ok(Step::Packet { .. } | Step::Skipped { .. }));
            out.push(format!("{step:?}"));
            if last {
                return out;
            }
        }
    }

    /// Across several batches, a damaged frame and a cut end, the thread hands on exactly the
    /// steps, offset and damage of reading in line.
    #[test]
    fn ahead_gives_the_steps_of_reading_in_line() {
        let mut bytes = Vec::new();
        for seq in 0..3 * BATCH_PACKETS as u32 {
            if seq == 300 {
                bytes.extend([0x12, 0x01, 0x00]); // a frame with the wrong key
            }
            let p = TracePacket {
                trusted_packet_sequence_id: Some(seq),
                ..TracePacket::default()
            };
            bytes.push(0x0a);
            p.encode_length_delimited(&mut bytes).unwrap();
        }
        bytes.extend([0x0a, 0x40, 0x08]); // a packet cut short
        let packets = || Packets::<_, TracePacket>::new(std::io::Cursor::new(bytes.clone()));
        let (mut in_line, mut unpacker) = (packets(), Unpacker::default());
        let expected = steps(|| next(&mut in_line, &mut unpacker));
        assert!(
            expected.len() > 2 * BATCH_PACKETS && expected.last().unwrap().contains("Truncated")
        );
        std::thread::scope(|scope| {
            let mut ahead = Ahead::start(scope, packets());
            assert!(matches!(ahead, Ahead::Threaded { .. }));
            assert_eq!(steps(|| ahead.next()), expected);
            assert_eq!(ahead.finish().offset(), in_line.offset());
        });
    }
}
