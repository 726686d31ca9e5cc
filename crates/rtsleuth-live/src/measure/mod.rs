//! `measure`: wake-up latency measured the way cyclictest measures it (SCHED_FIFO threads
//! pinned one per CPU, absolute `clock_nanosleep` on CLOCK_MONOTONIC, memory locked,
//! `/dev/cpu_dma_latency` held at 0), with per-thread percentiles and an optional stop at the
//! first wake-up above a threshold.
//!
//! [`engine::run`] does a run; [`report::document`] renders it. The break hook
//! ([`thread::OnSpike`]) runs in the measuring thread that broke, before any other thread is
//! stopped, so a caller can stop tracing with the spike at the end of the buffer.

pub mod break_trace;
pub mod deadline;
pub mod engine;
pub mod options;
pub mod progress;
pub mod report;
pub mod soak;
pub mod spike_finding;
pub mod summary;
pub mod thread;

pub use engine::{run, Ending, Hooks, Outcome};
pub use options::{MeasureOptions, ThreadPlan};
pub use thread::{OnSpike, Spike, ThreadResult};
