//! Task names learnt from the trace itself. `saved_cmdlines` is a small cache the kernel
//! overwrites, so tasks that ran early may be missing from it; their names are still in the
//! scheduler events that switched to them. trace-cmd learns them the same way.

use super::event_format::{EventFormat, Field};
use super::fields;
use super::metadata::Metadata;
use crate::ring_buffer::Endian;
use rustc_hash::FxHashMap;

pub struct LearntComms {
    /// Per event id: the (comm, pid) field pairs that name a task.
    sources: Vec<Vec<(Field, Field)>>,
    names: FxHashMap<i32, Box<str>>,
}

impl LearntComms {
    pub fn new(meta: &Metadata) -> LearntComms {
        let sources = meta
            .formats
            .iter()
            .map(|f| f.as_ref().map(pairs).unwrap_or_default())
            .collect();
        LearntComms {
            sources,
            names: FxHashMap::default(),
        }
    }

    pub fn learn(&mut self, id: u16, _format: &EventFormat, data: &[u8], e: Endian) {
        let Some(pairs) = self.sources.get(usize::from(id)) else {
            return;
        };
        for (comm, pid) in pairs {
            let (Some(name), Some(pid)) = (
                fields::bytes(comm, data, e).and_then(|b| fields::c_str(b).ok()),
                fields::uint(pid, data, e),
            ) else {
                continue;
            };
            let pid = pid as i32;
            if pid != 0 && self.names.get(&pid).map(|n| &**n) != Some(name) {
                self.names.insert(pid, name.into());
            }
        }
    }

    pub fn get(&self, pid: i32) -> Option<&str> {
        self.names.get(&pid).map(|n| &**n)
    }
}

/// The fields of the events that name the task they switch to.
fn pairs(f: &EventFormat) -> Vec<(Field, Field)> {
    let pair = |c: &str, p: &str| Some((f.field(c)?.clone(), f.field(p)?.clone()));
    match &*f.name {
        "sched_switch" => pair("next_comm", "next_pid").into_iter().collect(),
        _ => Vec::new(),
    }
}
