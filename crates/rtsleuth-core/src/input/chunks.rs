//! Cutting a byte stream into large blocks of whole lines.
//!
//! Text traces are parsed in parallel, block by block; a block never splits a line, so each can
//! be parsed on its own. Memory stays bounded by the block size times the blocks in flight,
//! whatever the size of the trace.

use super::compression::describe_read_error;
use crate::error::{Error, Result};
use std::io::{self, Read};

/// No ftrace line is anywhere near this long; a longer one means the input is not a text trace,
/// and refusing it keeps memory bounded on a 10 GB line.
pub const MAX_LINE: usize = 1 << 20;

/// Target size of one block: small enough that a window of blocks per thread stays in cache-friendly memory, large enough that per-block overhead vanishes.
pub const CHUNK_SIZE: usize = 512 << 10;

/// A block of whole lines (the last one may lack its newline at the end of the stream).
#[derive(Debug)]
pub struct Chunk {
    pub data: Vec<u8>,
    /// Byte offset of `data[0]` in the (decompressed) stream.
    pub offset: u64,
}

pub struct ChunkReader {
    name: String,
    reader: Box<dyn Read + Send>,
    carry: Vec<u8>,
    offset: u64,
    eof: bool,
    chunk_size: usize,
    spare: Vec<Vec<u8>>,
}

impl ChunkReader {
    pub fn new(name: &str, reader: Box<dyn Read + Send>) -> Self {
        Self::with_chunk_size(name, reader, CHUNK_SIZE)
    }

    /// Smaller blocks are useful in tests to exercise block boundaries.
    pub fn with_chunk_size(name: &str, reader: Box<dyn Read + Send>, chunk_size: usize) -> Self {
        ChunkReader {
            name: name.to_string(),
            reader,
            carry: Vec::new(),
            offset: 0,
            eof: false,
            chunk_size: chunk_size.max(1),
            spare: Vec::new(),
        }
    }

    /// Gives a block's buffer back for reuse, sparing the allocator and page faults.
    pub fn recycle(&mut self, chunk: Chunk) {
        if self.spare.len() < 64 {
            self.spare.push(chunk.data);
        }
    }

    /// The next block, or `None` at the end. A line longer than [`MAX_LINE`] is an
    /// [`Error::LineTooLong`] whose `line` is 0: only the caller knows how many lines came before.
    pub fn next_chunk(&mut self) -> Result<Option<Chunk>> {
        let mut buf = self.spare.pop().unwrap_or_default();
        buf.clear();
        buf.append(&mut self.carry);
        loop {
            while buf.len() < self.chunk_size && !self.eof {
                self.fill(&mut buf)?;
            }
            if buf.is_empty() {
                return Ok(None);
            }
            if self.eof {
                return Ok(Some(self.emit(buf)));
            }
            match memchr::memrchr(b'\n', &buf) {
                Some(last) => {
                    self.carry.extend_from_slice(&buf[last + 1..]);
                    buf.truncate(last + 1);
                    return Ok(Some(self.emit(buf)));
                }
                None if buf.len() > MAX_LINE => {
                    return Err(Error::LineTooLong {
                        path: self.name.clone(),
                        line: 0,
                        offset: self.offset,
                        limit: MAX_LINE,
                    });
                }
                None => self.fill(&mut buf)?,
            }
        }
    }

    fn emit(&mut self, data: Vec<u8>) -> Chunk {
        let chunk = Chunk {
            offset: self.offset,
            data,
        };
        self.offset += chunk.data.len() as u64;
        chunk
    }

    /// Reads once into the spare capacity of `buf`.
    fn fill(&mut self, buf: &mut Vec<u8>) -> Result<()> {
        let want = self.chunk_size;
        let start = buf.len();
        buf.resize(start + want, 0);
        loop {
            match self.reader.read(&mut buf[start..]) {
                Ok(n) => {
                    buf.truncate(start + n);
                    self.eof = n == 0;
                    return Ok(());
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    buf.truncate(start);
                    return Err(describe_read_error(&self.name, e));
                }
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
            out.push(String::from_utf8(c.data).unwrap());
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
    fn overlong_line_is_refused() {
        let text = "x".repeat(MAX_LINE * 2);
        let mut r = ChunkReader::with_chunk_size(
            "big",
            Box::new(io::Cursor::new(format!("ok\n{text}\n").into_bytes())),
            1024,
        );
        let first = r.next_chunk().unwrap().unwrap();
        assert_eq!(first.data, b"ok\n");
        match r.next_chunk() {
            Err(Error::LineTooLong { offset, .. }) => assert_eq!(offset, 3),
            other => panic!(
                "expected LineTooLong, got {:?}",
                other.map(|c| c.map(|c| c.data.len()))
            ),
        }
    }
}
