//! One `FtraceEventBundle` into the events it holds, in time order, each owning its decoded
//! body until the merge hands it out.

use super::compact::{self, CompactError, Row};
use super::messages::{Body, CompactSched, FtraceEvent, SchedSwitch, SchedWakeup};
use crate::event::UNKNOWN_PID;

/// An event waiting for its turn in the merge.
#[derive(Debug, Clone, PartialEq)]
pub struct Pending {
    pub ts: u64,
    /// The running task; for compact events, the task the CPU last switched to
    /// ([`UNKNOWN_PID`] before its first switch).
    pub pid: i32,
    pub body: Body,
    /// The name of the body's kernel function, when the trace interned it.
    pub symbol: Option<String>,
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
/// compact switches, compact wakings (the sort is stable), so the result is the same however
/// often it is computed.
pub fn expand(
    event: Vec<FtraceEvent>,
    compact_sched: Option<CompactSched>,
    running: &mut Running,
    symbol: impl Fn(u64) -> Option<String>,
) -> Result<Expanded, CompactError> {
    enum Entry {
        Regular(u64, i32, Body),
        Compact(Row),
    }
    let ts = |e: &Entry| match e {
        Entry::Regular(ts, ..) => *ts,
        Entry::Compact(row) => row.ts(),
    };
    let mut unknown = 0;
    let mut entries: Vec<Entry> = Vec::with_capacity(event.len());
    for ev in event {
        match ev.body {
            Some(body) => entries.push(Entry::Regular(
                ev.timestamp.unwrap_or(0),
                ev.pid.unwrap_or(0) as i32,
                body,
            )),
            None => unknown += 1,
        }
    }
    if let Some(cs) = compact_sched {
        entries.extend(compact::rows(cs)?.into_iter().map(Entry::Compact));
    }
    entries.sort_by_key(ts);
    let times = entries.iter().map(ts).collect();
    let events = entries
        .into_iter()
        .map(|e| match e {
            Entry::Regular(ts, pid, body) => {
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
        })
        .map(Record::Event)
        .collect();
    Ok(Expanded {
        events,
        times,
        unknown,
    })
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
