//! `rtsleuth record` as one call: configure a buffer, capture it raw while the job runs, write
//! the trace.dat, put tracefs back.

use super::{write_tracedat, Capture, RawCapture, TraceMeta, WaitEnd};
use crate::cpus::CpuList;
use crate::signals::Interrupt;
use crate::tracefs::{AvailableEvents, Buffer, Session, Tracefs};
use crate::LiveError;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus};
use std::time::{Duration, Instant};

/// What to record, and until when.
#[derive(Debug, Clone)]
pub struct RecordOptions {
    /// `-e` arguments: presets (`latency`, `sched`, `irq`, `all`) or `system[:event]`.
    pub events: Vec<String>,
    /// CPUs to record; all online CPUs when `None`.
    pub cpus: Option<CpuList>,
    /// Ring-buffer size per CPU; the kernel's current size when `None`.
    pub buffer_kb: Option<u64>,
    /// Trace clock; the buffer's current clock when `None`.
    pub clock: Option<String>,
    pub until: Until,
    pub out: PathBuf,
    /// Record into the top-level buffer instead of a private instance.
    pub top_level: bool,
}

/// When recording ends (Ctrl-C or SIGTERM always ends it too).
#[derive(Debug, Clone)]
pub enum Until {
    /// Only a signal ends it.
    Interrupted,
    Elapsed(Duration),
    /// This command, started after recording began, has exited.
    Exited(Vec<String>),
}

/// What a recording produced.
#[derive(Debug)]
pub struct Recording {
    pub out: PathBuf,
    /// Bytes of the written file.
    pub file_bytes: u64,
    /// The events set in the buffer, as `set_event` took them.
    pub events: Vec<String>,
    pub capture: Capture,
    pub seconds: f64,
    /// Why recording ended: "elapsed", "interrupted", or the command's exit.
    pub ended: String,
    /// The command's exit status, for `record -- CMD` to pass on.
    pub status: Option<ExitStatus>,
    /// Things the user should know: preset groups this kernel lacks, tracefs mounted here.
    pub notes: Vec<String>,
}

/// Records as `opts` says and restores tracefs before returning, also on error.
pub fn record(opts: &RecordOptions, interrupt: &Interrupt) -> Result<Recording, LiveError> {
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
    let spool = spool_dir(&opts.out)?;
    let buffer = if opts.top_level {
        Buffer::Top
    } else {
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
    // The readers wake when a CPU's buffer is this full (percent): half keeps pages full and
    // leaves half as slack. A fresh instance has it already; the top level may not.
    if session.dir().join("buffer_percent").exists() {
        session.set("buffer_percent", "50")?;
    }
    session.enable_events(&events)?;
    session.clear_buffer()?;
    let capture = RawCapture::start(session.dir(), &cpus, spool.path())?;
    let start = Instant::now();
    session.tracing_on(true)?;
    let (ended, status) = run_until(&opts.until, &capture, interrupt)?;
    session.tracing_on(false)?;
    let seconds = start.elapsed().as_secs_f64();
    let capture = capture.finish()?;
    let meta = TraceMeta::gather(session.root(), session.dir())?;
    let file_bytes = write_tracedat(&opts.out, &meta, &capture)?;
    session.restore()?;
    Ok(Recording {
        out: opts.out.clone(),
        file_bytes,
        events,
        capture,
        seconds,
        ended,
        status,
        notes,
    })
}

/// How often a `-- CMD` recording checks whether the command has exited.
const CHILD_POLL: Duration = Duration::from_millis(20);

/// A spool directory beside the output, so that copying the pages into it stays on one file
/// system (`copy_file_range`), removed when dropped.
fn spool_dir(out: &Path) -> Result<tempfile::TempDir, LiveError> {
    let parent = match out.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    tempfile::Builder::new()
        .prefix(".rtsleuth-spool-")
        .tempdir_in(parent)
        .map_err(|e| LiveError::file(parent, e))
}

/// Waits for the end `until` asks for, or a signal.
fn run_until(
    until: &Until,
    capture: &RawCapture,
    interrupt: &Interrupt,
) -> Result<(String, Option<ExitStatus>), LiveError> {
    let stop = interrupt.flag();
    let limit = match until {
        Until::Interrupted => None,
        Until::Elapsed(limit) => Some(*limit),
        Until::Exited(argv) => return run_command(argv, capture, interrupt),
    };
    Ok((ended(capture.wait(limit, &stop)).to_owned(), None))
}

fn ended(end: WaitEnd) -> &'static str {
    match end {
        WaitEnd::Elapsed => "elapsed",
        WaitEnd::Stopped => "interrupted",
        WaitEnd::ReaderFailed => "capture failed",
    }
}

/// Runs the command while recording. A terminal's Ctrl-C reaches the command by itself; a
/// SIGTERM sent to rtsleuth alone is passed on, so the command never outlives the recording.
fn run_command(
    argv: &[String],
    capture: &RawCapture,
    interrupt: &Interrupt,
) -> Result<(String, Option<ExitStatus>), LiveError> {
    let (program, args) = argv
        .split_first()
        .ok_or_else(|| LiveError::Invalid("no command given after --".into()))?;
    let mut child = Command::new(program)
        .args(args)
        .spawn()
        .map_err(|e| LiveError::Invalid(format!("cannot run {program}: {e}")))?;
    let stop = interrupt.flag();
    loop {
        if let Some(status) = child.try_wait().map_err(|source| LiveError::Sys {
            call: "waitpid",
            source,
        })? {
            return Ok((format!("{program} exited ({status})"), Some(status)));
        }
        match capture.wait(Some(CHILD_POLL), &stop) {
            WaitEnd::Elapsed => continue,
            end => {
                let status = stop_child(&mut child)?;
                return Ok((ended(end).to_owned(), Some(status)));
            }
        }
    }
}

/// Sends SIGTERM and reaps the command.
fn stop_child(child: &mut Child) -> Result<ExitStatus, LiveError> {
    // SAFETY: kill(2) on our own child's pid, which has not been reaped yet.
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGTERM) };
    child.wait().map_err(|source| LiveError::Sys {
        call: "waitpid",
        source,
    })
}
