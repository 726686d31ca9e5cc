//! The traced machine's `/proc/kallsyms`, to name the functions that events record as
//! addresses (hrtimer callbacks, work functions, the caller of a `trace_printk`).

use super::bytes::{Cursor, Endian, Parsed};
use super::codec::Codec;
use crate::read::hex;
use std::borrow::Cow;
use std::sync::OnceLock;

/// The symbol table, decompressed and parsed on first use: most reads (the scheduler events)
/// never look up an address, and a distribution kernel's kallsyms is megabytes of text.
#[derive(Debug, Default)]
pub struct Symbols<'f> {
    source: Source<'f>,
    table: OnceLock<Table<'f>>,
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

/// Symbols sorted by address, each pointing at its name in the table's text: a distribution
/// kernel has well over 100 000, and copying every name out cost more than finding the lines.
#[derive(Debug, Default)]
struct Table<'f> {
    /// As the file holds it: names are checked as UTF-8 when looked up, not all 100 000 of
    /// them before the first lookup.
    text: Cow<'f, [u8]>,
    /// (address, where the symbol's name starts in `text`).
    entries: Vec<(u64, u32)>,
    /// The start of the kernel's text, which `preemptirq` events record addresses against.
    stext: Option<u64>,
}

/// A resolved address: the symbol and how far past its start the address lies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Symbol<'a> {
    pub name: Cow<'a, str>,
    /// A module's symbol: the module, bracketed as kallsyms prints it (`[irq_noise]`).
    pub module: Option<Cow<'a, str>>,
    pub offset: u64,
    /// Distance to the next symbol, the kernel's `/0x…` size in `%pS`.
    pub size: Option<u64>,
}

impl Symbol<'_> {
    /// The address is short of the next symbol. One past the table's last symbol has no size
    /// to be inside, and is printed as a number.
    pub fn inside(&self) -> bool {
        self.size.is_some_and(|n| self.offset < n)
    }
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

    /// Parses a compressed section: a block holding the usual size-prefixed text, kept in
    /// the decompressed buffer itself.
    fn decompress(codec: Codec, endian: Endian, block: &[u8], base: u64) -> Parsed<Table<'f>> {
        let mut section = codec.block(&mut Cursor::new(block, base, endian), "kallsyms")?;
        let len = Cursor::new(&section, base, endian)
            .sized(4, "kallsyms")?
            .len();
        section.truncate(4 + len);
        section.drain(..4);
        Ok(Table::parse(Cow::Owned(section)))
    }

    fn table(&self) -> &Table<'f> {
        self.table.get_or_init(|| match &self.source {
            Source::Missing => Table::default(),
            Source::Text(text) => Table::parse(Cow::Borrowed(text)),
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

impl<'f> Table<'f> {
    /// Parses `address type name [module]` lines. Lines that do not parse are skipped:
    /// kallsyms is a convenience, not a structure of the file.
    ///
    /// A big table is parsed in two halves on two threads: every thread of a read waits for
    /// it at the first address an event prints.
    fn parse(text: Cow<'f, [u8]>) -> Table<'f> {
        let len = text.len();
        let (mut entries, stext) = match memchr::memchr(b'\n', &text[len / 2..]) {
            Some(at) if len >= PARSE_IN_HALVES => {
                let cut = len / 2 + at + 1;
                std::thread::scope(|scope| {
                    let parse_tail = || lines(&text, cut..len);
                    let tail_thread = std::thread::Builder::new().spawn_scoped(scope, parse_tail);
                    let (mut entries, head_stext) = lines(&text, 0..cut);
                    let (tail, tail_stext) = match tail_thread {
                        Ok(t) => t.join().unwrap_or_else(|p| std::panic::resume_unwind(p)),
                        Err(_) => parse_tail(),
                    };
                    entries.extend(tail);
                    (entries, tail_stext.or(head_stext))
                })
            }
            _ => lines(&text, 0..len),
        };
        entries.sort_by_key(|e| e.0);
        Table {
            text,
            entries,
            stext,
        }
    }

    /// The name starting at `at`, and the module after it on its line, if any. A stray
    /// invalid byte (the kernel does not check names) becomes U+FFFD.
    fn words(&self, at: u32) -> (Cow<'_, str>, Option<Cow<'_, str>>) {
        let rest = &self.text[at as usize..];
        let line = &rest[..memchr::memchr(b'\n', rest).unwrap_or(rest.len())];
        let mut words = words(line).map(String::from_utf8_lossy);
        (words.next().unwrap_or_default(), words.next())
    }

    fn lookup(&self, addr: u64) -> Option<Symbol<'_>> {
        let i = self
            .entries
            .partition_point(|e| e.0 <= addr)
            .checked_sub(1)?;
        let (start, at) = self.entries[i];
        let size = self.entries.get(i + 1).map(|e| e.0 - start);
        let (name, module) = self.words(at);
        Some(Symbol {
            name,
            module,
            offset: addr - start,
            size,
        })
    }
}

/// The entries of the lines in `text[range]` (which starts at a line) in file order, and the
/// last `_stext` among them.
fn lines(text: &[u8], range: std::ops::Range<usize>) -> (Vec<(u64, u32)>, Option<u64>) {
    let bytes = &text[..range.end];
    // Lines are some 40 bytes long: room for most tables without growing.
    let mut entries = Vec::with_capacity(range.len() / 32);
    let mut stext = None;
    let mut start = range.start;
    while start < range.end {
        let (found, end) = match usual(bytes, start) {
            Some(read) => read,
            None => {
                let end = memchr::memchr(b'\n', &bytes[start..]).map_or(range.end, |e| start + e);
                (entry(text, start..end), end)
            }
        };
        // A name past 4 GiB (no kernel's table is near that) is not kept rather than wrapped.
        if let Some((addr, name)) = found.filter(|&(_, name)| u32::try_from(name).is_ok()) {
            if bytes[name..].starts_with(b"_stext")
                && bytes.get(name + 6).map_or(true, u8::is_ascii_whitespace)
            {
                stext = Some(addr);
            }
            entries.push((addr, name as u32));
        }
        start = end + 1;
    }
    (entries, stext)
}

/// The line at `start` if it has the usual shape with all sixteen digits (a 64-bit kernel's
/// every line): its entry as [`entry`] makes it, and where it ends. Read in place, its end
/// looked for only past the fixed part: the table's parse is most of what an `explain` of a
/// trace.dat waits for before its first event.
#[inline(always)]
fn usual(bytes: &[u8], start: usize) -> Option<(Option<(u64, usize)>, usize)> {
    let head: &[u8; 20] = bytes[start..].first_chunk()?;
    let addr = hex::sixteen(head.first_chunk()?)?;
    let found = in_place(head, start, addr, 16)?;
    let end = memchr::memchr(b'\n', &bytes[start + 20..]).map_or(bytes.len(), |e| start + 20 + e);
    Some((found, end))
}

/// The address of one line and where its name starts; `None` for a line that names nothing
/// or the address 0. The usual line, `ADDRESS T NAME`, one blank each side of the type
/// letter, is read in place; any other is split into words.
fn entry(text: &[u8], line: std::ops::Range<usize>) -> Option<(u64, usize)> {
    let b = &text[line.clone()];
    // A 17th digit leaves no blank after the 16 read, so the line is split below.
    let (addr, digits) = hex::leading(b);
    in_place(b, line.start, addr, digits).unwrap_or_else(|| split_entry(text, line))
}

/// The entry of `line` (at `start` in the text), which begins with `digits` hex digits worth
/// `addr`, if it goes on as the usual line does: one blank each side of the type letter, then
/// the name. `None` for a line of another shape; `Some(None)` for the address 0.
#[inline(always)]
fn in_place(line: &[u8], start: usize, addr: u64, digits: usize) -> Option<Option<(u64, usize)>> {
    let usual = digits > 0
        && line.len() > digits + 3
        && line[digits] == b' '
        && !line[digits + 1].is_ascii_whitespace()
        && line[digits + 2] == b' '
        && !line[digits + 3].is_ascii_whitespace();
    usual.then(|| (addr != 0).then_some((addr, start + digits + 3)))
}

/// [`entry`] for a line of any other shape: its first three words.
fn split_entry(text: &[u8], line: std::ops::Range<usize>) -> Option<(u64, usize)> {
    let mut words = words(&text[line]);
    let (addr, _type, name) = (words.next()?, words.next()?, words.next()?);
    let addr = hex::u64_digits(addr).filter(|&a| a != 0)?;
    Some((addr, name.as_ptr() as usize - text.as_ptr() as usize))
}

/// The words of `line`, split at ASCII white space as `str::split_ascii_whitespace` splits.
fn words(line: &[u8]) -> impl Iterator<Item = &[u8]> {
    line.split(u8::is_ascii_whitespace)
        .filter(|w| !w.is_empty())
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
        let halves = Table::parse(Cow::Borrowed(text.as_bytes()));
        let (mut whole, whole_stext) = lines(text.as_bytes(), 0..text.len());
        whole.sort_by_key(|e| e.0);
        let named = |entries: &[(u64, u32)]| {
            entries
                .iter()
                .map(|&(addr, at)| {
                    let (name, module) = halves.words(at);
                    (addr, (name.into_owned(), module.map(Cow::into_owned)))
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(named(&halves.entries), named(&whole));
        let first = 0xffffffff81000000;
        assert_eq!(
            named(&whole)[..3],
            [
                (first, ("sym_0".into(), None)),
                (first, ("_stext".into(), None)),
                (first, ("mod_0".into(), Some("[m0]".into())))
            ]
        );
        assert_eq!(halves.stext, whole_stext);
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
            Some("bad\u{fffd}name".into())
        );
        assert_eq!(
            s.lookup(0xffffffff81002000).map(|s| s.name),
            Some("good".into())
        );
    }

    /// Lines read in place and lines split into words give the entries the line says: short
    /// addresses, tabs, a 17th digit, no name, the address 0, a last line with no newline.
    #[test]
    fn every_shape_of_line_gives_its_entry() {
        let text = b"ffffffff81000000 T _stext\nffffffff81000010 t a\n0000000000000000 A zero\n\
            c1000020 t short_digits\nffffffff81000030\tt tabbed\tx\nffffffff810000400 t seventeen\n\
            ffffffff81000050 t\nffffffff81000060 t last";
        let (entries, stext) = lines(text, 0..text.len());
        let named: Vec<(u64, &[u8])> = entries
            .iter()
            .map(|&(addr, at)| {
                let rest = &text[at as usize..];
                let end = rest.iter().position(u8::is_ascii_whitespace);
                (addr, &rest[..end.unwrap_or(rest.len())])
            })
            .collect();
        let want: [(u64, &[u8]); 5] = [
            (0xffffffff81000000, b"_stext"),
            (0xffffffff81000010, b"a"),
            (0xc1000020, b"short_digits"),
            (0xffffffff81000030, b"tabbed"),
            (0xffffffff81000060, b"last"),
        ];
        assert_eq!(named, want);
        assert_eq!(stext, Some(0xffffffff81000000));
    }

    #[test]
    fn resolves_exact_and_inner_addresses_and_module_symbols() {
        let s = Symbols::new(
            b"ffffffff81000000 T _stext\nffffffff81001000 t hrtimer_wakeup\nffffffffc0100000 t timer_callback\t[irq_noise]\nbad line\n0000000000000000 A fixed_percpu_data\n",
        );
        assert_eq!(s.table().entries.len(), 3);
        assert_eq!(s.stext(), Some(0xffffffff81000000));
        let exact = |a| {
            let found = s.lookup(a).filter(|s| s.offset == 0);
            found.map(|s| s.name.into_owned())
        };
        assert_eq!(exact(0xffffffff81001000).as_deref(), Some("hrtimer_wakeup"));
        assert_eq!(exact(0xffffffff81001001), None);
        let inner = s.lookup(0xffffffff81000010).unwrap();
        assert_eq!(
            (&*inner.name, inner.offset, inner.size),
            ("_stext", 0x10, Some(0x1000))
        );
        assert_eq!(exact(0xffffffffc0100000).as_deref(), Some("timer_callback"));
        assert_eq!(
            s.lookup(0xffffffffc0100000).unwrap().module.as_deref(),
            Some("[irq_noise]")
        );
        assert_eq!(s.lookup(0x10), None);
    }

    /// Lines of the usual shape are read in place, every other one split into words, and
    /// both give the address and the name's first word as kallsyms's columns say.
    #[test]
    fn lines_of_every_shape() {
        let cases: &[(&str, Option<(u64, &str)>)] = &[
            (
                "ffffffff81000000 T _stext",
                Some((0xffffffff81000000, "_stext")),
            ),
            ("81000000 t short", Some((0x81000000, "short"))),
            (
                "FFFFFFFF8100abcd t upper",
                Some((0xffffffff8100abcd, "upper")),
            ),
            (
                "ffffffff81000000 t crlf\r",
                Some((0xffffffff81000000, "crlf")),
            ),
            (
                "  ffffffff81000000 T lead",
                Some((0xffffffff81000000, "lead")),
            ),
            (
                "ffffffff81000000\tT\ttabbed",
                Some((0xffffffff81000000, "tabbed")),
            ),
            (
                "ffffffff81000000 TT word",
                Some((0xffffffff81000000, "word")),
            ),
            ("ffffffff81000000 t  two", Some((0xffffffff81000000, "two"))),
            ("00000000000000000000ffff t zeros", Some((0xffff, "zeros"))),
            ("1ffffffffffffffff t overflow", None),
            ("ffffffff81000000 t", None),
            ("ffffffff81000000 t ", None),
            ("0000000000000000 A zero", None),
            ("xyz t nothex", None),
            ("", None),
        ];
        for &(line, want) in cases {
            let got = entry(line.as_bytes(), 0..line.len()).map(|(addr, at)| {
                let name = line[at..].split_ascii_whitespace().next().unwrap_or("");
                (addr, name)
            });
            assert_eq!(got, want, "{line:?}");
            let split = split_entry(line.as_bytes(), 0..line.len());
            assert_eq!(entry(line.as_bytes(), 0..line.len()), split, "{line:?}");
        }
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
