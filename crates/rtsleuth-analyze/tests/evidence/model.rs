//! The findings under test, read from the `rtsleuth.explain/1` JSON, and the checks that need
//! nothing but the JSON itself (rule 1: the timeline tiles the latency).

use serde_json::Value;
use std::collections::BTreeMap;
use std::fmt;

/// Tolerance in ns for timestamps that went through float seconds.
pub const TOL: u64 = 2;

/// Float seconds (or microseconds times 1e3) to ns.
pub fn secs_to_ns(v: f64) -> u64 {
    (v * 1e9).round().max(0.0) as u64
}

pub fn fmt_ts(ns: u64) -> String {
    format!("{}.{:09}", ns / 1_000_000_000, ns % 1_000_000_000)
}

pub fn near(a: u64, b: u64) -> bool {
    a.abs_diff(b) <= TOL
}

/// One stretch of a finding's timeline.
#[derive(Debug, Clone)]
pub struct Stretch {
    pub kind: String,
    pub phase: String,
    pub cpu: u32,
    pub start: u64,
    pub end: u64,
    pub culprit: Option<String>,
    pub culprit_pid: Option<i32>,
}

impl fmt::Display for Stretch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} ({}) cpu{} [{}, {}]",
            self.kind,
            self.phase,
            self.cpu,
            fmt_ts(self.start),
            fmt_ts(self.end)
        )?;
        if let Some(c) = &self.culprit {
            write!(f, " culprit {c}")?;
        }
        if let Some(p) = self.culprit_pid {
            write!(f, " (pid {p})")?;
        }
        Ok(())
    }
}

#[derive(Debug, Clone)]
pub struct Component {
    pub kind: String,
    pub culprit: Option<String>,
    pub ns: f64,
}

/// One finding of one option set.
#[derive(Debug, Clone)]
pub struct Finding {
    /// Which option set produced it (`default` / `all`).
    pub set: String,
    pub comm: String,
    pub pid: i32,
    pub cpu: u32,
    pub latency_us: f64,
    pub source: String,
    pub expected: Option<u64>,
    pub wakeup: u64,
    pub run: u64,
    pub run_at: Option<String>,
    pub due: Option<String>,
    pub components: Vec<Component>,
    pub stretches: Vec<Stretch>,
}

impl Finding {
    /// Where the finding's window starts: the due time, or the wake-up without one.
    pub fn window_start(&self) -> u64 {
        self.expected.unwrap_or(self.wakeup)
    }
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "[{}] {}-{} run_ts={} ({:.3} us, source {}, wakeup {}",
            self.set,
            self.comm,
            self.pid,
            fmt_ts(self.run),
            self.latency_us,
            self.source,
            fmt_ts(self.wakeup)
        )?;
        if let Some(e) = self.expected {
            write!(f, ", expected {}", fmt_ts(e))?;
        }
        if let Some(r) = &self.run_at {
            write!(f, ", run_at {r}")?;
        }
        write!(f, ")")
    }
}

/// What a rule found wrong.
#[derive(Debug, Clone)]
pub struct Violation {
    pub rule: &'static str,
    pub finding: usize,
    pub stretch: Option<usize>,
    pub why: String,
}

/// The pid a culprit string names when it is a task (`comm-pid`).
pub fn pid_suffix(culprit: &str) -> Option<i32> {
    culprit.rsplit_once('-')?.1.parse().ok()
}

pub const KINDS: [&str; 9] = [
    "hardirq",
    "irqs_off",
    "softirq",
    "higher_priority",
    "preempt_off",
    "fair_share",
    "black_hole",
    "kernel_path",
    "unknown",
];

/// Kinds whose culprit is a task.
pub fn task_kind(kind: &str) -> bool {
    matches!(
        kind,
        "higher_priority" | "preempt_off" | "fair_share" | "irqs_off"
    )
}

fn ts(v: &Value) -> Option<u64> {
    v.as_f64().map(secs_to_ns)
}

fn string(v: &Value) -> Option<String> {
    v.as_str().map(str::to_string)
}

/// Takes the chain and queued findings out of an explain document: they are the claims
/// referee's (crates/rtsleuth/tests/referee), which cuts chains into their links and reads a
/// work's queueing; this walk knows one victim per finding and no workqueue events.
pub fn without_chains(mut doc: Value) -> Value {
    if let Some(list) = doc["findings"].as_array_mut() {
        list.retain(|f| f["source"] != "chain" && f["source"] != "queued");
    }
    doc
}

/// Reads the findings of one explain document. A finding the parser cannot read at all is a
/// violation of the contract, reported through `errors`.
pub fn parse_findings(set: &str, doc: &Value, errors: &mut Vec<String>) -> Vec<Finding> {
    let mut out = Vec::new();
    let Some(list) = doc["findings"].as_array() else {
        errors.push(format!("[{set}] no findings array"));
        return out;
    };
    for (i, f) in list.iter().enumerate() {
        match parse_finding(set, f) {
            Ok(f) => out.push(f),
            Err(e) => errors.push(format!("[{set}] finding #{i}: {e}: {f}")),
        }
    }
    out
}

fn parse_finding(set: &str, f: &Value) -> Result<Finding, String> {
    let req = |k: &str| -> Result<u64, String> { ts(&f[k]).ok_or(format!("no {k}")) };
    let components = f["components"]
        .as_array()
        .ok_or("no components")?
        .iter()
        .map(|c| Component {
            kind: string(&c["kind"]).unwrap_or_default(),
            culprit: string(&c["culprit"]),
            ns: c["us"].as_f64().unwrap_or(f64::NAN) * 1e3,
        })
        .collect::<Vec<_>>();
    let stretches = f["timeline"]
        .as_array()
        .ok_or("no timeline")?
        .iter()
        .map(|s| -> Result<Stretch, String> {
            Ok(Stretch {
                kind: string(&s["kind"]).ok_or("stretch without kind")?,
                phase: string(&s["phase"]).unwrap_or_default(),
                cpu: s["cpu"].as_u64().ok_or("stretch without cpu")? as u32,
                start: ts(&s["start_ts"]).ok_or("stretch without start_ts")?,
                end: ts(&s["end_ts"]).ok_or("stretch without end_ts")?,
                culprit: string(&s["culprit"]),
                culprit_pid: s["culprit_pid"].as_i64().map(|p| p as i32),
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Finding {
        set: set.to_string(),
        comm: string(&f["task"]["comm"]).unwrap_or_default(),
        pid: f["task"]["pid"].as_i64().ok_or("no task.pid")? as i32,
        cpu: f["cpu"].as_u64().ok_or("no cpu")? as u32,
        latency_us: f["latency_us"].as_f64().ok_or("no latency_us")?,
        source: string(&f["source"]).ok_or("no source")?,
        expected: ts(&f["expected_ts"]),
        wakeup: req("wakeup_ts")?,
        run: req("run_ts")?,
        run_at: string(&f["run_at"]),
        due: string(&f["due"]),
        components,
        stretches,
    })
}

/// Rule 1: the timeline tiles `[expected or wakeup, run]` and agrees with the components.
pub fn check_tiling(fi: usize, f: &Finding, out: &mut Vec<Violation>) {
    let mut out_culprit = Vec::new();
    let mut v = |stretch: Option<usize>, why: String| {
        out.push(Violation {
            rule: "tiling",
            finding: fi,
            stretch,
            why,
        })
    };
    let latency_ns = f.latency_us * 1e3;
    let start = f.window_start();
    if !matches!(
        f.run_at.as_deref(),
        Some("switch" | "inferred" | "resumed" | "mark")
    ) {
        v(None, format!("run_at is {:?}", f.run_at));
    }
    if f.due.as_deref().map_or(true, str::is_empty) {
        v(None, "no `due`".into());
    }
    if !matches!(
        f.source.as_str(),
        "timer" | "tracemark" | "period" | "wakeup"
    ) {
        v(None, format!("unknown source {}", f.source));
    }
    if f.run < start {
        v(None, "run_ts before the window's start".into());
    }
    if (f.run.saturating_sub(start) as f64 - latency_ns).abs() > 2.0 + TOL as f64 {
        v(
            None,
            format!(
                "latency_us {} is not run_ts - {} ({} ns)",
                f.latency_us,
                if f.expected.is_some() {
                    "expected_ts"
                } else {
                    "wakeup_ts"
                },
                f.run.saturating_sub(start)
            ),
        );
    }
    if let Some(e) = f.expected {
        if e > f.wakeup + TOL {
            v(None, "expected_ts after wakeup_ts".into());
        }
    }
    if f.wakeup > f.run + TOL {
        v(None, "wakeup_ts after run_ts".into());
    }
    for (i, s) in f.stretches.iter().enumerate() {
        let named = s.culprit.as_deref().and_then(pid_suffix);
        if task_kind(&s.kind) && s.culprit_pid.is_some() && named != s.culprit_pid {
            out_culprit.push((
                i,
                format!(
                    "culprit {:?} does not name culprit_pid {:?}",
                    s.culprit, s.culprit_pid
                ),
            ));
        }
        if !task_kind(&s.kind)
            && s.culprit_pid.is_some()
            && s.kind != "kernel_path"
            && s.kind != "unknown"
        {
            out_culprit.push((i, format!("a {} stretch with a task culprit_pid", s.kind)));
        }
        if !KINDS.contains(&s.kind.as_str()) {
            v(Some(i), format!("unknown kind {}", s.kind));
        }
        if s.end + TOL < s.start {
            v(Some(i), "ends before it starts".into());
        }
        let (lo, hi) = match s.phase.as_str() {
            "before_wakeup" => (start, f.wakeup),
            "after_wakeup" => (f.wakeup, f.run),
            other => {
                v(Some(i), format!("unknown phase {other:?}"));
                continue;
            }
        };
        if s.start + TOL < lo || s.end > hi + TOL {
            v(
                Some(i),
                format!(
                    "{} stretch outside [{}, {}]",
                    s.phase,
                    fmt_ts(lo),
                    fmt_ts(hi)
                ),
            );
        }
    }
    if latency_ns > 0.5 && f.stretches.is_empty() {
        v(None, "empty timeline for a latency above zero".into());
    }
    if let Some(first) = f.stretches.first() {
        if !near(first.start, start) {
            v(
                Some(0),
                format!(
                    "first stretch starts at {}, not at {}",
                    fmt_ts(first.start),
                    fmt_ts(start)
                ),
            );
        }
    }
    if let Some(last) = f.stretches.last() {
        if !near(last.end, f.run) {
            v(
                Some(f.stretches.len() - 1),
                format!("last stretch ends at {}, not at run_ts", fmt_ts(last.end)),
            );
        }
    }
    for (i, w) in f.stretches.windows(2).enumerate() {
        if !near(w[0].end, w[1].start) {
            v(
                Some(i + 1),
                format!(
                    "gap or overlap: previous stretch ends at {}, this one starts at {}",
                    fmt_ts(w[0].end),
                    fmt_ts(w[1].start)
                ),
            );
        }
    }
    let total: i128 = f
        .stretches
        .iter()
        .map(|s| s.end as i128 - s.start as i128)
        .sum();
    if (total as f64 - latency_ns).abs() > 2.0 {
        v(
            None,
            format!("stretches add up to {total} ns, latency is {latency_ns} ns"),
        );
    }
    let mut by_key: BTreeMap<(String, Option<String>), (f64, f64, usize)> = BTreeMap::new();
    for s in &f.stretches {
        let e = by_key
            .entry((s.kind.clone(), s.culprit.clone()))
            .or_default();
        e.0 += s.end as f64 - s.start as f64;
        e.2 += 1;
    }
    for c in &f.components {
        let e = by_key
            .entry((c.kind.clone(), c.culprit.clone()))
            .or_default();
        e.1 += c.ns;
        e.2 += 1;
    }
    for ((kind, culprit), (tl, comp, n)) in by_key {
        if (tl - comp).abs() > 2.0 + n as f64 {
            v(
                None,
                format!(
                    "{kind} / {}: timeline sums to {tl} ns, components to {comp} ns",
                    culprit.as_deref().unwrap_or("-")
                ),
            );
        }
    }
    out.extend(out_culprit.into_iter().map(|(i, why)| Violation {
        rule: "culprit",
        finding: fi,
        stretch: Some(i),
        why,
    }));
}
