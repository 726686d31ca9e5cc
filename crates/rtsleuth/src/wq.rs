//! `rtsleuth wq`: the arguments and their wiring to `rtsleuth_analyze::wq`.

use crate::{emit, read_trace, set, Common};
use anyhow::Result;
use clap::Args;
use rtsleuth_analyze::document::Document;
use rtsleuth_analyze::fleet::{SetWq, Traced};
use rtsleuth_analyze::wq::{Wq, WqOptions, WqTimings};
use rtsleuth_trace::read;

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
        let analyse = |input| {
            let mut wq = Wq::new(opts.clone());
            let info = read::read(input, &mut wq)?;
            info.require_time()?;
            let timings = wq.timings();
            Ok((info.clone(), (wq.document(&info), timings)))
        };
        let (traces, json) = (&args.common.traces, args.common.json);
        let mut totals = SetWq::default();
        let add = |t: &Traced<(Document, WqTimings)>| totals.add(&t.identity.path, &t.result.1);
        let open = set::run("wq", traces, json, None, analyse, |d| &d.0, add)?;
        return open.finish(totals.section());
    }
    let mut wq = Wq::new(opts);
    let info = read_trace(&args.common.traces[0], &mut wq)?;
    info.require_time()?;
    emit(&wq.document(&info), args.common.json, false)
}
