//! The Python package (crates/rtsleuth-py): `pip install` into a fresh venv builds it from
//! the repo, then crates/rtsleuth-py/tests/test_package.py compares its DataFrames with this
//! CLI's JSON on the lab's hardirq run, row for row, and its errors with the CLI's messages;
//! docs/python_example.py, the README's notebook example, must run and name the injection.
//!
//! Needs python3 with `venv` and the package registry (maturin and polars come from PyPI):
//! skipped with a message when python3 is missing, a failure when `CI` is set.

mod common;

use common::{peers_ready, repo_root};
use std::path::Path;
use std::process::Command;

/// Runs `cmd` in the repo root and fails the test with its output unless it succeeds.
fn check(cmd: &mut Command, what: &str) -> String {
    let out = cmd.current_dir(repo_root()).output().unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(out.status.success(), "{what} failed:\n{stdout}\n{stderr}");
    format!("{stdout}{stderr}")
}

/// The lab's stock-kernel hardirq run: an injected hrtimer callback in hard-IRQ context.
const LAB_RUN: &str = "tests/fixtures/lab/stock/hardirq/trace.txt.zst";

#[test]
fn pip_install_builds_a_package_that_matches_the_cli() {
    let venv: [&[&str]; 1] = [&["python3", "-c", "import venv"]];
    if !peers_ready(&venv, "python3 with venv; Debian: python3-venv") {
        return;
    }
    let venv = tempfile::tempdir().unwrap();
    let bin = |name: &str| venv.path().join("bin").join(name);
    check(
        Command::new("python3")
            .args(["-m", "venv"])
            .arg(venv.path()),
        "python3 -m venv",
    );
    check(
        Command::new(bin("pip"))
            .args(["install", "-q", "--disable-pip-version-check"])
            .arg(Path::new("crates/rtsleuth-py"))
            .arg("matplotlib"),
        "pip install crates/rtsleuth-py matplotlib",
    );
    let report = check(
        Command::new(bin("python"))
            .args(["crates/rtsleuth-py/tests/test_package.py", "-v"])
            .env("RTSLEUTH", env!("CARGO_BIN_EXE_rtsleuth"))
            .env("LAB_RUN", LAB_RUN),
        "the package's tests",
    );
    println!("{report}");
    assert!(report.contains("\nOK"), "{report}");
    let png = venv.path().join("example.png");
    let example = check(
        Command::new(bin("python"))
            .args(["docs/python_example.py", LAB_RUN])
            .arg(&png),
        "docs/python_example.py",
    );
    println!("{example}");
    // The lab injected a 30 ms hrtimer callback in hard-IRQ context (its README).
    assert!(example.contains("(hardirq)"), "{example}");
    assert!(std::fs::metadata(&png).unwrap().len() > 10_000);
}
