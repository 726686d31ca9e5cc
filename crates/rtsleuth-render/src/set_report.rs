//! The set's report (text, or the `rtsleuth.set/1` document), written while the set is read:
//! each trace's own report goes out as soon as its turn comes ([`rtsleuth_analyze::fleet::analyse_all`] hands
//! outcomes over in path order), then what the whole set says. Only a line per skipped or
//! failed file is kept until the end, so a set of thousands of traces costs no more memory
//! than the traces in flight.
//!
//! The JSON document has the keys `schema`, `command`, `traces` (one object per trace read:
//! `path`, `hash`, `document`), `skipped`, `failed` and `set`, in that order, so that the
//! traces can stream before the parts only known at the end.

use crate::text::write_block;
use rtsleuth_analyze::document::{Block, Document};
use rtsleuth_analyze::fleet::{Item, Outcome, SetSection};
use serde_json::{json, Value};
use std::io::{self, Write};

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
                write!(
                    self.out,
                    "{{\n  \"schema\": \"rtsleuth.set/1\",\n  \"command\": {},\n  \"traces\": [",
                    json!(self.command)
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

#[cfg(test)]
mod tests {
    use super::*;
    use rtsleuth_analyze::fleet::{Identity, Traced};
    use rtsleuth_trace::input::Format;
    use rtsleuth_trace::read::TraceInfo;
    use std::cell::RefCell;
    use std::rc::Rc;

    /// A writer whose bytes the test can look at while the report still holds it.
    #[derive(Clone, Default)]
    struct Shared(Rc<RefCell<Vec<u8>>>);

    impl Write for Shared {
        fn write(&mut self, b: &[u8]) -> io::Result<usize> {
            self.0.borrow_mut().extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    fn read(path: &str, n: u64) -> Item<Document> {
        let info = TraceInfo::new(path, Format::FtraceText, None);
        let doc = Document {
            json: json!({"schema": "x/1", "n": n}),
            blocks: vec![Block::Lines("numbers".into(), vec![n.to_string()])],
            warnings: vec![format!("warned {n}")],
        };
        Item {
            path: path.into(),
            outcome: Outcome::Read(Traced {
                identity: Identity::new(path, Some(format!("{n:016x}")), &info),
                result: doc,
            }),
        }
    }

    fn other(path: &str, outcome: Outcome<Document>) -> Item<Document> {
        Item {
            path: path.into(),
            outcome,
        }
    }

    fn items() -> Vec<Item<Document>> {
        vec![
            other("a.json", Outcome::NotATrace("a.json: not a trace".into())),
            read("b.txt", 1),
            other("c.dat", Outcome::Failed("c.dat: cut short".into())),
            read("d.txt", 2),
        ]
    }

    fn section() -> SetSection {
        SetSection {
            json: json!({"total": 3}),
            blocks: vec![Block::Lines("total".into(), vec!["3".into()])],
        }
    }

    /// Each trace is out as soon as it is handed over; the end completes one JSON document
    /// whose keys come in the documented order.
    #[test]
    fn json_streams_the_traces_and_ends_with_the_set() {
        let out = Shared::default();
        let mut report = SetReport::new(out.clone(), "latency", true);
        let mut lens = Vec::new();
        for item in items() {
            report.item(&item, |d| d).unwrap();
            lens.push(out.0.borrow().len());
        }
        assert_eq!(lens[0], 0, "nothing before the first trace");
        assert!(lens[1] > 0 && lens[2] == lens[1] && lens[3] > lens[2]);
        assert_eq!(report.finish(section()).unwrap(), ["c.dat: cut short"]);
        let text = String::from_utf8(out.0.take()).unwrap();
        let doc: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(
            doc,
            json!({
                "schema": "rtsleuth.set/1",
                "command": "latency",
                "traces": [
                    {"path": "b.txt", "hash": "0000000000000001", "document": {"schema": "x/1", "n": 1}},
                    {"path": "d.txt", "hash": "0000000000000002", "document": {"schema": "x/1", "n": 2}},
                ],
                "skipped": [{"path": "a.json", "reason": "not_a_trace", "why": "a.json: not a trace"}],
                "failed": [{"path": "c.dat", "error": "c.dat: cut short"}],
                "set": {"total": 3},
            })
        );
        let keys: Vec<usize> = ["schema", "command", "traces", "skipped", "failed", "set"]
            .iter()
            .map(|k| text.find(&format!("\n  \"{k}\": ")).unwrap())
            .collect();
        assert!(keys.windows(2).all(|w| w[0] < w[1]), "{keys:?}");
        // The layout is serde_json's own pretty form of the same value.
        let pretty = serde_json::to_string_pretty(&doc).unwrap();
        assert_eq!(text.lines().count(), pretty.lines().count());
    }

    #[test]
    fn text_has_a_section_per_trace_then_the_whole_set() {
        let out = Shared::default();
        let mut report = SetReport::new(out.clone(), "latency", false);
        for item in items() {
            report.item(&item, |d| d).unwrap();
        }
        report.finish(section()).unwrap();
        assert_eq!(
            String::from_utf8(out.0.take()).unwrap(),
            "== b.txt ==\n\nnumbers\n  1\n\n  warning: warned 1\n\n== d.txt ==\n\nnumbers\n  2\n\n  warning: warned 2\n\n== whole set: 2 traces ==\n\ntotal\n  3\n\n  2 traces read, 1 files skipped that are not traces, 0 traces of a format `latency` does not analyse, 1 failed\nwarning: c.dat: cut short\n"
        );
    }

    #[test]
    fn no_trace_read_writes_nothing() {
        let out = Shared::default();
        let mut report = SetReport::new(out.clone(), "explain", true);
        report
            .item(&items().swap_remove(2), |d: &Document| d)
            .unwrap();
        assert_eq!(report.traces_read(), 0);
        assert_eq!(report.failed().len(), 1);
        report.finish(section()).unwrap();
        assert!(out.0.borrow().is_empty());
    }
}
