//! Letting go of the pages of a mapped file that a reader has passed. They stay in the page
//! cache, but no longer count in the process's resident memory, so reading a 10 GB file does
//! not make a 10 GB process.

/// Releases the whole pages inside `map[from..to]` and returns where they end (the offset in
/// `map` to release from next time; `from` when there were none). Reading them again faults
/// them back in from the page cache, with the same bytes.
///
/// # Safety
/// `map` must lie in a read-only, private mapping of a file, never in anonymous or heap
/// memory, whose released pages would read back as zeros.
pub unsafe fn release(map: &[u8], from: usize, to: usize) -> usize {
    let page = page_size();
    let base = map.as_ptr() as usize;
    let start = (base + from.min(map.len())).div_ceil(page) * page;
    let end = (base + to.min(map.len())) / page * page;
    if end > start {
        // SAFETY: the range is whole pages of `map`, which the caller vouches is a file
        // mapping; failing to advise changes nothing but memory use.
        unsafe { libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_DONTNEED) };
        return end - base;
    }
    from
}

fn page_size() -> usize {
    // SAFETY: sysconf has no preconditions.
    let n = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    usize::try_from(n).ok().filter(|&n| n > 0).unwrap_or(4096)
}
