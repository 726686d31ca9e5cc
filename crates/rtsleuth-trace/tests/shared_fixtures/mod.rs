//! Traces from other people's machines live in `../shared/fixtures/realworld/` beside the
//! clone. A test that needs one skips (printing `skipped: ...`) when it is absent, unless `CI`
//! is set: CI always has the folder, so there a missing file fails the test.

use std::path::{Path, PathBuf};

/// The path of `rel` in the realworld folder (`""`: the folder itself), or `None`, after
/// saying so, when it is absent outside CI.
pub fn realworld(rel: &str) -> Option<PathBuf> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/fixtures/realworld")
        .join(rel);
    if p.exists() {
        return Some(p);
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "{} not found and CI is set",
        p.display()
    );
    println!("skipped: {} not found", p.display());
    None
}
