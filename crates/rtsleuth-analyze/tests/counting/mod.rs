//! A sink that counts the events a reader hands over, and every analysis attached to it, shared
//! by the tests that feed readers hostile input.

use rtsleuth_analyze::explain::{Explain, ExplainOptions};
use rtsleuth_analyze::irq::{Irq, IrqOptions};
use rtsleuth_analyze::latency::{Latency, LatencyOptions};
use rtsleuth_analyze::stats::Stats;
use rtsleuth_analyze::wq::{Wq, WqOptions};
use rtsleuth_trace::event::Event;
use rtsleuth_trace::input::Input;
use rtsleuth_trace::read::{self, Decode, EventSink, TraceInfo};
use rtsleuth_trace::Error;
use std::time::Duration;

/// Counts events. It asks for every event typed, so that paired with the analyses the reader
/// runs every decoding path, which the properties then exercise too.
#[derive(Default)]
pub struct Count(pub u64);

impl EventSink for Count {
    fn event(&mut self, _: &Event<'_>) {
        self.0 += 1;
    }

    fn decode(&self) -> Decode {
        Decode::Everything
    }
}

/// Every analysis that reads events (`stats`, `latency`, `explain`, `irq`, `wq`) fed the same
/// stream, so that hostile input reaches each one's per-CPU and per-task state.
#[allow(dead_code)] // not every test file that counts events runs the analyses
pub struct Analyses {
    stats: Stats,
    latency: Latency,
    explain: Explain,
    irq: Irq,
    wq: Wq,
}

#[allow(dead_code)]
impl Analyses {
    pub fn new() -> Self {
        Analyses {
            stats: Stats::new(),
            latency: Latency::new(LatencyOptions::default()),
            explain: Explain::new(ExplainOptions::default()),
            irq: Irq::new(IrqOptions::default()),
            wq: Wq::new(WqOptions::default()),
        }
    }

    /// Each analysis's JSON document, in the order above.
    pub fn documents(mut self, info: &TraceInfo) -> [serde_json::Value; 5] {
        [
            self.stats.document(info).json,
            self.latency.document(info).json,
            self.explain.document(info).json,
            self.irq.document(info, None).json,
            self.wq.document(info).json,
        ]
    }
}

impl EventSink for Analyses {
    fn event(&mut self, ev: &Event<'_>) {
        self.stats.event(ev);
        self.latency.event(ev);
        self.explain.event(ev);
        self.irq.event(ev);
        self.wq.event(ev);
    }

    fn decode(&self) -> Decode {
        Decode::Everything
    }

    fn lost(&mut self, cpu: Option<u32>, count: Option<u64>) {
        self.stats.lost(cpu, count);
        self.latency.lost(cpu, count);
        self.explain.lost(cpu, count);
        self.irq.lost(cpu, count);
        self.wq.lost(cpu, count);
    }
}

/// Reads `bytes` as the input `name` from memory with the counter and every analysis attached
/// (so that every decoding path runs, and every document is made): the events counted and what
/// the reader learnt. Any panic fails the calling test.
#[allow(dead_code)] // not every test file that counts events reads this way
pub fn read_analysed(name: &str, bytes: Vec<u8>) -> Result<(u64, TraceInfo), Error> {
    read_documents(name, bytes).map(|(n, info, _)| (n, info))
}

/// [`read_analysed`], with the documents.
#[allow(dead_code)]
pub fn read_documents(
    name: &str,
    bytes: Vec<u8>,
) -> Result<(u64, TraceInfo, [serde_json::Value; 5]), Error> {
    let input = Input::from_reader(name, Box::new(std::io::Cursor::new(bytes)))?;
    let mut sink = (Count::default(), Analyses::new());
    let info = read::read(input, &mut sink)?;
    let docs = sink.1.documents(&info);
    Ok((sink.0 .0, info, docs))
}

/// Runs `f` on its own thread and fails the test if it has not returned within `limit`: a
/// reader or analysis that hangs (or fills memory slowly) on hostile input fails instead of
/// stalling the suite. A panic in `f` is the test's panic.
#[allow(dead_code)]
pub fn within<T: Send + 'static>(limit: Duration, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = std::sync::mpsc::channel();
    let worker = std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    match rx.recv_timeout(limit) {
        Ok(v) => v,
        Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
            panic!("still running after {limit:?}")
        }
        Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
            std::panic::resume_unwind(worker.join().expect_err("sent nothing, so it panicked"))
        }
    }
}
