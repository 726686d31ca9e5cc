//! A findings file added up line by line into what `explain --threshold --json` would say of
//! the same spikes: the worst findings, and the causes per task and overall.

use super::MAX_WARNINGS;
use crate::document::{fmt_us, round3, Align, Block, Document, Table};
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};

/// A cause's key: its kind and culprit as the line names them.
type Key = (String, Option<String>);

#[derive(Debug, Default, Clone, Copy)]
struct Sum {
    spikes: u64,
    total_us: f64,
    max_us: f64,
}

#[derive(Debug, Default)]
struct Target {
    spikes: u64,
    causes: BTreeMap<Key, Sum>,
}

/// The lines read so far.
#[derive(Debug)]
pub struct Summary {
    top: usize,
    threshold_us: Option<f64>,
    lines: u64,
    unexplained: u64,
    wall: Option<(String, String)>,
    cpus: BTreeSet<u64>,
    /// Worst first, at most `top`.
    worst: Vec<Value>,
    targets: BTreeMap<(String, i64), Target>,
    overall: BTreeMap<Key, Sum>,
    warnings: Vec<String>,
    more_warnings: u64,
}

impl Summary {
    pub fn new(top: usize) -> Summary {
        Summary {
            top,
            threshold_us: None,
            lines: 0,
            unexplained: 0,
            wall: None,
            cpus: BTreeSet::new(),
            worst: Vec::new(),
            targets: BTreeMap::new(),
            overall: BTreeMap::new(),
            warnings: Vec::new(),
            more_warnings: 0,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.lines == 0
    }

    /// Lines read: the spikes captured.
    pub fn spikes(&self) -> u64 {
        self.lines
    }

    /// Lines without a finding.
    pub fn unexplained(&self) -> u64 {
        self.unexplained
    }

    /// Adds one line; the error says what is wrong with it.
    pub fn add(&mut self, line: &Value) -> Result<(), String> {
        let spike = &line["spike"];
        let threshold = number(spike, "threshold_us")?;
        match self.threshold_us {
            Some(t) if t != threshold => {
                return Err(format!(
                    "threshold {threshold} us where the lines before have {t} us; one file holds one run"
                ))
            }
            _ => self.threshold_us = Some(threshold),
        }
        self.lines += 1;
        if let Some(cpu) = spike["cpu"].as_u64() {
            self.cpus.insert(cpu);
        }
        if let Some(at) = spike["wall_time"].as_str() {
            let first = self.wall.take().map_or(at.to_string(), |w| w.0);
            self.wall = Some((first, at.to_string()));
        }
        self.add_warnings(line);
        let finding = &line["finding"];
        if finding.is_null() {
            self.unexplained += 1;
            return Ok(());
        }
        let task = &finding["task"];
        let comm = task["comm"].as_str().ok_or("finding without task.comm")?;
        let pid = task["pid"].as_i64().ok_or("finding without task.pid")?;
        let target = self.targets.entry((comm.to_string(), pid)).or_default();
        target.spikes += 1;
        for row in line["aggregate"]
            .as_array()
            .ok_or("no \"aggregate\" array")?
        {
            let (key, sum) = cause_row(row)?;
            add(target.causes.entry(key.clone()).or_default(), sum);
            add(self.overall.entry(key).or_default(), sum);
        }
        self.keep_if_worst(finding)
    }

    fn keep_if_worst(&mut self, finding: &Value) -> Result<(), String> {
        let latency = number(finding, "latency_us")?;
        let at = self
            .worst
            .partition_point(|f| f["latency_us"].as_f64().unwrap_or(0.0) >= latency);
        if at < self.top {
            self.worst.insert(at, finding.clone());
            self.worst.truncate(self.top);
        }
        Ok(())
    }

    fn add_warnings(&mut self, line: &Value) {
        let Some(list) = line["warnings"].as_array() else {
            return;
        };
        for w in list.iter().filter_map(Value::as_str) {
            if self.warnings.iter().any(|k| k == w) {
                continue;
            }
            if self.warnings.len() < MAX_WARNINGS {
                self.warnings.push(w.to_string());
            } else {
                self.more_warnings += 1;
            }
        }
    }

    /// The explain-shaped document (`rtsleuth.explain/1`), its source `path`.
    pub fn document(&self, path: &str) -> Document {
        let threshold = self.threshold_us.unwrap_or(0.0);
        let targets: Vec<Value> = self
            .targets
            .iter()
            .map(|((comm, pid), t)| {
                json!({"comm": comm, "pid": pid, "spikes": t.spikes, "wakeups": t.spikes,
                       "aggregate": rows_json(&t.causes)})
            })
            .collect();
        let (wall_start, wall_end) = self.wall.clone().unzip();
        let warnings = self.all_warnings();
        let json = json!({
            "schema": "rtsleuth.explain/1",
            "trace": {
                "source": path, "format": super::SCHEMA, "cpus": self.cpus,
                "start": null, "end": null, "events": null, "lost_events": null,
                "wall_start": wall_start, "wall_end": wall_end,
                "spikes": self.lines, "unexplained": self.unexplained,
            },
            "threshold_us": threshold,
            "findings": self.worst,
            "targets": targets,
            "aggregate": rows_json(&self.overall),
            "warnings": warnings,
        });
        Document {
            json,
            blocks: vec![self.facts(), Block::Table(self.table(threshold))],
            warnings,
        }
    }

    fn all_warnings(&self) -> Vec<String> {
        let mut all = self.warnings.clone();
        if self.more_warnings > 0 {
            all.push(format!(
                "{} more warnings of the captures not shown (a warning repeated by several is counted each time)",
                self.more_warnings
            ));
        }
        if self.unexplained > 0 {
            all.push(format!(
                "{} of {} spikes could not be explained; each of their lines says why (\"unexplained\")",
                self.unexplained, self.lines
            ));
        }
        all
    }

    /// The causes over every explained spike, largest total first (explain's aggregate rows).
    pub fn aggregate_rows(&self) -> Vec<Value> {
        rows_json(&self.overall)
    }

    /// Time per class over every explained spike, largest first, in one line
    /// (`higher_priority 10812 us, black_hole 3630 us`); empty before the first.
    pub fn classes(&self) -> String {
        let mut per: BTreeMap<&str, f64> = BTreeMap::new();
        for ((kind, _), s) in &self.overall {
            *per.entry(kind).or_default() += s.total_us;
        }
        let mut all: Vec<(&str, f64)> = per.into_iter().collect();
        all.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(b.0)));
        all.iter()
            .map(|(kind, us)| format!("{kind} {} us", fmt_us(round3(*us))))
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// The `n` largest causes as short lines (`higher_priority rt_hog-77: 6 spikes, 10812 us`),
    /// for a live view.
    pub fn leaders(&self, n: usize) -> Vec<String> {
        sorted(&self.overall)
            .into_iter()
            .take(n)
            .map(|((kind, culprit), s)| {
                format!(
                    "{kind} {}: {} spikes, {} us",
                    culprit.as_deref().unwrap_or("-"),
                    s.spikes,
                    fmt_us(round3(s.total_us))
                )
            })
            .collect()
    }

    fn facts(&self) -> Block {
        let mut pairs = vec![
            ("spikes".to_string(), self.lines.to_string()),
            (
                "explained".to_string(),
                (self.lines - self.unexplained).to_string(),
            ),
        ];
        if let Some((first, last)) = &self.wall {
            pairs.push(("from".to_string(), first.clone()));
            pairs.push(("to".to_string(), last.clone()));
        }
        Block::Pairs("Soak".to_string(), pairs)
    }

    /// The aggregate as a table, titled with the threshold.
    pub fn table(&self, threshold: f64) -> Table {
        let mut t = Table::new(
            &format!(
                "Aggregate over every explained spike at least {} us late",
                fmt_us(threshold)
            ),
            &[
                ("kind", Align::Left),
                ("culprit", Align::Left),
                ("spikes", Align::Right),
                ("total_us", Align::Right),
                ("max_us", Align::Right),
            ],
        );
        for ((kind, culprit), s) in sorted(&self.overall) {
            t.rows.push(vec![
                kind.clone(),
                culprit.clone().unwrap_or_else(|| "-".into()),
                s.spikes.to_string(),
                fmt_us(round3(s.total_us)),
                fmt_us(round3(s.max_us)),
            ]);
        }
        t
    }
}

fn number(v: &Value, field: &str) -> Result<f64, String> {
    v[field]
        .as_f64()
        .ok_or_else(|| format!("no number \"{field}\""))
}

fn cause_row(row: &Value) -> Result<(Key, Sum), String> {
    let kind = row["kind"]
        .as_str()
        .ok_or("aggregate row without \"kind\"")?;
    let culprit = row["culprit"].as_str().map(str::to_string);
    let sum = Sum {
        spikes: row["spikes"]
            .as_u64()
            .ok_or("aggregate row without \"spikes\"")?,
        total_us: number(row, "total_us")?,
        max_us: number(row, "max_us")?,
    };
    Ok(((kind.to_string(), culprit), sum))
}

fn add(into: &mut Sum, s: Sum) {
    into.spikes += s.spikes;
    into.total_us += s.total_us;
    into.max_us = into.max_us.max(s.max_us);
}

/// Largest total first, then by key.
fn sorted(rows: &BTreeMap<Key, Sum>) -> Vec<(&Key, &Sum)> {
    let mut all: Vec<_> = rows.iter().collect();
    all.sort_by(|a, b| b.1.total_us.total_cmp(&a.1.total_us).then(a.0.cmp(b.0)));
    all
}

fn rows_json(rows: &BTreeMap<Key, Sum>) -> Vec<Value> {
    sorted(rows)
        .into_iter()
        .map(|((kind, culprit), s)| {
            json!({"kind": kind, "culprit": culprit, "spikes": s.spikes,
                   "total_us": round3(s.total_us), "max_us": round3(s.max_us)})
        })
        .collect()
}
