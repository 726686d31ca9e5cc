//! One finding drawn: the victim's ladder (due, wake-up, switched in) across the top, and
//! under it one lane per CPU the explanation crossed, tiled with the finding's `timeline`
//! stretches in their class colours. A stretch wide enough to hold its culprit's name carries
//! it; every stretch is also listed in the table beside the drawing.

use super::palette::kind_colour;
use super::svg::{self, font, Drawn};
use crate::error::Result;
use maud::Markup;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use serde_json::Value;

const WIDTH: u32 = 960;
const LANE_PX: u32 = 34;
/// Room above the lanes for the ladder's three labels, one row each.
const LADDER_PX: u32 = 48;
/// A culprit's name is written in its stretch only if the stretch is this wide (pixels) per
/// character; narrower ones would overflow into their neighbours.
const PX_PER_CHAR: i32 = 7;

/// One stretch of a finding's `timeline`, in microseconds from the start of the drawing.
struct Stretch<'a> {
    lane: usize,
    from_us: f64,
    to_us: f64,
    kind: &'a str,
    label: &'a str,
}

/// The drawing of one `rtsleuth.explain/1` finding.
pub fn timeline(f: &Value) -> Result<Markup> {
    let empty = Vec::new();
    let stretches = f["timeline"].as_array().unwrap_or(&empty);
    let run = f["run_ts"].as_f64().unwrap_or(0.0);
    let first = stretches
        .first()
        .and_then(|s| s["start_ts"].as_f64())
        .unwrap_or(run);
    let t0 = f["expected_ts"].as_f64().unwrap_or(first).min(first);
    let us = |ts: f64| (ts - t0) * 1e6;
    let mut lanes: Vec<i64> = Vec::new();
    let drawn: Vec<Stretch> = stretches
        .iter()
        .map(|s| {
            let cpu = s["cpu"].as_i64().unwrap_or(-1);
            let lane = lanes.iter().position(|c| *c == cpu).unwrap_or_else(|| {
                lanes.push(cpu);
                lanes.len() - 1
            });
            Stretch {
                lane,
                from_us: us(s["start_ts"].as_f64().unwrap_or(t0)),
                to_us: us(s["end_ts"].as_f64().unwrap_or(t0)),
                kind: s["kind"].as_str().unwrap_or("unknown"),
                label: s["culprit"].as_str().or(s["kind"].as_str()).unwrap_or(""),
            }
        })
        .collect();
    let n = lanes.len().max(1);
    let end = us(run).max(f64::MIN_POSITIVE);
    let ladder: Vec<(&str, f64)> = [
        ("due", f["expected_ts"].as_f64()),
        ("wake-up", f["wakeup_ts"].as_f64()),
        ("switched in", Some(run)),
    ]
    .into_iter()
    .filter_map(|(name, ts)| Some((name, us(ts?))))
    .collect();
    let height = LADDER_PX + LANE_PX * n as u32 + 44;
    svg::draw("a finding's timeline", (WIDTH, height), |area| -> Drawn {
        let mut chart = ChartBuilder::on(area)
            .margin(8)
            .margin_top(LADDER_PX)
            .x_label_area_size(34)
            .y_label_area_size(56)
            .build_cartesian_2d(0.0..end, 0.0..n as f64)?;
        let lane_names = |y: &f64| {
            let lane = n - 1 - (*y as usize).min(n - 1);
            match lanes.get(lane) {
                Some(cpu) if y.fract() == 0.5 => format!("CPU{cpu}"),
                _ => String::new(),
            }
        };
        chart
            .configure_mesh()
            .light_line_style(WHITE)
            .disable_y_mesh()
            .y_labels(2 * n + 1)
            .y_label_formatter(&lane_names)
            .x_label_formatter(&|x| {
                rtsleuth_analyze::document::fmt_us(rtsleuth_analyze::document::round3(*x))
            })
            .x_desc("us since the task was due (or the first explained instant)")
            .label_style(font(12))
            .axis_desc_style(font(12))
            .draw()?;
        // Lane i is drawn top-down: the first CPU of the timeline on top.
        let y = |lane: usize| (n - 1 - lane) as f64;
        chart.draw_series(drawn.iter().map(|s| {
            Rectangle::new(
                [(s.from_us, y(s.lane) + 0.15), (s.to_us, y(s.lane) + 0.85)],
                kind_colour(s.kind).filled(),
            )
        }))?;
        for s in &drawn {
            let (x0, yc) = chart.backend_coord(&(s.from_us, y(s.lane) + 0.5));
            let (x1, _) = chart.backend_coord(&(s.to_us, y(s.lane) + 0.5));
            if x1 - x0 >= PX_PER_CHAR * s.label.chars().count() as i32 + 8 {
                let ink = if s.kind == "unknown" || s.kind == "kernel_path" {
                    BLACK
                } else {
                    WHITE
                };
                area.draw(&Text::new(
                    s.label.to_string(),
                    ((x0 + x1) / 2, yc),
                    font(11)
                        .color(&ink)
                        .pos(Pos::new(HPos::Center, VPos::Center)),
                ))?;
            }
        }
        for (row, (name, x)) in ladder.iter().enumerate() {
            chart.draw_series([PathElement::new(
                [(*x, 0.0), (*x, n as f64)],
                BLACK.stroke_width(2),
            )])?;
            let (px, py) = chart.backend_coord(&(*x, n as f64));
            let anchor = if px > WIDTH as i32 / 2 {
                HPos::Right
            } else {
                HPos::Left
            };
            area.draw(&Text::new(
                format!(
                    "{name} {}",
                    rtsleuth_analyze::document::fmt_us(rtsleuth_analyze::document::round3(*x))
                ),
                (px, py - LADDER_PX as i32 + 4 + 14 * row as i32),
                font(12).pos(Pos::new(anchor, VPos::Top)),
            ))?;
        }
        Ok(())
    })
}
