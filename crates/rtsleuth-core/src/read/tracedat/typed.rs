//! The scheduler events typed straight from their binary fields. They are most of a busy
//! trace and every analysis needs them, so printing them to text only to parse the text back
//! would cost most of the reading time.

use super::event_format::{EventFormat, Field};
use super::fields;
use crate::event::{EventKind, TaskState};
use crate::ring_buffer::Endian;

/// Where a scalar field is.
#[derive(Debug, Clone, Copy)]
pub struct Slot {
    offset: usize,
    size: usize,
}

impl Slot {
    fn of(f: &EventFormat, name: &str) -> Option<Slot> {
        let field: &Field = f.field(name)?;
        Some(Slot {
            offset: field.offset,
            size: field.size,
        })
    }

    fn int(self, data: &[u8], e: Endian) -> Option<i64> {
        e.int(data.get(self.offset..)?, self.size)
    }

    fn i32(self, data: &[u8], e: Endian) -> Option<i32> {
        self.int(data, e).map(|v| v as i32)
    }

    /// A `char name[16]` (NUL-padded).
    fn text(self, data: &[u8]) -> Option<&str> {
        fields::c_str(data.get(self.offset..self.offset + self.size)?).ok()
    }
}

/// How to type one event id, decided once from its format.
#[derive(Debug, Clone, Copy)]
pub enum Typed {
    Switch {
        prev_comm: Slot,
        prev_pid: Slot,
        prev_prio: Slot,
        prev_state: Slot,
        next_comm: Slot,
        next_pid: Slot,
        next_prio: Slot,
    },
    Wake {
        which: Wake,
        comm: Slot,
        pid: Slot,
        prio: Slot,
        target_cpu: Option<Slot>,
    },
    Migrate {
        comm: Slot,
        pid: Slot,
        prio: Slot,
        orig_cpu: Slot,
        dest_cpu: Slot,
    },
}

#[derive(Debug, Clone, Copy)]
pub enum Wake {
    Waking,
    Wakeup,
    WakeupNew,
}

impl Typed {
    /// The typing of `f`, if it is one of the scheduler events with the expected fields.
    pub fn for_format(f: &EventFormat) -> Option<Typed> {
        let s = |n| Slot::of(f, n);
        let wake = |which| {
            Some(Typed::Wake {
                which,
                comm: s("comm")?,
                pid: s("pid")?,
                prio: s("prio")?,
                target_cpu: s("target_cpu"),
            })
        };
        match &*f.name {
            "sched_switch" => Some(Typed::Switch {
                prev_comm: s("prev_comm")?,
                prev_pid: s("prev_pid")?,
                prev_prio: s("prev_prio")?,
                prev_state: s("prev_state")?,
                next_comm: s("next_comm")?,
                next_pid: s("next_pid")?,
                next_prio: s("next_prio")?,
            }),
            "sched_waking" => wake(Wake::Waking),
            "sched_wakeup" => wake(Wake::Wakeup),
            "sched_wakeup_new" => wake(Wake::WakeupNew),
            "sched_migrate_task" => Some(Typed::Migrate {
                comm: s("comm")?,
                pid: s("pid")?,
                prio: s("prio")?,
                orig_cpu: s("orig_cpu")?,
                dest_cpu: s("dest_cpu")?,
            }),
            _ => None,
        }
    }

    /// The event's kind; `None` if the record is too short for its fields.
    pub fn kind<'a>(&self, data: &'a [u8], e: Endian) -> Option<EventKind<'a>> {
        Some(match *self {
            Typed::Switch {
                prev_comm,
                prev_pid,
                prev_prio,
                prev_state,
                next_comm,
                next_pid,
                next_prio,
            } => EventKind::SchedSwitch {
                prev_comm: prev_comm.text(data)?,
                prev_pid: prev_pid.i32(data, e)?,
                prev_prio: prev_prio.i32(data, e)?,
                prev_state: TaskState::from_raw(prev_state.int(data, e)? as u64),
                next_comm: next_comm.text(data)?,
                next_pid: next_pid.i32(data, e)?,
                next_prio: next_prio.i32(data, e)?,
            },
            Typed::Wake {
                which,
                comm,
                pid,
                prio,
                target_cpu,
            } => {
                let (comm, pid, prio) = (comm.text(data)?, pid.i32(data, e)?, prio.i32(data, e)?);
                let target_cpu = match target_cpu {
                    Some(t) => Some(t.int(data, e)? as u32),
                    None => None,
                };
                match which {
                    Wake::Waking => EventKind::SchedWaking {
                        comm,
                        pid,
                        prio,
                        target_cpu,
                    },
                    Wake::Wakeup => EventKind::SchedWakeup {
                        comm,
                        pid,
                        prio,
                        target_cpu,
                    },
                    Wake::WakeupNew => EventKind::SchedWakeupNew {
                        comm,
                        pid,
                        prio,
                        target_cpu,
                    },
                }
            }
            Typed::Migrate {
                comm,
                pid,
                prio,
                orig_cpu,
                dest_cpu,
            } => EventKind::SchedMigrateTask {
                comm: comm.text(data)?,
                pid: pid.i32(data, e)?,
                prio: prio.i32(data, e)?,
                orig_cpu: orig_cpu.int(data, e)? as u32,
                dest_cpu: dest_cpu.int(data, e)? as u32,
            },
        })
    }
}
