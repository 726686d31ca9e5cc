//! Support for tests that touch the running system, shared by this crate's and the CLI's tests.
//!
//! Live tests need root and tracefs. Where those are missing they are skipped with the reason
//! printed, except under `CI=true`, where a missing capability is a failure: CI runs as root on a
//! machine that has them, so a skip there would hide a broken environment.

use std::fs::File;
use std::os::fd::AsRawFd;
use std::path::PathBuf;

/// Held while a test uses tracefs: tests in parallel threads and other test binaries take turns.
pub struct LiveLock {
    _file: File,
}

/// The tracefs root if this process may change tracefs and scheduling, holding the lock that
/// serialises live tests; `None` (after saying why) when it may not and this is not CI.
pub fn live_tracefs() -> Option<(PathBuf, LiveLock)> {
    let why = if unsafe { libc::geteuid() } != 0 {
        Some("not root".to_owned())
    } else {
        match crate::tracefs::Tracefs::find_mounted() {
            Ok(Some(root)) => {
                let lock = lock();
                return Some((root, lock));
            }
            Ok(None) => Some("tracefs is not mounted".to_owned()),
            Err(e) => Some(e.to_string()),
        }
    };
    let why = why.unwrap_or_default();
    assert!(
        std::env::var("CI").as_deref() != Ok("true"),
        "live test cannot run under CI=true: {why}"
    );
    eprintln!("skipped: live test needs root and tracefs ({why})");
    None
}

fn lock() -> LiveLock {
    let file = File::options()
        .create(true)
        .truncate(false)
        .write(true)
        .open("/tmp/rtsleuth-tracefs.lock")
        .expect("the live-test lock file");
    // SAFETY: a valid open descriptor; the lock is released when the file is closed.
    let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) };
    assert_eq!(rc, 0, "flock: {}", std::io::Error::last_os_error());
    LiveLock { _file: file }
}
