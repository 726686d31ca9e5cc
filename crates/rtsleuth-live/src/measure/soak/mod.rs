//! `measure --explain-every US`: a soak that explains every spike while it runs.
//!
//! A private instance records the measured CPUs in overwrite mode the whole time, so it holds
//! the last seconds before any moment. A spike above US passes the [`recorder`]'s gate: the
//! measuring thread marks it and stops recording; the [`worker`] reads the buffer out as
//! trace.dat, starts recording again and explains the capture while measurement goes on,
//! writing one line of `findings.jsonl` ([`line`]) and keeping the worst N files ([`kept`]).
//! Spikes that come while a capture is under way, or were due before recording restarted
//! after one, are counted as missed. Memory holds one
//! spike in flight, N file names and one [`tally`] entry per culprit.

mod explainer;
mod kept;
pub mod line;
mod recorder;
mod tally;
mod worker;

pub use explainer::Explainer;
pub use tally::Tally;

use super::break_trace::buffer_options;
use super::engine::{self, Hooks, Outcome};
use super::options::MeasureOptions;
use super::progress::ThreadView;
use crate::clock::mono;
use crate::cpus::CpuList;
use crate::record::Armed;
use crate::sched::pin_current_thread_to;
use crate::signals::Interrupt;
use crate::tracefs::SpikeStop;
use crate::LiveError;
use recorder::FlightRecorder;
use serde_json::{json, Value};
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Mutex};
use worker::{Worker, WorkerFiles};

/// Where and how a soak keeps what it captures.
#[derive(Debug, Clone)]
pub struct SoakOptions {
    /// `findings.jsonl` and the kept `spike-N.dat` files go here.
    pub out: PathBuf,
    /// How many of the worst captures stay on disk.
    pub keep: usize,
    /// Ring-buffer size per CPU in KiB (the kernel's when `None`).
    pub buffer_kb: Option<u64>,
    pub explainer: Explainer,
}

/// What a soak found, for the report.
#[derive(Debug)]
pub struct Soaked {
    pub tally: Tally,
    pub findings: PathBuf,
    /// (capture number, latency ns, file), worst first.
    pub kept: Kept,
    /// Preset groups this kernel lacks, tracefs mounted here, what restoring could not undo.
    pub notes: Vec<String>,
}

/// Receives each thread's running numbers and the soak's lines under them.
pub type SoakProgress<'a> = &'a mut dyn FnMut(&[ThreadView], &[String]);

/// Measures as `opts` says while explaining every spike above `opts.spike_us`.
pub fn run(
    opts: &MeasureOptions,
    soak: &SoakOptions,
    interrupt: &Interrupt,
    progress: Option<SoakProgress<'_>>,
) -> Result<(Outcome, Soaked), LiveError> {
    let threshold_us = opts
        .spike_us
        .ok_or_else(|| LiveError::Invalid("a soak needs a spike threshold".into()))?;
    opts.plan()?;
    let findings_path = soak.out.join("findings.jsonl");
    let findings = create_findings(&soak.out, &findings_path)?;
    let mut armed = Armed::new(&buffer_options(&opts.cpus, soak.buffer_kb))?;
    let mut notes = std::mem::take(&mut armed.notes);
    let stop = SpikeStop::open(&armed.session)?;
    armed.session.tracing_on(true)?;
    let (handoff, spikes) = mpsc::sync_channel(1);
    let recorder = FlightRecorder::new(stop, handoff, mono());
    let tally = Mutex::new(Tally::new(threshold_us));
    let files = WorkerFiles {
        dir: soak.out.clone(),
        findings,
        keep: soak.keep,
        explainer: soak.explainer.clone(),
    };
    let aside = CpuList::online()?.difference(&opts.cpus);
    if aside.is_empty() {
        notes.push(SHARED_CPUS.to_owned());
    }
    let worker = Worker::new(&mut armed, spikes, files)?;
    let beside = Beside {
        recorder: &recorder,
        tally: &tally,
        interrupt,
        aside: &aside,
    };
    let (measured, served) = beside.run(opts, worker, progress);
    let mut tally = tally.into_inner().unwrap_or_else(|e| e.into_inner());
    recorder.count_into(&mut tally);
    // Its open marker and switch keep the instance busy: they close before it is removed
    // (on an early return too, being declared after `armed`).
    drop(recorder);
    let kept = served?;
    let outcome = measured?;
    notes.extend(armed.session.restore()?);
    Ok((
        outcome,
        Soaked {
            tally,
            findings: findings_path,
            kept,
            notes,
        },
    ))
}

/// What the measuring threads and the worker share while both run.
struct Beside<'a> {
    recorder: &'a FlightRecorder,
    tally: &'a Mutex<Tally>,
    interrupt: &'a Interrupt,
    /// The CPUs the worker runs on, when any is left out of the measurement.
    aside: &'a CpuList,
}

/// The kept traces: (capture number, latency ns, file), worst first.
type Kept = Vec<(u64, u64, PathBuf)>;

impl Beside<'_> {
    /// Measures and serves spikes side by side until both are done; a failed worker ends the
    /// measurement as a signal would.
    fn run(
        &self,
        opts: &MeasureOptions,
        worker: Worker<'_>,
        mut progress: Option<SoakProgress<'_>>,
    ) -> (Result<Outcome, LiveError>, Result<Kept, LiveError>) {
        let done = AtomicBool::new(false);
        std::thread::scope(|scope| {
            let serving = scope.spawn(|| {
                let served = keep_apart(self.aside)
                    .and_then(|()| worker.run(self.recorder, self.tally, &done));
                if served.is_err() {
                    self.interrupt.raise();
                }
                served
            });
            let mut draw = |views: &[ThreadView]| {
                if let Some(p) = progress.as_mut() {
                    let lines = current(self.tally, self.recorder).live_lines();
                    p(views, &lines);
                }
            };
            let hooks = Hooks {
                on_spike: Some(self.recorder),
                interrupt: Some(self.interrupt),
                progress: Some(&mut draw),
            };
            let measured = engine::run(opts, hooks);
            done.store(true, Ordering::Release);
            let served = serving
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            (measured, served)
        })
    }
}

/// Said when no CPU is left for the worker.
const SHARED_CPUS: &str = "every online CPU is measured, so reading and explaining each \
    capture runs beside the measuring threads and can cause spikes of its own (culprit \
    rtsleuth); leave a CPU out of --cpus to keep that work apart";

/// Keeps the worker, and the reader threads it starts, off the measured CPUs when there are
/// others: its kernel time (file writes, reading tracefs) must not show up as spikes.
fn keep_apart(aside: &CpuList) -> Result<(), LiveError> {
    if aside.is_empty() {
        return Ok(());
    }
    pin_current_thread_to(aside.as_slice())
}

/// The tally with the recorder's latest counts.
fn current<'a>(
    tally: &'a Mutex<Tally>,
    recorder: &FlightRecorder,
) -> std::sync::MutexGuard<'a, Tally> {
    let mut t = tally.lock().unwrap_or_else(|e| e.into_inner());
    recorder.count_into(&mut t);
    t
}

/// A new findings file: a run never appends to, or mixes its captures with, another's.
fn create_findings(dir: &Path, path: &Path) -> Result<File, LiveError> {
    std::fs::create_dir_all(dir).map_err(|e| LiveError::file(dir, e))?;
    File::options()
        .write(true)
        .create_new(true)
        .open(path)
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::AlreadyExists => LiveError::Invalid(format!(
                "{} already holds a soak's findings; give another --out or move it away",
                dir.display()
            )),
            _ => LiveError::file(path, e),
        })
}

impl Soaked {
    /// `rtsleuth.measure/1`'s `spikes`.
    pub fn json(&self) -> Value {
        let kept: Vec<Value> = self
            .kept
            .iter()
            .map(|(n, ns, p)| {
                json!({"n": n, "latency_us": rtsleuth_trace::event::ns_to_us(*ns), "file": p.display().to_string()})
            })
            .collect();
        self.tally.json(json!({
            "findings_file": self.findings.display().to_string(),
            "kept": kept,
        }))
    }

    /// The report's blocks after the measurement.
    pub fn blocks(&self) -> Vec<rtsleuth_analyze::document::Block> {
        let kept: Vec<(u64, u64, String)> = self
            .kept
            .iter()
            .map(|(n, ns, p)| (*n, *ns, p.display().to_string()))
            .collect();
        self.tally
            .blocks(&kept, &self.findings.display().to_string())
    }
}
