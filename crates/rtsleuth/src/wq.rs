//! `rtsleuth wq`: the arguments and their wiring to `rtsleuth_core::analyze::wq`.

use crate::{emit, read_trace, Common};
use anyhow::Result;
use clap::Args;
use rtsleuth_core::analyze::wq::{Wq, WqOptions};

#[derive(Args)]
pub struct WqArgs {
    #[command(flatten)]
    common: Common,
    /// How many of the worst waits and longest executions to list.
    #[arg(long, default_value_t = 10)]
    top: usize,
}

pub fn run(args: WqArgs) -> Result<()> {
    let mut wq = Wq::new(WqOptions { top: args.top });
    let info = read_trace(&args.common.trace, &mut wq)?;
    emit(&wq.document(&info), args.common.json, false)
}
