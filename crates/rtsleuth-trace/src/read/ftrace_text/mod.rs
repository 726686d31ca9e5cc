//! The ftrace text reader: the kernel's `trace` and `trace_pipe` files in every header
//! variant, `trace-cmd report` output (plain, `-R`, plugin forms), Android atrace, the latency
//! format and the latency tracers' output, and `perf script` output of tracepoints (the same
//! events and payloads, printed with perf's line prefix).
//!
//! Blocks of whole lines are parsed in parallel (a sliding window of blocks, so memory stays
//! bounded), then handed to the sink in file order.

mod header;
mod line;
pub(crate) mod payload;
mod perf_line;
mod rtla;

pub use header::Header;
pub use line::{parse_line, Line, LineContext, NonEvent, TimestampUnit};
/// Which events the payload decoder types at all (for tests of what binary readers print).
pub use payload::decoder as payload_decoder;

use super::info::{LineCounts, TraceInfo, UnparsedLine};
use super::seen::Seen;
use super::{EventSink, Record};
use crate::error::{Error, Result};
use crate::input::{
    parse_in_order, window, BlockLine, Chunk, ChunkReader, Input, Prefetch, StreamEnd, MAX_LINE,
};
use self_cell::self_cell;

/// How many unparsed lines are kept as examples.
const EXAMPLES: usize = 5;

/// Reads a text trace into `sink`.
pub fn read(input: Input, sink: &mut (dyn EventSink + Send)) -> Result<TraceInfo> {
    let mapped = input
        .file
        .as_ref()
        .and_then(|f| ChunkReader::mapped(&input.name, f).ok());
    let chunks = mapped.unwrap_or_else(|| ChunkReader::new(&input.name, input.reader));
    let info = TraceInfo::new(&input.name, input.format, input.compression);
    Driver::new(chunks, info).run(sink)
}

/// Reads a text trace from memory in blocks of `chunk_size` bytes (tests use small blocks to
/// exercise the block boundaries).
pub fn read_bytes(
    name: &str,
    bytes: Vec<u8>,
    chunk_size: usize,
    sink: &mut (dyn EventSink + Send),
) -> Result<TraceInfo> {
    let chunks =
        ChunkReader::with_chunk_size(name, Box::new(std::io::Cursor::new(bytes)), chunk_size);
    let info = TraceInfo::new(name, crate::input::Format::FtraceText, None);
    Driver::new(chunks, info).run(sink)
}

self_cell!(
    /// A block and what was parsed from it, which borrows its text.
    struct ParsedChunk {
        owner: Chunk,
        #[covariant]
        dependent: Parsed,
    }
);

/// The result of parsing one block.
#[derive(Default)]
struct Parsed<'a> {
    records: Vec<Record<'a>>,
    /// The events' times and CPUs, and the losses, for [`TraceInfo`].
    seen: Seen,
    counts: LineCounts,
    unparsed: Vec<UnparsedLine>,
    /// Event lines by the unit their timestamp was printed in.
    units: UnitCounts,
    /// A line over [`MAX_LINE`]: its line number within the block and byte offset.
    overlong: Option<(u64, u64)>,
}

struct Driver {
    chunks: Prefetch,
    info: TraceInfo,
    /// Where a damaged compressed stream stopped: the lines before it are read.
    damage: Option<StreamEnd>,
    units: UnitCounts,
}

impl Driver {
    fn new(chunks: ChunkReader, info: TraceInfo) -> Driver {
        Driver {
            chunks: Prefetch::spawn(chunks, window()),
            info,
            damage: None,
            units: UnitCounts::default(),
        }
    }

    fn run(mut self, sink: &mut (dyn EventSink + Send)) -> Result<TraceInfo> {
        let (head, mut failure) = self.head();
        if !head.is_empty() {
            self.read_header(&head, sink);
        }
        let ctx = LineContext {
            decode: sink.decode(),
            flag_layout: self.info.header.flag_layout,
        };
        let recycler = self.chunks.recycler();
        let (chunks, info, units, damage) = (
            &mut self.chunks,
            &mut self.info,
            &mut self.units,
            &mut self.damage,
        );
        let mut head = head.into_iter();
        let next = || {
            head.next().or_else(|| match failure {
                Some(_) => None,
                None => chunks.next_chunk().unwrap_or_else(|e| {
                    failure = Some(e);
                    None
                }),
            })
        };
        parse_in_order(
            next,
            |chunk| ParsedChunk::new(chunk, |c| parse_chunk(c, &ctx)),
            |mut parsed| {
                parsed.with_dependent_mut(|chunk, p| absorb(info, units, chunk, p, sink))?;
                let mut chunk = parsed.into_owner();
                *damage = damage.take().or(chunk.damage.take());
                recycler.recycle(chunk);
                Ok(())
            },
        )?;
        if let Some(mut e) = failure {
            if let Error::LineTooLong { line, .. } = &mut e {
                *line = self.info.lines.total + 1;
            }
            return Err(e);
        }
        self.finish()
    }

    /// Reads the header from the first blocks; an overwritten buffer starts every CPU's history
    /// at its first event.
    fn read_header(&mut self, head: &[Chunk], sink: &mut (dyn EventSink + Send)) {
        self.info.header = Header::scan(&String::from_utf8_lossy(&head_of(head)));
        if self.info.header.overwritten().is_some_and(|n| n > 0) {
            history_begins(self.info.header.nr_cpus, sink);
        }
    }

    /// The first blocks, enough to hold the header (whatever the block size), and the error
    /// that stopped the input before that if one did.
    fn head(&mut self) -> (Vec<Chunk>, Option<Error>) {
        let (mut head, mut bytes) = (Vec::new(), 0);
        while bytes < HEAD_BYTES {
            match self.chunks.next_chunk() {
                Ok(Some(c)) => {
                    bytes += c.data.len();
                    head.push(c);
                }
                Ok(None) => break,
                Err(e) => return (head, Some(e)),
            }
        }
        (head, None)
    }

    fn finish(mut self) -> Result<TraceInfo> {
        let info = &mut self.info;
        info.timestamps = main_unit(&self.units);
        if let Some(end) = self.damage {
            if info.events == 0 {
                return Err(end.damage.into_error());
            }
            let cut = match end.dropped {
                0 => String::new(),
                1 => "; the 1 byte of the line it cut was dropped".to_string(),
                n => format!("; the {n} bytes of the line it cut were dropped"),
            };
            let read = format!(
                "the first {} bytes of text ({} lines{cut})",
                info.bytes, info.lines.total
            );
            info.notes.push(end.damage.note(&read));
        }
        if info.lines.total == 0 {
            return Err(Error::Empty {
                path: info.source.clone(),
            });
        }
        if info.events == 0 {
            let example = info
                .unparsed_examples
                .first()
                .map(|u| format!("; line {} is {:?}", u.line, truncate(&u.text, 120)))
                .unwrap_or_default();
            return Err(Error::NotATrace {
                path: info.source.clone(),
                why: format!(
                    "none of its {} lines is an ftrace event line (`comm-pid [cpu] flags timestamp: event: fields`) or a perf script one (`comm tid [cpu] timestamp: system:event: fields`){example}",
                    info.lines.total
                ),
            });
        }
        Ok(self.info)
    }
}

/// The header says older events were overwritten but not on which CPUs: every CPU it counts
/// (`#P:`) is recorded only from its first event, so nothing is measured before all of them
/// have shown one; without a count, every CPU that shows events.
fn history_begins(nr_cpus: Option<u32>, sink: &mut (dyn EventSink + Send)) {
    match nr_cpus.filter(|&n| n <= crate::event::MAX_CPUS) {
        Some(n) => (0..n).for_each(|cpu| sink.history_begins(Some(cpu))),
        None => sink.history_begins(None),
    }
}

/// How much of the start of a trace is read as its header; real headers are a few hundred
/// bytes.
const HEAD_BYTES: usize = 64 * 1024;

/// The first [`HEAD_BYTES`] of the first batch.
fn head_of(batch: &[Chunk]) -> Vec<u8> {
    let mut head = Vec::with_capacity(HEAD_BYTES);
    for c in batch {
        let take = (HEAD_BYTES - head.len()).min(c.data.len());
        head.extend_from_slice(&c.data[..take]);
        if head.len() == HEAD_BYTES {
            break;
        }
    }
    head
}

/// Event lines by [`TimestampUnit`] (its discriminant is the index).
type UnitCounts = [u64; 3];

/// The unit most event lines print: a kernel prints every line of a trace on one clock (a
/// clock change empties the buffer), so a few lines in another unit are damage and must not
/// turn a trace of seconds into one of counts, or the other way round.
fn main_unit(units: &UnitCounts) -> TimestampUnit {
    let all = [
        TimestampUnit::Seconds,
        TimestampUnit::Microseconds,
        TimestampUnit::Counter,
    ];
    // The first of the largest: seconds win a tie.
    all.into_iter()
        .rev()
        .max_by_key(|&u| units[u as usize])
        .unwrap_or_default()
}

/// Hands one parsed block to the sink and folds its counts into the trace info.
fn absorb(
    info: &mut TraceInfo,
    units: &mut UnitCounts,
    chunk: &Chunk,
    p: &mut Parsed<'_>,
    sink: &mut (dyn EventSink + Send),
) -> Result<()> {
    let base = info.lines.total;
    if let Some((line, offset)) = p.overlong {
        return Err(Error::LineTooLong {
            path: info.source.clone(),
            line: base + line,
            offset: chunk.offset + offset,
            limit: MAX_LINE,
        });
    }
    info.saw_run(&p.seen, &p.records);
    sink.records(&p.records);
    info.events += p.counts.events;
    info.bytes += chunk.data.len() as u64;
    for (n, add) in units.iter_mut().zip(p.units) {
        *n += add;
    }
    for mut u in p.unparsed.drain(..) {
        if info.unparsed_examples.len() < EXAMPLES {
            u.line += base;
            info.unparsed_examples.push(u);
        }
    }
    info.lines.merge(&p.counts);
    Ok(())
}

fn truncate(s: &str, n: usize) -> &str {
    match s.char_indices().nth(n) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}

fn parse_chunk<'a>(chunk: &'a Chunk, ctx: &LineContext) -> Parsed<'a> {
    let mut p = Parsed {
        records: Vec::with_capacity(chunk.data.len() / 120),
        ..Parsed::default()
    };
    let mut line_no = 0u64;
    for BlockLine { offset, raw, text } in chunk.lines() {
        line_no += 1;
        p.counts.total += 1;
        if raw.len() > MAX_LINE {
            p.overlong = Some((line_no, offset as u64));
            return p;
        }
        let text = text.ok_or(());
        let parsed = text.map(|text| (text, parse_line(text, ctx)));
        match parsed {
            Ok((_, Line::Event(ev, unit))) => {
                p.seen.event(ev.ts, ev.cpu);
                p.counts.events += 1;
                p.units[unit as usize] += 1;
                p.records.push(Record::Event(ev));
            }
            Ok((_, Line::Lost { cpu, count })) => {
                p.seen.lost(count);
                p.counts.lost_markers += 1;
                p.records.push(Record::Lost { cpu, count });
            }
            Ok((_, Line::BufferStarted { cpu })) => {
                p.counts.buffer_started += 1;
                p.records.push(Record::HistoryBegins { cpu: Some(cpu) });
            }
            Ok((text, Line::Other(kind))) => {
                p.counts.add(kind);
                if kind == NonEvent::Unparsed && p.unparsed.len() < EXAMPLES {
                    p.unparsed.push(UnparsedLine {
                        line: line_no,
                        text: truncate(text, 200).to_string(),
                    });
                }
            }
            Err(_) => {
                p.counts.add(NonEvent::Unparsed);
                if p.unparsed.len() < EXAMPLES {
                    p.unparsed.push(UnparsedLine {
                        line: line_no,
                        text: format!(
                            "(not UTF-8) {}",
                            String::from_utf8_lossy(&raw[..raw.len().min(80)])
                        ),
                    });
                }
            }
        }
    }
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_unit_is_that_of_most_lines() {
        use TimestampUnit::*;
        assert_eq!(main_unit(&[0, 0, 0]), Seconds);
        assert_eq!(main_unit(&[100, 0, 1]), Seconds);
        assert_eq!(main_unit(&[1, 0, 100]), Counter);
        assert_eq!(main_unit(&[2, 3, 0]), Microseconds);
        assert_eq!(main_unit(&[5, 0, 5]), Seconds);
    }
}
