//! One CPU's copier: whole ring-buffer pages from `trace_pipe_raw` to a spool file.
//!
//! The file is opened non-blocking and waited on with poll(2) and a timeout, so the thread
//! notices the stop request within [`POLL_MS`] even when the CPU is idle. poll on
//! `trace_pipe_raw` wakes when the buffer is `buffer_percent` full (50 by default), which
//! keeps most pages full; a read then drains every page up to the writer, the last one
//! usually partial. Once stopped (after `tracing_on` went to 0) the reader drains what is left,
//! partial page included: the kernel hands out a partial page whenever nothing more is
//! committed on it (`ring_buffer_read_page` with `full=0`).
//!
//! Each read returns at most one page; the pages go through a small write buffer straight to
//! disk, so memory stays at one page plus that buffer whatever the trace size.

use crate::LiveError;
use std::fs::File;
use std::io::{BufWriter, ErrorKind, Read, Write};
use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

/// How long a reader sleeps in poll(2) before it looks at the stop flag again.
pub const POLL_MS: i32 = 100;

/// Bytes collected before a write to the spool file.
const SPOOL_BUFFER: usize = 256 * 1024;

pub struct CpuReader {
    raw: File,
    raw_path: PathBuf,
    spool: BufWriter<File>,
    spool_path: PathBuf,
    page: Vec<u8>,
    /// Pages copied so far.
    pages: u64,
}

impl CpuReader {
    /// Opens `raw_path` (a `trace_pipe_raw`) and creates the spool file.
    pub fn open(raw_path: &Path, spool_path: &Path, page_size: usize) -> Result<Self, LiveError> {
        let raw = File::options()
            .read(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(raw_path)
            .map_err(|e| LiveError::file(raw_path, e))?;
        let spool = File::create(spool_path).map_err(|e| LiveError::file(spool_path, e))?;
        Ok(CpuReader {
            raw,
            raw_path: raw_path.to_path_buf(),
            spool: BufWriter::with_capacity(SPOOL_BUFFER, spool),
            spool_path: spool_path.to_path_buf(),
            page: vec![0; page_size],
            pages: 0,
        })
    }

    /// Copies pages until `stop` is set (or `failed` by another reader), then drains the
    /// rest. On an error it sets `failed` so the caller can end the recording early.
    pub fn run(mut self, stop: &AtomicBool, failed: &AtomicBool) -> Result<u64, LiveError> {
        let r = self.copy_until(stop);
        if r.is_err() {
            failed.store(true, Ordering::Relaxed);
        }
        r
    }

    fn copy_until(&mut self, stop: &AtomicBool) -> Result<u64, LiveError> {
        while !stop.load(Ordering::Acquire) {
            if self.readable()? {
                self.drain()?;
            }
        }
        self.drain()?;
        self.spool
            .flush()
            .map_err(|e| LiveError::file(&self.spool_path, e))?;
        Ok(self.pages)
    }

    /// Waits up to [`POLL_MS`] for the kernel to say pages are ready.
    fn readable(&self) -> Result<bool, LiveError> {
        let mut pfd = libc::pollfd {
            fd: self.raw.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd, for the length given.
        match unsafe { libc::poll(&mut pfd, 1, POLL_MS) } {
            -1 if std::io::Error::last_os_error().kind() == ErrorKind::Interrupted => Ok(false),
            -1 => Err(LiveError::last_os("poll")),
            0 => Ok(false),
            _ => Ok(pfd.revents & libc::POLLIN != 0),
        }
    }

    /// Reads pages until the kernel has none (EAGAIN, or 0 for "nothing now").
    fn drain(&mut self) -> Result<(), LiveError> {
        loop {
            match self.raw.read(&mut self.page) {
                Ok(0) => return Ok(()),
                Ok(n) if n == self.page.len() => self.keep_page()?,
                Ok(n) => {
                    return Err(LiveError::Unsupported(format!(
                        "{}: read {n} bytes where a whole page of {} was expected",
                        self.raw_path.display(),
                        self.page.len()
                    )))
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => return Ok(()),
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => return Err(LiveError::file(&self.raw_path, e)),
            }
        }
    }

    fn keep_page(&mut self) -> Result<(), LiveError> {
        self.pages += 1;
        self.spool
            .write_all(&self.page)
            .map_err(|e| LiveError::file(&self.spool_path, e))
    }
}
