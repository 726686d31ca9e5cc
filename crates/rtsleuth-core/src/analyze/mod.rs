//! Analyses: each is an [`crate::read::EventSink`] fed one event at a time, holding state per
//! task, CPU or open interval (never per event), and producing a [`crate::report::Document`]
//! at the end.

pub mod explain;
pub mod graph;
pub mod irq;
pub mod latency;
mod names;
pub mod stats;
mod task_names;
pub mod wakeups;
pub mod waking;
pub mod wq;

pub use task_names::TaskNames;
