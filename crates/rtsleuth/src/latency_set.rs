//! `rtsleuth latency` over a set of traces: each trace's tables, then every task's wake-ups
//! of all traces from merged histograms, and with `--parquet` the per-trace tables.

use crate::set;
use anyhow::Result;
use rtsleuth_core::analyze::latency::{Latency, LatencyOptions, TaskLatency};
use rtsleuth_core::fleet::parquet::{rows, ParquetSet, TraceRows};
use rtsleuth_core::fleet::{SetLatency, SetSection};
use rtsleuth_core::read;
use rtsleuth_core::report::{Block, Document};
use std::path::Path;

struct Measured {
    doc: Document,
    tasks: Vec<TaskLatency>,
}

pub fn run(
    traces: &[String],
    opts: LatencyOptions,
    parquet: Option<&Path>,
    json: bool,
) -> Result<()> {
    let analyse = |input| {
        let mut latency = Latency::new(opts.clone());
        let info = read::read(input, &mut latency)?;
        let tasks = latency.task_latencies();
        let doc = latency.document(&info);
        Ok((info, Measured { doc, tasks }))
    };
    let mut merged = SetLatency::default();
    let mut tables = parquet
        .map(|dir| ParquetSet::create(dir, false))
        .transpose()?;
    let open = set::run(
        "latency",
        traces,
        json,
        analyse,
        |m| &m.doc,
        |t| {
            merged.add(&t.identity.path, &t.result.tasks);
            if let Some(tables) = &mut tables {
                let (latency, histograms) = rows::latency_rows(&t.identity, &t.result.tasks);
                tables.add(&TraceRows {
                    trace: vec![rows::trace_row(&t.identity)],
                    latency,
                    histograms,
                    ..TraceRows::default()
                })?;
            }
            Ok(())
        },
    )?;
    if let Some(tables) = tables {
        tables.close()?;
    }
    open.finish(SetSection {
        json: merged.json(),
        blocks: vec![Block::Table(merged.table())],
    })
}
