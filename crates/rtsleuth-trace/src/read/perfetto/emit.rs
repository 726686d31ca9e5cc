//! Handing merged records to the sink: the running task named, the body decoded when the sink
//! wants it, and the trace's counts kept.

use super::bundle::Record;
use super::kind;
use super::messages::{Body, ProcessTree};
use super::payload::{self, Scratch};
use super::tasks::TaskNames;
use crate::event::{Event, EventKind, Flags};
use crate::read::{Decode, EventSink, TraceInfo};
use std::collections::{BTreeMap, VecDeque};

pub struct Emitter {
    decode: Decode,
    names: TaskNames,
    /// Process trees waiting for the events of their time: a tree names tasks from when it was
    /// taken, so events come out named the same however far the merge runs behind the file.
    trees: VecDeque<(u64, ProcessTree)>,
    scratch: Scratch,
    /// How many times each CPU reported lost events.
    pub lost_markers: BTreeMap<u32, u64>,
}

impl Emitter {
    pub fn new(decode: Decode) -> Self {
        Emitter {
            decode,
            names: TaskNames::default(),
            trees: VecDeque::new(),
            scratch: Scratch::default(),
            lost_markers: BTreeMap::new(),
        }
    }

    /// Takes a process tree collected at `ts` (at once when it has no time).
    pub fn tree(&mut self, ts: Option<u64>, tree: ProcessTree) {
        match ts {
            Some(ts) => {
                let at = self.trees.partition_point(|(t, _)| *t <= ts);
                self.trees.insert(at, (ts, tree));
            }
            None => self.names.apply(&tree),
        }
    }

    pub fn emit(
        &mut self,
        (ts, cpu, record): (u64, u32, &Record),
        sink: &mut (dyn EventSink + Send),
        info: &mut TraceInfo,
    ) {
        let p = match record {
            Record::Lost => {
                *self.lost_markers.entry(cpu).or_default() += 1;
                sink.lost(Some(cpu), None);
                return;
            }
            Record::Event(p) => p,
        };
        while self.trees.front().is_some_and(|(t, _)| *t <= ts) {
            let (_, tree) = self.trees.pop_front().expect("front() is Some");
            self.names.apply(&tree);
        }
        self.names.learn(&p.body);
        let name = kind::name(&p.body);
        let (kind, payload) = if self.decode.wants(name) {
            // Generic events are typed from their text.
            let text = self.decode.prints(name, matches!(p.body, Body::Generic(_)));
            payload::render(&p.body, p.symbol.as_deref(), text, &mut self.scratch);
            (
                kind::kind(&p.body, &self.scratch.function, &self.scratch.payload),
                self.scratch.payload.as_str(),
            )
        } else {
            (EventKind::Other, "")
        };
        let (comm, tgid) = self.names.task(p.pid);
        let ev = Event {
            ts,
            cpu,
            pid: p.pid,
            comm,
            tgid,
            flags: Flags::UNKNOWN,
            name,
            payload,
            kind,
        };
        info.saw_event(ts, cpu);
        info.events += 1;
        sink.event(&ev);
    }
}
