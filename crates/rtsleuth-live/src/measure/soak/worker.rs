//! The soak's worker: for each spike the gate let through, read the stopped buffer out,
//! start recording again at once, then explain the capture while measurement goes on, write
//! its line and keep the file if it is among the worst.

use super::explainer::Explainer;
use super::kept::KeptTraces;
use super::line::{spike_line, Capture, Explained};
use super::recorder::FlightRecorder;
use super::tally::Tally;
use crate::clock::mono;
use crate::measure::spike_finding::the_spike;
use crate::measure::thread::Spike;
use crate::record::{spool_dir, write_tracedat, Armed, TraceMeta};
use crate::LiveError;
use serde_json::Value;
use std::fs::File;
use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::sync::Mutex;
use std::time::{Duration, SystemTime};

/// How often an idle worker looks whether the run is over.
const IDLE: Duration = Duration::from_millis(100);

pub struct Worker<'a> {
    armed: &'a mut Armed,
    /// Gathered once (reading `/proc/kallsyms` costs milliseconds of kernel time); only the
    /// comms are read again for each capture.
    meta: TraceMeta,
    spikes: Receiver<Spike>,
    dir: PathBuf,
    findings: File,
    kept: KeptTraces,
    explainer: Explainer,
    captures: u64,
}

/// Where a worker's files go, how many traces it keeps and who explains them.
pub struct WorkerFiles {
    pub dir: PathBuf,
    pub findings: File,
    pub keep: usize,
    pub explainer: Explainer,
}

impl<'a> Worker<'a> {
    pub fn new(
        armed: &'a mut Armed,
        spikes: Receiver<Spike>,
        files: WorkerFiles,
    ) -> Result<Worker<'a>, LiveError> {
        Ok(Worker {
            meta: armed.meta()?,
            armed,
            spikes,
            dir: files.dir,
            findings: files.findings,
            kept: KeptTraces::new(files.keep),
            explainer: files.explainer,
            captures: 0,
        })
    }

    /// Serves spikes until `done` (the measurement ended) and none is left; returns the
    /// traces kept, worst first.
    pub fn run(
        mut self,
        recorder: &FlightRecorder,
        tally: &Mutex<Tally>,
        done: &AtomicBool,
    ) -> Result<super::Kept, LiveError> {
        loop {
            match self.spikes.recv_timeout(IDLE) {
                Ok(spike) => self.serve(&spike, recorder, tally)?,
                Err(RecvTimeoutError::Timeout) if done.load(Ordering::Acquire) => break,
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => break,
            }
        }
        // A spike handed over just before the threads stopped is still captured.
        while let Ok(spike) = self.spikes.try_recv() {
            self.serve(&spike, recorder, tally)?;
        }
        Ok(self.kept.worst_first())
    }

    fn serve(
        &mut self,
        spike: &Spike,
        recorder: &FlightRecorder,
        tally: &Mutex<Tally>,
    ) -> Result<(), LiveError> {
        let wall = SystemTime::now() - Duration::from_nanos(mono().saturating_sub(spike.woke_ns));
        let (path, blind_ns) = self.capture(spike, recorder)?;
        // A capture explain cannot read is one unexplained spike, not the end of the night.
        let doc = self.explainer.explain(&path, spike);
        let explained = explained(&doc, spike);
        let kept = self
            .kept
            .offer(self.captures, spike.latency_ns, path.clone())?;
        let at = Capture {
            n: self.captures,
            wall,
            blind_ns,
            trace_file: kept.then_some(&path),
        };
        let line = spike_line(spike, &at, &explained);
        self.write_line(&line)?;
        let mut tally = tally.lock().unwrap_or_else(|e| e.into_inner());
        tally.blind_ns += blind_ns;
        tally.add(&line);
        Ok(())
    }

    /// Reads the stopped buffer out, starts recording again and writes the next
    /// `spike-N.dat`; returns it and how long recording was off after the spike.
    fn capture(
        &mut self,
        spike: &Spike,
        recorder: &FlightRecorder,
    ) -> Result<(PathBuf, u64), LiveError> {
        self.captures += 1;
        let path = self.dir.join(format!("spike-{:06}.dat", self.captures));
        // Only the pages are read with recording off; the file (formats, symbols, comms) is
        // written after it is on again.
        let spool = spool_dir(&path)?;
        let pages = self.armed.drain(spool.path())?;
        self.armed.session.clear_buffer()?;
        self.armed.session.tracing_on(true)?;
        let restarted = mono();
        recorder.reopen(restarted);
        self.meta.refresh_comms(self.armed.session.root())?;
        write_tracedat(&path, &self.meta, &pages)?;
        Ok((path, restarted.saturating_sub(spike.woke_ns)))
    }

    /// One whole line per write(2), so a reader never sees half of one.
    fn write_line(&mut self, line: &Value) -> Result<(), LiveError> {
        let mut text = line.to_string();
        text.push('\n');
        let path = self.dir.join("findings.jsonl");
        self.findings
            .write_all(text.as_bytes())
            .map_err(|e| LiveError::file(&path, e))
    }
}

/// What explain's document `doc` (or its failure) says of `spike`.
fn explained<'a>(doc: &'a Result<Value, String>, spike: &Spike) -> Explained<'a> {
    let list = |v: &'a Value| v.as_array().map_or(&[][..], Vec::as_slice);
    match doc {
        Ok(doc) => {
            let finding = the_spike(doc, spike);
            Explained {
                aggregate: if finding.is_ok() {
                    list(&doc["aggregate"])
                } else {
                    &[]
                },
                finding,
                warnings: list(&doc["warnings"]),
            }
        }
        Err(why) => Explained {
            finding: Err(format!("explain could not read the capture: {why}")),
            aggregate: &[],
            warnings: &[],
        },
    }
}
