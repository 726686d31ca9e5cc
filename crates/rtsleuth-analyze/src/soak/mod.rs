//! A soak's findings file (`measure --explain-every`'s `findings.jsonl`), read back for
//! `report` and `diff`: one `rtsleuth.spike/1` object per line, each a measured spike and the
//! `explain` finding of its capture.
//!
//! [`document`] turns the file into a document shaped like `explain --threshold --json`
//! (findings worst first, per-task and overall aggregates, the threshold), so the HTML page and
//! the comparison read it as they read explain's own. Lines are read one at a time, each at
//! most [`MAX_LINE`] bytes; what is kept is the worst `top` findings, one aggregate row per
//! task and culprit, and the distinct warnings up to [`MAX_WARNINGS`].

mod summary;

pub use summary::Summary;

use crate::document::Document;
use rtsleuth_trace::error::{Error, Result};
use serde_json::Value;
use std::fs::File;
use std::io::{BufRead, BufReader, Read};

/// The schema of a line.
pub const SCHEMA: &str = "rtsleuth.spike/1";

/// The longest line accepted: a finding with hundreds of stretches is well under this.
pub const MAX_LINE: usize = 4 << 20;

/// Distinct warnings kept; more are counted.
pub const MAX_WARNINGS: usize = 32;

/// Whether `path` is a findings file: its first line is an `rtsleuth.spike/1` object.
pub fn is_findings_file(path: &str) -> Result<bool> {
    let Ok(file) = File::open(path) else {
        return Ok(false);
    };
    let mut lines = Lines::new(path, BufReader::new(file));
    Ok(match lines.next_line() {
        Ok(Some(first)) => schema_of(&first) == Some(SCHEMA),
        _ => false,
    })
}

/// The explain-shaped document of the findings file at `path`, with its `top` worst findings.
pub fn document(path: &str, top: usize) -> Result<Document> {
    let file = File::open(path).map_err(|cause| Error::Io {
        path: path.to_string(),
        cause,
    })?;
    let mut lines = Lines::new(path, BufReader::new(file));
    let mut summary = Summary::new(top);
    while let Some(line) = lines.next_line()? {
        let bad = |why: String| Error::SpikeLine {
            path: path.to_string(),
            line: lines.number,
            why,
        };
        if schema_of(&line) != Some(SCHEMA) {
            return Err(bad(format!(
                "not an {SCHEMA} line (measure --explain-every writes them)"
            )));
        }
        summary.add(&line).map_err(bad)?;
    }
    if summary.is_empty() {
        return Err(Error::Empty {
            path: path.to_string(),
        });
    }
    Ok(summary.document(path))
}

fn schema_of(v: &Value) -> Option<&str> {
    v.get("schema").and_then(Value::as_str)
}

/// The file's lines as JSON, one bounded line at a time.
struct Lines<'a, R> {
    path: &'a str,
    reader: R,
    buf: Vec<u8>,
    /// The current line's number, from 1.
    number: u64,
}

impl<'a, R: BufRead> Lines<'a, R> {
    fn new(path: &'a str, reader: R) -> Self {
        Lines {
            path,
            reader,
            buf: Vec::new(),
            number: 0,
        }
    }

    /// The next non-blank line, parsed; `None` at the end.
    fn next_line(&mut self) -> Result<Option<Value>> {
        loop {
            self.buf.clear();
            self.number += 1;
            let n = (&mut self.reader)
                .take(MAX_LINE as u64 + 1)
                .read_until(b'\n', &mut self.buf)
                .map_err(|cause| Error::Io {
                    path: self.path.to_string(),
                    cause,
                })?;
            if n == 0 {
                return Ok(None);
            }
            let bad = |why: String| Error::SpikeLine {
                path: self.path.to_string(),
                line: self.number,
                why,
            };
            if n > MAX_LINE {
                return Err(bad(format!("longer than {MAX_LINE} bytes")));
            }
            if self.buf.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            return serde_json::from_slice(&self.buf)
                .map(Some)
                .map_err(|e| bad(format!("not JSON: {e}")));
        }
    }
}
