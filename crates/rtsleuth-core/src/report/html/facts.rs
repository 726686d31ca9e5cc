//! The top of the page: what the trace is, and every warning of every analysis. A reader must
//! see that events were lost before believing any number below, so the warnings come first.

use super::Analyses;
use crate::report::fmt_us;
use maud::{html, Markup};
use serde_json::Value;

/// The trace's facts, from the `trace` object every document carries.
pub fn facts(a: &Analyses) -> Markup {
    let t = &a.explain.json["trace"];
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
    let warnings = a.warnings();
    html! {
        section #facts {
            table.pairs { tbody {
                tr { th.l { "trace" } td.l { code { (t["source"].as_str().unwrap_or("-")) } } }
                tr { th.l { "format" } td.l { (t["format"].as_str().unwrap_or("-")) } }
                tr { th.l { "span" } td.l #span { (span) } }
                tr { th.l { "CPUs" } td.l #cpus { (cpus.len()) " (" (cpus.join(", ")) ")" } }
                tr { th.l { "events" } td.l #events { (t["events"]) } }
                tr { th.l { "lost events" } td.l #lost { (t["lost_events"]) } }
            } }
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
