//! The explanation drawn as Perfetto track events, on their own writer sequence.
//!
//! Per victim thread: its thread track (a `TrackDescriptor` with the thread, so the UI puts it
//! in the thread's process) and under it a track "rtsleuth: why late". Per finding, on that
//! track: one slice "late N us" from the due time (or the wake-up) to the run, enclosing one
//! slice per timeline stretch named `kind: culprit`, with the detail as a debug annotation.
//! On the thread track, an instant at the run; every stretch with a culprit starts a flow that
//! ends there, so the UI draws an arrow from each culprit to the moment the victim ran.
//!
//! No interning is used, so the packets need no incremental state beyond the sequence's start.

use super::messages::{
    Data, DebugAnnotation, EventType, ThreadDescriptor, TracePacket, TrackDescriptor, TrackEvent,
};
use rtsleuth_analyze::document::fmt_us;
use rtsleuth_analyze::explain::{Outline, OutlineStretch};
use rtsleuth_trace::event::{ns_to_us, Timestamp};

/// Thread tracks are this plus the tid, "why late" tracks [`WHY_TRACK`] plus the tid: fixed
/// uuids, unlikely to meet another producer's random ones, the same in every export.
pub const THREAD_TRACK: u64 = 0x7274_736c_0000_0000;
pub const WHY_TRACK: u64 = 0x7274_7377_0000_0000;
/// The name of the track under each victim's thread.
pub const WHY_TRACK_NAME: &str = "rtsleuth: why late";

/// What the drawing added up to.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Drawn {
    pub findings: u64,
    pub slices: u64,
    pub flows: u64,
}

/// Draws findings, writing each packet through `write` as it is made.
#[derive(Default)]
pub struct Tracks {
    described: Vec<i32>,
    next_flow: u64,
    pub drawn: Drawn,
}

impl Tracks {
    /// Draws `f`; `tgid` is the victim's thread group when the trace said it.
    pub fn draw(&mut self, f: &Outline, tgid: Option<i32>, write: &mut impl FnMut(TracePacket)) {
        let thread = THREAD_TRACK | tid_bits(f.pid);
        let why = WHY_TRACK | tid_bits(f.pid);
        if !self.described.contains(&f.pid) {
            self.described.push(f.pid);
            write(descriptor(TrackDescriptor {
                uuid: Some(thread),
                parent_uuid: None,
                name: None,
                thread: Some(ThreadDescriptor {
                    // Without its group, a thread is shown as its own process.
                    pid: Some(tgid.unwrap_or(f.pid)),
                    tid: Some(f.pid),
                    thread_name: Some(f.comm.clone()),
                }),
            }));
            write(descriptor(TrackDescriptor {
                uuid: Some(why),
                parent_uuid: Some(thread),
                name: Some(WHY_TRACK_NAME.into()),
                thread: None,
            }));
        }
        let start = f.expected.unwrap_or(f.wakeup);
        write(packet(
            start,
            TrackEvent {
                name: Some(format!("late {} us", fmt_us(ns_to_us(f.latency_ns)))),
                debug_annotations: [
                    text("task", &format!("{}-{}", f.comm, f.pid)),
                    text("summary", &f.summary),
                    text("due", f.source.as_str()),
                    text("root_cause", f.root_cause.as_str()),
                ]
                .into_iter()
                .chain(f.prio.map(|p| int("prio", p.into())))
                .chain([int("cpu", f.cpu.into())])
                .collect(),
                ..event(EventType::SliceBegin, why)
            },
        ));
        self.drawn.slices += 1;
        let mut flows = Vec::new();
        for s in &f.timeline {
            let mut flow_ids = Vec::new();
            if s.culprit.is_some() {
                self.next_flow += 1;
                flow_ids.push(self.next_flow);
                flows.push(self.next_flow);
            }
            write(packet(
                s.start,
                TrackEvent {
                    name: Some(stretch_name(s)),
                    debug_annotations: vec![
                        text("detail", &s.detail),
                        text("phase", s.phase.as_str()),
                        int("cpu", s.cpu.into()),
                    ],
                    flow_ids,
                    ..event(EventType::SliceBegin, why)
                },
            ));
            write(packet(s.end, event(EventType::SliceEnd, why)));
            self.drawn.slices += 1;
        }
        write(packet(f.run, event(EventType::SliceEnd, why)));
        self.drawn.flows += flows.len() as u64;
        write(packet(
            f.run,
            TrackEvent {
                name: Some(match f.run_at {
                    "switch" => "switched in".to_string(),
                    how => format!("ran ({how})"),
                }),
                terminating_flow_ids: flows,
                ..event(EventType::Instant, thread)
            },
        ));
        self.drawn.findings += 1;
    }
}

/// `higher_priority: fifo_burst-15291`, or the kind alone when nothing is to blame.
pub fn stretch_name(s: &OutlineStretch) -> String {
    match &s.culprit {
        Some(c) => format!("{}: {c}", s.cause.as_str()),
        None => s.cause.as_str().to_string(),
    }
}

/// A tid's share of a track uuid: the low 32 bits.
fn tid_bits(pid: i32) -> u64 {
    u64::from(pid as u32)
}

fn descriptor(d: TrackDescriptor) -> TracePacket {
    TracePacket {
        data: Some(Data::TrackDescriptor(d)),
        ..TracePacket::default()
    }
}

fn event(kind: EventType, track: u64) -> TrackEvent {
    TrackEvent {
        r#type: Some(kind as i32),
        track_uuid: Some(track),
        ..TrackEvent::default()
    }
}

fn packet(ts: Timestamp, e: TrackEvent) -> TracePacket {
    TracePacket {
        timestamp: Some(ts),
        data: Some(Data::TrackEvent(e)),
        ..TracePacket::default()
    }
}

fn text(name: &str, value: &str) -> DebugAnnotation {
    DebugAnnotation {
        name: Some(name.into()),
        string_value: Some(value.into()),
        ..DebugAnnotation::default()
    }
}

fn int(name: &str, value: i64) -> DebugAnnotation {
    DebugAnnotation {
        name: Some(name.into()),
        int_value: Some(value),
        ..DebugAnnotation::default()
    }
}
