//! `rtsleuth report`: one self-contained HTML page (no script, no font, no request of any
//! kind, so it opens from a USB stick on an air-gapped lab PC, and prints).
//!
//! The page is one more consumer of the analyses' [`Document`]s, like the text and JSON
//! exporters: [`Analyses::read`] runs `explain`, `latency`, `irq` and `wq` in one pass over the
//! trace and keeps their documents; [`render`] draws only from those (their stable JSON and
//! their text blocks), so the page cannot say anything the commands would not. Its size
//! depends on the number of findings, tasks and table rows shown, each bounded, never on the
//! number of events.
//!
//! One module per section of the page, in page order: [`facts`] (and every warning),
//! [`findings`] (each drawn by [`timeline`]), [`causes`], [`latency`] (with [`histogram`]s),
//! [`irq`], [`wq`].

mod analyses;
mod causes;
mod facts;
mod findings;
mod histogram;
mod irq;
mod latency;
mod palette;
mod style;
mod svg;
mod tables;
mod timeline;
mod wq;

pub use analyses::{Analyses, ReportOptions};
pub use palette::{colour, css};

use crate::error::Result;
use maud::{html, DOCTYPE};
use rtsleuth_analyze::document::Document;

/// The whole page.
pub fn render(a: &Analyses) -> Result<String> {
    let source = a.explain.json["trace"]["source"]
        .as_str()
        .unwrap_or("trace");
    let traced = !a.is_findings_file();
    let page = html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                title { "rtsleuth report: " (source) }
                style { (maud::PreEscaped(style::CSS)) }
            }
            body {
                header {
                    h1 { "Why was it late? " code { (source) } }
                    nav {
                        a href="#findings" { "worst wake-ups" } " · "
                        a href="#causes" { "causes" }
                        @if traced {
                            " · " a href="#latency" { "latency" } " · " a href="#irq" { "interrupts" }
                        }
                        @if a.wq.json["functions"].as_array().is_some_and(|f| !f.is_empty()) {
                            " · " a href="#wq" { "workqueues" }
                        }
                    }
                }
                (facts::facts(a))
                (findings::findings(a)?)
                (causes::causes(a)?)
                @if traced {
                    (latency::latency(a)?)
                    (irq::irq(a))
                    (wq::wq(a))
                }
                footer { "rtsleuth report. The same numbers: rtsleuth explain | latency | irq | wq TRACE --json." }
            }
        }
    };
    Ok(page.into_string())
}

impl Analyses {
    /// Whether the page is of a soak's findings file rather than a trace: it has explained
    /// spikes and nothing else.
    pub fn is_findings_file(&self) -> bool {
        self.explain.json["trace"]["format"] == rtsleuth_analyze::soak::SCHEMA
    }

    /// Every analysis's warnings once, in page order: the trace's own (which every document
    /// repeats) first.
    pub fn warnings(&self) -> Vec<String> {
        let mut all: Vec<String> = Vec::new();
        for doc in self.documents() {
            for w in &doc.warnings {
                if !all.contains(w) {
                    all.push(w.clone());
                }
            }
        }
        all
    }

    fn documents(&self) -> [&Document; 4] {
        [&self.explain, &self.latency, &self.irq, &self.wq]
    }
}
