//! Who explains a capture. The CLI runs `rtsleuth explain` as a child process: the soak's
//! memory is locked (mlockall), so memory an in-process explain frees can never go back to the
//! kernel, and the allocator's high-water mark would creep over hours; a child's memory is not
//! locked and goes back when it exits. In-process is for callers without the binary (tests,
//! other programs built on this crate).

use crate::measure::spike_finding::explain;
use crate::measure::thread::Spike;
use rtsleuth_analyze::document::fmt_ts_nanos;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

#[derive(Debug, Clone)]
pub enum Explainer {
    InProcess,
    /// The rtsleuth binary to run `explain --pid TID --due DEADLINE --top 1 --json` with.
    Program(PathBuf),
}

impl Explainer {
    /// explain's JSON document for `spike`'s wake-up in the capture at `path`, or why there
    /// is none.
    pub fn explain(&self, path: &Path, spike: &Spike) -> Result<Value, String> {
        match self {
            Explainer::InProcess => explain(path, spike)
                .map(|doc| doc.json)
                .map_err(|e| e.to_string()),
            Explainer::Program(program) => run(program, path, spike),
        }
    }
}

fn run(program: &Path, path: &Path, spike: &Spike) -> Result<Value, String> {
    let (tid, due) = (spike.tid.to_string(), fmt_ts_nanos(spike.expected_ns));
    let out = Command::new(program)
        .args([
            "explain", "--pid", &tid, "--due", &due, "--top", "1", "--json",
        ])
        .arg(path)
        .output()
        .map_err(|e| format!("running {}: {e}", program.display()))?;
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        return Err(format!(
            "explain failed ({}): {}",
            out.status,
            stderr.lines().next().unwrap_or("")
        ));
    }
    serde_json::from_slice(&out.stdout).map_err(|e| format!("explain printed no JSON: {e}"))
}
