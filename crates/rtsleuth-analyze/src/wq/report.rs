//! The `wq` report (`rtsleuth.wq/1`): per work function, per workqueue, per kworker, the worst
//! waits and the longest executions.

use super::occurrence::Occurrence;
use super::stats::{FunctionStats, KworkerStats, Timing, WorkqueueStats};
use super::Wq;
use crate::document::{fmt_ts, fmt_us, trace_json, Align, Block, Document, Table};
use crate::latency::LatencyHistogram;
use rtsleuth_trace::event::{ns_to_us, ts_to_secs};
use rtsleuth_trace::read::TraceInfo;
use serde_json::{json, Value};
use std::collections::BTreeMap;

const DEFINITION: &str = "wait = workqueue_queue_work (the last one, when mod_delayed_work queued a pending work again) -> workqueue_execute_start of the same work and function; exec = workqueue_execute_start -> workqueue_execute_end on the same kworker; behind_rt = time tasks of prio < 100 ran on a bound work's CPU during its wait";

/// How many kworkers a function row names, and functions a kworker row names.
const NAMED_IN_ROW: usize = 3;

impl Wq {
    /// Each work function's executions and each workqueue's waits, for a set's totals.
    pub fn timings(&self) -> WqTimings {
        WqTimings {
            exec: (self.functions.iter())
                .map(|(_, name, f)| (name.to_string(), f.timing.exec.clone()))
                .collect(),
            wait: (self.workqueues.iter())
                .map(|(_, name, w)| (name.to_string(), w.timing.wait.clone()))
                .collect(),
        }
    }

    fn kworker(&self, pid: i32) -> String {
        format!("{}-{pid}", self.names.get(pid))
    }

    /// `cpu=` values all name CPUs of the trace: the workqueue is per-CPU. Unbound pools print
    /// a negative CPU (or, on old kernels, a huge unsigned one).
    fn bound(targets: &[Option<u32>], info: &TraceInfo) -> bool {
        targets
            .iter()
            .all(|t| t.is_some_and(|c| info.cpus.contains(&c)))
    }

    /// Builds the report (`rtsleuth.wq/1`).
    pub fn document(mut self, info: &TraceInfo) -> Document {
        let never_started = self.close_unfinished();
        let counts = self.unmatched(never_started);
        let warnings = self.warnings(info);
        let rows = Rows::new(&self);
        let json = json!({
            "schema": "rtsleuth.wq/1",
            "trace": trace_json(info),
            "definition": DEFINITION,
            "functions": rows.functions.iter().map(|(_, name, f)| self.function_json(name, f)).collect::<Vec<_>>(),
            "workqueues": rows.workqueues.iter().map(|(_, name, q)| Self::workqueue_json(name, q, info)).collect::<Vec<_>>(),
            "kworkers": rows.kworkers.iter().map(|(pid, k)| self.kworker_json(**pid, k)).collect::<Vec<_>>(),
            "worst_wait": self.worst_wait.iter().map(|o| self.wait_json(o)).collect::<Vec<_>>(),
            "worst_exec": self.worst_exec.iter().map(|o| self.occurrence_json(o)).collect::<Vec<_>>(),
            "counts": counts.iter().map(|(k, n, _)| (k.to_string(), json!(n))).collect::<serde_json::Map<_, _>>(),
            "warnings": warnings,
        });
        Document {
            json,
            blocks: self.blocks(&rows, &counts, info),
            warnings,
        }
    }

    /// Ends the executions still running when the trace ends (they count as unfinished) and
    /// returns how many queued works never started.
    fn close_unfinished(&mut self) -> u64 {
        let unfinished: Vec<Occurrence> = self.executing.drain().map(|(_, o)| o).collect();
        self.counts.unfinished += unfinished.len() as u64;
        for occ in unfinished {
            self.close(occ);
        }
        self.pending.len() as u64
    }

    /// The counts of events that could not be paired, each with what it means.
    fn unmatched(&self, never_started: u64) -> [(&'static str, u64, &'static str); 6] {
        let c = &self.counts;
        [
            ("requeued", c.requeued, "queue events of a work already pending (mod_delayed_work took it back and queued it again): measured from the last one"),
            ("unqueued", c.unqueued, "executions with no queue event (queued before the trace began, or flush barriers, which the kernel inserts without one): no wait"),
            ("unfinished", c.unfinished, "executions whose end is not in the trace: no execution time"),
            ("unmatched_ends", c.unmatched_ends, "execute_end events whose start is not in the trace"),
            ("never_started", never_started, "works still queued when the trace ends"),
            ("dropped_by_lost", c.dropped_by_lost, "pending or executing works forgotten at lost events"),
        ]
    }

    fn warnings(&self, info: &TraceInfo) -> Vec<String> {
        let mut warnings = info.warnings();
        if self.functions.iter().next().is_none() {
            warnings.push(
                "the trace has no workqueue events (record with the workqueue event group enabled)"
                    .to_string(),
            );
        }
        warnings
    }

    /// The functions `pid` ran, most runs first.
    fn ran(&self, pid: i32) -> Vec<(&str, u64)> {
        most_runs_first(
            self.functions
                .iter()
                .filter_map(|(_, name, f)| f.kworkers.get(&pid).map(|n| (name, *n)))
                .collect(),
        )
    }

    /// The workqueues `f` was queued on, by name.
    fn queue_names(&self, f: &FunctionStats) -> Vec<&str> {
        f.workqueues
            .iter()
            .map(|q| self.workqueues.name(*q))
            .collect()
    }

    fn function_json(&self, name: &str, f: &FunctionStats) -> Value {
        json!({
            "function": name,
            "workqueues": self.queue_names(f),
            "executions": f.executions,
            "wait": dist_json(&f.timing.wait),
            "exec": dist_json(&f.timing.exec),
            "kworkers": kworkers_by_runs(&f.kworkers).iter()
                .map(|(p, n)| json!({"kworker": self.kworker(*p), "executions": n}))
                .collect::<Vec<_>>(),
        })
    }

    fn workqueue_json(name: &str, q: &WorkqueueStats, info: &TraceInfo) -> Value {
        json!({
            "workqueue": name,
            "bound": Self::bound(&q.targets, info),
            "queued": q.queued,
            "wait": dist_json(&q.timing.wait),
            "exec": dist_json(&q.timing.exec),
        })
    }

    fn kworker_json(&self, pid: i32, k: &KworkerStats) -> Value {
        json!({
            "kworker": self.kworker(pid),
            "comm": self.names.get(pid),
            "pid": pid,
            "cpus": k.cpus,
            "executions": k.executions,
            "busy_us": ns_to_us(k.busy_ns),
            "functions": self.ran(pid).iter()
                .map(|(f, n)| json!({"function": f, "executions": n}))
                .collect::<Vec<_>>(),
        })
    }

    /// The text report: the three aggregate tables, the worst occurrences, the unmatched
    /// counts.
    fn blocks(
        &self,
        rows: &Rows,
        counts: &[(&'static str, u64, &'static str)],
        info: &TraceInfo,
    ) -> Vec<Block> {
        vec![
            Block::Table(self.functions_table(&rows.functions)),
            Block::Table(Self::workqueues_table(&rows.workqueues, info)),
            Block::Table(self.kworkers_table(&rows.kworkers)),
            Block::Table(self.occurrence_table(
                "Worst waits (behind RT: time real-time tasks held a bound work's CPU meanwhile)",
                self.worst_wait.iter(),
            )),
            Block::Lines(
                "Worst waits explained (the kworker woken by the queueing: explain's finding, then its own run to the work)".to_string(),
                self.explained_lines(),
            ),
            Block::Table(self.occurrence_table("Longest executions", self.worst_exec.iter())),
            Block::Pairs(
                "Unmatched".to_string(),
                counts
                    .iter()
                    .map(|(k, n, why)| (k.to_string(), format!("{n}  {why}")))
                    .collect(),
            ),
        ]
    }

    fn functions_table(&self, functions: &[(usize, &str, &FunctionStats)]) -> Table {
        let mut t = timing_table(
            "Work functions, worst wait first (wait = queue -> execute_start, exec = execute_start -> execute_end)",
            &[("Function", Align::Left), ("Workqueue", Align::Left), ("Runs", Align::Right)],
        );
        t.columns.push(("Kworkers (runs)".to_string(), Align::Left));
        for (_, name, f) in functions {
            let qs = self.queue_names(f);
            let mut row = vec![
                name.to_string(),
                if qs.is_empty() {
                    "-".into()
                } else {
                    qs.join(",")
                },
                f.executions.to_string(),
            ];
            row.extend(timing_cells(&f.timing));
            row.push(named_in_row(&kworkers_by_runs(&f.kworkers), |p| {
                self.kworker(*p)
            }));
            t.rows.push(row);
        }
        t
    }

    fn workqueues_table(workqueues: &[(usize, &str, &WorkqueueStats)], info: &TraceInfo) -> Table {
        let mut t = timing_table(
            "Workqueues",
            &[
                ("Workqueue", Align::Left),
                ("Pool", Align::Left),
                ("Queued", Align::Right),
            ],
        );
        for (_, name, q) in workqueues {
            let mut row = vec![
                name.to_string(),
                if Self::bound(&q.targets, info) {
                    "per-cpu"
                } else {
                    "unbound"
                }
                .to_string(),
                q.queued.to_string(),
            ];
            row.extend(timing_cells(&q.timing));
            t.rows.push(row);
        }
        t
    }

    fn kworkers_table(&self, kworkers: &[(&i32, &KworkerStats)]) -> Table {
        let mut t = Table::new(
            "Kworkers, busiest first",
            &[
                ("Kworker", Align::Left),
                ("CPUs", Align::Left),
                ("Runs", Align::Right),
                ("Busy us", Align::Right),
                ("Functions (runs)", Align::Left),
            ],
        );
        for (pid, k) in kworkers {
            let cpus: Vec<String> = k.cpus.iter().map(u32::to_string).collect();
            t.rows.push(vec![
                self.kworker(**pid),
                cpus.join(","),
                k.executions.to_string(),
                fmt_us(ns_to_us(k.busy_ns)),
                named_in_row(&self.ran(**pid), |name| name.to_string()),
            ]);
        }
        t
    }

    fn culprit(&self, o: &Occurrence) -> Option<String> {
        o.rt_culprit
            .map(|(pid, prio)| format!("{} (prio {prio})", self.kworker(pid)))
    }

    fn occurrence_json(&self, o: &Occurrence) -> Value {
        json!({
            "function": self.functions.name(o.function),
            "workqueue": o.workqueue.map(|q| self.workqueues.name(q)),
            "kworker": self.kworker(o.pid),
            "cpu": o.cpu,
            "queue_ts": o.queue_ts.map(ts_to_secs),
            "activate_ts": o.activate_ts.map(ts_to_secs),
            "start_ts": ts_to_secs(o.start_ts),
            "end_ts": o.end_ts.map(ts_to_secs),
            "wait_us": o.wait_ns().map(ns_to_us),
            "exec_us": o.exec_ns().map(ns_to_us),
            "rt_wait_us": o.rt_wait_ns.map(ns_to_us),
            "rt_culprit": self.culprit(o),
        })
    }

    /// A worst wait, with what explains it when its kworker was woken by the queueing
    /// (docs/claims.md, "Works").
    fn wait_json(&self, o: &Occurrence) -> Value {
        let mut v = self.occurrence_json(o);
        let cause = self.explained.cause(o.pid, o.start_ts);
        v["explained"] = cause.map_or(Value::Null, |c| c.finding.clone());
        v["before_start_us"] = json!(cause.map(|c| ns_to_us(o.start_ts.saturating_sub(c.run))));
        v["works_before"] = json!(cause.and_then(|c| c.works_before));
        v
    }

    /// One line per worst wait: explain's summary of the kworker's wake-up, then its own run.
    fn explained_lines(&self) -> Vec<String> {
        let lines: Vec<String> = (self.worst_wait.iter())
            .filter_map(|o| Some((o, self.explained.cause(o.pid, o.start_ts)?)))
            .map(|(o, c)| {
                let first = match c.works_before {
                    Some(n) => format!(" ({n} other works first)"),
                    None => " (which works it began first is not known: its run since that switch-in is not what the trace shows)".to_string(),
                };
                format!(
                    "{} us {} queued at {}: {}; then {} us of its own run to the work{first}",
                    o.wait_ns().map_or("-".into(), |n| fmt_us(ns_to_us(n))),
                    self.functions.name(o.function),
                    o.queue_ts.map_or("-".into(), fmt_ts),
                    c.finding["summary"].as_str().unwrap_or("-"),
                    fmt_us(ns_to_us(o.start_ts.saturating_sub(c.run))),
                )
            })
            .collect();
        match lines.is_empty() {
            true => vec!["none: no worst wait's kworker was woken by its queueing (it was already running, or the trace shows no context flags)".into()],
            false => lines,
        }
    }

    fn occurrence_table<'a>(
        &self,
        title: &str,
        occurrences: impl Iterator<Item = &'a Occurrence>,
    ) -> Table {
        let mut t = Table::new(
            title,
            &[
                ("Wait us", Align::Right),
                ("Exec us", Align::Right),
                ("Function", Align::Left),
                ("Workqueue", Align::Left),
                ("Kworker", Align::Left),
                ("CPU", Align::Right),
                ("Queued at s", Align::Right),
                ("Started at s", Align::Right),
                ("Behind RT us", Align::Left),
            ],
        );
        let us = |ns: Option<u64>| ns.map_or("-".to_string(), |n| fmt_us(ns_to_us(n)));
        for o in occurrences {
            let behind = match (o.rt_wait_ns, self.culprit(o)) {
                (Some(ns), Some(who)) => format!("{} {who}", fmt_us(ns_to_us(ns))),
                (Some(ns), None) => fmt_us(ns_to_us(ns)),
                (None, _) => "-".to_string(),
            };
            t.rows.push(vec![
                us(o.wait_ns()),
                us(o.exec_ns()),
                self.functions.name(o.function).to_string(),
                o.workqueue
                    .map_or("-", |q| self.workqueues.name(q))
                    .to_string(),
                self.kworker(o.pid),
                o.cpu.to_string(),
                o.queue_ts.map_or("-".to_string(), fmt_ts),
                fmt_ts(o.start_ts),
                behind,
            ]);
        }
        t
    }
}

/// The report's rows in its order: functions by worst wait, then worst execution; workqueues
/// by worst wait; kworkers by time busy. Ties go by name or pid, so the order is the same on
/// every run.
struct Rows<'a> {
    functions: Vec<(usize, &'a str, &'a FunctionStats)>,
    workqueues: Vec<(usize, &'a str, &'a WorkqueueStats)>,
    kworkers: Vec<(&'a i32, &'a KworkerStats)>,
}

impl<'a> Rows<'a> {
    fn new(wq: &'a Wq) -> Rows<'a> {
        let mut functions: Vec<_> = wq.functions.iter().collect();
        functions.sort_by(|a, b| {
            let (ta, tb) = (&a.2.timing, &b.2.timing);
            (tb.wait.max_ns(), tb.exec.max_ns(), a.1).cmp(&(
                ta.wait.max_ns(),
                ta.exec.max_ns(),
                b.1,
            ))
        });
        let mut workqueues: Vec<_> = wq.workqueues.iter().collect();
        workqueues
            .sort_by(|a, b| (b.2.timing.wait.max_ns(), a.1).cmp(&(a.2.timing.wait.max_ns(), b.1)));
        let mut kworkers: Vec<_> = wq.kworkers.iter().collect();
        kworkers.sort_by(|a, b| (b.1.busy_ns, a.0).cmp(&(a.1.busy_ns, b.0)));
        Rows {
            functions,
            workqueues,
            kworkers,
        }
    }
}

/// The kworkers that ran a function (executions per pid), most runs first.
fn kworkers_by_runs(runs: &BTreeMap<i32, u64>) -> Vec<(i32, u64)> {
    most_runs_first(runs.iter().map(|(p, n)| (*p, *n)).collect())
}

/// Sorts `(who, runs)` by runs, most first, then by who.
fn most_runs_first<K: Ord>(mut v: Vec<(K, u64)>) -> Vec<(K, u64)> {
    v.sort_by(|a, b| (b.1, &a.0).cmp(&(a.1, &b.0)));
    v
}

/// A table cell naming the first [`NAMED_IN_ROW`] of `runs` as `who (runs)`, and how many
/// more there are.
fn named_in_row<K>(runs: &[(K, u64)], who: impl Fn(&K) -> String) -> String {
    let mut named: Vec<String> = runs
        .iter()
        .take(NAMED_IN_ROW)
        .map(|(k, n)| format!("{} ({n})", who(k)))
        .collect();
    if runs.len() > NAMED_IN_ROW {
        named.push(format!("+{} more", runs.len() - NAMED_IN_ROW));
    }
    named.join(", ")
}

/// The distributions a set merges: queue-to-start per workqueue, start-to-end per function.
#[derive(Debug, Clone, Default)]
pub struct WqTimings {
    pub exec: Vec<(String, LatencyHistogram)>,
    pub wait: Vec<(String, LatencyHistogram)>,
}

/// A distribution's figures; null where there was no sample.
pub(crate) fn dist_json(h: &LatencyHistogram) -> Value {
    let measured = h.count() > 0;
    let us = |ns: u64| measured.then(|| ns_to_us(ns));
    json!({
        "count": h.count(),
        "avg_us": measured.then(|| h.avg_ns() / 1e3),
        "min_us": h.min_ns().map(ns_to_us),
        "p50_us": us(h.percentile_ns(50.0)),
        "p99_us": us(h.percentile_ns(99.0)),
        "max_us": us(h.max_ns()),
        "max_at_ts": measured.then(|| ts_to_secs(h.max_at())),
    })
}

/// A table of `leading` columns followed by the columns of [`timing_cells`].
fn timing_table(title: &str, leading: &[(&str, Align)]) -> Table {
    let timing = [
        ("Waits", Align::Right),
        ("Wait avg us", Align::Right),
        ("p99", Align::Right),
        ("max", Align::Right),
        ("Max wait at s", Align::Right),
        ("Exec avg us", Align::Right),
        ("p99", Align::Right),
        ("max", Align::Right),
    ];
    let columns: Vec<(&str, Align)> = leading.iter().chain(&timing).copied().collect();
    Table::new(title, &columns)
}

/// Waits, wait avg / p99 / max / max-at, exec avg / p99 / max.
fn timing_cells(t: &Timing) -> Vec<String> {
    let (w, e) = (&t.wait, &t.exec);
    let avg = |h: &LatencyHistogram| {
        if h.count() > 0 {
            format!("{:.3}", h.avg_ns() / 1e3)
        } else {
            "-".into()
        }
    };
    let us = |h: &LatencyHistogram, ns: u64| {
        if h.count() > 0 {
            fmt_us(ns_to_us(ns))
        } else {
            "-".into()
        }
    };
    vec![
        w.count().to_string(),
        avg(w),
        us(w, w.percentile_ns(99.0)),
        us(w, w.max_ns()),
        if w.count() > 0 {
            fmt_ts(w.max_at())
        } else {
            "-".into()
        },
        avg(e),
        us(e, e.percentile_ns(99.0)),
        us(e, e.max_ns()),
    ]
}
