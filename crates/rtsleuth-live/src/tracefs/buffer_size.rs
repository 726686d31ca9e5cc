//! What a `buffer_size_kb` file says, read as what it means.
//!
//! After boot the top-level ring buffer is a stub of one page per CPU, and the top-level file
//! reads `7 (expanded: 1408)`: 7 KB now, 1408 KB (the configured size) on first use. The kernel
//! expands it the first time anything traces into it (selecting a tracer, enabling an event),
//! and nothing can make it a stub again: writing `7` back gives a working 7 KB buffer, which
//! would lose the next user almost every event. So a restore treats "stub that becomes E" and
//! "E, rounded up to whole sub-buffers" as the same state, and reports the expansion instead of
//! undoing it. The per-CPU files read just the stub size (`7`); only the top-level file says
//! that it is a stub.

/// The state one `buffer_size_kb` file reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BufferSize {
    /// Every CPU's buffer holds this many KB.
    Kb(u64),
    /// The boot-time stub, not yet used: `stub_kb` now, `expands_to_kb` on first use.
    Unexpanded { stub_kb: u64, expands_to_kb: u64 },
    /// The CPUs' buffers differ in size (`X`); each per-CPU file has its own.
    Mixed,
}

impl BufferSize {
    /// Parses the text of a `buffer_size_kb` file; `None` when it is none of the known forms.
    pub fn parse(text: &str) -> Option<BufferSize> {
        let text = text.trim();
        if text == "X" {
            return Some(BufferSize::Mixed);
        }
        match text.split_once("(expanded:") {
            Some((stub, expanded)) => Some(BufferSize::Unexpanded {
                stub_kb: stub.trim().parse().ok()?,
                expands_to_kb: expanded.trim().trim_end_matches(')').trim().parse().ok()?,
            }),
            None => text.parse().ok().map(BufferSize::Kb),
        }
    }

    /// The value that gives this state back when written: the expanded size for a stub (the
    /// closest state a write can reach), nothing for `X` (only the per-CPU files can).
    pub fn restore_value(self) -> Option<u64> {
        match self {
            BufferSize::Kb(kb) => Some(kb),
            BufferSize::Unexpanded { expands_to_kb, .. } => Some(expands_to_kb),
            BufferSize::Mixed => None,
        }
    }
}

/// Whether `kb` is what expanding a stub to `expands_to_kb` gives. The kernel rounds the size
/// up to whole sub-buffers (each `subbuf_kb` with a small header), so the result is at most one
/// sub-buffer larger: 1408 becomes 1410 with 4 KB sub-buffers.
pub fn is_expansion(expands_to_kb: u64, kb: u64, subbuf_kb: u64) -> bool {
    (expands_to_kb..=expands_to_kb + subbuf_kb.max(1)).contains(&kb)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_form_the_kernel_prints_is_read() {
        assert_eq!(
            BufferSize::parse("7 (expanded: 1408)\n"),
            Some(BufferSize::Unexpanded {
                stub_kb: 7,
                expands_to_kb: 1408
            })
        );
        assert_eq!(BufferSize::parse("1410\n"), Some(BufferSize::Kb(1410)));
        assert_eq!(BufferSize::parse("X\n"), Some(BufferSize::Mixed));
        assert_eq!(BufferSize::parse("lots"), None);
        assert_eq!(BufferSize::parse("7 (expanded: lots)"), None);
    }

    #[test]
    fn a_stub_is_restored_as_its_expanded_size_never_as_the_stub() {
        let stub = BufferSize::parse("7 (expanded: 1408)").unwrap();
        assert_eq!(stub.restore_value(), Some(1408));
        assert_eq!(BufferSize::Kb(1410).restore_value(), Some(1410));
        assert_eq!(BufferSize::Mixed.restore_value(), None);
    }

    #[test]
    fn the_kernels_rounding_is_an_expansion_and_anything_else_is_not() {
        // 1408 KB in 4080-byte data pages is 354 pages, read back as 1410 KB.
        assert!(is_expansion(1408, 1410, 4));
        assert!(is_expansion(1408, 1408, 4));
        assert!(!is_expansion(1408, 7, 4));
        assert!(!is_expansion(1408, 2048, 4));
        assert!(!is_expansion(1408, 1413, 4));
    }
}
