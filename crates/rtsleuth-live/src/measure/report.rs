//! The report of a run, as one [`Document`] for the text and JSON exporters.

use super::engine::{Ending, Outcome};
use super::options::MeasureOptions;
use super::thread::{Spike, ThreadResult};
use rtsleuth_analyze::document::{fmt_us, Align, Block, Document, Table};
use rtsleuth_trace::event::ns_to_us as us;
use serde_json::{json, Value};

/// The `rtsleuth.measure/1` document. `findings` is left empty for callers that explain a
/// break from a trace.
pub fn document(opts: &MeasureOptions, outcome: &Outcome) -> Document {
    let elapsed_s = outcome.elapsed.as_millis() as f64 / 1000.0;
    let json = json!({
        "schema": "rtsleuth.measure/1",
        "settings": settings_json(opts),
        "ended": outcome.ended.name(),
        "elapsed_s": elapsed_s,
        "threads": outcome.threads.iter().map(thread_json).collect::<Vec<_>>(),
        "break": outcome.brk.as_ref().map(break_json),
        "findings": [],
    });
    let mut blocks = vec![
        Block::Pairs(
            "Settings".into(),
            settings_pairs(opts, outcome.ended, elapsed_s),
        ),
        Block::Table(latency_table(&outcome.threads)),
    ];
    if let Some(b) = &outcome.brk {
        blocks.push(Block::Lines("Break".into(), vec![break_line(b)]));
    }
    if opts.hist_us.is_some() {
        blocks.push(Block::Table(histogram_table(&outcome.threads)));
    }
    let mut warnings: Vec<String> = outcome
        .threads
        .iter()
        .filter(|t| t.summary.overruns > 0)
        .map(|t| {
            format!(
                "thread {} (CPU{}) woke after {} later deadline(s) had already passed; those \
                 were skipped, not measured",
                t.plan.index, t.plan.cpu, t.summary.overruns
            )
        })
        .collect();
    if !outcome.idle_held {
        warnings.push(
            "this kernel has no /dev/cpu_dma_latency (built without cpuidle): no idle state was \
             held off, and the kernel lists none to hold"
                .into(),
        );
    }
    Document {
        json,
        blocks,
        warnings,
    }
}

fn settings_json(opts: &MeasureOptions) -> Value {
    json!({
        "cpus": opts.cpus.as_slice(),
        "threads": opts.thread_count(),
        "policy": opts.policy.name(),
        "prio": opts.prio,
        "priospread": opts.priospread,
        "interval_us": opts.interval_us,
        "distance_us": opts.distance_us,
        "duration_s": opts.duration.map(|d| d.as_secs_f64()),
        "loops": opts.loops,
        "break_us": opts.break_us,
        "histogram_us": opts.hist_us,
        "mlockall": true,
        "dma_latency_us": 0,
    })
}

fn thread_json(t: &ThreadResult) -> Value {
    let s = &t.summary;
    let measured = |ns: u64| (s.cycles > 0).then(|| us(ns));
    let mut v = json!({
        "thread": t.plan.index,
        "cpu": t.plan.cpu,
        "tid": t.tid,
        "prio": t.prio,
        "policy": t.policy,
        "interval_us": t.plan.interval_ns / 1000,
        "cycles": s.cycles,
        "min_us": measured(s.min_ns),
        "avg_us": measured(s.avg_ns()),
        "p50_us": measured(s.p50_ns),
        "p99_us": measured(s.p99_ns),
        "p999_us": measured(s.p999_ns),
        "max_us": measured(s.max_ns),
        "overruns": s.overruns,
    });
    if let Some(h) = &s.histogram {
        v["histogram"] = json!({
            "bucket_us": 1,
            "counts": h.counts,
            "overflows": h.overflows,
        });
    }
    v
}

fn break_json(b: &Spike) -> Value {
    json!({
        "thread": b.thread,
        "cpu": b.cpu,
        "tid": b.tid,
        "latency_us": us(b.latency_ns),
        "threshold_us": us(b.threshold_ns),
        "cycle": b.cycle,
        "expected_mono_ns": b.expected_ns,
    })
}

fn settings_pairs(opts: &MeasureOptions, ended: Ending, elapsed_s: f64) -> Vec<(String, String)> {
    let threads = opts.thread_count();
    let mut prio = format!("{} {}", opts.policy.name(), opts.prio);
    if opts.priospread {
        prio.push_str(", decreasing by 1 per thread");
    }
    let mut interval = format!("{} us", opts.interval_us);
    if opts.distance_us > 0 {
        interval.push_str(&format!(", +{} us per thread", opts.distance_us));
    }
    let length = match (opts.duration, opts.loops) {
        (Some(d), Some(n)) => format!("{} s or {n} wake-ups", d.as_secs()),
        (Some(d), None) => format!("{} s", d.as_secs()),
        (None, Some(n)) => format!("{n} wake-ups"),
        (None, None) => "until stopped".into(),
    };
    let mut pairs = vec![
        ("cpus".into(), opts.cpus.to_string()),
        ("threads".into(), threads.to_string()),
        ("policy".into(), prio),
        ("interval".into(), interval),
        ("length".into(), length),
    ];
    if let Some(b) = opts.break_us {
        pairs.push(("break".into(), format!("above {b} us")));
    }
    pairs.push((
        "ended".into(),
        format!("{} after {elapsed_s:.3} s", ended.name()),
    ));
    pairs
}

fn latency_table(threads: &[ThreadResult]) -> Table {
    let r = Align::Right;
    let mut t = Table::new(
        "Latency (us)",
        &[
            ("T", r),
            ("cpu", r),
            ("tid", r),
            ("policy", Align::Left),
            ("prio", r),
            ("interval", r),
            ("cycles", r),
            ("min", r),
            ("avg", r),
            ("p50", r),
            ("p99", r),
            ("p99.9", r),
            ("max", r),
            ("overruns", r),
        ],
    );
    for th in threads {
        let s = &th.summary;
        let cell = |ns: u64| {
            if s.cycles == 0 {
                "-".to_string()
            } else {
                fmt_us(us(ns))
            }
        };
        t.rows.push(vec![
            th.plan.index.to_string(),
            th.plan.cpu.to_string(),
            th.tid.to_string(),
            th.policy.to_string(),
            th.prio.to_string(),
            (th.plan.interval_ns / 1000).to_string(),
            s.cycles.to_string(),
            cell(s.min_ns),
            cell(s.avg_ns()),
            cell(s.p50_ns),
            cell(s.p99_ns),
            cell(s.p999_ns),
            cell(s.max_ns),
            s.overruns.to_string(),
        ]);
    }
    t
}

fn break_line(b: &Spike) -> String {
    format!(
        "thread {} (tid {}, CPU{}) woke {} us late, above the {} us threshold, at its wake-up \
         {}; all threads stopped",
        b.thread,
        b.tid,
        b.cpu,
        fmt_us(us(b.latency_ns)),
        fmt_us(us(b.threshold_ns)),
        b.cycle
    )
}

/// One row per microsecond that any thread has a count in, and the overflows, one column per
/// thread (`T<n>/cpu<c>`): cyclictest's `-h` layout without its all-zero rows.
fn histogram_table(threads: &[ThreadResult]) -> Table {
    let names: Vec<String> = threads
        .iter()
        .map(|t| format!("T{}/cpu{}", t.plan.index, t.plan.cpu))
        .collect();
    let mut columns = vec![("us", Align::Right)];
    columns.extend(names.iter().map(|n| (n.as_str(), Align::Right)));
    let mut table = Table::new("Histogram (wake-ups per us of latency)", &columns);
    let hists: Vec<_> = threads
        .iter()
        .filter_map(|t| t.summary.histogram.as_ref())
        .collect();
    let len = hists.iter().map(|h| h.counts.len()).max().unwrap_or(0);
    for us in 0..len {
        let counts: Vec<u64> = hists
            .iter()
            .map(|h| h.counts.get(us).copied().unwrap_or(0))
            .collect();
        if counts.iter().any(|&c| c > 0) {
            let mut row = vec![us.to_string()];
            row.extend(counts.iter().map(u64::to_string));
            table.rows.push(row);
        }
    }
    let mut overflow = vec![format!(">={len}")];
    overflow.extend(hists.iter().map(|h| h.overflows.to_string()));
    table.rows.push(overflow);
    table
}
