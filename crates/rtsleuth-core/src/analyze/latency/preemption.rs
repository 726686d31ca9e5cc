//! Preemption waits: a task switched out while still runnable (`prev_state` R or R+) waits
//! until it is switched in again, and for a real-time thread that wait is latency as much as
//! a late wake-up. The wake-up model decides where each wait starts and ends
//! ([`crate::analyze::wakeups::Step::Preempted`]); here they are summarised per task and per
//! CPU (the CPU it ran on again).

use super::LatencyHistogram;
use crate::analyze::wakeups::Wake;
use crate::analyze::TaskNames;
use crate::event::{ns_to_us, ts_to_secs};
use crate::report::{fmt_ts, fmt_us, Align, Table};
use std::collections::BTreeMap;

#[derive(Debug, Default)]
pub struct Preemption {
    per_task: BTreeMap<i32, LatencyHistogram>,
    per_cpu: BTreeMap<u32, LatencyHistogram>,
}

impl Preemption {
    pub fn waited(&mut self, w: &Wake) {
        let ns = w.run - w.start;
        self.per_task
            .entry(w.pid)
            .or_default()
            .record_for(ns, w.run, w.pid);
        self.per_cpu
            .entry(w.cpu)
            .or_default()
            .record_for(ns, w.run, w.pid);
    }

    pub fn is_empty(&self) -> bool {
        self.per_task.is_empty()
    }

    /// `{tasks: [{comm, pid, count, avg_us, p50_us, p99_us, p999_us, max_us, max_at_ts}],
    /// per_cpu: [{cpu, count, avg_us, p99_us, max_us, max_pid, max_at_ts}]}`.
    pub fn json(&self, names: &TaskNames) -> serde_json::Value {
        let tasks = self.per_task.iter().map(|(&pid, h)| {
            serde_json::json!({
                "comm": names.get(pid),
                "pid": pid,
                "count": h.count(),
                "avg_us": h.avg_ns() / 1e3,
                "p50_us": ns_to_us(h.percentile_ns(50.0)),
                "p99_us": ns_to_us(h.percentile_ns(99.0)),
                "p999_us": ns_to_us(h.percentile_ns(99.9)),
                "max_us": ns_to_us(h.max_ns()),
                "max_at_ts": ts_to_secs(h.max_at()),
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
                "max_at_ts": ts_to_secs(h.max_at()),
            })
        });
        serde_json::json!({
            "tasks": tasks.collect::<Vec<_>>(),
            "per_cpu": per_cpu.collect::<Vec<_>>(),
        })
    }

    pub fn table(&self, names: &TaskNames) -> Table {
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
        for (&pid, h) in &self.per_task {
            let us = |ns: u64| fmt_us(ns_to_us(ns));
            t.rows.push(vec![
                names.get(pid).to_string(),
                pid.to_string(),
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
