//! The text of a latency-mode file: trace-cmd stores the tracer's `trace` output instead of
//! ring-buffer pages (after `latency  \0` in version 6; in a `BUFFER_TEXT` section in
//! version 7, compressed in chunks like trace data when the file is compressed).
//!
//! The text can be as big as a ring buffer, so it is handed to the text reader as a stream:
//! a plain range of the file, or one decompressed chunk at a time.

use super::bytes::{Cursor, Endian, Fault};
use super::codec::{Codec, Inflater};
use super::Bytes;
use std::io::{self, Read};

/// Where the text is in the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TextPlace {
    /// Stored as it is, between these file offsets.
    Plain { start: usize, end: usize },
    /// `count` compressed chunks (`u32 packed size, u32 size, data` each), the first at
    /// `start`, none past `end`.
    Chunked {
        start: usize,
        end: usize,
        count: u32,
    },
}

/// The text as a byte stream. It owns the file so the text reader can run on threads of
/// its own.
pub struct TextStream {
    file: Bytes,
    endian: Endian,
    /// The next unread file offset.
    at: usize,
    end: usize,
    /// `Some` while compressed chunks remain: the decompressor and how many are left.
    chunks: Option<(Inflater, u32)>,
    /// The current decompressed chunk and how much of it was read.
    chunk: Vec<u8>,
    used: usize,
}

impl TextStream {
    pub fn new(file: Bytes, place: TextPlace, codec: Codec, endian: Endian) -> TextStream {
        let (start, end, chunks) = match place {
            TextPlace::Plain { start, end } => (start, end, None),
            TextPlace::Chunked { start, end, count } => {
                (start, end, Some((Inflater::new(codec), count)))
            }
        };
        let end = end.min(file.len());
        TextStream {
            file,
            endian,
            at: start.min(end),
            end,
            chunks,
            chunk: Vec::new(),
            used: 0,
        }
    }

    /// Decompresses the next chunk; false when none is left.
    fn next_chunk(&mut self) -> io::Result<bool> {
        let Some((inflater, left)) = &mut self.chunks else {
            return Ok(false);
        };
        if *left == 0 {
            return Ok(false);
        }
        *left -= 1;
        let mut c = Cursor::new(&self.file[..self.end], 0, self.endian);
        let res = c
            .seek(self.at, "latency text chunk")
            .and_then(|()| inflater.block_into(&mut c, "latency text chunk", &mut self.chunk));
        res.map_err(|f: Fault| {
            io::Error::new(
                io::ErrorKind::InvalidData,
                format!("latency text at byte {}: {}", f.offset, f.reason),
            )
        })?;
        self.at = c.offset() as usize;
        self.used = 0;
        Ok(true)
    }
}

impl Read for TextStream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.chunks.is_none() {
            let n = buf.len().min(self.end - self.at);
            buf[..n].copy_from_slice(&self.file[self.at..self.at + n]);
            self.at += n;
            return Ok(n);
        }
        while self.used == self.chunk.len() {
            if !self.next_chunk()? {
                return Ok(0);
            }
        }
        let n = buf.len().min(self.chunk.len() - self.used);
        buf[..n].copy_from_slice(&self.chunk[self.used..self.used + n]);
        self.used += n;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_all(file: Vec<u8>, place: TextPlace, codec: Codec) -> io::Result<Vec<u8>> {
        let mut out = Vec::new();
        TextStream::new(Bytes::Owned(file), place, codec, Endian::Little)
            .read_to_end(&mut out)
            .map(|_| out)
    }

    fn chunk(text: &[u8]) -> Vec<u8> {
        let packed = zstd::encode_all(text, 3).unwrap();
        let mut b = (packed.len() as u32).to_le_bytes().to_vec();
        b.extend((text.len() as u32).to_le_bytes());
        b.extend(packed);
        b
    }

    #[test]
    fn plain_and_chunked_text_read_back_whole() {
        let file = b"headerHELLO\nWORLD\ntrailer".to_vec();
        let place = TextPlace::Plain { start: 6, end: 18 };
        assert_eq!(
            read_all(file, place, Codec::None).unwrap(),
            b"HELLO\nWORLD\n"
        );
        let mut file = b"xx".to_vec();
        file.extend(chunk(b"first chunk\n"));
        file.extend(chunk(b"second\n"));
        let place = TextPlace::Chunked {
            start: 2,
            end: file.len(),
            count: 2,
        };
        let got = read_all(file, place, Codec::Zstd).unwrap();
        assert_eq!(got, b"first chunk\nsecond\n");
    }

    #[test]
    fn a_cut_chunk_is_an_error_naming_its_offset() {
        let mut file = chunk(b"some text\n");
        file.truncate(file.len() - 3);
        let end = file.len();
        let place = TextPlace::Chunked {
            start: 0,
            end,
            count: 1,
        };
        let e = read_all(file, place, Codec::Zstd).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidData);
        assert!(e.to_string().contains("latency text at byte 8"), "{e}");
    }
}
