//! Cutting a byte stream into large blocks of whole lines.
//!
//! Text traces are parsed in parallel, block by block; a block never splits a line, so each can
//! be parsed on its own. Memory stays bounded by the block size times the blocks in flight,
//! whatever the size of the trace.
//!
//! A plain file is mapped rather than read: the parsers then read the page cache directly
//! instead of a copy of it, and the pages of every block handed back are released from the
//! process, so its resident memory stays bounded too. Streams (stdin, decompressed data) are
//! read into reused buffers.

use super::compression::{describe_read_error, Damaged};
use super::release::Steps;
use crate::error::{Error, Result};
use memmap2::Mmap;
use std::fs::File;
use std::io::{self, Read};
use std::ops::{Deref, Range};
use std::sync::Arc;

/// No ftrace line is anywhere near this long; a longer one means the input is not a text trace,
/// and refusing it keeps memory bounded on a 10 GB line.
pub const MAX_LINE: usize = 1 << 20;

/// Target size of one block: large enough that per-block overhead vanishes, small enough that
/// a window of blocks per thread stays a few megabytes.
pub const CHUNK_SIZE: usize = 256 << 10;

/// How much of a mapped file is handed back before its pages are released. Each release
/// costs the other CPUs a TLB flush; a step of blocks rather than every block took 5 % off a
/// read of 100 MB, for 8 MB more at most in memory.
const RELEASE_STEP: usize = 8 << 20;

/// A block of whole lines (the last one may lack its newline at the end of the stream).
#[derive(Debug)]
pub struct Chunk {
    pub data: Bytes,
    /// Byte offset of `data[0]` in the (decompressed) stream.
    pub offset: u64,
    /// Set on the last block of a compressed stream that is damaged after it.
    pub damage: Option<StreamEnd>,
}

/// A compressed stream stopped by damage. The line it cut (bytes after the last newline) is
/// dropped, not handed on: half a line would be parsed as a wrong event or an unparsed line.
#[derive(Debug)]
pub struct StreamEnd {
    pub damage: Damaged,
    /// Bytes of the cut line that were dropped.
    pub dropped: u64,
}

/// The bytes of a block: a buffer of its own, or a range of a mapped file.
#[derive(Debug)]
pub enum Bytes {
    Owned(Vec<u8>),
    Mapped(Arc<Mmap>, Range<usize>),
}

/// One line of a block.
pub struct BlockLine<'a> {
    /// Byte offset of the line in the block.
    pub offset: usize,
    /// The line without its newline.
    pub raw: &'a [u8],
    /// The line as text, when it is UTF-8.
    pub text: Option<&'a str>,
}

impl Chunk {
    /// The lines of the block, in order. Validating the whole block at once is much cheaper
    /// than line by line, and the ASCII check that nearly every block passes cheaper still
    /// than UTF-8 validation (4 of 155 ms of CPU for `latency` over 100 MB); only a block
    /// with bad bytes falls back to checking each line.
    pub fn lines(&self) -> impl Iterator<Item = BlockLine<'_>> {
        let data = &self.data[..];
        let valid = data.is_ascii() || std::str::from_utf8(data).is_ok();
        let mut start = 0;
        std::iter::from_fn(move || {
            if start >= data.len() {
                return None;
            }
            let end = memchr::memchr(b'\n', &data[start..]).map_or(data.len(), |i| start + i);
            let raw = &data[start..end];
            let text = if valid {
                // SAFETY: `data` is valid UTF-8 and `raw` is cut from it at ASCII newlines,
                // which are character boundaries.
                Some(unsafe { std::str::from_utf8_unchecked(raw) })
            } else {
                std::str::from_utf8(raw).ok()
            };
            let line = BlockLine {
                offset: start,
                raw,
                text,
            };
            start = end + 1;
            Some(line)
        })
    }
}

impl Deref for Bytes {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        match self {
            Bytes::Owned(v) => v,
            Bytes::Mapped(map, range) => &map[range.clone()],
        }
    }
}

pub struct ChunkReader {
    name: String,
    source: Source,
    offset: u64,
    chunk_size: usize,
}

enum Source {
    Stream {
        reader: Box<dyn Read + Send>,
        carry: Vec<u8>,
        eof: bool,
        spare: Vec<Vec<u8>>,
        /// Where a compressed stream failed: its end, once the block before it is out.
        damage: Option<StreamEnd>,
    },
    Mapped {
        map: Arc<Mmap>,
        /// How far the blocks handed back have been released.
        released: Steps,
    },
}

impl ChunkReader {
    pub fn new(name: &str, reader: Box<dyn Read + Send>) -> Self {
        Self::with_chunk_size(name, reader, CHUNK_SIZE)
    }

    /// Smaller blocks are useful in tests to exercise block boundaries.
    pub fn with_chunk_size(name: &str, reader: Box<dyn Read + Send>, chunk_size: usize) -> Self {
        let source = Source::Stream {
            reader,
            carry: Vec::new(),
            eof: false,
            spare: Vec::new(),
            damage: None,
        };
        Self::from_source(name, source, chunk_size)
    }

    /// Maps a regular file. Like every tool that maps its input, this trusts that nobody
    /// truncates the file while it is read.
    pub fn mapped(name: &str, file: &File) -> io::Result<Self> {
        // SAFETY: the map is only read, and trace files are not rewritten while being analysed.
        let map = unsafe { Mmap::map(file)? };
        // Reading ahead helps the page cache; failing to advise changes nothing else.
        let _ = map.advise(memmap2::Advice::Sequential);
        let source = Source::Mapped {
            map: Arc::new(map),
            released: Steps::new(RELEASE_STEP),
        };
        Ok(Self::from_source(name, source, CHUNK_SIZE))
    }

    fn from_source(name: &str, source: Source, chunk_size: usize) -> Self {
        ChunkReader {
            name: name.to_string(),
            source,
            offset: 0,
            chunk_size: chunk_size.max(1),
        }
    }

    /// Gives a parsed block back: its buffer is reused, or its pages of the mapped file are
    /// released from the process a step at a time (they stay in the page cache). Blocks come
    /// back in order.
    pub fn recycle(&mut self, chunk: Chunk) {
        match (&mut self.source, chunk.data) {
            (Source::Stream { spare, .. }, Bytes::Owned(buf)) if spare.len() < 64 => {
                spare.push(buf)
            }
            (Source::Mapped { map, released }, Bytes::Mapped(_, range)) => {
                // SAFETY: `map` maps the file read-only, and no block before `range.end` is
                // in use any more; a later read would fault its pages in again.
                unsafe { released.passed(map, range.end) };
            }
            _ => {}
        }
    }

    /// The next block, or `None` at the end. A line longer than [`MAX_LINE`] is an
    /// [`Error::LineTooLong`] whose `line` is 0: only the caller knows how many lines came before.
    pub fn next_chunk(&mut self) -> Result<Option<Chunk>> {
        let (data, damage) = match &mut self.source {
            Source::Mapped { map, .. } => {
                let data = next_mapped(map, self.offset as usize, self.chunk_size);
                (data, None)
            }
            Source::Stream {
                reader,
                carry,
                eof,
                spare,
                damage,
            } => {
                let stream = Stream {
                    name: &self.name,
                    reader,
                    eof,
                    damage,
                };
                let data = next_streamed(stream, carry, spare, self.chunk_size)?;
                (data, damage.take())
            }
        };
        match data {
            Next::End => Ok(None),
            Next::TooLong => Err(Error::LineTooLong {
                path: self.name.clone(),
                line: 0,
                offset: self.offset,
                limit: MAX_LINE,
            }),
            Next::Block(data) => {
                let chunk = Chunk {
                    offset: self.offset,
                    data,
                    damage,
                };
                self.offset += chunk.data.len() as u64;
                crate::progress::add_bytes(chunk.data.len() as u64);
                Ok(Some(chunk))
            }
        }
    }
}

enum Next {
    Block(Bytes),
    TooLong,
    End,
}

/// The block of the mapped file starting at `start`: up to the last newline within
/// `chunk_size` bytes, or the single line there (up to [`MAX_LINE`]).
fn next_mapped(map: &Arc<Mmap>, start: usize, chunk_size: usize) -> Next {
    let rest = &map[start..];
    if rest.is_empty() {
        return Next::End;
    }
    if rest.len() <= chunk_size {
        return Next::Block(Bytes::Mapped(map.clone(), start..map.len()));
    }
    let end = match memchr::memrchr(b'\n', &rest[..chunk_size]) {
        Some(last) => last + 1,
        None => match memchr::memchr(b'\n', &rest[..rest.len().min(MAX_LINE + 1)]) {
            Some(nl) if nl < MAX_LINE => nl + 1,
            Some(_) => return Next::TooLong,
            None if rest.len() <= MAX_LINE => rest.len(),
            None => return Next::TooLong,
        },
    };
    Next::Block(Bytes::Mapped(map.clone(), start..start + end))
}

/// A stream being cut into blocks.
struct Stream<'a> {
    name: &'a str,
    reader: &'a mut Box<dyn Read + Send>,
    eof: &'a mut bool,
    damage: &'a mut Option<StreamEnd>,
}

/// The next block of a stream, read into a reused buffer; the partial last line is carried
/// over to the next block.
fn next_streamed(
    mut s: Stream<'_>,
    carry: &mut Vec<u8>,
    spare: &mut Vec<Vec<u8>>,
    chunk_size: usize,
) -> Result<Next> {
    let mut buf = spare.pop().unwrap_or_default();
    buf.clear();
    buf.append(carry);
    loop {
        while buf.len() < chunk_size && !*s.eof {
            *s.eof = fill(&mut s, &mut buf, chunk_size)?;
        }
        if let Some(end) = s.damage.as_mut() {
            // The last block ends at the last whole line; an empty one still carries the damage.
            let kept = memchr::memrchr(b'\n', &buf).map_or(0, |nl| nl + 1);
            end.dropped = (buf.len() - kept) as u64;
            buf.truncate(kept);
            return Ok(Next::Block(Bytes::Owned(buf)));
        }
        if buf.is_empty() {
            return Ok(Next::End);
        }
        if *s.eof {
            return Ok(Next::Block(Bytes::Owned(buf)));
        }
        match memchr::memrchr(b'\n', &buf) {
            Some(last) => {
                carry.extend_from_slice(&buf[last + 1..]);
                buf.truncate(last + 1);
                return Ok(Next::Block(Bytes::Owned(buf)));
            }
            None if buf.len() > MAX_LINE => return Ok(Next::TooLong),
            None => *s.eof = fill(&mut s, &mut buf, chunk_size)?,
        }
    }
}

/// Reads once, up to `want` bytes, onto the end of `buf`; true at the end of the stream, which
/// damage to a compressed stream is too (kept in `s.damage`).
fn fill(s: &mut Stream<'_>, buf: &mut Vec<u8>, want: usize) -> Result<bool> {
    let start = buf.len();
    buf.resize(start + want, 0);
    loop {
        match s.reader.read(&mut buf[start..]) {
            Ok(n) => {
                buf.truncate(start + n);
                return Ok(n == 0);
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => {
                buf.truncate(start);
                let damage = Damaged::from_io(e).map_err(|e| describe_read_error(s.name, e))?;
                *s.damage = Some(StreamEnd { damage, dropped: 0 });
                return Ok(true);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chunks(text: &str, size: usize) -> Vec<String> {
        let mut r = ChunkReader::with_chunk_size(
            "t",
            Box::new(io::Cursor::new(text.as_bytes().to_vec())),
            size,
        );
        let mut out = Vec::new();
        while let Some(c) = r.next_chunk().unwrap() {
            out.push(String::from_utf8(c.data.to_vec()).unwrap());
        }
        out
    }

    #[test]
    fn blocks_end_on_line_boundaries() {
        let text = "aaaa\nbbbb\ncccc\ndd";
        let got = chunks(text, 6);
        assert!(got.iter().take(got.len() - 1).all(|c| c.ends_with('\n')));
        assert_eq!(got.concat(), text);
    }

    #[test]
    fn a_mapped_file_gives_the_same_blocks_and_refuses_overlong_lines() {
        use std::io::Write;
        let mut f = tempfile::tempfile().unwrap();
        let text: String = (0..100_000).map(|i| format!("line {i}\n")).collect();
        f.write_all(text.as_bytes()).unwrap();
        let mut r = ChunkReader::mapped("m", &f).unwrap();
        let mut joined = Vec::new();
        while let Some(c) = r.next_chunk().unwrap() {
            assert_eq!(c.offset as usize, joined.len());
            assert!(c.data.ends_with(b"\n"));
            joined.extend_from_slice(&c.data);
            r.recycle(c);
        }
        assert_eq!(joined, text.as_bytes());

        let mut f = tempfile::tempfile().unwrap();
        f.write_all(b"ok\n").unwrap();
        f.write_all(&vec![b'x'; MAX_LINE + CHUNK_SIZE]).unwrap();
        let mut r = ChunkReader::mapped("m", &f).unwrap();
        assert_eq!(&r.next_chunk().unwrap().unwrap().data[..], b"ok\n");
        assert!(matches!(
            r.next_chunk(),
            Err(Error::LineTooLong { offset: 3, .. })
        ));
    }

    /// ASCII, UTF-8 beyond ASCII, and a bad byte: only the bad line has no text.
    #[test]
    fn lines_are_text_unless_their_bytes_are_not_utf8() {
        let block = |bytes: &[u8]| Chunk {
            data: Bytes::Owned(bytes.to_vec()),
            offset: 0,
            damage: None,
        };
        let texts = |c: &Chunk| {
            c.lines()
                .map(|l| l.text.map(str::to_owned))
                .collect::<Vec<_>>()
        };
        let some = |s: &str| Some(s.to_owned());
        assert_eq!(texts(&block(b"a-1\nb-2")), [some("a-1"), some("b-2")]);
        let utf8 = "Web Cont\u{e9}nt-7\nb-2\n";
        assert_eq!(
            texts(&block(utf8.as_bytes())),
            [some("Web Cont\u{e9}nt-7"), some("b-2")]
        );
        assert_eq!(
            texts(&block(b"a-1\n\xffx\nb-2\n")),
            [some("a-1"), None, some("b-2")]
        );
    }

    #[test]
    fn overlong_line_is_refused() {
        let text = "x".repeat(MAX_LINE * 2);
        let mut r = ChunkReader::with_chunk_size(
            "big",
            Box::new(io::Cursor::new(format!("ok\n{text}\n").into_bytes())),
            1024,
        );
        let first = r.next_chunk().unwrap().unwrap();
        assert_eq!(&first.data[..], b"ok\n");
        match r.next_chunk() {
            Err(Error::LineTooLong { offset, .. }) => assert_eq!(offset, 3),
            other => panic!(
                "expected LineTooLong, got {:?}",
                other.map(|c| c.map(|c| c.data.len()))
            ),
        }
    }
}
