//! A buffer configured for latency work, and the file it becomes: the steps `record` and
//! `measure --break` share.

use super::{write_tracedat, Capture, RawCapture, TraceMeta};
use crate::cpus::CpuList;
use crate::tracefs::{remove_stale_instances, AvailableEvents, Buffer, Session, Tracefs};
use crate::LiveError;
use std::path::{Path, PathBuf};

/// How to set up the buffer.
#[derive(Debug, Clone)]
pub struct BufferOptions {
    /// `-e` arguments: presets (`latency`, `sched`, `irq`, `all`) or `system[:event]`.
    pub events: Vec<String>,
    /// CPUs to record; all online CPUs when `None`.
    pub cpus: Option<CpuList>,
    /// Ring-buffer size per CPU; the buffer's current size when `None`.
    pub buffer_kb: Option<u64>,
    /// Trace clock; the buffer's current clock when `None`.
    pub clock: Option<String>,
    /// Record into the top-level buffer instead of a private instance.
    pub top_level: bool,
}

/// A buffer set up as asked, empty, with tracing still off.
pub struct Armed {
    // Field order is drop order: the session restores before tracefs is unmounted.
    pub session: Session,
    pub tracefs: Tracefs,
    /// The `set_event` lines the buffer records.
    pub events: Vec<String>,
    pub cpus: CpuList,
    /// What the user should know: preset groups this kernel lacks, tracefs mounted here.
    pub notes: Vec<String>,
}

impl Armed {
    /// Configures the buffer; every change is undone when the session ends.
    pub fn new(opts: &BufferOptions) -> Result<Armed, LiveError> {
        let tracefs = Tracefs::open()?;
        let mut notes = Vec::new();
        if tracefs.mounted_here() {
            notes.push(format!(
                "tracefs was not mounted; mounted it at {} for this run",
                tracefs.root().display()
            ));
        }
        let (events, missing) = AvailableEvents::read(tracefs.root())?.resolve(&opts.events)?;
        notes.extend(missing);
        let cpus = match &opts.cpus {
            Some(cpus) => cpus.clone(),
            None => CpuList::online()?,
        };
        let buffer = if opts.top_level {
            Buffer::Top
        } else {
            notes.extend(remove_stale_instances(tracefs.root()));
            Buffer::private()
        };
        let mut session = Session::new(&tracefs, buffer)?;
        session.set_tracer("nop")?;
        if let Some(clock) = &opts.clock {
            session.set_clock(clock)?;
        }
        if let Some(kb) = opts.buffer_kb {
            session.set_buffer_kb(kb)?;
        }
        session.set_cpus(&cpus)?;
        // Readers wake when a CPU's buffer is this full (percent): half keeps pages full and
        // leaves half as slack. A fresh instance has it already; the top level may not.
        if session.dir().join("buffer_percent").exists() {
            session.set("buffer_percent", "50")?;
        }
        session.enable_events(&events)?;
        session.clear_buffer()?;
        Ok(Armed {
            session,
            tracefs,
            events,
            cpus,
            notes,
        })
    }

    /// Reads the buffer out, recording already stopped, and writes it to `out` as trace.dat.
    pub fn read_out(&self, out: &Path) -> Result<Capture, LiveError> {
        let spool = spool_dir(out)?;
        let capture = self.drain(spool.path())?;
        self.write(&capture, out)?;
        Ok(capture)
    }

    /// Copies the buffer's pages, recording already stopped, into `spool`: the part of a
    /// read-out that must happen before recording starts again.
    pub fn drain(&self, spool: &Path) -> Result<Capture, LiveError> {
        RawCapture::start(self.session.dir(), &self.cpus, spool)?.finish()
    }

    /// Writes a finished capture of this buffer to `out` as trace.dat; returns its size.
    /// Must run before the session restores: restoring can shrink the saved comms.
    pub fn write(&self, capture: &Capture, out: &Path) -> Result<u64, LiveError> {
        write_tracedat(out, &self.meta()?, capture)
    }

    /// What a trace.dat of this buffer holds besides its pages (formats, symbols, comms).
    pub fn meta(&self) -> Result<TraceMeta, LiveError> {
        TraceMeta::gather(self.session.root(), self.session.dir())
    }
}

/// A spool directory beside `out`, so that copying the pages into it stays on one file system
/// (`copy_file_range`); removed when dropped.
pub fn spool_dir(out: &Path) -> Result<tempfile::TempDir, LiveError> {
    let parent: PathBuf = match out.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_owned(),
        _ => PathBuf::from("."),
    };
    tempfile::Builder::new()
        .prefix(".rtsleuth-spool-")
        .tempdir_in(&parent)
        .map_err(|e| LiveError::file(&parent, e))
}
