//! The measuring threads' side of a soak: one capture at a time, every spike counted.
//!
//! The first spike while no capture is under way wins the gate, writes the mark, stops
//! recording and hands itself to the worker; any spike while the gate is closed (a capture
//! being read out, or tracing still off), or due before recording last restarted (its start
//! was not recorded, so no capture can explain it), is counted as missed. Everything here is an atomic or
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
    /// When recording last went on (CLOCK_MONOTONIC ns).
    recording_since: AtomicU64,
    seen: AtomicU64,
    missed: AtomicU64,
    missed_worst_ns: AtomicU64,
    /// Room for one spike: the gate lets no second one in before the worker took the first.
    handoff: SyncSender<Spike>,
}

impl FlightRecorder {
    /// A recorder whose buffer has been recording since `since`.
    pub(super) fn new(stop: SpikeStop, handoff: SyncSender<Spike>, since: u64) -> FlightRecorder {
        FlightRecorder {
            stop,
            capturing: AtomicBool::new(false),
            recording_since: AtomicU64::new(since),
            seen: AtomicU64::new(0),
            missed: AtomicU64::new(0),
            missed_worst_ns: AtomicU64::new(0),
            handoff,
        }
    }

    /// The worker turned tracing back on at `since`: the next spike due after it may be
    /// captured.
    pub(super) fn reopen(&self, since: u64) {
        self.recording_since.store(since, Ordering::Release);
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
        if event.expected_ns < self.recording_since.load(Ordering::Acquire)
            || self.capturing.swap(true, Ordering::AcqRel)
        {
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;

    fn spike(latency_us: u64) -> Spike {
        Spike {
            thread: 0,
            cpu: 0,
            tid: 7,
            latency_ns: latency_us * 1000,
            threshold_ns: 100_000,
            cycle: 1,
            expected_ns: 0,
            woke_ns: 0,
        }
    }

    #[test]
    fn one_capture_at_a_time_and_every_other_spike_counted() {
        let dir = tempfile::tempdir().unwrap();
        let (marker, switch) = (dir.path().join("marker"), dir.path().join("switch"));
        let stop = SpikeStop::into_files(
            std::fs::File::create(&marker).unwrap(),
            std::fs::File::create(&switch).unwrap(),
        );
        let (tx, rx) = mpsc::sync_channel(1);
        let recorder = FlightRecorder::new(stop, tx, 0);
        recorder.on_spike(&spike(300));
        assert_eq!(
            std::fs::read_to_string(&marker).unwrap(),
            "hit latency threshold (300 > 100)"
        );
        assert_eq!(std::fs::read_to_string(&switch).unwrap(), "0");
        // While the first is captured: counted, not handed over, not marked.
        recorder.on_spike(&spike(900));
        recorder.on_spike(&spike(200));
        assert_eq!(rx.try_recv().unwrap().latency_ns, 300_000);
        assert!(rx.try_recv().is_err());
        recorder.reopen(5_000);
        // Due before recording restarted: its start is not in any buffer.
        recorder.on_spike(&Spike {
            expected_ns: 4_999,
            ..spike(950)
        });
        recorder.on_spike(&Spike {
            expected_ns: 5_000,
            ..spike(400)
        });
        assert_eq!(rx.try_recv().unwrap().latency_ns, 400_000);
        let mut tally = Tally::new(100);
        recorder.count_into(&mut tally);
        assert_eq!((tally.seen, tally.missed), (5, 3));
        assert_eq!(tally.missed_worst_ns, 950_000);
    }

    #[test]
    fn a_gone_worker_turns_spikes_into_missed_ones() {
        let dir = tempfile::tempdir().unwrap();
        let stop = SpikeStop::into_files(
            std::fs::File::create(dir.path().join("m")).unwrap(),
            std::fs::File::create(dir.path().join("s")).unwrap(),
        );
        let (tx, rx) = mpsc::sync_channel(1);
        drop(rx);
        let recorder = FlightRecorder::new(stop, tx, 0);
        recorder.on_spike(&spike(300));
        let mut tally = Tally::new(100);
        recorder.count_into(&mut tally);
        assert_eq!((tally.seen, tally.missed), (1, 1));
    }
}
