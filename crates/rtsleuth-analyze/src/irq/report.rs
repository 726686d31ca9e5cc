//! The `irq` report (`rtsleuth.irq/1`): interrupt work per source, interrupts-off and
//! preemption-off sections, the latency tracer's section, and late timer interrupts.

use super::culprits::{self, Known};
use super::durations::{Key, Kind, Source};
use super::late_timers::LateTimer;
use super::sections::{Section, Sections};
use super::Irq;
use crate::document::{fmt_ts, fmt_us, merge_json, trace_json, Align, Block, Document, Table};
use crate::latency::LatencyHistogram;
use rtsleuth_trace::event::{ns_to_us, ts_to_secs};
use rtsleuth_trace::read::latency_tracer::LatencyTrace;
use rtsleuth_trace::read::TraceInfo;
use serde_json::{json, Value};

/// Per kind: JSON field, text title, the identity columns.
fn kind_info(kind: Kind) -> (&'static str, &'static str, [&'static str; 2]) {
    match kind {
        Kind::Hardirq => (
            "hardirqs",
            "Hard IRQ handlers (irq_handler_entry/exit; arm64's timer is `arch_timer`)",
            ["IRQ", "Name"],
        ),
        Kind::Vector => (
            "vectors",
            "x86 vector IRQs (irq_vectors *_entry/*_exit)",
            ["Vector", "Name"],
        ),
        Kind::Softirq => (
            "softirqs",
            "Softirqs (softirq_entry/exit)",
            ["Vec", "Action"],
        ),
        Kind::Hrtimer => (
            "hrtimers",
            "hrtimer callbacks (hrtimer_expire_entry/exit)",
            ["", "Function"],
        ),
    }
}

/// The figures of a distribution; the `*_ts` of its worst sample.
pub(crate) fn dist_json(h: &LatencyHistogram) -> Value {
    let measured = h.count() > 0;
    let us = |ns: u64| measured.then(|| ns_to_us(ns));
    json!({
        "count": h.count(),
        "total_us": h.sum_ns() as f64 / 1e3,
        "avg_us": measured.then(|| h.avg_ns() / 1e3),
        "p50_us": us(h.percentile_ns(50.0)),
        "p99_us": us(h.percentile_ns(99.0)),
        "max_us": us(h.max_ns()),
        "max_at_ts": measured.then(|| ts_to_secs(h.max_at())),
    })
}

fn known_json(k: Option<(&str, Known)>) -> Value {
    k.map_or(
        Value::Null,
        |(f, k)| json!({"function": f, "what": k.what, "advice": k.advice}),
    )
}

/// The known culprits met, each once with the functions that led to it.
#[derive(Default)]
struct Advice(Vec<(Vec<String>, Known)>);

impl Advice {
    fn add(&mut self, k: Option<(&str, Known)>) {
        let Some((f, k)) = k else { return };
        let f = culprits::base_name(f).to_string();
        match self.0.iter_mut().find(|(_, known)| *known == k) {
            Some((fs, _)) if !fs.contains(&f) => fs.push(f),
            Some(_) => {}
            None => self.0.push((vec![f], k)),
        }
    }

    fn lines(&self) -> Vec<String> {
        self.0
            .iter()
            .map(|(fs, k)| format!("{}: {}. Advice: {}.", fs.join(", "), k.what, k.advice))
            .collect()
    }
}

/// One source's durations on all CPUs, named as they can be matched across traces.
#[derive(Debug, Clone)]
pub struct IrqWork {
    /// `hardirq`, `vector`, `softirq` or `hrtimer`.
    pub kind: &'static str,
    /// The IRQ's or vector's name, the softirq's action, the callback's function.
    pub name: String,
    pub hist: LatencyHistogram,
}

impl Irq {
    /// Every source that ran, for a set's totals.
    pub fn work(&self) -> Vec<IrqWork> {
        let kind = |k| match k {
            Kind::Hardirq => "hardirq",
            Kind::Vector => "vector",
            Kind::Softirq => "softirq",
            Kind::Hrtimer => "hrtimer",
        };
        [Kind::Hardirq, Kind::Vector, Kind::Softirq, Kind::Hrtimer]
            .into_iter()
            .flat_map(|k| self.sources(k))
            .map(|(s, hist)| IrqWork {
                kind: kind(s.key.kind()),
                name: self.names.get(s.name).to_string(),
                hist,
            })
            .collect()
    }

    fn task(&self, pid: i32) -> Value {
        json!({"comm": self.tasks.get(pid), "pid": pid})
    }

    fn task_label(&self, pid: i32) -> String {
        format!("{}-{pid}", self.tasks.get(pid))
    }

    /// The sources of one kind, worst (longest single run) first.
    fn sources(&self, kind: Kind) -> Vec<(&Source, LatencyHistogram)> {
        let mut v: Vec<_> = self
            .durations
            .sources()
            .iter()
            .filter(|s| s.key.kind() == kind)
            .map(|s| (s, s.total()))
            .filter(|(_, t)| t.count() > 0)
            .collect();
        v.sort_by(|a, b| {
            b.1.max_ns()
                .cmp(&a.1.max_ns())
                .then(b.1.count().cmp(&a.1.count()))
        });
        v
    }

    fn identity(&self, s: &Source) -> (Value, [String; 2]) {
        let name = self.names.get(s.name);
        match s.key {
            Key::Hardirq(irq) => (
                json!({"irq": irq, "name": name}),
                [irq.to_string(), name.into()],
            ),
            Key::Vector(_) => (
                json!({"vector": s.vector, "name": name}),
                [s.vector.map_or("-".into(), |v| v.to_string()), name.into()],
            ),
            Key::Softirq(vec) => (
                json!({"vec": vec, "action": name}),
                [vec.to_string(), name.into()],
            ),
            Key::Hrtimer(_) => (json!({"function": name}), [String::new(), name.into()]),
        }
    }

    fn durations_block(&self, kind: Kind, json_out: &mut Value, blocks: &mut Vec<Block>) {
        let (field, title, idcols) = kind_info(kind);
        let rows = self.sources(kind);
        let mut list = Vec::new();
        let mut cols: Vec<(&str, Align)> = Vec::new();
        if !idcols[0].is_empty() {
            cols.push((idcols[0], Align::Right));
        }
        cols.push((idcols[1], Align::Left));
        cols.extend([
            ("Count", Align::Right),
            ("Total us", Align::Right),
            ("Avg us", Align::Right),
            ("p99 us", Align::Right),
            ("Max us", Align::Right),
            ("Max at s", Align::Right),
            ("CPU", Align::Right),
            ("Interrupted", Align::Left),
        ]);
        let mut t = Table::new(title, &cols);
        for (s, total) in &rows {
            let (mut v, ids) = self.identity(s);
            let max_cpu = s
                .per_cpu
                .iter()
                .max_by(|a, b| a.1.max_ns().cmp(&b.1.max_ns()).then(b.0.cmp(a.0)))
                .map(|(c, _)| *c);
            merge_json(&mut v, dist_json(total));
            let per_cpu: Vec<Value> = s
                .per_cpu
                .iter()
                .map(|(cpu, h)| {
                    let mut c = json!({"cpu": cpu});
                    merge_json(&mut c, dist_json(h));
                    c
                })
                .collect();
            merge_json(
                &mut v,
                json!({"max_cpu": max_cpu, "max_task": self.task(total.max_pid()), "per_cpu": per_cpu}),
            );
            list.push(v);
            if t.rows.len() < self.opts.top {
                let mut row: Vec<String> = ids.into();
                if idcols[0].is_empty() {
                    row.remove(0);
                }
                row.extend([
                    total.count().to_string(),
                    fmt_us(total.sum_ns() as f64 / 1e3),
                    format!("{:.3}", total.avg_ns() / 1e3),
                    fmt_us(ns_to_us(total.percentile_ns(99.0))),
                    fmt_us(ns_to_us(total.max_ns())),
                    fmt_ts(total.max_at()),
                    max_cpu.map_or("-".into(), |c| c.to_string()),
                    self.task_label(total.max_pid()),
                ]);
                t.rows.push(row);
            }
        }
        json_out[field] = Value::Array(list);
        if !t.rows.is_empty() {
            blocks.push(Block::Table(t));
        }
    }

    fn sections_block(
        &self,
        what: &str,
        s: &Sections,
        advice: &mut Advice,
        blocks: &mut Vec<Block>,
    ) -> Value {
        let mut t = Table::new(
            &format!(
                "{what} sections from preemptirq events, longest first ({} measured)",
                s.all.count()
            ),
            &[
                ("CPU", Align::Right),
                ("us", Align::Right),
                ("Start s", Align::Right),
                ("Caller", Align::Left),
                ("Parent", Align::Left),
                ("Ended at", Align::Left),
                ("Task", Align::Left),
            ],
        );
        let list: Vec<Value> = s
            .worst
            .iter()
            .map(|(ns, x): &(u64, Section)| {
                let (caller, parent, end) = (
                    self.names.get(x.caller),
                    self.names.get(x.parent),
                    self.names.get(x.end_caller),
                );
                let known = culprits::lookup([caller, parent, end]);
                advice.add(known);
                t.rows.push(vec![
                    x.cpu.to_string(),
                    fmt_us(ns_to_us(*ns)),
                    fmt_ts(x.start),
                    caller.into(),
                    parent.into(),
                    end.into(),
                    self.task_label(x.pid),
                ]);
                json!({
                    "cpu": x.cpu, "us": ns_to_us(*ns), "start_ts": ts_to_secs(x.start),
                    "end_ts": ts_to_secs(x.end), "caller": caller, "parent": parent,
                    "end_caller": end, "task": self.task(x.pid), "known": known_json(known),
                })
            })
            .collect();
        if !t.rows.is_empty() {
            blocks.push(Block::Table(t));
        }
        Value::Array(list)
    }

    fn late_block(&self, blocks: &mut Vec<Block>) -> Value {
        let l = &self.late;
        let threshold_us = ns_to_us(l.threshold_ns());
        let all = &l.all;
        let mut pairs = vec![
            ("Hard timer interrupts".to_string(), all.count().to_string()),
            (
                format!("At least {} us late", fmt_us(threshold_us)),
                l.late.to_string(),
            ),
        ];
        if all.count() > 0 {
            pairs.push((
                "Lateness".into(),
                format!(
                    "p50 {} us, p99 {} us, max {} us",
                    fmt_us(ns_to_us(all.percentile_ns(50.0))),
                    fmt_us(ns_to_us(all.percentile_ns(99.0))),
                    fmt_us(ns_to_us(all.max_ns()))
                ),
            ));
        }
        blocks.push(Block::Pairs(
            "Interrupts-off inferred from late timer interrupts (now= of hrtimer_expire_entry - expires= of hrtimer_start)".into(),
            pairs,
        ));
        let mut t = Table::new(
            "Late timer interrupts, latest first",
            &[
                ("CPU", Align::Right),
                ("Late us", Align::Right),
                ("Due s", Align::Right),
                ("IRQ s", Align::Right),
                ("Timer", Align::Left),
                ("Task", Align::Left),
                ("Kind", Align::Left),
                ("Evidence", Align::Left),
            ],
        );
        let list: Vec<Value> = l
            .worst
            .iter()
            .map(|(ns, x): &(u64, LateTimer)| {
                let kind = x.kind();
                let evidence = evidence(x);
                t.rows.push(vec![
                    x.cpu.to_string(),
                    fmt_us(ns_to_us(*ns)),
                    format!("{:.9}", ts_to_secs(x.due)),
                    fmt_ts(x.irq_entry),
                    self.names.get(x.function).into(),
                    self.task_label(x.pid),
                    kind.into(),
                    evidence.clone(),
                ]);
                json!({
                    "cpu": x.cpu, "late_us": ns_to_us(*ns), "due_ts": ts_to_secs(x.due),
                    "irq_ts": ts_to_secs(x.irq_entry), "timer": self.names.get(x.function),
                    "task": self.task(x.pid), "kind": kind, "evidence": evidence,
                })
            })
            .collect();
        if !t.rows.is_empty() {
            blocks.push(Block::Table(t));
        }
        let mut v = json!({"threshold_us": threshold_us, "late": l.late});
        merge_json(
            &mut v,
            json!({"distribution": dist_json(all), "worst": list}),
        );
        v
    }

    /// Builds the report (`rtsleuth.irq/1`); `section` is the latency tracer's, when the trace
    /// is one's output.
    pub fn document(self, info: &TraceInfo, section: Option<&LatencyTrace>) -> Document {
        let warnings = info.warnings();
        let mut json = json!({
            "schema": "rtsleuth.irq/1",
            "trace": trace_json(info),
            "options": {"cpu": self.opts.cpu, "top": self.opts.top, "late_us": self.opts.late_us},
        });
        let mut blocks = Vec::new();
        for kind in [Kind::Hardirq, Kind::Vector, Kind::Softirq, Kind::Hrtimer] {
            self.durations_block(kind, &mut json, &mut blocks);
        }
        let mut advice = Advice::default();
        json["irqs_off"] =
            self.sections_block("Interrupts-off", &self.irqs_off, &mut advice, &mut blocks);
        json["preempt_off"] = self.sections_block(
            "Preemption-off",
            &self.preempt_off,
            &mut advice,
            &mut blocks,
        );
        json["irqs_off_distribution"] = dist_json(&self.irqs_off.all);
        json["preempt_off_distribution"] = dist_json(&self.preempt_off.all);
        json["latency_tracer"] = match section {
            Some(s) => latency_tracer_block(s, &mut advice, &mut blocks),
            None => Value::Null,
        };
        json["irqs_off_inferred"] = self.late_block(&mut blocks);
        if !advice.0.is_empty() {
            blocks.push(Block::Lines("Known culprits".into(), advice.lines()));
        }
        json["warnings"] = json!(warnings);
        Document {
            json,
            blocks,
            warnings,
        }
    }
}

/// What the trace shows about the CPU between the due time and the interrupt.
fn evidence(x: &LateTimer) -> String {
    match x.witness {
        _ if x.idle() => "idle CPU: no task could disable interrupts (deep idle exit, hypervisor, SMI)".into(),
        Some((ts, true)) => format!("its last event before the interrupt ({}) had interrupts off", fmt_ts(ts)),
        Some((ts, false)) => format!("its last event before the interrupt ({}) had interrupts on: delivery, not irqs-off", fmt_ts(ts)),
        None => "no event on the CPU between the due time and the interrupt (SMI, hypervisor, or interrupts off without a trace)".into(),
    }
}

fn latency_tracer_block(s: &LatencyTrace, advice: &mut Advice, blocks: &mut Vec<Block>) -> Value {
    let sm = &s.summary;
    let known = culprits::lookup(
        s.started_at
            .iter()
            .chain(s.ended_at.iter())
            .chain(s.stack.iter())
            .map(String::as_str),
    );
    advice.add(known);
    let task = s.task.as_ref();
    let mut pairs = vec![
        (
            "Latency".to_string(),
            format!("{} us on CPU{}", sm.latency_us, sm.cpu),
        ),
        (
            "Task".into(),
            task.map_or("-".into(), |t| format!("{}-{}", t.comm, t.pid)),
        ),
        (
            "Started at".into(),
            s.started_at.clone().unwrap_or_else(|| "-".into()),
        ),
        (
            "Ended at".into(),
            s.ended_at.clone().unwrap_or_else(|| "-".into()),
        ),
        (
            "Entries".into(),
            format!(
                "{} of {} recorded ({} printed here)",
                sm.entries_shown,
                sm.entries_total,
                s.entries.len()
            ),
        ),
    ];
    let steps = s.longest_steps(3);
    for st in &steps {
        pairs.push((
            "Longest step".into(),
            format!(
                "{} us from {} us: {} {}",
                fmt_us(ns_to_us(st.ns)),
                fmt_us(ns_to_us(st.from.time_ns)),
                st.from.name,
                st.from.text
            ),
        ));
    }
    blocks.push(Block::Pairs(
        format!("Latency tracer `{}`: the worst section it caught", s.tracer),
        pairs,
    ));
    if !s.stack.is_empty() {
        blocks.push(Block::Lines(
            "Stack where it ended".into(),
            s.stack.iter().map(|f| format!("=> {f}")).collect(),
        ));
    }
    json!({
        "tracer": s.tracer, "latency_us": sm.latency_us as f64, "cpu": sm.cpu,
        "task": task.map(|t| json!({"comm": t.comm, "pid": t.pid})),
        "started_at": s.started_at, "ended_at": s.ended_at, "stack": s.stack,
        "entries_total": sm.entries_total, "entries": s.entries.len(),
        "longest_steps": steps.iter().map(|st| json!({
            "from_us": ns_to_us(st.from.time_ns), "us": ns_to_us(st.ns),
            "entry": format!("{} {}", st.from.name, st.from.text).trim().to_string(),
        })).collect::<Vec<_>>(),
        "known": known_json(known),
    })
}
