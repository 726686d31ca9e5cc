//! What `rtsleuth record` prints: where the trace went and, per CPU, what the kernel lost.

use super::Recording;
use rtsleuth_analyze::document::{Align, Block, Document, Table};
use serde_json::json;

impl Recording {
    /// The report: text blocks and the `rtsleuth.record/1` JSON.
    pub fn document(&self) -> Document {
        let capture = &self.capture;
        let mut table = Table::new(
            "per CPU",
            &[
                ("cpu", Align::Right),
                ("events", Align::Right),
                ("pages", Align::Right),
                ("MB", Align::Right),
                ("overrun", Align::Right),
                ("dropped", Align::Right),
            ],
        );
        let mut cpus = Vec::new();
        for c in &capture.cpus {
            let mb = c.bytes(capture.page_size) as f64 / 1e6;
            table.rows.push(vec![
                c.cpu.to_string(),
                c.stats.read_events.to_string(),
                c.pages.to_string(),
                format!("{mb:.1}"),
                c.stats.overrun.to_string(),
                c.stats.dropped_events.to_string(),
            ]);
            cpus.push(json!({
                "cpu": c.cpu, "events": c.stats.read_events, "pages": c.pages,
                "bytes": c.bytes(capture.page_size), "overrun": c.stats.overrun,
                "dropped": c.stats.dropped_events, "lost_events": c.stats.lost(),
            }));
        }
        let out = self.out.display().to_string();
        let summary = vec![
            (
                "file".to_owned(),
                format!(
                    "{out} (trace.dat v6, {:.1} MB)",
                    self.file_bytes as f64 / 1e6
                ),
            ),
            ("events".to_owned(), capture.read_events().to_string()),
            ("lost events".to_owned(), capture.lost_events().to_string()),
            (
                "duration".to_owned(),
                format!("{:.3} s ({})", self.seconds, self.ended),
            ),
            ("recorded".to_owned(), self.events.join(" ")),
        ];
        let mut warnings = self.notes.clone();
        if capture.lost_events() > 0 {
            warnings.push(format!(
                "the kernel lost {} events (buffer overrun or dropped): raise --buffer-kb or record fewer events",
                capture.lost_events()
            ));
        }
        Document {
            json: json!({
                "schema": "rtsleuth.record/1",
                "file": out,
                "format": "trace.dat v6",
                "bytes": self.file_bytes,
                "seconds": self.seconds,
                "ended": self.ended,
                "events": capture.read_events(),
                "lost_events": capture.lost_events(),
                "recorded": self.events,
                "cpus": cpus,
                "warnings": warnings,
            }),
            blocks: vec![
                Block::Pairs("recorded".to_owned(), summary),
                Block::Table(table),
            ],
            warnings,
        }
    }
}
