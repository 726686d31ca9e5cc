//! The kernel's symbols, to name the functions tracepoints record as addresses (the hrtimer
//! callback `hrtimer_wakeup` by which explain recognises a task's own timer, work functions,
//! IRQ handlers).
//!
//! perf.data does not carry `/proc/kallsyms` (its tracing data has an empty kallsyms part).
//! `perf script` finds the symbols by the kernel's build id: in perf's build-id cache, where
//! `perf record` copies `/proc/kallsyms` (`~/.debug/[kernel.kallsyms]/<build id>/kallsyms`,
//! or under `$PERF_BUILDID_DIR`; `perf archive` carries it to another machine), else in the
//! running kernel when its build id is the recorded one. rtsleuth looks in the same places.
//! Under KASLR a cached table can be from another boot than the recording: perf's kernel map
//! (`[kernel.kallsyms]_text`, whose offset is the address `_text` had) says where the kernel
//! was, and the table is moved there.

use std::path::PathBuf;

/// The kallsyms text, or why there is none.
pub enum Found {
    Table(Vec<u8>),
    Missing(String),
}

/// The symbols of the kernel with build id `id` (hex), loaded at `text_at` when known.
pub fn find(id: Option<&str>, text_at: Option<u64>) -> Found {
    let Some(id) = id else {
        return Found::Missing("the file has no kernel build id".into());
    };
    let cached = buildid_dir().map(|d| d.join("[kernel.kallsyms]").join(id).join("kallsyms"));
    let (text, from) = match cached.as_ref().and_then(|p| Some((std::fs::read(p).ok()?, p))) {
        Some((text, p)) => (text, p.display().to_string()),
        None if running_kernel_is(id) => match std::fs::read("/proc/kallsyms") {
            Ok(text) => (text, "/proc/kallsyms".to_string()),
            Err(e) => return Found::Missing(format!("/proc/kallsyms: {e}")),
        },
        None => {
            return Found::Missing(format!(
                "kernel build id {id} is not in perf's build-id cache ({}) and is not the running kernel's; `perf archive` on the recording machine packs it",
                cached.map_or("no home directory".into(), |p| p.display().to_string())
            ))
        }
    };
    if symbol(&text, "_text") == Some(0) {
        return Found::Missing(format!("{from} hides its addresses (kptr_restrict)"));
    }
    match relocate(&text, text_at) {
        Some(moved) => Found::Table(moved),
        None => Found::Table(text),
    }
}

/// perf's build-id cache directory.
fn buildid_dir() -> Option<PathBuf> {
    if let Some(d) = std::env::var_os("PERF_BUILDID_DIR") {
        return Some(d.into());
    }
    std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".debug"))
}

/// Whether `/sys/kernel/notes` holds build id `id` (its GNU build-id note).
fn running_kernel_is(id: &str) -> bool {
    let Some(bytes) = hex(id) else {
        return false;
    };
    std::fs::read("/sys/kernel/notes")
        .is_ok_and(|notes| notes.windows(bytes.len()).any(|w| w == bytes.as_slice()))
}

fn hex(s: &str) -> Option<Vec<u8>> {
    (s.len() % 2 == 0 && !s.is_empty())
        .then(|| {
            (0..s.len())
                .step_by(2)
                .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
                .collect()
        })
        .flatten()
}

/// The address of `name` in a kallsyms text.
fn symbol(text: &[u8], name: &str) -> Option<u64> {
    text.split(|&b| b == b'\n').find_map(|line| {
        let line = std::str::from_utf8(line).ok()?;
        let mut words = line.split_ascii_whitespace();
        let (addr, _, n) = (words.next()?, words.next()?, words.next()?);
        (n == name).then(|| u64::from_str_radix(addr, 16).ok())?
    })
}

/// The table moved so that `_text` is at `text_at`; `None` when it need not move (or cannot:
/// no `_text`, or addresses hidden as zeros).
fn relocate(text: &[u8], text_at: Option<u64>) -> Option<Vec<u8>> {
    let at = symbol(text, "_text").filter(|&a| a != 0)?;
    let delta = text_at?.wrapping_sub(at);
    if delta == 0 {
        return None;
    }
    let mut out = Vec::with_capacity(text.len());
    for line in text.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
        let (addr, rest) = line.split_at(line.iter().position(|&b| b == b' ').unwrap_or(0));
        match std::str::from_utf8(addr)
            .ok()
            .and_then(|a| u64::from_str_radix(a, 16).ok())
        {
            Some(a) => out.extend(format!("{:016x}", a.wrapping_add(delta)).bytes()),
            None => out.extend(addr),
        }
        out.extend(rest);
        out.push(b'\n');
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const TABLE: &[u8] =
        b"ffffffff81000000 T _text\nffffffff8141e2b0 t hrtimer_wakeup\nffffffffc0100000 t cb\t[mod]\n";

    #[test]
    fn a_table_from_another_boot_is_moved_to_the_recorded_text() {
        assert_eq!(symbol(TABLE, "hrtimer_wakeup"), Some(0xffffffff8141e2b0));
        assert_eq!(relocate(TABLE, Some(0xffffffff81000000)), None);
        assert_eq!(relocate(TABLE, None), None);
        let moved = relocate(TABLE, Some(0xffffffff9a000000)).unwrap();
        assert_eq!(symbol(&moved, "hrtimer_wakeup"), Some(0xffffffff9a41e2b0));
        assert_eq!(symbol(&moved, "cb"), Some(0xffffffffd9100000));
        let hidden = b"0000000000000000 T _text\n0000000000000000 t hrtimer_wakeup\n";
        assert_eq!(relocate(hidden, Some(0xffffffff81000000)), None);
    }

    #[test]
    fn build_ids_in_hex() {
        assert_eq!(hex("e4f1"), Some(vec![0xe4, 0xf1]));
        assert_eq!(hex("e4f"), None);
        assert_eq!(hex("zz"), None);
        assert_eq!(hex(""), None);
    }
}
