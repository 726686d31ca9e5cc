//! `rtsleuth diff BASE NEW`: arguments, exit status and wiring; the comparison is in
//! `rtsleuth_analyze::diff`.

use anyhow::Result;
use clap::Args;
use rtsleuth_analyze::diff::{self, Gate, Select};
use std::process::ExitCode;

/// The exit status when a `--fail-on` gate failed. Not 2: clap already exits 2 on a usage
/// error, and a misspelt gate in a CI script must not read as a regression.
pub const GATE_FAILED: u8 = 3;

#[derive(Args)]
pub struct DiffArgs {
    /// The reference run: a trace (any format `explain` reads), the --json of `explain
    /// --threshold`, `latency` or `measure`, or a soak's findings file (measure
    /// --explain-every's DIR/findings.jsonl).
    base: String,
    /// The run to judge against BASE, likewise.
    new: String,
    /// Compare the causes of every wake-up at least this late (us); by default an explain
    /// JSON's own threshold, else 100.
    #[arg(long, value_name = "US")]
    threshold: Option<f64>,
    /// Only tasks whose name contains this (repeatable).
    #[arg(long = "task", value_name = "COMM")]
    tasks: Vec<String>,
    /// Every task, not only real-time ones (prio < 100).
    #[arg(long)]
    all: bool,
    /// Exit 3 when NEW crosses this gate (repeatable): `[TASK:]METRIC>VALUE`, METRIC one of
    /// count avg p50 p99 p99.9 max; VALUE NEW's own (`max>500us`, `2ms`) or a change against
    /// BASE (`p99>+20%`, `p99.9>+50us`); `<` for a drop (`count<-10%`).
    #[arg(long = "fail-on", value_name = "GATE")]
    fail_on: Vec<Gate>,
    /// Print the stable JSON document (`rtsleuth.diff/1`) instead of the text report.
    #[arg(long)]
    json: bool,
}

pub fn run(args: DiffArgs) -> Result<ExitCode> {
    let select = Select {
        all: args.all,
        comms: args.tasks,
    };
    let d = diff::diff(&args.base, &args.new, &select, args.threshold)?;
    let mut gates = Vec::new();
    for g in args.fail_on {
        let breaches = g.check(&d.compared)?;
        gates.push((g, breaches));
    }
    crate::emit(&diff::document(&d, &gates), args.json, false)?;
    let mut failed = false;
    for (g, breaches) in &gates {
        for b in breaches {
            eprintln!("rtsleuth: gate failed: {}", diff::breach_line(g, b));
            failed = true;
        }
    }
    Ok(if failed {
        ExitCode::from(GATE_FAILED)
    } else {
        ExitCode::SUCCESS
    })
}
