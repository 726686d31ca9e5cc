//! The top of the page: what the trace is, and every warning of every analysis. A reader must
//! see that events were lost before believing any number below, so the warnings come first.

use super::Analyses;
use maud::{html, Markup};
use rtsleuth_analyze::document::fmt_us;
use serde_json::Value;

/// The trace's facts, from the `trace` object every document carries.
pub fn facts(a: &Analyses) -> Markup {
    let t = &a.explain.json["trace"];
    let rows = if a.is_findings_file() {
        soak_rows(t)
    } else {
        trace_rows(t)
    };
    let warnings = a.warnings();
    html! {
        section #facts {
            table.pairs { tbody { (rows) } }
            @if warnings.is_empty() {
                p #warnings.ok { "No warnings: nothing in the trace qualifies the numbers below." }
            } @else {
                div #warnings.warn {
                    h2 { (warnings.len()) " warning" @if warnings.len() > 1 { "s" } " (they qualify every number below)" }
                    ul { @for w in &warnings { li { (w) } } }
                }
            }
        }
    }
}

fn trace_rows(t: &Value) -> Markup {
    let cpus: Vec<String> = t["cpus"]
        .as_array()
        .map(|c| c.iter().map(Value::to_string).collect())
        .unwrap_or_default();
    let span = match (t["start"].as_f64(), t["end"].as_f64()) {
        (Some(s), Some(e)) => format!(
            "{s:.6} s to {e:.6} s ({} us)",
            fmt_us(((e - s) * 1e9).round() / 1e3)
        ),
        _ => "no timestamped event".into(),
    };
    html! {
        tr { th.l { "trace" } td.l { code { (t["source"].as_str().unwrap_or("-")) } } }
        tr { th.l { "format" } td.l { (t["format"].as_str().unwrap_or("-")) } }
        tr { th.l { "span" } td.l #span { (span) } }
        tr { th.l { "CPUs" } td.l #cpus { (cpus.len()) " (" (cpus.join(", ")) ")" } }
        tr { th.l { "events" } td.l #events { (t["events"]) } }
        tr { th.l { "lost events" } td.l #lost { (t["lost_events"]) } }
    }
}

/// A soak's findings file: when it ran and how many spikes it explained; the traces of the
/// worst are beside it, and its measured latency is in `measure`'s own report.
fn soak_rows(t: &Value) -> Markup {
    let text = |v: &Value| v.as_str().unwrap_or("-").to_string();
    let spikes = t["spikes"].as_u64().unwrap_or(0);
    let unexplained = t["unexplained"].as_u64().unwrap_or(0);
    html! {
        tr { th.l { "findings" } td.l { code { (text(&t["source"])) } } }
        tr { th.l { "format" } td.l { "a soak's findings (measure --explain-every), one line per spike" } }
        tr { th.l { "span" } td.l #span { (text(&t["wall_start"])) " to " (text(&t["wall_end"])) } }
        tr { th.l { "spikes" } td.l #spikes { (spikes) ", " (spikes - unexplained.min(spikes)) " explained" } }
        tr { th.l { "not here" } td.l { "latency distributions (measure's report has them), interrupts and workqueues (open a kept spike-N.dat)" } }
    }
}
