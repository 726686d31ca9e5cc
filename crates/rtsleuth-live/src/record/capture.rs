//! A running raw capture: one reader thread per traced CPU copying ring-buffer pages to a
//! spool file, and what it gathered once finished.

use super::cpu_reader::CpuReader;
use super::cpu_stats::CpuStats;
use super::header_page;
use crate::cpus::CpuList;
use crate::LiveError;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How often [`RawCapture::wait`] looks at its flags.
const WAIT_STEP: Duration = Duration::from_millis(50);

/// Readers copying `trace_pipe_raw` pages to spool files until [`RawCapture::finish`].
///
/// Dropping it without `finish` (an error on the caller's path) stops and joins the readers;
/// the spool files stay for the caller's spool directory to remove.
pub struct RawCapture {
    trace_dir: PathBuf,
    header_page: Vec<u8>,
    page_size: usize,
    stop: Arc<AtomicBool>,
    failed: Arc<AtomicBool>,
    readers: Vec<Reader>,
}

struct Reader {
    cpu: usize,
    spool: PathBuf,
    before: CpuStats,
    /// Returns the pages it copied.
    thread: JoinHandle<Result<u64, LiveError>>,
}

/// Why [`RawCapture::wait`] returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WaitEnd {
    /// The time asked for has passed.
    Elapsed,
    /// The caller's stop flag (Ctrl-C) was raised.
    Stopped,
    /// A reader failed (disk full, file gone); [`RawCapture::finish`] returns its error.
    ReaderFailed,
}

/// A finished capture: the spool files and what each CPU's buffer said about losses.
#[derive(Debug, Clone)]
pub struct Capture {
    /// The buffer's `events/header_page`, which the file must carry for its pages.
    pub header_page: Vec<u8>,
    /// Bytes per ring-buffer page, as `header_page` gives it.
    pub page_size: usize,
    /// In CPU order.
    pub cpus: Vec<CpuCapture>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CpuCapture {
    pub cpu: usize,
    /// The pages, back to back.
    pub spool: PathBuf,
    pub pages: u64,
    /// The buffer's counters: growth during the capture, levels at its end.
    pub stats: CpuStats,
    /// `per_cpu/cpuN/stats` as read at the end, for the trace.dat's per-CPU statistics.
    pub stats_text: String,
}

impl CpuCapture {
    /// Bytes in the spool file.
    pub fn bytes(&self, page_size: usize) -> u64 {
        self.pages * page_size as u64
    }
}

impl Capture {
    /// Events overwritten or dropped by the kernel during the capture, all CPUs.
    pub fn lost_events(&self) -> u64 {
        self.cpus.iter().map(|c| c.stats.lost()).sum()
    }

    /// Events the readers consumed, all CPUs (the kernel's `read events` counter).
    pub fn read_events(&self) -> u64 {
        self.cpus.iter().map(|c| c.stats.read_events).sum()
    }

    /// Spooled bytes, all CPUs.
    pub fn bytes(&self) -> u64 {
        self.cpus.iter().map(|c| c.bytes(self.page_size)).sum()
    }
}

impl RawCapture {
    /// Starts one reader per CPU of `cpus` on `<trace_dir>/per_cpu/cpuN/trace_pipe_raw`,
    /// spooling to `<spool_dir>/cpuN.raw`. `trace_dir` is the buffer's tracefs directory: the
    /// tracefs root or `instances/NAME`. Call it after tracefs is configured and before
    /// `tracing_on` is set, so the first pages are not missed. The readers wake when the
    /// buffer is `buffer_percent` full: the default 50 keeps pages full and leaves half the
    /// buffer as slack; 0 wakes them for every event and fills the file with nearly empty
    /// pages; 100 lets the buffer overwrite before they wake.
    pub fn start(trace_dir: &Path, cpus: &CpuList, spool_dir: &Path) -> Result<Self, LiveError> {
        let per_cpu = trace_dir.join("per_cpu");
        if !per_cpu.is_dir() {
            return Err(LiveError::NoTracefs(format!(
                "{} has no per_cpu directory: {} is not a tracefs buffer (the tracefs root or instances/NAME)",
                per_cpu.display(),
                trace_dir.display()
            )));
        }
        if cpus.is_empty() {
            return Err(LiveError::Invalid("no CPU to capture".into()));
        }
        let (header_page, page_size) = header_page::read(trace_dir)?;
        let mut capture = RawCapture {
            trace_dir: trace_dir.to_path_buf(),
            header_page,
            page_size,
            stop: Arc::new(AtomicBool::new(false)),
            failed: Arc::new(AtomicBool::new(false)),
            readers: Vec::with_capacity(cpus.as_slice().len()),
        };
        // On an error below, dropping `capture` stops the readers already started.
        for &cpu in cpus.as_slice() {
            let raw = per_cpu.join(format!("cpu{cpu}/trace_pipe_raw"));
            let spool = spool_dir.join(format!("cpu{cpu}.raw"));
            let reader = CpuReader::open(&raw, &spool, page_size)?;
            let (before, _) = CpuStats::read(trace_dir, cpu)?;
            let (stop, failed) = (Arc::clone(&capture.stop), Arc::clone(&capture.failed));
            let thread = std::thread::Builder::new()
                .name(format!("rtsleuth-cpu{cpu}"))
                .spawn(move || reader.run(&stop, &failed))
                .map_err(|source| LiveError::Sys {
                    call: "spawning a reader thread",
                    source,
                })?;
            capture.readers.push(Reader {
                cpu,
                spool,
                before,
                thread,
            });
        }
        Ok(capture)
    }

    /// Waits until `limit` has passed (forever when `None`), `stop` is raised (give it
    /// [`crate::signals::Interrupt::flag`] so Ctrl-C ends the recording) or a reader fails.
    pub fn wait(&self, limit: Option<Duration>, stop: &AtomicBool) -> WaitEnd {
        let start = Instant::now();
        loop {
            if self.failed.load(Ordering::Relaxed) {
                return WaitEnd::ReaderFailed;
            }
            if stop.load(Ordering::Relaxed) {
                return WaitEnd::Stopped;
            }
            let left = limit.map(|l| l.saturating_sub(start.elapsed()));
            if left == Some(Duration::ZERO) {
                return WaitEnd::Elapsed;
            }
            std::thread::sleep(left.map_or(WAIT_STEP, |l| l.min(WAIT_STEP)));
        }
    }

    /// Drains what is left, stops the readers and reads each CPU's statistics. Call it after
    /// setting `tracing_on` to 0: the last, partial pages are only complete then.
    pub fn finish(mut self) -> Result<Capture, LiveError> {
        self.stop.store(true, Ordering::Release);
        let mut first_error = None;
        let mut cpus = Vec::with_capacity(self.readers.len());
        for r in std::mem::take(&mut self.readers) {
            match join(r.thread) {
                Ok(pages) => cpus.push((r.cpu, r.spool, r.before, pages)),
                Err(e) => {
                    first_error.get_or_insert(e);
                }
            }
        }
        if let Some(e) = first_error {
            return Err(e);
        }
        let mut out = Vec::with_capacity(cpus.len());
        for (cpu, spool, before, pages) in cpus {
            let (after, stats_text) = CpuStats::read(&self.trace_dir, cpu)?;
            out.push(CpuCapture {
                cpu,
                spool,
                pages,
                stats: after.since(&before),
                stats_text,
            });
        }
        out.sort_by_key(|c| c.cpu);
        Ok(Capture {
            header_page: std::mem::take(&mut self.header_page),
            page_size: self.page_size,
            cpus: out,
        })
    }
}

fn join(thread: JoinHandle<Result<u64, LiveError>>) -> Result<u64, LiveError> {
    thread
        .join()
        .unwrap_or_else(|_| Err(LiveError::Invalid("a reader thread panicked".into())))
}

impl Drop for RawCapture {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
        for r in self.readers.drain(..) {
            let _ = r.thread.join();
        }
    }
}
