//! The osnoise tracer's period summaries totalled per CPU, as `rtla osnoise top` shows them:
//! how long its thread looped, how much of that was noise, the worst period and the longest
//! single noise, and how often each source interfered. The kernel's numbers, as printed.

use crate::document::{Align, Table};
use rtsleuth_trace::event::{Event, EventKind, OsnoiseCounts};
use std::collections::BTreeMap;

#[derive(Debug, Default, Clone, Copy)]
struct CpuNoise {
    periods: u64,
    runtime_us: u64,
    noise_us: u64,
    max_noise_us: u64,
    max_single_us: u64,
    counts: OsnoiseCounts,
}

impl CpuNoise {
    /// The share of the runtime left to the thread, as the kernel computes it per period.
    fn available_pct(&self) -> f64 {
        match self.runtime_us {
            0 => 0.0,
            r => 100.0 - self.noise_us as f64 * 100.0 / r as f64,
        }
    }
}

#[derive(Debug, Default)]
pub struct Osnoise {
    per_cpu: BTreeMap<u32, CpuNoise>,
}

impl Osnoise {
    pub fn observe(&mut self, ev: &Event<'_>) {
        let EventKind::OsnoiseSummary {
            runtime_us,
            noise_us,
            max_single_us,
            counts: c,
        } = ev.kind
        else {
            return;
        };
        let n = self.per_cpu.entry(ev.cpu).or_default();
        n.periods += 1;
        n.runtime_us = n.runtime_us.saturating_add(runtime_us);
        n.noise_us = n.noise_us.saturating_add(noise_us);
        n.max_noise_us = n.max_noise_us.max(noise_us);
        n.max_single_us = n.max_single_us.max(max_single_us);
        let sum = |a: u64, b: u64| a.saturating_add(b);
        let t = &mut n.counts;
        (t.hw, t.nmi, t.irq) = (sum(t.hw, c.hw), sum(t.nmi, c.nmi), sum(t.irq, c.irq));
        (t.softirq, t.thread) = (sum(t.softirq, c.softirq), sum(t.thread, c.thread));
    }

    pub fn is_empty(&self) -> bool {
        self.per_cpu.is_empty()
    }

    /// `[{cpu, periods, runtime_us, noise_us, available_pct, max_noise_us, max_single_us, hw,
    /// nmi, irq, softirq, thread}]`.
    pub fn json(&self) -> serde_json::Value {
        let rows = self.per_cpu.iter().map(|(&cpu, n)| {
            serde_json::json!({
                "cpu": cpu,
                "periods": n.periods,
                "runtime_us": n.runtime_us,
                "noise_us": n.noise_us,
                "available_pct": (n.available_pct() * 1e5).round() / 1e5,
                "max_noise_us": n.max_noise_us,
                "max_single_us": n.max_single_us,
                "hw": n.counts.hw,
                "nmi": n.counts.nmi,
                "irq": n.counts.irq,
                "softirq": n.counts.softirq,
                "thread": n.counts.thread,
            })
        });
        rows.collect::<Vec<_>>().into()
    }

    pub fn table(&self) -> Table {
        let mut t = Table::new(
            "osnoise periods per CPU (the kernel's own summaries; times in us)",
            &[
                ("CPU", Align::Right),
                ("Periods", Align::Right),
                ("Runtime", Align::Right),
                ("Noise", Align::Right),
                ("% CPU avail", Align::Right),
                ("Max noise", Align::Right),
                ("Max single", Align::Right),
                ("HW", Align::Right),
                ("NMI", Align::Right),
                ("IRQ", Align::Right),
                ("Softirq", Align::Right),
                ("Thread", Align::Right),
            ],
        );
        for (&cpu, n) in &self.per_cpu {
            let c = n.counts;
            let cells = [cpu as u64, n.periods, n.runtime_us, n.noise_us];
            let mut row: Vec<String> = cells.iter().map(u64::to_string).collect();
            row.push(format!("{:.5}", n.available_pct()));
            let rest = [
                n.max_noise_us,
                n.max_single_us,
                c.hw,
                c.nmi,
                c.irq,
                c.softirq,
                c.thread,
            ];
            row.extend(rest.iter().map(u64::to_string));
            t.rows.push(row);
        }
        t
    }
}
