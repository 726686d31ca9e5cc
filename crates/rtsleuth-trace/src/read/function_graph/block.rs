//! Classifying one block of lines, on its own, so that blocks can be parsed in parallel.
//!
//! A line's classification does not depend on any other line, so a block yields its records
//! (calls, task switches, cuts) with line numbers relative to the block, and its counts; the
//! reader then hands the records to the sink in file order.

use crate::graph_line::{parse_line, Call, GraphLine, Task};
use crate::input::Chunk;
use crate::read::ftrace_text::NonEvent;
use crate::read::info::{LineCounts, UnparsedLine};

/// How many unparsed lines are kept as examples.
pub const EXAMPLES: usize = 5;

/// What the sink must see, in order.
pub enum Record<'a> {
    /// A call and its 1-based line number within the block.
    Call(Call<'a>, u32),
    Switch {
        cpu: u32,
        from: Task<'a>,
        to: Task<'a>,
    },
    /// `[...]`.
    Gap,
}

/// The records and counts of one block.
#[derive(Default)]
pub struct Block<'a> {
    pub records: Vec<Record<'a>>,
    pub counts: LineCounts,
    pub irq_markers: u64,
    pub task_switches: u64,
    /// CPUs of the calls without a TIME column (the reader notes the others with their time),
    /// sorted.
    pub cpus: Vec<u32>,
    /// Line numbers within the block.
    pub unparsed: Vec<UnparsedLine>,
    /// Lines carrying hand-drawn markup (marked calls and drawings).
    pub markup_lines: u64,
    /// The first of them, within the block.
    pub first_markup: Option<u64>,
}

/// Classifies every line of `chunk`.
pub fn parse_block(chunk: &Chunk) -> Block<'_> {
    let mut b = Block {
        // About one record per 70-byte line in real graphs; a guess saves the regrowth.
        records: Vec::with_capacity(chunk.data.len() / 64),
        ..Block::default()
    };
    for line in chunk.lines() {
        let raw = line.raw.strip_suffix(b"\r").unwrap_or(line.raw);
        let text = line.text.map(|t| t.strip_suffix('\r').unwrap_or(t));
        b.counts.total += 1;
        b.add(text.map_or(GraphLine::Unparsed, parse_line), raw);
    }
    b
}

impl<'a> Block<'a> {
    fn add(&mut self, parsed: GraphLine<'a>, raw: &[u8]) {
        let number = self.counts.total;
        if matches!(
            parsed,
            GraphLine::Call(Call { marked: true, .. }) | GraphLine::Drawing
        ) {
            self.markup_lines += 1;
            self.first_markup.get_or_insert(number);
        }
        match parsed {
            GraphLine::Call(c) => {
                self.counts.events += 1;
                if c.ts.is_none() {
                    if let Err(pos) = self.cpus.binary_search(&c.cpu) {
                        self.cpus.insert(pos, c.cpu);
                    }
                }
                self.records.push(Record::Call(c, number as u32));
            }
            GraphLine::Switch { cpu, from, to } => {
                self.task_switches += 1;
                self.counts.add(NonEvent::Comment);
                self.records.push(Record::Switch { cpu, from, to });
            }
            GraphLine::IrqMarker => {
                self.irq_markers += 1;
                self.counts.add(NonEvent::Comment);
            }
            GraphLine::Comment | GraphLine::Drawing => self.counts.add(NonEvent::Comment),
            GraphLine::Elided => {
                self.counts.add(NonEvent::Elided);
                self.records.push(Record::Gap);
            }
            GraphLine::Blank => self.counts.add(NonEvent::Blank),
            GraphLine::Unparsed => {
                self.counts.add(NonEvent::Unparsed);
                if self.unparsed.len() < EXAMPLES {
                    self.unparsed.push(UnparsedLine {
                        line: number,
                        text: String::from_utf8_lossy(&raw[..raw.len().min(200)]).into_owned(),
                    });
                }
            }
        }
    }
}
