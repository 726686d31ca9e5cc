//! Reading one field's value out of a record with its format's offsets.

use super::event_format::{Field, FieldKind};
use crate::ring_buffer::Endian;

/// The bytes a field holds in `data`, following `__data_loc`/`__rel_loc` indirections.
pub fn bytes<'d>(f: &Field, data: &'d [u8], e: Endian) -> Option<&'d [u8]> {
    bytes_at(f.kind, f.offset, f.size, data, e)
}

/// [`bytes`] for a field known by its kind, offset and size.
pub fn bytes_at(
    kind: FieldKind,
    offset: usize,
    size: usize,
    data: &[u8],
    e: Endian,
) -> Option<&[u8]> {
    match kind {
        FieldKind::DataLoc { .. } | FieldKind::RelLoc { .. } => {
            let loc = e.uint(data.get(offset..)?, 4)?;
            let (off, len) = ((loc & 0xffff) as usize, (loc >> 16) as usize);
            let base = match kind {
                FieldKind::RelLoc { .. } => offset + size,
                _ => 0,
            };
            data.get(base + off..base + off + len)
        }
        FieldKind::Tail { .. } => data.get(offset..),
        _ => data.get(offset..offset + size),
    }
}

/// A scalar field's raw bits (sign extension is the printer's business).
pub fn uint(f: &Field, data: &[u8], e: Endian) -> Option<u64> {
    e.uint(data.get(f.offset..)?, f.size)
}

/// A C string: the bytes up to the first NUL. Invalid UTF-8 gives `None`; callers fall back
/// to a lossy copy.
pub fn c_str(b: &[u8]) -> Result<&str, &[u8]> {
    match <&[u8; 16]>::try_from(b) {
        Ok(comm) => comm_str(comm),
        Err(_) => up_to_nul(b),
    }
}

/// [`c_str`] of any length.
fn up_to_nul(b: &[u8]) -> Result<&str, &[u8]> {
    let b = &b[..memchr::memchr(0, b).unwrap_or(b.len())];
    std::str::from_utf8(b).map_err(|_| b)
}

/// [`c_str`] of a 16-byte field, the size of every task name the scheduler events carry
/// (`TASK_COMM_LEN`), read as one word: two of them in every switch made `memchr` and UTF-8
/// validation a few per cent of decoding a trace.dat.
fn comm_str(b: &[u8; 16]) -> Result<&str, &[u8]> {
    const ONES: u128 = u128::from_le_bytes([0x01; 16]);
    const HIGH: u128 = u128::from_le_bytes([0x80; 16]);
    let word = u128::from_le_bytes(*b);
    // The lowest byte flagged here is the first NUL (borrows only run upwards).
    let zeros = word.wrapping_sub(ONES) & !word & HIGH;
    let len = (zeros.trailing_zeros() / 8) as usize;
    let text = &b[..len];
    let kept = u128::MAX.checked_shr(128 - 8 * len as u32).unwrap_or(0);
    if word & kept & HIGH == 0 {
        // SAFETY: every byte of `text` is below 0x80: ASCII, which is UTF-8.
        Ok(unsafe { std::str::from_utf8_unchecked(text) })
    } else {
        std::str::from_utf8(text).map_err(|_| text)
    }
}

/// True when the field is text rather than numbers.
pub fn is_text(f: &Field) -> bool {
    matches!(
        f.kind,
        FieldKind::CharArray
            | FieldKind::DataLoc { string: true, .. }
            | FieldKind::RelLoc { string: true, .. }
            | FieldKind::Tail { string: true, .. }
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field(kind: FieldKind, offset: usize, size: usize) -> Field {
        Field {
            name: "f".into(),
            offset,
            size,
            signed: false,
            kind,
            spec: None,
        }
    }

    /// The 16-byte path reads as the general one: a NUL at every place (or none), with text,
    /// UTF-8 and bytes that are not UTF-8 before and after it.
    #[test]
    fn comms_read_as_any_c_string() {
        let fills: [&[u8]; 5] = [
            b"kworker/u8:3-ev",
            "é".as_bytes(),
            &[0xff, b'a'],
            &[0x01, 0x7f],
            &[0x80],
        ];
        for fill in fills {
            for nul in 0..=16 {
                for tail in [0u8, b'x', 0xc3, 0x01] {
                    let mut b = [tail; 16];
                    for (i, c) in b.iter_mut().enumerate().take(nul) {
                        *c = fill[i % fill.len()].max(1);
                    }
                    if nul < 16 {
                        b[nul] = 0;
                    }
                    assert_eq!(c_str(&b), up_to_nul(&b), "{b:?}");
                }
            }
        }
    }

    #[test]
    fn data_loc_rel_loc_and_tail() {
        // Record: 8 bytes of header, a data_loc at 8 pointing to "eth0\0" at 16 (len 5),
        // a rel_loc at 12 pointing 0 bytes past its end (offset 16), same string.
        let mut d = vec![0u8; 8];
        d.extend(((5u32 << 16) | 16).to_le_bytes());
        d.extend((5u32 << 16).to_le_bytes());
        d.extend(b"eth0\0");
        let e = Endian::Little;
        let loc = field(
            FieldKind::DataLoc {
                string: true,
                elem: 1,
            },
            8,
            4,
        );
        assert_eq!(c_str(bytes(&loc, &d, e).unwrap()), Ok("eth0"));
        let rel = field(
            FieldKind::RelLoc {
                string: true,
                elem: 1,
            },
            12,
            4,
        );
        assert_eq!(c_str(bytes(&rel, &d, e).unwrap()), Ok("eth0"));
        let tail = field(
            FieldKind::Tail {
                string: true,
                elem: 1,
            },
            16,
            0,
        );
        assert_eq!(bytes(&tail, &d, e).unwrap(), b"eth0\0");
        // A location past the record is None, not a panic.
        let bad = field(
            FieldKind::DataLoc {
                string: true,
                elem: 1,
            },
            12,
            4,
        );
        let mut d2 = d.clone();
        d2[12..16].copy_from_slice(&((50u32 << 16) | 16).to_le_bytes());
        assert_eq!(bytes(&bad, &d2, e), None);
        assert_eq!(uint(&field(FieldKind::Pointer, 30, 8), &d, e), None);
    }
}
