//! A tracefs session: every write saves the old value first; dropping the session restores.

use super::buffer_size::BufferSize;
use super::saved::{self, Saved};
use super::{differences, expansion, observe, Tracefs};
use crate::cpus::CpuList;
use crate::LiveError;
use std::collections::BTreeMap;
use std::fs::File;
use std::path::{Path, PathBuf};

/// Which ring buffer a session configures.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Buffer {
    /// The top-level buffer, shared with every other tracefs user on the machine.
    Top,
    /// A new instance with this name, created by the session and removed when it ends.
    Instance(String),
}

impl Buffer {
    /// The private instance name this process uses.
    pub fn private() -> Buffer {
        Buffer::Instance(super::stale::private_name(std::process::id()))
    }
}

/// Changes to tracefs that are undone, in reverse order, when the session ends.
pub struct Session {
    root: PathBuf,
    dir: PathBuf,
    own_instance: bool,
    saved: Vec<Saved>,
    restored: bool,
    /// What a user saw before the session, compared after the restore.
    before: BTreeMap<String, String>,
}

impl Session {
    /// Starts a session on `buffer` with tracing off in it.
    pub fn new(tracefs: &Tracefs, buffer: Buffer) -> Result<Session, LiveError> {
        let root = tracefs.root().to_owned();
        let before = observe(&root);
        let mut session = Session {
            dir: root.clone(),
            root,
            own_instance: false,
            saved: Vec::new(),
            restored: false,
            before,
        };
        if let Buffer::Instance(name) = buffer {
            let dir = session.root.join("instances").join(&name);
            std::fs::create_dir(&dir).map_err(|e| match e.kind() {
                std::io::ErrorKind::AlreadyExists => LiveError::Invalid(format!(
                    "tracefs instance {} already exists; if no rtsleuth is running, remove it with rmdir",
                    dir.display()
                )),
                _ => LiveError::file(&dir, e),
            })?;
            session.saved.push(Saved::Instance { path: dir.clone() });
            session.dir = dir;
            session.own_instance = true;
        }
        session.tracing_on(false)?;
        Ok(session)
    }

    /// The buffer's directory: the tracefs root or the instance.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The tracefs root, for files that exist only there (`printk_formats`, `saved_cmdlines`).
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Writes `value` to `rel` (relative to the buffer's directory), saving the old value first.
    pub fn set(&mut self, rel: &str, value: &str) -> Result<(), LiveError> {
        self.save_and_write(self.dir.join(rel), value)
    }

    /// Writes a file relative to the tracefs root (global settings such as
    /// `saved_cmdlines_size`), saving the old value first.
    pub fn set_global(&mut self, rel: &str, value: &str) -> Result<(), LiveError> {
        self.save_and_write(self.root.join(rel), value)
    }

    /// Turns recording into the buffer on or off.
    pub fn tracing_on(&mut self, on: bool) -> Result<(), LiveError> {
        self.set("tracing_on", if on { "1" } else { "0" })
    }

    /// Selects the tracer (`nop` for events only).
    pub fn set_tracer(&mut self, tracer: &str) -> Result<(), LiveError> {
        self.set("current_tracer", tracer)
    }

    /// Selects the clock that timestamps events.
    pub fn set_clock(&mut self, clock: &str) -> Result<(), LiveError> {
        self.set("trace_clock", clock)
    }

    /// Records only on `cpus`.
    pub fn set_cpus(&mut self, cpus: &CpuList) -> Result<(), LiveError> {
        self.set("tracing_cpumask", &cpus.to_hex_mask())
    }

    /// Sets every CPU's buffer to `kb`. When the CPUs' sizes differ each is saved; otherwise the
    /// buffer-wide size is, which for a never-used top-level buffer is the size it would have
    /// had on first use, not its boot stub ([`BufferSize`]).
    pub fn set_buffer_kb(&mut self, kb: u64) -> Result<(), LiveError> {
        let all = self.dir.join("buffer_size_kb");
        if BufferSize::parse(&saved::read(&all)?) == Some(BufferSize::Mixed) {
            let per_cpu = self.dir.join("per_cpu");
            let entries = std::fs::read_dir(&per_cpu).map_err(|e| LiveError::file(&per_cpu, e))?;
            for entry in entries {
                let entry = entry.map_err(|e| LiveError::file(&per_cpu, e))?;
                self.save(&entry.path().join("buffer_size_kb"))?;
            }
        } else {
            self.save(&all)?;
        }
        saved::write(&all, &kb.to_string())
    }

    /// Turns a trace option (`options/NAME`) on or off.
    pub fn set_option(&mut self, name: &str, on: bool) -> Result<(), LiveError> {
        self.set(&format!("options/{name}"), if on { "1" } else { "0" })
    }

    /// Makes `events` (in `set_event` syntax: `sched:sched_switch`, `irq:*`) the only enabled
    /// events of the buffer.
    pub fn enable_events(&mut self, events: &[String]) -> Result<(), LiveError> {
        let path = self.dir.join("set_event");
        self.save(&path)?;
        saved::write(&path, "")?;
        events
            .iter()
            .try_for_each(|event| saved::append(&path, event))
    }

    /// Sets the filter of one event (`system:event`).
    pub fn set_filter(&mut self, event: &str, filter: &str) -> Result<(), LiveError> {
        let (system, name) = event
            .split_once(':')
            .ok_or_else(|| LiveError::Invalid(format!("{event:?} is not system:event")))?;
        self.set(&format!("events/{system}/{name}/filter"), filter)
    }

    /// Empties the buffer. Its old content cannot be restored, so callers use a private instance
    /// unless the job needs the top level.
    pub fn clear_buffer(&mut self) -> Result<(), LiveError> {
        saved::write(&self.dir.join("trace"), "")
    }

    /// The buffer's `trace_marker`, opened for writing: a mark costs one write(2) and no
    /// allocation, so a measuring thread can write it at the moment it sees a spike.
    pub fn open_marker(&self) -> Result<File, LiveError> {
        let path = self.dir.join("trace_marker");
        File::options()
            .write(true)
            .open(&path)
            .map_err(|e| LiveError::file(&path, e))
    }

    /// Restores everything now and reports every file that could not be restored. On success,
    /// returns what the user should know about changes no restore can undo (the kernel
    /// expanding a never-used buffer).
    pub fn restore(mut self) -> Result<Vec<String>, LiveError> {
        self.restore_all()
    }

    fn save_and_write(&mut self, path: PathBuf, value: &str) -> Result<(), LiveError> {
        self.save(&path)?;
        saved::write(&path, value)
    }

    fn save(&mut self, path: &Path) -> Result<(), LiveError> {
        // Files inside an instance the session made disappear with it.
        let inside_own = self.own_instance && path.starts_with(&self.dir);
        if inside_own || self.saved.iter().any(|s| s.path() == path) {
            return Ok(());
        }
        self.saved.push(Saved::capture(path)?);
        Ok(())
    }

    /// Restores once; returns what no restore can undo, judged from the same look at tracefs
    /// that checked the restore.
    fn restore_all(&mut self) -> Result<Vec<String>, LiveError> {
        if std::mem::replace(&mut self.restored, true) {
            return Ok(Vec::new());
        }
        if self.own_instance {
            // Stop writers into the instance before it is removed; its files go with it.
            let _ = saved::write(&self.dir.join("tracing_on"), "0");
            let _ = saved::write(&self.dir.join("set_event"), "");
        }
        let mut failures: Vec<String> = self
            .saved
            .iter()
            .rev()
            .filter_map(|s| s.restore().err())
            .map(|e| e.to_string())
            .collect();
        let after = observe(&self.root);
        failures.extend(
            differences(&self.before, &after)
                .into_iter()
                .map(|d| format!("still differs: {d}")),
        );
        if failures.is_empty() {
            Ok(expansion(&self.before, &after).into_iter().collect())
        } else {
            Err(LiveError::Restore(failures.join("; ")))
        }
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        if let Err(e) = self.restore_all() {
            eprintln!("rtsleuth: could not restore tracefs: {e}");
        }
    }
}
