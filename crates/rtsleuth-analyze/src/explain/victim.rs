//! What `explain` keeps per target task: its wake-up in flight, its last explained wake-up
//! (a cyclictest mark that follows may still re-time it), its worst findings and the aggregate
//! of its spikes.

use super::cause::{Cause, Source};
use super::chain::Chain;
use super::decompose::WakeUp;
use super::finding::{Culprit, Evidence, Finding};
use super::period::Rhythm;
use rtsleuth_trace::event::Timestamp;
use rustc_hash::FxHashMap as HashMap;

/// When a wake-up was due, how that is known, and the proof.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Due {
    pub ts: Timestamp,
    pub source: Source,
    pub evidence: Evidence,
}

/// A wake-up in flight, with what was known when it started.
#[derive(Debug, Clone)]
pub struct Pending {
    pub wake: WakeUp,
    pub due: Option<Due>,
    /// The task's last event in task context before the wake-up.
    pub last_ran: Option<Timestamp>,
    /// The wake chain that led to it, when another task's waking did and the chain is proven.
    pub chain: Option<Chain>,
}

/// A late wake-up already cut into components, kept until nothing can change it any more.
#[derive(Debug, Clone)]
pub struct Explained {
    pub pending: Pending,
    pub finding: Finding,
}

/// The spikes of one kind and culprit.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Spikes {
    /// How many wake-ups had time of this kind and culprit.
    pub spikes: u64,
    pub total_ns: u64,
    /// The most one wake-up had.
    pub max_ns: u64,
}

impl Spikes {
    /// Counts `other`'s spikes in with these.
    pub fn add(&mut self, other: Spikes) {
        self.spikes += other.spikes;
        self.total_ns = self.total_ns.saturating_add(other.total_ns);
        self.max_ns = self.max_ns.max(other.max_ns);
    }
}

pub type Aggregate = HashMap<(Cause, Option<Culprit>), Spikes>;

/// Adds a finding's components to an aggregate, once per kind and culprit.
pub fn aggregate_into(agg: &mut Aggregate, f: &Finding) {
    let mut per_key: Vec<((Cause, Option<Culprit>), u64)> = Vec::new();
    for c in &f.components {
        let key = (c.cause, c.culprit);
        match per_key.iter_mut().find(|(k, _)| *k == key) {
            Some((_, ns)) => *ns += c.ns,
            None => per_key.push((key, c.ns)),
        }
    }
    for (key, ns) in per_key {
        agg.entry(key).or_default().add(Spikes {
            spikes: 1,
            total_ns: ns,
            max_ns: ns,
        });
    }
}

#[derive(Debug, Default)]
pub struct Victim {
    pub rhythm: Rhythm,
    pub pending: Option<Pending>,
    pub last: Option<Explained>,
    /// Wake-ups explained.
    pub wakeups: u64,
    /// The scheduler's wake-ups of it are traced: those are its wake-ups, not timerlat's
    /// activations.
    pub sched_woken: bool,
    /// Wake-ups at or above the threshold.
    pub spikes: u64,
    /// The worst findings, worst first, at most `top`.
    pub worst: Vec<Finding>,
    pub aggregate: Aggregate,
}

/// Which findings are filed: at or above the threshold and, when `due` is given, due within
/// [`SAME_WAKEUP_NS`] of it; of those, the `top` worst are kept.
#[derive(Debug, Clone, Copy)]
pub struct Filing {
    pub threshold_ns: u64,
    pub due: Option<Timestamp>,
    pub top: usize,
}

/// How far a finding's due time may lie from the time `--due` names and still be that
/// wake-up: the deadline a measuring thread slept to is its timer's due time on the `mono`
/// clock, or a few µs off for a mark's; its next deadline is at least 50 µs later.
pub const SAME_WAKEUP_NS: u64 = 20_000;

impl Filing {
    /// Whether `f` is filed (docs/claims.md, "Soak lines": spike_is_finding).
    pub fn files(&self, f: &Finding) -> bool {
        let near = |due: Timestamp| {
            f.expected
                .is_some_and(|e| e.abs_diff(due) <= SAME_WAKEUP_NS)
        };
        f.files_at(self.threshold_ns) && self.due.map_or(true, near)
    }
}

impl Victim {
    /// Files the last explained wake-up for good.
    pub fn commit(&mut self, filing: Filing) {
        if let Some(done) = self.last.take() {
            self.file(done.finding, filing);
        }
    }

    /// Counts a finding that `filing` files and keeps it if it is among the worst.
    pub fn file(&mut self, f: Finding, filing: Filing) {
        if !filing.files(&f) {
            return;
        }
        let top = filing.top;
        let lat = f.latency_ns();
        self.spikes += 1;
        aggregate_into(&mut self.aggregate, &f);
        let at = self.worst.partition_point(|w| w.latency_ns() >= lat);
        if at < top {
            self.worst.insert(at, f);
            self.worst.truncate(top);
        }
    }
}

/// Everything filed for one target: its wake-ups' victim and its preemption waits' victim.
#[derive(Debug, Clone, Copy)]
pub struct Target<'a> {
    pub woken: Option<&'a Victim>,
    pub preempted: Option<&'a Victim>,
}

impl<'a> Target<'a> {
    fn both(self) -> impl Iterator<Item = &'a Victim> {
        self.woken.into_iter().chain(self.preempted)
    }

    pub fn wakeups(self) -> u64 {
        self.woken.map_or(0, |v| v.wakeups)
    }

    pub fn preemptions(self) -> u64 {
        self.preempted.map_or(0, |v| v.wakeups)
    }

    pub fn spikes(self) -> u64 {
        self.both().map(|v| v.spikes).sum()
    }

    /// Its worst findings of both kinds (each list worst first, not merged).
    pub fn worst(self) -> impl Iterator<Item = &'a Finding> {
        self.both().flat_map(|v| v.worst.iter())
    }

    /// The latency of its worst finding.
    pub fn worst_ns(self) -> u64 {
        self.worst().map(Finding::latency_ns).max().unwrap_or(0)
    }

    /// Its spikes of both kinds, per kind and culprit, added to `into`.
    pub fn add_aggregate(self, into: &mut Aggregate) {
        for (k, s) in self.both().flat_map(|v| v.aggregate.iter()) {
            into.entry(*k).or_default().add(*s);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::cause::{Phase, Source};
    use super::super::finding::{Component, Note, RunAt};
    use super::*;

    fn finding(lat: u64, culprit: i32) -> Finding {
        let timeline = vec![
            Component::new(
                Cause::HigherPriority,
                Phase::AfterWakeup,
                0,
                (1000, 1000 + lat - 1),
                Some(Culprit::Task(culprit)),
                Note::Interrupt,
            ),
            Component::new(
                Cause::KernelPath,
                Phase::AfterWakeup,
                0,
                (1000 + lat - 1, 1000 + lat),
                None,
                Note::Scheduling,
            ),
        ];
        Finding {
            pid: 1,
            prio: Some(19),
            cpu: 0,
            source: Source::Wakeup,
            expected: None,
            evidence: None,
            ran_past_due: None,
            unrecorded_due: None,
            wakeup: 1000,
            waker_cpu: 0,
            wake_irq_entry: None,
            run: 1000 + lat,
            run_at: RunAt::Wake(crate::wakeups::RunAt::Switch),
            wake_end: 1000 + lat,
            components: timeline.clone(),
            timeline,
            chain: Vec::new(),
        }
    }

    fn explained(lat: u64, culprit: i32) -> Explained {
        let wake = WakeUp::new(1, 19, (0, 1000), 0);
        Explained {
            pending: Pending {
                wake,
                due: None,
                last_ran: None,
                chain: None,
            },
            finding: finding(lat, culprit),
        }
    }

    #[test]
    fn keeps_the_worst_and_aggregates_above_the_threshold() {
        let mut v = Victim::default();
        for (lat, who) in [(50, 7), (300, 9), (20, 9), (200, 7), (400, 9)] {
            v.last = Some(explained(lat, who));
            v.commit(Filing {
                threshold_ns: 40,
                due: None,
                top: 2,
            });
        }
        let worst: Vec<u64> = v.worst.iter().map(Finding::latency_ns).collect();
        assert_eq!(worst, [400, 300]);
        assert_eq!(v.spikes, 4);
        let nine = v.aggregate[&(Cause::HigherPriority, Some(Culprit::Task(9)))];
        assert_eq!(
            nine,
            Spikes {
                spikes: 2,
                total_ns: 299 + 399,
                max_ns: 399
            }
        );
        let seven = v.aggregate[&(Cause::HigherPriority, Some(Culprit::Task(7)))];
        assert_eq!(
            seven,
            Spikes {
                spikes: 2,
                total_ns: 49 + 199,
                max_ns: 199
            }
        );
        assert_eq!(v.aggregate[&(Cause::KernelPath, None)].spikes, 4);
    }

    /// With a due time, only the finding due within 20 us of it is filed, however late the
    /// others; one without a due time never is.
    #[test]
    fn a_due_time_files_only_the_wakeup_due_then() {
        let filing = Filing {
            threshold_ns: 0,
            due: Some(1_000_000),
            top: 5,
        };
        let mut v = Victim::default();
        for (expected, lat) in [
            (Some(1_000_000 - 20_000), 3_000_000),
            (Some(1_000_000 + 20_001), 9_000_000),
            (None, 8_000_000),
            (Some(2_000_000), 7_000_000),
        ] {
            v.file(
                Finding {
                    expected,
                    ..finding(lat, 7)
                },
                filing,
            );
        }
        let filed: Vec<u64> = v.worst.iter().map(Finding::latency_ns).collect();
        // Run at 1000 + 3_000_000, due at 980_000.
        assert_eq!((filed, v.spikes), (vec![2_021_000], 1));
    }
}
