//! Task names learnt from the trace itself. `saved_cmdlines` is a small cache the kernel
//! overwrites, so tasks that ran early may be missing from it; their names are still in the
//! scheduler events that switched to them. trace-cmd learns them the same way.

use rustc_hash::FxHashMap;

#[derive(Default)]
pub struct LearntComms {
    names: FxHashMap<i32, Box<str>>,
}

impl LearntComms {
    /// Notes that `pid` was switched in under `name` (the idle task is not a task).
    pub fn learn(&mut self, pid: i32, name: &str) {
        if pid != 0 && self.get(pid) != Some(name) {
            self.names.insert(pid, name.into());
        }
    }

    pub fn get(&self, pid: i32) -> Option<&str> {
        self.names.get(&pid).map(|n| &**n)
    }
}
