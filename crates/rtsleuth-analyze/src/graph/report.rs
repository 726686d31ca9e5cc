//! The `graph` report (`rtsleuth.graph/1`): the per-function table and the comparison.

use super::compare::{Grown, Lone};
use super::functions::FuncStats;
use super::sink::GraphPass;
use super::stack::MAX_TREE_NODES;
use super::tree::Invocation;
use super::{Comparison, GraphOptions};
use crate::document::{fmt_ts, fmt_us, trace_json, Align, Block, Document, Table};
use rtsleuth_trace::event::{ns_to_us, ts_to_secs};
use rtsleuth_trace::read::function_graph::GraphInfo;
use serde_json::{json, Value};

const PATH_SEP: &str = " > ";

pub fn document(
    info: &GraphInfo,
    pass: &GraphPass,
    cmp: Option<&Comparison>,
    opts: &GraphOptions,
) -> Document {
    let mut funcs: Vec<(&str, &FuncStats)> = pass.funcs.iter().collect();
    funcs.sort_by(|a, b| {
        b.1.inclusive
            .sum_ns()
            .cmp(&a.1.inclusive.sum_ns())
            .then(a.0.cmp(b.0))
    });
    let warnings = warnings(info, pass);
    let mut blocks = vec![Block::Table(function_table(&funcs, opts.top))];
    if let Some(c) = cmp {
        blocks.extend(comparison_blocks(c, opts));
    }
    let json = json!({
        "schema": "rtsleuth.graph/1",
        "trace": trace_json(&info.trace),
        "task_switches": info.task_switches,
        "irq_markers": info.irq_markers,
        "markup_lines": info.markup_lines,
        "first_markup_line": info.first_markup_line,
        "functions": funcs.iter().map(|(n, s)| function_json(n, s)).collect::<Vec<_>>(),
        "compare": cmp.map(comparison_json),
        "warnings": warnings,
    });
    Document {
        json,
        blocks,
        warnings,
    }
}

fn us(ns: u64) -> String {
    fmt_us(ns_to_us(ns))
}

fn signed_us(ns: i64) -> String {
    let s = fmt_us(ns.unsigned_abs() as f64 / 1e3);
    if ns < 0 {
        format!("-{s}")
    } else {
        format!("+{s}")
    }
}

fn function_table(funcs: &[(&str, &FuncStats)], top: usize) -> Table {
    let title = if funcs.len() > top {
        format!(
            "Time per function, top {top} of {} by total (self = without the functions it called)",
            funcs.len()
        )
    } else {
        "Time per function by total (self = without the functions it called)".to_string()
    };
    let mut t = Table::new(
        &title,
        &[
            ("Function", Align::Left),
            ("Calls", Align::Right),
            ("Total us", Align::Right),
            ("Avg us", Align::Right),
            ("p99 us", Align::Right),
            ("Max us", Align::Right),
            ("Max at", Align::Right),
            ("Self total us", Align::Right),
            ("Self avg us", Align::Right),
            ("Self max us", Align::Right),
        ],
    );
    for (name, s) in funcs.iter().take(top) {
        let (i, e) = (&s.inclusive, &s.exclusive);
        t.rows.push(vec![
            name.to_string(),
            i.count().to_string(),
            fmt_us(i.sum_ns() as f64 / 1e3),
            format!("{:.3}", i.avg_ns() / 1e3),
            us(i.percentile_ns(99.0)),
            us(i.max_ns()),
            s.max_ts
                .map_or_else(|| format!("line {}", i.max_at()), fmt_ts),
            fmt_us(e.sum_ns() as f64 / 1e3),
            format!("{:.3}", self_avg_ns(s) / 1e3),
            us(e.max_ns()),
        ]);
    }
    t
}

/// Average self time per call (every timed call has both).
fn self_avg_ns(s: &FuncStats) -> f64 {
    match s.inclusive.count() {
        0 => 0.0,
        n => s.exclusive.sum_ns() as f64 / n as f64,
    }
}

fn function_json(name: &str, s: &FuncStats) -> Value {
    let (i, e) = (&s.inclusive, &s.exclusive);
    json!({
        "function": name,
        "calls": i.count(),
        "total_us": i.sum_ns() as f64 / 1e3,
        "avg_us": i.avg_ns() / 1e3,
        "p50_us": ns_to_us(i.percentile_ns(50.0)),
        "p99_us": ns_to_us(i.percentile_ns(99.0)),
        "max_us": ns_to_us(i.max_ns()),
        "max_at_line": i.max_at(),
        "max_at_ts": s.max_ts.map(ts_to_secs),
        "self_total_us": e.sum_ns() as f64 / 1e3,
        "self_avg_us": self_avg_ns(s) / 1e3,
        "self_max_us": ns_to_us(e.max_ns()),
    })
}

fn at(inv: &Invocation) -> String {
    match inv.ts {
        Some(ts) => format!("line {}, {}", inv.line, fmt_ts(ts)),
        None => format!("line {}", inv.line),
    }
}

fn comparison_blocks(c: &Comparison, opts: &GraphOptions) -> Vec<Block> {
    let delta = c.slow.tree.ns as i64 - c.base.tree.ns as i64;
    let from = c
        .base_source
        .as_deref()
        .map(|s| format!(", in {s}"))
        .unwrap_or_default();
    let summary = Block::Pairs(
        format!("Slowest {} against a typical one", c.function),
        vec![
            (
                "slowest".into(),
                format!("{} us ({})", us(c.slow.tree.ns), at(&c.slow)),
            ),
            (
                "typical".into(),
                format!(
                    "{} us ({}{from}; the one nearest the median of {} invocations)",
                    us(c.base.tree.ns),
                    at(&c.base),
                    c.base_invocations
                ),
            ),
            ("delta".into(), format!("{} us", signed_us(delta))),
        ],
    );
    let mut extra = Table::new(
        "Only in the slowest (extra calls)",
        &[
            ("us", Align::Right),
            ("Calls", Align::Right),
            ("Path", Align::Left),
        ],
    );
    extra.rows = c.diff.extra.iter().map(lone_row).collect();
    let mut slower = Table::new(
        &format!(
            "Slower in the slowest (own time grew by more than {} us)",
            fmt_us(opts.threshold_us)
        ),
        &[
            ("Self +us", Align::Right),
            ("Slow us", Align::Right),
            ("Typical us", Align::Right),
            ("Path", Align::Left),
        ],
    );
    slower.rows = c
        .diff
        .slower
        .iter()
        .map(|g| {
            vec![
                signed_us(g.self_delta_ns),
                us(g.slow_ns),
                us(g.base_ns),
                g.path.join(PATH_SEP),
            ]
        })
        .collect();
    let mut blocks = vec![summary, Block::Table(extra), Block::Table(slower)];
    if !c.diff.missing.is_empty() {
        let mut missing = Table::new(
            "Only in the typical (calls the slowest did not make)",
            &[
                ("us", Align::Right),
                ("Calls", Align::Right),
                ("Path", Align::Left),
            ],
        );
        missing.rows = c.diff.missing.iter().map(lone_row).collect();
        blocks.push(Block::Table(missing));
    }
    blocks
}

fn lone_row(l: &Lone) -> Vec<String> {
    vec![us(l.ns), l.calls.to_string(), l.path.join(PATH_SEP)]
}

fn comparison_json(c: &Comparison) -> Value {
    let inv = |i: &Invocation| json!({"us": ns_to_us(i.tree.ns), "line": i.line, "ts": i.ts.map(ts_to_secs)});
    let lone = |l: &Lone| {
        json!({
            "path": l.path.join(PATH_SEP),
            "function": l.path.last(),
            "us": ns_to_us(l.ns),
            "calls": l.calls,
        })
    };
    let grown = |g: &Grown| {
        json!({
            "path": g.path.join(PATH_SEP),
            "function": g.path.last(),
            "slow_us": ns_to_us(g.slow_ns),
            "base_us": ns_to_us(g.base_ns),
            "delta_us": (g.slow_ns as f64 - g.base_ns as f64) / 1e3,
            "self_delta_us": g.self_delta_ns as f64 / 1e3,
        })
    };
    json!({
        "function": c.function,
        "slow_us": ns_to_us(c.slow.tree.ns),
        "base_us": ns_to_us(c.base.tree.ns),
        "delta_us": (c.slow.tree.ns as f64 - c.base.tree.ns as f64) / 1e3,
        "slow": inv(&c.slow),
        "base": inv(&c.base),
        "base_source": c.base_source,
        "base_invocations": c.base_invocations,
        "extra": c.diff.extra.iter().map(lone).collect::<Vec<_>>(),
        "slower": c.diff.slower.iter().map(grown).collect::<Vec<_>>(),
        "missing": c.diff.missing.iter().map(lone).collect::<Vec<_>>(),
    })
}

fn warnings(info: &GraphInfo, pass: &GraphPass) -> Vec<String> {
    let mut w = info.trace.warnings();
    // Said because the depths of those calls rest on their columns having survived the drawing.
    if let Some(first) = info.first_markup_line {
        w.push(format!(
            "{} lines carry hand-drawn markup (arrows, bars, notes), which was stripped: their calls are read at the column where the call text starts; first at line {first}",
            info.markup_lines
        ));
    }
    let (abandoned, open, truncated) = pass.stack_totals();
    if abandoned > 0 {
        w.push(format!("{abandoned} calls were entered but never exited (lost or cut output); they are not timed"));
    }
    if open > 0 {
        w.push(format!(
            "{open} calls were still open at the end of the trace; they are not timed"
        ));
    }
    if pass.unnamed > 0 {
        w.push(format!(
            "{} exits close calls whose entry is not in the trace and carry no /* func */ tail (funcgraph-tail); their time counts for their callers only",
            pass.unnamed
        ));
    }
    if pass.untimed > 0 {
        w.push(format!("{} calls were printed without a duration (the duration column is off); they are not timed", pass.untimed));
    }
    if truncated > 0 {
        w.push(format!(
            "{truncated} captured call trees were cut at {MAX_TREE_NODES} calls"
        ));
    }
    w
}
