//! The `rtsleuth` command: argument parsing and wiring only; all work is in the library crates
//! (rtsleuth-trace reads, rtsleuth-analyze reasons, rtsleuth-render writes, rtsleuth-live
//! touches the running system).

mod alloc;
mod audit;
mod diff;
mod explain_set;
mod export;
mod generate;
mod graph;
mod hwlat;
mod irq;
mod latency_set;
mod measure;
mod progress;
mod record;
mod report;
mod set;
mod wq;

use anyhow::{Context, Result};
use clap::{Args, Parser, Subcommand};
use rtsleuth_analyze::document::{Block, Document};
use rtsleuth_analyze::explain::{due_ns_of_seconds, Explain, ExplainOptions};
use rtsleuth_analyze::fleet::{SetStats, Traced};
use rtsleuth_analyze::latency::{IrqSelector, Latency, LatencyOptions, SortKey};
use rtsleuth_analyze::stats::Stats;
use rtsleuth_render::{CsvExporter, Exporter, JsonExporter, TextExporter};
use rtsleuth_trace::input::Input;
use rtsleuth_trace::read::{self, EventSink, TraceInfo};
use std::io::{self, Write};
use std::process::ExitCode;

/// Tells real-time Linux engineers why a thread was late.
#[derive(Parser)]
#[command(name = "rtsleuth", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// What is in a trace: format, clock, CPUs, span, events per type and CPU, lost events.
    Stats {
        #[command(flatten)]
        common: Common,
    },
    /// Why each late wake-up was late: every nanosecond from when the task was due to when it
    /// ran, cut into causes with the culprit named.
    Explain {
        #[command(flatten)]
        common: Common,
        #[command(flatten)]
        selection: Selection,
        /// Also write traces, findings, stretches, latency and histograms as Parquet tables
        /// in DIR (README, "Parquet"); the report becomes the set's.
        #[arg(long, value_name = "DIR")]
        parquet: Option<std::path::PathBuf>,
    },
    /// Per-task wake-up latency (sched_waking -> sched_switch), a superset of `perf sched latency`.
    Latency {
        #[command(flatten)]
        common: Common,
        #[command(flatten)]
        only: TaskFilter,
        /// Only wake-ups that ended on this CPU (repeatable, or comma-separated).
        #[arg(long = "cpu", value_delimiter = ',')]
        cpus: Vec<u32>,
        /// Only real-time tasks (kernel prio < 100).
        #[arg(long)]
        rt_only: bool,
        /// Order of the task table: max, avg, p99, wakeups, runtime, pid, task.
        #[arg(long, default_value = "max")]
        sort: SortKey,
        /// Print a histogram of the selected tasks' latencies.
        #[arg(long)]
        hist: bool,
        /// Also measure, for each thread this interrupt led to (its IRQ thread, the thread
        /// that one woke, ...), the time from the interrupt's entry to the thread running. N is
        /// the interrupt's number, NAME a part of its handler's name.
        #[arg(long, value_name = "N|NAME")]
        irq: Option<IrqSelector>,
        /// Write a table as CSV: the wake-up latency per task (`--csv`, `--csv=tasks`) or the
        /// preemption waits per task (`--csv=preemption`).
        #[arg(long, value_name = "TABLE", num_args = 0..=1, require_equals = true, default_missing_value = "tasks", conflicts_with = "json")]
        csv: Option<CsvTable>,
        /// Also write traces, latency and histograms as Parquet tables in DIR (README,
        /// "Parquet"); the report becomes the set's.
        #[arg(long, value_name = "DIR", conflicts_with = "csv")]
        parquet: Option<std::path::PathBuf>,
    },
    /// Workqueue latency per work function, workqueue and kworker: queue -> start, execution.
    Wq(wq::WqArgs),
    /// function_graph time per function, and a slow call tree against a typical one
    /// (--func F in one trace, or TRACE --compare NORMAL): the extra and slower subtrees.
    Graph(graph::GraphArgs),
    /// Hard IRQ, softirq and hrtimer-callback durations; interrupts-off and preemption-off
    /// sections (preemptirq events, latency tracers, or inferred from late timer interrupts).
    Irq(irq::IrqArgs),
    /// One self-contained HTML page (no network, printable): the trace's facts and warnings,
    /// the worst wake-ups drawn as timelines, their causes, latency histograms, IRQ tables.
    Report(report::ReportArgs),
    /// Record a trace.dat with the events latency work needs, for a duration or while a
    /// command runs, and put tracefs back as it was.
    Record(record::RecordArgs),
    /// Is this machine set up for RT measurement? Preemption model, CPU frequency, idle states,
    /// SMT, isolation, RT throttling, IRQ affinity, timer slack, tracing, clocksource (read-only).
    Audit(audit::AuditArgs),
    /// Wake-up latency on this machine, measured as cyclictest does (SCHED_FIFO thread per
    /// CPU, absolute clock_nanosleep): per-thread min, avg, p50, p99, p99.9, max, histogram.
    Measure(measure::MeasureArgs),
    /// Hardware/firmware latency (SMIs, hypervisor steal, firmware): the kernel's hwlat tracer,
    /// or a SCHED_FIFO thread per CPU that reads the clock and reports the gaps.
    Hwlat(hwlat::HwlatArgs),
    /// The trace and its explanation for another tool: --perfetto OUT writes a Perfetto trace
    /// where each late wake-up is drawn on the late thread, culprits named, in ui.perfetto.dev.
    Export(export::ExportArgs),
    /// Did it get worse? Two runs (traces, or explain/latency/measure JSON) task by task: the
    /// change of count, avg, p50, p99, p99.9 and max, and of the causes of every spike; CI
    /// gates (--fail-on 'p99>+20%') exit 3 when NEW crossed them.
    Diff(diff::DiffArgs),
    /// Shell completions (bash, zsh, fish, elvish, powershell) and man pages, made from these
    /// very definitions; install.sh installs them.
    Generate(generate::GenerateArgs),
}

/// Which wake-ups `explain` explains, for it and the commands that draw its findings.
#[derive(Args)]
struct Selection {
    #[command(flatten)]
    only: TaskFilter,
    /// Explain every task, not only real-time ones (the default, narrowed to the thread a
    /// cyclictest --tracemark mark names when there is one).
    #[arg(long, conflicts_with_all = ["tasks", "pids"])]
    all: bool,
    /// How many of the worst wake-ups to show.
    #[arg(long, default_value_t = 5)]
    top: usize,
    /// Explain every wake-up at least this late (us) and aggregate their causes.
    #[arg(long, value_name = "US")]
    threshold: Option<f64>,
    /// Also explain preemption waits: from a switch-out while still runnable (prev_state R,
    /// R+: preempted, RR slice end) to the next switch-in. Traces with sched_switch only have
    /// nothing else.
    #[arg(long)]
    preemptions: bool,
    /// Only wake-ups whose wake chain this interrupt started (its IRQ thread, the thread that
    /// one woke, ...): N is its number, NAME a part of its handler's name.
    #[arg(long, value_name = "N|NAME", conflicts_with = "preemptions")]
    irq: Option<IrqSelector>,
    /// Only kworkers woken by the queueing of a work, due when the work was queued (with
    /// --all or --task kworker: kworkers are not real-time).
    #[arg(long, conflicts_with_all = ["preemptions", "irq"])]
    works: bool,
    /// Only the wake-up due at this time (seconds in the trace's clock, as printed; within 20
    /// us), however late the others were: the one a measuring thread timed.
    #[arg(long, value_name = "SECONDS", value_parser = parse_due, conflicts_with = "preemptions")]
    due: Option<u64>,
}

/// `--due`'s seconds as trace-clock nanoseconds (an f64 keeps them to a few ns for a year).
fn parse_due(s: &str) -> Result<u64, String> {
    (s.parse::<f64>().ok())
        .and_then(due_ns_of_seconds)
        .ok_or_else(|| format!("{s:?} is not a time in seconds"))
}

impl Selection {
    fn options(self) -> ExplainOptions {
        ExplainOptions {
            pids: self.only.pids,
            comms: self.only.tasks,
            all: self.all,
            top: self.top,
            threshold_us: self.threshold,
            preemptions: self.preemptions,
            irq: self.irq,
            works: self.works,
            due_ns: self.due,
        }
    }
}

/// Which of `latency`'s tables `--csv` writes.
#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum CsvTable {
    /// Wake-up latency per task.
    Tasks,
    /// Preemption waits per task.
    Preemption,
}

/// Which tasks a per-task command looks at.
#[derive(Args)]
struct TaskFilter {
    /// Only tasks whose name contains this (repeatable).
    #[arg(long = "task", value_name = "COMM")]
    tasks: Vec<String>,
    /// Only this pid (repeatable).
    #[arg(long = "pid")]
    pids: Vec<i32>,
}

/// What a TRACE argument may be: every format the readers know, so that `--help` answers
/// whether a perf, Perfetto or trace-cmd file is worth trying. Every command that reads a
/// trace says this (a macro, so that `concat!` can add to it).
macro_rules! trace_help {
    () => {
        "Trace file, or - for standard input: ftrace text (tracefs `trace`/`trace_pipe`, \
         `trace-cmd report`, Android atrace, latency-format and latency tracers' output, `perf \
         script` of tracepoints), Android systrace HTML (trace-data blocks and the older \
         linuxPerfData pages) and `atrace -z` output, trace-cmd trace.dat (v6, v7, \
         compressed), perf.data (tracepoint samples of `perf sched record` / `perf record \
         -e`), or Perfetto protobuf; each also as .gz, .zst or .xz. The format is recognised \
         from the content."
    };
}
pub(crate) use trace_help;

#[derive(Args)]
struct Common {
    #[arg(
        value_name = "TRACE",
        required = true,
        help = concat!(
            trace_help!(),
            " Several files or directories (walked to the bottom; files that are not traces \
             are skipped) make a set: one report per trace, then the whole set; the exit status \
             is non-zero only when no trace of the set could be read."
        )
    )]
    traces: Vec<String>,
    /// Print the stable JSON document instead of the text report.
    #[arg(long)]
    json: bool,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let done = run(cli);
    alloc::exiting();
    match done {
        Ok(code) => code,
        Err(e) => {
            // A closed pipe (`rtsleuth ... | head`) is not an error worth a message.
            if e.downcast_ref::<io::Error>()
                .is_some_and(|io| io.kind() == io::ErrorKind::BrokenPipe)
            {
                return ExitCode::SUCCESS;
            }
            eprintln!("rtsleuth: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn run(cli: Cli) -> Result<ExitCode> {
    let done = match cli.command {
        Command::Stats { common } if set::is_set(&common.traces, false) => {
            let analyse = |input| {
                let mut stats = Stats::new();
                let info = read::read(input, &mut stats)?;
                Ok((info.clone(), stats.document(&info)))
            };
            let mut totals = SetStats::default();
            let add = |t: &Traced<Document>| totals.add(&t.result.json);
            set::run(
                "stats",
                &common.traces,
                common.json,
                None,
                analyse,
                |d| d,
                add,
            )?
            .finish(totals.section())
        }
        Command::Stats { common } => {
            let mut stats = Stats::new();
            let info = read_trace(&common.traces[0], &mut stats)?;
            emit(&stats.document(&info), common.json, false)
        }
        Command::Explain {
            common,
            selection,
            parquet,
        } => {
            let opts = selection.options();
            if set::is_set(&common.traces, parquet.is_some()) {
                explain_set::run(&common.traces, opts, parquet.as_deref(), common.json)
            } else {
                let mut explain = Explain::new(opts);
                let info = read_trace(&common.traces[0], &mut explain)?;
                info.require_time()?;
                emit_drawable(&explain.document(&info), &common, false)
            }
        }
        Command::Latency {
            common,
            only: TaskFilter { tasks, pids },
            cpus,
            rt_only,
            sort,
            hist,
            irq,
            csv,
            parquet,
        } => {
            let opts = LatencyOptions {
                pids,
                comms: tasks,
                cpus,
                rt_only,
                sort,
                hist,
                task_histograms: false,
                irq,
            };
            if set::is_set(&common.traces, parquet.is_some()) {
                let one = match (csv.is_some(), opts.irq.is_some()) {
                    (true, _) => Some("--csv writes one trace's table"),
                    (_, true) => Some("--irq follows one trace's interrupt"),
                    _ => None,
                };
                if let Some(why) = one {
                    anyhow::bail!("{}: {why}; give one trace file", common.traces.join(" "));
                }
                latency_set::run(&common.traces, opts, parquet.as_deref(), common.json)
            } else {
                let mut latency = Latency::new(opts);
                let info = read_trace(&common.traces[0], &mut latency)?;
                info.require_time()?;
                let waits = (csv == Some(CsvTable::Preemption)).then(|| latency.preemption_table());
                let mut doc = latency.document(&info);
                // The CSV is the document's first table.
                if let Some(t) = waits {
                    doc.blocks = vec![Block::Table(t)];
                }
                emit_drawable(&doc, &common, csv.is_some())
            }
        }
        Command::Wq(args) => wq::run(args),
        Command::Graph(args) => graph::run(args),
        Command::Irq(args) => irq::run(args),
        Command::Audit(args) => audit::run(args),
        Command::Report(args) => report::run(args),
        Command::Record(args) => return record::run(args),
        Command::Diff(args) => return diff::run(args),
        Command::Measure(args) => measure::run(args),
        Command::Hwlat(args) => hwlat::run(args),
        Command::Export(args) => export::run(args),
        Command::Generate(args) => generate::run(args),
    };
    done.map(|()| ExitCode::SUCCESS)
}

fn read_trace(path: &str, sink: &mut (dyn EventSink + Send)) -> Result<TraceInfo> {
    let input = Input::open(path)?;
    let _progress = progress::for_input(&input);
    Ok(read::read(input, sink)?)
}

/// [`emit`], then, under a text report that shows a finding or a table, where to see it drawn.
fn emit_drawable(doc: &Document, common: &Common, csv: bool) -> Result<()> {
    emit(doc, common.json, csv)?;
    let shows_rows = doc
        .blocks
        .iter()
        .any(|b| matches!(b, Block::Table(t) if !t.rows.is_empty()));
    if !common.json && !csv && shows_rows {
        // TRACE, not the path: the report of standard input must read as that of its file.
        // A write, not println!: a closed pipe (`| head`) is an error main ends quietly on.
        writeln!(
            io::stdout(),
            "See it drawn: rtsleuth report TRACE -o report.html; rtsleuth export TRACE --perfetto out.pftrace"
        )?;
    }
    Ok(())
}

fn emit(doc: &Document, json: bool, csv: bool) -> Result<()> {
    let exporter: &dyn Exporter = if json {
        &JsonExporter
    } else if csv {
        &CsvExporter
    } else {
        &TextExporter
    };
    let stdout = io::stdout();
    let mut out = io::BufWriter::new(stdout.lock());
    exporter
        .export(doc, &mut out)
        .context("writing the report")?;
    out.flush()?;
    if csv || json {
        for w in &doc.warnings {
            eprintln!("rtsleuth: warning: {w}");
        }
    }
    Ok(())
}
