//! `measure --break` with a trace: a flight recorder that the breaking thread stops, saved and
//! explained on the spot.
//!
//! The buffer runs in overwrite mode the whole time, so it always holds the last few seconds.
//! The thread that sees the spike writes cyclictest's mark and turns recording off itself (one
//! write each, prepared in advance), so the buffer ends at the spike instead of a supervisor's
//! poll later. Only then are the pages read out, written as trace.dat and handed to `explain`,
//! narrowed to the thread that broke.

use super::thread::{OnSpike, Spike};
use crate::cpus::CpuList;
use crate::record::{Armed, BufferOptions};
use crate::tracefs::SpikeStop;
use crate::LiveError;
use rtsleuth_analyze::document::{Block, Document};
use rtsleuth_analyze::explain::{Explain, ExplainOptions};
use rtsleuth_trace::input::Input;
use std::path::{Path, PathBuf};

/// The events `explain` needs, in a private instance, on the `mono` clock: CLOCK_MONOTONIC,
/// the clock the measuring threads sleep on, so trace and measurement times compare directly.
pub(super) fn buffer_options(cpus: &CpuList, buffer_kb: Option<u64>) -> BufferOptions {
    BufferOptions {
        events: vec!["latency".to_owned()],
        cpus: Some(cpus.clone()),
        buffer_kb,
        clock: Some("mono".to_owned()),
        top_level: false,
    }
}

/// A running flight recorder on the measured CPUs.
pub struct BreakTrace {
    // Field order is drop order: the open marker and switch must close before the session
    // removes its instance.
    stop: SpikeStop,
    armed: Armed,
}

/// The saved trace of a break and what `explain` made of it.
pub struct SavedBreak {
    pub path: PathBuf,
    pub lost_events: u64,
    pub explanation: Document,
    /// What restoring tracefs could not undo (the kernel expanding a never-used buffer).
    pub notes: Vec<String>,
}

impl BreakTrace {
    /// Configures tracing on `cpus` and starts recording.
    pub fn arm(cpus: &CpuList, buffer_kb: Option<u64>) -> Result<BreakTrace, LiveError> {
        let mut armed = Armed::new(&buffer_options(cpus, buffer_kb))?;
        let stop = SpikeStop::open(&armed.session)?;
        armed.session.tracing_on(true)?;
        Ok(BreakTrace { stop, armed })
    }

    /// Notes for the report (preset groups this kernel lacks, tracefs mounted here).
    pub fn notes(&self) -> &[String] {
        &self.armed.notes
    }

    /// Saves the buffer to `dir/trace.dat`, restores tracefs, and explains `event`'s thread.
    pub fn save(self, dir: &Path, event: &Spike) -> Result<SavedBreak, LiveError> {
        let BreakTrace { stop, mut armed } = self;
        drop(stop);
        armed.session.tracing_on(false)?;
        std::fs::create_dir_all(dir).map_err(|e| LiveError::file(dir, e))?;
        let path = dir.join("trace.dat");
        let capture = armed.read_out(&path)?;
        let Armed { session, .. } = armed;
        let notes = session.restore()?;
        let explanation = explain(&path, event.tid)?;
        Ok(SavedBreak {
            path,
            lost_events: capture.lost_events(),
            explanation,
            notes,
        })
    }
}

/// `explain` on a saved trace, for the thread that saw the spike: its tracemark is the spike.
pub(super) fn explain(path: &Path, tid: i32) -> Result<Document, LiveError> {
    let mut explain = Explain::new(ExplainOptions {
        pids: vec![tid],
        top: 1,
        ..ExplainOptions::default()
    });
    let input = Input::open(&path.to_string_lossy())?;
    let info = rtsleuth_trace::read::read(input, &mut explain)?;
    Ok(explain.document(&info))
}

/// What the breaking thread calls: the mark, then recording off.
impl OnSpike for BreakTrace {
    fn on_spike(&self, event: &Spike) {
        self.stop
            .mark_and_stop(event.latency_ns / 1000, event.threshold_ns / 1000);
    }
}

impl SavedBreak {
    /// Adds the explanation to a measure report: its findings into the JSON, its text after
    /// the measurement.
    pub fn attach(&self, doc: &mut Document) {
        let path = self.path.display().to_string();
        doc.json["findings"] = self.explanation.json["findings"].clone();
        doc.json["trace_file"] = path.clone().into();
        doc.blocks.push(Block::Pairs(
            "Break trace".to_owned(),
            vec![
                ("file".to_owned(), path),
                ("lost events".to_owned(), self.lost_events.to_string()),
            ],
        ));
        doc.blocks.extend(self.explanation.blocks.iter().cloned());
        doc.warnings
            .extend(self.explanation.warnings.iter().cloned());
        doc.warnings.extend(self.notes.iter().cloned());
    }
}
