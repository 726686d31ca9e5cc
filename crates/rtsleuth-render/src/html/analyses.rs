//! The analyses the page is drawn from, run in one pass over the trace: the readers feed one
//! sink, a nest of pairs, so a 1 GB trace is read and decoded once, not four times; explain
//! and the rest take each block on two threads.

use crate::error::Result;
use rtsleuth_analyze::document::Document;
use rtsleuth_analyze::explain::{Explain, ExplainOptions};
use rtsleuth_analyze::irq::{Irq, IrqOptions};
use rtsleuth_analyze::latency::{Latency, LatencyOptions};
use rtsleuth_analyze::wq::{Wq, WqOptions};
use rtsleuth_trace::input::Input;
use rtsleuth_trace::read::{latency_tracer, Parallel};

/// What the page shows.
#[derive(Debug, Clone)]
pub struct ReportOptions {
    /// How many of the worst findings to draw.
    pub top: usize,
    /// Aggregate every wake-up at least this late (us), as `explain --threshold`.
    pub threshold_us: Option<f64>,
    /// Only these pids (explain's targets and latency's rows).
    pub pids: Vec<i32>,
    /// Only tasks whose comm contains one of these.
    pub comms: Vec<String>,
}

impl Default for ReportOptions {
    fn default() -> Self {
        ReportOptions {
            top: 10,
            threshold_us: None,
            pids: Vec::new(),
            comms: Vec::new(),
        }
    }
}

/// The documents of `explain`, `latency` (with a histogram per task), `irq` and `wq`.
#[derive(Debug)]
pub struct Analyses {
    pub explain: Document,
    pub latency: Document,
    pub irq: Document,
    pub wq: Document,
}

impl Analyses {
    /// Reads `input` once into every analysis (a latency tracer's output also gives `irq` its
    /// section, as `rtsleuth irq` reads it).
    pub fn read(input: Input, opts: &ReportOptions) -> Result<Analyses> {
        let explain = Explain::new(ExplainOptions {
            pids: opts.pids.clone(),
            comms: opts.comms.clone(),
            top: opts.top,
            threshold_us: opts.threshold_us,
            ..ExplainOptions::default()
        });
        let latency = Latency::new(LatencyOptions {
            pids: opts.pids.clone(),
            comms: opts.comms.clone(),
            task_histograms: true,
            ..LatencyOptions::default()
        });
        // explain on one thread, the other three on another: one thread would run all four
        // one after the other, and the page would cost a third more than explain alone.
        let mut sink = Parallel(
            explain,
            (
                latency,
                (
                    Irq::new(IrqOptions::default()),
                    Wq::new(WqOptions::default()),
                ),
            ),
        );
        let (info, section) = latency_tracer::read(input, &mut sink)?;
        info.require_time()?;
        let Parallel(mut explain, (latency, (irq, wq))) = sink;
        Ok(Analyses {
            explain: explain.document(&info),
            latency: latency.document(&info),
            irq: irq.document(&info, section.as_ref()),
            wq: wq.document(&info),
        })
    }

    /// The page of a soak's findings file: its explain-shaped document
    /// ([`rtsleuth_analyze::soak::document`]); a findings file has no latency tables, interrupts or
    /// workqueues (those sections say so).
    pub fn of_findings(explain: Document) -> Analyses {
        let none = || Document {
            json: serde_json::json!({}),
            blocks: Vec::new(),
            warnings: Vec::new(),
        };
        Analyses {
            explain,
            latency: none(),
            irq: none(),
            wq: none(),
        }
    }
}
