use crate::Exporter;
use rtsleuth_analyze::document::{Block, Document};
use std::io;

/// The document's first table as CSV (`--csv`), for spreadsheets and scripts.
pub struct CsvExporter;

impl Exporter for CsvExporter {
    fn export(&self, doc: &Document, out: &mut dyn io::Write) -> io::Result<()> {
        let Some(table) = doc.blocks.iter().find_map(|b| match b {
            Block::Table(t) => Some(t),
            _ => None,
        }) else {
            return Ok(());
        };
        let header: Vec<_> = table.columns.iter().map(|(n, _)| field(n)).collect();
        writeln!(out, "{}", header.join(","))?;
        for row in &table.rows {
            let cells: Vec<_> = row.iter().map(|c| field(c)).collect();
            writeln!(out, "{}", cells.join(","))?;
        }
        Ok(())
    }
}

/// Quotes a field when it holds a comma, a quote or a line break (RFC 4180).
fn field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtsleuth_analyze::document::{Align, Table};

    #[test]
    fn quoting() {
        let mut t = Table::new("t", &[("Task", Align::Left), ("Max us", Align::Right)]);
        t.rows
            .push(vec!["Web Content, \"main\"".into(), "12.5".into()]);
        let doc = Document {
            json: serde_json::Value::Null,
            blocks: vec![Block::Table(t)],
            warnings: vec![],
        };
        let mut out = Vec::new();
        CsvExporter.export(&doc, &mut out).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "Task,Max us\n\"Web Content, \"\"main\"\"\",12.5\n"
        );
    }
}
