//! A write stream for trace.dat that counts its position (the CPU table needs the offsets of
//! data not yet written) and writes numbers in this machine's byte order, which the file
//! header declares.

use crate::LiveError;
use std::io::Write;
use std::path::{Path, PathBuf};

pub struct DatOut<W: Write> {
    w: W,
    path: PathBuf,
    pos: u64,
}

impl<W: Write> DatOut<W> {
    pub fn new(w: W, path: &Path) -> DatOut<W> {
        DatOut {
            w,
            path: path.to_path_buf(),
            pos: 0,
        }
    }

    /// Bytes written so far.
    pub fn pos(&self) -> u64 {
        self.pos
    }

    pub fn bytes(&mut self, b: &[u8]) -> Result<(), LiveError> {
        self.w
            .write_all(b)
            .map_err(|e| LiveError::file(&self.path, e))?;
        self.pos += b.len() as u64;
        Ok(())
    }

    pub fn u16(&mut self, v: u16) -> Result<(), LiveError> {
        self.bytes(&v.to_ne_bytes())
    }

    pub fn u32(&mut self, v: u32) -> Result<(), LiveError> {
        self.bytes(&v.to_ne_bytes())
    }

    pub fn u64(&mut self, v: u64) -> Result<(), LiveError> {
        self.bytes(&v.to_ne_bytes())
    }

    /// `b` after its length as a 4-byte number (kallsyms, printk formats).
    pub fn sized32(&mut self, what: &str, b: &[u8]) -> Result<(), LiveError> {
        let n = u32::try_from(b.len()).map_err(|_| {
            LiveError::Invalid(format!(
                "{what} is {} bytes: more than a trace.dat can hold",
                b.len()
            ))
        })?;
        self.u32(n)?;
        self.bytes(b)
    }

    /// `b` after its length as an 8-byte number.
    pub fn sized64(&mut self, b: &[u8]) -> Result<(), LiveError> {
        self.u64(b.len() as u64)?;
        self.bytes(b)
    }

    /// Zeros up to the next multiple of `align`.
    pub fn pad_to(&mut self, align: u64) -> Result<(), LiveError> {
        let n = self.pos.next_multiple_of(align) - self.pos;
        self.bytes(&vec![0; n as usize])
    }

    /// The underlying writer, flushed, for data copied past this stream's count.
    pub fn into_inner(mut self) -> Result<W, LiveError> {
        self.w.flush().map_err(|e| LiveError::file(&self.path, e))?;
        Ok(self.w)
    }
}
