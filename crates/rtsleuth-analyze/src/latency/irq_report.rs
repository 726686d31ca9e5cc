//! `latency --irq`'s part of the report: one row per thread an interrupt led to, and the
//! warnings that say why there are none.

use super::irq_reach::IrqReach;
use super::report::hist_json;
use crate::document::{fmt_ts, fmt_us, Align, Table};
use crate::TaskNames;
use rtsleuth_trace::event::ns_to_us;

const DEFINITION: &str = "interrupt latency to a thread = the irq_handler_entry of the selected interrupt -> the sched_switch that runs a thread its visit woke (link 1), or that a thread running since such a wake-up woke (link n+1)";

/// One row: the thread, its waker, and its distribution.
struct Row<'a> {
    irq: u32,
    pid: i32,
    via: Option<i32>,
    link: usize,
    hist: &'a super::LatencyHistogram,
}

impl IrqReach {
    fn rows(&self, keep: &impl Fn(i32) -> bool) -> Vec<Row<'_>> {
        let mut rows: Vec<Row<'_>> = (self.receivers.iter())
            .filter(|((_, pid, _), _)| keep(*pid))
            .map(|(&(irq, pid, via), r)| Row {
                irq,
                pid,
                via,
                link: r.link,
                hist: &r.hist,
            })
            .collect();
        rows.sort_by_key(|r| (r.irq, r.link, std::cmp::Reverse(r.hist.max_ns()), r.pid));
        rows
    }

    /// `{selected, definition, interrupts: [{irq, name, entries, cpus}], receivers: [...]}`.
    pub fn json(&self, names: &TaskNames, keep: impl Fn(i32) -> bool) -> serde_json::Value {
        let interrupts: Vec<_> = (self.interrupts.iter())
            .map(|(irq, i)| {
                serde_json::json!({
                    "irq": irq, "name": i.name, "entries": i.entries, "cpus": i.cpus,
                })
            })
            .collect();
        let receivers: Vec<_> = (self.rows(&keep).iter())
            .map(|r| {
                let mut v = hist_json(r.hist);
                let via = r
                    .via
                    .map(|p| serde_json::json!({"comm": names.get(p), "pid": p}));
                let extra = serde_json::json!({
                    "irq": r.irq, "comm": names.get(r.pid), "pid": r.pid, "link": r.link,
                    "woken_by": via,
                });
                crate::document::merge_json(&mut v, extra);
                v
            })
            .collect();
        serde_json::json!({
            "selected": self.selector.to_string(),
            "definition": DEFINITION,
            "interrupts": interrupts,
            "receivers": receivers,
        })
    }

    /// Why the table is empty, when the trace says why.
    pub fn warnings(&self) -> Vec<String> {
        if self.seen.is_empty() {
            return vec!["--irq: the trace has no irq_handler_entry events, so no interrupt can be followed (record irq:irq_handler_entry and irq:irq_handler_exit)".into()];
        }
        if self.interrupts.is_empty() {
            let named: Vec<String> = (self.seen.iter())
                .map(|(irq, name)| format!("{irq} {name}"))
                .collect();
            return vec![format!(
                "--irq {}: no interrupt in the trace matches; it has {}",
                self.selector,
                named.join(", ")
            )];
        }
        if !self.flags_known {
            return vec!["--irq: the trace prints no context flags for its wakings, so no waking can be tied to the interrupt".into()];
        }
        Vec::new()
    }

    /// The text table, titled with the interrupts it follows.
    pub fn table(
        &self,
        names: &TaskNames,
        prio: impl Fn(i32) -> Option<i32>,
        keep: impl Fn(i32) -> bool,
    ) -> Table {
        let which: Vec<String> = (self.interrupts.iter())
            .map(|(irq, i)| format!("{irq} {} ({} entries)", i.name, i.entries))
            .collect();
        let title = match which.is_empty() {
            true => format!("From interrupt {} (none in the trace)", self.selector),
            false => format!(
                "From the entry of interrupt {} to each thread it led to running",
                which.join(", ")
            ),
        };
        let mut t = Table::new(
            &title,
            &[
                ("Task", Align::Left),
                ("PID", Align::Right),
                ("Prio", Align::Right),
                ("Woken by", Align::Left),
                ("Link", Align::Right),
                ("Wakeups", Align::Right),
                ("Avg us", Align::Right),
                ("p50 us", Align::Right),
                ("p99 us", Align::Right),
                ("Max us", Align::Right),
                ("Max at s", Align::Right),
            ],
        );
        for r in self.rows(&keep) {
            let h = r.hist;
            let via = match r.via {
                Some(p) => format!("{}-{p}", names.get(p)),
                None => format!("IRQ {}", r.irq),
            };
            t.rows.push(vec![
                names.get(r.pid).to_string(),
                r.pid.to_string(),
                prio(r.pid).map_or("-".into(), |p| p.to_string()),
                via,
                r.link.to_string(),
                h.count().to_string(),
                format!("{:.3}", h.avg_ns() / 1e3),
                fmt_us(ns_to_us(h.percentile_ns(50.0))),
                fmt_us(ns_to_us(h.percentile_ns(99.0))),
                fmt_us(ns_to_us(h.max_ns())),
                fmt_ts(h.max_at()),
            ]);
        }
        t
    }
}
