//! The diff as a document: `rtsleuth.diff/1` JSON and aligned text tables from one model.

use super::compare::{round3, CauseDiff, CulpritChange, MetricChange, TaskDiff};
use super::gate::{Breach, Gate};
use super::load::Diff;
use super::metric::MIN_TAIL;
use super::run::{CauseTime, Run};
use crate::document::{fmt_us, Align, Block, Document, Table};
use serde_json::{json, Value};

/// The matching rule, said in the report and the JSON.
const MATCHING: &str = "tasks by comm without their own pid, tasks of one name numbered in pid order (name, name#2, ...); culprits without the -pid of comm-pid";

/// The document of `diff` with the gates' outcome.
pub fn document(diff: &Diff, gates: &[(Gate, Vec<Breach>)]) -> Document {
    let c = &diff.compared;
    let json = json!({
        "schema": "rtsleuth.diff/1",
        "base": side_json(&diff.base),
        "new": side_json(&diff.new),
        "matching": MATCHING,
        "latency_compared": diff.latency,
        "threshold_us": diff.causes_threshold_us,
        "weak_below_tail_samples": MIN_TAIL,
        "tasks": c.tasks.iter().map(task_json).collect::<Vec<_>>(),
        "only_in_base": c.only_base,
        "only_in_new": c.only_new,
        "gates": gates.iter().map(|(g, b)| json!({
            "gate": g.text,
            "failed": !b.is_empty(),
            "breaches": b.iter().map(breach_json).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
        "failed": gates.iter().any(|(_, b)| !b.is_empty()),
        "warnings": diff.warnings,
    });
    let mut blocks = vec![head_block(diff)];
    if diff.latency {
        blocks.push(Block::Table(latency_table(&c.tasks)));
    }
    if let Some(threshold) = diff.causes_threshold_us {
        for t in &c.tasks {
            if let Some(causes) = t.causes.as_ref().filter(|c| c.spikes != (0, 0)) {
                blocks.push(Block::Table(kind_table(&t.key, threshold, causes)));
                blocks.push(Block::Table(culprit_table(&t.key, causes)));
            }
        }
    }
    if !gates.is_empty() {
        blocks.push(Block::Lines("Gates".into(), gate_lines(gates)));
    }
    Document {
        json,
        blocks,
        warnings: diff.warnings.clone(),
    }
}

/// One line per failing task: the breach and the cause that grew most for that task.
pub fn breach_line(gate: &Gate, b: &Breach) -> String {
    let m = &b.change;
    let unit = if m.metric.is_count() { "" } else { " us" };
    let weak = if m.weak {
        " (weak: few samples above it)"
    } else {
        ""
    };
    let why = match b.task.causes.as_ref().and_then(CauseDiff::grew_most) {
        Some(c) => format!(
            "grew most: {} {} {} us ({} -> {} spikes)",
            c.kind,
            c.culprit.as_deref().unwrap_or("-"),
            signed(c.delta_us),
            spikes(c.base),
            spikes(c.new)
        ),
        None if b.task.causes.is_some() => "no cause grew".into(),
        None => "causes not compared".into(),
    };
    format!(
        "{}: {} {} {} -> {}{unit} ({}{unit}, {}){weak}; {why}",
        gate.text,
        b.task.key,
        m.metric.name(),
        fmt_us(m.base),
        fmt_us(m.new),
        signed(m.delta),
        pct(m.change_pct),
    )
}

fn gate_lines(gates: &[(Gate, Vec<Breach>)]) -> Vec<String> {
    gates
        .iter()
        .flat_map(|(g, breaches)| {
            if breaches.is_empty() {
                vec![format!("ok    {}", g.text)]
            } else {
                breaches
                    .iter()
                    .map(|b| format!("FAIL  {}", breach_line(g, b)))
                    .collect()
            }
        })
        .collect()
}

fn side_json(r: &Run) -> Value {
    json!({"input": r.input, "what": r.what})
}

fn head_block(diff: &Diff) -> Block {
    let c = &diff.compared;
    let mut compared = Vec::new();
    if diff.latency {
        compared.push("latency per task".to_string());
    }
    if let Some(t) = diff.causes_threshold_us {
        compared.push(format!(
            "causes of every wake-up at least {} us late",
            fmt_us(t)
        ));
    }
    let mut pairs = vec![
        (
            "base".to_string(),
            format!("{} ({})", diff.base.input, diff.base.what),
        ),
        (
            "new".to_string(),
            format!("{} ({})", diff.new.input, diff.new.what),
        ),
        ("compared".to_string(), compared.join("; ")),
        ("matching".to_string(), MATCHING.to_string()),
        ("tasks".to_string(), format!("{} in both", c.tasks.len())),
    ];
    for (name, keys) in [("only in base", &c.only_base), ("only in new", &c.only_new)] {
        if !keys.is_empty() {
            pairs.push((name.to_string(), keys.join(", ")));
        }
    }
    Block::Pairs("Diff".into(), pairs)
}

fn latency_table(tasks: &[TaskDiff]) -> Table {
    let mut t = Table::new(
        &format!("Latency (us; a percentile with fewer than {MIN_TAIL} samples above it in a run is weak)"),
        &[
            ("task", Align::Left),
            ("metric", Align::Left),
            ("base", Align::Right),
            ("new", Align::Right),
            ("delta", Align::Right),
            ("change", Align::Right),
            ("above base", Align::Right),
            ("above new", Align::Right),
            ("note", Align::Left),
        ],
    );
    for task in tasks {
        for m in task.latency.iter().flatten() {
            let (above_base, above_new) =
                m.tail.map_or((String::new(), String::new()), |(b, n)| {
                    (b.to_string(), n.to_string())
                });
            t.rows.push(vec![
                task.key.clone(),
                m.metric.name().into(),
                fmt_us(m.base),
                fmt_us(m.new),
                signed(m.delta),
                pct(m.change_pct),
                above_base,
                above_new,
                if m.weak { "weak" } else { "" }.into(),
            ]);
        }
    }
    t
}

fn kind_table(key: &str, threshold: f64, c: &CauseDiff) -> Table {
    let mut t = Table::new(
        &format!(
            "Causes of {key} per class (wake-ups at least {} us late: {} -> {})",
            fmt_us(threshold),
            c.spikes.0,
            c.spikes.1
        ),
        &[
            ("kind", Align::Left),
            ("base us", Align::Right),
            ("new us", Align::Right),
            ("delta us", Align::Right),
        ],
    );
    for k in &c.by_kind {
        t.rows.push(vec![
            k.kind.clone(),
            fmt_us(k.base_us),
            fmt_us(k.new_us),
            signed(k.delta_us),
        ]);
    }
    t
}

fn culprit_table(key: &str, c: &CauseDiff) -> Table {
    let mut t = Table::new(
        &format!("Causes of {key} per culprit"),
        &[
            ("kind", Align::Left),
            ("culprit", Align::Left),
            ("change", Align::Left),
            ("base spikes", Align::Right),
            ("base us", Align::Right),
            ("new spikes", Align::Right),
            ("new us", Align::Right),
            ("delta us", Align::Right),
        ],
    );
    for k in &c.by_culprit {
        let us = |s: Option<CauseTime>| fmt_us(round3(s.map_or(0.0, |s| s.total_us)));
        t.rows.push(vec![
            k.kind.clone(),
            k.culprit.clone().unwrap_or_else(|| "-".into()),
            k.change.as_str().into(),
            spikes(k.base).to_string(),
            us(k.base),
            spikes(k.new).to_string(),
            us(k.new),
            signed(k.delta_us),
        ]);
    }
    t
}

fn spikes(c: Option<CauseTime>) -> u64 {
    c.map_or(0, |c| c.spikes)
}

fn signed(x: f64) -> String {
    if x > 0.0 {
        format!("+{}", fmt_us(x))
    } else if x < 0.0 {
        format!("-{}", fmt_us(-x))
    } else {
        "0".into()
    }
}

fn pct(p: Option<f64>) -> String {
    p.map_or_else(|| "-".into(), |p| format!("{p:+.1}%"))
}

fn metric_json(m: &MetricChange) -> Value {
    let mut v = json!({
        "base": m.base,
        "new": m.new,
        "delta": m.delta,
        "change_pct": m.change_pct,
    });
    if let Some((b, n)) = m.tail {
        v["tail_samples"] = json!({"base": b, "new": n});
        v["weak"] = json!(m.weak);
    }
    v
}

fn cause_time_json(c: Option<CauseTime>) -> Value {
    c.map_or(
        Value::Null,
        |c| json!({"spikes": c.spikes, "total_us": round3(c.total_us), "max_us": round3(c.max_us)}),
    )
}

fn culprit_json(c: &CulpritChange) -> Value {
    json!({
        "kind": c.kind,
        "culprit": c.culprit,
        "change": c.change.as_str(),
        "base": cause_time_json(c.base),
        "new": cause_time_json(c.new),
        "delta_us": c.delta_us,
    })
}

fn grew_most_json(c: Option<&CauseDiff>) -> Value {
    c.and_then(CauseDiff::grew_most).map_or(
        Value::Null,
        |g| json!({"kind": g.kind, "culprit": g.culprit, "delta_us": g.delta_us}),
    )
}

fn task_json(t: &TaskDiff) -> Value {
    json!({
        "task": t.key,
        "base_pid": t.pids.0,
        "new_pid": t.pids.1,
        "latency": t.latency.as_ref().map(|ms| {
            ms.iter()
                .map(|m| (m.metric.name().to_string(), metric_json(m)))
                .collect::<serde_json::Map<_, _>>()
        }),
        "causes": t.causes.as_ref().map(|c| json!({
            "spikes": {"base": c.spikes.0, "new": c.spikes.1},
            "by_kind": c.by_kind.iter().map(|k| json!({
                "kind": k.kind, "base_us": k.base_us, "new_us": k.new_us, "delta_us": k.delta_us,
            })).collect::<Vec<_>>(),
            "by_culprit": c.by_culprit.iter().map(culprit_json).collect::<Vec<_>>(),
            "grew_most": grew_most_json(Some(c)),
        })),
    })
}

fn breach_json(b: &Breach) -> Value {
    let mut v = metric_json(&b.change);
    v["task"] = json!(b.task.key);
    v["metric"] = json!(b.change.metric.name());
    v["grew_most"] = grew_most_json(b.task.causes.as_ref());
    v
}
