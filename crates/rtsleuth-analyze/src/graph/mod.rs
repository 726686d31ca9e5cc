//! `graph`: function_graph statistics per function, and the comparison of a slow invocation
//! with a typical one (of one trace, or of a second, normal trace).
//!
//! The method is the one kernel developers use by hand: put the call tree of an abnormal
//! timer interrupt next to a normal one and look for the subtree that is only in the
//! abnormal one. Here "typical" is the invocation whose duration is nearest the median. The
//! median is only known once every invocation has been seen, so the typical tree is taken in
//! a second pass over the file; each pass keeps one tree (the best so far) and the open
//! frames, never the whole trace.

mod compare;
mod functions;
mod report;
mod sink;
mod stack;
mod tree;

pub use compare::{compare, Differences, Grown, Lone};
pub use tree::{CallTree, Invocation};

use crate::document::Document;
use rtsleuth_trace::error::{Error, Result};
use rtsleuth_trace::input::Input;
use rtsleuth_trace::read::function_graph::{self, GraphInfo};
use sink::GraphPass;
use tree::Pick;

#[derive(Debug, Clone)]
pub struct GraphOptions {
    /// Compare the slowest invocation of this function with a typical one.
    pub func: Option<String>,
    /// Rows of the per-function table in the text report (the JSON has every function).
    pub top: usize,
    /// The least growth of a call's own time reported as `slower`, in microseconds.
    pub threshold_us: f64,
}

/// The slow invocation, the typical one it is compared with, and what differs.
#[derive(Debug, Clone)]
pub struct Comparison {
    pub function: String,
    pub slow: Invocation,
    pub base: Invocation,
    /// The trace the typical invocation came from, when it is not the slow one's.
    pub base_source: Option<String>,
    /// Invocations of the function the typical one was chosen among.
    pub base_invocations: u64,
    pub diff: Differences,
}

impl Comparison {
    fn new(
        opts: &GraphOptions,
        slow: Invocation,
        base: Invocation,
        base_source: Option<String>,
        base_invocations: u64,
    ) -> Comparison {
        let threshold_ns = (opts.threshold_us.max(0.0) * 1000.0).round() as u64;
        Comparison {
            function: slow.tree.name.clone(),
            diff: compare(&slow.tree, &base.tree, threshold_ns),
            slow,
            base,
            base_source,
            base_invocations,
        }
    }
}

/// `rtsleuth graph TRACE [--func F]`.
pub fn analyze(path: &str, opts: &GraphOptions) -> Result<Document> {
    let Some(f) = &opts.func else {
        let (info, pass) = read(path, GraphPass::new(None, false, Pick::Slowest))?;
        return Ok(report::document(&info, &pass, None, opts));
    };
    needs_a_file(path)?;
    let (info, mut pass) = read(path, GraphPass::new(Some(f), false, Pick::Slowest))?;
    let mut comparison = None;
    if let Some(slow) = pass.keeper.take() {
        let n = pass.invocations.count();
        let median = pass.invocations.percentile_ns(50.0);
        let (_, mut typical) = read(path, GraphPass::new(Some(f), false, Pick::Nearest(median)))?;
        comparison = typical
            .keeper
            .take()
            .map(|base| Comparison::new(opts, slow, base, None, n));
    }
    let mut doc = report::document(&info, &pass, comparison.as_ref(), opts);
    if comparison.is_none() {
        doc.warnings.push(format!(
            "{f}: no complete invocation (its entry and its timed exit) in {path}; nothing to compare"
        ));
    }
    Ok(doc)
}

/// `rtsleuth graph SLOW --compare NORMAL [--func F]`: the slowest invocation of F in SLOW (of
/// any top-level call without `--func`) against the typical invocation of F in NORMAL.
pub fn analyze_pair(slow_path: &str, base_path: &str, opts: &GraphOptions) -> Result<Document> {
    needs_a_file(base_path)?;
    let (info, mut pass) = read(
        slow_path,
        GraphPass::new(opts.func.as_deref(), true, Pick::Slowest),
    )?;
    let mut comparison = None;
    let mut why_not = format!("{slow_path} has no complete top-level call");
    if let Some(slow) = pass.keeper.take() {
        let f = slow.tree.name.clone();
        let (_, counted) = read(base_path, GraphPass::new(Some(&f), false, Pick::Slowest))?;
        let n = counted.invocations.count();
        let median = counted.invocations.percentile_ns(50.0);
        let (_, mut typical) = read(
            base_path,
            GraphPass::new(Some(&f), false, Pick::Nearest(median)),
        )?;
        why_not = format!("{base_path} has no complete invocation of {f}");
        comparison = typical
            .keeper
            .take()
            .map(|base| Comparison::new(opts, slow, base, Some(base_path.to_string()), n));
    }
    let mut doc = report::document(&info, &pass, comparison.as_ref(), opts);
    if comparison.is_none() {
        doc.warnings.push(format!("nothing to compare: {why_not}"));
    }
    Ok(doc)
}

fn read(path: &str, mut pass: GraphPass) -> Result<(GraphInfo, GraphPass)> {
    let info = function_graph::read(Input::open(path)?, &mut pass)?;
    Ok((info, pass))
}

fn needs_a_file(path: &str) -> Result<()> {
    if path == "-" {
        return Err(Error::NeedsFile {
            path: "<stdin>".into(),
            what: "finding the typical invocation",
        });
    }
    Ok(())
}
