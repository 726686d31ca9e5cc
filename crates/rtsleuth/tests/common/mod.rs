//! Helpers shared by the CLI test files: running the binary from the repository root and
//! comparing its output with golden files (`UPDATE_GOLDEN=1` rewrites them).

// Each test file compiles its own copy of this module and uses only some of it.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

pub fn rtsleuth() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_rtsleuth"));
    c.current_dir(repo_root());
    c
}

pub fn run(args: &[&str]) -> Output {
    rtsleuth().args(args).output().unwrap()
}

/// Runs a command that must succeed with nothing on stderr but warnings (which `--json` and
/// `--csv` print there), and returns its stdout.
pub fn ok(args: &[&str]) -> String {
    let out = run(args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "rtsleuth {args:?} failed: {stderr}");
    assert!(
        stderr.lines().all(|l| l.starts_with("rtsleuth: warning: ")),
        "rtsleuth {args:?} wrote more than warnings to stderr: {stderr}"
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Whether every probe (a command and its arguments) succeeds here: the peers a test needs.
/// Without `CI` a failing one skips the test, with `install` as the hint (a developer's machine
/// may lack them); with `CI` set it fails the test, which must not pass by skipping.
pub fn peers_ready(probes: &[&[&str]], install: &str) -> bool {
    let failing: Vec<String> = probes
        .iter()
        .filter(|p| {
            !Command::new(p[0])
                .args(&p[1..])
                .output()
                .is_ok_and(|o| o.status.success())
        })
        .map(|p| p.join(" "))
        .collect();
    if failing.is_empty() {
        return true;
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "CI must have what these need ({install}); failing: {failing:?}"
    );
    println!("skipped: failing: {} ({install})", failing.join(", "));
    false
}

/// Compares `got` with the golden file, or rewrites it when `UPDATE_GOLDEN=1`.
pub fn golden(name: &str, got: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(name);
    if std::env::var("UPDATE_GOLDEN").as_deref() == Ok("1") {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, got).unwrap();
        return;
    }
    let want = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e} (run with UPDATE_GOLDEN=1 to create it)",
            path.display()
        )
    });
    if want != got {
        let line = want
            .lines()
            .zip(got.lines())
            .position(|(a, b)| a != b)
            .unwrap_or_else(|| want.lines().count().min(got.lines().count()));
        panic!(
            "{name} differs from the golden (first at line {}):\n want: {:?}\n  got: {:?}\n\
             (UPDATE_GOLDEN=1 rewrites the goldens)",
            line + 1,
            want.lines().nth(line),
            got.lines().nth(line)
        );
    }
}

pub mod live;
/// The core's tests find the realworld traces beside the clone; the CLI's use the same rule.
#[path = "../../../rtsleuth-trace/tests/shared_fixtures/mod.rs"]
mod shared_fixtures;
#[allow(unused_imports)] // as with dead_code above: only some test files use it
pub use shared_fixtures::realworld;
