//! `rtsleuth wq`: the arguments and their wiring to `rtsleuth_core::analyze::wq`.

use crate::{emit, read_trace, set, Common};
use anyhow::Result;
use clap::Args;
use rtsleuth_core::analyze::wq::{Wq, WqOptions};
use rtsleuth_core::read;

#[derive(Args)]
pub struct WqArgs {
    #[command(flatten)]
    common: Common,
    /// How many of the worst waits and longest executions to list.
    #[arg(long, default_value_t = 10)]
    top: usize,
}

pub fn run(args: WqArgs) -> Result<()> {
    let opts = WqOptions { top: args.top };
    if set::is_set(&args.common.traces, false) {
        let items = set::analyse(&args.common.traces, |input| {
            let mut wq = Wq::new(opts.clone());
            let info = read::read(input, &mut wq)?;
            Ok((info.clone(), wq.document(&info)))
        });
        return set::print(
            "wq",
            &args.common.traces,
            &items,
            |d| d,
            Default::default(),
            args.common.json,
        );
    }
    let mut wq = Wq::new(opts);
    let info = read_trace(&args.common.traces[0], &mut wq)?;
    emit(&wq.document(&info), args.common.json, false)
}
