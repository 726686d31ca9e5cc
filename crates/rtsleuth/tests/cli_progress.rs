//! The progress line: on a terminal it shows bytes, their rate and events per second on
//! stderr and is cleared before the report; anywhere else (a pipe, a file, CI) nothing is
//! drawn, which every other CLI test checks too (`common::ok` allows only warnings on stderr).

mod common;

use common::{ok, repo_root};
use std::process::Command;

/// Runs `rtsleuth ARGS` on a pseudo-terminal (util-linux `script`) and returns what the
/// terminal received, stdout and stderr together.
fn on_a_terminal(args: &str) -> Option<String> {
    let bin = env!("CARGO_BIN_EXE_rtsleuth");
    let out = Command::new("script")
        .args(["-qec", &format!("{bin} {args}"), "/dev/null"])
        .current_dir(repo_root())
        .output();
    match out {
        Ok(o) if o.status.success() => Some(String::from_utf8_lossy(&o.stdout).into_owned()),
        other => {
            assert!(
                std::env::var_os("CI").is_none(),
                "script(1) failed: {other:?}"
            );
            println!("skipped: util-linux `script` cannot give a terminal here: {other:?}");
            None
        }
    }
}

#[test]
fn a_terminal_sees_the_line_and_then_the_report() {
    let trace = "tests/fixtures/recorded/fifo_above/trace.txt";
    let Some(tty) = on_a_terminal(&format!("stats {trace}")) else {
        return;
    };
    let size = std::fs::metadata(repo_root().join(trace)).unwrap().len();
    // indicatif's binary units: 2.41 MiB for this file.
    let total = format!("/{:.2} MiB", size as f64 / (1 << 20) as f64);
    assert!(tty.contains(&total), "{tty:?}");
    assert!(
        tty.contains(" M events ") && tty.contains(" M/s"),
        "{tty:?}"
    );
    // The last thing drawn before the report is the line being erased.
    let report = ok(&["stats", trace]);
    let first = report.lines().next().unwrap();
    let erased = tty.rfind("\u{1b}[2K").unwrap();
    assert!(tty[erased..].contains(first), "{tty:?}");
}

#[test]
fn a_set_shows_one_line_for_all_its_traces() {
    let Some(tty) = on_a_terminal(
        "latency tests/fixtures/recorded/fifo_above tests/fixtures/recorded/fifo_below",
    ) else {
        return;
    };
    assert!(
        tty.contains(" M events ") && tty.contains("== whole set: 2 traces =="),
        "{tty:?}"
    );
}
