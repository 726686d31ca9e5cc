//! Events buffered per CPU into `FtraceEventBundle`s, as Perfetto's own ftrace reader writes
//! them: one bundle per CPU per read of its buffer, events in time order.
//!
//! Memory is bounded twice: a CPU's bundle is written when it holds [`BUNDLE_EVENTS`] events,
//! and every bundle is written after [`LAG_EVENTS`] events of the whole trace, so a quiet CPU's
//! events never sit behind much more than that in the file. Readers merge CPUs with a bounded
//! window (rtsleuth's waits for 65536 events), which this lag stays well inside.

use rtsleuth_trace::read::perfetto::messages::{FtraceEvent, FtraceEventBundle};

/// Events per bundle: packets of a few tens of kilobytes, like Perfetto's.
pub const BUNDLE_EVENTS: usize = 1024;
/// How many events of the trace may pass before every open bundle is written.
pub const LAG_EVENTS: u64 = 16384;

#[derive(Default)]
pub struct Bundles {
    cpus: Vec<FtraceEventBundle>,
    /// Events since all bundles were last written.
    since_flush: u64,
}

impl Bundles {
    /// Adds `ev` to `cpu`'s bundle; returns the bundles due to be written.
    pub fn push(&mut self, cpu: u32, ev: FtraceEvent) -> Vec<FtraceEventBundle> {
        let b = self.bundle(cpu);
        b.event.push(ev);
        let full = b.event.len() >= BUNDLE_EVENTS;
        self.since_flush += 1;
        if self.since_flush >= LAG_EVENTS {
            return self.drain();
        }
        if full {
            return vec![self.take(cpu)];
        }
        Vec::new()
    }

    /// The kernel lost events on `cpu` (every CPU for `None`) here: what is buffered goes out
    /// first, and the CPU's next bundle says so.
    pub fn lost(&mut self, cpu: Option<u32>) -> Vec<FtraceEventBundle> {
        let cpus: Vec<u32> = match cpu {
            Some(c) => vec![c],
            None => (0..self.cpus.len() as u32).collect(),
        };
        let mut out = Vec::new();
        for c in cpus {
            if !self.bundle(c).event.is_empty() {
                out.push(self.take(c));
            }
            self.bundle(c).lost_events = Some(true);
        }
        out
    }

    /// Every non-empty bundle (and every pending loss), leaving all empty.
    pub fn drain(&mut self) -> Vec<FtraceEventBundle> {
        self.since_flush = 0;
        (0..self.cpus.len() as u32)
            .filter(|&c| {
                let b = &self.cpus[c as usize];
                !b.event.is_empty() || b.lost_events.is_some()
            })
            .collect::<Vec<_>>()
            .into_iter()
            .map(|c| self.take(c))
            .collect()
    }

    fn bundle(&mut self, cpu: u32) -> &mut FtraceEventBundle {
        let i = cpu as usize;
        if i >= self.cpus.len() {
            self.cpus.resize_with(i + 1, FtraceEventBundle::default);
        }
        &mut self.cpus[i]
    }

    fn take(&mut self, cpu: u32) -> FtraceEventBundle {
        let b = std::mem::take(self.bundle(cpu));
        FtraceEventBundle {
            cpu: Some(cpu),
            ..b
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(ts: u64) -> FtraceEvent {
        FtraceEvent {
            timestamp: Some(ts),
            pid: Some(1),
            body: None,
        }
    }

    #[test]
    fn a_full_bundle_goes_out_alone() {
        let mut b = Bundles::default();
        for ts in 0..BUNDLE_EVENTS as u64 - 1 {
            assert!(b.push(0, ev(ts)).is_empty());
            assert!(b.push(1, ev(ts)).is_empty());
        }
        let out = b.push(1, ev(9999));
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].cpu, Some(1));
        assert_eq!(out[0].event.len(), BUNDLE_EVENTS);
        let rest = b.drain();
        assert_eq!(rest.len(), 1);
        assert_eq!(
            (rest[0].cpu, rest[0].event.len()),
            (Some(0), BUNDLE_EVENTS - 1)
        );
    }

    #[test]
    fn a_quiet_cpu_lags_at_most_lag_events() {
        let mut b = Bundles::default();
        b.push(3, ev(0));
        let mut cpu3_written_at = None;
        for ts in 1..=LAG_EVENTS {
            for bundle in b.push(0, ev(ts)) {
                if bundle.cpu == Some(3) {
                    cpu3_written_at.get_or_insert(ts);
                }
            }
        }
        // CPU 3's single event went out with the LAG_EVENTS-th event of the trace.
        assert_eq!(cpu3_written_at, Some(LAG_EVENTS - 1));
    }

    #[test]
    fn a_loss_closes_the_bundle_and_marks_the_next() {
        let mut b = Bundles::default();
        b.push(0, ev(1));
        let out = b.lost(Some(0));
        assert_eq!((out.len(), out[0].lost_events), (1, None));
        b.push(0, ev(2));
        let out = b.drain();
        assert_eq!((out[0].lost_events, out[0].event.len()), (Some(true), 1));
        // A loss on a CPU with nothing after it is still written.
        b.lost(None);
        assert_eq!(b.drain().len(), 1);
    }
}
