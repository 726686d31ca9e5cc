//! rtsleuth-analyze: the analyses. Each is an [`rtsleuth_trace::read::EventSink`] fed one event
//! at a time, holding state per task, CPU or open interval (never per event), and producing a
//! [`document::Document`] at the end: a JSON value and the blocks of its readable report,
//! which rtsleuth-render turns into text, JSON, CSV or HTML. Nothing here depends on a
//! rendering crate.
//!
//! Above the single-trace analyses: [`soak`] (a `measure --explain-every` findings file),
//! [`diff`] (two runs compared) and [`fleet`] (many traces read as one set).

pub mod diff;
pub mod document;
pub mod explain;
pub mod fleet;
pub mod graph;
pub mod irq;
pub mod latency;
mod names;
pub mod soak;
pub mod stats;
mod task_names;
pub mod wakeups;
pub mod waking;
pub mod wq;

pub use task_names::TaskNames;
