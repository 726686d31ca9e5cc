//! `explain` over a set: the causes of every trace added up per kind and culprit. A task
//! culprit is matched across traces by [`task_key`] (its pid differs from run to run); other
//! culprits (an interrupt, a softirq, a timer callback) by their name.

use super::task_key::task_key;
use crate::document::{fmt_us, round3, Align, Table};
use crate::explain::{Cause, CauseTotal};
use rtsleuth_trace::event::ns_to_us;
use serde_json::{json, Value};
use std::collections::BTreeMap;

#[derive(Debug, Default, Clone, Copy)]
struct Sum {
    traces: u64,
    spikes: u64,
    total_ns: u64,
    max_ns: u64,
}

/// The set's causes, filled trace by trace.
#[derive(Debug, Default)]
pub struct SetCauses {
    sums: BTreeMap<(Cause, Option<String>), Sum>,
}

/// The name a culprit is matched by across traces.
pub fn culprit_key(c: &CauseTotal) -> Option<String> {
    match &c.culprit_comm {
        Some(comm) => Some(task_key(comm).to_string()),
        None => c.culprit.clone(),
    }
}

impl SetCauses {
    pub fn add(&mut self, causes: &[CauseTotal]) {
        for c in causes {
            let s = self.sums.entry((c.cause, culprit_key(c))).or_default();
            s.traces += 1;
            s.spikes += c.spikes;
            s.total_ns = s.total_ns.saturating_add(c.total_ns);
            s.max_ns = s.max_ns.max(c.max_ns);
        }
    }

    /// Largest total first.
    fn rows(&self) -> Vec<(&(Cause, Option<String>), &Sum)> {
        let mut rows: Vec<_> = self.sums.iter().collect();
        rows.sort_by(|a, b| b.1.total_ns.cmp(&a.1.total_ns).then(a.0.cmp(b.0)));
        rows
    }

    /// `{"aggregate": [{kind, culprit, traces, spikes, total_us, max_us}]}`.
    pub fn json(&self) -> Value {
        let rows: Vec<Value> = self
            .rows()
            .into_iter()
            .map(|((cause, culprit), s)| {
                json!({
                    "kind": cause.as_str(), "culprit": culprit, "traces": s.traces,
                    "spikes": s.spikes, "total_us": ns_to_us(s.total_ns), "max_us": ns_to_us(s.max_ns),
                })
            })
            .collect();
        json!({ "aggregate": rows })
    }

    pub fn table(&self) -> Table {
        let mut t = Table::new(
            "Causes over every trace (task culprits matched by comm without trailing digits)",
            &[
                ("kind", Align::Left),
                ("culprit", Align::Left),
                ("traces", Align::Right),
                ("spikes", Align::Right),
                ("total_us", Align::Right),
                ("max_us", Align::Right),
            ],
        );
        for ((cause, culprit), s) in self.rows() {
            t.rows.push(vec![
                cause.as_str().into(),
                culprit.clone().unwrap_or_else(|| "-".into()),
                s.traces.to_string(),
                s.spikes.to_string(),
                fmt_us(round3(ns_to_us(s.total_ns))),
                fmt_us(round3(ns_to_us(s.max_ns))),
            ]);
        }
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn total(
        cause: Cause,
        culprit: Option<(&str, Option<&str>)>,
        spikes: u64,
        us: u64,
    ) -> CauseTotal {
        CauseTotal {
            cause,
            culprit: culprit.map(|c| c.0.to_string()),
            culprit_comm: culprit.and_then(|c| c.1.map(str::to_string)),
            spikes,
            total_ns: us * 1000,
            max_ns: us * 1000 / spikes,
        }
    }

    #[test]
    fn task_culprits_of_different_pids_add_up() {
        let mut set = SetCauses::default();
        set.add(&[
            total(
                Cause::HigherPriority,
                Some(("fifo_burst-306", Some("fifo_burst"))),
                2,
                600,
            ),
            total(Cause::BlackHole, None, 1, 70),
        ]);
        set.add(&[
            total(
                Cause::HigherPriority,
                Some(("fifo_burst-254", Some("fifo_burst"))),
                1,
                400,
            ),
            total(Cause::Softirq, Some(("softirq 6 (TASKLET)", None)), 1, 90),
        ]);
        let j = set.json();
        assert_eq!(
            j["aggregate"][0],
            json!({"kind": "higher_priority", "culprit": "fifo_burst", "traces": 2, "spikes": 3,
                   "total_us": 1000.0, "max_us": 400.0})
        );
        assert_eq!(j["aggregate"][1]["culprit"], "softirq 6 (TASKLET)");
        assert_eq!(j["aggregate"][2]["culprit"], Value::Null);
        assert_eq!(set.table().rows[0][1], "fifo_burst");
    }
}
