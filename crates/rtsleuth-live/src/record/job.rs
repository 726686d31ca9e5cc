//! `rtsleuth record` as one call: configure a buffer, capture it raw while the job runs, write
//! the trace.dat, put tracefs back.

use super::armed::{spool_dir, Armed, BufferOptions};
use super::{Capture, RawCapture, WaitEnd};
use crate::signals::Interrupt;
use crate::LiveError;
use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus};
use std::time::{Duration, Instant};

/// What to record, and until when.
#[derive(Debug, Clone)]
pub struct RecordOptions {
    pub buffer: BufferOptions,
    pub until: Until,
    pub out: PathBuf,
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
    let mut armed = Armed::new(&opts.buffer)?;
    let spool = spool_dir(&opts.out)?;
    let capture = RawCapture::start(armed.session.dir(), &armed.cpus, spool.path())?;
    let start = Instant::now();
    armed.session.tracing_on(true)?;
    let (ended, status) = run_until(&opts.until, &capture, interrupt)?;
    armed.session.tracing_on(false)?;
    let seconds = start.elapsed().as_secs_f64();
    let capture = capture.finish()?;
    let file_bytes = armed.write(&capture, &opts.out)?;
    let Armed {
        session,
        events,
        mut notes,
        ..
    } = armed;
    notes.extend(session.restore()?);
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
