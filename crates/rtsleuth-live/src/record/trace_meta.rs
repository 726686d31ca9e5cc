//! Everything a trace.dat holds besides the pages and their `header_page` (which the capture
//! read to size them), gathered from the running system: the record header schema, every event format, the kernel's symbols, the `trace_printk`
//! formats, the comm table, the clock and the machine's name.
//!
//! Every event system's formats are stored, not just the enabled events'. A buffer can hold
//! records of events someone else enabled, or that were enabled and disabled during the
//! capture, and without their format no tool can decode them; trace-cmd's `extract` stores
//! them all for the same reason. The cost is about 2 MB and 0.1 s on a kernel with 2,300
//! events, less than `/proc/kallsyms`, which every file needs anyway.

use super::header_page;
use crate::LiveError;
use std::path::{Path, PathBuf};

/// One event system (`events/<name>/`) and the `format` file of each of its events.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EventSystem {
    pub name: String,
    pub formats: Vec<Vec<u8>>,
}

/// The metadata of a trace.dat, as the kernel printed it (bytes are stored verbatim).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TraceMeta {
    /// `events/header_event`.
    pub header_event: Vec<u8>,
    /// The `events/ftrace/*/format` files (the tracers' own records, `print`, `bprint`…).
    pub ftrace_formats: Vec<Vec<u8>>,
    /// Every other system, sorted by name, events sorted by name.
    pub systems: Vec<EventSystem>,
    /// `/proc/kallsyms`.
    pub kallsyms: Vec<u8>,
    /// `printk_formats`.
    pub printk_formats: Vec<u8>,
    /// `saved_cmdlines`: `pid comm` lines.
    pub saved_cmdlines: Vec<u8>,
    /// The buffer's `trace_clock` file (`[local] global …`): the selected clock tells readers
    /// whether timestamps are nanoseconds or counter ticks.
    pub trace_clock: String,
    /// `sysname nodename release version machine`.
    pub uname: String,
    /// CPUs the buffer has (its `per_cpu/cpuN` directories).
    pub cpu_count: u32,
}

impl TraceMeta {
    /// Reads the metadata of the buffer at `trace_dir` (the tracefs root or
    /// `instances/NAME`); event formats, printk formats and comms are global and come from
    /// `tracefs_root`. Call it after the capture and before tracefs is restored: comms seen
    /// during the capture are then saved, and restoring `saved_cmdlines_size` would clear them.
    pub fn gather(tracefs_root: &Path, trace_dir: &Path) -> Result<TraceMeta, LiveError> {
        let events = tracefs_root.join("events");
        let mut systems = Vec::new();
        let mut ftrace_formats = Vec::new();
        for dir in subdirs(&events)? {
            let name = file_name(&dir);
            let formats = formats(&dir)?;
            if name == "ftrace" {
                ftrace_formats = formats;
            } else if !formats.is_empty() {
                systems.push(EventSystem { name, formats });
            }
        }
        let cpu_count = subdirs(&trace_dir.join("per_cpu"))?
            .iter()
            .filter(|d| file_name(d).strip_prefix("cpu").is_some_and(is_number))
            .count() as u32;
        Ok(TraceMeta {
            header_event: header_page::read_header(&events.join("header_event"))?,
            ftrace_formats,
            systems,
            kallsyms: read(Path::new("/proc/kallsyms"))?,
            printk_formats: read(&tracefs_root.join("printk_formats"))?,
            saved_cmdlines: read(&tracefs_root.join("saved_cmdlines"))?,
            trace_clock: String::from_utf8_lossy(&read(&trace_dir.join("trace_clock"))?)
                .into_owned(),
            uname: uname()?,
            cpu_count,
        })
    }
}

impl TraceMeta {
    /// Reads the comm table again: a long-lived buffer (a soak's) keeps everything else it
    /// gathered once, and only the tasks change from one capture to the next.
    pub fn refresh_comms(&mut self, tracefs_root: &Path) -> Result<(), LiveError> {
        self.saved_cmdlines = read(&tracefs_root.join("saved_cmdlines"))?;
        Ok(())
    }
}

fn read(path: &Path) -> Result<Vec<u8>, LiveError> {
    std::fs::read(path).map_err(|e| LiveError::file(path, e))
}

fn file_name(p: &Path) -> String {
    p.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

fn is_number(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
}

/// The directories in `dir`, sorted by name so that files are reproducible.
fn subdirs(dir: &Path) -> Result<Vec<PathBuf>, LiveError> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(|e| LiveError::file(dir, e))? {
        let entry = entry.map_err(|e| LiveError::file(dir, e))?;
        if entry.file_type().is_ok_and(|t| t.is_dir()) {
            out.push(entry.path());
        }
    }
    out.sort();
    Ok(out)
}

/// The `format` file of every event in a system directory. An event whose format vanished
/// meanwhile (its module was unloaded) is left out.
fn formats(system: &Path) -> Result<Vec<Vec<u8>>, LiveError> {
    let mut out = Vec::new();
    for event in subdirs(system)? {
        let path = event.join("format");
        match std::fs::read(&path) {
            Ok(text) => out.push(text),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(LiveError::file(&path, e)),
        }
    }
    Ok(out)
}

fn uname() -> Result<String, LiveError> {
    // SAFETY: utsname is plain bytes; uname fills it with NUL-terminated fields.
    let mut u: libc::utsname = unsafe { std::mem::zeroed() };
    if unsafe { libc::uname(&mut u) } != 0 {
        return Err(LiveError::last_os("uname"));
    }
    let field = |f: &[libc::c_char]| {
        let bytes: Vec<u8> = f
            .iter()
            .take_while(|&&c| c != 0)
            .map(|&c| c as u8)
            .collect();
        String::from_utf8_lossy(&bytes).into_owned()
    };
    Ok([u.sysname, u.nodename, u.release, u.version, u.machine]
        .iter()
        .map(|f| field(f))
        .collect::<Vec<_>>()
        .join(" "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uname_names_this_kernel() {
        let u = uname().unwrap();
        let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap();
        assert!(u.starts_with("Linux "), "{u}");
        assert!(u.contains(release.trim()), "{u}");
    }

    #[test]
    fn a_directory_that_is_no_tracefs_is_a_clear_error() {
        let dir = tempfile::tempdir().unwrap();
        let e = TraceMeta::gather(dir.path(), dir.path()).unwrap_err();
        assert!(
            e.to_string()
                .contains(&format!("{}/events: No such file", dir.path().display())),
            "{e}"
        );
    }
}
