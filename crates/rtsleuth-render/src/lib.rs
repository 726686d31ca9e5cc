//! rtsleuth-render: every output format of rtsleuth, drawn from the analyses' documents and
//! events. One [`Exporter`] trait covers the report formats (text, JSON, CSV); the HTML report
//! ([`html`]), the Perfetto export ([`export`]), a set's report ([`SetReport`]) and its Parquet
//! tables ([`parquet`]) sit beside them. Nothing below this crate knows how results look.

mod csv;
pub mod error;
pub mod export;
pub mod html;
mod json;
pub mod parquet;
mod set_report;
mod text;

pub use csv::CsvExporter;
pub use error::{Error, Result};
pub use json::JsonExporter;
pub use set_report::SetReport;
pub use text::{write_block, TextExporter};

use rtsleuth_analyze::document::Document;
use std::io;

/// One output format.
pub trait Exporter {
    fn export(&self, doc: &Document, out: &mut dyn io::Write) -> io::Result<()>;
}
