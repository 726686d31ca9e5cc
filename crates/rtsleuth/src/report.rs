//! `rtsleuth report`: arguments and wiring; the page is built by `rtsleuth_render::html`.

use anyhow::{bail, Context, Result};
use clap::Args;
use rtsleuth_analyze::soak;
use rtsleuth_render::html::{render, Analyses, ReportOptions};
use rtsleuth_trace::input::Input;
use std::path::PathBuf;

#[derive(Args)]
pub struct ReportArgs {
    #[arg(help = concat!(crate::trace_help!(), " Or a soak's findings file (measure --explain-every's DIR/findings.jsonl)."))]
    trace: String,
    /// The HTML file to write.
    #[arg(short, long, default_value = "report.html")]
    output: PathBuf,
    /// How many of the worst wake-ups to draw.
    #[arg(long, default_value_t = 10)]
    top: usize,
    /// Aggregate the causes of every wake-up at least this late (us), as `explain --threshold`.
    #[arg(long, value_name = "US")]
    threshold: Option<f64>,
    /// Only tasks whose name contains this (repeatable).
    #[arg(long = "task", value_name = "COMM")]
    tasks: Vec<String>,
    /// Only this pid (repeatable).
    #[arg(long = "pid")]
    pids: Vec<i32>,
}

pub fn run(args: ReportArgs) -> Result<()> {
    let opts = ReportOptions {
        top: args.top,
        threshold_us: args.threshold,
        pids: args.pids,
        comms: args.tasks,
    };
    let analyses = if soak::is_findings_file(&args.trace)? {
        if opts.threshold_us.is_some() || !opts.pids.is_empty() || !opts.comms.is_empty() {
            bail!("{}: a soak's findings file holds the spikes it explained; --threshold, --task and --pid select wake-ups in a trace", args.trace);
        }
        Analyses::of_findings(soak::document(&args.trace, opts.top)?)
    } else {
        let input = Input::open(&args.trace)?;
        let progress = crate::progress::for_input(&input);
        let analyses = Analyses::read(input, &opts)?;
        drop(progress);
        analyses
    };
    let page = render(&analyses)?;
    std::fs::write(&args.output, &page)
        .with_context(|| format!("writing {}", args.output.display()))?;
    // As with --json: the page holds the warnings, the terminal repeats them.
    for w in analyses.warnings() {
        eprintln!("rtsleuth: warning: {w}");
    }
    println!(
        "wrote {} ({} KB)",
        args.output.display(),
        page.len().div_ceil(1024)
    );
    Ok(())
}
