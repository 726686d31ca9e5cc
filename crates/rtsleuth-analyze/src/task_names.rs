//! The best known name of every pid. Lines often say `<...>` (the kernel's comm cache missed),
//! while sched events carry the real comm in their payload; analyses report the real one.

use rtsleuth_trace::event::{Event, EventKind};
use rustc_hash::FxHashMap as HashMap;

#[derive(Debug, Default)]
pub struct TaskNames {
    names: HashMap<i32, String>,
}

/// Byte equality without a call into `memcmp` for names of 4 to 16 bytes (a kernel comm is at
/// most 15): two overlapping words each side. Names are compared on every scheduler event.
#[inline]
fn same(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    let word = |s: &[u8], at: usize| u64::from_ne_bytes(s[at..at + 8].try_into().expect("8"));
    let half = |s: &[u8], at: usize| u32::from_ne_bytes(s[at..at + 4].try_into().expect("4"));
    match n {
        8..=16 => word(a, 0) == word(b, 0) && word(a, n - 8) == word(b, n - 8),
        4..=7 => half(a, 0) == half(b, 0) && half(a, n - 4) == half(b, n - 4),
        _ => a == b,
    }
}

impl TaskNames {
    /// Learns names from an event: its line's comm and the comms its payload names.
    pub fn observe(&mut self, ev: &Event<'_>) {
        self.learn(ev.pid, ev.comm);
        match ev.kind {
            EventKind::SchedSwitch {
                prev_comm,
                prev_pid,
                next_comm,
                next_pid,
                ..
            } => {
                self.learn(prev_pid, prev_comm);
                self.learn(next_pid, next_comm);
            }
            EventKind::SchedWaking { comm, pid, .. }
            | EventKind::SchedWakeup { comm, pid, .. }
            | EventKind::SchedWakeupNew { comm, pid, .. }
            | EventKind::SchedMigrateTask { comm, pid, .. }
            | EventKind::SchedProcessExit { comm, pid, .. } => self.learn(pid, comm),
            EventKind::SchedProcessFork {
                child_comm,
                child_pid,
                ..
            } => self.learn(child_pid, child_comm),
            _ => {}
        }
    }

    /// Records `comm` for `pid` unless it is the `<...>` placeholder. Allocates only when the
    /// name changes.
    pub fn learn(&mut self, pid: i32, comm: &str) {
        if comm == "<...>" || comm.is_empty() {
            return;
        }
        match self.names.get_mut(&pid) {
            Some(known) if same(known.as_bytes(), comm.as_bytes()) => {}
            Some(known) => {
                known.clear();
                known.push_str(comm);
            }
            None => {
                self.names.insert(pid, comm.to_string());
            }
        }
    }

    pub fn get(&self, pid: i32) -> &str {
        self.names.get(&pid).map(String::as_str).unwrap_or("<...>")
    }
}

#[cfg(test)]
mod tests {
    use super::same;

    /// Every length, with the one differing byte anywhere, compares as `==` does.
    #[test]
    fn same_is_byte_equality() {
        for n in 0..=20 {
            let a: Vec<u8> = (0..n as u8).map(|i| b'a' + i).collect();
            assert!(same(&a, &a.clone()), "{n}");
            for at in 0..n {
                let mut b = a.clone();
                b[at] ^= 0x20;
                assert!(!same(&a, &b), "{n} {at}");
            }
            assert!(!same(&a, &a[..n.saturating_sub(1)]) || n == 0, "{n}");
        }
    }
}
