//! A work's wait as a chain (docs/claims.md, "Works"): queued → its kworker woken by that
//! queueing → the kworker running (explain's `queued` finding, every stretch with its cause)
//! → the work starting (the kworker's own run first: other works of its pool's list).
//!
//! An `explain` of kworkers' queued wake-ups runs beside the analysis. At each work's start
//! the kworker's latest explained wake-up is looked up; only the waits that can still be among
//! the worst are rendered and kept, so memory is bounded by `--top`.

use super::occurrence::Worst;
use crate::explain::{Explain, ExplainOptions};
use rtsleuth_trace::event::Timestamp;
use rustc_hash::FxHashMap as HashMap;
use serde_json::Value;

/// What explains one work's wait.
#[derive(Debug, Clone)]
pub struct WaitCause {
    /// explain's finding of the kworker's wake-up by the queueing.
    pub finding: Value,
    /// When the kworker ran, ending that finding.
    pub run: Timestamp,
    /// Works the kworker began between its run and this work's start, when the trace shows it
    /// running through from that switch-in (not when it was switched out and in again, or
    /// the switch-in was not traced).
    pub works_before: Option<u64>,
}

/// Per kworker: its latest switch-in and the works it began since.
#[derive(Debug, Clone, Copy)]
struct Run {
    since: Timestamp,
    works: u64,
}

#[derive(Debug)]
pub struct ExplainedWaits {
    pub explain: Explain,
    /// Ranked like the worst waits, offered at each start (the worst waits are offered when
    /// the work ends, and by then the kworker's wake-up may be another).
    kept: Worst<Option<WaitCause>>,
    runs: HashMap<i32, Run>,
}

impl ExplainedWaits {
    pub fn new(top: usize) -> ExplainedWaits {
        let opts = ExplainOptions {
            all: true,
            works: true,
            top: 1,
            ..ExplainOptions::default()
        };
        ExplainedWaits {
            explain: Explain::new(opts),
            kept: Worst::new(top),
            runs: HashMap::default(),
        }
    }

    /// `pid` was switched in at `ts`.
    pub fn switched_in(&mut self, pid: i32, ts: Timestamp) {
        self.runs.insert(
            pid,
            Run {
                since: ts,
                works: 0,
            },
        );
    }

    /// Kworker `pid` starts at `start` a work queued at `queued`: its cause is kept when the
    /// wait can be among the `top` worst.
    pub fn started(&mut self, pid: i32, queued: Timestamp, start: Timestamp) {
        let wait = start.saturating_sub(queued);
        let (explain, runs) = (&mut self.explain, &self.runs);
        self.kept.offer_with((wait, start, pid), || {
            explain.queued_finding(pid, queued).map(|(finding, run)| {
                let works_before = (runs.get(&pid)).filter(|r| r.since == run).map(|r| r.works);
                WaitCause {
                    finding,
                    run,
                    works_before,
                }
            })
        });
        if let Some(r) = self.runs.get_mut(&pid) {
            r.works += 1;
        }
    }

    /// What explains the wait of the work kworker `pid` started at `start`.
    pub fn cause(&self, pid: i32, start: Timestamp) -> Option<&WaitCause> {
        self.kept.get(pid, start)?.as_ref()
    }

    /// Events were lost: no kworker's run since its switch-in is known.
    pub fn lost(&mut self) {
        self.runs.clear();
    }
}
