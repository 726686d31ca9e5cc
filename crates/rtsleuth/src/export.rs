//! `rtsleuth export`: the trace and its explanation as a file another tool opens.

use crate::Selection;
use anyhow::{Context, Result};
use clap::Args;
use rtsleuth_analyze::explain::Explain;
use rtsleuth_render::export::perfetto::PerfettoExport;
use std::fs::File;
use std::io::BufWriter;

#[derive(Args)]
pub struct ExportArgs {
    #[arg(help = crate::trace_help!())]
    trace: String,
    /// Write a Perfetto protobuf trace here: the scheduling, IRQ and timer events, and each
    /// finding of `explain` drawn as slices on a "rtsleuth: why late" track under the late
    /// thread, with arrows from the culprits to its switch-in. Open it in ui.perfetto.dev.
    #[arg(long, value_name = "OUT")]
    perfetto: String,
    /// The findings drawn, as `explain` selects them (--top bounds what is drawn).
    #[command(flatten)]
    selection: Selection,
}

pub fn run(args: ExportArgs) -> Result<()> {
    let explain = Explain::new(args.selection.options());
    let file =
        File::create(&args.perfetto).with_context(|| format!("creating {}", args.perfetto))?;
    let export = PerfettoExport::new(&args.perfetto, BufWriter::new(file));
    let mut both = (explain, export);
    let info = crate::read_trace(&args.trace, &mut both)?;
    let (mut explain, export) = both;
    let summary = export.finish(&explain.outlines())?;
    eprintln!(
        "rtsleuth: wrote {}: {} events ({} of other kinds left out) in {} bundles; {} findings as {} slices and {} flows; {} bytes",
        args.perfetto,
        summary.events,
        summary.skipped,
        summary.bundles,
        summary.findings,
        summary.slices,
        summary.flows,
        summary.bytes
    );
    for w in info.warnings() {
        eprintln!("rtsleuth: warning: {w}");
    }
    Ok(())
}
