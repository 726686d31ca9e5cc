//! The claims under test: the findings of `explain --json`, read from the JSON alone.

use serde_json::Value;

/// Seconds in the JSON to trace-clock nanoseconds.
pub fn ns(v: &Value) -> Option<i64> {
    v.as_f64().map(|s| (s * 1e9).round() as i64)
}

#[derive(Clone, Debug)]
pub struct Stretch {
    pub kind: String,
    pub before: bool,
    pub cpu: u32,
    pub start: i64,
    pub end: i64,
    pub culprit: Option<String>,
    pub culprit_pid: Option<i64>,
    pub detail: String,
}

#[derive(Clone, Debug)]
pub struct Component {
    pub kind: String,
    pub culprit: Option<String>,
    pub us: f64,
}

/// One link of a wake chain (docs/claims.md, "Wake chains"): a task that was woken, ran, and
/// woke the next.
#[derive(Clone, Debug)]
pub struct Link {
    pub pid: i64,
    pub comm: String,
    pub prio: i64,
    pub cpu: u32,
    pub woken: i64,
    pub run: i64,
    pub wakes_next: i64,
    /// `timer` or `interrupt` for the first link, `task` for the others.
    pub woken_by: String,
    /// The interrupt that started the chain, as a culprit is named (first link only).
    pub interrupt: Option<String>,
}

#[derive(Clone, Debug)]
pub struct Finding {
    /// Which run produced it (`default`, `all`, ...).
    pub set: String,
    pub comm: String,
    pub pid: i64,
    pub prio: i64,
    pub cpu: u32,
    pub latency_us: f64,
    pub source: String,
    pub expected: Option<i64>,
    pub wakeup: i64,
    pub run: i64,
    pub run_at: String,
    pub root_cause: String,
    pub components: Vec<Component>,
    pub timeline: Vec<Stretch>,
    /// The wake chain of a `chain` finding, from its start; empty for the others.
    pub chain: Vec<Link>,
}

impl Finding {
    /// Where the finding's window begins: the due time, or the wake-up without one.
    pub fn window_start(&self) -> i64 {
        self.expected.unwrap_or(self.wakeup)
    }
}

impl std::fmt::Display for Finding {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        write!(
            f,
            "[{}] {}-{} woken {:.6} ran {:.6} on CPU{} ({} us, {})",
            self.set,
            self.comm,
            self.pid,
            self.wakeup as f64 / 1e9,
            self.run as f64 / 1e9,
            self.cpu,
            self.latency_us,
            self.source
        )
    }
}

impl std::fmt::Display for Stretch {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        write!(
            f,
            "{} CPU{} {:.9}..{:.9} culprit {:?}: {}",
            self.kind,
            self.cpu,
            self.start as f64 / 1e9,
            self.end as f64 / 1e9,
            self.culprit,
            self.detail
        )
    }
}

fn text(v: &Value, key: &str) -> String {
    v[key].as_str().unwrap_or_default().to_string()
}

fn stretch(v: &Value) -> Result<Stretch, String> {
    Ok(Stretch {
        kind: text(v, "kind"),
        before: v["phase"] == "before_wakeup",
        cpu: v["cpu"].as_u64().ok_or("stretch without cpu")? as u32,
        start: ns(&v["start_ts"]).ok_or("stretch without start_ts")?,
        end: ns(&v["end_ts"]).ok_or("stretch without end_ts")?,
        culprit: v["culprit"].as_str().map(str::to_string),
        culprit_pid: v["culprit_pid"].as_i64(),
        detail: text(v, "detail"),
    })
}

fn link(v: &Value) -> Result<Link, String> {
    let time = |key: &str| ns(&v[key]).ok_or(format!("link without {key}"));
    Ok(Link {
        pid: v["task"]["pid"].as_i64().ok_or("link without task pid")?,
        comm: text(&v["task"], "comm"),
        prio: v["task"]["prio"].as_i64().unwrap_or(i64::MIN),
        cpu: v["cpu"].as_u64().ok_or("link without cpu")? as u32,
        woken: time("woken_ts")?,
        run: time("run_ts")?,
        wakes_next: time("wakes_next_ts")?,
        woken_by: text(v, "woken_by"),
        interrupt: v["interrupt"].as_str().map(str::to_string),
    })
}

fn finding(set: &str, v: &Value) -> Result<Finding, String> {
    let timeline = v["timeline"]
        .as_array()
        .ok_or("no timeline")?
        .iter()
        .map(stretch)
        .collect::<Result<_, _>>()?;
    let components = v["components"]
        .as_array()
        .ok_or("no components")?
        .iter()
        .map(|c| Component {
            kind: text(c, "kind"),
            culprit: c["culprit"].as_str().map(str::to_string),
            us: c["us"].as_f64().unwrap_or(f64::NAN),
        })
        .collect();
    Ok(Finding {
        set: set.to_string(),
        comm: text(&v["task"], "comm"),
        pid: v["task"]["pid"].as_i64().ok_or("no task pid")?,
        prio: v["task"]["prio"].as_i64().unwrap_or(i64::MIN),
        cpu: v["cpu"].as_u64().ok_or("no cpu")? as u32,
        latency_us: v["latency_us"].as_f64().ok_or("no latency_us")?,
        source: text(v, "source"),
        expected: ns(&v["expected_ts"]),
        wakeup: ns(&v["wakeup_ts"]).ok_or("no wakeup_ts")?,
        run: ns(&v["run_ts"]).ok_or("no run_ts")?,
        run_at: text(v, "run_at"),
        root_cause: text(v, "root_cause"),
        components,
        timeline,
        chain: match &v["chain"] {
            Value::Null => Vec::new(),
            c => c
                .as_array()
                .ok_or("chain is not a list")?
                .iter()
                .map(link)
                .collect::<Result<_, _>>()?,
        },
    })
}

/// The findings of one document; a finding that does not parse is an error string.
pub fn findings(set: &str, doc: &Value) -> (Vec<Finding>, Vec<String>) {
    let (mut ok, mut bad) = (Vec::new(), Vec::new());
    for v in doc["findings"].as_array().into_iter().flatten() {
        match finding(set, v) {
            Ok(f) => ok.push(f),
            Err(e) => bad.push(format!("[{set}] unreadable finding: {e}")),
        }
    }
    (ok, bad)
}
