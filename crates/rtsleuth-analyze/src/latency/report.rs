//! The `latency` report: the per-task table, the per-CPU view and the optional histogram.

use super::{preemption, Latency, LatencyHistogram, Task};
use crate::document::{fmt_ts, fmt_us, trace_json, Align, Block, Document, Table};
use rtsleuth_trace::event::ns_to_us;
use rtsleuth_trace::event::ts_to_secs;
use rtsleuth_trace::read::TraceInfo;

/// Order of the task table.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum SortKey {
    #[default]
    Max,
    Avg,
    P99,
    Wakeups,
    Runtime,
    Pid,
    Task,
}

impl std::str::FromStr for SortKey {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        Ok(match s {
            "max" => SortKey::Max,
            "avg" => SortKey::Avg,
            "p99" => SortKey::P99,
            "wakeups" => SortKey::Wakeups,
            "runtime" => SortKey::Runtime,
            "pid" => SortKey::Pid,
            "task" | "comm" => SortKey::Task,
            _ => {
                return Err(format!(
                    "unknown sort key {s:?} (max, avg, p99, wakeups, runtime, pid, task)"
                ))
            }
        })
    }
}

const DEFINITION: &str = "wake-up latency = sched_waking (or sched_wakeup when the trace has no sched_waking) -> the sched_switch that runs the task; first wake-up of a sleeping task wins; measured across CPUs";

/// One task's row.
pub(super) struct Row<'a> {
    pub(super) pid: i32,
    pub(super) comm: &'a str,
    pub(super) task: &'a Task,
}

impl Latency {
    pub(super) fn selected_rows(&self) -> Vec<Row<'_>> {
        let o = &self.opts;
        let mut rows: Vec<Row<'_>> = self
            .tasks
            .iter()
            .map(|(pid, task)| Row {
                pid: *pid,
                comm: self.names.get(*pid),
                task,
            })
            .filter(|r| r.task.switches > 0 || r.task.lat.count() + r.task.preempted.count() > 0)
            .filter(|r| self.named(r.pid, r.comm))
            .filter(|r| !o.rt_only || r.task.prio.is_some_and(|p| p < 100))
            .collect();
        let key = |r: &Row<'_>| -> (u64, f64) {
            let l = &r.task.lat;
            match o.sort {
                SortKey::Max => (l.max_ns(), 0.0),
                SortKey::Avg => (0, l.avg_ns()),
                SortKey::P99 => (l.percentile_ns(99.0), 0.0),
                SortKey::Wakeups => (l.count(), 0.0),
                SortKey::Runtime => (r.task.runtime_ns, 0.0),
                SortKey::Pid | SortKey::Task => (0, 0.0),
            }
        };
        rows.sort_by(|a, b| match o.sort {
            SortKey::Pid => a.pid.cmp(&b.pid),
            SortKey::Task => a.comm.cmp(b.comm).then(a.pid.cmp(&b.pid)),
            _ => {
                let (ka, kb) = (key(a), key(b));
                kb.0.cmp(&ka.0)
                    .then(kb.1.total_cmp(&ka.1))
                    .then(a.pid.cmp(&b.pid))
            }
        });
        rows
    }

    /// Whether `--pid` and `--task` select task `pid`, named `comm`.
    fn named(&self, pid: i32, comm: &str) -> bool {
        let o = &self.opts;
        (o.pids.is_empty() || o.pids.contains(&pid))
            && (o.comms.is_empty() || o.comms.iter().any(|c| comm.contains(c.as_str())))
    }

    /// The selected tasks' preemption waits, as the report shows them (even with none).
    pub fn preemption_table(&self) -> Table {
        preemption::Preemption::table(&self.selected_rows())
    }

    /// Builds the report (`rtsleuth.latency/1`).
    pub fn document(self, info: &TraceInfo) -> Document {
        let rows = self.selected_rows();
        let mut overall = LatencyHistogram::default();
        for r in &rows {
            overall.merge(&r.task.lat);
        }
        let tasks_json: Vec<_> = rows
            .iter()
            .map(|r| task_json(r, self.opts.task_histograms))
            .collect();
        let cpus_json: Vec<_> = self
            .per_cpu
            .iter()
            .map(|(cpu, h)| {
                serde_json::json!({
                    "cpu": cpu, "wakeups": h.count(), "avg_us": ns_to_us(h.avg_ns() as u64),
                    "p99_us": ns_to_us(h.percentile_ns(99.0)), "max_us": ns_to_us(h.max_ns()),
                    "max_at_ts": ts_to_secs(h.max_at()), "max_pid": h.max_pid(),
                    "max_comm": self.names.get(h.max_pid()),
                })
            })
            .collect();
        let mut warnings = info.warnings();
        if self.wakeups.untraced_switches > 0 {
            warnings.push(format!(
                "{} switch-ins were not in the trace (a task ran that no sched_switch put on its CPU); wake-ups ending there are measured to the task's first event, an upper bound",
                self.wakeups.untraced_switches
            ));
        }
        if self.wakeups.dropped_unseen > 0 {
            warnings.push(format!(
                "{} wake-ups were not measured: their task was already running where a CPU's trace begins",
                self.wakeups.dropped_unseen
            ));
        }
        if self.wakeups.dropped_by_lost > 0 {
            warnings.push(format!(
                "{} pending wake-ups were dropped at [LOST] markers",
                self.wakeups.dropped_by_lost
            ));
        }
        let mut json = serde_json::json!({
            "schema": "rtsleuth.latency/1",
            "trace": trace_json(info),
            "definition": DEFINITION,
            "start_event": self.wakeups.start_event(),
            "tasks": tasks_json,
            "per_cpu": cpus_json,
            "total": hist_json(&overall),
            "timerlat": self.timerlat.json(),
            "osnoise": self.osnoise.json(),
            "preemption": self.preemption.json(&rows, &self.names),
            "warnings": [],
        });
        self.wakeups.annotate(&mut json["trace"], &mut warnings);
        if let Some(irq) = &self.irq {
            warnings.extend(irq.warnings());
        }
        json["warnings"] = warnings.clone().into();
        let mut blocks = vec![
            Block::Table(self.task_table(&rows)),
            Block::Table(self.cpu_table()),
        ];
        let preempted = preemption::Preemption::table(&rows);
        if !preempted.rows.is_empty() {
            blocks.push(Block::Table(preempted));
        }
        if !self.osnoise.is_empty() {
            blocks.push(Block::Table(self.osnoise.table()));
        }
        if !self.timerlat.is_empty() {
            blocks.push(Block::Table(self.timerlat.table()));
        }
        if let Some(irq) = &self.irq {
            let keep = |pid: i32| self.named(pid, self.names.get(pid));
            let prio = |pid: i32| self.tasks.get(&pid).and_then(|t| t.prio);
            json["irq"] = irq.json(&self.names, keep);
            blocks.push(Block::Table(irq.table(&self.names, prio, keep)));
        }
        if self.opts.hist {
            let buckets = overall.log2_buckets_us();
            json["histogram"] = buckets_json(&buckets);
            blocks.push(Block::Lines(
                format!("Histogram of {} wake-ups (us)", overall.count()),
                histogram_lines(&buckets),
            ));
            let mut waits = LatencyHistogram::default();
            rows.iter().for_each(|r| waits.merge(&r.task.preempted));
            if waits.count() > 0 {
                let buckets = waits.log2_buckets_us();
                json["preemption"]["histogram"] = buckets_json(&buckets);
                blocks.push(Block::Lines(
                    format!("Histogram of {} preemption waits (us)", waits.count()),
                    histogram_lines(&buckets),
                ));
            }
        }
        Document {
            json,
            blocks,
            warnings,
        }
    }

    fn task_table(&self, rows: &[Row<'_>]) -> Table {
        let mut t = Table::new(
            &match self.wakeups.saw_wakeups() {
                true => format!(
                    "Wake-up latency per task (from {})",
                    self.wakeups.start_event()
                ),
                false => "Wake-up latency per task (the trace has no wake-up events)".into(),
            },
            &[
                ("Task", Align::Left),
                ("PID", Align::Right),
                ("Prio", Align::Right),
                ("Runtime ms", Align::Right),
                ("Switches", Align::Right),
                ("Wakeups", Align::Right),
                ("Avg us", Align::Right),
                ("p50 us", Align::Right),
                ("p99 us", Align::Right),
                ("p99.9 us", Align::Right),
                ("Max us", Align::Right),
                ("Max at s", Align::Right),
            ],
        );
        for r in rows {
            let l = &r.task.lat;
            let measured = l.count() > 0;
            let us = |ns: u64| {
                if measured {
                    fmt_us(ns_to_us(ns))
                } else {
                    "-".into()
                }
            };
            t.rows.push(vec![
                r.comm.to_string(),
                r.pid.to_string(),
                r.task.prio.map_or("-".into(), |p| p.to_string()),
                format!("{:.3}", r.task.runtime_ns as f64 / 1e6),
                r.task.switches.to_string(),
                l.count().to_string(),
                if measured {
                    format!("{:.3}", l.avg_ns() / 1e3)
                } else {
                    "-".into()
                },
                us(l.percentile_ns(50.0)),
                us(l.percentile_ns(99.0)),
                us(l.percentile_ns(99.9)),
                us(l.max_ns()),
                if measured {
                    fmt_ts(l.max_at())
                } else {
                    "-".into()
                },
            ]);
        }
        t
    }

    fn cpu_table(&self) -> Table {
        let mut t = Table::new(
            "Per CPU (the CPU the task was switched in on)",
            &[
                ("CPU", Align::Right),
                ("Wakeups", Align::Right),
                ("Avg us", Align::Right),
                ("p99 us", Align::Right),
                ("Max us", Align::Right),
                ("Max task", Align::Left),
                ("Max at s", Align::Right),
            ],
        );
        for (cpu, h) in &self.per_cpu {
            t.rows.push(vec![
                cpu.to_string(),
                h.count().to_string(),
                format!("{:.3}", h.avg_ns() / 1e3),
                fmt_us(ns_to_us(h.percentile_ns(99.0))),
                fmt_us(ns_to_us(h.max_ns())),
                format!("{}-{}", self.names.get(h.max_pid()), h.max_pid()),
                fmt_ts(h.max_at()),
            ]);
        }
        t
    }
}

/// The distribution's figures; all null for a task that was never woken (a 0 would read as
/// "no latency").
pub(crate) fn hist_json(h: &LatencyHistogram) -> serde_json::Value {
    let f = h.figures();
    serde_json::json!({
        "wakeups": f.count,
        "avg_us": f.avg_us,
        "min_us": f.min_us,
        "p50_us": f.p50_us,
        "p99_us": f.p99_us,
        "p999_us": f.p999_us,
        "max_us": f.max_us,
        "max_at_ts": f.max_at_ts,
    })
}

fn task_json(r: &Row<'_>, with_histogram: bool) -> serde_json::Value {
    let mut v = hist_json(&r.task.lat);
    let extra = serde_json::json!({
        "comm": r.comm, "pid": r.pid, "prio": r.task.prio,
        "runtime_us": ns_to_us(r.task.runtime_ns), "switches": r.task.switches,
    });
    crate::document::merge_json(&mut v, extra);
    if with_histogram {
        v["histogram"] = buckets_json(&r.task.lat.log2_buckets_us());
    }
    v
}

/// Power-of-two buckets as JSON: `[{"lt_us": upper bound, "count": n}]`.
fn buckets_json(buckets: &[(u64, u64)]) -> serde_json::Value {
    buckets
        .iter()
        .map(|(lt, n)| serde_json::json!({"lt_us": lt, "count": n}))
        .collect()
}

/// One line per bucket with a bar scaled to the largest bucket.
fn histogram_lines(buckets: &[(u64, u64)]) -> Vec<String> {
    let peak = buckets.iter().map(|b| b.1).max().unwrap_or(0).max(1);
    let mut lower = 0;
    buckets
        .iter()
        .map(|&(upper, n)| {
            let bar = "#".repeat(((n * 50).div_ceil(peak)) as usize);
            let line = format!("{lower:>8} - {upper:<8} {n:>10}  {bar}");
            lower = upper;
            line
        })
        .collect()
}
