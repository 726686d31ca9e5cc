//! Reading trace.dat's fixed-size numbers and strings with bounds checks.
//!
//! Every number after the file's first bytes is in the file's own byte order, and every size
//! or offset in the file is untrusted: a reader that indexes with them directly panics on the
//! first truncated download. [`Cursor`] turns each overrun into an error that says which
//! structure was cut and at which file offset.

pub use crate::ring_buffer::Endian;
use std::borrow::Cow;

/// Where a structure that was cut or malformed sits: the message and the absolute offset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fault {
    pub offset: u64,
    pub reason: String,
}

impl Fault {
    pub fn new(offset: u64, reason: impl Into<String>) -> Fault {
        Fault {
            offset,
            reason: reason.into(),
        }
    }
}

pub type Parsed<T> = std::result::Result<T, Fault>;

/// A position in a byte slice that knows the slice's offset in the file, for messages.
#[derive(Clone)]
pub struct Cursor<'a> {
    bytes: &'a [u8],
    pos: usize,
    /// File offset of `bytes[0]` (for a decompressed section: the section's offset).
    base: u64,
    pub endian: Endian,
}

impl<'a> Cursor<'a> {
    pub fn new(bytes: &'a [u8], base: u64, endian: Endian) -> Cursor<'a> {
        Cursor {
            bytes,
            pos: 0,
            base,
            endian,
        }
    }

    /// The file offset of the next byte.
    pub fn offset(&self) -> u64 {
        self.base + self.pos as u64
    }

    pub fn remaining(&self) -> usize {
        self.bytes.len() - self.pos
    }

    pub fn seek(&mut self, pos: usize, what: &str) -> Parsed<()> {
        if pos > self.bytes.len() {
            return Err(self.cut_at(pos, what));
        }
        self.pos = pos;
        Ok(())
    }

    pub fn fault(&self, reason: impl Into<String>) -> Fault {
        Fault::new(self.offset(), reason)
    }

    fn cut_at(&self, pos: usize, what: &str) -> Fault {
        Fault::new(
            self.offset(),
            format!(
                "{what} needs {} bytes but the data ends after {}: the file is truncated",
                pos.saturating_sub(self.pos),
                self.remaining()
            ),
        )
    }

    pub fn bytes(&mut self, n: usize, what: &str) -> Parsed<&'a [u8]> {
        let end = self
            .pos
            .checked_add(n)
            .filter(|&e| e <= self.bytes.len())
            .ok_or_else(|| self.cut_at(self.pos.saturating_add(n), what))?;
        let b = &self.bytes[self.pos..end];
        self.pos = end;
        Ok(b)
    }

    fn array<const N: usize>(&mut self, what: &str) -> Parsed<[u8; N]> {
        Ok(self.bytes(N, what)?.try_into().expect("length checked"))
    }

    pub fn u8(&mut self, what: &str) -> Parsed<u8> {
        Ok(self.array::<1>(what)?[0])
    }

    pub fn u16(&mut self, what: &str) -> Parsed<u16> {
        let b = self.array(what)?;
        Ok(self.endian.u16(b))
    }

    pub fn u32(&mut self, what: &str) -> Parsed<u32> {
        let b = self.array(what)?;
        Ok(self.endian.u32(b))
    }

    pub fn u64(&mut self, what: &str) -> Parsed<u64> {
        let b = self.array(what)?;
        Ok(self.endian.u64(b))
    }

    /// A NUL-terminated string (invalid UTF-8 is replaced: names are for display).
    pub fn cstr(&mut self, what: &str) -> Parsed<Cow<'a, str>> {
        let rest = &self.bytes[self.pos..];
        let len = memchr::memchr(0, rest).ok_or_else(|| {
            self.fault(format!(
                "{what}: the data ends before the string's terminating NUL: the file is truncated"
            ))
        })?;
        self.pos += len + 1;
        Ok(String::from_utf8_lossy(&rest[..len]))
    }

    /// A block preceded by its size as a u32 or u64, as most metadata blocks are stored.
    pub fn sized(&mut self, size_bytes: usize, what: &str) -> Parsed<&'a [u8]> {
        let n = match size_bytes {
            4 => u64::from(self.u32(what)?),
            _ => self.u64(what)?,
        };
        let n =
            usize::try_from(n).map_err(|_| self.fault(format!("{what}: size {n} is absurd")))?;
        self.bytes(n, what)
    }

    /// A sub-cursor over the next `n` bytes, which this cursor skips.
    pub fn sub(&mut self, n: usize, what: &str) -> Parsed<Cursor<'a>> {
        let base = self.offset();
        let bytes = self.bytes(n, what)?;
        Ok(Cursor::new(bytes, base, self.endian))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_follow_the_declared_byte_order() {
        let b = [1, 2, 3, 4, 5, 6, 7, 8];
        assert_eq!(Cursor::new(&b, 0, Endian::Little).u32("x"), Ok(0x0403_0201));
        assert_eq!(Cursor::new(&b, 0, Endian::Big).u32("x"), Ok(0x0102_0304));
    }

    #[test]
    fn an_overrun_names_the_structure_and_the_file_offset() {
        let b = [1u8; 6];
        let mut c = Cursor::new(&b, 100, Endian::Little);
        c.u32("a").unwrap();
        let e = c.u64("page size").unwrap_err();
        assert_eq!(e.offset, 104);
        assert!(e.reason.contains("page size needs 8 bytes"), "{}", e.reason);
        assert!(c.cstr("name").is_err());
        assert!(Cursor::new(&[0xff; 9], 0, Endian::Little)
            .sized(8, "block")
            .is_err());
    }
}
