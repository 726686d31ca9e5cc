//! The README's Spark SQL queries, run in PySpark's local mode on the lab's Parquet tables and
//! compared with its DuckDB queries on the same files, so that a reader on Spark gets the
//! answers the README promises, and the two blocks of the README cannot drift apart.
//!
//! Needs python3 with `pyspark` and `duckdb`, and a Java runtime for Spark: skipped with a
//! message when one is missing, a failure when `CI` is set (.ci/run installs them).

mod common;

use common::{ok, repo_root};
use std::process::Command;

/// Whether the Spark test can run here. Without CI a missing piece skips it (a developer's
/// machine may have no JVM); in CI it must not pass silently by skipping.
fn spark_ready() -> bool {
    let works = |program: &str, args: &[&str]| {
        Command::new(program)
            .args(args)
            .output()
            .is_ok_and(|o| o.status.success())
    };
    let missing: Vec<&str> = [
        (
            "python3 -c 'import pyspark'",
            works("python3", &["-c", "import pyspark"]),
        ),
        (
            "python3 -c 'import duckdb'",
            works("python3", &["-c", "import duckdb"]),
        ),
        ("java -version", works("java", &["-version"])),
    ]
    .into_iter()
    .filter(|(_, ok)| !ok)
    .map(|(what, _)| what)
    .collect();
    if missing.is_empty() {
        return true;
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "CI must have pyspark, duckdb and java (.ci/run installs them); failing: {missing:?}"
    );
    println!(
        "skipped: failing: {} (python3 -m pip install pyspark duckdb; a Java 17 runtime)",
        missing.join(", ")
    );
    false
}

/// The README's Spark queries and DuckDB queries return the same rows on `explain --parquet`
/// of the lab, and those rows hold what the lab injected (its expected.json files).
#[test]
fn spark_and_duckdb_agree_on_the_readme_queries() {
    if !spark_ready() {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let out = d.path().to_str().unwrap();
    // `explain` writes every table the README's queries read (latency and histograms too).
    ok(&["explain", "--json", "--parquet", out, "tests/fixtures/lab"]);
    let script = repo_root().join("crates/rtsleuth/tests/spark_queries.py");
    let r = Command::new("python3")
        .arg(script)
        .args([out, "tests/fixtures/lab", "README.md"])
        .current_dir(repo_root())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&r.stdout);
    println!("{stdout}");
    assert!(
        r.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&r.stderr)
    );
    assert!(
        stdout.contains("spark and duckdb agree on 3 queries"),
        "{stdout}"
    );
}
