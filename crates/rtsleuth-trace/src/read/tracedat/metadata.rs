//! Everything in a trace.dat except the trace data: the page and event schemas, the symbol,
//! printk and comm tables, the options, and where each CPU's pages are.
//!
//! Version 6 stores these one after another; version 7 stores them as (optionally compressed)
//! sections that the options point to. Both end up here in the same shape.

use super::bytes::{Cursor, Fault, Parsed};
use super::cmdlines::Cmdlines;
use super::event_format::EventFormat;
use super::file_header::FileHeader;
use super::format_table::{FormatTable, Text};
use super::kallsyms::Symbols;
use super::latency_text::TextPlace;
use super::options::{id, Buffer, CpuData, Options};
use super::printk::PrintkFormats;
use crate::event::MAX_CPUS;
use crate::ring_buffer::PageLayout;
use std::borrow::Cow;

/// Guards against a corrupt count making us loop for a long time over nothing.
const MAX_FORMATS: u32 = 1 << 16;

pub struct Metadata<'f> {
    pub header: FileHeader,
    pub layout: PageLayout,
    pub formats: FormatTable<'f>,
    pub symbols: Symbols<'f>,
    pub printk: PrintkFormats,
    pub cmdlines: Cmdlines,
    pub options: Options,
    /// The per-CPU data read: the top instance's, or the only instance's when the top one is
    /// empty.
    pub cpus: Vec<CpuData>,
    pub clock: Option<String>,
    /// A latency-mode file: where its text is.
    pub latency_text: Option<TextPlace>,
    /// Things that were skipped or look off, for the report's warnings.
    pub notes: Vec<String>,
}

impl<'f> Metadata<'f> {
    pub fn parse(bytes: &'f [u8]) -> Parsed<Metadata<'f>> {
        let mut m = Metadata::empty(FileHeader::parse(bytes)?);
        if m.header.version >= 7 {
            m.parse_v7(bytes)?;
        } else {
            m.parse_v6(bytes)?;
        }
        m.clock = m.options.clock.clone();
        if let Some(top) = m.options.buffers.iter().position(|b| b.name.is_empty()) {
            m.read_buffer(top);
        }
        // `trace-cmd extract -B NAME` stores only that instance: with nothing in the top one,
        // the first instance that holds data is the trace.
        let has_data = |cpus: &[CpuData]| cpus.iter().any(|d| d.size > 0);
        if !has_data(&m.cpus) {
            if let Some(i) = m.options.buffers.iter().position(|b| has_data(&b.cpus)) {
                let name = m.options.buffers[i].name.clone();
                m.read_buffer(i);
                m.notes.push(format!(
                    "the top instance holds no events: instance {name:?} is read"
                ));
            }
        }
        m.drop_impossible_cpus();
        for b in &m.options.buffers {
            m.notes.push(format!(
                "instance {:?} is in the file but only one instance is read",
                b.name
            ));
        }
        Ok(m)
    }

    /// Takes buffer `i` out of the options as the one whose CPU data is read.
    fn read_buffer(&mut self, i: usize) {
        let b: Buffer = self.options.buffers.remove(i);
        self.cpus = b.cpus;
        self.clock = b.clock.or(self.clock.take());
    }

    /// Skips the CPU table entries that name a CPU no kernel has, or a CPU already listed:
    /// analyses keep state per CPU number and the reader a stream per entry, so a damaged
    /// table must not choose either (see [`MAX_CPUS`]).
    fn drop_impossible_cpus(&mut self) {
        let mut seen = std::collections::BTreeSet::new();
        let (mut skipped, mut first) = (0u64, None);
        self.cpus.retain(|d| {
            let why = if d.cpu >= MAX_CPUS {
                format!(
                    "names CPU {}, beyond the {MAX_CPUS} a kernel can have",
                    d.cpu
                )
            } else if !seen.insert(d.cpu) {
                format!("lists CPU {} a second time", d.cpu)
            } else {
                return true;
            };
            skipped += 1;
            first.get_or_insert_with(|| {
                format!("{why}; its data at byte {} ({} bytes)", d.offset, d.size)
            });
            false
        });
        if let Some(first) = first {
            self.notes.push(format!(
                "the CPU table is damaged: {skipped} entries were skipped (first: an entry {first})"
            ));
        }
    }

    /// The schemas perf.data carries in its `HEADER_TRACING_DATA` feature section: what a
    /// version 6 trace.dat holds before its CPU data, under perf's own version number. There
    /// are no options and no pages: perf keeps the records itself.
    pub fn parse_perf(bytes: &'f [u8]) -> Parsed<Metadata<'f>> {
        let (header, cmdlines) = FileHeader::parse_perf(bytes)?;
        let mut m = Metadata::empty(header);
        let mut c = m.cursor(bytes, header.end);
        m.schemas(&mut c)?;
        if cmdlines {
            m.cmdlines(&mut c)?;
        }
        Ok(m)
    }

    fn empty(header: FileHeader) -> Metadata<'f> {
        Metadata {
            header,
            layout: PageLayout::standard(header.endian, header.page_size, 8),
            formats: FormatTable::new(header.long_size),
            symbols: Symbols::default(),
            printk: PrintkFormats::default(),
            cmdlines: Cmdlines::default(),
            options: Options::default(),
            cpus: Vec::new(),
            clock: None,
            latency_text: None,
            notes: Vec::new(),
        }
    }

    fn cursor<'a>(&self, bytes: &'a [u8], at: usize) -> Cursor<'a> {
        let mut c = Cursor::new(bytes, 0, self.header.endian);
        c.seek(at.min(bytes.len()), "").expect("clamped");
        c
    }

    fn parse_v6(&mut self, bytes: &'f [u8]) -> Parsed<()> {
        let mut c = self.cursor(bytes, self.header.end);
        self.schemas(&mut c)?;
        self.cmdlines(&mut c)?;
        let ncpus = c.u32("cpu count")?;
        loop {
            let at = c.offset();
            match c.bytes(10, "data kind (options, latency or flyrecord)")? {
                b"options  \0" => {
                    self.options.read(&mut c, 6)?;
                }
                b"latency  \0" => {
                    self.latency_text = Some(TextPlace::Plain {
                        start: c.offset() as usize,
                        end: bytes.len(),
                    });
                    return Ok(());
                }
                b"flyrecord\0" => {
                    for cpu in 0..ncpus.min(MAX_FORMATS) {
                        self.cpus.push(CpuData {
                            cpu,
                            offset: c.u64("cpu data offset")?,
                            size: c.u64("cpu data size")?,
                        });
                    }
                    return Ok(());
                }
                other => {
                    return Err(Fault::new(
                        at,
                        format!(
                            "expected options, latency or flyrecord, found {:?}",
                            String::from_utf8_lossy(other)
                        ),
                    ))
                }
            }
        }
    }

    /// What version 6 and perf's tracing data both start with, in this order.
    fn schemas(&mut self, c: &mut Cursor<'f>) -> Parsed<()> {
        self.header_info(c)?;
        let mut add = |system: &str, text| self.add_format(system, Text::File(text));
        ftrace_formats(c, &mut add)?;
        event_formats(c, &mut add)?;
        self.kallsyms(c)?;
        self.printk(c)
    }

    fn parse_v7(&mut self, bytes: &'f [u8]) -> Parsed<()> {
        let mut next = self.header.first_options;
        let mut seen = 0;
        while let Some(at) = next {
            seen += 1;
            if seen > 1024 {
                return Err(Fault::new(
                    at,
                    "options sections point at each other in a loop",
                ));
            }
            let (data, base) = self.section(bytes, at, "options")?;
            next = self
                .options
                .read(&mut Cursor::new(&data, base, self.header.endian), 7)?;
        }
        let sections = self.options.sections.clone();
        let get = |option| sections.get(&option).copied();
        if let Some(at) = get(id::HEADER_INFO) {
            let (d, base) = self.section(bytes, at, "header info")?;
            self.header_info(&mut Cursor::new(&d, base, self.header.endian))?;
        } else {
            self.notes
                .push("no page header section: assuming the standard page layout".into());
        }
        let formats: [(u16, &str, FormatsReader); 2] = [
            (id::FTRACE_EVENTS, "ftrace formats", ftrace_formats),
            (id::EVENT_FORMATS, "event formats", event_formats),
        ];
        for (option, what, read) in formats {
            if let Some(at) = get(option) {
                let (d, base) = self.section(bytes, at, what)?;
                self.formats_in(d, base, read)?;
            }
        }
        type Reader<'f> = fn(&mut Metadata<'f>, &mut Cursor<'_>) -> Parsed<()>;
        let readers: [(u16, &str, Reader<'f>); 2] = [
            (id::PRINTK, "printk formats", Metadata::printk),
            (id::CMDLINES, "saved cmdlines", Metadata::cmdlines),
        ];
        for (option, what, read) in readers {
            if let Some(at) = get(option) {
                let (d, base) = self.section(bytes, at, what)?;
                read(self, &mut Cursor::new(&d, base, self.header.endian))?;
            }
        }
        if let Some(at) = get(id::KALLSYMS) {
            self.symbols = match self.section_body(bytes, at, "kallsyms")? {
                (false, mut body) => Symbols::new(body.sized(4, "kallsyms")?),
                (true, mut body) => Symbols::compressed(
                    self.header.codec,
                    self.header.endian,
                    body.bytes(body.remaining(), "kallsyms")?,
                    body.offset(),
                ),
            };
        }
        if let Some(at) = self.options.text_buffer {
            let (compressed, mut body) = self.section_body(bytes, at, "latency text")?;
            let start = body.offset() as usize;
            let end = start + body.remaining();
            self.latency_text = Some(if compressed {
                let count = body.u32("latency text chunk count")?;
                TextPlace::Chunked {
                    start: start + 4,
                    end,
                    count,
                }
            } else {
                TextPlace::Plain { start, end }
            });
        }
        Ok(())
    }

    /// A version 7 section at `at`: its (decompressed) contents and their file offset.
    fn section<'a>(&self, bytes: &'a [u8], at: u64, what: &str) -> Parsed<(Cow<'a, [u8]>, u64)> {
        let (compressed, mut body) = self.section_body(bytes, at, what)?;
        let base = body.offset();
        if !compressed {
            return Ok((Cow::Borrowed(body.bytes(body.remaining(), what)?), base));
        }
        Ok((Cow::Owned(self.header.codec.block(&mut body, what)?), base))
    }

    /// A version 7 section's body as stored, and whether it is compressed.
    fn section_body<'a>(&self, bytes: &'a [u8], at: u64, what: &str) -> Parsed<(bool, Cursor<'a>)> {
        let mut c = self.cursor(bytes, usize::try_from(at).unwrap_or(usize::MAX));
        if c.offset() != at {
            return Err(Fault::new(
                at,
                format!(
                    "the {what} section is past the end of the file ({} bytes): the file is truncated",
                    bytes.len()
                ),
            ));
        }
        c.u16("section id")?;
        let flags = c.u16("section flags")?;
        c.u32("section description")?;
        let size = c.u64("section size")?;
        let size = usize::try_from(size).map_err(|_| c.fault("section size is absurd"))?;
        Ok((flags & 1 != 0, c.sub(size, what)?))
    }

    fn header_info(&mut self, c: &mut Cursor<'_>) -> Parsed<()> {
        expect(c, b"header_page\0")?;
        let page = c.sized(8, "header_page")?;
        self.layout = PageLayout::from_header_page(
            &String::from_utf8_lossy(page),
            self.header.endian,
            self.header.page_size,
            self.header.long_size,
        );
        expect(c, b"header_event\0")?;
        let event = String::from_utf8_lossy(c.sized(8, "header_event")?).into_owned();
        if !event.contains("type_len") {
            self.notes.push(
                "the event header does not describe type_len/time_delta; pages are read with the standard layout".into(),
            );
        }
        Ok(())
    }

    /// Stores the formats of a version 7 section: where they lie in the file, or in the
    /// decompressed section, which the table then keeps.
    fn formats_in(&mut self, section: Cow<'f, [u8]>, base: u64, read: FormatsReader) -> Parsed<()> {
        let endian = self.header.endian;
        let section = match section {
            Cow::Borrowed(bytes) => {
                let mut add = |system: &str, text| self.add_format(system, Text::File(text));
                return read(&mut Cursor::new(bytes, base, endian), &mut add);
            }
            Cow::Owned(section) => section,
        };
        let mut found = Vec::new();
        read(
            &mut Cursor::new(&section, base, endian),
            &mut |system, text| {
                // Each text is a slice of `section`: where it starts is how far its bytes are from
                // the section's first.
                let start = text.as_ptr() as usize - section.as_ptr() as usize;
                found.push((system.to_owned(), start..start + text.len()));
            },
        )?;
        let section = self.formats.keep(section);
        for (system, range) in found {
            self.add_format(&system, Text::Kept { section, range });
        }
        Ok(())
    }

    fn add_format(&mut self, system: &str, text: Text<'f>) {
        if let Err(e) = self.formats.add(system, text) {
            self.notes
                .push(format!("event format in system {system} skipped: {e}"));
        }
    }

    fn kallsyms(&mut self, c: &mut Cursor<'f>) -> Parsed<()> {
        self.symbols = Symbols::new(c.sized(4, "kallsyms")?);
        Ok(())
    }

    fn printk(&mut self, c: &mut Cursor<'_>) -> Parsed<()> {
        self.printk = PrintkFormats::parse(&String::from_utf8_lossy(c.sized(4, "printk formats")?));
        Ok(())
    }

    fn cmdlines(&mut self, c: &mut Cursor<'_>) -> Parsed<()> {
        self.cmdlines = Cmdlines::parse(&String::from_utf8_lossy(c.sized(8, "saved cmdlines")?));
        Ok(())
    }

    pub fn format(&self, id: u16) -> Option<&EventFormat> {
        self.formats.get(id)
    }
}

/// Reads a section of formats, handing each one's system and text to the callback.
type FormatsReader = for<'a> fn(&mut Cursor<'a>, &mut dyn FnMut(&str, &'a [u8])) -> Parsed<()>;

/// The formats of ftrace's own events (`function`, `print`...), system `ftrace`.
fn ftrace_formats<'a>(c: &mut Cursor<'a>, add: &mut dyn FnMut(&str, &'a [u8])) -> Parsed<()> {
    let n = count(c, "ftrace format count")?;
    for _ in 0..n {
        add("ftrace", c.sized(8, "ftrace format")?);
    }
    Ok(())
}

/// The formats of the other events, system by system.
fn event_formats<'a>(c: &mut Cursor<'a>, add: &mut dyn FnMut(&str, &'a [u8])) -> Parsed<()> {
    let systems = count(c, "event system count")?;
    for _ in 0..systems {
        let system = c.cstr("event system name")?.into_owned();
        let n = count(c, "event format count")?;
        for _ in 0..n {
            add(&system, c.sized(8, "event format")?);
        }
    }
    Ok(())
}

fn expect(c: &mut Cursor<'_>, tag: &[u8]) -> Parsed<()> {
    let at = c.offset();
    let got = c.bytes(tag.len(), "section tag")?;
    if got != tag {
        return Err(Fault::new(
            at,
            format!(
                "expected {:?}, found {:?}",
                String::from_utf8_lossy(tag),
                String::from_utf8_lossy(got)
            ),
        ));
    }
    Ok(())
}

fn count(c: &mut Cursor<'_>, what: &str) -> Parsed<u32> {
    let at = c.offset();
    let n = c.u32(what)?;
    if n > MAX_FORMATS {
        return Err(Fault::new(at, format!("{what} {n} is absurd")));
    }
    Ok(n)
}
