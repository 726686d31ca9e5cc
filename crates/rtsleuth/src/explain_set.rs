//! `rtsleuth explain` over a set of traces: each trace's report, the causes of all of them
//! added up, and with `--parquet` the findings, their stretches and the latency tables.

use crate::set;
use anyhow::Result;
use rtsleuth_analyze::document::{Block, Document};
use rtsleuth_analyze::explain::{CauseTotal, Explain, ExplainOptions};
use rtsleuth_analyze::fleet::{SetCauses, SetSection, Traced};
use rtsleuth_analyze::latency::{Latency, LatencyOptions, TaskLatency};
use rtsleuth_render::parquet::{rows, TraceRows};
use rtsleuth_trace::read;
use std::path::Path;

struct Explained {
    doc: Document,
    causes: Vec<CauseTotal>,
    /// Only with `--parquet`: `latency`'s tasks, measured in the same pass.
    tasks: Vec<TaskLatency>,
}

pub fn run(
    traces: &[String],
    opts: ExplainOptions,
    parquet: Option<&Path>,
    json: bool,
) -> Result<()> {
    let latency_opts = LatencyOptions {
        pids: opts.pids.clone(),
        comms: opts.comms.clone(),
        ..LatencyOptions::default()
    };
    let analyse = |input| {
        let mut explain = Explain::new(opts.clone());
        let (info, tasks) = if parquet.is_some() {
            let mut both = (explain, Latency::new(latency_opts.clone()));
            let info = read::read(input, &mut both)?;
            explain = both.0;
            (info, both.1.task_latencies())
        } else {
            (read::read(input, &mut explain)?, Vec::new())
        };
        info.require_time()?;
        let causes = explain.causes();
        let doc = explain.document(&info);
        Ok((info, Explained { doc, causes, tasks }))
    };
    let rows = |t: &Traced<Explained>| {
        let id = &t.identity;
        let (findings, stretches) = rows::explain_rows(id, &t.result.doc.json);
        TraceRows {
            findings,
            stretches,
            ..rows::task_rows(id, &t.result.tasks)
        }
    };
    let parquet = parquet.map(|dir| set::Parquet {
        dir,
        with_findings: true,
        rows: &rows,
    });
    let mut causes = SetCauses::default();
    let add = |t: &Traced<Explained>| causes.add(&t.result.causes);
    let open = set::run("explain", traces, json, parquet, analyse, |e| &e.doc, add)?;
    open.finish(SetSection {
        json: causes.json(),
        blocks: vec![Block::Table(causes.table())],
    })
}
