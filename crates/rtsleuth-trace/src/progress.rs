//! How far the readers of this process have got, for a progress display: bytes of trace
//! consumed and events handed to the analyses, summed over every trace being read (a set reads
//! several at once).
//!
//! Process-wide counters rather than a handle passed down through every reader, because they
//! are statistics only: nothing in the library reads them back to decide anything, each reader
//! has one natural place to add to them (a block of text, a ring-buffer page, a Perfetto
//! packet), and a relaxed add per block costs nothing next to the block's parsing. Bytes are
//! those the reader parses: the decompressed text of a `.zst`, a trace.dat's pages.

use std::sync::atomic::{AtomicU64, Ordering};

static BYTES: AtomicU64 = AtomicU64::new(0);
static EVENTS: AtomicU64 = AtomicU64::new(0);

pub(crate) fn add_bytes(n: u64) {
    BYTES.fetch_add(n, Ordering::Relaxed);
}

pub(crate) fn add_events(n: u64) {
    EVENTS.fetch_add(n, Ordering::Relaxed);
}

/// Bytes read and events delivered since the process started.
pub fn read_so_far() -> (u64, u64) {
    (
        BYTES.load(Ordering::Relaxed),
        EVENTS.load(Ordering::Relaxed),
    )
}
