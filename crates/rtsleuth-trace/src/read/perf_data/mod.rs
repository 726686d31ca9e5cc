//! The `perf.data` reader: the tracepoint samples of `perf sched record` and
//! `perf record -e 'sched:*' -e 'irq:*' …`, as the same [`Event`]s every other reader makes.
//!
//! The container (header, attrs and their ids, each attr's sample layout, compressed records,
//! the order of records across CPUs) is `linux-perf-data`'s. Its record iterator hands records
//! out in time order with memory bounded by perf's own rounds: perf writes a `FINISHED_ROUND`
//! after each pass over the per-CPU buffers, and nothing after the round after next can be
//! older, so one to two rounds (about the size of the ring buffers) wait at a time. That is
//! how `perf script` orders them too, so the bounded merge of the Perfetto reader is not
//! needed here. What the crate trusts unchecked is checked first ([`preflight`]).
//!
//! The samples' raw tracepoint records are the records ftrace keeps; the file carries the
//! kernel's event formats for them in its `HEADER_TRACING_DATA` feature, the same `format`
//! files a trace.dat carries, so the trace.dat reader's metadata parser and record decoder
//! read them. Times, CPUs and task ids are the sample's, and task names come from perf's
//! `COMM`/`FORK` records ([`threads`]), so events match `perf script` line for line.
//!
//! [`Event`]: crate::event::Event

mod about;
mod kernel_symbols;
mod lost;
mod preflight;
mod samples;
mod source;
mod threads;

use super::tracedat::{Fault, Metadata, RecordDecoder, Symbols};
use super::{EventSink, TraceInfo};
use crate::error::{Error, Result};
use crate::event::MAX_CPUS;
use crate::input::Input;
use about::bit;
use linux_perf_data::linux_perf_event_reader::{EventRecord, RawEventRecord, RecordType};
use linux_perf_data::{PerfFile, PerfFileReader, PerfFileRecord, PerfRecordIter};
use lost::Lost;
use preflight::{Layout, Refusal, Section};
use samples::Samples;
use source::Source;
use std::io::Read;

const FORMAT: &str = "perf.data";

/// The kernel records the reader uses; the others (maps, throttling, switches…) are skipped.
const USED: [RecordType; 5] = [
    RecordType::SAMPLE,
    RecordType::COMM,
    RecordType::FORK,
    RecordType::LOST,
    RecordType::LOST_SAMPLES,
];

/// Reads a perf.data file into `sink`.
pub fn read(input: Input, sink: &mut (dyn EventSink + Send)) -> Result<TraceInfo> {
    let name = input.name.clone();
    let mut info = TraceInfo::new(&input.name, input.format, input.compression);
    let source = Source::open(input)?;
    info.bytes = source.len();
    let (layout, formats) = check(&source, &name)?;
    let tracing = source.section(formats).unwrap_or_default();
    describe(&layout, &source, &mut info);
    let reader = source.reader().map_err(|cause| Error::Io {
        path: name.clone(),
        cause,
    })?;
    let PerfFileReader {
        mut perf_file,
        mut record_iter,
    } = PerfFileReader::parse_file(reader).map_err(|e| {
        malformed(
            &name,
            Fault::new(0, format!("reading the event attributes: {e}")),
        )
    })?;
    let kallsyms = kallsyms(&perf_file, &source, &mut info);
    let meta = metadata(&tracing, formats, &kallsyms, &name)?;
    let mut records = Records {
        events: (perf_file.event_attributes().iter())
            .map(|a| a.name().unwrap_or("an unnamed event").to_string())
            .collect(),
        samples: Samples::new(
            RecordDecoder::new(&meta, sink.decode()),
            info.header.nr_cpus,
        ),
        lost: Lost::default(),
        bad: 0,
    };
    records.read(
        &mut perf_file,
        &mut record_iter,
        layout.data,
        &mut info,
        sink,
    );
    records.finish(&mut info);
    Ok(info)
}

fn malformed(path: &str, f: Fault) -> Error {
    Error::Malformed {
        path: path.to_string(),
        format: FORMAT,
        offset: f.offset,
        reason: f.reason,
    }
}

/// The file's layout once the preflight checks pass, and where its tracepoint formats are:
/// a file without them holds no tracepoint samples.
fn check(source: &Source, name: &str) -> Result<(Layout, Section)> {
    let layout =
        match preflight::check(&|s| source.section(s), source.len()) {
            Ok(layout) => layout,
            Err(Refusal::PipeMode) => return Err(Error::Unsupported {
                path: name.to_string(),
                format: "perf.data in pipe mode (`perf record -o -`)",
                hint:
                    "`perf inject -i PIPE.data -o perf.data` rewrites it as a file rtsleuth reads",
            }),
            Err(Refusal::Damaged(f)) => return Err(malformed(name, f)),
        };
    let Some(formats) = layout.feature(bit::TRACING_DATA) else {
        return Err(Error::NotATrace {
            path: name.to_string(),
            why: "a perf.data without tracepoint formats (no HEADER_TRACING_DATA): it holds no tracepoint samples; record them with `perf sched record` or `perf record -e 'sched:*' -e 'irq:*' -e 'timer:*' -a`".into(),
        });
    };
    Ok((layout, formats))
}

/// The recording kernel's symbol table, or none, with a note on what is lost without it.
fn kallsyms(perf_file: &PerfFile, source: &Source, info: &mut TraceInfo) -> Vec<u8> {
    match kernel_symbols::find(kernel_build_id(perf_file).as_deref(), kernel_text(source)) {
        kernel_symbols::Found::Table(text) => text,
        kernel_symbols::Found::Missing(why) => {
            info.notes.push(format!(
                "kernel symbols not found ({why}): callbacks and handlers are shown as addresses, and explain cannot tell a task's own timer (hrtimer_wakeup) from others"
            ));
            Vec::new()
        }
    }
}

/// The tracepoint formats (`tracing`, read from the section `formats`), with the kernel's
/// symbols when they were found. A fault's offset is given in the file, not in the section.
fn metadata<'f>(
    tracing: &'f [u8],
    formats: Section,
    kallsyms: &'f [u8],
    name: &str,
) -> Result<Metadata<'f>> {
    let mut meta = Metadata::parse_perf(tracing).map_err(|f| {
        malformed(
            name,
            Fault::new(
                formats.offset + f.offset,
                format!(
                    "in the tracepoint formats (HEADER_TRACING_DATA): {}",
                    f.reason
                ),
            ),
        )
    })?;
    if !kallsyms.is_empty() {
        meta.symbols = Symbols::new(kallsyms);
    }
    Ok(meta)
}

/// What the kernel's records add up to while they are read in time order.
struct Records<'m> {
    /// The names of the file's events, by attr index.
    events: Vec<String>,
    samples: Samples<'m>,
    lost: Lost,
    /// Records too short for their type.
    bad: u64,
}

impl Records<'_> {
    /// Reads the records to the end of the data section, or to the damage that ends it.
    fn read<R: Read>(
        &mut self,
        perf_file: &mut PerfFile,
        record_iter: &mut PerfRecordIter<R>,
        data: Section,
        info: &mut TraceInfo,
        sink: &mut (dyn EventSink + Send),
    ) {
        loop {
            let record = match record_iter.next_record(perf_file) {
                Ok(Some(r)) => r,
                Ok(None) => break,
                Err(e) => {
                    info.notes.push(format!(
                        "the data section (bytes {} to {}) is damaged ({e}): the records before the damage were read",
                        data.offset,
                        data.offset + data.size
                    ));
                    break;
                }
            };
            let PerfFileRecord::EventRecord { attr_index, record } = record else {
                continue; // perf's own records: rounds, build ids, maps
            };
            self.take(attr_index, record, info, sink);
        }
    }

    /// Takes one kernel record; `attr_index` names its event when it is a sample.
    fn take(
        &mut self,
        attr_index: usize,
        record: RawEventRecord<'_>,
        info: &mut TraceInfo,
        sink: &mut (dyn EventSink + Send),
    ) {
        // The record's body and its 8-byte header (compressed input counts decompressed).
        crate::progress::add_bytes(record.data.len() as u64 + 8);
        // Only what is used is parsed: the crate asserts on some damaged records it is not
        // asked about here (an MMAP2 build id longer than 20 bytes).
        if !USED.contains(&record.record_type) {
            return;
        }
        match record.parse() {
            Ok(EventRecord::Sample(s)) => {
                let event = self.events.get(attr_index).map_or("", String::as_str);
                self.samples.emit(&s, event, info, sink);
            }
            Ok(EventRecord::Comm(c)) => self.samples.threads.comm(c.tid, &c.name.as_slice()),
            Ok(EventRecord::Fork(f)) => self.samples.threads.fork(f.tid, f.ptid),
            Ok(EventRecord::Lost(l)) => {
                let cpu = record.common_data().ok().and_then(|c| c.cpu);
                lost_in_place(&mut self.lost, cpu, l.count, sink);
            }
            Ok(EventRecord::Raw(r)) if r.record_type == RecordType::LOST_SAMPLES => {
                lost_samples(&r, &mut self.lost, sink);
            }
            Ok(_) => {}
            Err(_) => self.bad += 1,
        }
    }

    /// The notes and loss counts, once every record is read.
    fn finish(self, info: &mut TraceInfo) {
        self.samples.finish(&mut info.notes);
        if self.bad > 0 {
            info.notes.push(format!(
                "{} records too short for their type were skipped",
                self.bad
            ));
        }
        info.lost_events = self.lost.total();
        info.lines.lost_markers = self.lost.places;
        info.notes.extend(self.lost.note());
    }
}

/// A loss at its place in the stream. One naming a CPU no kernel has is damaged there: it is
/// taken as a loss on every CPU, which drops more than needed but never state of a false CPU.
fn lost_in_place(lost: &mut Lost, cpu: Option<u32>, count: u64, sink: &mut (dyn EventSink + Send)) {
    lost.in_place += count;
    lost.places += 1;
    sink.lost(cpu.filter(|&c| c < MAX_CPUS), Some(count));
}

/// `PERF_RECORD_LOST_SAMPLES`: `u64 lost`, then the sample id fields.
fn lost_samples(r: &RawEventRecord<'_>, lost: &mut Lost, sink: &mut (dyn EventSink + Send)) {
    let Some(count) = r.data.get(0..8).and_then(|d| {
        let b: [u8; 8] = d.as_slice().as_ref().try_into().ok()?;
        Some(match r.parse_info.endian {
            linux_perf_data::Endianness::LittleEndian => u64::from_le_bytes(b),
            linux_perf_data::Endianness::BigEndian => u64::from_be_bytes(b),
        })
    }) else {
        return;
    };
    match r.timestamp().filter(|&t| t > 0) {
        Some(_) => {
            let cpu = r.common_data().ok().and_then(|c| c.cpu);
            lost_in_place(lost, cpu, count, sink);
        }
        None => lost.totals += count,
    }
}

/// The recording's perf version, kernel release and CPU count, from the header features.
fn describe(layout: &Layout, source: &Source, info: &mut TraceInfo) {
    let e = layout.endian;
    let feature = |b| layout.feature(b).and_then(|s| source.section(s));
    info.header.perf_version = feature(bit::VERSION).and_then(|b| about::string(&b, e));
    info.kernel = feature(bit::OSRELEASE).and_then(|b| about::string(&b, e));
    info.header.nr_cpus = feature(bit::NRCPUS).and_then(|b| about::nr_cpus(&b, e));
    let host = feature(bit::HOSTNAME).and_then(|b| about::string(&b, e));
    if let (Some(host), Some(release)) = (host, &info.kernel) {
        // What `uname -n -r` would say; the rest of `uname -a` is not in the file.
        info.uname = Some(format!("Linux {host} {release}"));
    }
}

/// The kernel's build id in hex, from the `HEADER_BUILD_ID` feature.
fn kernel_build_id(perf_file: &linux_perf_data::PerfFile) -> Option<String> {
    let ids = perf_file.build_ids().ok()?;
    let info = ids.get(&linux_perf_data::DsoKey::Kernel)?;
    Some(info.build_id.iter().map(|b| format!("{b:02x}")).collect())
}

/// Where the kernel's `_text` was during the recording: the offset of perf's
/// `[kernel.kallsyms]_text` map, one of the first records (perf synthesizes it at the start).
fn kernel_text(source: &Source) -> Option<u64> {
    let reader = source.reader().ok()?;
    let PerfFileReader {
        mut perf_file,
        mut record_iter,
    } = PerfFileReader::parse_file(reader).ok()?;
    for _ in 0..4096 {
        if let PerfFileRecord::EventRecord { record, .. } =
            record_iter.next_record(&mut perf_file).ok()??
        {
            if record.record_type != RecordType::MMAP {
                continue;
            }
            if let Ok(EventRecord::Mmap(m)) = record.parse() {
                if m.path.as_slice().starts_with(b"[kernel.kallsyms]") {
                    return Some(m.page_offset);
                }
            }
        }
    }
    None
}
