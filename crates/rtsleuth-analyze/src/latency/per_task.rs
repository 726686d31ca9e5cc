//! The rows of the task table as data, each with its whole distribution: what a set of traces
//! merges (histograms, never percentiles) and what the Parquet output writes bucket by bucket.

use super::{Latency, LatencyHistogram};

/// One task of the table, as `latency` selected it.
#[derive(Debug, Clone)]
pub struct TaskLatency {
    pub pid: i32,
    pub comm: String,
    pub prio: Option<i32>,
    pub runtime_ns: u64,
    pub switches: u64,
    pub hist: LatencyHistogram,
    /// Its preemption waits.
    pub preempted: LatencyHistogram,
}

impl Latency {
    /// The tasks the report's table shows, in its order.
    pub fn task_latencies(&self) -> Vec<TaskLatency> {
        self.selected_rows()
            .into_iter()
            .map(|r| TaskLatency {
                pid: r.pid,
                comm: r.comm.to_string(),
                prio: r.task.prio,
                runtime_ns: r.task.runtime_ns,
                switches: r.task.switches,
                hist: r.task.lat.clone(),
                preempted: r.task.preempted.clone(),
            })
            .collect()
    }
}
