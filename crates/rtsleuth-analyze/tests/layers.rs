//! The crates' layering, as cargo resolves it: reading and analysing pull in no rendering
//! library, and no crate depends on one above it (README, "Layout").

use std::process::Command;

/// The crates `package` depends on (normal dependencies, not dev or build), by name.
fn dependencies(package: &str) -> Vec<String> {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .args([
            "tree",
            "--offline",
            "--locked",
            "-e",
            "normal",
            "--prefix",
            "none",
        ])
        .args(["--format", "{p}", "-p", package])
        .current_dir(root)
        .output()
        .expect("cargo tree runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().next().map(str::to_string))
        .collect()
}

fn assert_none_of(package: &str, forbidden: &[&str]) {
    let deps = dependencies(package);
    assert!(deps.len() > 5, "{package}: {deps:?}");
    for f in forbidden {
        assert!(!deps.iter().any(|d| d == f), "{package} depends on {f}");
    }
}

#[test]
fn the_analyses_pull_in_no_rendering_library() {
    let rendering = [
        "maud",
        "plotters",
        "parquet",
        "parquet_derive",
        "rtsleuth-render",
    ];
    // The listing names them where they are used: the rendering crate has them all.
    let render = dependencies("rtsleuth-render");
    assert!(rendering[..4].iter().all(|r| render.iter().any(|d| d == r)));
    assert_none_of("rtsleuth-analyze", &rendering);
    assert_none_of("rtsleuth-live", &rendering);
}

#[test]
fn the_readers_know_no_analysis() {
    assert_none_of(
        "rtsleuth-trace",
        &[
            "rtsleuth-analyze",
            "rtsleuth-render",
            "rtsleuth-live",
            "maud",
            "parquet",
        ],
    );
}
