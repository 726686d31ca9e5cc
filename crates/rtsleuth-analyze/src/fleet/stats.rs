//! `stats` over a set: the traces' counts added up (events, lost events, bytes, time covered,
//! and events per name), taken from each trace's own `rtsleuth.stats/1` document so the set
//! cannot count differently from the traces.

use super::SetSection;
use crate::document::{Align, Block, Table};
use serde_json::{json, Value};
use std::collections::BTreeMap;

#[derive(Debug, Default)]
pub struct SetStats {
    traces: u64,
    events: u64,
    lost_events: u64,
    bytes: u64,
    span_s: f64,
    /// Per event name: events, and the traces that have it.
    per_event: BTreeMap<String, (u64, u64)>,
}

impl SetStats {
    /// Adds one trace's `rtsleuth.stats/1` document.
    pub fn add(&mut self, stats: &Value) {
        let n = |k: &str| stats[k].as_u64().unwrap_or(0);
        self.traces += 1;
        self.events += n("events");
        self.lost_events += n("lost_events");
        self.bytes += n("bytes");
        self.span_s += stats["span_s"].as_f64().unwrap_or(0.0);
        for (name, count) in stats["per_event"].as_object().into_iter().flatten() {
            let e = self.per_event.entry(name.clone()).or_default();
            e.0 += count.as_u64().unwrap_or(0);
            e.1 += 1;
        }
    }

    /// `{traces, events, lost_events, bytes, span_s, per_event: [{event, events, traces}]}`,
    /// the most frequent event first.
    pub fn section(&self) -> SetSection {
        let mut events: Vec<(&String, &(u64, u64))> = self.per_event.iter().collect();
        events.sort_by(|a, b| b.1 .0.cmp(&a.1 .0).then(a.0.cmp(b.0)));
        let mut table = Table::new(
            "Events per name over every trace",
            &[
                ("Event", Align::Left),
                ("Events", Align::Right),
                ("Traces", Align::Right),
            ],
        );
        let mut per_event = Vec::new();
        for (name, (n, traces)) in events {
            table
                .rows
                .push(vec![name.clone(), n.to_string(), traces.to_string()]);
            per_event.push(json!({"event": name, "events": n, "traces": traces}));
        }
        let span_s = (self.span_s * 1e6).round() / 1e6;
        let totals = [
            ("traces", self.traces.to_string()),
            ("events", self.events.to_string()),
            ("lost events", self.lost_events.to_string()),
            ("bytes", self.bytes.to_string()),
            (
                "time covered",
                format!("{span_s:.6} s (the traces' spans added)"),
            ),
        ];
        SetSection {
            json: json!({
                "traces": self.traces,
                "events": self.events,
                "lost_events": self.lost_events,
                "bytes": self.bytes,
                "span_s": span_s,
                "per_event": per_event,
            }),
            blocks: vec![
                Block::Pairs(
                    "Totals".into(),
                    totals.map(|(k, v)| (k.to_string(), v)).to_vec(),
                ),
                Block::Table(table),
            ],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_add_up_per_name() {
        let mut set = SetStats::default();
        set.add(
            &json!({"events": 10, "lost_events": 2, "bytes": 100, "span_s": 0.5,
            "per_event": {"sched_switch": 6, "sched_waking": 4}}),
        );
        set.add(
            &json!({"events": 5, "lost_events": 0, "bytes": 50, "span_s": 0.25,
            "per_event": {"sched_switch": 5}}),
        );
        let j = set.section().json;
        assert_eq!(j["events"], 15);
        assert_eq!(j["lost_events"], 2);
        assert_eq!(j["bytes"], 150);
        assert_eq!(j["span_s"], 0.75);
        assert_eq!(
            j["per_event"],
            json!([
                {"event": "sched_switch", "events": 11, "traces": 2},
                {"event": "sched_waking", "events": 4, "traces": 1},
            ])
        );
    }
}
