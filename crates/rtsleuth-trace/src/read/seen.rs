//! What a reader's worker thread notes about the events it makes, so that the in-order thread
//! adds a whole block to [`TraceInfo`] at once. Counting event by event there read every event
//! a second time on the thread the analysis runs on, straight after another core wrote it:
//! that cost `explain` 22 of its 305 ms CPU (wall 191 -> 170 ms) on a 2 M-event trace.dat.

use super::{Record, TraceInfo};
use crate::event::Timestamp;

/// The times and CPUs of a run of consecutive events, and the losses among them.
#[derive(Debug, Default)]
pub(crate) struct Seen {
    events: u64,
    /// The first event's time; the earliest of all; the latest so far, as
    /// [`TraceInfo::last_ts`] keeps it.
    first: Option<Timestamp>,
    earliest: Timestamp,
    latest: Timestamp,
    /// Events earlier than one before them in the run.
    out_of_order: u64,
    /// CPUs with an event in the run, in order.
    cpus: Vec<u32>,
    /// The CPU of the run's last event: an event on the same CPU as the one before it, as
    /// most are, need not search `cpus`.
    last_cpu: Option<u32>,
    lost_events: u64,
    lost_markers: u64,
}

impl Seen {
    /// Notes the run's next event. Inlined: the readers call it for every event.
    #[inline]
    pub(crate) fn event(&mut self, ts: Timestamp, cpu: u32) {
        self.events += 1;
        if self.first.is_none() {
            (self.first, self.earliest, self.latest) = (Some(ts), ts, ts);
        } else if ts < self.latest {
            self.out_of_order += 1;
            self.earliest = self.earliest.min(ts);
        } else {
            self.latest = ts;
        }
        if self.last_cpu != Some(cpu) {
            self.last_cpu = Some(cpu);
            add_cpu(&mut self.cpus, cpu);
        }
    }

    /// Notes a loss marker and the count it gives, if any.
    pub(crate) fn lost(&mut self, count: Option<u64>) {
        self.lost_events += count.unwrap_or(0);
        self.lost_markers += 1;
    }
}

impl TraceInfo {
    /// Adds a run of events, `records` being the run itself, as [`TraceInfo::saw_event`] for
    /// each event and the losses' counts would. The run is gone over again only when it starts
    /// before the latest event already seen, which an ordered trace never does.
    pub(crate) fn saw_run(&mut self, run: &Seen, records: &[Record<'_>]) {
        self.lost_events += run.lost_events;
        let Some(first) = run.first else {
            return;
        };
        if self.last_ts.is_some_and(|last| run.earliest < last) {
            for r in records {
                if let Record::Event(ev) = r {
                    self.saw_event(ev.ts, ev.cpu);
                }
            }
            return;
        }
        self.first_ts.get_or_insert(first);
        self.last_ts = Some(run.latest);
        self.out_of_order += run.out_of_order;
        for &cpu in &run.cpus {
            add_cpu(&mut self.cpus, cpu);
        }
    }

    /// [`TraceInfo::saw_run`] for a binary reader, whose every event stands for a line of the
    /// trace's text (as [`TraceInfo::saw_record`]) and every loss for a marker line.
    pub(crate) fn saw_records(&mut self, run: &Seen, records: &[Record<'_>]) {
        self.events += run.events;
        self.lines.events += run.events;
        self.lines.total += run.events;
        self.lines.lost_markers += run.lost_markers;
        self.saw_run(run, records);
    }
}

/// Adds `cpu` to an ordered set of CPUs.
pub(super) fn add_cpu(cpus: &mut Vec<u32>, cpu: u32) {
    if let Err(pos) = cpus.binary_search(&cpu) {
        cpus.insert(pos, cpu);
    }
}

#[cfg(test)]
mod tests {
    use super::Seen;
    use crate::event::{Event, EventKind, Flags};
    use crate::input::Format;
    use crate::read::{Record, TraceInfo};

    fn event(ts: u64, cpu: u32) -> Record<'static> {
        Record::Event(Event {
            ts,
            cpu,
            pid: 1,
            comm: "t",
            tgid: None,
            flags: Flags::default(),
            name: "e",
            payload: "",
            kind: EventKind::Other,
        })
    }

    /// The counts one event at a time: what a run must add up to.
    fn one_by_one(records: &[Record<'_>]) -> TraceInfo {
        let mut info = TraceInfo::new("t", Format::FtraceText, None);
        for r in records {
            match r {
                Record::Event(ev) => info.saw_record(ev.ts, ev.cpu),
                Record::Lost { count, .. } => {
                    info.lost_events += count.unwrap_or(0);
                    info.lines.lost_markers += 1;
                }
                Record::HistoryBegins { .. } => {}
            }
        }
        info
    }

    fn by_runs(records: &[Record<'_>], run: usize) -> TraceInfo {
        let mut info = TraceInfo::new("t", Format::FtraceText, None);
        for part in records.chunks(run) {
            let mut seen = Seen::default();
            for r in part {
                match r {
                    Record::Event(ev) => seen.event(ev.ts, ev.cpu),
                    Record::Lost { count, .. } => seen.lost(*count),
                    Record::HistoryBegins { .. } => {}
                }
            }
            info.saw_records(&seen, part);
        }
        info
    }

    fn summary(i: &TraceInfo) -> String {
        format!(
            "events {} lines {}/{} lost {} in {} first {:?} last {:?} out of order {} cpus {:?}",
            i.events,
            i.lines.events,
            i.lines.total,
            i.lost_events,
            i.lines.lost_markers,
            i.first_ts,
            i.last_ts,
            i.out_of_order,
            i.cpus
        )
    }

    /// Runs of any length add up to the per-event counts, whether a run starts after the
    /// latest event before it (the sum) or earlier (gone over again).
    #[test]
    fn runs_add_up_to_events_one_by_one() {
        let lost = || Record::Lost {
            cpu: Some(1),
            count: Some(7),
        };
        let ordered = [
            event(10, 3),
            event(10, 1),
            lost(),
            event(12, 0),
            event(20, 3),
        ];
        // 9 after 12 and 15 after 20 are out of order (9 starts the second run of two), and
        // both 4s after 5.
        let shuffled = [
            event(10, 2),
            event(12, 0),
            event(9, 5),
            event(20, 1),
            event(15, 2),
        ];
        let lossy = [lost(), event(5, 0), lost(), event(4, 1), event(4, 0)];
        // Runs of one CPU's events, as a merged trace.dat has them.
        let runs = [
            event(1, 4),
            event(2, 4),
            event(3, 1),
            event(4, 1),
            event(5, 4),
        ];
        for records in [&ordered[..], &shuffled[..], &lossy[..], &runs[..]] {
            let expected = summary(&one_by_one(records));
            for run in 1..=records.len() {
                assert_eq!(summary(&by_runs(records, run)), expected, "runs of {run}");
            }
        }
        assert!(summary(&by_runs(&runs, 5)).ends_with("cpus [1, 4]"));
        assert_eq!(
            summary(&one_by_one(&shuffled)),
            "events 5 lines 5/5 lost 0 in 0 first Some(10) last Some(20) out of order 2 cpus [0, 1, 2, 5]"
        );
        assert_eq!(
            summary(&one_by_one(&lossy)),
            "events 3 lines 3/3 lost 14 in 2 first Some(5) last Some(5) out of order 2 cpus [0, 1]"
        );
    }
}
