//! Splitting the `Trace { repeated TracePacket packet = 1; }` byte stream into packets, one at
//! a time, so a trace of any size is read with one packet in memory.
//!
//! Each packet is a field-1 key (`0x0a`), a varint length and that many bytes. Anything else
//! at a packet boundary is damage: the stream cannot be resynchronised, so it is an error with
//! the byte offset. The stream ending inside a packet (a recorder killed mid-write) is not: the
//! packets before it are good, and [`Step::Truncated`] says where it stopped.

use std::io::{self, BufRead, Read};

/// The key of field 1 with the length-delimited wire type.
const PACKET_KEY: u64 = (1 << 3) | 2;

/// A packet larger than this is a corrupt length, not a packet: Perfetto writes packets of at
/// most a few megabytes, and refusing keeps a damaged length from allocating gigabytes.
pub const MAX_PACKET: u64 = 64 << 20;

/// What the next call to [`Packets::next`] found.
#[derive(Debug)]
pub enum Step<'a> {
    Packet {
        offset: u64,
        bytes: &'a [u8],
    },
    End,
    /// The stream ends inside the packet that starts at `offset`, after `have` of its `want`
    /// bytes (`None` when it ends before the length).
    Truncated {
        offset: u64,
        have: u64,
        want: Option<u64>,
    },
}

/// The stream does not have the `Trace` framing at `offset`.
#[derive(Debug, thiserror::Error)]
pub enum FramingError {
    #[error("expected a TracePacket (key 0x0a), found key {key:#x}")]
    Key { offset: u64, key: u64 },
    #[error("a varint runs over 10 bytes")]
    Varint { offset: u64 },
    #[error("a TracePacket of {len} bytes is over the {MAX_PACKET}-byte limit (a corrupt length)")]
    TooLong { offset: u64, len: u64 },
    #[error("{0}")]
    Io(#[from] io::Error),
}

impl FramingError {
    /// Where the damage is, when it is damage rather than an I/O failure.
    pub fn offset(&self) -> Option<u64> {
        match *self {
            FramingError::Key { offset, .. }
            | FramingError::Varint { offset }
            | FramingError::TooLong { offset, .. } => Some(offset),
            FramingError::Io(_) => None,
        }
    }
}

pub struct Packets<R> {
    reader: R,
    /// Bytes consumed so far: the offset of the next packet.
    offset: u64,
    buf: Vec<u8>,
}

impl<R: BufRead> Packets<R> {
    pub fn new(reader: R) -> Self {
        Packets {
            reader,
            offset: 0,
            buf: Vec::new(),
        }
    }

    /// Bytes read so far.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    pub fn next(&mut self) -> Result<Step<'_>, FramingError> {
        let start = self.offset;
        let key = match self.varint()? {
            Varint::Value(v) => v,
            Varint::Eof if self.offset == start => return Ok(Step::End),
            Varint::Eof => return Ok(header_truncated(start)),
            Varint::TooLong => return Err(FramingError::Varint { offset: start }),
        };
        if key != PACKET_KEY {
            return Err(FramingError::Key { offset: start, key });
        }
        let len = match self.varint()? {
            Varint::Value(v) => v,
            Varint::Eof => return Ok(header_truncated(start)),
            Varint::TooLong => return Err(FramingError::Varint { offset: start }),
        };
        if len > MAX_PACKET {
            return Err(FramingError::TooLong { offset: start, len });
        }
        self.buf.clear();
        let got = (&mut self.reader).take(len).read_to_end(&mut self.buf)? as u64;
        self.offset += got;
        if got < len {
            return Ok(Step::Truncated {
                offset: start,
                have: got,
                want: Some(len),
            });
        }
        Ok(Step::Packet {
            offset: start,
            bytes: &self.buf,
        })
    }

    /// Reads a base-128 varint byte by byte (the reader is buffered).
    fn varint(&mut self) -> io::Result<Varint> {
        let mut value = 0u64;
        for i in 0..10 {
            let Some(&byte) = self.reader.fill_buf()?.first() else {
                return Ok(Varint::Eof);
            };
            self.reader.consume(1);
            self.offset += 1;
            value |= u64::from(byte & 0x7f) << (7 * i);
            if byte & 0x80 == 0 {
                return Ok(Varint::Value(value));
            }
        }
        Ok(Varint::TooLong)
    }
}

fn header_truncated(offset: u64) -> Step<'static> {
    Step::Truncated {
        offset,
        have: 0,
        want: None,
    }
}

enum Varint {
    Value(u64),
    Eof,
    TooLong,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn steps(bytes: &[u8]) -> Vec<String> {
        let mut p = Packets::new(bytes);
        let mut out = Vec::new();
        loop {
            match p.next() {
                Ok(Step::Packet { offset, bytes }) => out.push(format!("{offset}:{bytes:?}")),
                Ok(Step::End) => return out,
                Ok(Step::Truncated { offset, have, want }) => {
                    out.push(format!("truncated {offset} {have}/{want:?}"));
                    return out;
                }
                Err(e) => {
                    out.push(format!("error {:?} {e}", e.offset()));
                    return out;
                }
            }
        }
    }

    #[test]
    fn packets_and_their_offsets() {
        assert_eq!(
            steps(&[0x0a, 2, 8, 1, 0x0a, 0, 0x0a, 1, 9]),
            ["0:[8, 1]", "4:[]", "6:[9]"]
        );
    }

    #[test]
    fn truncation_in_every_part_of_a_packet() {
        assert_eq!(
            steps(&[0x0a, 2, 8, 1, 0x0a]),
            ["0:[8, 1]", "truncated 4 0/None"]
        );
        assert_eq!(steps(&[0x0a, 0x85]), ["truncated 0 0/None"]);
        assert_eq!(steps(&[0x0a, 5, 1, 2]), ["truncated 0 2/Some(5)"]);
    }

    #[test]
    fn damage_is_an_error_at_its_offset() {
        assert_eq!(
            steps(&[0x0a, 0, 0x12, 0]),
            [
                "0:[]",
                "error Some(2) expected a TracePacket (key 0x0a), found key 0x12"
            ]
        );
        assert_eq!(
            steps(&[0x0a, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]),
            ["error Some(0) a varint runs over 10 bytes"]
        );
        assert_eq!(
            steps(&[0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f]),
            ["error Some(0) a TracePacket of 4294967295 bytes is over the 67108864-byte limit (a corrupt length)"]
        );
    }
}
