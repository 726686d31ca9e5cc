//! The kernel's ring-buffer page format: what `trace_pipe_raw` yields and what trace.dat
//! stores per CPU. Kept apart from the trace.dat reader because recording from
//! `per_cpu/cpuN/trace_pipe_raw` produces the same pages.
//!
//! A page is a header (a full timestamp and a commit word that also carries the "events were
//! lost before this page" flags) followed by records, each with a 32-bit header of a 5-bit
//! type and a 27-bit time delta; longer gaps are written as time-extend records.

mod layout;
mod page;

pub use layout::{page_size_from_header_page, PageLayout};
pub use page::{Missed, Page, PageError, Record, RecordCursor};

/// Byte order of the traced machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Endian {
    Little,
    Big,
}

impl Endian {
    pub fn u16(self, b: [u8; 2]) -> u16 {
        match self {
            Endian::Little => u16::from_le_bytes(b),
            Endian::Big => u16::from_be_bytes(b),
        }
    }

    pub fn u32(self, b: [u8; 4]) -> u32 {
        match self {
            Endian::Little => u32::from_le_bytes(b),
            Endian::Big => u32::from_be_bytes(b),
        }
    }

    pub fn u64(self, b: [u8; 8]) -> u64 {
        match self {
            Endian::Little => u64::from_le_bytes(b),
            Endian::Big => u64::from_be_bytes(b),
        }
    }

    /// An unsigned number of 1, 2, 4 or 8 bytes at the start of `b` (`None` if `b` is shorter
    /// or the size is not one of those).
    #[inline]
    pub fn uint(self, b: &[u8], size: usize) -> Option<u64> {
        Some(match size {
            1 => u64::from(*b.first()?),
            2 => u64::from(self.u16(b.get(..2)?.try_into().ok()?)),
            4 => u64::from(self.u32(b.get(..4)?.try_into().ok()?)),
            8 => self.u64(b.get(..8)?.try_into().ok()?),
            _ => return None,
        })
    }

    /// The same number read as two's complement of `size` bytes.
    #[inline]
    pub fn int(self, b: &[u8], size: usize) -> Option<i64> {
        let v = self.uint(b, size)?;
        let shift = 64 - 8 * size as u32;
        Some(((v << shift) as i64) >> shift)
    }
}

#[cfg(test)]
mod tests {
    use super::Endian;

    #[test]
    fn numbers_follow_the_byte_order() {
        let b = [1, 2, 3, 4, 5, 6, 7, 8];
        assert_eq!(Endian::Little.uint(&b, 4), Some(0x0403_0201));
        assert_eq!(Endian::Big.uint(&b, 4), Some(0x0102_0304));
        assert_eq!(Endian::Little.int(&[0xfe, 0xff], 2), Some(-2));
        assert_eq!(Endian::Big.uint(&b, 8), Some(0x0102_0304_0506_0708));
        assert_eq!(Endian::Little.uint(&b, 3), None);
        assert_eq!(Endian::Little.uint(&b[..2], 4), None);
    }
}
