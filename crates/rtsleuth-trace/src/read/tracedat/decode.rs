//! One raw ftrace record (`common_type`, `common_flags`, `common_preempt_count`,
//! `common_pid`, then the event's own fields) turned into an event's name, kind, payload text,
//! task and flags. trace.dat keeps these records in ring-buffer pages and perf.data in the
//! `PERF_SAMPLE_RAW` part of its samples; both readers decode them here, with the event
//! formats their file carries.

use super::event_format::EventFormat;
use super::kallsyms::Symbol;
use super::timer_typed::Timer;
use super::typed::Typed;
use super::Metadata;
use super::{printf, render};
use crate::event::{Event, EventKind, Flags, Timestamp};
use crate::read::ftrace_text::payload;
use crate::read::{Decode, EventSink, TraceInfo};
use rustc_hash::FxHashMap;
use std::borrow::Cow;

/// The most callback addresses [`Planner::callback`] remembers: a kernel arms a few hundred
/// timer functions, and a file that names more costs printing, not memory.
const MAX_CALLBACKS: usize = 4096;

/// What to do with the records of one event id, decided once.
#[derive(Clone)]
struct Plan<'m> {
    /// The id's format, kept here so that a record finds it with the plan.
    format: &'m EventFormat,
    /// The sink wants the event typed, and it has a typing.
    typed: bool,
    /// Typed straight from the binary fields.
    fast: Option<Typed>,
    /// Otherwise typed from the printed payload; `None` for events never typed.
    slow: Option<payload::Decoder>,
    /// A timer event's typing from its fields, for its records left unprinted
    /// ([`Print::Unnamed`]); the others are typed by `slow`. Apart from `fast`, so that the
    /// scheduler's records take the same path through the batch loop as without it.
    timer: Option<Box<Timer>>,
    print: Print,
}

/// Whether a record's payload is printed.
#[derive(Clone, Copy, Default, PartialEq)]
enum Print {
    /// Most events without a kind (`sched_stat_runtime`), and those typed from their fields.
    #[default]
    Never,
    /// The sink wants every payload, or this one is typed from its text or has fields the
    /// event model reads ([`Event::FIELDS_READ`]).
    Always,
    /// A timer event typed from its fields: printed, for the text typing, where the record is
    /// too short or the symbol table does not hold its callback's name as `%ps` prints it
    /// ([`Planner::callback`]).
    Unnamed,
}

impl<'m> Plan<'m> {
    /// The plan for the records of `format`, for a sink that wants `decode`.
    #[inline(never)]
    fn of(format: &'m EventFormat, decode: Decode) -> Plan<'m> {
        let name: &str = &format.name;
        let fast = Typed::for_format(format);
        let slow = payload::decoder(name).filter(|_| fast.is_none());
        let timer = Timer::for_format(format)
            .filter(|_| slow.is_some())
            .map(Box::new);
        let wanted = decode.wants(name);
        let typed = wanted && (fast.is_some() || slow.is_some());
        let print = match wanted && decode.prints(name, slow.is_some() && timer.is_none()) {
            true => Print::Always,
            false if typed && timer.is_some() => Print::Unnamed,
            false => Print::Never,
        };
        Plan {
            format,
            typed,
            fast,
            slow,
            timer,
            print,
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
    plans: Vec<Option<Plan<'m>>>,
    cx: render::Context<'m>,
    /// The name of each callback address met, as `%ps` prints it, where the symbol table
    /// holds it so (few timers, many records each).
    callbacks: FxHashMap<u64, Option<&'m str>>,
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
            callbacks: FxHashMap::default(),
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
        // Planned once per id; the planning stays out of line, so that this per-record path
        // is a test rather than a call.
        let print = match self.plans.get(usize::from(id)) {
            Some(Some(plan)) => plan.print,
            _ => self.plan(id)?,
        };
        if print != Print::Never {
            self.print(id, data, text);
        }
        Some(Prepared {
            id,
            pid: pid as i32,
        })
    }

    /// Plans the records of `id` and says whether they are printed; `None` (and counted) when
    /// the file has no format for it.
    #[cold]
    fn plan(&mut self, id: u16) -> Option<Print> {
        let Some(format) = self.meta.format(id) else {
            *self.unknown_ids.entry(id).or_default() += 1;
            return None;
        };
        let plan = Plan::of(format, self.decode);
        let print = plan.print;
        self.plans[usize::from(id)] = Some(plan);
        Some(print)
    }

    /// Prints the record's payload, unless its plan prints only unnamed callbacks and the
    /// record's is named. Out of line: most records print nothing.
    #[inline(never)]
    fn print(&mut self, id: u16, data: &[u8], text: &mut String) {
        let plan = self.plans[usize::from(id)].as_ref().expect("planned");
        let format = plan.format;
        if let (Print::Unnamed, Some(t)) = (plan.print, &plan.timer) {
            if !t.names_callback() {
                return;
            }
            let at = t.callback(data, self.meta.header.endian);
            if at.is_some_and(|at| self.callback(at).is_some()) {
                return;
            }
        }
        render::payload(text, format, data, &self.cx);
    }

    /// The callback at `at` as `%ps` prints it, when that is a symbol's name as the table
    /// holds it: not a number, not a module's (`name [module]`), nothing the text reading
    /// would cut (`/`). Else the record is typed from its text, as is every record of a
    /// callback met after the memo is full.
    fn callback(&mut self, at: u64) -> Option<&'m str> {
        if let Some(&name) = self.callbacks.get(&at) {
            return name;
        }
        if self.callbacks.len() >= MAX_CALLBACKS {
            return None;
        }
        let name = match printf::bare_symbol(at, &self.meta.symbols) {
            Some(Symbol {
                name: Cow::Borrowed(name),
                module: None,
                ..
            }) if !name.contains('/') => Some(name),
            _ => None,
        };
        self.callbacks.insert(at, name);
        name
    }

    /// The event of a prepared record, `text` being the payload [`Planner::prepare`] printed
    /// for it (empty when it printed none).
    pub fn decoded<'a>(&self, p: Prepared, data: &'a [u8], text: &'a str) -> Option<Decoded<'a>>
    where
        'm: 'a,
    {
        let mut d = self.untyped(p, data, text)?;
        self.type_into(p, d.name, data, text, &mut d.kind);
        Some(d)
    }

    /// [`Self::decoded`] with its kind left `Other`, for the batch decoder, which types it in
    /// place ([`Self::type_into`]).
    #[inline(always)]
    pub fn untyped<'a>(&self, p: Prepared, data: &'a [u8], text: &'a str) -> Option<Decoded<'a>>
    where
        'm: 'a,
    {
        let format: &'m EventFormat = self.plans[usize::from(p.id)].as_ref()?.format;
        Some(Decoded {
            name: &format.name,
            pid: p.pid,
            flags: flags(data[2], data[3]),
            payload: text,
            kind: EventKind::Other,
        })
    }

    /// Writes the kind of a prepared record named `name` into `kind`, the event's own (left as
    /// it is when the record has none or is too short for its fields): see
    /// [`Typed::type_into`].
    #[inline(always)]
    pub fn type_into<'a>(
        &self,
        p: Prepared,
        name: &'a str,
        data: &'a [u8],
        text: &'a str,
        kind: &mut EventKind<'a>,
    ) where
        'm: 'a,
    {
        let Some(plan) = &self.plans[usize::from(p.id)] else {
            return;
        };
        let e = self.meta.header.endian;
        match plan {
            Plan { typed: false, .. } => {}
            Plan { fast: Some(t), .. } => t.type_into(data, e, kind),
            // A timer event's record left unprinted is typed from its fields, its callback
            // named as [`Self::print`] found it.
            Plan { timer: Some(t), .. } if text.is_empty() => {
                let callback = |at| self.callbacks.get(&at).copied().flatten();
                t.type_into(name, data, e, callback, kind);
            }
            Plan {
                slow: Some(decode), ..
            } => {
                if let Some(k) = decode(name, text) {
                    *kind = k;
                }
            }
            Plan { .. } => {}
        }
    }

    /// The task a prepared `sched_switch` record switches to, by name and pid, when `unnamed`
    /// holds for its pid.
    #[inline(always)]
    pub fn switched_in<'a>(
        &self,
        p: Prepared,
        data: &'a [u8],
        unnamed: impl Fn(i32) -> bool,
    ) -> Option<(&'a str, i32)> {
        let plan = self.plans[usize::from(p.id)].as_ref()?;
        let e = self.meta.header.endian;
        plan.fast.as_ref()?.switched_in(data, e, unnamed)
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

#[cfg(test)]
mod tests {
    use super::super::kallsyms::Symbols;
    use super::*;

    /// A callback the table names is remembered, and once the memo is full a new one is not
    /// named (its record is then printed and typed from its text) while those remembered
    /// still are: memory stays bounded whatever the file arms.
    #[test]
    fn the_callback_memo_is_bounded() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../tests/fixtures/tracedat/v6.dat"
        );
        let bytes = std::fs::read(path).unwrap();
        let mut meta = Metadata::parse(&bytes).unwrap();
        meta.symbols = Symbols::new(b"ffffffff81000000 t tick_nohz_handler\nffffffff81000100 t hrtimer_wakeup\nffffffff81000200 t next\n");
        let mut planner = Planner::new(&meta, Decode::Typed);
        assert_eq!(
            planner.callback(0xffffffff81000000),
            Some("tick_nohz_handler")
        );
        for at in 1..MAX_CALLBACKS as u64 {
            planner.callbacks.insert(at, None);
        }
        assert_eq!(planner.callback(0xffffffff81000100), None);
        assert_eq!(planner.callbacks.len(), MAX_CALLBACKS);
        assert_eq!(
            planner.callback(0xffffffff81000000),
            Some("tick_nohz_handler")
        );
    }
}
