//! Task names as `perf script` gives them. A sample carries only the thread id; perf names it
//! from its own thread table, filled by the `COMM` records (those perf synthesized from
//! `/proc` at the start, and the kernel's at every `exec` and `prctl(PR_SET_NAME)`) and the
//! `FORK` records (a new thread starts with its parent's name). Records arrive in time order,
//! so the table holds each thread's name at the time of the sample being read.

use rustc_hash::FxHashMap;

/// The name perf gives the idle task (ftrace prints `<idle>`).
pub const IDLE: &str = "swapper";
/// A thread no record named: perf prints `:<tid>`, rtsleuth its usual unknown name.
pub const UNKNOWN: &str = "<...>";

#[derive(Default)]
pub struct Threads {
    names: FxHashMap<i32, Box<str>>,
}

impl Threads {
    /// `PERF_RECORD_COMM`: `tid` is now called `name`.
    pub fn comm(&mut self, tid: i32, name: &[u8]) {
        let name = String::from_utf8_lossy(name);
        if self.names.get(&tid).map(|n| &**n) != Some(&*name) {
            self.names.insert(tid, name.into());
        }
    }

    /// `PERF_RECORD_FORK`: `tid` is a new thread of `ptid` and has its name (a reused tid
    /// loses the name of the thread that had it before).
    pub fn fork(&mut self, tid: i32, ptid: i32) {
        match self.names.get(&ptid).cloned() {
            Some(parent) => self.names.insert(tid, parent),
            None => self.names.remove(&tid),
        };
    }

    pub fn name(&self, tid: i32) -> &str {
        match tid {
            0 => IDLE,
            _ => self.names.get(&tid).map_or(UNKNOWN, |n| n),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_comm_and_fork() {
        let mut t = Threads::default();
        assert_eq!((t.name(0), t.name(7)), ("swapper", "<...>"));
        t.comm(7, b"bash");
        t.fork(8, 7);
        assert_eq!(t.name(8), "bash");
        t.comm(8, b"cyclictest");
        assert_eq!((t.name(7), t.name(8)), ("bash", "cyclictest"));
        // tid 8 reused by a child of an unnamed thread.
        t.fork(8, 99);
        assert_eq!(t.name(8), "<...>");
    }
}
