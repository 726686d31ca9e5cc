//! `rtsleuth diff BASE NEW`: did the tail move, and why.
//!
//! Each side is a trace (read once into `latency` and `explain --threshold`, as `report` reads
//! its analyses) or the `--json` of `explain`, `latency` or `measure`. Both become a [`Run`]:
//! per task, its latency summary and the time of each cause over its spikes, in names that
//! match across runs ([`names`]). Latency is compared when both sides have it measured the same
//! way, causes when both have them over the same threshold; a pair with nothing in common is
//! refused. Gates ([`gate`]) then say whether NEW is worse than CI allows.

mod compare;
pub mod gate;
mod load;
mod metric;
pub mod names;
mod report;
mod run;

pub use compare::{compare, CauseDiff, Change, Compared, CulpritChange, MetricChange, TaskDiff};
pub use gate::{Breach, Gate};
pub use load::{diff, Diff, DEFAULT_THRESHOLD_US};
pub use metric::{Metric, MIN_TAIL};
pub use report::{breach_line, document};
pub use run::{CauseTime, Causes, Definition, Run, Select, Stats, Task};

/// Why two inputs cannot be compared, or a gate cannot be checked.
#[derive(Debug, thiserror::Error)]
pub enum DiffError {
    #[error(transparent)]
    Read(#[from] rtsleuth_trace::Error),

    #[error("{input}: not JSON rtsleuth diff can read: {cause}")]
    Json {
        input: String,
        cause: serde_json::Error,
    },

    #[error("{input}: {why}")]
    Document { input: String, why: String },

    #[error("{base} and {new} cannot be compared: {why}")]
    Incomparable {
        base: String,
        new: String,
        why: String,
    },

    #[error("--fail-on '{gate}': {why}")]
    Gate { gate: String, why: String },
}
