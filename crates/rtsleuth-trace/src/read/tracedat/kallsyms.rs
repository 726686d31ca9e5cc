//! The traced machine's `/proc/kallsyms`, to name the functions that events record as
//! addresses (hrtimer callbacks, work functions, the caller of a `trace_printk`).

use super::bytes::{Cursor, Endian, Parsed};
use super::codec::Codec;
use std::borrow::Cow;
use std::sync::OnceLock;

/// The symbol table, decompressed and parsed on first use: most reads (the scheduler events)
/// never look up an address, and a distribution kernel's kallsyms is megabytes of text.
#[derive(Debug, Default)]
pub struct Symbols<'f> {
    source: Source<'f>,
    table: OnceLock<Table>,
    /// Why a compressed table could not be read, once it was needed.
    failure: OnceLock<String>,
}

/// The kallsyms text as the file holds it, borrowed from the file (a distribution kernel's is
/// megabytes, not worth a copy when no address is looked up).
#[derive(Debug, Default)]
enum Source<'f> {
    #[default]
    Missing,
    Text(&'f [u8]),
    /// A version 7 section's compressed block and its file offset (for messages).
    Compressed {
        codec: Codec,
        endian: Endian,
        block: &'f [u8],
        base: u64,
    },
}

/// Tables of this many bytes or more are parsed in two halves ([`Table::parse`]).
const PARSE_IN_HALVES: usize = 1 << 20;

/// Symbols sorted by address. Names are kept in one string to avoid an allocation per symbol
/// (a distribution kernel has well over 100 000).
#[derive(Debug, Default)]
struct Table {
    names: String,
    /// (address, start of the name in `names`, end of the name).
    entries: Vec<(u64, u32, u32)>,
    /// The start of the kernel's text, which `preemptirq` events record addresses against.
    stext: Option<u64>,
}

/// A resolved address: the symbol and how far past its start the address lies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Symbol<'a> {
    pub name: &'a str,
    pub offset: u64,
    /// Distance to the next symbol, the kernel's `/0x…` size in `%pS`.
    pub size: Option<u64>,
}

impl<'f> Symbols<'f> {
    /// Keeps the file's kallsyms text for parsing when an address is first looked up.
    pub fn new(text: &'f [u8]) -> Symbols<'f> {
        Symbols {
            source: Source::Text(text),
            ..Symbols::default()
        }
    }

    /// Keeps a compressed kallsyms section (`codec` framing at file offset `base`) for
    /// decompressing when an address is first looked up.
    pub fn compressed(codec: Codec, endian: Endian, block: &'f [u8], base: u64) -> Symbols<'f> {
        Symbols {
            source: Source::Compressed {
                codec,
                endian,
                block,
                base,
            },
            ..Symbols::default()
        }
    }

    /// The symbol at or below `addr`.
    pub fn lookup(&self, addr: u64) -> Option<Symbol<'_>> {
        self.table().lookup(addr)
    }

    /// The address of `_stext`, if the table has it.
    pub fn stext(&self) -> Option<u64> {
        self.table().stext
    }

    /// Why the table is empty although the file has one: its section did not decompress.
    pub fn failure(&self) -> Option<&str> {
        self.failure.get().map(String::as_str)
    }

    /// Parses a compressed section: a block holding the usual size-prefixed text.
    fn decompress(codec: Codec, endian: Endian, block: &[u8], base: u64) -> Parsed<Table> {
        let section = codec.block(&mut Cursor::new(block, base, endian), "kallsyms")?;
        let text = Cursor::new(&section, base, endian).sized(4, "kallsyms")?;
        Ok(Table::parse(&as_text(text)))
    }

    fn table(&self) -> &Table {
        self.table.get_or_init(|| match &self.source {
            Source::Missing => Table::default(),
            Source::Text(text) => Table::parse(&as_text(text)),
            Source::Compressed {
                codec,
                endian,
                block,
                base,
            } => match Self::decompress(*codec, *endian, block, *base) {
                Ok(table) => table,
                Err(f) => {
                    let _ = self.failure.set(format!(
                        "at byte {}: {}; addresses are printed as numbers",
                        f.offset, f.reason
                    ));
                    Table::default()
                }
            },
        })
    }
}

impl Table {
    /// Parses `address type name [module]` lines. Module symbols are named `name [module]`,
    /// as the kernel's `%ps` prints them. Lines that do not parse are skipped: kallsyms is
    /// a convenience, not a structure of the file.
    ///
    /// A big table is parsed in two halves on two threads: every thread of a read waits for
    /// it at the first address an event prints. A distribution kernel's 122 000 lines (5.4
    /// MB) take 4.2 ms instead of 6.3 that way, at the start of an `explain` of about 125 ms.
    fn parse(text: &str) -> Table {
        let mut s = match memchr::memchr(b'\n', &text.as_bytes()[text.len() / 2..]) {
            Some(at) if text.len() >= PARSE_IN_HALVES => {
                let (head, tail) = text.split_at(text.len() / 2 + at + 1);
                std::thread::scope(|scope| {
                    let parse_tail = || Table::lines(tail, tail.len());
                    let tail_thread = std::thread::Builder::new().spawn_scoped(scope, parse_tail);
                    let head = Table::lines(head, text.len());
                    let tail = match tail_thread {
                        Ok(t) => t.join().unwrap_or_else(|p| std::panic::resume_unwind(p)),
                        Err(_) => parse_tail(),
                    };
                    head.followed_by(tail)
                })
            }
            _ => Table::lines(text, text.len()),
        };
        s.entries.sort_by_key(|e| e.0);
        s
    }

    /// The entries of `text`'s lines in file order, with `room` bytes kept for names (a name
    /// is shorter than its line, so the text's length is enough: growing by doubling copied
    /// and faulted in the table again and again).
    fn lines(text: &str, room: usize) -> Table {
        let mut s = Table::default();
        s.names.reserve(room);
        s.entries
            .reserve(memchr::memchr_iter(b'\n', text.as_bytes()).count() + 1);
        for line in text.lines() {
            let mut parts = line.split_ascii_whitespace();
            let (Some(addr), Some(_ty), Some(name)) = (parts.next(), parts.next(), parts.next())
            else {
                continue;
            };
            let Ok(addr) = u64::from_str_radix(addr, 16) else {
                continue;
            };
            if addr == 0 {
                continue;
            }
            if name == "_stext" {
                s.stext = Some(addr);
            }
            let start = s.names.len() as u32;
            s.names.push_str(name);
            if let Some(module) = parts.next() {
                s.names.push(' ');
                s.names.push_str(module);
            }
            s.entries.push((addr, start, s.names.len() as u32));
        }
        s
    }

    /// This table's entries, then `later`'s, as if parsed from one text.
    fn followed_by(mut self, later: Table) -> Table {
        let shift = self.names.len() as u32;
        self.names.push_str(&later.names);
        let moved = later
            .entries
            .iter()
            .map(|&(a, s, e)| (a, s + shift, e + shift));
        self.entries.extend(moved);
        self.stext = later.stext.or(self.stext);
        self
    }

    fn name(&self, i: usize) -> &str {
        let (_, a, b) = self.entries[i];
        &self.names[a as usize..b as usize]
    }

    fn lookup(&self, addr: u64) -> Option<Symbol<'_>> {
        let i = self
            .entries
            .partition_point(|e| e.0 <= addr)
            .checked_sub(1)?;
        let start = self.entries[i].0;
        let size = self.entries.get(i + 1).map(|e| e.0 - start);
        Some(Symbol {
            name: self.name(i),
            offset: addr - start,
            size,
        })
    }
}

/// The table's text; a stray invalid byte (the kernel does not check names) becomes U+FFFD
/// rather than losing the table. Checked strictly first, which is ten times faster on the
/// megabytes of a distribution kernel's table (0.12 against 1.3 ms for 5.4 MB).
fn as_text(bytes: &[u8]) -> Cow<'_, str> {
    std::str::from_utf8(bytes).map_or_else(|_| String::from_utf8_lossy(bytes), Cow::Borrowed)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Parsed in halves, a big table is the table parsed in one piece: the same entries in
    /// the same order (aliases at one address keep the file's order), the last `_stext`.
    #[test]
    fn halves_make_the_same_table() {
        let mut text = String::new();
        for i in 0..40_000u64 {
            let addr = 0xffffffff81000000 + (i * 7919) % 30_000 * 16;
            text.push_str(&format!("{addr:016x} t sym_{i}\n"));
            if i % 1000 == 0 {
                text.push_str(&format!(
                    "{addr:016x} T _stext\n{addr:016x} t mod_{i}\t[m{i}]\n"
                ));
            }
        }
        // A character of two bytes across the middle: the cut must still fall between lines.
        text.insert(text.len() / 2, '\u{e9}');
        assert!(!text.is_char_boundary(text.len() / 2));
        assert!(text.len() >= PARSE_IN_HALVES);
        let halves = Table::parse(&text);
        let mut whole = Table::lines(&text, text.len());
        whole.entries.sort_by_key(|e| e.0);
        let named = |t: &Table| {
            (0..t.entries.len())
                .map(|i| (t.entries[i].0, t.name(i).to_string()))
                .collect::<Vec<_>>()
        };
        assert_eq!(named(&halves), named(&whole));
        assert_eq!(halves.stext, whole.stext);
        assert_eq!(
            halves.stext,
            Some(0xffffffff81000000 + 39_000 * 7919 % 30_000 * 16)
        );
    }

    /// An invalid byte in a name costs that byte, not the table.
    #[test]
    fn an_invalid_byte_is_replaced() {
        let s = Symbols::new(b"ffffffff81001000 t bad\xffname\nffffffff81002000 t good\n");
        assert_eq!(
            s.lookup(0xffffffff81001000).map(|s| s.name),
            Some("bad\u{fffd}name")
        );
        assert_eq!(s.lookup(0xffffffff81002000).map(|s| s.name), Some("good"));
    }

    #[test]
    fn resolves_exact_and_inner_addresses_and_module_symbols() {
        let s = Symbols::new(
            b"ffffffff81000000 T _stext\nffffffff81001000 t hrtimer_wakeup\nffffffffc0100000 t timer_callback\t[irq_noise]\nbad line\n0000000000000000 A fixed_percpu_data\n",
        );
        assert_eq!(s.table().entries.len(), 3);
        assert_eq!(s.stext(), Some(0xffffffff81000000));
        let exact = |a| s.lookup(a).filter(|s| s.offset == 0).map(|s| s.name);
        assert_eq!(exact(0xffffffff81001000), Some("hrtimer_wakeup"));
        assert_eq!(exact(0xffffffff81001001), None);
        let inner = s.lookup(0xffffffff81000010).unwrap();
        assert_eq!(
            (inner.name, inner.offset, inner.size),
            ("_stext", 0x10, Some(0x1000))
        );
        assert_eq!(
            exact(0xffffffffc0100000),
            Some("timer_callback [irq_noise]")
        );
        assert_eq!(s.lookup(0x10), None);
    }

    /// A v7 kallsyms section as trace-cmd compresses it: the size-prefixed text in one block.
    fn zstd_section(text: &[u8]) -> Vec<u8> {
        let mut section = (text.len() as u32).to_le_bytes().to_vec();
        section.extend_from_slice(text);
        let packed = zstd::bulk::compress(&section, 3).unwrap();
        let mut block = (packed.len() as u32).to_le_bytes().to_vec();
        block.extend_from_slice(&(section.len() as u32).to_le_bytes());
        block.extend_from_slice(&packed);
        block
    }

    #[test]
    fn a_compressed_table_is_read_when_first_needed() {
        let block = zstd_section(b"ffffffff81001000 t hrtimer_wakeup\n");
        let s = Symbols::compressed(Codec::Zstd, Endian::Little, &block, 4096);
        assert!(s.table.get().is_none());
        assert_eq!(s.lookup(0xffffffff81001000).unwrap().name, "hrtimer_wakeup");
        assert_eq!(s.failure(), None);
    }

    #[test]
    fn a_damaged_compressed_table_leaves_addresses_unnamed_and_says_why() {
        let mut block = zstd_section(b"ffffffff81001000 t hrtimer_wakeup\n");
        block[8..12].fill(0xff); // the zstd frame's magic number
        let s = Symbols::compressed(Codec::Zstd, Endian::Little, &block, 4096);
        assert_eq!(s.lookup(0xffffffff81001000), None);
        let why = s.failure().unwrap();
        assert!(why.starts_with("at byte 4096: "), "{why}");
    }
}
