//! Charts are drawn by plotters into an in-memory SVG string and inlined in the page, so the
//! report needs no script, no font file and no network to show them.

use crate::error::{Error, Result};
use maud::{Markup, PreEscaped};
use plotters::coord::Shift;
use plotters::prelude::*;

/// The drawing area a chart function draws on.
pub type Area<'a> = DrawingArea<SVGBackend<'a>, Shift>;

/// What a chart function returns: plotters' own error, turned into [`Error`] by [`draw`].
pub type Drawn = std::result::Result<(), Box<dyn std::error::Error>>;

/// Draws `width` x `height` pixels with `paint` and returns the SVG element. `what` names the
/// chart in the error.
pub fn draw(
    what: &str,
    (width, height): (u32, u32),
    paint: impl FnOnce(&Area) -> Drawn,
) -> Result<Markup> {
    let mut svg = String::new();
    {
        let area = SVGBackend::with_string(&mut svg, (width, height)).into_drawing_area();
        area.fill(&WHITE).map_err(|e| Error::chart(what, e))?;
        paint(&area).map_err(|e| Error::chart(what, e))?;
        area.present().map_err(|e| Error::chart(what, e))?;
    }
    Ok(PreEscaped(svg))
}

/// The text style of every label, `px` pixels high: the browser's sans-serif, so no font is
/// embedded. (plotters writes an SVG font size 1/1.24 of the one it is given.)
pub fn font(px: u32) -> TextStyle<'static> {
    ("sans-serif", f64::from(px) * 1.24)
        .into_font()
        .color(&BLACK)
}
