//! Preemption waits: a task switched out while still runnable (`prev_state` R or R+) waits
//! until it is switched in again, and for a real-time thread that wait is latency as much as
//! a late wake-up. The wake-up model decides where each wait starts and ends
//! ([`crate::wakeups::Step::Preempted`]); each task keeps its own distribution (so
//! the table's selection applies), and here they are summarised per CPU (the CPU it ran on
//! again) and laid out as the report's table and JSON.

use super::report::Row;
use super::LatencyHistogram;
use crate::document::{fmt_ts, fmt_us, Align, Table};
use crate::TaskNames;
use rtsleuth_trace::event::{ns_to_us, ts_to_secs, Timestamp};
use std::collections::BTreeMap;

#[derive(Debug, Default)]
pub struct Preemption {
    per_cpu: BTreeMap<u32, LatencyHistogram>,
}

impl Preemption {
    /// `pid` waited `ns` until it ran again on `cpu` at `run`.
    pub fn waited(&mut self, cpu: u32, ns: u64, run: Timestamp, pid: i32) {
        self.per_cpu
            .entry(cpu)
            .or_default()
            .record_for(ns, run, pid);
    }

    /// `{tasks: [{comm, pid, count, avg_us, p50_us, p99_us, p999_us, max_us, max_at_ts}],
    /// per_cpu: [{cpu, count, avg_us, p99_us, max_us, max_pid, max_at_ts}]}`, the tasks in
    /// pid order.
    pub fn json(&self, rows: &[Row<'_>], names: &TaskNames) -> serde_json::Value {
        let tasks = waiting(rows).into_iter().map(|r| {
            let f = r.task.preempted.figures();
            serde_json::json!({
                "comm": r.comm,
                "pid": r.pid,
                "count": f.count,
                "avg_us": f.avg_us,
                "p50_us": f.p50_us,
                "p99_us": f.p99_us,
                "p999_us": f.p999_us,
                "max_us": f.max_us,
                "max_at_ts": f.max_at_ts,
            })
        });
        let per_cpu = self.per_cpu.iter().map(|(&cpu, h)| {
            serde_json::json!({
                "cpu": cpu,
                "count": h.count(),
                "avg_us": h.avg_ns() / 1e3,
                "p99_us": ns_to_us(h.percentile_ns(99.0)),
                "max_us": ns_to_us(h.max_ns()),
                "max_pid": h.max_pid(),
                "max_comm": names.get(h.max_pid()),
                "max_at_ts": ts_to_secs(h.max_at()),
            })
        });
        serde_json::json!({
            "tasks": tasks.collect::<Vec<_>>(),
            "per_cpu": per_cpu.collect::<Vec<_>>(),
        })
    }

    /// The selected tasks' waits, one row per task that waited, in pid order.
    pub fn table(rows: &[Row<'_>]) -> Table {
        let mut t = Table::new(
            "Preemption waits per task (switched out runnable -> switched in again)",
            &[
                ("Task", Align::Left),
                ("PID", Align::Right),
                ("Waits", Align::Right),
                ("Avg us", Align::Right),
                ("p50 us", Align::Right),
                ("p99 us", Align::Right),
                ("Max us", Align::Right),
                ("Max at s", Align::Right),
            ],
        );
        for r in waiting(rows) {
            let h = &r.task.preempted;
            let us = |ns: u64| fmt_us(ns_to_us(ns));
            t.rows.push(vec![
                r.comm.to_string(),
                r.pid.to_string(),
                h.count().to_string(),
                format!("{:.3}", h.avg_ns() / 1e3),
                us(h.percentile_ns(50.0)),
                us(h.percentile_ns(99.0)),
                us(h.max_ns()),
                fmt_ts(h.max_at()),
            ]);
        }
        t
    }
}

/// The rows of tasks that waited at least once, in pid order.
fn waiting<'r, 'a>(rows: &'r [Row<'a>]) -> Vec<&'r Row<'a>> {
    let mut v: Vec<&Row<'_>> = rows
        .iter()
        .filter(|r| r.task.preempted.count() > 0)
        .collect();
    v.sort_by_key(|r| r.pid);
    v
}
