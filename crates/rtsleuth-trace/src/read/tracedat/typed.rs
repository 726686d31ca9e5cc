//! The scheduler events typed straight from their binary fields. They are most of a busy
//! trace and every analysis needs them, so printing them to text only to parse the text back
//! would cost most of the reading time.

use super::event_format::{EventFormat, FieldKind};
use super::fields;
use crate::event::{EventKind, TaskState};
use crate::ring_buffer::Endian;

/// A field the typing reads: offsets for numbers, and for text whether it is inline
/// (`char comm[16]`) or behind a `__data_loc` (newer kernels' `sched_migrate_task`).
#[derive(Debug, Clone, Copy)]
pub struct Slot {
    offset: usize,
    size: usize,
    kind: FieldKind,
}

impl Slot {
    pub(super) fn of(f: &EventFormat, name: &str) -> Option<Slot> {
        let field = f.field(name)?;
        Some(Slot {
            offset: field.offset,
            size: field.size,
            kind: field.kind,
        })
    }

    pub(super) fn int(&self, data: &[u8], e: Endian) -> Option<i64> {
        e.int(data.get(self.offset..)?, self.size)
    }

    fn i32(&self, data: &[u8], e: Endian) -> Option<i32> {
        self.int(data, e).map(|v| v as i32)
    }

    /// The field as unsigned: a pointer, or a `%llu` of the field's own size.
    pub(super) fn uint(&self, data: &[u8], e: Endian) -> Option<u64> {
        e.uint(data.get(self.offset..)?, self.size)
    }

    fn text<'a>(&self, data: &'a [u8], e: Endian) -> Option<&'a str> {
        fields::c_str(fields::bytes_at(
            self.kind,
            self.offset,
            self.size,
            data,
            e,
        )?)
        .ok()
    }
}

/// How to type one event id, decided once from its format.
#[derive(Debug, Clone)]
pub enum Typed {
    Switch {
        prev_comm: Slot,
        prev_pid: Slot,
        prev_prio: Slot,
        prev_state: Slot,
        states: StateLetters,
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
                states: StateLetters::from_print_fmt(&f.print_fmt),
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

    /// The task a `sched_switch` switches to, by name and pid, when `unnamed` holds for its
    /// pid: how task names missing from `saved_cmdlines` are learnt. The pid is read first, so
    /// that the name is read only for the few tasks the file does not name.
    #[inline(always)]
    pub fn switched_in<'a>(
        &self,
        data: &'a [u8],
        e: Endian,
        unnamed: impl Fn(i32) -> bool,
    ) -> Option<(&'a str, i32)> {
        let Typed::Switch {
            next_comm,
            next_pid,
            ..
        } = self
        else {
            return None;
        };
        let pid = next_pid.i32(data, e).filter(|&pid| unnamed(pid))?;
        Some((next_comm.text(data, e)?, pid))
    }

    /// Writes the event's kind into `out`, the kind of the event in its batch; leaves it alone
    /// if the record is too short for its fields. Written in place, field by field: a kind
    /// returned through the stack was copied on in wider loads than it was written in, and
    /// each copy stalled on store forwarding.
    #[inline(always)]
    pub fn type_into<'a>(&self, data: &'a [u8], e: Endian, out: &mut EventKind<'a>) {
        if let Some(kind) = self.kind(data, e) {
            *out = kind;
        }
    }

    /// The event's kind; `None` if the record is too short for its fields.
    #[inline(always)]
    fn kind<'a>(&self, data: &'a [u8], e: Endian) -> Option<EventKind<'a>> {
        Some(match self {
            Typed::Switch {
                prev_comm,
                prev_pid,
                prev_prio,
                prev_state,
                states,
                next_comm,
                next_pid,
                next_prio,
            } => EventKind::SchedSwitch {
                prev_comm: prev_comm.text(data, e)?,
                prev_pid: prev_pid.i32(data, e)?,
                prev_prio: Some(prev_prio.i32(data, e)?),
                prev_state: states.decode(prev_state.int(data, e)? as u64),
                next_comm: next_comm.text(data, e)?,
                next_pid: next_pid.i32(data, e)?,
                next_prio: Some(next_prio.i32(data, e)?),
            },
            Typed::Wake {
                which,
                comm,
                pid,
                prio,
                target_cpu,
            } => {
                let (comm, pid, prio) =
                    (comm.text(data, e)?, pid.i32(data, e)?, prio.i32(data, e)?);
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
                comm: comm.text(data, e)?,
                pid: pid.i32(data, e)?,
                prio: prio.i32(data, e)?,
                orig_cpu: orig_cpu.int(data, e)? as u32,
                dest_cpu: dest_cpu.int(data, e)? as u32,
            },
        })
    }
}

/// What the bits of `prev_state` mean on the traced kernel, read from `sched_switch`'s print
/// format (`__print_flags(…, { 0x00000001, "S" }, { 0x00000002, "D" }, …)`): the bit values
/// moved between kernel versions (4.14 renumbered them), and the format is the only
/// authority the file carries.
#[derive(Debug, Clone, Default)]
pub struct StateLetters {
    bits: Vec<(u64, TaskState)>,
    mask: u64,
}

impl StateLetters {
    fn from_print_fmt(fmt: &str) -> StateLetters {
        let mut bits = Vec::new();
        let mut rest = fmt;
        while let Some(i) = rest.find("{ 0x") {
            rest = &rest[i + 4..];
            let hex_len = rest.bytes().take_while(u8::is_ascii_hexdigit).count();
            let Ok(bit) = u64::from_str_radix(&rest[..hex_len], 16) else {
                continue;
            };
            let Some(letter) = rest[hex_len..]
                .split('"')
                .nth(1)
                .filter(|l| !l.is_empty() && l.len() <= 2)
            else {
                continue;
            };
            bits.push((bit, TaskState::parse(letter)));
        }
        bits.sort_by_key(|b| b.0);
        let mask = bits.iter().fold(0, |m, b| m | b.0);
        StateLetters { bits, mask }
    }

    fn decode(&self, v: u64) -> TaskState {
        if self.bits.is_empty() {
            return TaskState::from_raw(v);
        }
        match self.bits.iter().find(|(bit, _)| v & bit != 0) {
            Some((_, state)) => *state,
            // Only bits above every state: the "preempted" marker.
            None if v > self.mask => TaskState::Preempted,
            None => TaskState::Runnable,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn state_letters_of_a_6_x_and_a_4_9_kernel() {
        let new = StateLetters::from_print_fmt(
            r#""prev_state=%s%s", (REC->prev_state & ((((0x00000000 | 0x00000001 | 0x00000002 | 0x00000004 | 0x00000008 | 0x00000010 | 0x00000020 | 0x00000040) + 1) << 1) - 1)) ? __print_flags(REC->prev_state & ((((0x00000000 | 0x00000001 | 0x00000002 | 0x00000004 | 0x00000008 | 0x00000010 | 0x00000020 | 0x00000040) + 1) << 1) - 1), "|", { 0x00000001, "S" }, { 0x00000002, "D" }, { 0x00000004, "T" }, { 0x00000008, "t" }, { 0x00000010, "X" }, { 0x00000020, "Z" }, { 0x00000040, "P" }, { 0x00000080, "I" }) : "R", REC->prev_state & (((0x00000000 | 0x00000001 | 0x00000002 | 0x00000004 | 0x00000008 | 0x00000010 | 0x00000020 | 0x00000040) + 1) << 1) ? "+" : """#,
        );
        assert_eq!(new.decode(0), TaskState::Runnable);
        assert_eq!(new.decode(1), TaskState::Sleeping);
        assert_eq!(new.decode(0x80), TaskState::Idle);
        assert_eq!(new.decode(0x100), TaskState::Preempted);
        let old = StateLetters::from_print_fmt(
            r#""…", REC->prev_state & (2048-1) ? __print_flags(REC->prev_state & (2048-1), "|", { 1, "S"} ) : "R""#,
        );
        // No hex table: the numeric fallback.
        assert_eq!(old.decode(1), TaskState::Sleeping);
        let v49 = StateLetters::from_print_fmt(
            r#"{ 0x0001, "S" }, { 0x0002, "D" }, { 0x0004, "T" }, { 0x0008, "t" }, { 0x0010, "X" }, { 0x0020, "Z" }, { 0x0040, "x" }, { 0x0080, "K" }, { 0x0100, "W" }, { 0x0200, "P" }, { 0x0400, "N" }) : "R", REC->prev_state & 2048 ? "+" : """#,
        );
        assert_eq!(v49.decode(0x0800), TaskState::Preempted);
        assert_eq!(v49.decode(0x0082), TaskState::Uninterruptible);
    }
}
