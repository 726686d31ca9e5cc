//! The `Trace` stream: `repeated TracePacket packet = 1`, so each packet is its field key, its
//! length and its bytes, written as soon as it is made. Packets belong to writer sequences;
//! the first packet of each says its incremental state (interning tables) starts cleared, as
//! Perfetto requires before any interned data is used.

use super::messages::{TracePacket, SEQ_INCREMENTAL_STATE_CLEARED};
use prost::Message;
use std::io::{self, Write};

/// Field 1, length-delimited: one `Trace.packet`.
const PACKET_KEY: u8 = 0x0a;

pub struct PacketWriter<W: Write> {
    out: W,
    buf: Vec<u8>,
    /// Sequences that have had their first packet.
    started: Vec<u32>,
    pub bytes: u64,
    pub packets: u64,
    /// The first write error: an event sink cannot return one, so it is kept for `finish`.
    error: Option<io::Error>,
}

impl<W: Write> PacketWriter<W> {
    pub fn new(out: W) -> Self {
        PacketWriter {
            out,
            buf: Vec::new(),
            started: Vec::new(),
            bytes: 0,
            packets: 0,
            error: None,
        }
    }

    /// Writes `packet` on sequence `seq`.
    pub fn write(&mut self, seq: u32, mut packet: TracePacket) {
        if self.error.is_some() {
            return;
        }
        packet.trusted_packet_sequence_id = Some(seq);
        if !self.started.contains(&seq) {
            self.started.push(seq);
            packet.sequence_flags = Some(SEQ_INCREMENTAL_STATE_CLEARED);
        }
        self.buf.clear();
        self.buf.push(PACKET_KEY);
        packet
            .encode_length_delimited(&mut self.buf)
            .expect("a Vec grows as needed");
        match self.out.write_all(&self.buf) {
            Ok(()) => {
                self.bytes += self.buf.len() as u64;
                self.packets += 1;
            }
            Err(e) => self.error = Some(e),
        }
    }

    /// Flushes the output and hands back the first error of all the writes.
    pub fn finish(mut self) -> io::Result<()> {
        match self.error.take() {
            Some(e) => Err(e),
            None => self.out.flush(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packets_are_framed_and_sequences_start_cleared() {
        let mut w = PacketWriter::new(Vec::new());
        let p = TracePacket {
            timestamp: Some(5),
            ..TracePacket::default()
        };
        w.write(7, p.clone());
        w.write(7, p);
        // Key, length, then timestamp (field 8) = 5, sequence (10) = 7 and, on the first packet
        // only, flags (13) = 1.
        assert_eq!(
            w.out,
            [0x0a, 6, 0x40, 5, 0x50, 7, 0x68, 1, 0x0a, 4, 0x40, 5, 0x50, 7]
        );
        assert_eq!((w.packets, w.bytes), (2, 14));
        w.finish().unwrap();
    }
}
