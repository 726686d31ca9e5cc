//! The ground truth: what a correct analysis must report for the generated
//! trace, computed from the abstract event stream (not from the text).

use std::collections::{BTreeMap, HashMap, HashSet};

use crate::scenario::TaskSpec;
use crate::sim::{Ev, Item, Kind, IDLE};

/// Ground truth for one task.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ExpectedTask {
    /// Thread id.
    pub pid: u32,
    /// Its comm, as printed in the sched payloads.
    pub comm: String,
    /// Kernel prio (`next_prio` of its switch-ins).
    pub prio: u32,
    /// Every wake-up latency (switch-in ts − wake-up ts) in trace order, in
    /// ns. May be cut short when [`Expected::samples_truncated`] is set.
    pub samples_ns: Vec<u64>,
    /// Number of samples (exact even when `samples_ns` was truncated).
    pub count: u64,
    /// Sum of all samples in ns (exact).
    pub sum_ns: u64,
    /// Largest sample (0 when there is none).
    pub max_ns: u64,
    /// Timestamp (ns) of the sched_switch that ended the first largest sample.
    pub max_at_ns: u64,
    /// Sum of on-CPU intervals whose switch-in and switch-out are both in
    /// the trace.
    pub runtime_ns: u64,
    /// Number of switch-ins.
    pub switches: u64,
}

/// Ground truth for a whole generated trace.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Expected {
    /// Tasks that were switched in or out at least once, by pid.
    pub tasks: Vec<ExpectedTask>,
    /// Number of event lines per event name, as printed (trace-cmd prints
    /// `tracing_mark_write` as `print`).
    pub events: BTreeMap<String, u64>,
    /// Number of event lines.
    pub event_lines: u64,
    /// Number of other lines: header, blank, lost-events, buffer-started,
    /// `[...]`, trace-cmd's `version`/`cpus`/`CPU N is empty`.
    pub other_lines: u64,
    /// Sum of the counts on lost-events lines.
    pub lost_events: u64,
    /// CPU count (`#P:` / `cpus=`).
    pub cpus: u32,
    /// The trace contains `sched_waking`, so wake-ups start there.
    pub has_waking: bool,
    /// Some `samples_ns` vectors were capped by `Scenario::max_samples`.
    pub samples_truncated: bool,
    /// Output bytes.
    pub bytes: u64,
}

impl Expected {
    /// The entry for `pid`.
    pub fn task(&self, pid: u32) -> Option<&ExpectedTask> {
        self.tasks.iter().find(|t| t.pid == pid)
    }

    /// Total number of wake-up samples.
    pub fn sample_count(&self) -> u64 {
        self.tasks.iter().map(|t| t.count).sum()
    }

    /// All stored samples (ns), task by task.
    pub fn all_samples_ns(&self) -> Vec<u64> {
        self.tasks
            .iter()
            .flat_map(|t| t.samples_ns.iter().copied())
            .collect()
    }

    /// The largest sample over all tasks: (pid, max_ns, max_at_ns); ties go
    /// to the earliest switch.
    pub fn overall_max(&self) -> Option<(u32, u64, u64)> {
        self.tasks
            .iter()
            .filter(|t| t.count > 0)
            .map(|t| (t.pid, t.max_ns, t.max_at_ns))
            .max_by(|a, b| a.1.cmp(&b.1).then(b.2.cmp(&a.2)))
    }
}

#[derive(Default, Clone)]
struct Acc {
    samples: Vec<u64>,
    count: u64,
    sum: u64,
    max: u64,
    max_at: u64,
}

/// Pending wake-ups under one start definition.
#[derive(Default)]
struct Def {
    pending: HashMap<u32, u64>,
    acc: HashMap<u32, Acc>,
    truncated: bool,
}

impl Def {
    fn start(&mut self, pid: u32, ts: u64, running: &HashSet<u32>) {
        if pid != 0 && !running.contains(&pid) {
            self.pending.entry(pid).or_insert(ts);
        }
    }

    fn end(&mut self, pid: u32, ts: u64, cap: Option<usize>, window: &Window) {
        if let Some(t0) = self.pending.remove(&pid) {
            if !window.recorded_from(t0) {
                return;
            }
            let lat = ts - t0;
            let a = self.acc.entry(pid).or_default();
            a.count += 1;
            a.sum += lat;
            if a.count == 1 || lat > a.max {
                a.max = lat;
                a.max_at = ts;
            }
            let room = match cap {
                None => true,
                Some(c) => a.samples.len() < c,
            };
            if room {
                a.samples.push(lat);
            } else {
                self.truncated = true;
            }
        }
    }
}

/// The CPUs a printed `CPU n buffer started` line says lost their oldest events, and where
/// each one's events begin.
struct Window {
    named: Vec<bool>,
    first: Vec<Option<u64>>,
}

impl Window {
    /// No named CPU began recording after `start` (by now: the wake-up ends at this event).
    fn recorded_from(&self, start: u64) -> bool {
        (self.named.iter().zip(&self.first))
            .all(|(&named, first)| !named || first.map_or(true, |f| f <= start))
    }
}

/// Applies the latency definition to the item stream. Two definitions are
/// tracked at once (start at `sched_waking`, or at `sched_wakeup[_new]`)
/// because which one applies depends on whether the finished trace contains
/// any `sched_waking`, which a size-limited stream only knows at the end.
pub(crate) struct Oracle {
    pids: Vec<u32>,
    waking: Def,
    wakeup: Def,
    running: HashSet<u32>,
    on_cpu: Vec<Option<(u32, u64)>>,
    runtime: HashMap<u32, (u64, u64)>,
    saw_waking: bool,
    lost: u64,
    cap: Option<usize>,
    window: Window,
    /// The variant prints `CPU n buffer started` lines.
    prints_started: bool,
}

impl Oracle {
    pub(crate) fn new(
        tasks: &[TaskSpec],
        cpus: u32,
        cap: Option<usize>,
        prints_started: bool,
    ) -> Oracle {
        Oracle {
            pids: tasks.iter().map(|t| t.pid).collect(),
            waking: Def::default(),
            wakeup: Def::default(),
            running: HashSet::new(),
            on_cpu: vec![None; cpus as usize],
            runtime: HashMap::new(),
            saw_waking: false,
            lost: 0,
            cap,
            window: Window {
                named: vec![false; cpus as usize],
                first: vec![None; cpus as usize],
            },
            prints_started,
        }
    }

    fn pid(&self, task: u32) -> u32 {
        if task == IDLE {
            0
        } else {
            self.pids[task as usize]
        }
    }

    pub(crate) fn feed(&mut self, item: &Item) {
        match item {
            Item::Lost { n, .. } => {
                self.lost += n;
                self.waking.pending.clear();
                self.wakeup.pending.clear();
            }
            Item::Event(ev) => {
                self.window.first[ev.cpu as usize].get_or_insert(ev.ts_us * 1000);
                self.event(ev)
            }
            Item::BufferStarted { cpu } if self.prints_started => {
                self.window.named[*cpu as usize] = true
            }
            Item::BufferStarted { .. } | Item::Elided => {}
        }
    }

    fn event(&mut self, ev: &Ev) {
        let ts = ev.ts_us * 1000;
        match ev.kind {
            Kind::Waking { task, .. } => {
                self.saw_waking = true;
                let pid = self.pid(task);
                self.waking.start(pid, ts, &self.running);
            }
            Kind::Wakeup { task, .. } | Kind::WakeupNew { task, .. } => {
                let pid = self.pid(task);
                self.wakeup.start(pid, ts, &self.running);
            }
            Kind::Switch { prev, next, .. } => {
                let (pp, np) = (self.pid(prev), self.pid(next));
                let c = ev.cpu as usize;
                if let Some((p, t0)) = self.on_cpu[c].take() {
                    if p == pp && p != 0 {
                        self.runtime.entry(p).or_default().0 += ts - t0;
                    }
                }
                self.running.remove(&pp);
                if np != 0 {
                    self.running.insert(np);
                    self.runtime.entry(np).or_default().1 += 1;
                    self.on_cpu[c] = Some((np, ts));
                    self.waking.end(np, ts, self.cap, &self.window);
                    self.wakeup.end(np, ts, self.cap, &self.window);
                }
                if pp != 0 {
                    self.runtime.entry(pp).or_default();
                }
            }
            _ => {}
        }
    }

    pub(crate) fn finish(self, tasks: &[TaskSpec], out: &mut Expected) {
        let def = if self.saw_waking {
            &self.waking
        } else {
            &self.wakeup
        };
        let mut v = Vec::new();
        for (i, t) in tasks.iter().enumerate() {
            let pid = self.pids[i];
            let rt = self.runtime.get(&pid);
            let acc = def.acc.get(&pid);
            if rt.is_none() && acc.is_none() {
                continue;
            }
            let (runtime, switches) = rt.copied().unwrap_or((0, 0));
            let a = acc.cloned().unwrap_or_default();
            v.push(ExpectedTask {
                pid,
                comm: t.comm.clone(),
                prio: t.prio(),
                samples_ns: a.samples,
                count: a.count,
                sum_ns: a.sum,
                max_ns: a.max,
                max_at_ns: a.max_at,
                runtime_ns: runtime,
                switches,
            });
        }
        v.sort_by_key(|t| t.pid);
        out.tasks = v;
        out.has_waking = self.saw_waking;
        out.samples_truncated = def.truncated;
        out.lost_events = self.lost;
    }
}
