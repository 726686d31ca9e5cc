//! `rtsleuth latency` over a set of traces: each trace's tables, then every task's wake-ups
//! of all traces from merged histograms, and with `--parquet` the per-trace tables.

use crate::set;
use anyhow::Result;
use rtsleuth_core::analyze::latency::{Latency, LatencyOptions, TaskLatency};
use rtsleuth_core::fleet::parquet::{rows, TraceRows};
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
    let items = set::analyse(traces, |input| {
        let mut latency = Latency::new(opts.clone());
        let info = read::read(input, &mut latency)?;
        let tasks = latency.task_latencies();
        let doc = latency.document(&info);
        Ok((info, Measured { doc, tasks }))
    });
    let mut merged = SetLatency::default();
    for t in set::read(&items) {
        merged.add(&t.identity.path, &t.result.tasks);
    }
    if let Some(dir) = parquet {
        let rows = set::read(&items).map(|t| {
            let (latency, histograms) = rows::latency_rows(&t.identity, &t.result.tasks);
            TraceRows {
                trace: vec![rows::trace_row(&t.identity)],
                latency,
                histograms,
                ..TraceRows::default()
            }
        });
        set::write_parquet(dir, false, rows)?;
    }
    let section = SetSection {
        json: merged.json(),
        blocks: vec![Block::Table(merged.table())],
    };
    set::print("latency", traces, &items, |m| &m.doc, section, json)
}
