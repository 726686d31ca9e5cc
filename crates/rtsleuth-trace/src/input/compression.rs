//! Transparent decompression: users keep big traces compressed and should not have to unpack
//! them first.

use crate::error::Error;
use std::io::{self, Read};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Compression {
    Gzip,
    Zstd,
    Xz,
    /// A bare zlib stream, as `atrace -z` writes after its preamble ([`super::atrace`]); it
    /// has no magic number of its own, so [`Compression::detect`] never returns it.
    Zlib,
}

impl Compression {
    /// Recognises the stream's magic number.
    pub fn detect(head: &[u8]) -> Option<Compression> {
        if head.starts_with(&[0x1f, 0x8b]) {
            Some(Compression::Gzip)
        } else if head.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) {
            Some(Compression::Zstd)
        } else if head.starts_with(&[0xfd, b'7', b'z', b'X', b'Z', 0x00]) {
            Some(Compression::Xz)
        } else {
            None
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Compression::Gzip => "gzip",
            Compression::Zstd => "zstd",
            Compression::Xz => "xz",
            Compression::Zlib => "zlib",
        }
    }

    /// Wraps `reader` in the matching decoder. Decoder failures come out of the returned reader
    /// as I/O errors carrying [`Damaged`], with the compressed byte offset.
    pub fn wrap(self, name: &str, reader: Box<dyn Read + Send>) -> Box<dyn Read + Send> {
        let consumed = Arc::new(AtomicU64::new(0));
        let counted = Counting {
            inner: reader,
            consumed: consumed.clone(),
        };
        let decoder: Box<dyn Read + Send> = match self {
            Compression::Gzip => Box::new(flate2::read::MultiGzDecoder::new(counted)),
            Compression::Xz => Box::new(xz2::read::XzDecoder::new_multi_decoder(counted)),
            Compression::Zlib => Box::new(flate2::read::ZlibDecoder::new(counted)),
            Compression::Zstd => match zstd::stream::read::Decoder::new(counted) {
                Ok(d) => Box::new(d),
                Err(e) => Box::new(Failed(Some(e))),
            },
        };
        Box::new(Decoding {
            inner: decoder,
            compression: self,
            consumed,
            name: name.to_string(),
            failed: None,
        })
    }
}

/// Counts compressed bytes so an error can say where the damage is.
struct Counting {
    inner: Box<dyn Read + Send>,
    consumed: Arc<AtomicU64>,
}

impl Read for Counting {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.consumed.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}

/// A decoder that could not even be created.
struct Failed(Option<io::Error>);

impl Read for Failed {
    fn read(&mut self, _: &mut [u8]) -> io::Result<usize> {
        Err(self
            .0
            .take()
            .unwrap_or_else(|| io::Error::other("decoder unavailable")))
    }
}

/// Where a compressed stream turned out to be damaged (corrupt or cut short). Everything
/// decompressed before it is good, so readers keep it and say where the stream stopped; the
/// failure travels to them inside an `io::Error` through the `Read` interface.
#[derive(Debug)]
pub struct Damaged {
    path: String,
    compression: Compression,
    /// Compressed bytes consumed when the decoder failed (decoders read ahead, so the damage
    /// is at or before it).
    pub offset: u64,
    cause: io::Error,
}

impl std::fmt::Display for Damaged {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} decoding failed at byte {}: {}",
            self.compression.name(),
            self.offset,
            self.cause
        )
    }
}

impl std::error::Error for Damaged {}

impl Damaged {
    /// Whether `e` reports damage.
    pub fn is(e: &io::Error) -> bool {
        e.get_ref().is_some_and(|inner| inner.is::<Damaged>())
    }

    /// The damage `e` reports, or `e` when it is another I/O failure.
    pub fn from_io(e: io::Error) -> Result<Damaged, io::Error> {
        if !Damaged::is(&e) {
            return Err(e);
        }
        let inner = e.into_inner().expect("checked above");
        Ok(*inner.downcast::<Damaged>().expect("checked above"))
    }

    /// The error for a stream of which nothing usable could be decompressed.
    pub fn into_error(self) -> Error {
        Error::Decompress {
            path: self.path,
            compression: self.compression.name(),
            offset: self.offset,
            cause: self.cause,
        }
    }

    /// The warning for a stream read up to the damage: `read` says how much was kept.
    pub fn note(&self, read: &str) -> String {
        format!(
            "the {} stream is damaged at compressed byte {} ({}): read {read}; the rest was not read",
            self.compression.name(),
            self.offset,
            self.cause
        )
    }
}

/// A decoder's output, its failures turned into [`Damaged`]. The first failure is kept and
/// returned by every later read: a decoder asked again after failing may return garbage or a
/// clean end, which would hide the damage from the reader that reads on.
struct Decoding {
    inner: Box<dyn Read + Send>,
    compression: Compression,
    consumed: Arc<AtomicU64>,
    name: String,
    failed: Option<(u64, io::ErrorKind, String)>,
}

impl Read for Decoding {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.failed.is_none() {
            match self.inner.read(buf) {
                Ok(n) => return Ok(n),
                // Retried by the caller; not a failure of the stream.
                Err(e) if e.kind() == io::ErrorKind::Interrupted => return Err(e),
                Err(e) => {
                    let offset = self.consumed.load(Ordering::Relaxed);
                    self.failed = Some((offset, e.kind(), e.to_string()));
                }
            }
        }
        let (offset, kind, cause) = self.failed.clone().expect("set above");
        Err(io::Error::new(
            kind,
            Damaged {
                path: self.name.clone(),
                compression: self.compression,
                offset,
                cause: io::Error::new(kind, cause),
            },
        ))
    }
}

/// Maps an error from reading an input stream to the library error, recognising decoder failures.
pub(crate) fn describe_read_error(name: &str, e: io::Error) -> Error {
    match Damaged::from_io(e) {
        Ok(damage) => damage.into_error(),
        Err(cause) => Error::Io {
            path: name.to_string(),
            cause,
        },
    }
}
