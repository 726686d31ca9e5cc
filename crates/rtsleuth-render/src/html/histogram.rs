//! One task's wake-up latency histogram, drawn as cyclictest users plot theirs: the count on a
//! log axis, so that the one wake-up in ten thousand that matters is a visible bar next to the
//! thousands that do not. The buckets are `latency`'s power-of-two microsecond buckets, so the
//! latency axis is logarithmic too: a 30 ms outlier and a 20 us median fit on one chart.
//! p99, p99.9 and the maximum are marked where they fall.

use super::svg::{self, font, Drawn};
use crate::error::Result;
use maud::Markup;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use serde_json::Value;

const SIZE: (u32, u32) = (620, 260);
const BARS: RGBColor = RGBColor(0x00, 0x72, 0xB2);

/// The marks: name, JSON field of the task row, colour.
const MARKS: [(&str, &str, RGBColor); 3] = [
    ("p99", "p99_us", RGBColor(0xE6, 0x9F, 0x00)),
    ("p99.9", "p999_us", RGBColor(0xD5, 0x5E, 0x00)),
    ("max", "max_us", RGBColor(0x00, 0x00, 0x00)),
];

/// The chart of one row of `rtsleuth.latency/1`'s `tasks` (with its `histogram`), or `None`
/// when the task has no wake-up.
pub fn task_histogram(task: &Value) -> Result<Option<Markup>> {
    let buckets: Vec<(f64, f64)> = task["histogram"]
        .as_array()
        .map(|b| {
            b.iter()
                .filter_map(|b| Some((b["lt_us"].as_f64()?, b["count"].as_f64()?)))
                .collect()
        })
        .unwrap_or_default();
    let (Some(first), Some(last)) = (buckets.first(), buckets.last()) else {
        return Ok(None);
    };
    // x is log2(us): the bucket below 2^k us spans [k-1, k).
    let (lo, hi) = (first.0.log2() - 1.0, last.0.log2());
    let top = buckets.iter().map(|b| b.1).fold(1.0, f64::max) * 4.0;
    let marks: Vec<(&str, f64, RGBColor)> = MARKS
        .iter()
        .filter_map(|(name, field, c)| Some((*name, task[*field].as_f64()?, *c)))
        .collect();
    let name = format!("the histogram of {}", task["comm"]);
    svg::draw(&name, SIZE, |area| -> Drawn {
        let mut chart = ChartBuilder::on(area)
            .margin(8)
            .margin_top(40)
            .x_label_area_size(36)
            .y_label_area_size(52)
            .build_cartesian_2d(lo..hi, (0.5..top).log_scale())?;
        chart
            .configure_mesh()
            .light_line_style(WHITE)
            .disable_x_mesh()
            .x_labels((hi - lo) as usize + 1)
            .x_label_formatter(&|x| bucket_label(*x))
            .y_label_formatter(&|y| format!("{y:.0}"))
            .x_desc("wake-up latency, us (log2 buckets)")
            .y_desc("wake-ups (log)")
            .label_style(font(11))
            .axis_desc_style(font(12))
            .draw()?;
        chart.draw_series(buckets.iter().map(|&(lt, n)| {
            let k = lt.log2();
            Rectangle::new([(k - 1.0, 0.5), (k, n)], BARS.mix(0.8).filled())
        }))?;
        for (row, (label, us, colour)) in marks.iter().enumerate() {
            let x = us.log2().clamp(lo, hi);
            chart.draw_series([PathElement::new(
                [(x, 0.5), (x, top)],
                colour.stroke_width(2),
            )])?;
            let (px, py) = chart.backend_coord(&(x, top));
            // Right of the mark in the left half, left of it in the right half: never clipped.
            let (dx, anchor) = if px > SIZE.0 as i32 / 2 {
                (-3, HPos::Right)
            } else {
                (3, HPos::Left)
            };
            area.draw(&Text::new(
                format!("{label} {} us", rtsleuth_analyze::document::fmt_us(*us)),
                (px + dx, py - 38 + 12 * row as i32),
                font(11).color(colour).pos(Pos::new(anchor, VPos::Top)),
            ))?;
        }
        Ok(())
    })
    .map(Some)
}

/// The axis label at log2(us) = `x`: the bucket bound in us (`<1` for the sub-microsecond one).
fn bucket_label(x: f64) -> String {
    if x.fract() != 0.0 {
        return String::new();
    }
    let us = x.exp2();
    if us < 1.0 {
        "0".into()
    } else if us >= 1000.0 {
        format!("{}k", us / 1000.0)
    } else {
        format!("{us}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_are_the_bucket_bounds() {
        assert_eq!(bucket_label(0.0), "1");
        assert_eq!(bucket_label(5.0), "32");
        assert_eq!(bucket_label(11.0), "2.048k");
        assert_eq!(bucket_label(-1.0), "0");
        assert_eq!(bucket_label(2.5), "");
    }

    #[test]
    fn a_task_without_wake_ups_has_no_chart() {
        let task = serde_json::json!({"comm": "t", "histogram": []});
        assert!(task_histogram(&task).unwrap().is_none());
    }

    /// The marks are labelled with the row's numbers.
    #[test]
    fn marks_carry_the_percentiles() {
        let task = serde_json::json!({
            "comm": "ct", "p99_us": 54.0, "p999_us": 192.0, "max_us": 30446.955,
            "histogram": [{"lt_us": 32, "count": 500}, {"lt_us": 64, "count": 400},
                          {"lt_us": 256, "count": 1}, {"lt_us": 32768, "count": 1}],
        });
        let svg = task_histogram(&task).unwrap().unwrap().into_string();
        for label in ["p99 54 us", "p99.9 192 us", "max 30446.955 us"] {
            assert!(svg.contains(label), "{label} missing in {svg}");
        }
    }
}
