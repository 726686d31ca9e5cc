//! `rtsleuth measure`: arguments (cyclictest's short flags where they mean the same) and
//! wiring; the engine is `rtsleuth_live::measure`.

use crate::emit;
use anyhow::{bail, Context, Result};
use clap::{ArgAction, Args};
use rtsleuth_analyze::document::Document;
use rtsleuth_live::cpus::CpuList;
use rtsleuth_live::duration::parse_duration;
use rtsleuth_live::measure::break_trace::BreakTrace;
use rtsleuth_live::measure::progress::LiveView;
use rtsleuth_live::measure::soak::{Explainer, SoakOptions, SoakProgress};
use rtsleuth_live::measure::{self, Hooks, MeasureOptions, OnSpike};
use rtsleuth_live::sched::Policy;
use rtsleuth_live::signals::Interrupt;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::Duration;

#[derive(Args)]
// `-h` is cyclictest's histogram here; help stays on `--help`.
#[command(disable_help_flag = true)]
pub struct MeasureArgs {
    /// CPUs to run the threads on, round-robin (default, or -a alone: every online CPU).
    #[arg(short = 'a', long = "cpus", visible_alias = "affinity", value_name = "LIST",
          num_args = 0..=1, default_missing_value = "")]
    cpus: Option<CpuList>,
    /// Number of threads (default, or -t alone: one per CPU of --cpus).
    #[arg(short = 't', long, value_name = "N", num_args = 0..=1, default_missing_value = "0")]
    threads: Option<usize>,
    /// Real-time priority of the threads (all equal, as cyclictest 2.x and -S).
    #[arg(short = 'p', long, visible_alias = "priority", default_value_t = 80)]
    prio: u32,
    /// Scheduling policy of the threads: fifo, rr or other.
    #[arg(long, default_value = "fifo")]
    policy: Policy,
    /// Give thread i priority prio - i, as cyclictest's --priospread.
    #[arg(long, conflicts_with = "smp")]
    priospread: bool,
    /// cyclictest's -S: one thread per CPU at equal priority, which is already the default.
    #[arg(short = 'S', long)]
    smp: bool,
    /// Wake-up interval of the first thread, in us (at least 50).
    #[arg(short = 'i', long, value_name = "US", default_value_t = 1000)]
    interval: u64,
    /// Thread i wakes every interval + i * distance us (cyclictest's -d; default 0 here).
    #[arg(short = 'd', long, value_name = "US", default_value_t = 0)]
    distance: u64,
    /// How long: plain seconds or with s, m, h or d (10s, 5m); default until Ctrl-C.
    #[arg(short = 'D', long, value_parser = parse_duration)]
    duration: Option<Duration>,
    /// Stop each thread after this many wake-ups.
    #[arg(short = 'l', long, value_name = "N")]
    loops: Option<u64>,
    /// Stop everything at the first wake-up later than this many us, and report it.
    #[arg(
        short = 'b',
        long = "break",
        visible_alias = "breaktrace",
        value_name = "US"
    )]
    brk: Option<u64>,
    /// Go on measuring and explain every wake-up later than this many us while the run lasts
    /// (a soak): each spike's trace is captured and explained on the side, one line per spike
    /// in DIR/findings.jsonl, the worst --keep traces kept as DIR/spike-N.dat.
    #[arg(long, value_name = "US", conflicts_with = "brk")]
    explain_every: Option<u64>,
    /// With --explain-every: how many of the worst spikes' traces stay on disk.
    #[arg(
        long,
        value_name = "N",
        default_value_t = 10,
        requires = "explain_every"
    )]
    keep: usize,
    /// With --break: only stop at the spike, without tracing it.
    #[arg(long, requires = "brk")]
    no_trace: bool,
    /// Where the traces go: --break's DIR/trace.dat (default rtsleuth-break), --explain-every's
    /// findings and kept traces (default rtsleuth-soak).
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// With --break or --explain-every: ring-buffer size per CPU in KiB for the trace
    /// (default: the kernel's).
    #[arg(long, value_name = "KB")]
    buffer_kb: Option<u64>,
    /// Print a histogram of wake-ups per us of latency up to US (default 1000), with the
    /// overflows, as cyclictest's -h.
    #[arg(short = 'h', long = "hist", visible_alias = "histogram", value_name = "US",
          num_args = 0..=1, default_missing_value = "1000")]
    hist: Option<usize>,
    /// cyclictest's -m: accepted; memory is always locked while measuring.
    #[arg(short = 'm', long)]
    mlockall: bool,
    /// No live view, only the summary at the end.
    #[arg(short = 'q', long)]
    quiet: bool,
    /// Print the stable JSON document (rtsleuth.measure/1) instead of the text report.
    #[arg(long)]
    json: bool,
    /// Print help.
    #[arg(long, action = ArgAction::Help)]
    help: Option<bool>,
}

pub fn run(args: MeasureArgs) -> Result<()> {
    let opts = options(&args)?;
    // Refuse bad settings before tracefs is touched.
    opts.plan()?;
    let traced = (opts.break_us.is_some() && !args.no_trace) || opts.spike_us.is_some();
    if !traced && (args.out.is_some() || args.buffer_kb.is_some()) {
        bail!("--out and --buffer-kb are for a traced run: give --break or --explain-every");
    }
    let interrupt = Interrupt::catch()?;
    let mut view = LiveView::new(std::io::stderr());
    let mut draw = |views: &[_], below: &[String]| {
        // The live view is a courtesy: a closed terminal must not end the measurement.
        let _ = view.draw(views, below);
    };
    let live = !args.quiet && std::io::stderr().is_terminal();
    let progress = if live { Some(&mut draw as _) } else { None };
    let doc = if opts.spike_us.is_some() {
        soak(&opts, &args, &interrupt, progress)?
    } else {
        measure_once(&opts, &args, &interrupt, progress)?
    };
    emit(&doc, args.json, false)
}

fn options(args: &MeasureArgs) -> Result<MeasureOptions> {
    let cpus = match &args.cpus {
        Some(list) if !list.is_empty() => list.clone(),
        _ => CpuList::online().context("finding the online CPUs")?,
    };
    Ok(MeasureOptions {
        cpus,
        threads: args.threads.filter(|&n| n > 0),
        policy: args.policy,
        prio: args.prio,
        priospread: args.priospread,
        interval_us: args.interval,
        distance_us: args.distance,
        duration: args.duration,
        loops: args.loops,
        break_us: args.brk,
        spike_us: args.explain_every,
        hist_us: args.hist,
    })
}

/// `--explain-every`: the measurement with every spike's causes added up.
fn soak(
    opts: &MeasureOptions,
    args: &MeasureArgs,
    interrupt: &Interrupt,
    progress: Option<SoakProgress<'_>>,
) -> Result<Document> {
    let soak = SoakOptions {
        out: args.out.clone().unwrap_or_else(|| "rtsleuth-soak".into()),
        keep: args.keep,
        buffer_kb: args.buffer_kb,
        // In a child process: this one's memory is locked and would keep what explain frees.
        explainer: Explainer::Program(
            std::env::current_exe().context("finding this program to run explain with")?,
        ),
    };
    let (outcome, soaked) = measure::soak::run(opts, &soak, interrupt, progress)?;
    let mut doc = measure::report::document(opts, &outcome);
    doc.json["spikes"] = soaked.json();
    doc.blocks.extend(soaked.blocks());
    doc.warnings.extend(soaked.notes.iter().cloned());
    Ok(doc)
}

/// A plain measurement, or one that stops at the first spike (`--break`) and explains it.
fn measure_once(
    opts: &MeasureOptions,
    args: &MeasureArgs,
    interrupt: &Interrupt,
    mut progress: Option<SoakProgress<'_>>,
) -> Result<Document> {
    let tracer = match opts.break_us {
        Some(_) if !args.no_trace => Some(
            BreakTrace::arm(&opts.cpus, args.buffer_kb).context("setting up the break trace")?,
        ),
        _ => None,
    };
    let mut draw_threads = |views: &[_]| {
        if let Some(p) = progress.as_mut() {
            p(views, &[]);
        }
    };
    let hooks = Hooks {
        on_spike: tracer.as_ref().map(|t| t as &dyn OnSpike),
        interrupt: Some(interrupt),
        progress: Some(&mut draw_threads),
    };
    let outcome = measure::run(opts, hooks)?;
    let mut doc = measure::report::document(opts, &outcome);
    if let Some(tracer) = tracer {
        doc.warnings.extend(tracer.notes().iter().cloned());
        if let Some(event) = &outcome.brk {
            let out = args.out.clone().unwrap_or_else(|| "rtsleuth-break".into());
            let saved = tracer.save(&out, event).context("saving the break trace")?;
            saved.attach(&mut doc);
        }
    }
    Ok(doc)
}
