//! rtla's timerlat samples summarised as `rtla timerlat hist` does: per CPU and context (the
//! timer's interrupt handler, the thread it woke, the return to a user-space workload), the
//! latency the kernel itself measured from the timer's expiry. The kernel's number is taken
//! as printed: nothing here is inferred from other events.

use super::LatencyHistogram;
use crate::document::{fmt_ts, fmt_us, Align, Table};
use rtsleuth_trace::event::{ns_to_us, ts_to_secs, Event, EventKind, TimerlatContext};
use std::collections::BTreeMap;

#[derive(Debug, Default)]
pub struct Timerlat {
    per: BTreeMap<(u32, TimerlatContext), LatencyHistogram>,
}

impl Timerlat {
    pub fn observe(&mut self, ev: &Event<'_>) {
        if let EventKind::TimerlatSample {
            context,
            latency_ns,
            ..
        } = ev.kind
        {
            let h = self.per.entry((ev.cpu, context)).or_default();
            h.record_for(latency_ns, ev.ts, ev.pid);
        }
    }

    pub fn is_empty(&self) -> bool {
        self.per.is_empty()
    }

    /// `[{cpu, context, count, min_us, avg_us, p50_us, p99_us, p999_us, max_us, max_ts}]`.
    pub fn json(&self) -> serde_json::Value {
        let rows = self.per.iter().map(|(&(cpu, context), h)| {
            serde_json::json!({
                "cpu": cpu,
                "context": context.as_str(),
                "count": h.count(),
                "min_us": h.min_ns().map(ns_to_us),
                "avg_us": h.avg_ns() / 1e3,
                "p50_us": ns_to_us(h.percentile_ns(50.0)),
                "p99_us": ns_to_us(h.percentile_ns(99.0)),
                "p999_us": ns_to_us(h.percentile_ns(99.9)),
                "max_us": ns_to_us(h.max_ns()),
                "max_ts": ts_to_secs(h.max_at()),
            })
        });
        rows.collect::<Vec<_>>().into()
    }

    pub fn table(&self) -> Table {
        let mut t = Table::new(
            "timerlat samples per CPU and context (the kernel's own measure from the timer's expiry)",
            &[
                ("CPU", Align::Right),
                ("Context", Align::Left),
                ("Count", Align::Right),
                ("Min us", Align::Right),
                ("Avg us", Align::Right),
                ("p50 us", Align::Right),
                ("p99 us", Align::Right),
                ("p99.9 us", Align::Right),
                ("Max us", Align::Right),
                ("Max at s", Align::Right),
            ],
        );
        for (&(cpu, context), h) in &self.per {
            let us = |ns: u64| fmt_us(ns_to_us(ns));
            t.rows.push(vec![
                cpu.to_string(),
                context.as_str().to_string(),
                h.count().to_string(),
                h.min_ns().map_or("-".into(), us),
                format!("{:.3}", h.avg_ns() / 1e3),
                us(h.percentile_ns(50.0)),
                us(h.percentile_ns(99.0)),
                us(h.percentile_ns(99.9)),
                us(h.max_ns()),
                fmt_ts(h.max_at()),
            ]);
        }
        t
    }
}
