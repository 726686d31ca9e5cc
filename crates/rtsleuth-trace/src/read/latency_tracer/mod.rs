//! The latency tracers' output (`irqsoff`, `preemptoff`, `preemptirqsoff`, `wakeup`,
//! `wakeup_dl`, `wakeup_rt`): the one worst section the kernel caught, with its header, its
//! entries and the stack where it ended.
//!
//! Such a file is also ftrace text in the latency format, and the text reader reads its entries
//! as events for `stats`, `latency` and `explain`; what it drops (the header's task and
//! started/ended lines, the `=> func` lines of the stack) is what this reader keeps. The output
//! holds a single section, so it is parsed into one struct; [`read`] recognises such a file by
//! its header (a latency tracer's `# tracer:` line and a `# latency:` line) and does both.

mod entry;
mod header;
mod source;

pub use entry::Entry;
pub use header::{Summary, Task};
pub use source::read;

use crate::error::{Error, Result};
use crate::read::ftrace_text::{Header, LineContext};

/// The tracers whose output this reader understands.
pub const TRACERS: [&str; 6] = [
    "irqsoff",
    "preemptoff",
    "preemptirqsoff",
    "wakeup",
    "wakeup_rt",
    "wakeup_dl",
];

/// What the text reader's header scan says: is this a latency tracer's output?
pub fn is_latency_tracer(header: &Header) -> bool {
    header.latency_line.is_some()
        && header
            .tracer
            .as_deref()
            .is_some_and(|t| TRACERS.contains(&t))
}

/// One latency tracer's output.
#[derive(Debug, Clone, PartialEq)]
pub struct LatencyTrace {
    pub tracer: String,
    pub summary: Summary,
    pub task: Option<Task>,
    /// `=> started at:` / `=> ended at:` (the irqs-off and preempt-off tracers).
    pub started_at: Option<String>,
    pub ended_at: Option<String>,
    /// Every entry printed, `<stack trace>` included, in file order.
    pub entries: Vec<Entry>,
    /// `[...]` lines: someone cut entries out (the kernel documentation does).
    pub elided: u64,
    /// The kernel stack where the section ended, innermost first.
    pub stack: Vec<String>,
    /// Lines that are neither comments, entries, stack frames nor elisions (the
    /// function_graph display of `options/display-graph`).
    pub other_lines: u64,
}

impl LatencyTrace {
    /// Parses the whole output; `path` names it in errors.
    pub fn parse(path: &str, text: &str) -> Result<LatencyTrace> {
        let malformed = |offset: usize, reason: String| Error::Malformed {
            path: path.to_string(),
            format: "latency tracer output",
            offset: offset as u64,
            reason,
        };
        let header = Header::scan(text);
        let ctx = LineContext {
            flag_layout: header.flag_layout,
            ..LineContext::default()
        };
        let mut tracer = None;
        let mut summary = None;
        let mut task = None;
        let (mut started_at, mut ended_at) = (None, None);
        let mut entries: Vec<Entry> = Vec::new();
        let (mut elided, mut other_lines) = (0, 0);
        let mut stack = Vec::new();
        let (mut in_stack, mut cut) = (false, false);
        let mut offset = 0;
        for raw in text.split_inclusive('\n') {
            let at = offset;
            offset += raw.len();
            let line = raw.trim_end_matches(['\n', '\r']);
            let t = line.trim();
            if let Some(comment) = t.strip_prefix('#') {
                let c = comment.trim();
                if let Some(name) = c.strip_prefix("tracer:") {
                    tracer = Some(name.trim().to_string());
                } else if c.starts_with("latency:") {
                    let s = Summary::parse(c).ok_or_else(|| {
                        malformed(at, format!("cannot read the summary line {c:?}"))
                    })?;
                    summary = Some(s);
                } else if let Some(tk) = Task::parse(c) {
                    task = Some(tk);
                } else if let Some(f) = header::section_end(c, "started") {
                    started_at = Some(f.to_string());
                } else if let Some(f) = header::section_end(c, "ended") {
                    ended_at = Some(f.to_string());
                }
                continue;
            }
            if t.is_empty() {
                continue;
            }
            if let Some(frame) = t.strip_prefix("=>") {
                if in_stack {
                    stack.push(frame.trim().to_string());
                }
                continue;
            }
            if t == "[...]" {
                elided += 1;
                cut = true;
                continue;
            }
            match Entry::parse(line, &ctx) {
                Some(mut e) => {
                    in_stack = e.name == "kernel_stack";
                    e.after_elision = std::mem::take(&mut cut);
                    entries.push(e);
                }
                None => {
                    in_stack = false;
                    other_lines += 1;
                }
            }
        }
        let summary = summary.ok_or_else(|| {
            malformed(
                0,
                "no `# latency:` summary line: not a latency tracer's output".into(),
            )
        })?;
        Ok(LatencyTrace {
            tracer: tracer.unwrap_or_default(),
            summary,
            task,
            started_at,
            ended_at,
            entries,
            elided,
            stack,
            other_lines,
        })
    }

    /// The `n` longest steps from one entry to the next, longest first: where the section
    /// spent its time. Steps across a `[...]` are unknown and left out.
    pub fn longest_steps(&self, n: usize) -> Vec<Step<'_>> {
        let mut steps: Vec<Step<'_>> = self
            .entries
            .windows(2)
            .filter(|w| !w[1].after_elision && w[1].time_ns >= w[0].time_ns)
            .map(|w| Step {
                from: &w[0],
                to: &w[1],
                ns: w[1].time_ns - w[0].time_ns,
            })
            .collect();
        steps.sort_by(|a, b| b.ns.cmp(&a.ns).then(a.from.time_ns.cmp(&b.from.time_ns)));
        steps.truncate(n);
        steps
    }
}

/// The time between two consecutive entries.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Step<'a> {
    pub from: &'a Entry,
    pub to: &'a Entry,
    pub ns: u64,
}
