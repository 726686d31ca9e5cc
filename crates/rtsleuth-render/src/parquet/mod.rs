//! A set's results as Parquet tables, one row per item, for DuckDB on one machine or
//! Spark/Trino over a fleet. Every row names its trace by `path` and content `hash`, so the
//! tables join on them. The schemas (README, "Parquet") are the row structs of [`rows`].
//!
//! Each trace is one row group of each table, written when the caller hands its rows over;
//! nothing of a trace is kept after that.

pub mod rows;
mod table;

use crate::error::Result;
use rows::{FindingRow, HistogramRow, LatencyRow, StretchRow, TraceRow};
use std::path::Path;
use table::Table;

/// Which tables a command writes: `traces`, `latency`, `histograms` and
/// `preemption_histograms` always; `findings` and `stretches` for `explain`.
pub struct ParquetSet {
    traces: Table<TraceRow>,
    latency: Table<LatencyRow>,
    histograms: Table<HistogramRow>,
    preemption_histograms: Table<HistogramRow>,
    explained: Option<(Table<FindingRow>, Table<StretchRow>)>,
}

/// The rows of one trace.
#[derive(Debug, Default)]
pub struct TraceRows {
    pub trace: Vec<TraceRow>,
    pub latency: Vec<LatencyRow>,
    pub histograms: Vec<HistogramRow>,
    /// The buckets of the tasks' preemption waits (`preemption_histograms.parquet`).
    pub preemption_histograms: Vec<HistogramRow>,
    pub findings: Vec<FindingRow>,
    pub stretches: Vec<StretchRow>,
}

impl ParquetSet {
    /// Creates `dir` if needed and its tables (`traces.parquet`, ...), replacing old ones.
    pub fn create(dir: &Path, with_findings: bool) -> Result<ParquetSet> {
        std::fs::create_dir_all(dir).map_err(|e| rtsleuth_trace::Error::Io {
            path: dir.display().to_string(),
            cause: e,
        })?;
        Ok(ParquetSet {
            traces: Table::create(&dir.join("traces.parquet"))?,
            latency: Table::create(&dir.join("latency.parquet"))?,
            histograms: Table::create(&dir.join("histograms.parquet"))?,
            preemption_histograms: Table::create(&dir.join("preemption_histograms.parquet"))?,
            explained: if with_findings {
                Some((
                    Table::create(&dir.join("findings.parquet"))?,
                    Table::create(&dir.join("stretches.parquet"))?,
                ))
            } else {
                None
            },
        })
    }

    pub fn add(&mut self, rows: &TraceRows) -> Result<()> {
        self.traces.write(&rows.trace)?;
        self.latency.write(&rows.latency)?;
        self.histograms.write(&rows.histograms)?;
        self.preemption_histograms
            .write(&rows.preemption_histograms)?;
        if let Some((findings, stretches)) = &mut self.explained {
            findings.write(&rows.findings)?;
            stretches.write(&rows.stretches)?;
        }
        Ok(())
    }

    /// Writes the files' footers; a table without a row is still a valid, empty table.
    pub fn close(self) -> Result<()> {
        self.traces.close()?;
        self.latency.close()?;
        self.histograms.close()?;
        self.preemption_histograms.close()?;
        if let Some((findings, stretches)) = self.explained {
            findings.close()?;
            stretches.close()?;
        }
        Ok(())
    }
}
