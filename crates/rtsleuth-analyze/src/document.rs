//! What an analysis produces: a [`Document`], built once, holding the stable JSON and the
//! blocks of the readable report. Every output format (rtsleuth-render's exporters) is drawn
//! from the same document, so formats cannot drift apart in what they say. The number
//! formatting helpers live here because the blocks' cells are already formatted.

use rtsleuth_trace::event::ts_to_secs;
use rtsleuth_trace::read::TraceInfo;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Align {
    Left,
    Right,
}

/// A table with a header row; cells are already formatted.
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    pub title: String,
    pub columns: Vec<(String, Align)>,
    pub rows: Vec<Vec<String>>,
}

impl Table {
    pub fn new(title: &str, columns: &[(&str, Align)]) -> Table {
        Table {
            title: title.to_string(),
            columns: columns.iter().map(|(n, a)| (n.to_string(), *a)).collect(),
            rows: Vec::new(),
        }
    }
}

/// One part of a human-readable report.
#[derive(Debug, Clone, PartialEq)]
pub enum Block {
    /// Aligned `key: value` lines.
    Pairs(String, Vec<(String, String)>),
    Table(Table),
    /// Free lines (histogram bars, notes).
    Lines(String, Vec<String>),
}

/// An analysis result ready for any exporter.
#[derive(Debug, Clone)]
pub struct Document {
    /// The stable JSON document (with its `schema` field).
    pub json: serde_json::Value,
    pub blocks: Vec<Block>,
    /// What makes the numbers less than certain; printed after the text report.
    pub warnings: Vec<String>,
}

/// Adds the fields of the object `extra` to the object `into` (a document row made of a
/// distribution's figures and what it belongs to).
pub fn merge_json(into: &mut serde_json::Value, extra: serde_json::Value) {
    if let (Some(obj), serde_json::Value::Object(e)) = (into.as_object_mut(), extra) {
        obj.extend(e);
    }
}

/// The `trace` object every JSON document carries, as PRODUCT.md defines it.
pub fn trace_json(info: &TraceInfo) -> serde_json::Value {
    serde_json::json!({
        "source": info.source,
        "format": info.format,
        "events": info.events,
        "cpus": info.cpus,
        "start": info.first_ts.map(ts_to_secs),
        "end": info.last_ts.map(ts_to_secs),
        "lost_events": info.lost_events,
        "clock": info.clock,
        "clock_ns": info.clock_ns(),
    })
}

/// Formats microseconds for tables: whole numbers stay whole, others get up to 3 decimals.
pub fn fmt_us(us: f64) -> String {
    if us.fract() == 0.0 {
        format!("{us:.0}")
    } else {
        let s = format!("{us:.3}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

/// Microseconds to the nanosecond: what was computed from nanoseconds or from the JSON's
/// seconds carries float noise below it.
pub fn round3(us: f64) -> f64 {
    (us * 1000.0).round() / 1000.0
}

/// Formats a trace timestamp in seconds with microsecond precision, as ftrace prints it.
pub fn fmt_ts(ts: u64) -> String {
    format!("{}.{:06}", ts / 1_000_000_000, (ts % 1_000_000_000) / 1000)
}

/// Formats a trace timestamp in seconds to the nanosecond, as `trace-cmd report -N` prints it
/// and `explain --due` reads it.
pub fn fmt_ts_nanos(ts: u64) -> String {
    format!("{}.{:09}", ts / 1_000_000_000, ts % 1_000_000_000)
}

#[cfg(test)]
mod tests {
    use super::fmt_ts_nanos;

    #[test]
    fn nanosecond_times_keep_every_nanosecond() {
        assert_eq!(fmt_ts_nanos(1_000_000_000_007), "1000.000000007");
        assert_eq!(fmt_ts_nanos(999), "0.000000999");
    }
}
