//! Many traces in one run: when the arguments make a set, and how its report is written.

use anyhow::{bail, Context, Result};
use rtsleuth_analyze::document::Document;
use rtsleuth_analyze::fleet::{self, SetSection, Traced};
use rtsleuth_render::parquet::{ParquetSet, TraceRows};
use rtsleuth_render::SetReport;
use rtsleuth_trace::input::Input;
use rtsleuth_trace::read::TraceInfo;
use std::io::{self, BufWriter, Stdout};
use std::path::Path;

/// More than one argument, or a directory, is a set; so is any run that writes Parquet.
/// One file alone keeps the single-trace report, byte for byte.
pub fn is_set(traces: &[String], parquet: bool) -> bool {
    parquet || traces.len() > 1 || traces.iter().any(|t| Path::new(t).is_dir())
}

/// A set's report whose traces have all been written; only the whole set's part is left.
pub struct Open {
    report: SetReport<BufWriter<Stdout>>,
    args: String,
    files: usize,
    json: bool,
}

/// `--parquet DIR`: where the tables go, whether they include explain's findings, and a
/// trace's rows.
pub struct Parquet<'a, T> {
    pub dir: &'a Path,
    pub with_findings: bool,
    pub rows: &'a dyn Fn(&Traced<T>) -> TraceRows,
}

/// Analyses every file of the set, as many at a time as there are cores (each reader
/// parallelises its own parsing; see `fleet::analyse_all`), writing each trace's report and
/// Parquet rows as its turn comes. `each` sees every trace read, in order, to add it to the
/// set's totals before it is dropped.
pub fn run<T: Send>(
    command: &'static str,
    args: &[String],
    json: bool,
    parquet: Option<Parquet<'_, T>>,
    analyse: impl Fn(Input) -> rtsleuth_trace::Result<(TraceInfo, T)> + Sync,
    doc: impl Fn(&T) -> &Document,
    mut each: impl FnMut(&Traced<T>),
) -> Result<Open> {
    let jobs = std::thread::available_parallelism().map_or(2, |n| n.get());
    let paths = fleet::expand(args);
    let mut report = SetReport::new(BufWriter::new(io::stdout()), command, json);
    let progress = crate::progress::start(None);
    let mut tables = (parquet.as_ref())
        .map(|p| ParquetSet::create(p.dir, p.with_findings))
        .transpose()?;
    fleet::analyse_all(&paths, jobs, analyse, |item| -> Result<()> {
        crate::progress::hidden(&progress, || report.item(&item, &doc))
            .context("writing the report")?;
        if let fleet::Outcome::Read(t) = &item.outcome {
            each(t);
            if let (Some(tables), Some(p)) = (&mut tables, &parquet) {
                tables.add(&(p.rows)(t))?;
            }
        }
        Ok(())
    })?;
    drop(progress);
    if let Some(tables) = tables {
        tables.close()?;
    }
    Ok(Open {
        report,
        args: args.join(" "),
        files: paths.len(),
        json,
    })
}

impl Open {
    /// Writes the whole set's part; fails only when no trace was read.
    pub fn finish(self, set: SetSection) -> Result<()> {
        if self.report.traces_read() == 0 {
            let why: Vec<&str> = self
                .report
                .failed()
                .iter()
                .map(|(_, e)| e.as_str())
                .collect();
            bail!(
                "{}: no trace could be read among {} files{}",
                self.args,
                self.files,
                if why.is_empty() {
                    String::new()
                } else {
                    format!(": {}", why.join("; "))
                }
            );
        }
        let warnings = self.report.finish(set).context("writing the report")?;
        if self.json {
            for w in warnings {
                eprintln!("rtsleuth: warning: {w}");
            }
        }
        Ok(())
    }
}
