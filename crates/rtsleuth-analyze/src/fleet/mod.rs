//! Many traces in one run: which files of the arguments are traces, reading them a few at a
//! time in parallel, and what the whole set says (merged latency histograms, summed causes),
//! which rtsleuth-render writes as a `rtsleuth.set/1` document and as Parquet tables.
//!
//! Memory stays bounded by the traces in flight, whatever the size of the set: outcomes are
//! handed on in path order with a bounded lookahead ([`analyse_all`]), each trace's report is
//! written and its Parquet row group added as soon as its turn comes (rtsleuth-render's
//! `SetReport` and `ParquetSet`), and only the set's merged histograms and summed causes (one
//! entry per task or culprit) and a line per skipped file are kept to the end.

mod causes;
mod identity;
mod irq;
mod latency;
mod merged;
mod paths;
mod run;
mod stats;
mod task_key;
mod wq;

pub use causes::SetCauses;
pub use identity::{content_hash, Identity};
pub use irq::SetIrq;
pub use latency::SetLatency;
pub use paths::expand;
pub use run::{analyse_all, Item, Outcome, Traced};
pub use stats::SetStats;
pub use task_key::task_key;
pub use wq::SetWq;

/// What a command says about the whole set: its part of the JSON (`set`) and its text.
#[derive(Debug, Default)]
pub struct SetSection {
    pub json: serde_json::Value,
    pub blocks: Vec<crate::document::Block>,
}
