//! Advising the kernel about memory by whole pages. Mostly letting go of the pages of a mapped
//! file that a reader has passed: they stay in the page cache, but no longer count in the
//! process's resident memory, so reading a 10 GB file does not make a 10 GB process. Also the
//! opposite, for memory about to be filled: making its pages present in one call.

use std::mem::MaybeUninit;

/// Releases the whole pages inside `map[from..to]` and returns where they end (the offset in
/// `map` to release from next time; `from` when there were none). Reading them again faults
/// them back in from the page cache, with the same bytes.
///
/// # Safety
/// `map` must lie in a read-only, private mapping of a file, never in anonymous or heap
/// memory, whose released pages would read back as zeros.
pub unsafe fn release(map: &[u8], from: usize, to: usize) -> usize {
    let base = map.as_ptr() as usize;
    let Some((start, end)) = whole_pages(base + from.min(map.len()), base + to.min(map.len()))
    else {
        return from;
    };
    // SAFETY: the range is whole pages of `map`, which the caller vouches is a file mapping;
    // failing to advise changes nothing but memory use.
    unsafe { libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_DONTNEED) };
    end - base
}

/// Makes the whole pages of `room`, memory about to be written, present at once (Linux's
/// `MADV_POPULATE_WRITE`): one call instead of a page fault per page as it fills. Elsewhere,
/// and on kernels before 5.14, which refuse the advice, the pages fault in as they are written.
pub fn populate<T>(room: &mut [MaybeUninit<T>]) {
    let start = room.as_mut_ptr() as usize;
    if let Some((start, end)) = whole_pages(start, start + std::mem::size_of_val(room)) {
        populate_pages(start, end);
    }
}

#[cfg(any(target_os = "linux", target_os = "android"))]
fn populate_pages(start: usize, end: usize) {
    // SAFETY: the pages lie inside a slice borrowed mutably and not yet initialised; populating
    // changes none of their bytes (it faults them in, as writing would).
    unsafe {
        libc::madvise(
            start as *mut libc::c_void,
            end - start,
            libc::MADV_POPULATE_WRITE,
        )
    };
}

#[cfg(not(any(target_os = "linux", target_os = "android")))]
fn populate_pages(_: usize, _: usize) {}

/// The whole pages between the addresses `start` and `end`, if there are any.
fn whole_pages(start: usize, end: usize) -> Option<(usize, usize)> {
    let page = page_size();
    let (start, end) = (start.div_ceil(page) * page, end / page * page);
    (end > start).then_some((start, end))
}

/// How far a reader has released a mapped region, and the step it releases in: the
/// bookkeeping of [`Behind`], for a reader that owns its map and so cannot keep a borrow of it
/// beside (the text reader).
#[derive(Debug)]
pub struct Steps {
    /// Everything before this offset has been released, in whole pages.
    released: usize,
    step: usize,
}

impl Steps {
    pub fn new(step: usize) -> Steps {
        Steps { released: 0, step }
    }

    /// The reader no longer needs `map[..offset]`: its whole pages are released once at
    /// least a step of them has gathered.
    ///
    /// # Safety
    /// As for [`release`]: `map` must lie in a read-only, private mapping of a file, the same
    /// one at every call.
    pub unsafe fn passed(&mut self, map: &[u8], offset: usize) {
        if offset >= self.released + self.step {
            // SAFETY: the caller vouches that `map` is a file mapping.
            self.released = unsafe { release(map, self.released, offset) };
        }
    }
}

/// A reader's progress through a mapped region, releasing the pages behind it a step at a
/// time: one place for the bookkeeping every mapped reader with a step needs.
pub struct Behind<'a> {
    map: &'a [u8],
    steps: Steps,
}

impl<'a> Behind<'a> {
    /// # Safety
    /// As for [`release`]: `map` must lie in a read-only, private mapping of a file.
    pub unsafe fn new(map: &'a [u8], step: usize) -> Behind<'a> {
        Behind {
            map,
            steps: Steps::new(step),
        }
    }

    /// The reader no longer needs `map[..offset]`: its whole pages are released once at
    /// least a step of them has gathered.
    pub fn passed(&mut self, offset: usize) {
        // SAFETY: `new`'s caller vouched that `map` is a file mapping.
        unsafe { self.steps.passed(self.map, offset) };
    }

    /// [`Behind::passed`] for a reader that reads the region to its end and has `remaining`
    /// bytes of it left.
    pub fn passed_all_but(&mut self, remaining: usize) {
        self.passed(self.map.len().saturating_sub(remaining));
    }
}

fn page_size() -> usize {
    // SAFETY: sysconf has no preconditions.
    let n = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    usize::try_from(n).ok().filter(|&n| n > 0).unwrap_or(4096)
}

#[cfg(test)]
mod tests {
    use super::{release, Behind};
    use std::io::Write;

    fn mapped(len: u32) -> (Vec<u8>, memmap2::Mmap) {
        let bytes: Vec<u8> = (0..len).map(|i| (i * 7 % 251) as u8).collect();
        let mut file = tempfile::tempfile().unwrap();
        file.write_all(&bytes).unwrap();
        // SAFETY: a private read-only map of a file only this test writes, before mapping.
        let map = unsafe { memmap2::Mmap::map(&file).unwrap() };
        (bytes, map)
    }

    /// Nothing is released before a step has gathered; then the whole pages up to the
    /// reader, and at the end everything.
    #[test]
    fn behind_releases_a_step_at_a_time() {
        let (bytes, map) = mapped(3 << 20);
        // SAFETY: `map` maps a file read-only.
        let mut behind = unsafe { Behind::new(&map, 1 << 20) };
        behind.passed(100_000);
        assert_eq!(behind.steps.released, 0);
        behind.passed((1 << 20) + 100);
        assert_eq!(behind.steps.released, 1 << 20);
        behind.passed((1 << 20) + 200_000);
        assert_eq!(behind.steps.released, 1 << 20, "less than a step more");
        behind.passed_all_but(0);
        assert_eq!(behind.steps.released, 3 << 20);
        assert_eq!(&map[..], &bytes[..]);
    }

    /// Released pages read back with the file's bytes; the offset returned is page-aligned and
    /// never past what was asked, so a later release goes on from there.
    #[test]
    fn released_pages_read_back_the_same() {
        let (bytes, map) = mapped(3 << 20);
        assert_eq!(&map[..], &bytes[..]);
        // SAFETY: `map` maps a file read-only.
        let end = unsafe { release(&map, 0, (1 << 20) + 100) };
        assert_eq!(end, 1 << 20);
        // SAFETY: as above.
        let next = unsafe { release(&map, end, map.len()) };
        assert_eq!(next, map.len());
        // SAFETY: as above.
        assert_eq!(
            unsafe { release(&map, next, map.len()) },
            next,
            "nothing left"
        );
        assert_eq!(&map[..], &bytes[..]);
    }
}
