//! One raw ftrace record (`common_type`, `common_flags`, `common_preempt_count`,
//! `common_pid`, then the event's own fields) turned into an event's name, kind, payload text,
//! task and flags. trace.dat keeps these records in ring-buffer pages and perf.data in the
//! `PERF_SAMPLE_RAW` part of its samples; both readers decode them here, with the event
//! formats their file carries.

use super::event_format::EventFormat;
use super::render;
use super::typed::Typed;
use super::Metadata;
use crate::event::{Event, EventKind, Flags, Timestamp};
use crate::read::ftrace_text::payload;
use crate::read::{Decode, EventSink, TraceInfo};
use rustc_hash::FxHashMap;

/// What to do with the records of one event id, decided once.
#[derive(Clone, Default)]
struct Plan {
    /// The sink wants the event typed, and it has a typing.
    typed: bool,
    /// Typed straight from the binary fields.
    fast: Option<Typed>,
    /// Otherwise typed from the printed payload; `None` for events never typed.
    slow: Option<payload::Decoder>,
    /// The payload is printed: the sink wants every payload, or this one is typed from its
    /// text or has fields the event model reads ([`Event::FIELDS_READ`]). Most events
    /// without a kind (`sched_stat_runtime`) are then never printed.
    print: bool,
}

impl Plan {
    /// The plan for the records of `format`, for a sink that wants `decode`.
    #[inline(never)]
    fn of(format: &EventFormat, decode: Decode) -> Plan {
        let name: &str = &format.name;
        let fast = Typed::for_format(format);
        let slow = payload::decoder(name).filter(|_| fast.is_none());
        let wanted = decode.wants(name);
        Plan {
            typed: wanted && (fast.is_some() || slow.is_some()),
            print: wanted && decode.prints(name, slow.is_some()),
            fast,
            slow,
        }
    }
}

/// A decoded record; its strings borrow the record and the decoder.
pub struct Decoded<'a> {
    pub name: &'a str,
    /// `common_pid`: the task that was running.
    pub pid: i32,
    pub flags: Flags,
    pub payload: &'a str,
    pub kind: EventKind<'a>,
    /// For a `sched_switch`, the task switched in (name, pid): how readers learn the names
    /// of tasks their file does not list.
    pub switched_in: Option<(&'a str, i32)>,
}

/// Whom a reader says an event belongs to: trace.dat knows the pid only, perf.data also the
/// thread group.
pub struct Task<'a> {
    pub pid: i32,
    pub comm: &'a str,
    pub tgid: Option<i32>,
}

impl Decoded<'_> {
    /// The event at `ts` on `cpu`, handed to `sink` and counted in `info`.
    pub fn hand_on(
        self,
        ts: Timestamp,
        cpu: u32,
        task: Task<'_>,
        info: &mut TraceInfo,
        sink: &mut (dyn EventSink + Send),
    ) {
        let ev = Event {
            ts,
            cpu,
            pid: task.pid,
            comm: task.comm,
            tgid: task.tgid,
            flags: self.flags,
            name: self.name,
            payload: self.payload,
            kind: self.kind,
        };
        info.saw_record(ts, cpu);
        sink.event(&ev);
    }
}

/// Turns records into events, with what it met that it could not decode counted for notes.
pub struct RecordDecoder<'m> {
    planner: Planner<'m>,
    payload: String,
}

impl<'m> RecordDecoder<'m> {
    pub fn new(meta: &'m Metadata<'m>, decode: Decode) -> RecordDecoder<'m> {
        RecordDecoder {
            planner: Planner::new(meta, decode),
            payload: String::with_capacity(256),
        }
    }

    /// The event in `data`; `None` (and counted) when the record is too short for the common
    /// fields or its id has no format in the file.
    pub fn decode<'s>(&'s mut self, data: &'s [u8]) -> Option<Decoded<'s>> {
        self.payload.clear();
        let prepared = self.planner.prepare(data, &mut self.payload)?;
        self.planner.decoded(prepared, data, &self.payload)
    }

    /// What could not be decoded, one note each.
    pub fn finish(self, notes: &mut Vec<String>) {
        self.planner.finish(notes);
    }
}

/// A record whose payload text, if any is wanted, has been printed: what
/// [`Planner::decoded`] needs to finish it.
#[derive(Debug, Clone, Copy)]
pub struct Prepared {
    id: u16,
    pid: i32,
}

/// Decodes records in two steps, so that a batch's payload texts can all be printed into one
/// buffer before any event borrows from it: [`Planner::prepare`] prints what text is wanted,
/// [`Planner::decoded`] types the event from its bytes and that text.
pub struct Planner<'m> {
    meta: &'m Metadata<'m>,
    decode: Decode,
    /// By event id, made when the first record of the id is met.
    plans: Vec<Option<Plan>>,
    cx: render::Context<'m>,
    unknown_ids: FxHashMap<u16, u64>,
    short_records: u64,
}

impl<'m> Planner<'m> {
    pub fn new(meta: &'m Metadata<'m>, decode: Decode) -> Planner<'m> {
        Planner {
            meta,
            decode,
            plans: vec![None; meta.formats.id_bound()],
            cx: render::Context {
                endian: meta.header.endian,
                long_size: meta.header.long_size,
                symbols: &meta.symbols,
                printk: &meta.printk,
            },
            unknown_ids: FxHashMap::default(),
            short_records: 0,
        }
    }

    /// Appends the payload text the record's plan wants (none for most scheduler events) to
    /// `text`; `None` (and counted) when the record is too short for the common fields or its
    /// id has no format in the file.
    #[inline(always)]
    pub fn prepare(&mut self, data: &[u8], text: &mut String) -> Option<Prepared> {
        let e = self.meta.header.endian;
        let (Some(id), Some(pid)) = (e.uint(data, 2), data.get(4..).and_then(|d| e.int(d, 4)))
        else {
            self.short_records += 1;
            return None;
        };
        let id = id as u16;
        let Some(format) = self.meta.format(id) else {
            *self.unknown_ids.entry(id).or_default() += 1;
            return None;
        };
        // Planned once per id; the planning stays out of line, so that this per-record path
        // is a test rather than a call.
        let slot = &mut self.plans[usize::from(id)];
        if slot.is_none() {
            *slot = Some(Plan::of(format, self.decode));
        }
        let plan = slot.as_ref().expect("planned above");
        if plan.print {
            render::payload(text, format, data, &self.cx);
        }
        Some(Prepared {
            id,
            pid: pid as i32,
        })
    }

    /// The event of a prepared record, `text` being the payload [`Planner::prepare`] printed
    /// for it (empty when it printed none).
    #[inline(always)]
    pub fn decoded<'a>(&self, p: Prepared, data: &'a [u8], text: &'a str) -> Option<Decoded<'a>>
    where
        'm: 'a,
    {
        let meta: &'m Metadata<'m> = self.meta;
        let format = meta.format(p.id)?;
        let plan = self.plans[usize::from(p.id)].as_ref()?;
        let name: &str = &format.name;
        let e = meta.header.endian;
        let kind = match plan {
            Plan { typed: false, .. } => EventKind::Other,
            Plan { fast: Some(t), .. } => t.kind(data, e).unwrap_or(EventKind::Other),
            Plan {
                slow: Some(decode), ..
            } => decode(name, text).unwrap_or(EventKind::Other),
            Plan { .. } => EventKind::Other,
        };
        // A switch typed from its fields already holds the task it switches to.
        let switched_in = match (&plan.fast, &kind) {
            (
                Some(_),
                &EventKind::SchedSwitch {
                    next_comm,
                    next_pid,
                    ..
                },
            ) => Some((next_comm, next_pid)),
            (fast, _) => fast.as_ref().and_then(|t| t.switched_in(data, e)),
        };
        Some(Decoded {
            name,
            pid: p.pid,
            flags: flags(data[2], data[3]),
            payload: text,
            kind,
            switched_in,
        })
    }

    /// What could not be decoded, one note each.
    pub fn finish(self, notes: &mut Vec<String>) {
        let mut ids: Vec<_> = self.unknown_ids.into_iter().collect();
        ids.sort_unstable();
        for (id, n) in ids {
            notes.push(format!(
                "{n} records of event id {id} were skipped: the file has no format for that id"
            ));
        }
        notes.extend(self.meta.formats.failures());
        if let Some(why) = self.meta.symbols.failure() {
            notes.push(format!("the kallsyms section could not be read {why}"));
        }
        if self.short_records > 0 {
            notes.push(format!(
                "{} records too short to hold the common fields were skipped",
                self.short_records
            ));
        }
    }

    /// Adds another planner's counts of what could not be decoded (a worker's, at the end).
    pub fn absorb_counts(&mut self, other: Planner<'m>) {
        for (id, n) in other.unknown_ids {
            *self.unknown_ids.entry(id).or_default() += n;
        }
        self.short_records += other.short_records;
    }
}

/// The kernel's `common_flags` and `common_preempt_count` as the flag columns print them.
#[inline(always)]
fn flags(bits: u8, preempt: u8) -> Flags {
    Flags {
        known: true,
        irqs_off: bits & 0x01 != 0,
        need_resched_lazy: bits & 0x02 != 0,
        need_resched: bits & 0x04 != 0,
        hardirq: bits & 0x08 != 0,
        softirq: bits & 0x10 != 0,
        preempt_resched: bits & 0x20 != 0,
        nmi: bits & 0x40 != 0,
        bh_off: bits & 0x80 != 0,
        preempt_depth: preempt & 0x0f,
        migrate_disable: preempt >> 4,
        preempt_lazy_depth: 0,
    }
}
