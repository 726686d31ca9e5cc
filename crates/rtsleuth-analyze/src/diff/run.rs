//! One side of a diff: what a trace, or an `explain` / `latency` / `measure` JSON document, says
//! per task, in names that match across runs ([`super::names`]). A trace is read through the
//! same JSON documents its commands print, so a trace and its `--json` compare as equal.

use super::names::{culprit_name, number, task_name};
use super::DiffError;
use serde_json::Value;
use std::collections::BTreeMap;

/// How the latency numbers were measured: two definitions never compare.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Definition {
    /// `latency`'s: sched_waking (or sched_wakeup) to the switch that runs the task.
    Wakeup,
    /// `measure`'s: the measuring thread's clock after waking minus the deadline it slept to.
    Measured,
}

/// One task's latency summary.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Stats {
    pub count: u64,
    pub avg_us: f64,
    pub p50_us: f64,
    pub p99_us: f64,
    pub p999_us: f64,
    pub max_us: f64,
}

/// The time one kind and culprit took over a task's spikes (explain's aggregate row).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct CauseTime {
    pub spikes: u64,
    pub total_us: f64,
    pub max_us: f64,
}

/// A task's spikes and their causes, per (kind, culprit name).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Causes {
    pub spikes: u64,
    pub by_culprit: BTreeMap<(String, Option<String>), CauseTime>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Task {
    /// The name it is matched by.
    pub key: String,
    pub pid: i64,
    pub latency: Option<Stats>,
    pub causes: Option<Causes>,
}

/// Which tasks are compared.
#[derive(Debug, Clone, Default)]
pub struct Select {
    /// Every task of a latency table, not only real-time ones (prio < 100).
    pub all: bool,
    /// Only tasks whose comm contains one of these.
    pub comms: Vec<String>,
}

impl Select {
    fn comm(&self, comm: &str) -> bool {
        self.comms.is_empty() || self.comms.iter().any(|c| comm.contains(c.as_str()))
    }
}

/// One side.
#[derive(Debug, Clone)]
pub struct Run {
    /// The input as given.
    pub input: String,
    /// What it was: the trace's format, or the schema of the JSON document.
    pub what: String,
    /// How its latency was measured, when it has latency.
    pub latency: Option<Definition>,
    /// The threshold of its causes, when it has causes.
    pub causes_threshold_us: Option<f64>,
    pub tasks: Vec<Task>,
    pub warnings: Vec<String>,
}

/// A task as a document lists it, before it has a key.
struct Row {
    comm: String,
    pid: i64,
    latency: Option<Stats>,
    causes: Option<Causes>,
}

impl Run {
    /// A run from the documents of one input: `latency` (`rtsleuth.latency/1` or
    /// `rtsleuth.measure/1`) and/or `explain` (`rtsleuth.explain/1`).
    pub fn from_documents(
        input: &str,
        what: String,
        latency: Option<&Value>,
        explain: Option<&Value>,
        select: &Select,
    ) -> Result<Run, DiffError> {
        let bad = |why: String| DiffError::Document {
            input: input.to_string(),
            why,
        };
        let mut rows: Vec<Row> = Vec::new();
        let mut definition = None;
        let mut warnings = Vec::new();
        if let Some(doc) = latency {
            let measured = schema(doc) == Some("rtsleuth.measure/1");
            definition = Some(if measured {
                Definition::Measured
            } else {
                Definition::Wakeup
            });
            let list = if measured { "threads" } else { "tasks" };
            for t in array(doc, list).map_err(bad)? {
                let row = if measured {
                    measured_row(t, select)
                } else {
                    latency_row(t, select)
                };
                if let Some(row) = row.map_err(|w| bad(format!("{list}[]: {w}")))? {
                    rows.push(row);
                }
            }
            warnings.extend(strings(doc, "warnings"));
        }
        let mut threshold = None;
        if let Some(doc) = explain {
            threshold = Some(explain_threshold(doc).map_err(bad)?);
            for t in array(doc, "targets").map_err(bad)? {
                let (comm, pid) = comm_pid(t).map_err(|w| bad(format!("targets[]: {w}")))?;
                if !select.comm(comm) {
                    continue;
                }
                let causes = target_causes(t).map_err(|w| bad(format!("targets[]: {w}")))?;
                match rows.iter_mut().find(|r| r.pid == pid && r.comm == comm) {
                    Some(r) => r.causes = Some(causes),
                    None => rows.push(Row {
                        comm: comm.to_string(),
                        pid,
                        latency: None,
                        causes: Some(causes),
                    }),
                }
            }
            // The same warnings twice (one trace, two documents) are said once.
            for w in strings(doc, "warnings") {
                if !warnings.contains(&w) {
                    warnings.push(w);
                }
            }
        }
        let named: Vec<(&str, i64)> = rows
            .iter()
            .map(|r| (task_name(&r.comm, r.pid), r.pid))
            .collect();
        let keys = number(&named);
        let tasks = rows
            .into_iter()
            .zip(keys)
            .map(|(r, key)| Task {
                key,
                pid: r.pid,
                latency: r.latency,
                causes: r.causes,
            })
            .collect();
        Ok(Run {
            input: input.to_string(),
            what,
            latency: definition,
            causes_threshold_us: threshold,
            tasks,
            warnings,
        })
    }

    /// A run from one JSON document of `explain`, `latency` or `measure`.
    pub fn from_json(input: &str, doc: &Value, select: &Select) -> Result<Run, DiffError> {
        let what = schema(doc).unwrap_or("").to_string();
        match what.as_str() {
            "rtsleuth.latency/1" | "rtsleuth.measure/1" => {
                Run::from_documents(input, what.clone(), Some(doc), None, select)
            }
            "rtsleuth.explain/1" => Run::from_documents(input, what.clone(), None, Some(doc), select),
            "" => Err(DiffError::Document {
                input: input.to_string(),
                why: "JSON without a \"schema\" field; give a trace or the --json of explain, latency or measure".into(),
            }),
            other => Err(DiffError::Document {
                input: input.to_string(),
                why: format!("{other} has no per-task latency or causes; give a trace or the --json of explain, latency or measure"),
            }),
        }
    }
}

fn schema(doc: &Value) -> Option<&str> {
    doc.get("schema").and_then(Value::as_str)
}

fn array<'a>(doc: &'a Value, field: &str) -> Result<&'a Vec<Value>, String> {
    doc.get(field)
        .and_then(Value::as_array)
        .ok_or_else(|| format!("no \"{field}\" array"))
}

fn strings(doc: &Value, field: &str) -> Vec<String> {
    doc.get(field)
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|w| w.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default()
}

fn number_of(v: &Value, field: &str) -> Result<f64, String> {
    v.get(field)
        .and_then(Value::as_f64)
        .ok_or_else(|| format!("no number \"{field}\""))
}

fn count_of(v: &Value, field: &str) -> Result<u64, String> {
    v.get(field)
        .and_then(Value::as_u64)
        .ok_or_else(|| format!("no count \"{field}\""))
}

fn comm_pid(v: &Value) -> Result<(&str, i64), String> {
    let comm = v.get("comm").and_then(Value::as_str).ok_or("no \"comm\"")?;
    let pid = v.get("pid").and_then(Value::as_i64).ok_or("no \"pid\"")?;
    Ok((comm, pid))
}

/// A task's figures; a task never woken has them null, and compares as zero wake-ups.
fn stats(v: &Value, count: &str) -> Result<Stats, String> {
    let count = count_of(v, count)?;
    if count == 0 {
        return Ok(Stats::default());
    }
    Ok(Stats {
        count,
        avg_us: number_of(v, "avg_us")?,
        p50_us: number_of(v, "p50_us")?,
        p99_us: number_of(v, "p99_us")?,
        p999_us: number_of(v, "p999_us")?,
        max_us: number_of(v, "max_us")?,
    })
}

/// A `latency` task row, if selected: real-time (prio < 100) unless `--all`.
fn latency_row(t: &Value, select: &Select) -> Result<Option<Row>, String> {
    let (comm, pid) = comm_pid(t)?;
    // A task never switched in has no known prio: not shown to be real-time.
    let rt = t
        .get("prio")
        .and_then(Value::as_i64)
        .is_some_and(|p| p < 100);
    if !(select.all || rt) || !select.comm(comm) {
        return Ok(None);
    }
    Ok(Some(Row {
        comm: comm.to_string(),
        pid,
        latency: Some(stats(t, "wakeups")?),
        causes: None,
    }))
}

/// A `measure` thread: named as the kernel knows it (`rtsleuth-m<thread>`), which a trace of
/// the same run shows too.
fn measured_row(t: &Value, select: &Select) -> Result<Option<Row>, String> {
    let comm = format!("rtsleuth-m{}", count_of(t, "thread")?);
    if !select.comm(&comm) {
        return Ok(None);
    }
    Ok(Some(Row {
        comm,
        pid: t.get("tid").and_then(Value::as_i64).ok_or("no \"tid\"")?,
        latency: Some(stats(t, "cycles")?),
        causes: None,
    }))
}

fn explain_threshold(doc: &Value) -> Result<f64, String> {
    doc.get("threshold_us").and_then(Value::as_f64).ok_or_else(|| {
        "explain ran without --threshold: its causes cover only its top findings, not every spike; run explain --threshold US --json".to_string()
    })
}

fn target_causes(t: &Value) -> Result<Causes, String> {
    let rows = array(t, "aggregate").map_err(|_| {
        "no per-task \"aggregate\" (an explain JSON older than rtsleuth diff); run explain --threshold US --json again".to_string()
    })?;
    let mut causes = Causes {
        spikes: count_of(t, "spikes")?,
        by_culprit: BTreeMap::new(),
    };
    for a in rows {
        let kind = a.get("kind").and_then(Value::as_str).ok_or("no \"kind\"")?;
        let culprit = a
            .get("culprit")
            .and_then(Value::as_str)
            .map(|c| culprit_name(c).to_string());
        let c = causes
            .by_culprit
            .entry((kind.to_string(), culprit))
            .or_default();
        c.spikes += count_of(a, "spikes")?;
        c.total_us += number_of(a, "total_us")?;
        c.max_us = c.max_us.max(number_of(a, "max_us")?);
    }
    Ok(causes)
}
