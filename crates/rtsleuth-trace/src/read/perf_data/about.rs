//! What perf.data's header features say about the recording that rtsleuth reports: the perf
//! version, the kernel release, the host and the CPU count. Read here from the checked
//! sections rather than through the crate, whose string reader allocates whatever length a
//! damaged file declares.

use crate::read::tracedat::Endian;

/// perf's feature bits (`HEADER_*` in perf's `header.h`).
pub mod bit {
    pub const TRACING_DATA: usize = 1;
    pub const HOSTNAME: usize = 3;
    pub const OSRELEASE: usize = 4;
    pub const VERSION: usize = 5;
    pub const NRCPUS: usize = 7;
}

/// A `perf_header_string`: a `u32` length, then that many bytes, NUL-padded.
pub fn string(b: &[u8], e: Endian) -> Option<String> {
    let len = usize::try_from(e.uint(b, 4)?).ok()?;
    let s = b.get(4..4usize.checked_add(len)?)?;
    let s = &s[..memchr::memchr(0, s).unwrap_or(s.len())];
    Some(String::from_utf8_lossy(s).into_owned()).filter(|s| !s.is_empty())
}

/// `HEADER_NRCPUS`: CPUs available, then online; the available count.
pub fn nr_cpus(b: &[u8], e: Endian) -> Option<u32> {
    e.uint(b, 4).map(|n| n as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_and_cpus() {
        let mut b = 8u32.to_le_bytes().to_vec();
        b.extend(b"6.1.187\0");
        assert_eq!(string(&b, Endian::Little).as_deref(), Some("6.1.187"));
        b[0] = 200; // longer than the section
        assert_eq!(string(&b, Endian::Little), None);
        assert_eq!(nr_cpus(&[2, 0, 0, 0, 2, 0, 0, 0], Endian::Little), Some(2));
        assert_eq!(nr_cpus(&[2], Endian::Little), None);
    }
}
