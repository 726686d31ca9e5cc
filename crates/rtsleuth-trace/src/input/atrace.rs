//! `atrace -z` output: Android's atrace compresses the ftrace text it dumps with zlib, after a
//! text preamble that ends in a `TRACE:` line (`capturing trace... done` then `TRACE:` on
//! stdout; `TRACE:` alone with `-o FILE`). Older Android versions ran `adb shell` through a
//! terminal, which turned every line feed of the output into CR LF, the compressed bytes
//! included; systrace undid that before decompressing, and so does this module.

use super::compression::Compression;
use std::io::{self, Read};

/// The marker atrace prints before the trace data.
const MARKER: &[u8] = b"TRACE:";

/// Where the compressed trace starts in the first bytes of a stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Compressed {
    /// Offset of the first zlib byte (just past the `TRACE:` line).
    pub start: usize,
    /// The `TRACE:` line ends in CR LF: a terminal turned every LF of the output into CR LF.
    pub crlf: bool,
}

/// Recognises `atrace -z` output: a `TRACE:` line at the start of a line, only text before it,
/// and a valid zlib header right after it. Uncompressed atrace output (text after `TRACE:`)
/// is not this; the text reader reads it.
pub(crate) fn detect(head: &[u8]) -> Option<Compressed> {
    let at = memchr::memmem::find_iter(head, MARKER).find(|&i| i == 0 || head[i - 1] == b'\n')?;
    if memchr::memchr(0, &head[..at]).is_some() {
        return None;
    }
    let after = &head[at + MARKER.len()..];
    let (eol, crlf) = if after.starts_with(b"\r\n") {
        (2, true)
    } else if after.starts_with(b"\n") {
        (1, false)
    } else {
        return None;
    };
    let start = at + MARKER.len() + eol;
    is_zlib_header(&head[start..]).then_some(Compressed { start, crlf })
}

/// RFC 1950: deflate (method 8) with a window of at most 32 KiB, no preset dictionary, and the
/// two header bytes a multiple of 31. One text byte pair in about 250 passes by chance, so this
/// is checked only right after a `TRACE:` line.
fn is_zlib_header(b: &[u8]) -> bool {
    match b {
        [cmf, flg, ..] => {
            cmf & 0x0f == 8
                && cmf >> 4 <= 7
                && flg & 0x20 == 0
                && (u16::from(*cmf) << 8 | u16::from(*flg)) % 31 == 0
        }
        _ => false,
    }
}

/// The decompressed trace of a stream that starts as [`detect`] found it: the preamble is
/// skipped, CR LF undone where a terminal made it, and the rest inflated. Damage to the zlib
/// stream comes out of the reader as [`super::Damaged`], like that of a `.gz` file.
pub(crate) fn decompress(
    name: &str,
    found: Compressed,
    mut reader: Box<dyn Read + Send>,
) -> io::Result<Box<dyn Read + Send>> {
    let skipped = io::copy(&mut (&mut reader).take(found.start as u64), &mut io::sink())?;
    if skipped < found.start as u64 {
        return Err(io::ErrorKind::UnexpectedEof.into());
    }
    let raw: Box<dyn Read + Send> = if found.crlf {
        Box::new(CrLfToLf::new(reader))
    } else {
        reader
    };
    Ok(Compression::Zlib.wrap(name, raw))
}

/// Undoes a terminal's output translation (`ONLCR`: every LF written as CR LF). The translation
/// is exactly inverted by dropping each CR that comes right before an LF.
struct CrLfToLf {
    inner: Box<dyn Read + Send>,
    buf: Box<[u8]>,
    start: usize,
    end: usize,
    eof: bool,
}

impl CrLfToLf {
    fn new(inner: Box<dyn Read + Send>) -> Self {
        CrLfToLf {
            inner,
            buf: vec![0; 64 * 1024].into_boxed_slice(),
            start: 0,
            end: 0,
            eof: false,
        }
    }
}

impl Read for CrLfToLf {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        if out.is_empty() {
            return Ok(0);
        }
        loop {
            let pending = &self.buf[self.start..self.end];
            // A CR last in the buffer may be half of a CR LF: it waits for the next byte.
            let usable = match pending.last() {
                Some(b'\r') if !self.eof => pending.len() - 1,
                _ => pending.len(),
            };
            let (mut i, mut n) = (0, 0);
            while i < usable && n < out.len() {
                if !(pending[i] == b'\r' && pending.get(i + 1) == Some(&b'\n')) {
                    out[n] = pending[i];
                    n += 1;
                }
                i += 1;
            }
            self.start += i;
            if n > 0 {
                return Ok(n);
            }
            if i > 0 {
                continue;
            }
            if self.eof {
                return Ok(0);
            }
            self.buf.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
            match self.inner.read(&mut self.buf[self.end..])? {
                0 => self.eof = true,
                got => self.end += got,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn zlib(data: &[u8]) -> Vec<u8> {
        let mut e = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
        e.write_all(data).unwrap();
        e.finish().unwrap()
    }

    #[test]
    fn recognised_after_its_preamble_only() {
        let z = zlib(b"# tracer: nop\n");
        let mut out = b"capturing trace... done\nTRACE:\n".to_vec();
        out.extend_from_slice(&z);
        assert_eq!(
            detect(&out),
            Some(Compressed {
                start: 31,
                crlf: false
            })
        );
        let mut file = b"TRACE:\r\n".to_vec();
        file.extend_from_slice(&z);
        assert_eq!(
            detect(&file),
            Some(Compressed {
                start: 8,
                crlf: true
            })
        );
        // Uncompressed atrace output, a TRACE: inside a line, a preamble with a NUL.
        assert_eq!(detect(b"TRACE:\n# tracer: nop\n"), None);
        let mut inside = b"x TRACE:\n".to_vec();
        inside.extend_from_slice(&z);
        assert_eq!(detect(&inside), None);
        let mut nul = b"\0TRACE:\n".to_vec();
        nul.extend_from_slice(&z);
        assert_eq!(detect(&nul), None);
    }

    /// Read in steps of every size, so that a CR LF falls across every buffer boundary.
    #[test]
    fn cr_lf_is_undone_across_reads() {
        let original: Vec<u8> = (0..5000u32)
            .flat_map(|i| [(i % 7) as u8 + b'\n' - 3, b'\r', b'\n', (i % 251) as u8])
            .collect();
        let translated: Vec<u8> = original
            .iter()
            .flat_map(|&b| {
                if b == b'\n' {
                    vec![b'\r', b'\n']
                } else {
                    vec![b]
                }
            })
            .collect();
        /// Gives at most `.1` bytes per read.
        struct Trickle(io::Cursor<Vec<u8>>, usize);
        impl Read for Trickle {
            fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
                let n = buf.len().min(self.1);
                self.0.read(&mut buf[..n])
            }
        }
        for step in [1, 2, 3, 7, 4096, 100_000] {
            let inner = Trickle(io::Cursor::new(translated.clone()), step + 1);
            let mut r = CrLfToLf::new(Box::new(inner));
            let mut got = Vec::new();
            let mut buf = vec![0; step];
            loop {
                let n = r.read(&mut buf).unwrap();
                if n == 0 {
                    break;
                }
                got.extend_from_slice(&buf[..n]);
            }
            assert_eq!(got, original, "step {step}");
        }
    }
}
