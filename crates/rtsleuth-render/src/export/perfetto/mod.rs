//! `rtsleuth export --perfetto`: the trace's scheduling events and the explanation of its late
//! wake-ups as one Perfetto protobuf trace, which ui.perfetto.dev draws.
//!
//! # Layout
//! - Sequence [`FTRACE_SEQUENCE`]: `FtraceEventBundle` packets, one per CPU per
//!   [`bundles::BUNDLE_EVENTS`] events ([`events`] says which events and how), the kernel
//!   symbols they use interned on the same sequence ([`symbols`]), and `ProcessTree` thread
//!   entries naming the tasks ([`tasks`]).
//! - Sequence [`TRACKS_SEQUENCE`]: after the events, the findings as track events ([`tracks`]).
//!
//! # One pass
//! [`PerfettoExport`] is an event sink: fed the same stream as `explain` (a pair of sinks), it
//! writes each event as it passes, holding only the open bundles, the task names and the
//! interned symbols. When the stream ends, [`PerfettoExport::finish`] writes the last bundles
//! and then the findings. The track events come after the ftrace events they point at; Perfetto
//! sorts a trace by time when it loads it.

mod bundles;
mod events;
mod messages;
mod symbols;
mod tasks;
mod tracks;
mod writer;

pub use tracks::{stretch_name, THREAD_TRACK, WHY_TRACK, WHY_TRACK_NAME};

use crate::error::Result;
use messages::{Data, TracePacket};
use rtsleuth_analyze::explain::Outline;
use rtsleuth_trace::event::Event;
use rtsleuth_trace::read::perfetto::messages::FtraceEventBundle;
use rtsleuth_trace::read::{Decode, EventSink};
use std::io::Write;

/// The writer sequence of the ftrace data.
pub const FTRACE_SEQUENCE: u32 = 1;
/// The writer sequence of the findings' track events.
pub const TRACKS_SEQUENCE: u32 = 2;

/// What an export wrote.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Summary {
    /// Events written (of the kinds [`events`] carries).
    pub events: u64,
    /// Events of other kinds, not written.
    pub skipped: u64,
    pub bundles: u64,
    pub findings: u64,
    /// Slices on the "why late" tracks: one per finding and one per timeline stretch.
    pub slices: u64,
    /// Flows from a culprit's stretch to the victim's run.
    pub flows: u64,
    pub packets: u64,
    pub bytes: u64,
}

/// The export, as an event sink over the trace.
pub struct PerfettoExport<W: Write> {
    path: String,
    out: writer::PacketWriter<W>,
    bundles: bundles::Bundles,
    symbols: symbols::Symbols,
    tasks: tasks::Tasks,
    summary: Summary,
}

impl<W: Write> PerfettoExport<W> {
    /// Writes to `out`; `path` names it in errors.
    pub fn new(path: &str, out: W) -> Self {
        PerfettoExport {
            path: path.to_string(),
            out: writer::PacketWriter::new(out),
            bundles: bundles::Bundles::default(),
            symbols: symbols::Symbols::default(),
            tasks: tasks::Tasks::default(),
            summary: Summary::default(),
        }
    }

    /// Writes what is still buffered, then `findings` (worst first, as `explain` reports
    /// them), and flushes the output.
    pub fn finish(mut self, findings: &[Outline]) -> Result<Summary> {
        let rest = self.bundles.drain();
        self.write_bundles(rest);
        let mut tracks = tracks::Tracks::default();
        // In time order per track, which is how Perfetto expects a sequence's slices.
        let mut ordered: Vec<&Outline> = findings.iter().collect();
        ordered.sort_by_key(|f| (f.expected.unwrap_or(f.wakeup), f.pid));
        for f in ordered {
            let tgid = self.tasks.tgid(f.pid);
            let out = &mut self.out;
            tracks.draw(f, tgid, &mut |p| out.write(TRACKS_SEQUENCE, p));
        }
        let drawn = tracks.drawn;
        let summary = Summary {
            findings: drawn.findings,
            slices: drawn.slices,
            flows: drawn.flows,
            packets: self.out.packets,
            bytes: self.out.bytes,
            ..self.summary
        };
        let path = self.path;
        self.out
            .finish()
            .map_err(|cause| rtsleuth_trace::Error::Io { path, cause })?;
        Ok(summary)
    }

    fn write_bundles(&mut self, bundles: Vec<FtraceEventBundle>) {
        for b in bundles {
            self.summary.bundles += 1;
            self.out.write(
                FTRACE_SEQUENCE,
                TracePacket {
                    interned_data: self.symbols.take_new(),
                    data: Some(Data::FtraceEvents(b)),
                    ..TracePacket::default()
                },
            );
        }
    }
}

impl<W: Write + Send> EventSink for PerfettoExport<W> {
    fn event(&mut self, ev: &Event<'_>) {
        let fe = events::ftrace_event(ev, &mut self.symbols);
        if let Some(tree) = self
            .tasks
            .observe(ev, fe.as_ref().and_then(|e| e.body.as_ref()))
        {
            self.out.write(
                FTRACE_SEQUENCE,
                TracePacket {
                    timestamp: Some(ev.ts),
                    data: Some(Data::ProcessTree(tree)),
                    ..TracePacket::default()
                },
            );
        }
        let Some(fe) = fe else {
            self.summary.skipped += 1;
            return;
        };
        self.summary.events += 1;
        let due = self.bundles.push(ev.cpu, fe);
        self.write_bundles(due);
    }

    fn decode(&self) -> Decode {
        Decode::Typed
    }

    fn lost(&mut self, cpu: Option<u32>, _count: Option<u64>) {
        let closed = self.bundles.lost(cpu);
        self.write_bundles(closed);
    }
}
