//! The README's Spark SQL queries, run in PySpark's local mode on the lab's Parquet tables and
//! compared with its DuckDB queries on the same files, so that a reader on Spark gets the
//! answers the README promises, and the two blocks of the README cannot drift apart.
//!
//! Needs python3 with `pyspark` and `duckdb`, and a Java runtime for Spark: skipped with a
//! message when one is missing, a failure when `CI` is set (.ci/run installs them).

mod common;

use common::{ok, peers_ready, repo_root};
use std::process::Command;

/// The README's Spark queries and DuckDB queries return the same rows on `explain --parquet`
/// of the lab, and those rows hold what the lab injected (its expected.json files).
#[test]
fn spark_and_duckdb_agree_on_the_readme_queries() {
    let probes: [&[&str]; 3] = [
        &["python3", "-c", "import pyspark"],
        &["python3", "-c", "import duckdb"],
        &["java", "-version"],
    ];
    if !peers_ready(
        &probes,
        ".ci/run installs pyspark, duckdb and a Java 17 runtime",
    ) {
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
