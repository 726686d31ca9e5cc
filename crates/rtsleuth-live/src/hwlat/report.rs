//! The `rtsleuth hwlat` report: text and the `rtsleuth.hwlat/1` JSON from one [`Detection`].

use super::result::{CpuResult, Detection, Spike};
use super::settings::Mode;
use rtsleuth_analyze::document::{fmt_ts, fmt_us, Align, Block, Document, Table};
use rtsleuth_trace::event::{ns_to_us, ts_to_secs};
use serde_json::{json, Value};

/// The report of a finished run.
pub fn document(d: &Detection) -> Document {
    Document {
        json: to_json(d),
        blocks: vec![header(d), per_cpu(d), longest(d)],
        warnings: d.warnings.clone(),
    }
}

fn to_json(d: &Detection) -> Value {
    let s = &d.settings;
    let cpus: Vec<Value> = d.cpus.iter().map(cpu_json).collect();
    json!({
        "schema": "rtsleuth.hwlat/1",
        "mode": d.mode.name(),
        "settings": {
            "width_us": s.width_us,
            "window_us": s.window_us,
            "threshold_us": s.threshold_us,
            "duration_s": s.duration.as_secs_f64(),
            "cpus": s.cpus.as_slice(),
            "prio": (d.mode == Mode::User).then_some(s.prio),
        },
        "elapsed_s": d.elapsed.as_secs_f64(),
        "interrupted": d.interrupted,
        "cpus": cpus,
        "total": {
            "windows": d.windows(),
            "measured_s": d.measured_ns().map(ts_to_secs),
            "gaps": d.total_gaps(),
            "max_us": ns_to_us(d.max_ns()),
        },
        "warnings": d.warnings,
    })
}

fn cpu_json(c: &CpuResult) -> Value {
    let worst: Vec<Value> = c
        .worst
        .iter()
        .map(|s| json!({"ts": ts_to_secs(s.ts), "wall_ts": ts_to_secs(s.wall), "us": ns_to_us(s.ns)}))
        .collect();
    json!({
        "cpu": c.cpu,
        "windows": c.windows,
        "measured_s": c.measured_ns.map(ts_to_secs),
        "gaps": c.gaps,
        "max_us": ns_to_us(c.max_ns),
        "nmi_count": c.nmi_count,
        "worst": worst,
    })
}

fn header(d: &Detection) -> Block {
    let s = &d.settings;
    let detector = match d.mode {
        Mode::User => format!(
            "user space: a SCHED_FIFO {} thread per CPU reading CLOCK_MONOTONIC",
            s.prio
        ),
        _ => "kernel hwlat tracer (interrupts off while sampling)".to_owned(),
    };
    let mut ran = format!(
        "{:.3} s of {} s",
        d.elapsed.as_secs_f64(),
        s.duration.as_secs_f64()
    );
    if d.interrupted {
        ran.push_str(" (interrupted)");
    }
    let pairs = [
        ("detector", detector),
        (
            "spin",
            format!(
                "{} us of every {} us window ({:.0}%)",
                s.width_us,
                s.window_us,
                100.0 * s.duty()
            ),
        ),
        ("threshold", format!("{} us", s.threshold_us)),
        ("cpus", s.cpus.to_string()),
        ("ran", ran),
    ];
    Block::Pairs(
        "Hardware latency".to_owned(),
        pairs.into_iter().map(|(k, v)| (k.to_owned(), v)).collect(),
    )
}

fn per_cpu(d: &Detection) -> Block {
    let kernel = d.mode == Mode::Kernel;
    let mut columns = vec![
        ("cpu", Align::Right),
        ("windows", Align::Right),
        ("measured_s", Align::Right),
        ("gaps", Align::Right),
        ("max_us", Align::Right),
    ];
    if kernel {
        columns.push(("nmis", Align::Right));
    }
    let mut t = Table::new("Per CPU", &columns);
    let row = |cpu: String,
               windows: Option<u64>,
               measured: Option<u64>,
               gaps: u64,
               max: u64,
               nmi: Option<u64>| {
        let mut r = vec![
            cpu,
            opt(windows.map(|w| w.to_string())),
            opt(measured.map(|m| format!("{:.3}", ts_to_secs(m)))),
            gaps.to_string(),
            fmt_us(ns_to_us(max)),
        ];
        if kernel {
            r.push(opt(nmi.map(|n| n.to_string())));
        }
        r
    };
    for c in &d.cpus {
        t.rows.push(row(
            c.cpu.to_string(),
            c.windows,
            c.measured_ns,
            c.gaps,
            c.max_ns,
            c.nmi_count,
        ));
    }
    if d.cpus.len() > 1 {
        let nmi = d.cpus.iter().map(|c| c.nmi_count).sum();
        t.rows.push(row(
            "all".to_owned(),
            d.windows(),
            d.measured_ns(),
            d.total_gaps(),
            d.max_ns(),
            nmi,
        ));
    }
    Block::Table(t)
}

/// The longest gaps of all CPUs together, as many as each CPU kept.
fn longest(d: &Detection) -> Block {
    let mut all: Vec<(usize, Spike)> = d
        .cpus
        .iter()
        .flat_map(|c| c.worst.iter().map(move |s| (c.cpu, *s)))
        .collect();
    all.sort_by(|a, b| b.1.ns.cmp(&a.1.ns).then(a.1.ts.cmp(&b.1.ts)));
    all.truncate(d.settings.top);
    let mut t = Table::new(
        "Longest gaps (ts: CLOCK_MONOTONIC, as the trace clock mono; wall: seconds since the epoch)",
        &[
            ("cpu", Align::Right),
            ("ts", Align::Right),
            ("wall", Align::Right),
            ("us", Align::Right),
        ],
    );
    t.rows = all
        .into_iter()
        .map(|(cpu, s)| {
            vec![
                cpu.to_string(),
                fmt_ts(s.ts),
                fmt_ts(s.wall),
                fmt_us(ns_to_us(s.ns)),
            ]
        })
        .collect();
    Block::Table(t)
}

fn opt(value: Option<String>) -> String {
    value.unwrap_or_else(|| "-".to_owned())
}
