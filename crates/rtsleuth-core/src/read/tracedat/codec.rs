//! The compression a v7 file declares in its header (`zstd`, `zlib` or `none`), applied to
//! metadata sections and to the per-CPU trace data in chunks.

use super::bytes::{Cursor, Fault, Parsed};
use std::io::Read;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Codec {
    None,
    Zlib,
    Zstd,
}

impl Codec {
    /// The codec named in the file header; an unknown name is an error because nothing after
    /// the header could be read.
    pub fn from_name(name: &str, at: u64) -> Parsed<Codec> {
        match name {
            "none" | "" => Ok(Codec::None),
            "zlib" => Ok(Codec::Zlib),
            "zstd" => Ok(Codec::Zstd),
            other => Err(Fault::new(
                at,
                format!("compression {other:?} is not one trace-cmd writes (none, zlib, zstd)"),
            )),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Codec::None => "none",
            Codec::Zlib => "zlib",
            Codec::Zstd => "zstd",
        }
    }

    /// Decompresses `data` that must expand to exactly `size` bytes.
    pub fn decompress(self, data: &[u8], size: usize, at: u64) -> Parsed<Vec<u8>> {
        let mut out = Vec::with_capacity(size);
        let res = match self {
            Codec::None => {
                out.extend_from_slice(data);
                Ok(data.len())
            }
            Codec::Zlib => flate2::read::ZlibDecoder::new(data)
                .take(size as u64 + 1)
                .read_to_end(&mut out),
            Codec::Zstd => zstd::stream::read::Decoder::with_buffer(data)
                .and_then(|d| d.take(size as u64 + 1).read_to_end(&mut out)),
        };
        match res {
            Err(e) => Err(Fault::new(
                at,
                format!("{} data is corrupt: {e}", self.name()),
            )),
            Ok(_) if out.len() != size => Err(Fault::new(
                at,
                format!(
                    "{} data expands to {} bytes, the file says {size}",
                    self.name(),
                    out.len()
                ),
            )),
            Ok(_) => Ok(out),
        }
    }

    /// One compressed block: `u32 compressed size, u32 uncompressed size, data`, the framing of
    /// both compressed sections and trace-data chunks.
    pub fn block(self, c: &mut Cursor<'_>, what: &str) -> Parsed<Vec<u8>> {
        let at = c.offset();
        let packed = c.u32(what)? as usize;
        let size = c.u32(what)? as usize;
        let data = c.bytes(packed, what)?;
        self.decompress(data, size, at)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::read::tracedat::bytes::Endian;

    #[test]
    fn blocks_round_trip_and_lie_detection() {
        let plain = b"header_page\0 some bytes".repeat(10);
        let packed = zstd::encode_all(&plain[..], 3).unwrap();
        let mut framed = (packed.len() as u32).to_le_bytes().to_vec();
        framed.extend((plain.len() as u32).to_le_bytes());
        framed.extend(&packed);
        let got = Codec::Zstd
            .block(&mut Cursor::new(&framed, 0, Endian::Little), "s")
            .unwrap();
        assert_eq!(got, plain);
        // A size that disagrees with the data is reported, not trusted.
        let e = Codec::Zstd
            .decompress(&packed, plain.len() - 1, 7)
            .unwrap_err();
        assert_eq!(e.offset, 7);
        assert!(Codec::Zlib.decompress(b"garbage", 10, 0).is_err());
        assert!(Codec::from_name("lz4", 0).is_err());
    }
}
