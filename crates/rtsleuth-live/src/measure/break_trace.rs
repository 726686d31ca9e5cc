//! `measure --break` with a trace: a flight recorder that the breaking thread stops, saved and
//! explained on the spot.
//!
//! The buffer runs in overwrite mode the whole time, so it always holds the last few seconds.
//! The thread that sees the spike writes cyclictest's mark and turns recording off itself (one
//! write each, prepared in advance), so the buffer ends at the spike instead of a supervisor's
//! poll later. Only then are the pages read out, written as trace.dat and handed to `explain`,
//! narrowed to the wake-up that broke (docs/claims.md, "Break traces").

use super::spike_finding::{explain, the_spike};
use super::thread::{OnSpike, Spike};
use crate::cpus::CpuList;
use crate::record::{Armed, BufferOptions};
use crate::tracefs::SpikeStop;
use crate::LiveError;
use rtsleuth_analyze::document::{Block, Document};
use serde_json::Value;
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
    /// Why the explanation holds no finding for the spike, when it does not.
    pub unexplained: Option<String>,
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

    /// Saves the buffer to `dir/trace.dat`, restores tracefs, and explains `event`'s wake-up.
    pub fn save(self, dir: &Path, event: &Spike) -> Result<SavedBreak, LiveError> {
        let BreakTrace { stop, mut armed } = self;
        drop(stop);
        armed.session.tracing_on(false)?;
        std::fs::create_dir_all(dir).map_err(|e| LiveError::file(dir, e))?;
        let path = dir.join("trace.dat");
        let capture = armed.read_out(&path)?;
        let Armed { session, .. } = armed;
        let notes = session.restore()?;
        let explanation = explain(&path, event)?;
        let unexplained = the_spike(&explanation.json, event).err();
        Ok(SavedBreak {
            path,
            lost_events: capture.lost_events(),
            explanation,
            unexplained,
            notes,
        })
    }
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
        doc.json["trace_file"] = path.clone().into();
        let mut pairs = vec![
            ("file".to_owned(), path),
            ("lost events".to_owned(), self.lost_events.to_string()),
        ];
        let shown: &[Block] = match &self.unexplained {
            None => {
                doc.json["findings"] = self.explanation.json["findings"].clone();
                &self.explanation.blocks
            }
            Some(why) => {
                doc.json["break"]["unexplained"] = Value::from(why.as_str());
                pairs.push(("not explained".to_owned(), why.clone()));
                &[]
            }
        };
        doc.blocks
            .push(Block::Pairs("Break trace".to_owned(), pairs));
        doc.blocks.extend(shown.iter().cloned());
        doc.warnings
            .extend(self.explanation.warnings.iter().cloned());
        doc.warnings.extend(self.notes.iter().cloned());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn saved(unexplained: Option<&str>) -> SavedBreak {
        SavedBreak {
            path: PathBuf::from("/tmp/brk/trace.dat"),
            lost_events: 0,
            explanation: Document {
                json: json!({"findings": [{"task": {"pid": 7}}]}),
                blocks: vec![Block::Lines("Finding".into(), vec!["#1".into()])],
                warnings: Vec::new(),
            },
            unexplained: unexplained.map(str::to_owned),
            notes: Vec::new(),
        }
    }

    fn measured() -> Document {
        Document {
            json: json!({"break": {"tid": 7}, "findings": []}),
            blocks: Vec::new(),
            warnings: Vec::new(),
        }
    }

    /// The finding of the wake-up that broke goes into the report, text and JSON.
    #[test]
    fn an_explained_break_carries_its_finding() {
        let mut doc = measured();
        saved(None).attach(&mut doc);
        assert_eq!(doc.json["findings"][0]["task"]["pid"], 7);
        assert!(doc.json["break"]["unexplained"].is_null());
        assert_eq!(doc.blocks.len(), 2);
    }

    /// When explain's answer is not the spike, no finding is reported and the report says why.
    #[test]
    fn an_unexplained_break_says_why_and_shows_no_finding() {
        let mut doc = measured();
        saved(Some("no wake-up due then")).attach(&mut doc);
        assert_eq!(doc.json["findings"], json!([]));
        assert_eq!(doc.json["break"]["unexplained"], "no wake-up due then");
        let Block::Pairs(_, pairs) = &doc.blocks[0] else {
            panic!("{:?}", doc.blocks);
        };
        assert!(pairs.contains(&("not explained".into(), "no wake-up due then".into())));
        assert_eq!(doc.blocks.len(), 1);
    }
}
