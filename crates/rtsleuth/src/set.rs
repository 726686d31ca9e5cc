//! Many traces in one run: when the arguments make a set, and how its report is printed.

use crate::emit;
use anyhow::{bail, Result};
use rtsleuth_core::fleet::{self, Item, Outcome, SetSection};
use rtsleuth_core::input::Input;
use rtsleuth_core::read::TraceInfo;
use rtsleuth_core::report::Document;
use std::path::Path;

/// More than one argument, or a directory, is a set; so is any run that writes Parquet.
/// One file alone keeps the single-trace report, byte for byte.
pub fn is_set(traces: &[String], parquet: bool) -> bool {
    parquet || traces.len() > 1 || traces.iter().any(|t| Path::new(t).is_dir())
}

/// Analyses every file of the set, as many at a time as there are cores (each reader
/// parallelises its own parsing; see `fleet::analyse_all`).
pub fn analyse<T: Send>(
    traces: &[String],
    analyse: impl Fn(Input) -> rtsleuth_core::Result<(TraceInfo, T)> + Sync,
) -> Vec<Item<T>> {
    let jobs = std::thread::available_parallelism().map_or(2, |n| n.get());
    fleet::analyse_all(&fleet::expand(traces), jobs, analyse)
}

/// Prints the set's report (text or `rtsleuth.set/1`); fails only when no trace was read.
pub fn print<T>(
    command: &str,
    args: &[String],
    items: &[Item<T>],
    doc: impl Fn(&T) -> &Document,
    set: SetSection,
    json: bool,
) -> Result<()> {
    if !items.iter().any(|i| matches!(i.outcome, Outcome::Read(_))) {
        let why: Vec<String> = items
            .iter()
            .filter_map(|i| match &i.outcome {
                Outcome::Failed(e) => Some(e.clone()),
                _ => None,
            })
            .collect();
        bail!(
            "{}: no trace could be read among {} files{}",
            args.join(" "),
            items.len(),
            if why.is_empty() {
                String::new()
            } else {
                format!(": {}", why.join("; "))
            }
        );
    }
    emit(&fleet::set_document(command, items, doc, set), json, false)
}

/// The traces that were read, in order.
pub fn read<T>(items: &[Item<T>]) -> impl Iterator<Item = &fleet::Traced<T>> {
    items.iter().filter_map(|i| match &i.outcome {
        Outcome::Read(t) => Some(t),
        _ => None,
    })
}

/// Writes the set's Parquet tables, one row group per trace in the report's order.
pub fn write_parquet(
    dir: &Path,
    with_findings: bool,
    rows: impl Iterator<Item = fleet::parquet::TraceRows>,
) -> Result<()> {
    let mut out = fleet::parquet::ParquetSet::create(dir, with_findings)?;
    for r in rows {
        out.add(&r)?;
    }
    out.close()?;
    Ok(())
}
