//! A reported finding as plain data: what other outputs (the Perfetto export) draw, with the
//! same words as the report and times in trace-clock nanoseconds, so they need neither the
//! report's float seconds nor explain's internal name tables.

use super::cause::{Cause, Phase, Source};
use rtsleuth_trace::event::Timestamp;

/// One finding of [`super::Explain::outlines`].
#[derive(Debug, Clone, PartialEq)]
pub struct Outline {
    pub pid: i32,
    pub comm: String,
    /// The priority it was switched in with, when the trace printed one.
    pub prio: Option<i32>,
    /// The CPU it ran on.
    pub cpu: u32,
    pub source: Source,
    /// When it was due, when the trace proves it.
    pub expected: Option<Timestamp>,
    pub wakeup: Timestamp,
    pub run: Timestamp,
    /// What `run` is: `switch`, `inferred`, `resumed`, `mark` or `timerlat`.
    pub run_at: &'static str,
    pub latency_ns: u64,
    pub root_cause: Cause,
    pub summary: String,
    /// Contiguous stretches tiling `expected` (or `wakeup`) to `run`.
    pub timeline: Vec<OutlineStretch>,
}

/// One stretch of a finding's timeline, rendered.
#[derive(Debug, Clone, PartialEq)]
pub struct OutlineStretch {
    pub cause: Cause,
    pub phase: Phase,
    pub cpu: u32,
    pub start: Timestamp,
    pub end: Timestamp,
    /// The culprit as the report names it (`fifo_burst-17318`, `irq 30 (eth0)`…).
    pub culprit: Option<String>,
    /// The culprit's pid when it is a task.
    pub culprit_pid: Option<i32>,
    pub detail: String,
}
