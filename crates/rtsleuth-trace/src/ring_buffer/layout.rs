//! Where a page's header fields sit, read from the `header_page` format the kernel exports
//! (trace.dat stores it): the commit word is a `local_t`, so its size is the kernel's long.

use super::Endian;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageLayout {
    pub endian: Endian,
    pub page_size: usize,
    pub timestamp_offset: usize,
    pub commit_offset: usize,
    pub commit_size: usize,
    pub data_offset: usize,
}

impl PageLayout {
    /// The layout of every kernel since 2.6.31 with a `long` of `long_size` bytes.
    pub fn standard(endian: Endian, page_size: usize, long_size: usize) -> PageLayout {
        PageLayout {
            endian,
            page_size,
            timestamp_offset: 0,
            commit_offset: 8,
            commit_size: long_size,
            data_offset: 8 + long_size,
        }
    }

    /// Reads the `header_page` format text (`field: u64 timestamp; offset:0; size:8; …`).
    /// Fields it does not name keep the standard layout's values.
    pub fn from_header_page(
        text: &str,
        endian: Endian,
        page_size: usize,
        long_size: usize,
    ) -> PageLayout {
        let mut l = PageLayout::standard(endian, page_size, long_size);
        for line in text.lines() {
            let Some((name, offset, size)) = field(line) else {
                continue;
            };
            match name {
                "timestamp" => l.timestamp_offset = offset,
                "commit" => {
                    l.commit_offset = offset;
                    l.commit_size = size;
                }
                "data" => l.data_offset = offset,
                _ => {}
            }
        }
        l
    }
}

/// The page size a `header_page` text describes: the `data` field's offset plus its size.
/// Since Linux 6.8 a buffer's sub-buffer (`buffer_subbuf_size_kb`) can be larger than a
/// memory page, and `trace_pipe_raw` hands out one per read; this is the kernel's own
/// statement of its size. `None` when there is no `data` field or the sum is not a power of
/// two (not a page).
pub fn page_size_from_header_page(text: &str) -> Option<usize> {
    let (_, offset, size) = text
        .lines()
        .filter_map(field)
        .find(|(name, _, _)| *name == "data")?;
    let page = offset + size;
    page.is_power_of_two().then_some(page)
}

/// `field: local_t commit; offset:8; size:8; signed:1;` (tab-separated) → ("commit", 8, 8).
fn field(line: &str) -> Option<(&str, usize, usize)> {
    let mut parts = line.split(';');
    let decl = parts.next()?.trim().strip_prefix("field:")?;
    let name = decl.trim().rsplit(' ').next()?;
    let (mut offset, mut size) = (None, None);
    for p in parts {
        let p = p.trim();
        if let Some(v) = p.strip_prefix("offset:") {
            offset = v.parse().ok();
        } else if let Some(v) = p.strip_prefix("size:") {
            size = v.parse().ok();
        }
    }
    Some((name, offset?, size?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_a_real_header_page_and_a_32_bit_one() {
        let x86 = "\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n\tfield: char data;\toffset:16;\tsize:4080;\tsigned:0;\n";
        assert_eq!(
            PageLayout::from_header_page(x86, Endian::Little, 4096, 8),
            PageLayout::standard(Endian::Little, 4096, 8)
        );
        let arm32 = "\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n\tfield: local_t commit;\toffset:8;\tsize:4;\tsigned:1;\n\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n\tfield: char data;\toffset:12;\tsize:4084;\tsigned:1;\n";
        let l = PageLayout::from_header_page(arm32, Endian::Little, 4096, 4);
        assert_eq!((l.commit_size, l.data_offset), (4, 12));
    }

    const X86: &str = "\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n\tfield: char data;\toffset:16;\tsize:4080;\tsigned:0;\n";

    #[test]
    fn data_offset_plus_size_is_the_page() {
        assert_eq!(page_size_from_header_page(X86), Some(4096));
        // An 8 KB sub-buffer (buffer_subbuf_size_kb=8) on a 32-bit kernel.
        let arm = "\tfield: local_t commit;\toffset:8;\tsize:4;\tsigned:1;\n\tfield: char data;\toffset:12;\tsize:8180;\tsigned:1;\n";
        assert_eq!(page_size_from_header_page(arm), Some(8192));
    }

    #[test]
    fn no_data_field_or_an_odd_size_is_no_page_size() {
        assert_eq!(
            page_size_from_header_page("field: u64 timestamp; offset:0; size:8;"),
            None
        );
        assert_eq!(
            page_size_from_header_page(&X86.replace("4080", "4000")),
            None
        );
        assert_eq!(
            page_size_from_header_page(&X86.replace("size:4080", "size:lots")),
            None
        );
    }
}
