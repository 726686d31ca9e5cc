//! `rtsleuth stats`: what is in this trace. The first thing to run on a trace someone handed
//! you: format, clock, CPUs, span, what was enabled, what was lost, who ran.

mod counts;

use super::TaskNames;
use crate::document::{fmt_ts, trace_json, Align, Block, Document, Table};
use counts::{PerCpu, PerName};
use rtsleuth_trace::event::{ns_to_us, ts_to_secs, Event};
use rtsleuth_trace::input::Format;
use rtsleuth_trace::read::{Decode, EventSink, Record, TraceInfo};
use rtsleuth_trace::validity::History;
use rustc_hash::FxHashMap as HashMap;
use std::collections::BTreeMap;

/// How many tasks the text report lists (JSON lists all).
const TOP_TASKS: usize = 20;

#[derive(Debug, Default)]
pub struct Stats {
    per_event: PerName,
    per_cpu: PerCpu,
    lost_per_cpu: BTreeMap<u32, u64>,
    per_task: HashMap<i32, u64>,
    names: TaskNames,
    history: History,
    /// The format's event names lie in each event's line (see `format`).
    names_in_lines: bool,
}

impl EventSink for Stats {
    fn event(&mut self, ev: &Event<'_>) {
        self.per_event.add(ev.name);
        self.tally(ev);
    }

    /// As the default, with each event's name counted within the call ([`PerName`]) where
    /// the format keeps its names apart from the events.
    fn records(&mut self, records: &[Record<'_>]) {
        self.per_event.new_call();
        for r in records {
            match r {
                Record::Event(ev) => {
                    if self.names_in_lines {
                        self.per_event.add(ev.name);
                    } else {
                        self.per_event.add_in_call(ev.name);
                    }
                    self.tally(ev);
                }
                Record::Lost { cpu, count } => self.lost(*cpu, *count),
                Record::HistoryBegins { cpu } => self.history_begins(*cpu),
            }
        }
    }

    /// A text trace's names lie in its lines, each elsewhere: they are looked up by their
    /// text alone, as remembering where they lay would only add to that.
    fn format(&mut self, format: Format) {
        self.names_in_lines = matches!(
            format,
            Format::FtraceText | Format::SystraceHtml | Format::AtraceZ
        );
    }

    /// Only the scheduler events, to name tasks that lines show as `<...>`.
    fn decode(&self) -> Decode {
        Decode::SCHED
    }

    fn lost(&mut self, cpu: Option<u32>, count: Option<u64>) {
        if let Some(cpu) = cpu {
            *self.lost_per_cpu.entry(cpu).or_default() += count.unwrap_or(0);
        }
    }

    fn history_begins(&mut self, cpu: Option<u32>) {
        self.history.begins(cpu);
    }
}

impl Stats {
    pub fn new() -> Self {
        Self::default()
    }

    /// Counts the event but for its name.
    #[inline(always)]
    fn tally(&mut self, ev: &Event<'_>) {
        self.per_cpu.add(ev.cpu);
        *self.per_task.entry(ev.pid).or_default() += 1;
        self.history.event(ev.ts, ev.cpu);
        self.names.observe(ev);
    }

    /// Builds the report (`rtsleuth.stats/1`).
    pub fn document(self, info: &TraceInfo) -> Document {
        let per_event: BTreeMap<&str, u64> = self.per_event.iter().collect();
        let mut tasks: Vec<(i32, u64)> = self.per_task.iter().map(|(p, n)| (*p, *n)).collect();
        tasks.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        let spans: BTreeMap<u32, _> = self.history.spans().into_iter().collect();
        let secs = |ts: Option<u64>| ts.map(ts_to_secs);
        let per_cpu: Vec<_> = self
            .per_cpu
            .iter()
            .map(|(cpu, n)| {
                let span = spans.get(&cpu);
                serde_json::json!({"cpu": cpu, "events": n, "lost_events": self.lost_per_cpu.get(&cpu).copied().unwrap_or(0),
                    "first_ts": secs(span.map(|s| s.first)), "last_ts": secs(span.map(|s| s.last)),
                    "history_start_ts": secs(self.history.history_start(cpu))})
            })
            .collect();
        let window_start = self.history.window_start().or(info.first_ts);
        let tasks_json: Vec<_> = tasks
            .iter()
            .map(|(pid, n)| serde_json::json!({"pid": pid, "comm": self.names.get(*pid), "events": n}))
            .collect();
        let warnings = info.warnings();
        let json = serde_json::json!({
            "schema": "rtsleuth.stats/1",
            "trace": trace_json(info),
            "format": info.format,
            "compression": info.compression,
            "timestamps": info.timestamps,
            "tracer": info.header.tracer,
            "printed_by": info.header.perf_script.then_some("perf script"),
            "perf_version": info.header.perf_version,
            "nr_cpus": info.header.nr_cpus,
            "events": info.events,
            "cpus": info.cpus,
            "span_s": info.span() as f64 / 1e9,
            "lost_events": info.lost_events,
            "overwritten_events": info.header.overwritten(),
            "out_of_order": info.out_of_order,
            "bytes": info.bytes,
            "lines": info.lines,
            "unparsed_examples": info.unparsed_examples,
            "per_event": per_event,
            "per_cpu": per_cpu,
            "window": {"start": secs(window_start), "end": secs(info.last_ts)},
            "tasks": tasks_json,
            "warnings": warnings,
        });

        let mut pairs = summary_pairs(info, self.per_task.len());
        if let (Some(a), Some(b)) = (window_start, info.last_ts) {
            let why = match self.history.window_start() {
                Some(_) => "where every CPU is recorded: older events were overwritten",
                None => "the whole recording",
            };
            let window = format!("{} .. {} ({why})", fmt_ts(a), fmt_ts(b));
            let after_span = pairs
                .iter()
                .position(|(k, _)| k == "Span")
                .map_or(0, |i| i + 1);
            pairs.insert(after_span, ("Window".into(), window));
        }
        let mut blocks = vec![Block::Pairs(String::new(), pairs)];
        let mut events = Table::new(
            "Events",
            &[
                ("Event", Align::Left),
                ("Count", Align::Right),
                ("%", Align::Right),
            ],
        );
        let mut by_count: Vec<_> = per_event.iter().collect();
        by_count.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
        for (name, n) in by_count {
            let pct = 100.0 * *n as f64 / info.events.max(1) as f64;
            let shown = if name.is_empty() { "(unnamed)" } else { name };
            events
                .rows
                .push(vec![shown.to_string(), n.to_string(), format!("{pct:.1}")]);
        }
        blocks.push(Block::Table(events));
        let mut cpus = Table::new(
            "Per CPU",
            &[
                ("CPU", Align::Right),
                ("Events", Align::Right),
                ("Lost", Align::Right),
                ("First", Align::Right),
                ("Last", Align::Right),
                ("Recorded from", Align::Right),
            ],
        );
        let shown = |ts: Option<u64>| ts.map_or("-".into(), fmt_ts);
        for (cpu, n) in self.per_cpu.iter() {
            let lost = self.lost_per_cpu.get(&cpu).copied().unwrap_or(0);
            let span = spans.get(&cpu);
            cpus.rows.push(vec![
                cpu.to_string(),
                n.to_string(),
                lost.to_string(),
                shown(span.map(|s| s.first)),
                shown(span.map(|s| s.last)),
                shown(self.history.history_start(cpu)),
            ]);
        }
        blocks.push(Block::Table(cpus));
        let title = format!(
            "Tasks (top {} of {} by events)",
            TOP_TASKS.min(tasks.len()),
            tasks.len()
        );
        let mut t = Table::new(
            &title,
            &[
                ("Task", Align::Left),
                ("PID", Align::Right),
                ("Events", Align::Right),
            ],
        );
        for (pid, n) in tasks.iter().take(TOP_TASKS) {
            t.rows.push(vec![
                self.names.get(*pid).to_string(),
                pid.to_string(),
                n.to_string(),
            ]);
        }
        blocks.push(Block::Table(t));
        Document {
            json,
            blocks,
            warnings,
        }
    }
}

/// The trace clock and whether its timestamps are time: counts cannot give latencies.
fn clock_line(info: &TraceInfo) -> String {
    let name = info.clock.as_deref().unwrap_or("not named in the file");
    if info.clock_ns() {
        format!("{name} (nanoseconds)")
    } else {
        format!("{name} (raw counts, not nanoseconds: no latency can be measured)")
    }
}

fn summary_pairs(info: &TraceInfo, tasks: usize) -> Vec<(String, String)> {
    let mut format = info.format.name().to_string();
    if let Some(c) = info.compression {
        format.push_str(&format!(" ({}-compressed)", c.name()));
    }
    if let Some(t) = &info.header.tracer {
        format.push_str(&format!(", tracer {t}"));
    }
    if info.header.perf_script {
        format.push_str(", printed by perf script");
        if let Some(v) = &info.header.perf_version {
            format.push_str(&format!(" (perf {v})"));
        }
    } else if let Some(v) = &info.header.perf_version {
        format.push_str(&format!(", written by perf {v}"));
    }
    let span = match (info.first_ts, info.last_ts) {
        (Some(a), Some(b)) if !info.clock_ns() => {
            format!("{a} .. {b} ({} counts)", b.saturating_sub(a))
        }
        (Some(a), Some(b)) => format!(
            "{} .. {} ({:.6} s)",
            fmt_ts(a),
            fmt_ts(b),
            ns_to_us(b.saturating_sub(a)) / 1e6
        ),
        _ => "-".into(),
    };
    let cpus = format!(
        "{} with events ({}){}",
        info.cpus.len(),
        info.cpus
            .iter()
            .map(u32::to_string)
            .collect::<Vec<_>>()
            .join(","),
        info.header
            .nr_cpus
            .map(|n| format!(", {n} in the system"))
            .unwrap_or_default()
    );
    let lines = &info.lines;
    let other = lines.total - lines.events;
    vec![
        ("Source".into(), info.source.clone()),
        ("Format".into(), format),
        (
            "Timestamps".into(),
            format!("{:?}", info.timestamps).to_lowercase(),
        ),
        ("Clock".into(), clock_line(info)),
        ("Span".into(), span),
        ("CPUs".into(), cpus),
        ("Events".into(), info.events.to_string()),
        ("Tasks".into(), tasks.to_string()),
        (
            "Lost events".into(),
            format!("{} ({} markers)", info.lost_events, lines.lost_markers),
        ),
        (
            "Overwritten".into(),
            info.header
                .overwritten()
                .map_or("unknown".into(), |n| n.to_string()),
        ),
        ("Out of order".into(), info.out_of_order.to_string()),
        (
            "Other lines".into(),
            format!("{other} of {} ({} unparsed)", lines.total, info.unparsed()),
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtsleuth_trace::read::ftrace_text::read_bytes;

    /// CPUs are listed in order with their own counts; a CPU without events (0 and 2 here,
    /// below one that has some) is not listed.
    #[test]
    fn per_cpu_lists_the_cpus_with_events_in_order() {
        let text = "\
 a-5 [003] d..2. 1.000000: sched_stat_runtime: comm=a pid=5 runtime=1 [ns]
 b-6 [001] d..2. 1.000001: sched_stat_runtime: comm=b pid=6 runtime=1 [ns]
 b-6 [001] d..2. 1.000002: sched_stat_runtime: comm=b pid=6 runtime=1 [ns]
";
        let mut stats = Stats::new();
        let info = read_bytes("t", text.as_bytes().to_vec(), 1 << 16, &mut stats).unwrap();
        let doc = stats.document(&info);
        let counts: Vec<_> = doc.json["per_cpu"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| (c["cpu"].as_u64().unwrap(), c["events"].as_u64().unwrap()))
            .collect();
        assert_eq!(counts, [(1, 2), (3, 1)]);
    }
}
