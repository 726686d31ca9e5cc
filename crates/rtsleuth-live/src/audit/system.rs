//! The read-only view of a machine the audit looks through. Every path is resolved under a root
//! directory, so the same audit runs on the live system (`/`) and on a fixture tree captured
//! from another machine; and every read is bounded and forgiving, because a missing or odd
//! kernel file is a finding ("unknown"), not a failure.

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::PathBuf;

/// The most the audit reads of one file: kernel attribute files are a few bytes, the largest
/// it reads whole (`/proc/interrupts` on a big machine) stay well under this.
const MAX_READ: u64 = 4 << 20;

/// A machine's `/proc` and `/sys` (and `/boot`) as seen from `root`.
#[derive(Clone, Debug)]
pub struct SystemView {
    root: PathBuf,
}

impl SystemView {
    /// The view of the files under `root`; `/` is the running system.
    pub fn new(root: impl Into<PathBuf>) -> SystemView {
        SystemView { root: root.into() }
    }

    /// Where an absolute system path lives under the root.
    pub fn path(&self, path: &str) -> PathBuf {
        self.root.join(path.trim_start_matches('/'))
    }

    /// The file's text with surrounding whitespace trimmed, or `None` when it cannot be read
    /// (absent, refused, a directory). Invalid UTF-8 is replaced rather than refused.
    pub fn read(&self, path: &str) -> Option<String> {
        let mut bytes = Vec::new();
        File::open(self.path(path))
            .ok()?
            .take(MAX_READ)
            .read_to_end(&mut bytes)
            .ok()?;
        Some(String::from_utf8_lossy(&bytes).trim().to_string())
    }

    /// The file's lines, streamed (for files too large to want whole, such as a kernel
    /// config or `available_events`); reading stops quietly at the first error.
    pub fn lines(&self, path: &str) -> Option<impl Iterator<Item = String>> {
        let file = File::open(self.path(path)).ok()?;
        Some(lines_of(BufReader::new(file)))
    }

    /// The names in a directory, sorted; empty when it cannot be listed.
    pub fn list(&self, path: &str) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(self.path(path))
            .into_iter()
            .flatten()
            .filter_map(|e| e.ok()?.file_name().into_string().ok())
            .collect();
        names.sort();
        names
    }
}

/// Lines of a reader, lossy UTF-8, bounded to [`MAX_READ`] bytes in all.
pub(super) fn lines_of(reader: impl BufRead) -> impl Iterator<Item = String> {
    let mut reader = reader.take(MAX_READ);
    let mut buf = Vec::new();
    std::iter::from_fn(move || {
        buf.clear();
        match reader.read_until(b'\n', &mut buf) {
            Ok(0) | Err(_) => None,
            Ok(_) => Some(String::from_utf8_lossy(&buf).trim_end().to_string()),
        }
    })
}

/// `name` parsed as `prefix` followed by a number (`cpu3`, `state2`).
pub(super) fn numbered(name: &str, prefix: &str) -> Option<usize> {
    name.strip_prefix(prefix)?.parse().ok()
}
