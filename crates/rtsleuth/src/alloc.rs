//! The process's allocator: mimalloc, configured before the first allocation.
//!
//! The readers allocate a large event buffer per block of trace; glibc hands buffers that size
//! back to the kernel on free, so every block paid page faults again. mimalloc keeps them.
//!
//! mimalloc reserves its arena 1 GiB at a time and, on a kernel that overcommits, commits it at
//! once. Committed memory is what `measure`'s `mlockall(MCL_CURRENT | MCL_FUTURE)` faults in
//! and locks, so a one-second measurement held a gigabyte of RAM (and was killed by the OOM
//! killer on a 1 GB board). With eager commit off, arena memory is committed as it is used,
//! and only that is locked.

#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// mimalloc's `mi_option_arena_eager_commit`: the same position in the option enum of
/// mimalloc 2 and 3 (after show_errors, show_stats, verbose and the old eager_commit).
const ARENA_EAGER_COMMIT: libmimalloc_sys::mi_option_t = 4;

/// mimalloc's `mi_option_purge_delay`, also at one position in both versions' option enum.
const PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// Says that the process is about to exit. At exit mimalloc gives every freed page back to the
/// kernel (an `madvise` each), which the exit itself is about to do: a ninth of the CPU of a
/// short trace.dat read. A purge delay of -1 turns that off for what is left.
pub fn exiting() {
    // SAFETY: sets a process-wide option, which mimalloc reads each time it would purge.
    unsafe { libmimalloc_sys::mi_option_set(PURGE_DELAY, -1) };
}

/// Runs from the ELF `.init_array`, before Rust's own start-up code: that already allocates
/// (and so reserves the first arena) before `main` is entered, too late for the option.
#[used]
#[link_section = ".init_array"]
static CONFIGURE: extern "C" fn() = configure;

extern "C" fn configure() {
    // SAFETY: sets a process-wide option; mimalloc reads it when it reserves an arena, which
    // nothing has done yet.
    unsafe { libmimalloc_sys::mi_option_set(ARENA_EAGER_COMMIT, 0) };
}
