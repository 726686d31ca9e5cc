//! `rtsleuth._native`: the analyses of rtsleuth-analyze for Python. Each function reads a
//! trace with the interpreter released and returns the analysis' JSON document, the very one
//! `rtsleuth CMD --json` prints; the `rtsleuth` Python package turns its rows into DataFrames.
//! There is no second implementation: options map one to one onto the CLI's.

use pyo3::create_exception;
use pyo3::exceptions::{PyException, PyValueError};
use pyo3::prelude::*;
use rtsleuth_analyze::document::Document;
use rtsleuth_analyze::explain::{due_ns_of_seconds, Explain, ExplainOptions};
use rtsleuth_analyze::irq::{Irq, IrqOptions};
use rtsleuth_analyze::latency::{Latency, LatencyOptions};
use rtsleuth_analyze::stats::Stats;
use rtsleuth_analyze::wq::{Wq, WqOptions};
use rtsleuth_trace::input::Input;
use rtsleuth_trace::read::{self, latency_tracer, EventSink, TraceInfo};

create_exception!(
    _native,
    TraceError,
    PyException,
    "A trace rtsleuth cannot read or measure; the message is the CLI's."
);

/// Opens `path` and feeds every event to `sink`, as the CLI does.
fn read_into(path: &str, sink: &mut (dyn EventSink + Send)) -> rtsleuth_trace::Result<TraceInfo> {
    read::read(Input::open(path)?, sink)
}

/// Runs `analyse` without the GIL (reading is the slow part, and other Python threads may go
/// on) and hands back its document's JSON, or the error the CLI would print.
fn document_json(
    py: Python<'_>,
    analyse: impl FnOnce() -> rtsleuth_trace::Result<Document> + Send,
) -> PyResult<String> {
    let doc = py
        .detach(analyse)
        .map_err(|e| TraceError::new_err(e.to_string()))?;
    Ok(doc.json.to_string())
}

/// `rtsleuth explain --json`: the worst wake-ups and what made each late.
#[pyfunction]
#[pyo3(signature = (path, all=false, top=5, threshold_us=None, pids=None, tasks=None, preemptions=false, due=None))]
#[allow(clippy::too_many_arguments)]
fn explain(
    py: Python<'_>,
    path: String,
    all: bool,
    top: usize,
    threshold_us: Option<f64>,
    pids: Option<Vec<i32>>,
    tasks: Option<Vec<String>>,
    preemptions: bool,
    due: Option<f64>,
) -> PyResult<String> {
    let (pids, comms) = (pids.unwrap_or_default(), tasks.unwrap_or_default());
    if all && !(pids.is_empty() && comms.is_empty()) {
        return Err(PyValueError::new_err(
            "all=True explains every task; it cannot be combined with pids or tasks",
        ));
    }
    let due_ns = (due.map(|secs| {
        due_ns_of_seconds(secs)
            .ok_or_else(|| PyValueError::new_err(format!("due={secs} is not a time in seconds")))
    }))
    .transpose()?;
    let opts = ExplainOptions {
        pids,
        comms,
        all,
        top,
        threshold_us,
        preemptions,
        irq: None,
        works: false,
        due_ns,
    };
    document_json(py, || {
        let mut explain = Explain::new(opts);
        let info = read_into(&path, &mut explain)?;
        info.require_time()?;
        Ok(explain.document(&info))
    })
}

/// `rtsleuth latency --hist --json`, each task's row with its own log2 histogram.
#[pyfunction]
#[pyo3(signature = (path, pids=None, tasks=None, rt_only=false))]
fn latency(
    py: Python<'_>,
    path: String,
    pids: Option<Vec<i32>>,
    tasks: Option<Vec<String>>,
    rt_only: bool,
) -> PyResult<String> {
    let opts = LatencyOptions {
        pids: pids.unwrap_or_default(),
        comms: tasks.unwrap_or_default(),
        rt_only,
        hist: true,
        task_histograms: true,
        ..LatencyOptions::default()
    };
    document_json(py, || {
        let mut latency = Latency::new(opts);
        let info = read_into(&path, &mut latency)?;
        info.require_time()?;
        Ok(latency.document(&info))
    })
}

/// `rtsleuth stats --json`: what the trace holds (counter clocks allowed, as in the CLI).
#[pyfunction]
fn stats(py: Python<'_>, path: String) -> PyResult<String> {
    document_json(py, || {
        let mut stats = Stats::new();
        let info = read_into(&path, &mut stats)?;
        Ok(stats.document(&info))
    })
}

/// `rtsleuth irq --json`: interrupt, softirq and hrtimer handler times, irqs-off sections.
#[pyfunction]
#[pyo3(signature = (path, cpu=None, top=10, late_us=100.0))]
fn irq(
    py: Python<'_>,
    path: String,
    cpu: Option<u32>,
    top: usize,
    late_us: f64,
) -> PyResult<String> {
    let opts = IrqOptions { cpu, top, late_us };
    document_json(py, || {
        let mut irq = Irq::new(opts);
        let (info, section) = latency_tracer::read(Input::open(&path)?, &mut irq)?;
        info.require_time()?;
        Ok(irq.document(&info, section.as_ref()))
    })
}

/// `rtsleuth wq --json`: workqueue waits and executions.
#[pyfunction]
#[pyo3(signature = (path, top=10))]
fn wq(py: Python<'_>, path: String, top: usize) -> PyResult<String> {
    document_json(py, || {
        let mut wq = Wq::new(WqOptions { top });
        let info = read_into(&path, &mut wq)?;
        info.require_time()?;
        Ok(wq.document(&info))
    })
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("TraceError", m.py().get_type::<TraceError>())?;
    m.add_function(wrap_pyfunction!(explain, m)?)?;
    m.add_function(wrap_pyfunction!(latency, m)?)?;
    m.add_function(wrap_pyfunction!(stats, m)?)?;
    m.add_function(wrap_pyfunction!(irq, m)?)?;
    m.add_function(wrap_pyfunction!(wq, m)?)?;
    Ok(())
}
