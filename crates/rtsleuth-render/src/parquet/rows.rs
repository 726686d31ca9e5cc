//! The rows of each table, and how they are made from one trace's results. Times are
//! seconds in the trace's clock (`*_ts`) and microseconds (`*_us`) as in the JSON documents;
//! histogram bounds are integer nanoseconds so that buckets of different traces add up
//! exactly. Counts are signed 64-bit, which every engine reads.

use super::TraceRows;
use parquet_derive::ParquetRecordWriter;
use rtsleuth_analyze::fleet::{task_key, Identity};
use rtsleuth_analyze::latency::{LatencyHistogram, TaskLatency};
use rtsleuth_trace::event::ns_to_us;
use serde_json::Value;

/// `traces.parquet`: one row per trace.
#[derive(Debug, Clone, PartialEq, ParquetRecordWriter)]
pub struct TraceRow {
    pub path: String,
    pub hash: Option<String>,
    pub format: String,
    pub compression: Option<String>,
    pub events: i64,
    pub lost_events: i64,
    pub span_s: f64,
    /// From the trace's `uname` (trace.dat options); null for text traces.
    pub host: Option<String>,
    pub kernel: Option<String>,
    pub uname: Option<String>,
}

/// `findings.parquet`: one row per explained wake-up (`explain`'s findings: the `--top`
/// worst, at or above `--threshold` when given).
#[derive(Debug, Clone, PartialEq, ParquetRecordWriter)]
pub struct FindingRow {
    pub path: String,
    pub hash: Option<String>,
    /// Its rank in the trace, 1 the worst: with path, the key `stretches` refer to.
    pub finding: i64,
    pub comm: String,
    /// The comm without trailing digits: what matches tasks across traces.
    pub task: String,
    pub pid: i64,
    pub prio: i64,
    pub cpu: i64,
    pub latency_us: f64,
    pub root_cause: String,
    /// The culprit of the root cause's largest component.
    pub culprit: Option<String>,
    /// That culprit matched across traces: a task's comm without trailing digits.
    pub culprit_task: Option<String>,
    /// How the due time was known: timer, tracemark, period, wakeup.
    pub source: String,
    pub expected_ts: Option<f64>,
    pub wakeup_ts: f64,
    pub run_ts: f64,
    pub summary: String,
}

/// `stretches.parquet`: one row per stretch of a finding's timeline, in order.
#[derive(Debug, Clone, PartialEq, ParquetRecordWriter)]
pub struct StretchRow {
    pub path: String,
    pub hash: Option<String>,
    pub finding: i64,
    /// Its place in the finding's timeline, from 0.
    pub seq: i64,
    pub kind: String,
    pub phase: String,
    pub cpu: i64,
    pub start_ts: f64,
    pub end_ts: f64,
    pub us: f64,
    pub culprit: Option<String>,
    pub culprit_pid: Option<i64>,
    pub detail: String,
}

/// `latency.parquet`: one row per task per trace (the rows of `latency`'s table).
#[derive(Debug, Clone, PartialEq, ParquetRecordWriter)]
pub struct LatencyRow {
    pub path: String,
    pub hash: Option<String>,
    pub comm: String,
    pub task: String,
    pub pid: i64,
    pub prio: Option<i64>,
    pub runtime_us: f64,
    pub switches: i64,
    pub wakeups: i64,
    pub avg_us: Option<f64>,
    pub min_us: Option<f64>,
    pub p50_us: Option<f64>,
    pub p99_us: Option<f64>,
    pub p999_us: Option<f64>,
    pub max_us: Option<f64>,
    pub max_at_ts: Option<f64>,
    /// Its preemption waits (switched out runnable -> switched in again), the same figures.
    pub preemption_waits: i64,
    pub preemption_avg_us: Option<f64>,
    pub preemption_p50_us: Option<f64>,
    pub preemption_p99_us: Option<f64>,
    pub preemption_p999_us: Option<f64>,
    pub preemption_max_us: Option<f64>,
    pub preemption_max_at_ts: Option<f64>,
}

/// `histograms.parquet`: one row per non-empty bucket per task per trace. Sum `count` over
/// any rows and take the lowest `lower_ns` at which the running count reaches the rank: the
/// percentile of the union (module doc of `analyze/latency/histogram.rs` for the precision).
#[derive(Debug, Clone, PartialEq, ParquetRecordWriter)]
pub struct HistogramRow {
    pub path: String,
    pub hash: Option<String>,
    pub comm: String,
    pub task: String,
    pub pid: i64,
    pub lower_ns: i64,
    /// Exclusive.
    pub upper_ns: i64,
    pub count: i64,
}

pub fn trace_row(id: &Identity) -> TraceRow {
    let (host, kernel) = id.host_and_kernel();
    TraceRow {
        path: id.path.clone(),
        hash: id.hash.clone(),
        format: id.format.to_string(),
        compression: id.compression.map(str::to_string),
        events: id.events as i64,
        lost_events: id.lost_events as i64,
        span_s: id.span_s,
        host: host.map(str::to_string),
        kernel: kernel.map(str::to_string),
        uname: id.uname.clone(),
    }
}

/// A trace's rows of every table `latency` fills: its `traces` row, and per task its
/// `latency` row and the buckets of its wake-up and preemption-wait histograms.
pub fn task_rows(id: &Identity, tasks: &[TaskLatency]) -> TraceRows {
    let mut rows = TraceRows {
        trace: vec![trace_row(id)],
        ..TraceRows::default()
    };
    for t in tasks {
        let (w, p) = (t.hist.figures(), t.preempted.figures());
        rows.latency.push(LatencyRow {
            path: id.path.clone(),
            hash: id.hash.clone(),
            comm: t.comm.clone(),
            task: task_key(&t.comm).to_string(),
            pid: i64::from(t.pid),
            prio: t.prio.map(i64::from),
            runtime_us: ns_to_us(t.runtime_ns),
            switches: t.switches as i64,
            wakeups: w.count as i64,
            avg_us: w.avg_us,
            min_us: w.min_us,
            p50_us: w.p50_us,
            p99_us: w.p99_us,
            p999_us: w.p999_us,
            max_us: w.max_us,
            max_at_ts: w.max_at_ts,
            preemption_waits: p.count as i64,
            preemption_avg_us: p.avg_us,
            preemption_p50_us: p.p50_us,
            preemption_p99_us: p.p99_us,
            preemption_p999_us: p.p999_us,
            preemption_max_us: p.max_us,
            preemption_max_at_ts: p.max_at_ts,
        });
        rows.histograms.extend(bucket_rows(id, t, &t.hist));
        rows.preemption_histograms
            .extend(bucket_rows(id, t, &t.preempted));
    }
    rows
}

/// One `histograms` row per non-empty bucket of `h`, a histogram of task `t`.
fn bucket_rows<'a>(
    id: &'a Identity,
    t: &'a TaskLatency,
    h: &LatencyHistogram,
) -> impl Iterator<Item = HistogramRow> + 'a {
    h.buckets().into_iter().map(move |b| HistogramRow {
        path: id.path.clone(),
        hash: id.hash.clone(),
        comm: t.comm.clone(),
        task: task_key(&t.comm).to_string(),
        pid: i64::from(t.pid),
        lower_ns: b.lower_ns as i64,
        upper_ns: b.upper_ns as i64,
        count: b.count as i64,
    })
}

/// The finding and stretch rows of an `rtsleuth.explain/1` document: the rows say what the
/// JSON says, field for field.
pub fn explain_rows(id: &Identity, explain: &Value) -> (Vec<FindingRow>, Vec<StretchRow>) {
    let mut findings = Vec::new();
    let mut stretches = Vec::new();
    let empty = Vec::new();
    let list = |v: &Value| v.as_array().unwrap_or(&empty).clone();
    for (i, f) in list(&explain["findings"]).iter().enumerate() {
        let rank = i as i64 + 1;
        let comm = str_of(&f["task"]["comm"]);
        let root = str_of(&f["root_cause"]);
        // The root cause is the kind with the most time; its culprit the largest component.
        let main = list(&f["components"])
            .into_iter()
            .filter(|c| c["kind"] == root.as_str())
            .max_by(|a, b| num(&a["us"]).total_cmp(&num(&b["us"])));
        let culprit = main
            .as_ref()
            .and_then(|c| c["culprit"].as_str().map(str::to_string));
        let culprit_task = main.as_ref().and_then(|c| {
            let pid = c["culprit_pid"].as_i64()?;
            let comm = c["culprit"].as_str()?.strip_suffix(&format!("-{pid}"))?;
            Some(task_key(comm).to_string())
        });
        findings.push(FindingRow {
            path: id.path.clone(),
            hash: id.hash.clone(),
            finding: rank,
            task: task_key(&comm).to_string(),
            comm,
            pid: int(&f["task"]["pid"]),
            prio: int(&f["task"]["prio"]),
            cpu: int(&f["cpu"]),
            latency_us: num(&f["latency_us"]),
            root_cause: root,
            culprit,
            culprit_task,
            source: str_of(&f["source"]),
            expected_ts: f["expected_ts"].as_f64(),
            wakeup_ts: num(&f["wakeup_ts"]),
            run_ts: num(&f["run_ts"]),
            summary: str_of(&f["summary"]),
        });
        for (seq, s) in list(&f["timeline"]).iter().enumerate() {
            let (start, end) = (num(&s["start_ts"]), num(&s["end_ts"]));
            stretches.push(StretchRow {
                path: id.path.clone(),
                hash: id.hash.clone(),
                finding: rank,
                seq: seq as i64,
                kind: str_of(&s["kind"]),
                phase: str_of(&s["phase"]),
                cpu: int(&s["cpu"]),
                start_ts: start,
                end_ts: end,
                us: rtsleuth_analyze::document::round3((end - start) * 1e6),
                culprit: s["culprit"].as_str().map(str::to_string),
                culprit_pid: s["culprit_pid"].as_i64(),
                detail: str_of(&s["detail"]),
            });
        }
    }
    (findings, stretches)
}

fn str_of(v: &Value) -> String {
    v.as_str().unwrap_or_default().to_string()
}

fn num(v: &Value) -> f64 {
    v.as_f64().unwrap_or(f64::NAN)
}

fn int(v: &Value) -> i64 {
    v.as_i64().unwrap_or(-1)
}
