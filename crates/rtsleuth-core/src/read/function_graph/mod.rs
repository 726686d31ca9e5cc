//! The function_graph reader: the kernel's `function_graph` tracer output in its option
//! variants (`funcgraph-abstime`, `-proc`, `-tail`, `-retval`, `-args`, the duration column
//! off), with or without the `#` header, whole or cut from the middle of a call tree.
//!
//! It streams [`Call`] records (entries, exits, leaves) to a [`GraphSink`] in file order; it
//! keeps no state between lines, since rebuilding call stacks is the analysis' business
//! ([`crate::analyze::graph`]). So blocks of lines are classified in parallel, a window of
//! blocks at a time (memory stays bounded), and only the sink runs sequentially. Lines that are not graph output (prose pasted around it, a
//! damaged line) are counted and kept as examples, never fatal, as long as the input holds at
//! least one call.

mod block;
mod columns;
mod duration;
mod line;
mod text;

pub use columns::Task;
pub use line::{parse_line, Call, CallKind, GraphLine};

use super::info::TraceInfo;
use crate::error::{Error, Result};
use crate::input::{parse_in_order, window, Chunk, ChunkReader, Format, Input, Prefetch};
use block::{parse_block, Block, Record, EXAMPLES};

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
            hint: "`rtsleuth graph` reads function_graph tracer output; use stats, latency or explain for event traces",
        });
    }
    let mapped = input
        .file
        .as_ref()
        .and_then(|f| ChunkReader::mapped(&input.name, f).ok());
    let chunks = mapped.unwrap_or_else(|| ChunkReader::new(&input.name, input.reader));
    let window = window();
    let mut chunks = Prefetch::spawn(chunks, window);
    let mut info = GraphInfo {
        trace: TraceInfo::new(&input.name, input.format, input.compression),
        irq_markers: 0,
        task_switches: 0,
    };
    loop {
        let batch = next_batch(&mut chunks, window)?;
        if batch.is_empty() {
            break;
        }
        parse_in_order(&batch, parse_block, |chunk, block| {
            info.absorb(chunk, block, sink);
            Ok(())
        })?;
        for c in batch {
            chunks.recycle(c);
        }
    }
    info.finish()
}

/// Up to `n` next blocks; none at the end of the input.
fn next_batch(chunks: &mut Prefetch, n: usize) -> Result<Vec<Chunk>> {
    let mut batch = Vec::with_capacity(n);
    while batch.len() < n {
        match chunks.next_chunk()? {
            Some(c) => batch.push(c),
            None => break,
        }
    }
    Ok(batch)
}

impl GraphInfo {
    /// Hands one classified block to the sink and folds its counts in.
    fn absorb(&mut self, chunk: &Chunk, block: Block<'_>, sink: &mut dyn GraphSink) {
        let t = &mut self.trace;
        let base = t.lines.total;
        for r in &block.records {
            match r {
                Record::Call(c, line) => {
                    if let Some(ts) = c.ts {
                        t.saw_event(ts, c.cpu);
                    }
                    sink.call(c, base + u64::from(*line));
                }
                Record::Switch { cpu, from, to } => sink.switch(*cpu, *from, *to),
                Record::Gap => sink.gap(),
            }
        }
        for cpu in block.cpus {
            if let Err(pos) = t.cpus.binary_search(&cpu) {
                t.cpus.insert(pos, cpu);
            }
        }
        for mut u in block.unparsed {
            if t.unparsed_examples.len() < EXAMPLES {
                u.line += base;
                t.unparsed_examples.push(u);
            }
        }
        t.bytes += chunk.data.len() as u64;
        t.events += block.counts.events;
        t.lines.merge(&block.counts);
        self.irq_markers += block.irq_markers;
        self.task_switches += block.task_switches;
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
