//! `rtsleuth graph`: arguments and wiring; the analysis is `rtsleuth_analyze::graph`.

use anyhow::Result;
use clap::Args;
use rtsleuth_analyze::graph::{self, GraphOptions};

#[derive(Args)]
pub struct GraphArgs {
    /// function_graph tracer output (optionally .gz/.zst/.xz), or - for standard input.
    trace: String,
    /// A trace of the normal case: compare the slowest call in TRACE (of --func, or any
    /// top-level call) with a typical one here.
    #[arg(long, value_name = "NORMAL")]
    compare: Option<String>,
    /// Compare the slowest invocation of this function with a typical (median) one.
    #[arg(long, value_name = "FUNCTION")]
    func: Option<String>,
    /// Rows of the per-function table.
    #[arg(long, default_value_t = 20)]
    top: usize,
    /// Least growth of a call's own time (us) reported as slower.
    #[arg(long, value_name = "US", default_value_t = 1.0)]
    threshold: f64,
    /// Print the stable JSON document instead of the text report.
    #[arg(long)]
    json: bool,
}

pub fn run(a: GraphArgs) -> Result<()> {
    let opts = GraphOptions {
        func: a.func,
        top: a.top,
        threshold_us: a.threshold,
    };
    let doc = match &a.compare {
        Some(normal) => graph::analyze_pair(&a.trace, normal, &opts)?,
        None => graph::analyze(&a.trace, &opts)?,
    };
    crate::emit(&doc, a.json, false)
}
