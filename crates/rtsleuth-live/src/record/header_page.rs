//! The ring buffer's page size, read from a buffer's `events/header_page`.
//!
//! Since Linux 6.8 a buffer's sub-buffer size (`buffer_subbuf_size_kb`) can differ from the
//! memory page size, and `trace_pipe_raw` hands out one sub-buffer per read. The header is the
//! kernel's own statement of that size: the `data` field's offset plus its size.

use crate::LiveError;
use std::io::Read;
use std::path::Path;

/// The page size the `header_page` text describes, `None` when it names no `data` field or
/// the sum is not a power of two (not a page).
pub fn page_size(text: &str) -> Option<usize> {
    let line = text.lines().find(|l| l.contains(" data;"))?;
    let value = |key: &str| -> Option<usize> {
        line.split(';')
            .find_map(|part| part.trim().strip_prefix(key))?
            .parse()
            .ok()
    };
    let size = value("offset:")? + value("size:")?;
    size.is_power_of_two().then_some(size)
}

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
    let size = page_size(&String::from_utf8_lossy(&text)).ok_or_else(|| {
        LiveError::Unsupported(format!(
            "{}: no ring-buffer page size in it (expected a `char data` field whose offset and size add up to a power of two)",
            path.display()
        ))
    })?;
    Ok((text, size))
}

#[cfg(test)]
mod tests {
    use super::page_size;

    const X86: &str = "\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n\tfield: char data;\toffset:16;\tsize:4080;\tsigned:0;\n";

    #[test]
    fn data_offset_plus_size_is_the_page() {
        assert_eq!(page_size(X86), Some(4096));
        // An 8 KB sub-buffer (buffer_subbuf_size_kb=8) on a 32-bit kernel.
        let arm = "\tfield: local_t commit;\toffset:8;\tsize:4;\tsigned:1;\n\tfield: char data;\toffset:12;\tsize:8180;\tsigned:1;\n";
        assert_eq!(page_size(arm), Some(8192));
    }

    #[test]
    fn no_data_field_or_an_odd_size_is_none() {
        assert_eq!(page_size("field: u64 timestamp; offset:0; size:8;"), None);
        assert_eq!(page_size(&X86.replace("4080", "4000")), None);
        assert_eq!(page_size(&X86.replace("size:4080", "size:lots")), None);
    }
}
