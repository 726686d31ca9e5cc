//! Opening both sides: a JSON document is parsed, a trace is read once into `latency` and
//! `explain --threshold`; then what both sides have is compared.

use super::compare::{compare, Compared};
use super::run::{Definition, Run, Select};
use super::DiffError;
use crate::explain::{Explain, ExplainOptions};
use crate::latency::{Latency, LatencyOptions};
use rtsleuth_trace::input::{Format, Input};
use rtsleuth_trace::read;
use serde_json::Value;
use std::io::Read;

/// `explain`'s threshold when neither `--threshold` nor an explain JSON gives one: the value
/// the README's examples use, well above this VM's 10-50 µs noise and below a typical RT budget.
pub const DEFAULT_THRESHOLD_US: f64 = 100.0;

/// A JSON document is a few MB at most (`explain --all`); anything larger is not one.
const MAX_JSON_BYTES: u64 = 256 << 20;

/// The two runs and what they have in common.
#[derive(Debug, Clone)]
pub struct Diff {
    pub base: Run,
    pub new: Run,
    /// Latency compared (both sides have it, measured the same way).
    pub latency: bool,
    /// The threshold of the spikes whose causes are compared, when they are.
    pub causes_threshold_us: Option<f64>,
    pub compared: Compared,
    /// What was not compared and why, then each side's own warnings.
    pub warnings: Vec<String>,
}

enum Opened {
    Json(Value),
    /// A soak's findings file, as its explain-shaped document.
    Findings(Value),
    Trace(Input),
}

/// Opens, reads and compares `base` and `new`.
pub fn diff(
    base: &str,
    new: &str,
    select: &Select,
    threshold_us: Option<f64>,
) -> Result<Diff, DiffError> {
    let (b, n) = (open(base)?, open(new)?);
    // A trace's spikes are cut where the other side's explain JSON cut them.
    let from_json = |o: &Opened| match o {
        Opened::Json(v) | Opened::Findings(v) => v.get("threshold_us").and_then(Value::as_f64),
        Opened::Trace(_) => None,
    };
    let threshold = threshold_us
        .or_else(|| from_json(&b))
        .or_else(|| from_json(&n))
        .unwrap_or(DEFAULT_THRESHOLD_US);
    let base_run = run(base, b, select, threshold)?;
    let new_run = run(new, n, select, threshold)?;
    join(base_run, new_run)
}

fn open(path: &str) -> Result<Opened, DiffError> {
    // A soak's findings file already holds explained spikes: its causes, as explain's JSON.
    if crate::soak::is_findings_file(path)? {
        return Ok(Opened::Findings(crate::soak::document(path, 0)?.json));
    }
    let mut input = Input::open(path)?;
    if input.format != Format::Json {
        return Ok(Opened::Trace(input));
    }
    let mut text = Vec::new();
    (&mut input.reader)
        .take(MAX_JSON_BYTES)
        .read_to_end(&mut text)
        .map_err(|cause| rtsleuth_trace::Error::Io {
            path: path.to_string(),
            cause,
        })?;
    serde_json::from_slice(&text)
        .map(Opened::Json)
        .map_err(|cause| DiffError::Json {
            input: path.to_string(),
            cause,
        })
}

fn run(path: &str, opened: Opened, select: &Select, threshold: f64) -> Result<Run, DiffError> {
    let input = match opened {
        Opened::Json(doc) => return Run::from_json(path, &doc, select),
        Opened::Findings(doc) => {
            let mut run = Run::from_json(path, &doc, select)?;
            run.what = format!("soak findings, {}", crate::soak::SCHEMA);
            return Ok(run);
        }
        Opened::Trace(input) => input,
    };
    let what = input.format.name().to_string();
    let mut sink = (
        Explain::new(ExplainOptions {
            comms: select.comms.clone(),
            all: select.all,
            top: 0,
            threshold_us: Some(threshold),
            ..ExplainOptions::default()
        }),
        Latency::new(LatencyOptions {
            comms: select.comms.clone(),
            ..LatencyOptions::default()
        }),
    );
    let info = read::read(input, &mut sink)?;
    let (mut explain, latency) = sink;
    let (explain, latency) = (explain.document(&info), latency.document(&info));
    Run::from_documents(path, what, Some(&latency.json), Some(&explain.json), select)
}

/// What the runs have in common, compared; an error when that is nothing.
fn join(base: Run, new: Run) -> Result<Diff, DiffError> {
    let refuse = |why: String| DiffError::Incomparable {
        base: base.input.clone(),
        new: new.input.clone(),
        why,
    };
    let mut warnings = Vec::new();
    let latency = match (base.latency, new.latency) {
        (Some(b), Some(n)) if b != n => return Err(refuse(format!(
            "{} measures latency as {} and {} as {}; compare measure JSON with measure JSON, traces and latency JSON with each other",
            base.what, definition(b), new.what, definition(n)
        ))),
        (Some(_), Some(_)) => true,
        (b, n) => {
            if b.is_some() || n.is_some() {
                warnings.push(format!("wake-up latency not compared: {} has none", lacking(&base, &new, b.is_none())));
            }
            false
        }
    };
    let causes = match (base.causes_threshold_us, new.causes_threshold_us) {
        (Some(b), Some(n)) if b != n => {
            return Err(refuse(format!(
                "causes over wake-ups at least {b} us late against {n} us; give both the same --threshold"
            )))
        }
        (Some(b), Some(_)) => Some(b),
        (b, n) => {
            if b.is_some() || n.is_some() {
                warnings.push(format!(
                    "causes not compared: {} has none",
                    lacking(&base, &new, b.is_none())
                ));
            }
            None
        }
    };
    if !latency && causes.is_none() {
        return Err(refuse(format!(
            "nothing in common ({} has {}, {} has {})",
            base.what,
            has(&base),
            new.what,
            has(&new)
        )));
    }
    let compared = compare(&base, &new, latency, causes.is_some());
    for run in [&base, &new] {
        warnings.extend(run.warnings.iter().map(|w| format!("{}: {w}", run.input)));
    }
    Ok(Diff {
        base,
        new,
        latency,
        causes_threshold_us: causes,
        compared,
        warnings,
    })
}

fn definition(d: Definition) -> &'static str {
    match d {
        Definition::Wakeup => "wake-up latency (sched_waking to the switch that runs the task)",
        Definition::Measured => {
            "measured latency (the measuring thread's clock against the deadline it slept to)"
        }
    }
}

fn lacking(base: &Run, new: &Run, base_lacks: bool) -> String {
    let r = if base_lacks { base } else { new };
    format!("{} ({})", r.input, r.what)
}

fn has(r: &Run) -> &'static str {
    match (r.latency.is_some(), r.causes_threshold_us.is_some()) {
        (true, _) => "latency only",
        (false, true) => "causes only",
        (false, false) => "neither",
    }
}
