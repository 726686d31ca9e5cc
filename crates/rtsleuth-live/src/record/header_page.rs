//! A buffer's `events/header_page` and `header_event`, and the page size the former gives
//! ([`page_size_from_header_page`]).

use crate::LiveError;
use rtsleuth_trace::ring_buffer::page_size_from_header_page;
use std::io::Read;
use std::path::Path;

/// The most a header file holds (they are a few hundred bytes).
const HEADER_MAX: usize = 64 * 1024;

/// Reads `events/header_page` or `events/header_event` in one read(2). These files answer
/// only the first read of an open file: a second read at a later offset returns end of file
/// (Linux 6.18), so a reader that starts small, as `std::fs::read` does, gets 32 bytes.
pub fn read_header(path: &Path) -> Result<Vec<u8>, LiveError> {
    let mut buf = vec![0; HEADER_MAX];
    let n = std::fs::File::open(path)
        .and_then(|mut f| f.read(&mut buf))
        .map_err(|e| LiveError::file(path, e))?;
    buf.truncate(n);
    Ok(buf)
}

/// Reads `<trace_dir>/events/header_page`: its text and the page size it gives.
pub fn read(trace_dir: &Path) -> Result<(Vec<u8>, usize), LiveError> {
    let path = trace_dir.join("events/header_page");
    let text = read_header(&path)?;
    let size = page_size_from_header_page(&String::from_utf8_lossy(&text)).ok_or_else(|| {
        LiveError::Unsupported(format!(
            "{}: no ring-buffer page size in it (expected a `char data` field whose offset and size add up to a power of two)",
            path.display()
        ))
    })?;
    Ok((text, size))
}
