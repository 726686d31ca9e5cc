//! The set's report (text, or the `rtsleuth.set/1` document), written while the set is read:
//! each trace's own report goes out as soon as its turn comes ([`super::analyse_all`] hands
//! outcomes over in path order), then what the whole set says. Only a line per skipped or
//! failed file is kept until the end, so a set of thousands of traces costs no more memory
//! than the traces in flight.
//!
//! The JSON document has the keys `schema`, `command`, `traces` (one object per trace read:
//! `path`, `hash`, `document`), `skipped`, `failed` and `set`, in that order, so that the
//! traces can stream before the parts only known at the end.

use super::run::{Item, Outcome};
use crate::report::{write_block, Block, Document};
use serde_json::{json, Value};
use std::io::{self, Write};

/// What a command says about the whole set: its part of the JSON (`set`) and its text.
#[derive(Debug, Default)]
pub struct SetSection {
    pub json: Value,
    pub blocks: Vec<Block>,
}

/// The report of a set being read, written to `out` item by item.
pub struct SetReport<W: Write> {
    out: W,
    command: &'static str,
    json: bool,
    /// Whether anything has been written yet (the JSON prelude, or a text block).
    started: bool,
    read: usize,
    not_traces: usize,
    /// Traces of a format the command does not analyse: how many, and the first reason.
    other: usize,
    first_other: Option<String>,
    skipped: Vec<Value>,
    failed: Vec<(String, String)>,
}

impl<W: Write> SetReport<W> {
    pub fn new(out: W, command: &'static str, json: bool) -> Self {
        SetReport {
            out,
            command,
            json,
            started: false,
            read: 0,
            not_traces: 0,
            other: 0,
            first_other: None,
            skipped: Vec::new(),
            failed: Vec::new(),
        }
    }

    /// One file of the set, in path order: a trace's report is written now (with its own
    /// warnings inside its section), anything else is remembered for the end.
    pub fn item<T>(&mut self, item: &Item<T>, doc: impl Fn(&T) -> &Document) -> io::Result<()> {
        match &item.outcome {
            Outcome::Read(t) => self.trace(&item.path, t.identity.hash.as_deref(), doc(&t.result)),
            Outcome::NotATrace(why) => {
                self.not_traces += 1;
                self.skipped
                    .push(json!({"path": item.path, "reason": "not_a_trace", "why": why}));
                Ok(())
            }
            Outcome::OtherCommand(why) => {
                self.other += 1;
                self.first_other.get_or_insert_with(|| why.clone());
                self.skipped
                    .push(json!({"path": item.path, "reason": "other_command", "why": why}));
                Ok(())
            }
            Outcome::Failed(error) => {
                self.failed.push((item.path.clone(), error.clone()));
                Ok(())
            }
        }
    }

    fn trace(&mut self, path: &str, hash: Option<&str>, d: &Document) -> io::Result<()> {
        if self.json {
            let sep = if self.started {
                ","
            } else {
                let prelude = json!({"schema": "rtsleuth.set/1", "command": self.command});
                write!(
                    self.out,
                    "{{\n  \"schema\": {},\n  \"command\": {},\n  \"traces\": [",
                    prelude["schema"], prelude["command"]
                )?;
                ""
            };
            let trace = json!({"path": path, "hash": hash, "document": d.json});
            write!(self.out, "{sep}\n    {}", indented(&trace, 4)?)?;
            self.started = true;
        } else {
            self.block(&Block::Lines(format!("== {path} =="), Vec::new()))?;
            for b in &d.blocks {
                self.block(b)?;
            }
            if !d.warnings.is_empty() {
                let lines = d.warnings.iter().map(|w| format!("warning: {w}")).collect();
                self.block(&Block::Lines(String::new(), lines))?;
            }
        }
        self.read += 1;
        self.out.flush()
    }

    fn block(&mut self, b: &Block) -> io::Result<()> {
        if self.started {
            writeln!(self.out)?;
        }
        self.started = true;
        write_block(&mut self.out, b)
    }

    /// How many traces were read so far.
    pub fn traces_read(&self) -> usize {
        self.read
    }

    /// The files that failed so far: path and error.
    pub fn failed(&self) -> &[(String, String)] {
        &self.failed
    }

    /// Writes what the whole set says and returns the set's warnings (its failures). Called
    /// with no trace read, it writes nothing: the caller reports that instead.
    pub fn finish(mut self, set: SetSection) -> io::Result<Vec<String>> {
        let warnings: Vec<String> = self.failed.iter().map(|(_, e)| e.clone()).collect();
        if self.read == 0 {
            return Ok(warnings);
        }
        let failed: Vec<Value> = self
            .failed
            .iter()
            .map(|(path, error)| json!({"path": path, "error": error}))
            .collect();
        if self.json {
            writeln!(
                self.out,
                "\n  ],\n  \"skipped\": {},\n  \"failed\": {},\n  \"set\": {}\n}}",
                indented(&Value::from(std::mem::take(&mut self.skipped)), 2)?,
                indented(&Value::from(failed), 2)?,
                indented(&set.json, 2)?
            )?;
        } else {
            let read = self.read;
            self.block(&Block::Lines(
                format!("== whole set: {read} traces =="),
                Vec::new(),
            ))?;
            for b in &set.blocks {
                self.block(b)?;
            }
            let mut summary = vec![format!(
                "{read} traces read, {} files skipped that are not traces, {} traces of a format `{}` does not analyse, {} failed",
                self.not_traces,
                self.other,
                self.command,
                self.failed.len()
            )];
            if let Some(first) = &self.first_other {
                summary.push(format!("not analysed, e.g.: {first}"));
            }
            self.block(&Block::Lines(String::new(), summary))?;
            for w in &warnings {
                writeln!(self.out, "warning: {w}")?;
            }
        }
        self.out.flush()?;
        Ok(warnings)
    }
}

/// `v` pretty-printed as it reads nested `indent` spaces deep (its first line is not indented;
/// JSON strings hold no raw newline, so every newline is a line of the layout).
fn indented(v: &Value, indent: usize) -> io::Result<String> {
    let text = serde_json::to_string_pretty(v)?;
    Ok(text.replace('\n', &format!("\n{}", " ".repeat(indent))))
}
