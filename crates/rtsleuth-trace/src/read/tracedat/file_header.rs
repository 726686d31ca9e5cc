//! The fixed start of every trace.dat: magic, version, byte order, long size, page size and,
//! from version 7, the compression and where the first options section is.

use super::bytes::{Cursor, Fault, Parsed};
use super::codec::Codec;
use super::Endian;

pub const MAGIC: &[u8] = b"\x17\x08\x44tracing";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileHeader {
    pub version: u32,
    pub endian: Endian,
    /// The traced user space's `long` (4 or 8).
    pub long_size: usize,
    pub page_size: usize,
    pub codec: Codec,
    /// Version 7: the file offset of the first options section.
    pub first_options: Option<u64>,
    /// Offset of the first byte after the header.
    pub end: usize,
}

impl FileHeader {
    pub fn parse(bytes: &[u8]) -> Parsed<FileHeader> {
        let (mut c, at, version) = magic_and_version(bytes)?;
        let version: u32 = version
            .parse()
            .map_err(|_| Fault::new(at, format!("version {version:?} is not a number")))?;
        if !(6..=7).contains(&version) {
            return Err(Fault::new(
                at,
                format!("file version {version}: rtsleuth reads versions 6 and 7 (`trace-cmd convert --file-version 7` rewrites others)"),
            ));
        }
        let (endian, long_size, page_size) = machine(&mut c)?;
        let (codec, first_options) = if version >= 7 {
            let at = c.offset();
            let name = c.cstr("compression name")?;
            let codec = Codec::from_name(&name, at)?;
            c.cstr("compression version")?;
            (codec, Some(c.u64("first options offset")?))
        } else {
            (Codec::None, None)
        };
        Ok(FileHeader {
            version,
            endian,
            long_size,
            page_size,
            codec,
            first_options,
            end: c.offset() as usize,
        })
    }

    /// The header perf puts before the same schemas in perf.data's `HEADER_TRACING_DATA`
    /// feature section: trace.dat's magic, then version `0.5` or `0.6` (perf's own numbering;
    /// `0.6` adds the saved cmdlines at the end), then the same byte order, long size and page
    /// size. Returns the header as a version 6 file's, and whether the cmdlines follow.
    pub fn parse_perf(bytes: &[u8]) -> Parsed<(FileHeader, bool)> {
        let (mut c, at, version) = magic_and_version(bytes)?;
        let cmdlines = match &*version {
            "0.5" => false,
            "0.6" => true,
            v => {
                return Err(Fault::new(
                    at,
                    format!("perf tracing data version {v:?} (0.5 or 0.6 expected)"),
                ))
            }
        };
        let (endian, long_size, page_size) = machine(&mut c)?;
        let header = FileHeader {
            version: 6,
            endian,
            long_size,
            page_size,
            codec: Codec::None,
            first_options: None,
            end: c.offset() as usize,
        };
        Ok((header, cmdlines))
    }
}

/// The magic, and the version string with its offset.
fn magic_and_version(bytes: &[u8]) -> Parsed<(Cursor<'_>, u64, String)> {
    let mut c = Cursor::new(bytes, 0, Endian::Little);
    if c.bytes(MAGIC.len(), "magic")? != MAGIC {
        return Err(Fault::new(0, "no trace.dat magic (\\x17\\x08Dtracing)"));
    }
    let at = c.offset();
    let version = c.cstr("version")?.into_owned();
    Ok((c, at, version))
}

/// Byte order, long size and page size; the cursor is left in the file's byte order.
fn machine(c: &mut Cursor<'_>) -> Parsed<(Endian, usize, usize)> {
    let at = c.offset();
    c.endian = match c.u8("byte order")? {
        0 => Endian::Little,
        1 => Endian::Big,
        b => {
            return Err(Fault::new(
                at,
                format!("byte order flag {b} (0 or 1 expected)"),
            ))
        }
    };
    let at = c.offset();
    let long_size = c.u8("long size")? as usize;
    if long_size != 4 && long_size != 8 {
        return Err(Fault::new(
            at,
            format!("long size {long_size} (4 or 8 expected)"),
        ));
    }
    let at = c.offset();
    let page_size = c.u32("page size")? as usize;
    if !(512..=1 << 20).contains(&page_size) || !page_size.is_power_of_two() {
        return Err(Fault::new(
            at,
            format!("page size {page_size} is not a page size"),
        ));
    }
    Ok((c.endian, long_size, page_size))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn head(version: &[u8], rest: &[u8]) -> Vec<u8> {
        let mut b = MAGIC.to_vec();
        b.extend(version);
        b.extend(rest);
        b
    }

    #[test]
    fn v6_and_v7_headers() {
        let h = FileHeader::parse(&head(b"6\0", &[0, 4, 0, 0x10, 0, 0])).unwrap();
        assert_eq!(
            (h.version, h.long_size, h.page_size, h.end),
            (6, 4, 4096, 18)
        );
        let mut v7 = head(b"7\0", &[1, 8, 0, 0, 0x10, 0]);
        v7.extend(b"zstd\x001.5.4\0");
        v7.extend(0x1234u64.to_be_bytes());
        let h = FileHeader::parse(&v7).unwrap();
        assert_eq!(
            (h.endian, h.codec, h.first_options),
            (Endian::Big, Codec::Zstd, Some(0x1234))
        );
    }

    #[test]
    fn perf_tracing_data_headers() {
        let (h, cmdlines) =
            FileHeader::parse_perf(&head(b"0.6\0", &[0, 8, 0, 0x10, 0, 0])).unwrap();
        assert_eq!(
            (h.version, h.long_size, h.page_size, h.end, cmdlines),
            (6, 8, 4096, 20, true)
        );
        let (_, cmdlines) =
            FileHeader::parse_perf(&head(b"0.5\0", &[0, 8, 0, 0x10, 0, 0])).unwrap();
        assert!(!cmdlines);
        let e = FileHeader::parse_perf(&head(b"6\0", &[0, 8, 0, 0x10, 0, 0])).unwrap_err();
        assert!(
            e.reason.contains("perf tracing data version \"6\""),
            "{e:?}"
        );
        // trace.dat's own reader refuses perf's numbering.
        assert!(FileHeader::parse(&head(b"0.6\0", &[0, 8, 0, 0x10, 0, 0])).is_err());
    }

    #[test]
    fn bad_headers_say_what_and_where() {
        let e = FileHeader::parse(&head(b"5\0", &[0, 8, 0, 0x10, 0, 0])).unwrap_err();
        assert_eq!(e.offset, 10);
        let e = FileHeader::parse(&head(b"6\0", &[2, 8, 0, 0x10, 0, 0])).unwrap_err();
        assert!(e.reason.contains("byte order"), "{e:?}");
        let e = FileHeader::parse(&head(b"6\0", &[0, 3, 0, 0x10, 0, 0])).unwrap_err();
        assert!(e.reason.contains("long size"), "{e:?}");
        let mut v7 = head(b"7\0", &[0, 8, 0, 0x10, 0, 0]);
        v7.extend(b"lz4\x001\0");
        assert!(FileHeader::parse(&v7).unwrap_err().reason.contains("lz4"));
        assert!(FileHeader::parse(&MAGIC[..5]).is_err());
        assert!(FileHeader::parse(b"not a trace at all").is_err());
    }
}
