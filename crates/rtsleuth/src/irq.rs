//! `rtsleuth irq`: arguments and wiring.

use crate::{emit_drawable, set, Common};
use anyhow::Result;
use clap::Args;
use rtsleuth_analyze::document::Document;
use rtsleuth_analyze::fleet::{SetIrq, Traced};
use rtsleuth_analyze::irq::{Irq, IrqOptions, IrqWork};
use rtsleuth_trace::input::Input;
use rtsleuth_trace::read::latency_tracer;

#[derive(Args)]
pub struct IrqArgs {
    #[command(flatten)]
    common: Common,
    /// Only this CPU.
    #[arg(long)]
    cpu: Option<u32>,
    /// Rows per table and sections per list.
    #[arg(long, default_value_t = 10)]
    top: usize,
    /// A hard timer interrupt at least this late (us) counts as interrupts-off.
    #[arg(long, value_name = "US", default_value_t = 100.0)]
    late_us: f64,
}

pub fn run(args: IrqArgs) -> Result<()> {
    let opts = IrqOptions {
        cpu: args.cpu,
        top: args.top,
        late_us: args.late_us,
    };
    if set::is_set(&args.common.traces, false) {
        let analyse = |input| {
            let mut irq = Irq::new(opts.clone());
            let (info, section) = latency_tracer::read(input, &mut irq)?;
            info.require_time()?;
            let work = irq.work();
            Ok((info.clone(), (irq.document(&info, section.as_ref()), work)))
        };
        let (traces, json) = (&args.common.traces, args.common.json);
        let mut totals = SetIrq::default();
        let add = |t: &Traced<(Document, Vec<IrqWork>)>| totals.add(&t.identity.path, &t.result.1);
        let open = set::run("irq", traces, json, None, analyse, |d| &d.0, add)?;
        return open.finish(totals.section());
    }
    let mut irq = Irq::new(opts);
    let input = Input::open(&args.common.traces[0])?;
    let _progress = crate::progress::for_input(&input);
    let (info, section) = latency_tracer::read(input, &mut irq)?;
    info.require_time()?;
    emit_drawable(&irq.document(&info, section.as_ref()), &args.common, false)
}
