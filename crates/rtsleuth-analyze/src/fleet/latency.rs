//! `latency` over a set: per task (matched by [`task_key`]), the distribution of every wake-up
//! in every trace. Histograms are merged, so a set's p99 is the p99 of all its wake-ups
//! together; the p99s of the parts are never averaged.

use super::merged::MergedHistograms;
use super::task_key::task_key;
use crate::document::{fmt_us, Align, Table};
use crate::latency::{hist_json, LatencyHistogram, TaskLatency};
use rtsleuth_trace::event::ns_to_us;
use serde_json::{json, Value};

/// The set's tasks, filled trace by trace.
#[derive(Debug, Default)]
pub struct SetLatency {
    tasks: MergedHistograms<String>,
}

impl SetLatency {
    /// Adds one trace's tasks; tasks never woken in it add nothing.
    pub fn add(&mut self, path: &str, tasks: &[TaskLatency]) {
        let parts = tasks
            .iter()
            .map(|t| (task_key(&t.comm).to_string(), &t.hist));
        self.tasks.add_trace(path, parts);
    }

    /// The merged distribution of one task key.
    pub fn histogram(&self, key: &str) -> Option<&LatencyHistogram> {
        self.tasks.get(&key.to_string()).map(|m| &m.hist)
    }

    /// `{"tasks": [{task, traces, wakeups, avg_us, min_us, p50_us, p99_us, p999_us, max_us,
    /// max_at_ts, max_trace}]}`; `max_at_ts` is in the clock of `max_trace`.
    pub fn json(&self) -> Value {
        let tasks: Vec<Value> = self
            .tasks
            .worst_first()
            .into_iter()
            .map(|(key, m)| {
                let mut v = hist_json(&m.hist);
                v["task"] = json!(key);
                v["traces"] = json!(m.traces);
                v["max_trace"] = json!(m.max_trace);
                v
            })
            .collect();
        json!({ "tasks": tasks })
    }

    pub fn table(&self) -> Table {
        let mut t = Table::new(
            "Wake-up latency per task over every trace (tasks matched by comm without trailing digits; histograms merged)",
            &[
                ("Task", Align::Left),
                ("Traces", Align::Right),
                ("Wakeups", Align::Right),
                ("Avg us", Align::Right),
                ("p50 us", Align::Right),
                ("p99 us", Align::Right),
                ("p99.9 us", Align::Right),
                ("Max us", Align::Right),
                ("Max in", Align::Left),
            ],
        );
        for (key, m) in self.tasks.worst_first() {
            let h = &m.hist;
            let us = |ns: u64| fmt_us(ns_to_us(ns));
            t.rows.push(vec![
                key.clone(),
                m.traces.to_string(),
                h.count().to_string(),
                format!("{:.3}", h.avg_ns() / 1e3),
                us(h.percentile_ns(50.0)),
                us(h.percentile_ns(99.0)),
                us(h.percentile_ns(99.9)),
                us(h.max_ns()),
                m.max_trace.clone(),
            ]);
        }
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn task(comm: &str, pid: i32, us: &[u64]) -> TaskLatency {
        let hist = LatencyHistogram::of_us(us);
        TaskLatency {
            pid,
            comm: comm.into(),
            prio: Some(19),
            runtime_ns: 0,
            switches: 0,
            hist,
            preempted: LatencyHistogram::default(),
        }
    }

    /// Two traces: the p99 of 100 samples is the 99th smallest of all of them, which no
    /// average of the parts' p99s gives.
    #[test]
    fn merged_not_averaged() {
        let mut set = SetLatency::default();
        let a: Vec<u64> = (1..=50).collect();
        let b: Vec<u64> = (1..=50).map(|u| u * 10).collect();
        set.add("a", &[task("ct", 1, &a), task("idle", 2, &[])]);
        set.add("b", &[task("ct", 9, &b[..25]), task("ct", 10, &b[25..])]);
        let j = set.json();
        let ct = &j["tasks"][0];
        assert_eq!(ct["task"], "ct");
        assert_eq!(ct["traces"], 2);
        assert_eq!(ct["wakeups"], 100);
        // Sorted union: 1..=50 and 10, 20, ..., 500; its 99th value is 490.
        assert_eq!(ct["p99_us"], 490.0);
        assert_eq!(ct["max_us"], 500.0);
        assert_eq!(ct["max_trace"], "b");
        assert_eq!(j["tasks"].as_array().unwrap().len(), 1);
    }
}
