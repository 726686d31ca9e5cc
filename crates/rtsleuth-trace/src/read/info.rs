//! What reading a trace tells about the trace itself, independent of any analysis.

use super::ftrace_text::{Header, NonEvent, TimestampUnit};
use crate::event::{ts_to_secs, Timestamp};
use crate::input::{Compression, Format};
use crate::Error;
use serde::{Serialize, Serializer};

/// Counts of every line of a text trace by what it was.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LineCounts {
    pub total: u64,
    pub events: u64,
    pub lost_markers: u64,
    pub buffer_started: u64,
    other: [u64; NonEvent::ALL.len()],
}

impl LineCounts {
    pub fn get(&self, kind: NonEvent) -> u64 {
        self.other[kind as usize]
    }

    pub(crate) fn add(&mut self, kind: NonEvent) {
        self.other[kind as usize] += 1;
    }

    pub(crate) fn merge(&mut self, o: &LineCounts) {
        self.total += o.total;
        self.events += o.events;
        self.lost_markers += o.lost_markers;
        self.buffer_started += o.buffer_started;
        for (a, b) in self.other.iter_mut().zip(o.other) {
            *a += b;
        }
    }
}

impl Serialize for LineCounts {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("total", &self.total)?;
        m.serialize_entry("events", &self.events)?;
        m.serialize_entry("lost_markers", &self.lost_markers)?;
        m.serialize_entry("buffer_started", &self.buffer_started)?;
        for k in NonEvent::ALL {
            m.serialize_entry(k.key(), &self.get(k))?;
        }
        m.end()
    }
}

/// A line the reader could not make sense of, kept as an example for the user.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct UnparsedLine {
    pub line: u64,
    pub text: String,
}

/// Everything the reader learnt about a trace while streaming it.
#[derive(Debug, Clone, Serialize)]
pub struct TraceInfo {
    pub source: String,
    pub format: Format,
    pub compression: Option<Compression>,
    pub header: Header,
    pub bytes: u64,
    pub events: u64,
    #[serde(serialize_with = "opt_secs")]
    pub first_ts: Option<Timestamp>,
    #[serde(serialize_with = "opt_secs")]
    pub last_ts: Option<Timestamp>,
    /// CPUs that have at least one event.
    pub cpus: Vec<u32>,
    /// Sum of the counts in `[LOST n EVENTS]` markers.
    pub lost_events: u64,
    /// Events whose timestamp is earlier than one before them in the file.
    pub out_of_order: u64,
    /// How timestamps were printed: [`TimestampUnit::Counter`] when they are a counter's raw
    /// values that the file gives no conversion for.
    pub timestamps: TimestampUnit,
    /// The trace clock as the file names it (trace.dat's selected `trace_clock`, Perfetto's
    /// bundle `ftrace_clock`); `None` where the file does not say (ftrace text, perf.data).
    pub clock: Option<String>,
    pub lines: LineCounts,
    pub unparsed_examples: Vec<UnparsedLine>,
    /// What a binary reader skipped or found damaged (corrupt pages, unknown event ids, a
    /// truncated file), each with where it was.
    pub notes: Vec<String>,
    /// The recording machine's `uname -a` where the trace carries it (trace.dat's options);
    /// text traces do not. Kept out of the JSON documents, whose contract predates it; a set
    /// of traces reports it per trace.
    #[serde(skip)]
    pub uname: Option<String>,
    /// The kernel release where the trace names it without a whole `uname -a` (Perfetto's
    /// system_info has no host name). Kept out of the JSON documents like `uname`.
    #[serde(skip)]
    pub kernel: Option<String>,
}

fn opt_secs<S: Serializer>(v: &Option<Timestamp>, s: S) -> Result<S::Ok, S::Error> {
    match v {
        Some(t) => s.serialize_f64(ts_to_secs(*t)),
        None => s.serialize_none(),
    }
}

impl TraceInfo {
    pub fn new(source: &str, format: Format, compression: Option<Compression>) -> Self {
        TraceInfo {
            source: source.to_string(),
            format,
            compression,
            header: Header::default(),
            bytes: 0,
            events: 0,
            first_ts: None,
            last_ts: None,
            cpus: Vec::new(),
            lost_events: 0,
            out_of_order: 0,
            timestamps: TimestampUnit::Seconds,
            clock: None,
            lines: LineCounts::default(),
            unparsed_examples: Vec::new(),
            notes: Vec::new(),
            uname: None,
            kernel: None,
        }
    }

    /// Counts one event of a binary reader (trace.dat, perf.data), where every record handed
    /// out stands for one line of the trace's text, and notes its time and CPU.
    pub fn saw_record(&mut self, ts: Timestamp, cpu: u32) {
        self.events += 1;
        self.lines.events += 1;
        self.lines.total += 1;
        self.saw_event(ts, cpu);
    }

    /// Notes an event's time and CPU (first/last time, order, CPUs seen); every reader calls
    /// this once per event it hands out.
    pub fn saw_event(&mut self, ts: Timestamp, cpu: u32) {
        match self.last_ts {
            Some(last) if ts < last => self.out_of_order += 1,
            _ => self.last_ts = Some(ts),
        }
        if self.first_ts.is_none() {
            self.first_ts = Some(ts);
        }
        super::seen::add_cpu(&mut self.cpus, cpu);
    }

    /// Whether timestamps are nanoseconds: every trace clock but a raw counter (`x86-tsc`
    /// without the file's conversion, `counter`, or text printing timestamps without a point).
    pub fn clock_ns(&self) -> bool {
        self.timestamps != TimestampUnit::Counter
    }

    /// Refuses a trace whose timestamps are not time, for the analyses that measure durations.
    pub fn require_time(&self) -> Result<(), Error> {
        if self.clock_ns() {
            return Ok(());
        }
        let clock = match &self.clock {
            Some(c) => format!("the `{c}` trace clock"),
            None => "a counter trace clock (`x86-tsc` or `counter`: timestamps printed without a decimal point)".into(),
        };
        Err(Error::CounterClock {
            path: self.source.clone(),
            clock,
        })
    }

    /// Span of the trace in nanoseconds.
    pub fn span(&self) -> u64 {
        match (self.first_ts, self.last_ts) {
            (Some(a), Some(b)) => b.saturating_sub(a),
            _ => 0,
        }
    }

    /// Lines that were neither events nor anything recognised.
    pub fn unparsed(&self) -> u64 {
        self.lines.get(NonEvent::Unparsed)
    }

    /// Warnings every analysis should print: what makes its numbers less than certain.
    pub fn warnings(&self) -> Vec<String> {
        let mut w = self.notes.clone();
        if self.lines.lost_markers > 0 {
            w.push(format!(
                "the ring buffer lost {} events ({} [LOST] markers): intervals spanning them are not measured",
                self.lost_events, self.lines.lost_markers
            ));
        }
        if let Some(n) = self.header.overwritten().filter(|&n| n > 0) {
            w.push(format!(
                "{n} older events were overwritten before the trace was read (entries-in-buffer/entries-written); the trace starts late on some CPUs"
            ));
        }
        if self.out_of_order > 0 {
            w.push(format!(
                "{} events have a timestamp earlier than an event before them (unsorted or concatenated input)",
                self.out_of_order
            ));
        }
        if self.unparsed() > 0 {
            let first = self
                .unparsed_examples
                .first()
                .map(|u| format!(", first at line {}: {:?}", u.line, u.text))
                .unwrap_or_default();
            w.push(format!(
                "{} lines were not understood and skipped{first}",
                self.unparsed()
            ));
        }
        w
    }
}
