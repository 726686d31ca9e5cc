//! The wake-up latency section: a histogram per real-time task, then `rtsleuth latency`'s own
//! tables.

use super::histogram::task_histogram;
use super::tables::table;
use super::Analyses;
use crate::error::Result;
use maud::{html, Markup};
use rtsleuth_analyze::document::{fmt_us, Block};
use serde_json::Value;

/// Histograms drawn at most: the real-time tasks with the worst maxima (the table's order).
const HISTOGRAMS: usize = 12;
/// Task rows shown at most; a busy Android trace has thousands of tasks.
const TASK_ROWS: usize = 100;

pub fn latency(a: &Analyses) -> Result<Markup> {
    let doc = &a.latency;
    let empty = Vec::new();
    let rt: Vec<&Value> = doc.json["tasks"]
        .as_array()
        .unwrap_or(&empty)
        .iter()
        .filter(|t| t["prio"].as_i64().is_some_and(|p| p < 100) && t["wakeups"].as_u64() > Some(0))
        .take(HISTOGRAMS)
        .collect();
    let mut figures = Vec::new();
    for t in rt {
        if let Some(svg) = task_histogram(t)? {
            figures.push((t, svg));
        }
    }
    let tables: Vec<Markup> = doc
        .blocks
        .iter()
        .enumerate()
        .map(|(i, b)| match b {
            // The first table is the per-task one.
            Block::Table(t) if i == 0 => table(t, Some((TASK_ROWS, "rtsleuth latency TRACE"))),
            b => super::tables::block(b),
        })
        .collect();
    Ok(html! {
        section #latency {
            h2 { "Wake-up latency" }
            p.note { (doc.json["definition"].as_str().unwrap_or_default()) }
            @if figures.is_empty() {
                p { "No real-time task (prio < 100) was woken in this trace." }
            }
            div.figures {
                @for (t, svg) in &figures {
                    figure.hist {
                        (svg)
                        figcaption {
                            (t["comm"].as_str().unwrap_or("?")) "-" (t["pid"]) " (prio " (t["prio"]) "): "
                            span.wakeups { (t["wakeups"]) } " wake-ups, p99 "
                            span.p99 { (us(&t["p99_us"])) } " us, p99.9 "
                            span.p999 { (us(&t["p999_us"])) } " us, max "
                            span.max { (us(&t["max_us"])) } " us at " (t["max_at_ts"]) " s"
                        }
                    }
                }
            }
            @for t in &tables { (t) }
        }
    })
}

fn us(v: &Value) -> String {
    v.as_f64().map_or("-".into(), fmt_us)
}
