//! `wq` over a set: per workqueue the queue-to-start waits, per work function the executions,
//! of every trace merged (both are named by the kernel, so they match across machines).

use super::merged::{Merged, MergedHistograms};
use super::SetSection;
use crate::document::{fmt_us, Align, Block, Table};
use crate::wq::{dist_json, WqTimings};
use rtsleuth_trace::event::ns_to_us;
use serde_json::{json, Value};

#[derive(Debug, Default)]
pub struct SetWq {
    wait: MergedHistograms<String>,
    exec: MergedHistograms<String>,
}

impl SetWq {
    pub fn add(&mut self, path: &str, t: &WqTimings) {
        self.wait
            .add_trace(path, t.wait.iter().map(|(n, h)| (n.clone(), h)));
        self.exec
            .add_trace(path, t.exec.iter().map(|(n, h)| (n.clone(), h)));
    }

    /// `{"workqueues": [{workqueue, traces, wait: {…}, max_trace}], "functions":
    /// [{function, traces, exec: {…}, max_trace}]}`, worst first.
    pub fn section(&self) -> SetSection {
        let (workqueues, wait_table) = part(
            &self.wait,
            ("workqueue", "Workqueue", "wait"),
            "Queue-to-start waits per workqueue over every trace (histograms merged)",
        );
        let (functions, exec_table) = part(
            &self.exec,
            ("function", "Function", "exec"),
            "Executions per work function over every trace (histograms merged)",
        );
        SetSection {
            json: json!({"workqueues": workqueues, "functions": functions}),
            blocks: vec![Block::Table(wait_table), Block::Table(exec_table)],
        }
    }
}

/// The rows of one kind of distribution: `what` names the key's JSON field, `column` its
/// text column, `dist` the distribution's field.
fn part(
    m: &MergedHistograms<String>,
    (what, column, dist): (&str, &str, &str),
    title: &str,
) -> (Vec<Value>, Table) {
    let mut table = Table::new(
        title,
        &[
            (column, Align::Left),
            ("Traces", Align::Right),
            ("Count", Align::Right),
            ("p50 us", Align::Right),
            ("p99 us", Align::Right),
            ("Max us", Align::Right),
            ("Max in", Align::Left),
        ],
    );
    let rows = m
        .worst_first()
        .into_iter()
        .map(
            |(
                name,
                Merged {
                    hist,
                    traces,
                    max_trace,
                },
            )| {
                let us = |ns: u64| fmt_us(ns_to_us(ns));
                table.rows.push(vec![
                    name.clone(),
                    traces.to_string(),
                    hist.count().to_string(),
                    us(hist.percentile_ns(50.0)),
                    us(hist.percentile_ns(99.0)),
                    us(hist.max_ns()),
                    max_trace.clone(),
                ]);
                json!({what: name, "traces": traces, dist: dist_json(hist), "max_trace": max_trace})
            },
        )
        .collect();
    (rows, table)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::latency::LatencyHistogram;

    #[test]
    fn waits_per_workqueue_and_executions_per_function() {
        let mut set = SetWq::default();
        let t = |wait: &[u64], exec: &[u64]| WqTimings {
            wait: vec![("events".into(), LatencyHistogram::of_us(wait))],
            exec: vec![("vmstat_update".into(), LatencyHistogram::of_us(exec))],
        };
        set.add("a", &t(&[10, 20], &[3]));
        set.add("b", &t(&[900], &[4, 5]));
        let j = set.section().json;
        assert_eq!(j["workqueues"][0]["workqueue"], "events");
        assert_eq!(j["workqueues"][0]["wait"]["count"], 3);
        assert_eq!(j["workqueues"][0]["wait"]["max_us"], 900.0);
        assert_eq!(j["workqueues"][0]["max_trace"], "b");
        assert_eq!(j["functions"][0]["exec"]["count"], 3);
        assert_eq!(j["functions"][0]["exec"]["p50_us"], 4.0);
        assert_eq!(j["functions"][0]["traces"], 2);
    }
}
