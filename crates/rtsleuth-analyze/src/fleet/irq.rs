//! `irq` over a set: per interrupt source, its durations in every trace merged. Sources are
//! matched by kind and name (an IRQ's number differs between machines and boots, its name
//! `eth0` or `arch_timer` does not).

use super::merged::MergedHistograms;
use super::SetSection;
use crate::document::{fmt_us, merge_json, Align, Block, Table};
use crate::irq::{dist_json, IrqWork};
use rtsleuth_trace::event::ns_to_us;
use serde_json::json;

#[derive(Debug, Default)]
pub struct SetIrq {
    sources: MergedHistograms<(&'static str, String)>,
}

impl SetIrq {
    pub fn add(&mut self, path: &str, work: &[IrqWork]) {
        let parts = work.iter().map(|w| ((w.kind, w.name.clone()), &w.hist));
        self.sources.add_trace(path, parts);
    }

    /// `{"sources": [{kind, name, traces, count, total_us, avg_us, p50_us, p99_us, max_us,
    /// max_at_ts, max_trace}]}`, the longest single run first; `max_at_ts` is in the clock
    /// of `max_trace`.
    pub fn section(&self) -> SetSection {
        let mut table = Table::new(
            "Interrupt work over every trace (sources matched by kind and name; histograms merged)",
            &[
                ("Kind", Align::Left),
                ("Name", Align::Left),
                ("Traces", Align::Right),
                ("Count", Align::Right),
                ("Total us", Align::Right),
                ("p50 us", Align::Right),
                ("p99 us", Align::Right),
                ("Max us", Align::Right),
                ("Max in", Align::Left),
            ],
        );
        let mut sources = Vec::new();
        for ((kind, name), m) in self.sources.worst_first() {
            let mut v = dist_json(&m.hist);
            let extra =
                json!({"kind": kind, "name": name, "traces": m.traces, "max_trace": m.max_trace});
            merge_json(&mut v, extra);
            sources.push(v);
            let h = &m.hist;
            let us = |ns: u64| fmt_us(ns_to_us(ns));
            table.rows.push(vec![
                kind.to_string(),
                name.clone(),
                m.traces.to_string(),
                h.count().to_string(),
                fmt_us(h.sum_ns() as f64 / 1e3),
                us(h.percentile_ns(50.0)),
                us(h.percentile_ns(99.0)),
                us(h.max_ns()),
                m.max_trace.clone(),
            ]);
        }
        SetSection {
            json: json!({ "sources": sources }),
            blocks: vec![Block::Table(table)],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::latency::LatencyHistogram;

    fn work(kind: &'static str, name: &str, us: &[u64]) -> IrqWork {
        IrqWork {
            kind,
            name: name.into(),
            hist: LatencyHistogram::of_us(us),
        }
    }

    /// The same softirq in two traces is one row whose p99 is that of the union; the same
    /// name under another kind is another row.
    #[test]
    fn sources_merge_by_kind_and_name() {
        let mut set = SetIrq::default();
        let a: Vec<u64> = (1..=50).collect();
        let b: Vec<u64> = (1..=50).map(|u| u * 10).collect();
        set.add(
            "a",
            &[work("softirq", "TIMER", &a), work("hrtimer", "TIMER", &[7])],
        );
        set.add("b", &[work("softirq", "TIMER", &b)]);
        let j = set.section().json;
        let rows = j["sources"].as_array().unwrap();
        assert_eq!(rows.len(), 2);
        let timer = &rows[0];
        assert_eq!(
            (timer["kind"].as_str(), timer["name"].as_str()),
            (Some("softirq"), Some("TIMER"))
        );
        assert_eq!(timer["traces"], 2);
        assert_eq!(timer["count"], 100);
        assert_eq!(timer["p99_us"], 490.0);
        assert_eq!(timer["max_us"], 500.0);
        assert_eq!(timer["max_trace"], "b");
        assert_eq!(timer["total_us"], 1275.0 + 12750.0);
        assert_eq!(rows[1]["kind"], "hrtimer");
    }
}
