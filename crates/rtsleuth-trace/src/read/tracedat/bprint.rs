//! `trace_printk` records: the kernel stores a pointer to the format (its text is in the
//! printk formats table) and the arguments packed in binary, each aligned to its own size
//! (8-byte values to 4) and strings inline with their NUL. This re-runs the format over them.

use super::kallsyms::Symbols;
use super::printf::{Arg, Spec};
use crate::ring_buffer::Endian;

pub struct Args<'a> {
    pub buf: &'a [u8],
    pub endian: Endian,
    pub long_size: usize,
}

/// Formats `fmt` with the packed arguments into `out`. Arguments missing from a short buffer
/// print as `?`: the record is what it is, and the rest of the text is still useful.
pub fn format(out: &mut String, fmt: &str, args: &Args<'_>, symbols: &Symbols) {
    let mut pos = 0usize;
    let mut rest = fmt;
    while let Some(i) = rest.find('%') {
        out.push_str(&rest[..i]);
        rest = &rest[i..];
        if rest.starts_with("%%") {
            out.push('%');
            rest = &rest[2..];
            continue;
        }
        let Some((mut spec, len)) = Spec::parse(rest) else {
            out.push_str(rest);
            return;
        };
        rest = &rest[len..];
        if spec.width == Some(usize::MAX) {
            spec.width = int(args, &mut pos, 4).map(|w| w as u32 as usize);
        }
        if spec.precision == Some(usize::MAX) {
            spec.precision = int(args, &mut pos, 4).map(|w| w as u32 as usize);
        }
        if spec.conv == b's' {
            let tail = args.buf.get(pos..).unwrap_or(&[]);
            let end = memchr::memchr(0, tail).unwrap_or(tail.len());
            let s = String::from_utf8_lossy(&tail[..end]);
            pos += end + 1;
            spec.write(out, Arg::Str(&s), 0, symbols);
            continue;
        }
        let size = spec.arg_size(args.long_size);
        match int(args, &mut pos, size) {
            Some(v) => spec.write(out, Arg::Int(v), size, symbols),
            None => out.push('?'),
        }
    }
    out.push_str(rest);
}

/// The next integer of `size` bytes: 1- and 2-byte values are aligned to their size, larger
/// ones to 4 (the kernel stores 8-byte values as two 32-bit halves).
fn int(a: &Args<'_>, pos: &mut usize, size: usize) -> Option<u64> {
    let align = size.min(4);
    let at = pos.next_multiple_of(align);
    let v = if size == 8 {
        let lo = a.endian.uint(a.buf.get(at..)?, 4)?;
        let hi = a.endian.uint(a.buf.get(at + 4..)?, 4)?;
        match a.endian {
            Endian::Little => lo | hi << 32,
            Endian::Big => lo << 32 | hi,
        }
    } else {
        a.endian.uint(a.buf.get(at..)?, size)?
    };
    *pos = at + size;
    Some(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packed_arguments_with_alignment_and_strings() {
        // "%d %s %llu %c %hd %lx": 4-byte int, "ab\0", 8-byte (aligned to 4 → pos 8),
        // char at 16, short aligned to 2 at 18, long (8) aligned to 4 at 20.
        let mut b = (-5i32).to_le_bytes().to_vec();
        b.extend(b"ab\0");
        b.push(0); // alignment
        b.extend(1_000_000_000_000u64.to_le_bytes());
        b.push(b'Z');
        b.push(0);
        b.extend(300u16.to_le_bytes());
        b.extend(0xbeefu64.to_le_bytes());
        let a = Args {
            buf: &b,
            endian: Endian::Little,
            long_size: 8,
        };
        let mut out = String::new();
        format(
            &mut out,
            "v=%d s=%s n=%llu c=%c h=%hd x=%lx 100%%\n",
            &a,
            &Symbols::default(),
        );
        assert_eq!(out, "v=-5 s=ab n=1000000000000 c=Z h=300 x=beef 100%\n");
        // A buffer cut short prints what it can.
        let mut out = String::new();
        format(
            &mut out,
            "%d %d",
            &Args { buf: &b[..4], ..a },
            &Symbols::default(),
        );
        assert_eq!(out, "-5 ?");
    }
}
