//! The referee's raw-event model: what a peer decoder printed, one event per line, and what
//! the trace says about its own recorded history. Nothing here comes from rtsleuth.

use std::collections::{BTreeMap, HashMap};

/// One event as a peer printed it.
#[derive(Clone, Debug)]
pub struct Event {
    /// Trace-clock nanoseconds.
    pub ts: i64,
    pub cpu: u32,
    /// The pid column: the task current on the CPU when the event was emitted.
    pub pid: i64,
    /// ftrace's flag letters (`d`, `N`, `h`, `s`, ...); `None` when the peer prints none.
    pub flags: Option<String>,
    /// Event name without its subsystem (`sched_switch`, not `sched:sched_switch`).
    pub name: String,
    /// The printed fields, `key=value ...` as the kernel's print format gives them.
    pub fields: String,
}

impl Event {
    /// The value printed after `key=`, up to the next ` word=` or ` ==> ` (comms may hold
    /// spaces), without a trailing comma.
    pub fn field(&self, key: &str) -> Option<&str> {
        let f = &self.fields;
        let mut from = 0;
        let start = loop {
            let at = from + f[from..].find(key)?;
            let boundary = at == 0 || f.as_bytes()[at - 1] == b' ';
            if boundary && f[at + key.len()..].starts_with('=') {
                break at + key.len() + 1;
            }
            from = at + key.len();
        };
        let rest = &f[start..];
        let mut end = rest.len();
        for (i, _) in rest.match_indices(' ') {
            let next = &rest[i + 1..];
            let word = next.split(' ').next().unwrap_or("");
            if next.starts_with("==>") || (word.contains('=') && !word.starts_with('=')) {
                end = i;
                break;
            }
        }
        Some(rest[..end].trim_end_matches(','))
    }

    /// A numeric field (decimal, or hex with `0x`).
    pub fn num(&self, key: &str) -> Option<i64> {
        let v = self.field(key)?;
        match v.strip_prefix("0x") {
            Some(h) => i64::from_str_radix(h, 16).ok(),
            None => v.parse().ok(),
        }
    }

    /// Interrupts off by the flags (`d` in the first column); `None` when flags are unknown.
    pub fn irqs_off(&self) -> Option<bool> {
        self.flags
            .as_ref()
            .map(|f| f.starts_with('d') || f.starts_with('D'))
    }

    /// In interrupt context (hard or soft) by the flags; `None` when flags are unknown.
    pub fn in_interrupt(&self) -> Option<bool> {
        self.flags
            .as_ref()
            .map(|f| f.chars().any(|c| matches!(c, 'h' | 's' | 'H' | 'z' | 'Z')))
    }

    /// In hard-IRQ context by the flags (`h`, `H`, or NMI `z`/`Z`).
    pub fn in_hardirq(&self) -> bool {
        self.flags
            .as_ref()
            .is_some_and(|f| f.chars().any(|c| matches!(c, 'h' | 'H' | 'z' | 'Z')))
    }

    /// Emitted from the current task's own context: not flagged h/s (unknown flags count as
    /// task context unless the event itself is an interrupt event).
    pub fn task_context(&self) -> bool {
        self.in_interrupt() != Some(true) && !is_interrupt_event(&self.name)
    }
}

/// Events that are interrupt arrivals or run inside an interrupt frame by what they are.
pub fn is_interrupt_event(name: &str) -> bool {
    name.starts_with("irq_handler_")
        || name.starts_with("softirq_")
        || name.starts_with("hrtimer_expire_")
        || name.starts_with("local_timer_")
        || (name.ends_with("_entry") || name.ends_with("_exit"))
            && !name.starts_with("sys_")
            && !name.starts_with("syscall")
}

/// What one trace holds, as the peers decoded it.
#[derive(Default)]
pub struct Trace {
    /// In time order (stable: ties keep the peer's order).
    pub events: Vec<Event>,
    /// The file says its buffer was overwritten (V1): an `entries-in-buffer/entries-written`
    /// header with fewer kept than written, a `CPU n buffer started` line, a per-CPU overrun.
    pub overwritten: bool,
    /// Lost-event markers: (cpu, ts of the marker: the next event of that CPU).
    pub lost: Vec<(u32, i64)>,
    /// Per CPU, the indices into `events` of its events, in order.
    pub by_cpu: BTreeMap<u32, Vec<usize>>,
    /// Per pid column, the indices into `events` of its events, in order.
    pub by_pid: HashMap<i64, Vec<usize>>,
}

impl Trace {
    /// Sorts the events by time (stable) and indexes them per CPU. A `thread_noise` names no
    /// task: osnoise prints it after the switch-out it reports, in the outgoing thread's column.
    pub fn finish(&mut self) {
        for e in self.events.iter_mut().filter(|e| e.name == "thread_noise") {
            e.pid = -1;
        }
        self.events.sort_by_key(|e| e.ts);
        self.by_cpu.clear();
        self.by_pid.clear();
        for (i, e) in self.events.iter().enumerate() {
            self.by_cpu.entry(e.cpu).or_default().push(i);
            self.by_pid.entry(e.pid).or_default().push(i);
        }
    }

    /// The events whose pid column is `pid`, in order.
    pub fn of_pid(&self, pid: i64) -> impl DoubleEndedIterator<Item = &Event> {
        self.by_pid
            .get(&pid)
            .into_iter()
            .flatten()
            .map(|&i| &self.events[i])
    }

    /// V1: each CPU's history start, then the common window start (the latest of them).
    pub fn window_start(&self) -> Option<i64> {
        let first = self.events.first()?.ts;
        if !self.overwritten {
            return Some(first);
        }
        self.by_cpu.values().map(|ix| self.events[ix[0]].ts).max()
    }

    /// The events of `cpu` with `lo < ts < hi` (strictly inside).
    pub fn inside(&self, cpu: u32, lo: i64, hi: i64) -> impl Iterator<Item = &Event> {
        let ix = self.by_cpu.get(&cpu).map(Vec::as_slice).unwrap_or(&[]);
        let from = ix.partition_point(|&i| self.events[i].ts <= lo);
        ix[from..]
            .iter()
            .map(|&i| &self.events[i])
            .take_while(move |e| e.ts < hi)
    }

    /// The first event of `cpu` at or after `ts`.
    pub fn first_from(&self, cpu: u32, ts: i64) -> Option<&Event> {
        let ix = self.by_cpu.get(&cpu)?;
        let from = ix.partition_point(|&i| self.events[i].ts < ts);
        ix.get(from).map(|&i| &self.events[i])
    }

    /// The events of `cpu` at or before `ts`, latest first.
    pub fn before(&self, cpu: u32, ts: i64) -> impl Iterator<Item = &Event> {
        let ix = self.by_cpu.get(&cpu).map(Vec::as_slice).unwrap_or(&[]);
        let to = ix.partition_point(|&i| self.events[i].ts <= ts);
        ix[..to].iter().rev().map(|&i| &self.events[i])
    }
}

/// Seconds as printed (`123.456789`) to nanoseconds, exactly (no float).
pub fn parse_seconds(s: &str) -> Option<i64> {
    let (sec, frac) = s.split_once('.')?;
    if frac.is_empty() || frac.len() > 9 || !frac.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let sec: i64 = sec.parse().ok()?;
    let frac_ns: i64 = format!("{frac:0<9}").parse().ok()?;
    Some(sec * 1_000_000_000 + frac_ns)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(fields: &str) -> Event {
        Event {
            ts: 0,
            cpu: 0,
            pid: 1,
            flags: None,
            name: "x".into(),
            fields: fields.into(),
        }
    }

    #[test]
    fn fields_with_spaces_in_comms() {
        let e = ev("prev_comm=Web Content prev_pid=12 prev_prio=120 prev_state=S ==> next_comm=a b next_pid=3 next_prio=9");
        assert_eq!(e.field("prev_comm"), Some("Web Content"));
        assert_eq!(e.num("prev_pid"), Some(12));
        assert_eq!(e.field("prev_state"), Some("S"));
        assert_eq!(e.field("next_comm"), Some("a b"));
        assert_eq!(e.num("next_prio"), Some(9));
        assert_eq!(e.num("pid"), None);
    }

    #[test]
    fn seconds_to_ns() {
        assert_eq!(parse_seconds("178.938529"), Some(178_938_529_000));
        assert_eq!(parse_seconds("7769.345285650"), Some(7_769_345_285_650));
        assert_eq!(parse_seconds("12"), None);
    }
}
