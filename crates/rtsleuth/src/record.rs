//! `rtsleuth record`: the arguments and their wiring to `rtsleuth_live::record`.

use crate::emit;
use anyhow::{Context, Result};
use clap::Args;
use rtsleuth_live::cpus::CpuList;
use rtsleuth_live::duration::parse_duration;
use rtsleuth_live::record::{record, BufferOptions, RecordOptions, Until};
use rtsleuth_live::signals::Interrupt;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

#[derive(Args)]
pub struct RecordArgs {
    /// Events: a preset (latency, sched, irq, all), a system (workqueue) or system:event;
    /// repeatable or comma-separated.
    #[arg(
        short,
        long = "event",
        value_delimiter = ',',
        default_value = "latency"
    )]
    events: Vec<String>,
    /// CPUs to record, e.g. 0-1,3 (default: all online).
    #[arg(long, value_name = "LIST")]
    cpus: Option<CpuList>,
    /// Ring-buffer size per CPU in KiB (default: the kernel's current size).
    #[arg(short = 'b', long, value_name = "KB")]
    buffer_kb: Option<u64>,
    /// Trace clock (local, global, mono, ...; default: the buffer's current one).
    #[arg(short = 'C', long)]
    clock: Option<String>,
    /// Stop after this long (10s, 5m, 1h, or seconds); without it and without a command,
    /// Ctrl-C stops.
    #[arg(short = 'd', long, value_parser = parse_duration, conflicts_with = "command")]
    duration: Option<Duration>,
    /// The trace.dat to write.
    #[arg(short, long, default_value = "trace.dat")]
    output: PathBuf,
    /// Record into the top-level buffer instead of a private instance.
    #[arg(long)]
    top_level: bool,
    /// Print the report as JSON (rtsleuth.record/1).
    #[arg(long)]
    json: bool,
    /// Record while this command runs: rtsleuth record [OPTIONS] -- CMD ARGS...
    #[arg(last = true, value_name = "CMD")]
    command: Vec<String>,
}

pub fn run(args: RecordArgs) -> Result<ExitCode> {
    let interrupt = Interrupt::catch()?;
    let until = match (args.duration, args.command.is_empty()) {
        (Some(d), _) => Until::Elapsed(d),
        (None, false) => Until::Exited(args.command),
        (None, true) => {
            eprintln!("rtsleuth: recording until Ctrl-C");
            Until::Interrupted
        }
    };
    let opts = RecordOptions {
        buffer: BufferOptions {
            events: args.events,
            cpus: args.cpus,
            buffer_kb: args.buffer_kb,
            clock: args.clock,
            top_level: args.top_level,
        },
        until,
        out: args.output,
    };
    let recording = record(&opts, &interrupt).context("record")?;
    emit(&recording.document(), args.json, false)?;
    // `record -- CMD` exits as the command did, so scripts can still test its status.
    let code = recording.status.and_then(|s| s.code()).unwrap_or(0);
    Ok(ExitCode::from(code.clamp(0, 255) as u8))
}
