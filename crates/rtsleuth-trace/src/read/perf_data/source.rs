//! Where perf.data's bytes come from. perf.data is read by seeking: its metadata (the
//! tracepoint formats included) sits after the records, and the crate reads the records
//! from a `Read + Seek`. A plain file is read in place with bounded memory; compressed input
//! or standard input has no place to seek in, so it is read into memory first, as the
//! trace.dat reader does (a perf.data is usually a few MB; keep a GB one as a plain file).

use super::preflight::Section;
use crate::error::Result;
use crate::input::{describe_read_error, Input};
use std::fs::File;
use std::io::{BufReader, Cursor, Read, Seek, SeekFrom};
use std::os::unix::fs::FileExt;

/// What the crate reads records from.
pub trait ReadSeek: Read + Seek + Send {}
impl<T: Read + Seek + Send> ReadSeek for T {}

pub enum Source {
    File { file: File, len: u64 },
    Memory(std::sync::Arc<[u8]>),
}

impl Source {
    pub fn open(mut input: Input) -> Result<Source> {
        if let Some(file) = input.file.take() {
            let len = file
                .metadata()
                .map_err(|cause| crate::error::Error::Io {
                    path: input.name.clone(),
                    cause,
                })?
                .len();
            return Ok(Source::File { file, len });
        }
        let mut v = Vec::new();
        input
            .reader
            .read_to_end(&mut v)
            .map_err(|e| describe_read_error(&input.name, e))?;
        Ok(Source::Memory(v.into()))
    }

    pub fn len(&self) -> u64 {
        match self {
            Source::File { len, .. } => *len,
            Source::Memory(b) => b.len() as u64,
        }
    }

    /// The bytes of `s`, or `None` when they cannot be read whole.
    pub fn section(&self, s: Section) -> Option<Vec<u8>> {
        let size = usize::try_from(s.size).ok()?;
        match self {
            Source::File { file, .. } => {
                let mut buf = vec![0; size];
                file.read_exact_at(&mut buf, s.offset).ok()?;
                Some(buf)
            }
            Source::Memory(b) => {
                let start = usize::try_from(s.offset).ok()?;
                b.get(start..start.checked_add(size)?).map(<[u8]>::to_vec)
            }
        }
    }

    /// A reader for the crate, at the start of the file.
    pub fn reader(&self) -> std::io::Result<Box<dyn ReadSeek>> {
        Ok(match self {
            Source::File { file, len } => Box::new(BufReader::with_capacity(
                1 << 18,
                At {
                    file: file.try_clone()?,
                    pos: 0,
                    len: *len,
                },
            )),
            Source::Memory(b) => Box::new(Cursor::new(b.clone())),
        })
    }
}

/// A reader of a file at its own position (`pread`): two readers of one file, as the
/// kernel-map look-up and the main pass are, must not move each other (a cloned descriptor
/// shares its offset).
struct At {
    file: File,
    pos: u64,
    len: u64,
}

impl Read for At {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.file.read_at(buf, self.pos)?;
        self.pos += n as u64;
        Ok(n)
    }
}

impl Seek for At {
    fn seek(&mut self, to: SeekFrom) -> std::io::Result<u64> {
        let pos = match to {
            SeekFrom::Start(p) => Some(p),
            SeekFrom::End(d) => self.len.checked_add_signed(d),
            SeekFrom::Current(d) => self.pos.checked_add_signed(d),
        };
        self.pos = pos.ok_or_else(|| std::io::Error::from(std::io::ErrorKind::InvalidInput))?;
        Ok(self.pos)
    }
}
