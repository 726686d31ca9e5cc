//! Readers: one module per on-disk format, each turning an [`Input`] into the same stream of
//! [`Event`]s pushed into an [`EventSink`].

pub mod ftrace_text;
pub mod function_graph;
mod hex;
mod info;
pub mod latency_tracer;
pub mod perf_data;
pub mod perfetto;
mod seen;
mod spawn;
pub mod tracedat;

pub use info::{LineCounts, TraceInfo, UnparsedLine};

use crate::error::{Error, Result};
use crate::event::Event;
use crate::input::{on_pool, Format, Input};

/// Which events a sink needs decoded into a typed [`crate::event::EventKind`]. Decoding is
/// most of a text reader's work, so a sink that needs only the scheduler events says so and
/// every other event arrives as `EventKind::Other` with its payload untouched. Binary readers
/// have no payload text to begin with: they print it for every event only under
/// `Everything`, and otherwise may leave it empty.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decode {
    /// Every event typed, and every payload as text.
    Everything,
    /// Every event typed; a binary reader prints a payload only where typing needs the text
    /// or the event model reads its fields ([`crate::event::Event::FIELDS_READ`]), so an
    /// event it types straight from its fields (the scheduler's) or never types
    /// (`sched_stat_runtime`) has none. For sinks that read kinds and those fields only.
    Typed,
    Only(&'static [&'static str]),
}

/// The scheduler events that say who ran and who woke whom, then rtla's timerlat samples: one
/// list, so that `latency`'s decoding is the scheduler's plus the samples, never a copy that
/// drifts.
const SCHED_THEN_TIMERLAT: &[&str] = &[
    "sched_switch",
    "sched_waking",
    "sched_wakeup",
    "sched_wakeup_new",
    "sched_migrate_task",
    "sched_process_fork",
    "sched_process_exit",
    "timerlat",
    "timerlat_sample",
    "osnoise",
];

impl Decode {
    /// The scheduler events that say who ran and who woke whom.
    pub const SCHED: Decode = Decode::Only(SCHED_THEN_TIMERLAT.split_at(7).0);

    /// The scheduler events, rtla's timerlat samples and the osnoise tracer's period summaries
    /// (`latency` reports them all).
    pub const LATENCY: Decode = Decode::Only(SCHED_THEN_TIMERLAT);

    /// What two sinks fed the same stream need together.
    /// Payload text is promised only by `Everything`, so only it survives a union; two
    /// different lists of names are covered by typing every event.
    pub fn union(self, other: Decode) -> Decode {
        match (self, other) {
            (a, b) if a == b => a,
            (Decode::Everything, _) | (_, Decode::Everything) => Decode::Everything,
            _ => Decode::Typed,
        }
    }

    pub fn wants(self, name: &str) -> bool {
        match self {
            Decode::Everything | Decode::Typed => true,
            // Comparing first bytes rejects almost every name without a string compare.
            Decode::Only(names) => names
                .iter()
                .any(|n| n.as_bytes().first() == name.as_bytes().first() && *n == name),
        }
    }

    /// Whether a binary reader prints the payload text of an event the sink wants: the text
    /// is promised to `Everything` only, and is needed where the kind is typed from it
    /// (`typed_from_text`) or the event model reads its fields ([`Event::FIELDS_READ`]).
    pub fn prints(self, name: &str, typed_from_text: bool) -> bool {
        self == Decode::Everything || typed_from_text || Event::FIELDS_READ.contains(&name)
    }
}

/// One item of a trace in order: an event, or the point where the ring buffer lost events.
#[derive(Debug)]
pub enum Record<'a> {
    Event(Event<'a>),
    Lost {
        cpu: Option<u32>,
        count: Option<u64>,
    },
    /// Earlier events of `cpu` (every CPU for `None`) were overwritten before the trace was
    /// read: its recorded history begins at its next event.
    HistoryBegins {
        cpu: Option<u32>,
    },
}

/// Receives the events of a trace in order. Analyses implement this.
pub trait EventSink {
    fn event(&mut self, ev: &Event<'_>);

    /// Which events this sink needs typed; the default is all of them.
    fn decode(&self) -> Decode {
        Decode::Everything
    }

    /// The input is in `format`: told before its first event, for analyses whose claims
    /// depend on what that format's own tools can show of it.
    fn format(&mut self, _format: Format) {}

    /// The ring buffer dropped events on `cpu` here (`count` when the trace says how many).
    /// Whatever an analysis had half-measured across this point may be wrong.
    fn lost(&mut self, _cpu: Option<u32>, _count: Option<u64>) {}

    /// Earlier events of `cpu` (every CPU for `None`) were overwritten: its recorded history
    /// begins at its next event ([`crate::validity`]). Readers call it before that event.
    fn history_begins(&mut self, _cpu: Option<u32>) {}

    /// A run of records in trace order, from a reader that has a whole block at hand. The
    /// default hands them on one at a time; [`Parallel`] gives the block to two sinks at once.
    fn records(&mut self, records: &[Record<'_>]) {
        for r in records {
            match r {
                Record::Event(ev) => self.event(ev),
                Record::Lost { cpu, count } => self.lost(*cpu, *count),
                Record::HistoryBegins { cpu } => self.history_begins(*cpu),
            }
        }
    }
}

/// Reads the whole input into `sink` and returns what was learnt about the trace itself.
pub fn read(input: Input, sink: &mut (dyn EventSink + Send)) -> Result<TraceInfo> {
    sink.format(input.format);
    let mut counted = Counted { sink, pending: 0 };
    let read = read_into(input, &mut counted);
    counted.flush();
    read
}

/// Hands events on to the analyses and counts them for [`crate::progress`], a few thousand at
/// a time so that a trace read event by event does not pay an atomic add per event.
struct Counted<'a> {
    sink: &'a mut (dyn EventSink + Send),
    pending: u64,
}

impl Counted<'_> {
    const BATCH: u64 = 4096;

    fn count(&mut self, n: u64) {
        self.pending += n;
        if self.pending >= Self::BATCH {
            self.flush();
        }
    }

    fn flush(&mut self) {
        crate::progress::add_events(std::mem::take(&mut self.pending));
    }
}

impl EventSink for Counted<'_> {
    fn event(&mut self, ev: &Event<'_>) {
        self.count(1);
        self.sink.event(ev);
    }

    fn decode(&self) -> Decode {
        self.sink.decode()
    }

    fn lost(&mut self, cpu: Option<u32>, count: Option<u64>) {
        self.sink.lost(cpu, count);
    }

    fn history_begins(&mut self, cpu: Option<u32>) {
        self.sink.history_begins(cpu);
    }

    fn records(&mut self, records: &[Record<'_>]) {
        self.count(records.len() as u64);
        self.sink.records(records);
    }
}

fn read_into(input: Input, sink: &mut (dyn EventSink + Send)) -> Result<TraceInfo> {
    match input.format {
        // Containers give the text inside them (see [`crate::input`]).
        Format::FtraceText | Format::SystraceHtml | Format::AtraceZ => {
            on_pool(|| ftrace_text::read(input, sink))
        }
        Format::FunctionGraph => Err(Error::WrongCommand {
            path: input.name,
            format: input.format.name(),
            hint: "use `rtsleuth graph` for it; for latency work record events (sched, irq, timer) with the nop tracer",
        }),
        Format::Json => Err(Error::NotATrace {
            path: input.name,
            why: "it is JSON; `rtsleuth diff` compares the --json of explain, latency and measure, and `rtsleuth report` and `diff` read a soak's findings.jsonl (explain the spike-N.dat traces kept beside it)".into(),
        }),
        Format::TraceDat => tracedat::read(input, sink),
        Format::Perfetto => perfetto::read(input, sink),
        Format::PerfData => perf_data::read(input, sink),
    }
}

/// Two analyses fed the same events in one pass over the trace (nest pairs for more).
impl<A: EventSink, B: EventSink> EventSink for (A, B) {
    fn event(&mut self, ev: &Event<'_>) {
        self.0.event(ev);
        self.1.event(ev);
    }

    fn decode(&self) -> Decode {
        self.0.decode().union(self.1.decode())
    }

    fn lost(&mut self, cpu: Option<u32>, count: Option<u64>) {
        self.0.lost(cpu, count);
        self.1.lost(cpu, count);
    }

    fn history_begins(&mut self, cpu: Option<u32>) {
        self.0.history_begins(cpu);
        self.1.history_begins(cpu);
    }

    fn format(&mut self, format: Format) {
        self.0.format(format);
        self.1.format(format);
    }

    // The two share no state, so each may take the whole block in turn; a [`Parallel`] nested
    // in either still gets blocks.
    fn records(&mut self, records: &[Record<'_>]) {
        self.0.records(records);
        self.1.records(records);
    }
}

/// Two analyses fed the same events, each block of them on two threads at once. Worth it when
/// both are heavy: the `report` page runs `explain` beside `latency`, `irq` and `wq`, which one
/// thread would run one after the other. Readers that hand out single events get the pair's
/// sequential behaviour.
pub struct Parallel<A, B>(pub A, pub B);

impl<A: EventSink + Send, B: EventSink + Send> EventSink for Parallel<A, B> {
    fn event(&mut self, ev: &Event<'_>) {
        self.0.event(ev);
        self.1.event(ev);
    }

    fn decode(&self) -> Decode {
        self.0.decode().union(self.1.decode())
    }

    fn lost(&mut self, cpu: Option<u32>, count: Option<u64>) {
        self.0.lost(cpu, count);
        self.1.lost(cpu, count);
    }

    fn history_begins(&mut self, cpu: Option<u32>) {
        self.0.history_begins(cpu);
        self.1.history_begins(cpu);
    }

    fn format(&mut self, format: Format) {
        self.0.format(format);
        self.1.format(format);
    }

    fn records(&mut self, records: &[Record<'_>]) {
        let Parallel(a, b) = self;
        rayon::join(|| a.records(records), || b.records(records));
    }
}

/// A sink that does nothing, for callers that only want [`TraceInfo`].
pub struct NullSink;

impl EventSink for NullSink {
    fn event(&mut self, _: &Event<'_>) {}

    fn decode(&self) -> Decode {
        Decode::Only(&[])
    }
}

#[cfg(test)]
mod tests {
    use super::Decode;

    /// `SCHED` is the scheduler's part of the shared list, `LATENCY` adds the samples.
    #[test]
    fn latency_decodes_the_scheduler_events_and_the_timerlat_samples() {
        let sched = ["sched_switch", "sched_waking", "sched_process_exit"];
        for name in sched {
            assert!(
                Decode::SCHED.wants(name) && Decode::LATENCY.wants(name),
                "{name}"
            );
        }
        for name in ["timerlat", "timerlat_sample"] {
            assert!(
                !Decode::SCHED.wants(name) && Decode::LATENCY.wants(name),
                "{name}"
            );
        }
    }
}

#[cfg(test)]
mod on_the_pool {
    use super::{read, EventSink};
    use crate::event::Event;
    use crate::input::Input;

    /// Notes whether each event reached it on a thread of rayon's pool.
    #[derive(Default)]
    struct Where {
        on_pool: usize,
        off_pool: usize,
    }

    impl EventSink for Where {
        fn event(&mut self, _ev: &Event<'_>) {
            match rayon::current_thread_index() {
                Some(_) => self.on_pool += 1,
                None => self.off_pool += 1,
            }
        }
    }

    /// A caller off the pool (a test's thread, as the CLI's main thread) gets its sink fed
    /// text on the pool, where waiting for a block means parsing one.
    #[test]
    fn the_sink_runs_on_a_thread_of_the_pool() {
        let line = "  cyclictest-1234  [001] d..2.  100.000001: sched_switch: prev_comm=cyclictest prev_pid=1234 prev_prio=19 prev_state=S ==> next_comm=swapper/1 next_pid=0 next_prio=120\n";
        let text = line.repeat(3);
        let input = Input::from_reader("t.txt", Box::new(std::io::Cursor::new(text))).unwrap();
        let mut sink = Where::default();
        read(input, &mut sink).unwrap();
        assert_eq!((sink.on_pool, sink.off_pool), (3, 0));
    }
}
