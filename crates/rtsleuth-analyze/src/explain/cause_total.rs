//! One row of `explain`'s aggregate with its culprit already named, for callers that add the
//! aggregates of several traces together (where culprit ids of one trace mean nothing).

use super::cause::Cause;

/// The time one kind and culprit took over the spikes of one trace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CauseTotal {
    pub cause: Cause,
    /// As the report prints it (`fifo_burst-306`, `softirq 6 (TASKLET)`).
    pub culprit: Option<String>,
    /// The comm alone when the culprit is a task: pids differ from one trace to the next, so
    /// a set of traces matches task culprits by this.
    pub culprit_comm: Option<String>,
    /// How many wake-ups had time of this kind and culprit.
    pub spikes: u64,
    pub total_ns: u64,
    /// The most one wake-up had.
    pub max_ns: u64,
}
