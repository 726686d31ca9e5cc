//! Where the lateness went over all spikes: `explain`'s aggregate (every wake-up at least
//! `--threshold` late, or the findings shown), charted per class and per culprit, then its
//! table as `explain` prints it.

use super::palette::kind_colour;
use super::svg::{self, font, Drawn};
use super::tables::block;
use super::Analyses;
use crate::error::Result;
use maud::{html, Markup};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use rtsleuth_analyze::document::{fmt_us, Block};
use serde_json::Value;

/// Culprit bars drawn at most; the table below lists every one.
const CULPRITS: usize = 15;
const BAR_PX: u32 = 24;
const LABEL_PX: u32 = 300;

/// One bar: its label, the class that colours it, the total and, for a culprit, the number
/// of spikes it was in (a class has none: one spike may hold several of its culprits).
struct Bar {
    label: String,
    kind: String,
    total_us: f64,
    spikes: Option<u64>,
}

pub fn causes(a: &Analyses) -> Result<Markup> {
    let empty = Vec::new();
    let rows = a.explain.json["aggregate"].as_array().unwrap_or(&empty);
    let table = a
        .explain
        .blocks
        .iter()
        .rev()
        .find(|b| matches!(b, Block::Table(_)));
    let by_culprit: Vec<Bar> = rows
        .iter()
        .take(CULPRITS)
        .map(|r| {
            let kind = r["kind"].as_str().unwrap_or("unknown");
            Bar {
                label: r["culprit"]
                    .as_str()
                    .map_or_else(|| format!("{kind} (no culprit)"), str::to_string),
                kind: kind.to_string(),
                total_us: r["total_us"].as_f64().unwrap_or(0.0),
                spikes: r["spikes"].as_u64(),
            }
        })
        .collect();
    let by_class = per_class(rows);
    let charts = if rows.is_empty() {
        None
    } else {
        Some((
            bars("the time per class", &by_class)?,
            bars("the time per culprit", &by_culprit)?,
        ))
    };
    Ok(html! {
        section #causes {
            h2 { "Causes over every spike" }
            @match &charts {
                None => p { "No late wake-up to aggregate." },
                Some((class, culprit)) => {
                    h3 { "Time per class" } figure.bars #by-class { (class) }
                    h3 { "Time per culprit" @if rows.len() > CULPRITS { " (the " (CULPRITS) " largest of " (rows.len()) ")" } }
                    figure.bars #by-culprit { (culprit) }
                }
            }
            @if let Some(t) = table { (block(t)) }
        }
    })
}

/// The aggregate summed per class, largest first.
fn per_class(rows: &[Value]) -> Vec<Bar> {
    let mut classes: Vec<Bar> = Vec::new();
    for r in rows {
        let kind = r["kind"].as_str().unwrap_or("unknown");
        let i = classes
            .iter()
            .position(|c| c.kind == kind)
            .unwrap_or_else(|| {
                classes.push(Bar {
                    label: kind.to_string(),
                    kind: kind.to_string(),
                    total_us: 0.0,
                    spikes: None,
                });
                classes.len() - 1
            });
        classes[i].total_us += r["total_us"].as_f64().unwrap_or(0.0);
    }
    classes.sort_by(|a, b| b.total_us.total_cmp(&a.total_us));
    classes
}

/// Horizontal bars, labelled on the left, each with its total (us) at its end.
fn bars(what: &str, bars: &[Bar]) -> Result<Markup> {
    let n = bars.len().max(1);
    let max = bars
        .iter()
        .map(|b| b.total_us)
        .fold(0.0, f64::max)
        .max(f64::MIN_POSITIVE);
    let size = (960, BAR_PX * n as u32 + 50);
    svg::draw(what, size, |area| -> Drawn {
        let mut chart = ChartBuilder::on(area)
            .margin(8)
            .margin_right(130)
            .x_label_area_size(34)
            .y_label_area_size(LABEL_PX)
            .build_cartesian_2d(0.0..max, 0.0..n as f64)?;
        chart
            .configure_mesh()
            .light_line_style(WHITE)
            .disable_y_mesh()
            .disable_y_axis()
            .x_label_formatter(&|x| fmt_us(rtsleuth_analyze::document::round3(*x)))
            .x_desc("us")
            .label_style(font(11))
            .axis_desc_style(font(12))
            .draw()?;
        let y = |i: usize| (n - 1 - i) as f64;
        chart.draw_series(bars.iter().enumerate().map(|(i, b)| {
            Rectangle::new(
                [(0.0, y(i) + 0.15), (b.total_us, y(i) + 0.85)],
                kind_colour(&b.kind).filled(),
            )
        }))?;
        for (i, b) in bars.iter().enumerate() {
            let (x0, yc) = chart.backend_coord(&(0.0, y(i) + 0.5));
            let (x1, _) = chart.backend_coord(&(b.total_us, y(i) + 0.5));
            area.draw(&Text::new(
                b.label.clone(),
                (x0 - 6, yc),
                font(12).pos(Pos::new(HPos::Right, VPos::Center)),
            ))?;
            let spikes = match b.spikes {
                Some(1) => " (1 spike)".to_string(),
                Some(n) => format!(" ({n} spikes)"),
                None => String::new(),
            };
            area.draw(&Text::new(
                format!(
                    "{} us{spikes}",
                    fmt_us(rtsleuth_analyze::document::round3(b.total_us))
                ),
                (x1 + 4, yc),
                font(11).pos(Pos::new(HPos::Left, VPos::Center)),
            ))?;
        }
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The class totals are the sums of the culprits' rows.
    #[test]
    fn classes_sum_their_culprits() {
        let rows = serde_json::json!([
            {"kind": "hardirq", "culprit": "a", "spikes": 1, "total_us": 10.5, "max_us": 10.5},
            {"kind": "kernel_path", "culprit": null, "spikes": 3, "total_us": 7.0, "max_us": 3.0},
            {"kind": "hardirq", "culprit": "b", "spikes": 2, "total_us": 4.25, "max_us": 4.0},
        ]);
        let classes = per_class(rows.as_array().unwrap());
        let got: Vec<(&str, f64)> = classes
            .iter()
            .map(|c| (c.kind.as_str(), c.total_us))
            .collect();
        assert_eq!(got, vec![("hardirq", 14.75), ("kernel_path", 7.0)]);
        let svg = bars("t", &classes).unwrap().into_string();
        assert!(svg.contains("14.75 us\n"), "{svg}");
    }
}
