//! The `rtsleuth.set/1` document: every trace's own document, what was skipped or failed,
//! and what the whole set says.

use super::run::{Item, Outcome};
use crate::report::{Block, Document};
use serde_json::{json, Value};

/// What a command says about the whole set: its part of the JSON (`set`) and its text.
#[derive(Debug, Default)]
pub struct SetSection {
    pub json: Value,
    pub blocks: Vec<Block>,
}

/// Assembles the set's document: one section per trace in the order of `items` (sorted
/// paths), each trace's warnings inside its section, then the whole set. Files that are not
/// traces are counted; traces of a format the command does not analyse are counted with
/// their first reason; every failure is a warning of the set.
pub fn set_document<T>(
    command: &str,
    items: &[Item<T>],
    doc: impl Fn(&T) -> &Document,
    set: SetSection,
) -> Document {
    let mut traces = Vec::new();
    let mut skipped = Vec::new();
    let mut failed = Vec::new();
    let mut blocks = Vec::new();
    let (mut not_traces, mut other) = (0, Vec::new());
    for item in items {
        match &item.outcome {
            Outcome::Read(t) => {
                let d = doc(&t.result);
                traces
                    .push(json!({"path": item.path, "hash": t.identity.hash, "document": d.json}));
                blocks.push(Block::Lines(format!("== {} ==", item.path), Vec::new()));
                blocks.extend(d.blocks.iter().cloned());
                if !d.warnings.is_empty() {
                    let lines = d.warnings.iter().map(|w| format!("warning: {w}")).collect();
                    blocks.push(Block::Lines(String::new(), lines));
                }
            }
            Outcome::NotATrace(why) => {
                not_traces += 1;
                skipped.push(json!({"path": item.path, "reason": "not_a_trace", "why": why}));
            }
            Outcome::OtherCommand(why) => {
                other.push(why.as_str());
                skipped.push(json!({"path": item.path, "reason": "other_command", "why": why}));
            }
            Outcome::Failed(error) => failed.push((item.path.as_str(), error.clone())),
        }
    }
    let read = traces.len();
    blocks.push(Block::Lines(
        format!("== whole set: {read} traces =="),
        Vec::new(),
    ));
    blocks.extend(set.blocks);
    let mut summary = vec![format!(
        "{read} traces read, {not_traces} files skipped that are not traces, {} traces of a format `{command}` does not analyse, {} failed",
        other.len(),
        failed.len()
    )];
    if let Some(first) = other.first() {
        summary.push(format!("not analysed, e.g.: {first}"));
    }
    blocks.push(Block::Lines(String::new(), summary));
    let json = json!({
        "schema": "rtsleuth.set/1",
        "command": command,
        "traces": traces,
        "skipped": skipped,
        "failed": failed.iter().map(|(path, error)| json!({"path": path, "error": error})).collect::<Vec<_>>(),
        "set": set.json,
    });
    Document {
        json,
        blocks,
        warnings: failed.into_iter().map(|(_, error)| error).collect(),
    }
}
