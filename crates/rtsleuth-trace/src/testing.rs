//! Helpers for this crate's tests.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::Duration;

/// Runs `f` on a thread of its own and returns its result or its panic; fails the test if it
/// has not finished within `limit`, so that threads left waiting for each other fail a test
/// instead of stalling the suite.
pub fn finishes<T: Send + 'static>(
    limit: Duration,
    f: impl FnOnce() -> T + Send + 'static,
) -> std::thread::Result<T> {
    let (done, finished) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = done.send(catch_unwind(AssertUnwindSafe(f)));
    });
    finished
        .recv_timeout(limit)
        .unwrap_or_else(|_| panic!("still running after {limit:?}"))
}
