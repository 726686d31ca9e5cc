//! What a session saved before its first write to a tracefs file, and how to put it back.
//!
//! Most files read back in the form they accept, but several do not: `trace_clock` lists every
//! clock with the current one in brackets, an event's `filter` reads `none` when it is cleared
//! with `0`, `buffer_size_kb` may read `X` when the CPUs differ or carry `(expanded: N)` before
//! first use, and `set_event` is a list rebuilt one line at a time. Each of those knows its own
//! way back here, so the session can treat them all alike.

use super::buffer_size::BufferSize;
use crate::LiveError;
use std::fs::OpenOptions;
use std::io::Write;
use std::path::{Path, PathBuf};

/// One saved tracefs value, or something the session created and must remove.
#[derive(Debug)]
pub(super) enum Saved {
    /// A file to write back with `value`.
    File { path: PathBuf, value: String },
    /// `set_event`: cleared, then each event of the list enabled again.
    EventList { path: PathBuf, events: Vec<String> },
    /// An instance directory the session made.
    Instance { path: PathBuf },
}

impl Saved {
    /// Reads what `path` holds now, in the form that writing it back restores.
    pub(super) fn capture(path: &Path) -> Result<Saved, LiveError> {
        let text = read(path)?;
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        Ok(match name {
            "set_event" => Saved::EventList {
                path: path.to_owned(),
                events: text
                    .lines()
                    .map(str::trim)
                    .filter(|l| !l.is_empty())
                    .map(String::from)
                    .collect(),
            },
            _ => Saved::File {
                path: path.to_owned(),
                value: match stub_of_cpu_buffer(path) {
                    Some(expands_to_kb) => expands_to_kb.to_string(),
                    None => restorable_value(name, &text),
                },
            },
        })
    }

    /// The path this entry restores, so a session saves each file only once.
    pub(super) fn path(&self) -> &Path {
        match self {
            Saved::File { path, .. } | Saved::EventList { path, .. } | Saved::Instance { path } => {
                path
            }
        }
    }

    /// Writes the saved value back (or removes what was created).
    pub(super) fn restore(&self) -> Result<(), LiveError> {
        match self {
            Saved::File { path, value } => write(path, value),
            Saved::EventList { path, events } => {
                write(path, "")?;
                events.iter().try_for_each(|event| append(path, event))
            }
            Saved::Instance { path } => remove_instance(path),
        }
    }
}

/// For a CPU's `per_cpu/cpuN/buffer_size_kb` whose buffer is still the boot stub, the size it
/// expands to. The CPU's own file reads just the stub size (`7`), and writing that back would
/// give the CPU a working 7 KB buffer; only the buffer-wide file says that it is a stub.
fn stub_of_cpu_buffer(path: &Path) -> Option<u64> {
    let cpu_dir = path.parent()?;
    let per_cpu = cpu_dir.parent()?;
    if path.file_name()? != "buffer_size_kb" || per_cpu.file_name()? != "per_cpu" {
        return None;
    }
    let whole = std::fs::read_to_string(per_cpu.parent()?.join("buffer_size_kb")).ok()?;
    match BufferSize::parse(&whole)? {
        BufferSize::Unexpanded { expands_to_kb, .. } => Some(expands_to_kb),
        _ => None,
    }
}

/// The value to write back for a file named `name` that reads `text`.
fn restorable_value(name: &str, text: &str) -> String {
    let text = text.trim();
    match name {
        // `hwlat_detector/mode` lists its choices the same way: `none [round-robin] per-cpu`.
        "trace_clock" | "mode" => match (text.find('['), text.find(']')) {
            (Some(open), Some(close)) if open < close => text[open + 1..close].to_owned(),
            _ => text.to_owned(),
        },
        "filter" if text == "none" => "0".to_owned(),
        // A boot stub goes back as the size it expands to, never as the stub itself.
        "buffer_size_kb" => match BufferSize::parse(text).and_then(BufferSize::restore_value) {
            Some(kb) => kb.to_string(),
            None => text.to_owned(),
        },
        _ => text.to_owned(),
    }
}

/// The whole content of a tracefs file.
pub(super) fn read(path: &Path) -> Result<String, LiveError> {
    std::fs::read_to_string(path).map_err(|e| LiveError::file(path, e))
}

/// Replaces a tracefs file's value (truncating write, as `echo X > file` does).
pub(super) fn write(path: &Path, value: &str) -> Result<(), LiveError> {
    let mut file = OpenOptions::new()
        .write(true)
        .truncate(true)
        .open(path)
        .map_err(|e| LiveError::file(path, e))?;
    write_value(&mut file, path, value)
}

/// Adds a line to a list file (`echo X >> set_event`).
pub(super) fn append(path: &Path, value: &str) -> Result<(), LiveError> {
    let mut file = OpenOptions::new()
        .append(true)
        .open(path)
        .map_err(|e| LiveError::file(path, e))?;
    write_value(&mut file, path, value)
}

fn write_value(file: &mut std::fs::File, path: &Path, value: &str) -> Result<(), LiveError> {
    // Empty writes are how list files are cleared; the kernel needs at least a newline for the
    // others, and rejects a value as a whole, so one write call per value.
    let line = if value.is_empty() {
        String::new()
    } else {
        format!("{value}\n")
    };
    file.write_all(line.as_bytes())
        .map_err(|source| LiveError::Write {
            path: path.to_owned(),
            value: value.to_owned(),
            source,
        })
}

/// Removes an instance; readers that were just closed can keep it busy for a moment.
fn remove_instance(path: &Path) -> Result<(), LiveError> {
    let mut tries = 0;
    loop {
        match std::fs::remove_dir(path) {
            Ok(()) => return Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(e) if e.raw_os_error() == Some(libc::EBUSY) && tries < 50 => {
                tries += 1;
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            Err(e) => return Err(LiveError::file(path, e)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::restorable_value;

    #[test]
    fn values_that_read_back_differently_are_normalised() {
        assert_eq!(
            restorable_value("trace_clock", "local [global] counter\n"),
            "global"
        );
        assert_eq!(
            restorable_value("mode", "none [round-robin] per-cpu\n"),
            "round-robin"
        );
        assert_eq!(restorable_value("filter", "none\n"), "0");
        assert_eq!(restorable_value("filter", "irq == 1\n"), "irq == 1");
        assert_eq!(
            restorable_value("buffer_size_kb", "7 (expanded: 1408)\n"),
            "1408"
        );
        assert_eq!(restorable_value("buffer_size_kb", "1410\n"), "1410");
        assert_eq!(restorable_value("current_tracer", "nop\n"), "nop");
    }
}
