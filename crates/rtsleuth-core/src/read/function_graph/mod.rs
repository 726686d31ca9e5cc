//! The function_graph reader: the kernel's `function_graph` tracer output in its option
//! variants (`funcgraph-abstime`, `-proc`, `-tail`, `-retval`, `-args`, the duration column
//! off), with or without the `#` header, whole or cut from the middle of a call tree.
//!
//! It streams [`Call`] records (entries, exits, leaves) to a [`GraphSink`] in file order; it
//! keeps no state between lines, since rebuilding call stacks is the analysis' business
//! ([`crate::analyze::graph`]). Lines that are not graph output (prose pasted around it, a
//! damaged line) are counted and kept as examples, never fatal, as long as the input holds at
//! least one call.

mod columns;
mod duration;
mod line;

pub use columns::Task;
pub use line::{parse_line, Call, CallKind, GraphLine};

use super::ftrace_text::NonEvent;
use super::info::{TraceInfo, UnparsedLine};
use crate::error::{Error, Result};
use crate::input::{ChunkReader, Format, Input, Prefetch};

/// How many unparsed lines are kept as examples.
const EXAMPLES: usize = 5;

/// Receives the records of a function_graph trace in file order.
pub trait GraphSink {
    /// One call record; `line` is its 1-based line number.
    fn call(&mut self, call: &Call<'_>, line: u64);

    /// CPU `cpu` switched from task `from` to task `to` (a `=>` banner).
    fn switch(&mut self, _cpu: u32, _from: Task<'_>, _to: Task<'_>) {}

    /// Lines were cut here (`[...]`): whatever was open before may never close.
    fn gap(&mut self) {}
}

/// What reading told about the trace, beyond the calls.
#[derive(Debug, Clone)]
pub struct GraphInfo {
    /// Lines, CPUs, time span (with `funcgraph-abstime`), unparsed lines; `events` counts calls.
    pub trace: TraceInfo,
    /// `==========>` and `<==========` lines.
    pub irq_markers: u64,
    /// `prev => next` banners.
    pub task_switches: u64,
}

/// True when `line` is unmistakably a timed function_graph call (format detection).
pub fn is_graph_line(line: &str) -> bool {
    line.contains('|') && matches!(parse_line(line), GraphLine::Call(_) | GraphLine::IrqMarker)
}

/// Reads function_graph text into `sink`. Any other format is refused with what reads it.
pub fn read(input: Input, sink: &mut dyn GraphSink) -> Result<GraphInfo> {
    if input.format != Format::FunctionGraph {
        return Err(Error::WrongCommand {
            path: input.name,
            format: input.format.name(),
            hint: "`rtsleuth graph` reads function_graph tracer output; event traces go to explain, latency, irq, wq or stats",
        });
    }
    let mapped = input
        .file
        .as_ref()
        .and_then(|f| ChunkReader::mapped(&input.name, f).ok());
    let chunks = mapped.unwrap_or_else(|| ChunkReader::new(&input.name, input.reader));
    let mut chunks = Prefetch::spawn(chunks, 4);
    let mut info = GraphInfo {
        trace: TraceInfo::new(&input.name, input.format, input.compression),
        irq_markers: 0,
        task_switches: 0,
    };
    while let Some(chunk) = chunks.next_chunk()? {
        info.trace.bytes += chunk.data.len() as u64;
        for raw in chunk.data.split_inclusive(|&b| b == b'\n') {
            info.absorb(raw, sink);
        }
        chunks.recycle(chunk);
    }
    info.finish()
}

impl GraphInfo {
    fn absorb(&mut self, raw: &[u8], sink: &mut dyn GraphSink) {
        let t = &mut self.trace;
        t.lines.total += 1;
        let number = t.lines.total;
        let raw = raw.strip_suffix(b"\n").unwrap_or(raw);
        let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
        let parsed = std::str::from_utf8(raw).map_or(GraphLine::Unparsed, parse_line);
        match parsed {
            GraphLine::Call(c) => {
                t.lines.events += 1;
                t.events += 1;
                match c.ts {
                    Some(ts) => t.saw_event(ts, c.cpu),
                    None => {
                        if let Err(pos) = t.cpus.binary_search(&c.cpu) {
                            t.cpus.insert(pos, c.cpu);
                        }
                    }
                }
                sink.call(&c, number);
            }
            GraphLine::Switch { cpu, from, to } => {
                self.task_switches += 1;
                t.lines.add(NonEvent::Comment);
                sink.switch(cpu, from, to);
            }
            GraphLine::IrqMarker => {
                self.irq_markers += 1;
                t.lines.add(NonEvent::Comment);
            }
            GraphLine::Comment => t.lines.add(NonEvent::Comment),
            GraphLine::Elided => {
                t.lines.add(NonEvent::Elided);
                sink.gap();
            }
            GraphLine::Blank => t.lines.add(NonEvent::Blank),
            GraphLine::Unparsed => {
                t.lines.add(NonEvent::Unparsed);
                if t.unparsed_examples.len() < EXAMPLES {
                    t.unparsed_examples.push(UnparsedLine {
                        line: number,
                        text: String::from_utf8_lossy(&raw[..raw.len().min(200)]).into_owned(),
                    });
                }
            }
        }
    }

    /// An input with no call at all is not function_graph output, whatever it looked like.
    fn finish(self) -> Result<GraphInfo> {
        let t = &self.trace;
        if t.lines.total == 0 {
            return Err(Error::Empty {
                path: t.source.clone(),
            });
        }
        if t.events == 0 {
            let example = t
                .unparsed_examples
                .first()
                .map(|u| format!("; line {} is {:?}", u.line, u.text))
                .unwrap_or_default();
            return Err(Error::NotATrace {
                path: t.source.clone(),
                why: format!(
                    "none of its {} lines is a function_graph call (`CPU) DURATION | func() {{`, `func();` or `}}`){example}",
                    t.lines.total
                ),
            });
        }
        Ok(self)
    }
}
