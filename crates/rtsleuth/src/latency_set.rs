//! `rtsleuth latency` over a set of traces: each trace's tables, then every task's wake-ups
//! of all traces from merged histograms, and with `--parquet` the per-trace tables.

use crate::set;
use anyhow::Result;
use rtsleuth_analyze::document::{Block, Document};
use rtsleuth_analyze::fleet::{SetLatency, SetSection, Traced};
use rtsleuth_analyze::latency::{Latency, LatencyOptions, TaskLatency};
use rtsleuth_render::parquet::rows;
use rtsleuth_trace::read;
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
        info.require_time()?;
        let tasks = latency.task_latencies();
        let doc = latency.document(&info);
        Ok((info, Measured { doc, tasks }))
    };
    let rows = |t: &Traced<Measured>| rows::task_rows(&t.identity, &t.result.tasks);
    let parquet = parquet.map(|dir| set::Parquet {
        dir,
        with_findings: false,
        rows: &rows,
    });
    let mut merged = SetLatency::default();
    let add = |t: &Traced<Measured>| merged.add(&t.identity.path, &t.result.tasks);
    let open = set::run("latency", traces, json, parquet, analyse, |m| &m.doc, add)?;
    open.finish(SetSection {
        json: merged.json(),
        blocks: vec![Block::Table(merged.table())],
    })
}
