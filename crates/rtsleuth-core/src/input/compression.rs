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
        }
    }

    /// Wraps `reader` in the matching decoder. Decoder failures come out of the returned reader
    /// as I/O errors that [`describe_read_error`] turns into [`Error::Decompress`] with the
    /// compressed byte offset.
    pub fn wrap(self, name: &str, reader: Box<dyn Read + Send>) -> Box<dyn Read + Send> {
        let consumed = Arc::new(AtomicU64::new(0));
        let counted = Counting {
            inner: reader,
            consumed: consumed.clone(),
        };
        let decoder: Box<dyn Read + Send> = match self {
            Compression::Gzip => Box::new(flate2::read::MultiGzDecoder::new(counted)),
            Compression::Xz => Box::new(xz2::read::XzDecoder::new_multi_decoder(counted)),
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

/// The failure of a decoder, carried inside an `io::Error` through the `Read` interface.
#[derive(Debug)]
struct DecodeFailure {
    path: String,
    compression: Compression,
    offset: u64,
    source: io::Error,
}

impl std::fmt::Display for DecodeFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} decoding failed at byte {}: {}",
            self.compression.name(),
            self.offset,
            self.source
        )
    }
}

impl std::error::Error for DecodeFailure {}

struct Decoding {
    inner: Box<dyn Read + Send>,
    compression: Compression,
    consumed: Arc<AtomicU64>,
    name: String,
}

impl Read for Decoding {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.inner.read(buf).map_err(|source| {
            let kind = source.kind();
            io::Error::new(
                kind,
                DecodeFailure {
                    path: self.name.clone(),
                    compression: self.compression,
                    offset: self.consumed.load(Ordering::Relaxed),
                    source,
                },
            )
        })
    }
}

/// Maps an error from reading an input stream to the library error, recognising decoder failures.
pub(crate) fn describe_read_error(name: &str, e: io::Error) -> Error {
    if e.get_ref().is_some_and(|inner| inner.is::<DecodeFailure>()) {
        let failure = *e
            .into_inner()
            .and_then(|inner| inner.downcast::<DecodeFailure>().ok())
            .expect("checked above");
        return Error::Decompress {
            path: failure.path,
            compression: failure.compression.name(),
            offset: failure.offset,
            cause: failure.source,
        };
    }
    Error::Io {
        path: name.to_string(),
        cause: e,
    }
}
