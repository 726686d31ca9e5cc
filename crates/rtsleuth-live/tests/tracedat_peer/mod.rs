//! Reading a written trace.dat back two ways: with rtsleuth's reader and with `trace-cmd
//! report`, the independent peer. The report's lines are parsed by the core crate's test
//! helper, so both crates read trace-cmd the same way.

#[path = "../../../rtsleuth-analyze/tests/common/mod.rs"]
mod core_common;

pub use core_common::ReportRow;
use std::path::Path;
use std::process::Command;

/// rtsleuth's reading of `path`.
pub use core_common::read_rows as ours;

/// `trace-cmd report -t -R` of `path` (it must succeed); `None` when trace-cmd is not
/// installed, which fails under CI.
pub fn trace_cmd(path: &Path) -> Option<(Vec<ReportRow>, String)> {
    let out = match Command::new("trace-cmd")
        .args(["report", "-t", "-R", "-i"])
        .arg(path)
        .output()
    {
        Ok(o) => o,
        Err(e) if std::env::var_os("CI").is_some() => panic!("CI must have trace-cmd: {e}"),
        Err(_) => {
            println!("skipped: trace-cmd is not installed");
            return None;
        }
    };
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "trace-cmd report failed on {}: {stderr}",
        path.display()
    );
    let re = regex::Regex::new(r"^\s*(.*)-(\d+)\s+\[(\d+)\]\s+(\d+)\.(\d{9}):\s+(\w+):\s?(.*)$")
        .unwrap();
    Some((core_common::report_rows(&text, &re, 1), text))
}
