//! The function_graph reader: the kernel's `function_graph` tracer output in its option
//! variants (`funcgraph-abstime`, `-proc`, `-tail`, `-retval`, `-args`, the duration column
//! off), with or without the `#` header, whole or cut from the middle of a call tree.
//!
//! It streams [`Call`] records (entries, exits, leaves) to a [`GraphSink`] in file order; it
//! keeps no state between lines, since rebuilding call stacks is the analysis' business
//! (rtsleuth-analyze's `graph`). So blocks of lines are classified in parallel, a sliding
//! window of them in flight (memory stays bounded), and only the sink runs sequentially. Lines
//! that are not graph output (prose pasted around it, a damaged line) are counted and kept as
//! examples, never fatal, as long as the input holds at least one call.

mod block;

pub use crate::graph_line::{Call, CallKind, Task};

use super::info::TraceInfo;
use crate::error::{Error, Result};
use crate::input::{parse_in_order, window, Chunk, ChunkReader, Format, Input, Prefetch};
use block::{parse_block, Block, Record, EXAMPLES};
use self_cell::self_cell;

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
    /// Lines carrying hand-drawn markup (arrows, bars, notes) that the reader skipped.
    pub markup_lines: u64,
    /// The first of them (1-based).
    pub first_markup_line: Option<u64>,
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
    let trace = TraceInfo::new(&input.name, input.format, input.compression);
    read_blocks(chunks, trace, sink)
}

/// Classifies the blocks of `chunks` in parallel and hands their records to `sink` in order.
fn read_blocks(
    chunks: ChunkReader,
    trace: TraceInfo,
    sink: &mut dyn GraphSink,
) -> Result<GraphInfo> {
    let mut chunks = Prefetch::spawn(chunks, window());
    let mut info = GraphInfo {
        trace,
        irq_markers: 0,
        task_switches: 0,
        markup_lines: 0,
        first_markup_line: None,
    };
    let recycler = chunks.recycler();
    let mut failure = None;
    let next = || match chunks.next_chunk() {
        // A call graph cut short would show calls without their returns as slow: a damaged
        // stream stays an error here.
        Ok(Some(Chunk {
            damage: Some(end), ..
        })) => {
            failure = Some(end.damage.into_error());
            None
        }
        Ok(c) => c,
        Err(e) => {
            failure = Some(e);
            None
        }
    };
    parse_in_order(
        next,
        |chunk| ParsedBlock::new(chunk, parse_block),
        |mut parsed| {
            parsed.with_dependent_mut(|chunk, block| info.absorb(chunk, block, sink));
            recycler.recycle(parsed.into_owner());
            Ok(())
        },
    )?;
    match failure {
        Some(e) => Err(e),
        None => info.finish(),
    }
}

self_cell!(
    /// A block and its records, which borrow its text.
    struct ParsedBlock {
        owner: Chunk,
        #[covariant]
        dependent: Block,
    }
);

impl GraphInfo {
    /// Hands one classified block to the sink and folds its counts in.
    fn absorb(&mut self, chunk: &Chunk, block: &mut Block<'_>, sink: &mut dyn GraphSink) {
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
        for &cpu in &block.cpus {
            if let Err(pos) = t.cpus.binary_search(&cpu) {
                t.cpus.insert(pos, cpu);
            }
        }
        for mut u in block.unparsed.drain(..) {
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
        self.markup_lines += block.markup_lines;
        if self.first_markup_line.is_none() {
            self.first_markup_line = block.first_markup.map(|l| base + l);
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Everything a sink is told, as text.
    #[derive(Default)]
    struct Log(Vec<String>);

    impl GraphSink for Log {
        fn call(&mut self, c: &Call<'_>, line: u64) {
            self.0.push(format!("{line} {:?}", c));
        }
        fn switch(&mut self, cpu: u32, from: Task<'_>, to: Task<'_>) {
            self.0.push(format!("switch {cpu} {from:?} {to:?}"));
        }
        fn gap(&mut self) {
            self.0.push("gap".into());
        }
    }

    fn read_in_blocks(text: &[u8], block: usize) -> (GraphInfo, Log) {
        let bytes = text.to_vec();
        let chunks =
            ChunkReader::with_chunk_size("t", Box::new(std::io::Cursor::new(bytes)), block);
        let mut log = Log::default();
        let trace = TraceInfo::new("t", Format::FunctionGraph, None);
        (read_blocks(chunks, trace, &mut log).unwrap(), log)
    }

    /// Blocks of a few lines, parsed in parallel, give the sink exactly what one block gives:
    /// same records, same order, same line numbers, same counts.
    #[test]
    fn small_blocks_change_nothing() {
        // A non-UTF-8 line makes its block fall back to checking line by line.
        let text = b"# tracer: function_graph\n\
            \x20------------------------------------------\n\
            \x200)  platfor-3210  =>  vmstat-2854  \n\
            \x20------------------------------------------\n\
            \n\
            100.000001 |   0)               |  f() {\n\
            100.000002 |   0)   0.668 us    |    g();\n\
            \x200)   ==========> |\r\n\
            [...]\n\
            \x201)   2.861 us    |  } /* f */\n\
            prose \xff\n\
            100.000003 |   1)   1.000 us    |  h();";
        let (one, whole) = read_in_blocks(text, 1 << 20);
        for block in [1, 7, 40] {
            let (info, log) = read_in_blocks(text, block);
            assert_eq!(log.0, whole.0, "blocks of {block} bytes");
            assert_eq!(info.trace.lines, one.trace.lines);
            assert_eq!(info.trace.unparsed_examples, one.trace.unparsed_examples);
            assert_eq!(info.trace.cpus, vec![0, 1]);
            assert_eq!((info.irq_markers, info.task_switches), (1, 1));
        }
        assert_eq!(whole.0.len(), 6);
        assert!(whole.0[0].starts_with("switch 0"));
        assert!(whole.0[1].starts_with("6 Call { kind: Entry, name: Some(\"f\")"));
        assert!(whole.0[2].starts_with("7 Call { kind: Leaf"));
        assert_eq!(whole.0[3], "gap");
        assert!(whole.0[4].starts_with("10 Call { kind: Exit, name: Some(\"f\")"));
        assert!(whole.0[5].starts_with("12 Call { kind: Leaf, name: Some(\"h\")"));
        let t = &one.trace;
        assert_eq!((t.lines.total, t.events, t.unparsed()), (12, 4, 1));
        assert_eq!(t.unparsed_examples[0].line, 11);
        assert_eq!(t.first_ts, Some(100_000_001_000));
    }

    /// Marked calls and drawings are counted once each, the first by its line in the file,
    /// however the blocks fall; the drawing is no call.
    #[test]
    fn markup_lines_counted_across_blocks() {
        let text = b" 0)               |  f() {\n\
            \x200)   0.500 us    |  +->g();\n\
            \x200)               |  |\n\
            \x200)   1.000 us    |  }\n\
            \x200)   0.700 us    |  (!) h();\n";
        for block in [1, 30, 1 << 20] {
            let (info, log) = read_in_blocks(text, block);
            assert_eq!(
                (info.markup_lines, info.first_markup_line),
                (3, Some(2)),
                "blocks of {block} bytes"
            );
            assert_eq!((info.trace.events, info.trace.unparsed()), (4, 0));
            assert_eq!(log.0.len(), 4);
        }
    }
}
