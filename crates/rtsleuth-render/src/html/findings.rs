//! The worst late wake-ups `explain` found, each drawn as a timeline with its explanation:
//! the summary sentence, where the time went (the finding's `components`, as `explain`
//! prints them), and every stretch of its `timeline` for whoever wants the exact instants.

use super::palette::{colour, css};
use super::timeline::timeline;
use super::Analyses;
use crate::error::Result;
use maud::{html, Markup};
use rtsleuth_analyze::document::fmt_us;
use rtsleuth_analyze::document::round3;
use rtsleuth_analyze::explain::Cause;
use serde_json::Value;

pub fn findings(a: &Analyses) -> Result<Markup> {
    let json = &a.explain.json;
    let empty = Vec::new();
    let findings = json["findings"].as_array().unwrap_or(&empty);
    let targets = json["targets"].as_array().unwrap_or(&empty);
    let mut drawn = Vec::with_capacity(findings.len());
    for (i, f) in findings.iter().enumerate() {
        drawn.push(finding(i + 1, f)?);
    }
    Ok(html! {
        section #findings {
            h2 { "The worst late wake-ups" }
            p {
                (targets.len()) " target task" @if targets.len() != 1 { "s" } ", "
                (targets.iter().filter_map(|t| t["wakeups"].as_u64()).sum::<u64>()) " wake-ups explained; the "
                (findings.len()) " worst, from the moment the task was due to the moment it ran:"
            }
            (legend())
            @for f in &drawn { (f) }
        }
    })
}

/// The class colours, in PRODUCT.md's order.
pub fn legend() -> Markup {
    html! {
        ul.legend {
            @for c in Cause::ALL {
                li { span.swatch style={ "background:" (css(colour(c))) } {} (c.as_str()) }
            }
        }
    }
}

fn finding(rank: usize, f: &Value) -> Result<Markup> {
    let latency = f["latency_us"].as_f64().unwrap_or(0.0);
    let task = &f["task"];
    let empty = Vec::new();
    let components = f["components"].as_array().unwrap_or(&empty);
    let stretches = f["timeline"].as_array().unwrap_or(&empty);
    let share = |us: f64| {
        if latency > 0.0 {
            format!("{:.1}%", us / latency * 100.0)
        } else {
            "-".into()
        }
    };
    Ok(html! {
        article.finding id={ "finding-" (rank) } {
            h3 {
                "#" (rank) " " (task["comm"].as_str().unwrap_or("?")) "-" (task["pid"])
                " (prio " (task["prio"]) ") CPU" (f["cpu"]) ": "
                span.latency { (fmt_us(latency)) } " us late [" (f["source"].as_str().unwrap_or("?")) "], root cause "
                span.root { (f["root_cause"].as_str().unwrap_or("?")) }
            }
            p.summary { (f["summary"].as_str().unwrap_or_default()) }
            (timeline(f)?)
            table.components {
                thead { tr { th.r { "us" } th.r { "share" } th.l { "kind" } th.l { "phase" } th.l { "culprit" } th.l { "detail" } } }
                tbody {
                    @for c in components {
                        @let us = c["us"].as_f64().unwrap_or(0.0);
                        tr {
                            td.r { (fmt_us(us)) } td.r { (share(us)) }
                            td.l.kind { (kind(&c["kind"])) } td.l { (c["phase"].as_str().unwrap_or("")) }
                            td.l { (c["culprit"].as_str().unwrap_or("-")) } td.l { (c["detail"].as_str().unwrap_or("")) }
                        }
                    }
                }
            }
            p.note { "due: " (f["due"].as_str().unwrap_or("no evidence")) }
            details {
                summary { "Every stretch (" (stretches.len()) ")" }
                table.stretches {
                    thead { tr { th.r { "start s" } th.r { "CPU" } th.r { "us" } th.l { "kind" } th.l { "culprit" } th.l { "detail" } } }
                    tbody {
                        @for s in stretches {
                            @let us = round3((s["end_ts"].as_f64().unwrap_or(0.0) - s["start_ts"].as_f64().unwrap_or(0.0)) * 1e6);
                            tr {
                                td.r { (s["start_ts"]) } td.r { (s["cpu"]) } td.r { (fmt_us(us)) }
                                td.l.kind { (kind(&s["kind"])) } td.l { (s["culprit"].as_str().unwrap_or("-")) }
                                td.l { (s["detail"].as_str().unwrap_or("")) }
                            }
                        }
                    }
                }
            }
        }
    })
}

/// A class name with its colour swatch.
fn kind(k: &Value) -> Markup {
    let name = k.as_str().unwrap_or("unknown");
    html! { span.swatch style={ "background:" (css(super::palette::kind_colour(name))) } {} (name) }
}
