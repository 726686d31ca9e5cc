//! Turning a path (or `-` for stdin) into a stream of bytes in a known format.
//!
//! The format is decided from the content, never the file name: traces get renamed, piped and
//! compressed. Compressed input (`gzip`, `zstd`, `xz`) is unwrapped first and the result is
//! sniffed again. Containers of ftrace text (systrace HTML, `atrace -z` output) are opened
//! here too: their reader gives the text inside.

mod atrace;
mod chunks;
mod compression;
mod detect;
mod ordered;
mod prefetch;
pub(crate) mod release;
mod systrace;

pub use chunks::{BlockLine, Chunk, ChunkReader, StreamEnd, MAX_LINE};
pub(crate) use compression::describe_read_error;
pub use compression::{Compression, Damaged};
pub use detect::Format;
pub(crate) use ordered::{on_pool, parse_in_order, window};
pub use prefetch::{Prefetch, Recycler};
pub use release::populate;

use crate::error::{Error, Result};
use std::fs::File;
use std::io::{self, Read};

/// How many bytes are looked at to recognise a format.
const SNIFF_BYTES: usize = 64 * 1024;

/// An opened trace: its name for messages, what it is, and its (decompressed) bytes.
pub struct Input {
    pub name: String,
    pub format: Format,
    pub compression: Option<Compression>,
    pub reader: Box<dyn Read + Send>,
    /// The file itself when it is a plain, uncompressed regular file: readers may map it
    /// instead of reading `reader`.
    pub file: Option<File>,
}

impl std::fmt::Debug for Input {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Input")
            .field("name", &self.name)
            .field("format", &self.format)
            .field("compression", &self.compression)
            .finish()
    }
}

impl Input {
    /// Opens `path`, or standard input for `-`.
    pub fn open(path: &str) -> Result<Input> {
        if path == "-" {
            return Self::from_reader("<stdin>", Box::new(io::stdin()));
        }
        let io_err = |cause| Error::Io {
            path: path.to_string(),
            cause,
        };
        let meta = std::fs::metadata(path).map_err(io_err)?;
        if meta.is_dir() {
            return Err(Error::IsDirectory {
                path: path.to_string(),
            });
        }
        let file = File::open(path).map_err(io_err)?;
        let mappable = file.try_clone().ok().filter(|_| meta.is_file());
        let mut input = Self::from_reader(path, Box::new(file))?;
        if input.compression.is_none() && !input.format.is_container() {
            input.file = mappable;
        }
        Ok(input)
    }

    /// Sniffs an already open stream. `name` is used in messages.
    pub fn from_reader(name: &str, reader: Box<dyn Read + Send>) -> Result<Input> {
        let (head, reader) = peek(name, reader)?;
        let Some(c) = Compression::detect(&head) else {
            return Self::finish(name, None, &head, reader);
        };
        let (head, reader) = peek(name, c.wrap(name, reader))?;
        Self::finish(name, Some(c), &head, reader)
    }

    /// Recognises the (decompressed) content; an empty one is an error of its own.
    fn finish(
        name: &str,
        compression: Option<Compression>,
        head: &[u8],
        reader: Box<dyn Read + Send>,
    ) -> Result<Input> {
        if head.is_empty() {
            return Err(Error::Empty {
                path: name.to_string(),
            });
        }
        let format = Format::detect(head).map_err(|why| Error::NotATrace {
            path: name.to_string(),
            why,
        })?;
        let reader = match format {
            Format::SystraceHtml => Box::new(systrace::SystraceText::open(name, reader)?),
            Format::AtraceZ => atrace_text(name, head, reader)?,
            _ => reader,
        };
        Ok(Input {
            name: name.to_string(),
            format,
            compression,
            reader,
            file: None,
        })
    }
}

/// The ftrace text inside `atrace -z` output. Its first bytes are decompressed here, so that
/// a stream of which nothing decompresses, or that holds something else than text, is refused
/// when it is opened.
fn atrace_text(
    name: &str,
    head: &[u8],
    reader: Box<dyn Read + Send>,
) -> Result<Box<dyn Read + Send>> {
    // Format::detect said AtraceZ because this finds the zlib stream.
    let Some(found) = atrace::detect(head) else {
        return Ok(reader);
    };
    let text = atrace::decompress(name, found, reader).map_err(|e| describe_read_error(name, e))?;
    let (head, text) = peek(name, text)?;
    if head.is_empty() {
        return Err(Error::Empty {
            path: name.to_string(),
        });
    }
    match Format::detect(&head) {
        Ok(Format::FtraceText) => Ok(text),
        Ok(other) => Err(Error::NotATrace {
            path: name.to_string(),
            why: format!(
                "atrace -z output whose zlib data holds {}, not ftrace text",
                other.name()
            ),
        }),
        Err(why) => Err(Error::NotATrace {
            path: name.to_string(),
            why: format!("atrace -z output whose zlib data is not ftrace text: {why}"),
        }),
    }
}

/// Reads up to [`SNIFF_BYTES`] and returns them with a reader that yields the whole stream again.
/// A compressed stream damaged after its first bytes is still a trace: the reader meets the
/// damage again after the head and keeps what came before it.
fn peek(name: &str, mut reader: Box<dyn Read + Send>) -> Result<(Vec<u8>, Box<dyn Read + Send>)> {
    let mut head = Vec::with_capacity(SNIFF_BYTES);
    let mut filled = 0;
    head.resize(SNIFF_BYTES, 0);
    while filled < SNIFF_BYTES {
        match reader.read(&mut head[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) if filled > 0 && Damaged::is(&e) => break,
            Err(e) => return Err(describe_read_error(name, e)),
        }
    }
    head.truncate(filled);
    let again = io::Cursor::new(head.clone()).chain(reader);
    Ok((head, Box::new(again)))
}
