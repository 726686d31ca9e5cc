//! `rtsleuth hwlat`: the arguments and their wiring to `rtsleuth_live::hwlat`.

use crate::emit;
use anyhow::Result;
use clap::Args;
use rtsleuth_live::cpus::CpuList;
use rtsleuth_live::hwlat::{detect, document, Mode, Settings};
use rtsleuth_live::signals::Interrupt;
use std::time::Duration;

#[derive(Args)]
pub struct HwlatArgs {
    /// kernel: the kernel's hwlat tracer (interrupts off; empties the top-level trace buffer);
    /// user: a SCHED_FIFO thread per CPU reading the clock; auto: kernel where it exists.
    #[arg(long, default_value = "auto")]
    mode: Mode,
    /// How long to detect, in seconds (Ctrl-C ends it early, with the report).
    #[arg(long, default_value_t = 10.0, value_name = "S")]
    duration: f64,
    /// How long each window spins, in microseconds.
    #[arg(long, default_value_t = 500_000, value_name = "US")]
    width: u64,
    /// The period of the windows, in microseconds; the rest of each is left to the machine.
    #[arg(long, default_value_t = 1_000_000, value_name = "US")]
    window: u64,
    /// Gaps longer than this (us) are recorded.
    #[arg(long, default_value_t = 10, value_name = "US")]
    threshold: u64,
    /// CPUs to watch, e.g. 0-3,6 (default: every online CPU).
    #[arg(long)]
    cpus: Option<CpuList>,
    /// SCHED_FIFO priority of the user-space detector; at 99 no thread can preempt it, so only
    /// interrupts and what is below Linux can make a gap.
    #[arg(long, default_value_t = 99)]
    prio: u32,
    /// How many of the longest gaps to keep per CPU and to list.
    #[arg(long, default_value_t = 10)]
    top: usize,
    /// Print the stable JSON document (rtsleuth.hwlat/1) instead of the text report.
    #[arg(long)]
    json: bool,
}

pub fn run(args: HwlatArgs) -> Result<()> {
    if !(args.duration.is_finite() && args.duration > 0.0) {
        anyhow::bail!("--duration must be a positive number of seconds");
    }
    let settings = Settings {
        width_us: args.width,
        window_us: args.window,
        threshold_us: args.threshold,
        duration: Duration::from_secs_f64(args.duration),
        cpus: match args.cpus {
            Some(cpus) => cpus,
            None => CpuList::online()?,
        },
        prio: args.prio,
        top: args.top,
    };
    let interrupt = Interrupt::catch()?;
    let detection = detect(&settings, args.mode, &interrupt.flag())?;
    emit(&document(&detection), args.json, false)
}
