//! One `FtraceEventBundle` into the events it holds, in time order, each owning its decoded
//! body until the merge hands it out.

use super::compact::{self, CompactError, Row};
use super::messages::{Body, CompactSched, FtraceEvent, SchedSwitch, SchedWakeup};
use crate::event::UNKNOWN_PID;
use std::sync::Arc;

/// An event waiting for its turn in the merge.
#[derive(Debug, Clone, PartialEq)]
pub struct Pending {
    pub ts: u64,
    /// The running task; for compact events, the task the CPU last switched to
    /// ([`UNKNOWN_PID`] before its first switch).
    pub pid: i32,
    pub body: Body,
    /// The name of the body's kernel function, when the trace interned it.
    pub symbol: Option<Arc<str>>,
}

/// What the merge orders: an event, or the point where a CPU's buffer lost events.
#[derive(Debug)]
pub enum Record {
    Event(Pending),
    Lost,
}

/// The task a CPU (of one writer sequence) last switched to, which is what a compact switch
/// switches away from and what runs while a compact waking is recorded.
#[derive(Debug, Clone, PartialEq)]
pub struct Running {
    pub pid: i32,
    /// `None` until a switch gives it.
    pub prio: Option<i32>,
    pub comm: String,
}

impl Default for Running {
    /// Nothing known yet: the task is [`UNKNOWN_PID`], its prio unknown.
    fn default() -> Self {
        Running {
            pid: UNKNOWN_PID,
            prio: None,
            comm: UNKNOWN_COMM.into(),
        }
    }
}

/// What ftrace prints for a task whose comm it does not know.
pub const UNKNOWN_COMM: &str = "<...>";

#[derive(Debug)]
pub struct Expanded {
    /// Events only, in time order.
    pub events: Vec<Record>,
    /// Their times.
    pub times: Vec<u64>,
    /// Events of kinds the reader does not name (their body was skipped).
    pub unknown: u64,
}

/// A bundle's events and compact rows merged by time. Ties keep the order regular events,
/// compact switches, compact wakings, so the result is the same however often it is computed.
pub fn expand(
    event: Vec<FtraceEvent>,
    compact_sched: Option<CompactSched>,
    running: &mut Running,
    symbol: impl Fn(u64) -> Option<Arc<str>>,
) -> Result<Expanded, CompactError> {
    let (switches, wakings) = match compact_sched {
        Some(cs) => compact::rows(cs)?,
        None => Default::default(),
    };
    let total = event.len() + switches.len() + wakings.len();
    let (mut events, mut times) = (Vec::with_capacity(total), Vec::with_capacity(total));
    let mut unknown = 0;
    for entry in by_time(event, switches, wakings) {
        let event = match entry {
            Entry::Regular(FtraceEvent { body: None, .. }) => {
                unknown += 1;
                continue;
            }
            Entry::Regular(FtraceEvent {
                timestamp,
                pid,
                body: Some(body),
            }) => {
                let (ts, pid) = (timestamp.unwrap_or(0), pid.unwrap_or(0) as i32);
                if let Body::SchedSwitch(s) = &body {
                    switched_to(running, s);
                }
                let symbol = body.function().and_then(&symbol);
                Pending {
                    ts,
                    pid,
                    body,
                    symbol,
                }
            }
            Entry::Compact(row) => compact_event(row, running),
        };
        times.push(event.ts);
        events.push(Record::Event(event));
    }
    Ok(Expanded {
        events,
        times,
        unknown,
    })
}

enum Entry {
    Regular(FtraceEvent),
    Compact(Row),
}

/// The time a bundle's event is ordered by.
fn regular_ts(e: &FtraceEvent) -> u64 {
    e.timestamp.unwrap_or(0)
}

/// The three runs of a bundle in time order, equal times in the order of the runs and then
/// of each run: what a stable sort of the runs one after the other gives. Perfetto writes
/// each run in time order, so they are merged; a run that is not is sorted first.
fn by_time(
    mut regular: Vec<FtraceEvent>,
    mut switches: Vec<Row>,
    mut wakings: Vec<Row>,
) -> impl Iterator<Item = Entry> {
    in_order(&mut regular, regular_ts);
    in_order(&mut switches, Row::ts);
    in_order(&mut wakings, Row::ts);
    let (mut regular, mut switches, mut wakings) = (
        regular.into_iter(),
        switches.into_iter(),
        wakings.into_iter(),
    );
    std::iter::from_fn(move || {
        // Looked at in place: the bodies are large, and each move of one is a copy.
        let r = regular.as_slice().first().map_or(u64::MAX, regular_ts);
        let s = switches.as_slice().first().map_or(u64::MAX, Row::ts);
        let w = wakings.as_slice().first().map_or(u64::MAX, Row::ts);
        // Strictly earlier to pass an earlier run: ties go to the earlier one. A run taken to
        // its end reads as the largest time and, if its turn comes, passes it on.
        if r <= s && r <= w {
            if let Some(e) = regular.next() {
                return Some(Entry::Regular(e));
            }
        }
        if s <= w {
            if let Some(row) = switches.next() {
                return Some(Entry::Compact(row));
            }
        }
        wakings.next().map(Entry::Compact)
    })
}

/// Sorts `run` by `key`, equal keys as they came, unless it is in that order already.
fn in_order<T>(run: &mut [T], key: impl Fn(&T) -> u64) {
    if run.windows(2).any(|w| key(&w[0]) > key(&w[1])) {
        run.sort_by_key(key);
    }
}

fn switched_to(running: &mut Running, s: &SchedSwitch) {
    *running = Running {
        pid: s.next_pid.unwrap_or(UNKNOWN_PID),
        prio: s.next_prio,
        comm: s.next_comm.clone().unwrap_or_else(|| UNKNOWN_COMM.into()),
    };
}

/// A compact row as the full event it stands for.
fn compact_event(row: Row, running: &mut Running) -> Pending {
    match row {
        Row::Switch {
            ts,
            prev_state,
            next_pid,
            next_prio,
            next_comm,
        } => {
            let prev = std::mem::replace(
                running,
                Running {
                    pid: next_pid,
                    prio: Some(next_prio),
                    comm: next_comm.clone(),
                },
            );
            Pending {
                ts,
                pid: prev.pid,
                symbol: None,
                body: Body::SchedSwitch(SchedSwitch {
                    prev_comm: Some(prev.comm),
                    prev_pid: Some(prev.pid),
                    prev_prio: prev.prio,
                    prev_state: Some(prev_state),
                    next_comm: Some(next_comm),
                    next_pid: Some(next_pid),
                    next_prio: Some(next_prio),
                }),
            }
        }
        Row::Waking {
            ts,
            pid,
            prio,
            target_cpu,
            comm,
        } => Pending {
            ts,
            pid: running.pid,
            symbol: None,
            body: Body::SchedWaking(SchedWakeup {
                comm: Some(comm),
                pid: Some(pid),
                prio: Some(prio),
                target_cpu: Some(target_cpu),
            }),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn regular(ts: u64, pid: u32) -> FtraceEvent {
        FtraceEvent {
            timestamp: Some(ts),
            pid: Some(pid),
            body: None,
        }
    }

    fn waking(ts: u64, pid: i32) -> Row {
        Row::Waking {
            ts,
            pid,
            prio: 120,
            target_cpu: 0,
            comm: String::new(),
        }
    }

    fn switch(ts: u64, next_pid: i32) -> Row {
        Row::Switch {
            ts,
            prev_state: 0,
            next_pid,
            next_prio: 120,
            next_comm: String::new(),
        }
    }

    /// Each entry as (time, run, pid): `r` regular, `s` switch, `w` waking.
    fn order(
        regulars: Vec<FtraceEvent>,
        switches: Vec<Row>,
        wakings: Vec<Row>,
    ) -> Vec<(u64, char, i32)> {
        by_time(regulars, switches, wakings)
            .map(|e| match e {
                Entry::Regular(ev) => (regular_ts(&ev), 'r', ev.pid.unwrap() as i32),
                Entry::Compact(Row::Switch { ts, next_pid, .. }) => (ts, 's', next_pid),
                Entry::Compact(Row::Waking { ts, pid, .. }) => (ts, 'w', pid),
            })
            .collect()
    }

    /// Equal times go regular, switch, waking, and keep their order within a run; a run
    /// written out of order is put in order first, its equal times as they came; the largest
    /// time is one like any other.
    #[test]
    fn runs_merge_by_time_with_ties_in_run_order() {
        let got = order(
            vec![
                regular(5, 1),
                regular(5, 2),
                regular(9, 3),
                regular(u64::MAX, 4),
            ],
            vec![switch(1, 10), switch(5, 11), switch(u64::MAX, 12)],
            vec![
                waking(7, 20),
                waking(5, 21),
                waking(5, 22),
                waking(u64::MAX, 23),
            ],
        );
        let expected = [
            (1, 's', 10),
            (5, 'r', 1),
            (5, 'r', 2),
            (5, 's', 11),
            (5, 'w', 21),
            (5, 'w', 22),
            (7, 'w', 20),
            (9, 'r', 3),
            (u64::MAX, 'r', 4),
            (u64::MAX, 's', 12),
            (u64::MAX, 'w', 23),
        ];
        assert_eq!(got, expected);
    }

    /// Empty runs, and runs that are all the largest time, lose nothing.
    #[test]
    fn empty_runs_and_largest_times_lose_nothing() {
        assert_eq!(order(vec![], vec![], vec![]), []);
        assert_eq!(
            order(vec![], vec![], vec![waking(u64::MAX, 1), waking(3, 2)]),
            [(3, 'w', 2), (u64::MAX, 'w', 1)]
        );
        assert_eq!(
            order(vec![regular(u64::MAX, 1)], vec![], vec![waking(2, 2)]),
            [(2, 'w', 2), (u64::MAX, 'r', 1)]
        );
    }
}
