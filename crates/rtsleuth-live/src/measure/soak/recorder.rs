//! The measuring threads' side of a soak: one capture at a time, every spike counted.
//!
//! The first spike while no capture is under way wins the gate, writes the mark, stops
//! recording and hands itself to the worker; any spike while the gate is closed (a capture
//! being read out, or tracing still off) is counted as missed. Everything here is an atomic or
//! a write prepared in advance, so the thread is back to sleep within two syscalls.

use super::Tally;
use crate::measure::thread::{OnSpike, Spike};
use crate::tracefs::SpikeStop;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::SyncSender;

pub struct FlightRecorder {
    stop: SpikeStop,
    /// Closed from a winning spike until the worker has tracing on again.
    capturing: AtomicBool,
    seen: AtomicU64,
    missed: AtomicU64,
    missed_worst_ns: AtomicU64,
    /// Room for one spike: the gate lets no second one in before the worker took the first.
    handoff: SyncSender<Spike>,
}

impl FlightRecorder {
    pub(super) fn new(stop: SpikeStop, handoff: SyncSender<Spike>) -> FlightRecorder {
        FlightRecorder {
            stop,
            capturing: AtomicBool::new(false),
            seen: AtomicU64::new(0),
            missed: AtomicU64::new(0),
            missed_worst_ns: AtomicU64::new(0),
            handoff,
        }
    }

    /// The worker turned tracing back on: the next spike may be captured.
    pub(super) fn reopen(&self) {
        self.capturing.store(false, Ordering::Release);
    }

    /// Copies the counts so far into `tally`.
    pub(super) fn count_into(&self, tally: &mut Tally) {
        tally.seen = self.seen.load(Ordering::Relaxed);
        tally.missed = self.missed.load(Ordering::Relaxed);
        tally.missed_worst_ns = self.missed_worst_ns.load(Ordering::Relaxed);
    }

    fn miss(&self, event: &Spike) {
        self.missed.fetch_add(1, Ordering::Relaxed);
        self.missed_worst_ns
            .fetch_max(event.latency_ns, Ordering::Relaxed);
    }
}

impl OnSpike for FlightRecorder {
    fn on_spike(&self, event: &Spike) {
        self.seen.fetch_add(1, Ordering::Relaxed);
        if self.capturing.swap(true, Ordering::AcqRel) {
            self.miss(event);
            return;
        }
        self.stop
            .mark_and_stop(event.latency_ns / 1000, event.threshold_ns / 1000);
        // The slot is empty whenever the gate was open; a full or closed one means the worker
        // is gone, and the run is ending anyway.
        if self.handoff.try_send(*event).is_err() {
            self.miss(event);
        }
    }
}
