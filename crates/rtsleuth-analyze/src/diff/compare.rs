//! Two runs side by side, task by task: the change of every latency metric and of every cause.

use super::metric::{Metric, MIN_TAIL};
use super::run::{CauseTime, Causes, Run, Stats, Task};
use std::collections::BTreeMap;

/// One metric of one task in both runs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MetricChange {
    pub metric: Metric,
    pub base: f64,
    pub new: f64,
    pub delta: f64,
    /// `delta / base` in percent; none when the base is zero.
    pub change_pct: Option<f64>,
    /// Samples above the percentile in each run (percentiles only).
    pub tail: Option<(u64, u64)>,
    /// Fewer than [`MIN_TAIL`] samples above the percentile in either run.
    pub weak: bool,
}

/// How a cause moved between the runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    New,
    Vanished,
    Grown,
    Shrunk,
    Same,
}

impl Change {
    pub fn as_str(self) -> &'static str {
        match self {
            Change::New => "new",
            Change::Vanished => "vanished",
            Change::Grown => "grown",
            Change::Shrunk => "shrunk",
            Change::Same => "same",
        }
    }
}

/// One kind and culprit of one task's spikes in both runs.
#[derive(Debug, Clone, PartialEq)]
pub struct CulpritChange {
    pub kind: String,
    pub culprit: Option<String>,
    pub base: Option<CauseTime>,
    pub new: Option<CauseTime>,
    pub delta_us: f64,
    pub change: Change,
}

/// One kind's time over one task's spikes in both runs.
#[derive(Debug, Clone, PartialEq)]
pub struct KindChange {
    pub kind: String,
    pub base_us: f64,
    pub new_us: f64,
    pub delta_us: f64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct CauseDiff {
    pub spikes: (u64, u64),
    pub by_kind: Vec<KindChange>,
    /// Most grown first, vanished last.
    pub by_culprit: Vec<CulpritChange>,
}

impl CauseDiff {
    /// The kind and culprit whose time grew most, if any grew.
    pub fn grew_most(&self) -> Option<&CulpritChange> {
        self.by_culprit.first().filter(|c| c.delta_us > 0.0)
    }
}

/// One task present in both runs.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskDiff {
    pub key: String,
    pub pids: (i64, i64),
    pub latency: Option<Vec<MetricChange>>,
    pub causes: Option<CauseDiff>,
}

impl TaskDiff {
    pub fn metric(&self, m: Metric) -> Option<&MetricChange> {
        self.latency.as_ref()?.iter().find(|c| c.metric == m)
    }
}

/// What the two runs have in common.
#[derive(Debug, Clone, PartialEq)]
pub struct Compared {
    pub tasks: Vec<TaskDiff>,
    pub only_base: Vec<String>,
    pub only_new: Vec<String>,
}

/// Compares the runs task by task; `latency` and `causes` say which parts both runs have.
/// A task counts when it has a compared part: a trace's latency table lists tasks an explain
/// JSON never targeted, and those say nothing about causes.
pub fn compare(base: &Run, new: &Run, latency: bool, causes: bool) -> Compared {
    let counts = |t: &&Task| (latency && t.latency.is_some()) || (causes && t.causes.is_some());
    let find = |run: &Run, key: &str| {
        run.tasks
            .iter()
            .filter(counts)
            .find(|t| t.key == key)
            .cloned()
    };
    let mut tasks = Vec::new();
    let mut only_base = Vec::new();
    for b in base.tasks.iter().filter(counts) {
        match find(new, &b.key) {
            Some(n) => tasks.push(task_diff(b, &n, latency, causes)),
            None => only_base.push(b.key.clone()),
        }
    }
    let only_new = new
        .tasks
        .iter()
        .filter(counts)
        .filter(|n| find(base, &n.key).is_none())
        .map(|n| n.key.clone())
        .collect();
    tasks.sort_by(|a, b| a.key.cmp(&b.key));
    only_base.sort();
    let mut only_new: Vec<String> = only_new;
    only_new.sort();
    Compared {
        tasks,
        only_base,
        only_new,
    }
}

fn task_diff(b: &Task, n: &Task, latency: bool, causes: bool) -> TaskDiff {
    // In a run whose latency is compared, a task listed only for its causes had no wake-up
    // there: a count of zero, not an unknown.
    let lat = |t: &Task| t.latency.unwrap_or_default();
    let none = Causes::default();
    TaskDiff {
        key: b.key.clone(),
        pids: (b.pid, n.pid),
        latency: latency.then(|| metric_changes(&lat(b), &lat(n))),
        causes: causes.then(|| {
            cause_diff(
                b.causes.as_ref().unwrap_or(&none),
                n.causes.as_ref().unwrap_or(&none),
            )
        }),
    }
}

/// Rounds to the nanosecond (3 decimals of a µs), so that a difference of two printed values
/// prints as their difference.
pub fn round3(x: f64) -> f64 {
    (x * 1e3).round() / 1e3
}

fn metric_changes(b: &Stats, n: &Stats) -> Vec<MetricChange> {
    Metric::ALL
        .into_iter()
        .map(|metric| {
            let (base, new) = (round3(metric.of(b)), round3(metric.of(n)));
            let delta = round3(new - base);
            let tail = metric
                .tail_samples(b.count)
                .zip(metric.tail_samples(n.count));
            MetricChange {
                metric,
                base,
                new,
                delta,
                change_pct: (base != 0.0).then(|| (delta / base * 1e4).round() / 1e2),
                tail,
                weak: tail.is_some_and(|(tb, tn)| tb.min(tn) < MIN_TAIL),
            }
        })
        .collect()
}

fn cause_diff(b: &Causes, n: &Causes) -> CauseDiff {
    let mut by_culprit: Vec<CulpritChange> = b
        .by_culprit
        .keys()
        .chain(n.by_culprit.keys())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .map(|key| {
            let (base, new) = (
                b.by_culprit.get(key).copied(),
                n.by_culprit.get(key).copied(),
            );
            let us = |c: Option<CauseTime>| round3(c.map_or(0.0, |c| c.total_us));
            let delta_us = round3(us(new) - us(base));
            let change = match (base, new) {
                (None, _) => Change::New,
                (_, None) => Change::Vanished,
                _ if delta_us > 0.0 => Change::Grown,
                _ if delta_us < 0.0 => Change::Shrunk,
                _ => Change::Same,
            };
            CulpritChange {
                kind: key.0.clone(),
                culprit: key.1.clone(),
                base,
                new,
                delta_us,
                change,
            }
        })
        .collect();
    by_culprit.sort_by(|a, b| b.delta_us.total_cmp(&a.delta_us));
    let mut kinds: BTreeMap<&str, (f64, f64)> = BTreeMap::new();
    for c in &by_culprit {
        let k = kinds.entry(c.kind.as_str()).or_default();
        k.0 += c.base.map_or(0.0, |t| t.total_us);
        k.1 += c.new.map_or(0.0, |t| t.total_us);
    }
    let mut by_kind: Vec<KindChange> = kinds
        .into_iter()
        .map(|(kind, (base, new))| KindChange {
            kind: kind.to_string(),
            base_us: round3(base),
            new_us: round3(new),
            delta_us: round3(round3(new) - round3(base)),
        })
        .collect();
    by_kind.sort_by(|a, b| b.delta_us.total_cmp(&a.delta_us));
    CauseDiff {
        spikes: (b.spikes, n.spikes),
        by_kind,
        by_culprit,
    }
}
