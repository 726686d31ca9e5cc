//! The compression a v7 file declares in its header (`zstd`, `zlib` or `none`), applied to
//! metadata sections and to the per-CPU trace data in chunks.

use super::bytes::{Cursor, Fault, Parsed};

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

    /// One compressed block: `u32 compressed size, u32 uncompressed size, data`, the framing of
    /// both compressed sections and trace-data chunks.
    pub fn block(self, c: &mut Cursor<'_>, what: &str) -> Parsed<Vec<u8>> {
        let mut out = Vec::new();
        Inflater::new(self).block_into(c, what, &mut out)?;
        Ok(out)
    }
}

/// The largest decompressed block taken at its word: trace-cmd compresses trace data in chunks
/// of a few pages and metadata sections whole (kallsyms, the largest, is tens of megabytes). A
/// damaged size word must not reserve gigabytes.
const MAX_BLOCK: usize = 256 << 20;

/// A decompressor that keeps its state between blocks (a zstd context is costly to set up,
/// and a big trace has thousands of chunks).
pub struct Inflater {
    codec: Codec,
    zstd: Option<zstd::bulk::Decompressor<'static>>,
}

impl Inflater {
    pub fn new(codec: Codec) -> Inflater {
        Inflater { codec, zstd: None }
    }

    /// Decompresses `data`, which must expand to exactly `size` bytes, into `out` (its
    /// allocation is reused: fresh buffers would be zeroed by the kernel each time).
    pub fn decompress_into(
        &mut self,
        data: &[u8],
        size: usize,
        at: u64,
        out: &mut Vec<u8>,
    ) -> Parsed<()> {
        let name = self.codec.name();
        if size > MAX_BLOCK {
            return Err(Fault::new(
                at,
                format!("{name} block says it expands to {size} bytes, more than the {MAX_BLOCK} of any block trace-cmd writes"),
            ));
        }
        out.clear();
        out.reserve(size);
        let res = match self.codec {
            Codec::None => {
                out.extend_from_slice(data);
                Ok(())
            }
            Codec::Zlib => flate2::Decompress::new(true)
                .decompress_vec(data, out, flate2::FlushDecompress::Finish)
                .map(drop)
                .map_err(std::io::Error::other),
            Codec::Zstd => {
                let z = match self.zstd.take() {
                    Some(z) => Ok(z),
                    None => zstd::bulk::Decompressor::new(),
                };
                z.and_then(|mut z| {
                    let r = z.decompress_to_buffer(data, out).map(drop);
                    self.zstd = Some(z);
                    r
                })
            }
        };
        match res {
            Err(e) => Err(Fault::new(at, format!("{name} data is corrupt: {e}"))),
            Ok(()) if out.len() != size => Err(Fault::new(
                at,
                format!(
                    "{name} data expands to {} bytes, the file says {size}",
                    out.len()
                ),
            )),
            Ok(()) => Ok(()),
        }
    }

    /// Reads and decompresses one framed block (see [`Codec::block`]) into `out`.
    pub fn block_into(&mut self, c: &mut Cursor<'_>, what: &str, out: &mut Vec<u8>) -> Parsed<()> {
        let at = c.offset();
        let packed = c.u32(what)? as usize;
        let size = c.u32(what)? as usize;
        let data = c.bytes(packed, what)?;
        self.decompress_into(data, size, at, out)
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
        let mut out = Vec::new();
        let mut z = Inflater::new(Codec::Zstd);
        let e = z
            .decompress_into(&packed, plain.len() - 1, 7, &mut out)
            .unwrap_err();
        assert_eq!(e.offset, 7);
        let e = z
            .decompress_into(&packed, plain.len() + 1, 7, &mut out)
            .unwrap_err();
        assert!(e.reason.contains("expands to"), "{e:?}");
        // A size no block has is refused before anything is reserved.
        let mut fresh = Vec::new();
        let e = z
            .decompress_into(&packed, u32::MAX as usize, 9, &mut fresh)
            .unwrap_err();
        assert!(e.reason.contains("more than the 268435456"), "{e:?}");
        assert_eq!(fresh.capacity(), 0);
        // The context survives errors and is reused.
        z.decompress_into(&packed, plain.len(), 7, &mut out)
            .unwrap();
        assert_eq!(out, plain);
        let zl = flate2::read::ZlibEncoder::new(&plain[..], flate2::Compression::fast());
        let zl: Vec<u8> = std::io::Read::bytes(zl).map(Result::unwrap).collect();
        let mut inflate = Inflater::new(Codec::Zlib);
        inflate
            .decompress_into(&zl, plain.len(), 0, &mut out)
            .unwrap();
        assert_eq!(out, plain);
        assert!(inflate
            .decompress_into(b"garbage", 10, 0, &mut out)
            .is_err());
        assert!(Codec::from_name("lz4", 0).is_err());
    }
}
