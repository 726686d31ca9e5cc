//! Many traces in one run: which files of the arguments are traces, reading them a few at a
//! time in parallel, and what the whole set says (merged latency histograms, summed causes),
//! as a `rtsleuth.set/1` document and as Parquet tables.
//!
//! Memory stays bounded by the traces in flight: each trace's analysis state (its events'
//! bookkeeping, the reader's buffers) is dropped when its trace is done, and only its report,
//! its per-task histograms and its identity are kept for the set.

mod causes;
mod document;
mod identity;
mod latency;
pub mod parquet;
mod paths;
mod run;
mod task_key;

pub use causes::SetCauses;
pub use document::{set_document, SetSection};
pub use identity::{content_hash, Identity};
pub use latency::SetLatency;
pub use paths::expand;
pub use run::{analyse_all, Item, Outcome, Traced};
pub use task_key::task_key;
