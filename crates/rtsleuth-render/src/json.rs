use crate::Exporter;
use rtsleuth_analyze::document::Document;
use std::io;

/// The stable machine-readable form (`--json`).
pub struct JsonExporter;

impl Exporter for JsonExporter {
    fn export(&self, doc: &Document, out: &mut dyn io::Write) -> io::Result<()> {
        serde_json::to_writer_pretty(&mut *out, &doc.json)?;
        writeln!(out)
    }
}
