//! The trace-cmd `trace.dat` reader, versions 6 and 7, written from trace-cmd's file-format
//! documentation (where the documents and trace-cmd disagree, as on v7 section sizes being
//! 8 bytes and the BUFFER option carrying a page size, the files trace-cmd writes win).
//!
//! One module per on-disk structure: [`file_header`], [`options`], [`metadata`] (the
//! sections), [`event_format`], [`kallsyms`], [`printk`], [`cmdlines`]; the pages themselves
//! are decoded by [`crate::ring_buffer`]. Each CPU's records are already in time order, so a
//! k-way merge over one cursor per CPU ([`merge`]) gives the whole trace in order; it is cut
//! into batches that worker threads decode while the analysis takes earlier ones
//! ([`pipeline`]).
//!
//! Records become the same [`Event`]s the text reader makes. The scheduler events are typed
//! straight from their fields; the others are printed as text (as the kernel or
//! `trace-cmd report -R` prints them) and typed by the text reader's decoder, so every
//! analysis works unchanged. The text payload is printed only for events the sink wants typed
//! that lack a direct typing but have a text one (or fields the event model reads), or for
//! every event when the sink wants everything.

mod batch;
mod board;
mod bprint;
mod bytes;
mod chunk_feed;
mod cmdlines;
mod codec;
mod comms;
mod cpu_stream;
mod decode;
mod event_format;
mod fields;
mod file_header;
mod format_table;
mod kallsyms;
mod latency_text;
mod merge;
mod metadata;
mod options;
mod pipeline;
mod printf;
mod printk;
mod render;
mod timer_typed;
mod typed;

pub use bytes::Endian;
/// For the perf.data reader, whose tracepoint samples are these same raw records.
pub(crate) use bytes::Fault;
pub(crate) use decode::{RecordDecoder, Task};
/// For writers of the format (`rtsleuth record`): the file magic and the option ids.
pub use file_header::MAGIC;
pub(crate) use kallsyms::Symbols;
pub(crate) use metadata::Metadata;
pub use options::id as option_id;

use super::ftrace_text;
use super::{EventSink, TraceInfo};
use crate::error::{Error, Result};
use crate::input::{describe_read_error, Damaged, Format, Input};
use cpu_stream::CpuStream;
use latency_text::TextStream;
use merge::{Clock, Merger};
use options::Tsc2Nsec;
use pipeline::Threads;
use std::io::Read;

const FORMAT: &str = "trace-cmd trace.dat";

/// How many damaged-page messages are kept (the rest are counted).
const MAX_FAULT_NOTES: usize = 5;

/// Reads a trace.dat into `sink`.
pub fn read(input: Input, sink: &mut (dyn EventSink + Send)) -> Result<TraceInfo> {
    read_with(input, sink, Threads::for_this_machine())
}

/// [`read`] on `threads`.
fn read_with(
    input: Input,
    sink: &mut (dyn EventSink + Send),
    threads: Threads,
) -> Result<TraceInfo> {
    let name = input.name.clone();
    let mut info = TraceInfo::new(&input.name, input.format, input.compression);
    let (bytes, damage) = load(input)?;
    info.bytes = bytes.len() as u64;
    if let Some(damage) = damage {
        // Read as a file cut where the damage is: the checks below say what is missing.
        info.notes
            .push(damage.note(&format!("the first {} bytes of the trace.dat", bytes.len())));
    }
    let malformed = |f: Fault| Error::Malformed {
        path: name.clone(),
        format: FORMAT,
        offset: f.offset,
        reason: f.reason,
    };
    let mut meta = Metadata::parse(&bytes).map_err(malformed)?;
    info.header.trace_cmd_version = Some(meta.header.version);
    info.header.nr_cpus = meta.options.cpu_count.or(Some(meta.cpus.len() as u32));
    info.uname = meta.options.uname.clone();
    if let Some(place) = meta.latency_text.clone() {
        // Latency-tracer files store the tracer's text output as it was.
        let (codec, endian, notes, clock) = (
            meta.header.codec,
            meta.header.endian,
            std::mem::take(&mut meta.notes),
            meta.clock.take(),
        );
        drop(meta);
        let stream = TextStream::new(bytes, place, codec, endian);
        let text = Input {
            name: name.clone(),
            format: Format::FtraceText,
            compression: None,
            reader: Box::new(stream),
            file: None,
        };
        let mut text_info = ftrace_text::read(text, sink)?;
        (text_info.format, text_info.compression) = (info.format, info.compression);
        text_info.bytes = info.bytes;
        text_info.clock = clock;
        text_info.notes.extend(info.notes);
        text_info.notes.extend(notes);
        return Ok(text_info);
    }
    info.notes.extend(meta.notes.iter().cloned());
    info.clock = meta.clock.clone();
    if counts_not_time(meta.clock.as_deref(), tsc2nsec(&meta).is_some()) {
        info.timestamps = ftrace_text::TimestampUnit::Counter;
    }
    // The streams live inside the scope: if anything unwinds, dropping them closes the chunk
    // feeds, so their threads end and the scope can join them instead of waiting forever.
    let faults: Vec<String> = std::thread::scope(|scope| {
        let mut streams = Vec::with_capacity(meta.cpus.len());
        let file = (&bytes[..], matches!(bytes, Bytes::Mapped(_)));
        for cpu in &meta.cpus {
            let (codec, layout, e) = (meta.header.codec, meta.layout, meta.header.endian);
            match CpuStream::new(scope, file, *cpu, codec, layout, e) {
                Ok(s) => streams.push(s),
                // A CPU whose data is cut still leaves the others readable.
                Err(f) => info.notes.push(note(&f)),
            }
        }
        for cpu in meta.options.overrun_cpus() {
            sink.history_begins(Some(cpu));
        }
        let clock = Clock {
            tsc: tsc2nsec(&meta),
            offset: meta.options.ts_offset,
        };
        let merger = Merger::new(streams, clock);
        let faults = pipeline::run(scope, &meta, merger, threads, &mut info, sink);
        faults.iter().map(note).collect()
    });
    let damaged = faults.len();
    info.notes.extend(faults.into_iter().take(MAX_FAULT_NOTES));
    if damaged > MAX_FAULT_NOTES {
        info.notes.push(format!(
            "{} more damaged pages were skipped",
            damaged - MAX_FAULT_NOTES
        ));
    }
    stats_losses(&meta, &mut info);
    Ok(info)
}

fn note(f: &Fault) -> String {
    format!("at byte {}: {}", f.offset, f.reason)
}

/// The whole file in memory: mapped when it is a plain file, read otherwise (compressed or
/// piped input).
enum Bytes {
    Mapped(memmap2::Mmap),
    Owned(Vec<u8>),
}

impl std::ops::Deref for Bytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            Bytes::Mapped(m) => m,
            Bytes::Owned(v) => v,
        }
    }
}

/// A compressed file damaged after its start gives the bytes before the damage, and the
/// damage.
fn load(mut input: Input) -> Result<(Bytes, Option<Damaged>)> {
    if let Some(f) = &input.file {
        // SAFETY: the map is read-only and private to this process; as with ripgrep, a file
        // truncated by someone else while we read it is the one hazard accepted.
        if let Ok(m) = unsafe { memmap2::Mmap::map(f) } {
            return Ok((Bytes::Mapped(m), None));
        }
    }
    let mut v = Vec::new();
    match input.reader.read_to_end(&mut v) {
        Ok(_) => Ok((Bytes::Owned(v), None)),
        // `read_to_end` keeps what it read before the error.
        Err(e) => match Damaged::from_io(e) {
            Ok(damage) if !v.is_empty() => Ok((Bytes::Owned(v), Some(damage))),
            Ok(damage) => Err(damage.into_error()),
            Err(e) => Err(describe_read_error(&input.name, e)),
        },
    }
}

/// The file's TSC conversion, which applies to the `x86-tsc` clock only.
fn tsc2nsec(meta: &Metadata) -> Option<Tsc2Nsec> {
    meta.options
        .tsc2nsec
        .filter(|_| meta.clock.as_deref() == Some("x86-tsc"))
}

/// Whether timestamps on `clock` stay raw counts: `counter` always, `x86-tsc` unless the file
/// converts it (`converted`); every other clock counts nanoseconds.
fn counts_not_time(clock: Option<&str>, converted: bool) -> bool {
    match clock {
        Some("counter") => true,
        Some("x86-tsc") => !converted,
        _ => false,
    }
}

/// Overruns the per-CPU statistics recorded at extraction: events the buffer overwrote before
/// they were read, which no page flags when the oldest pages were simply reused.
fn stats_losses(meta: &Metadata, info: &mut TraceInfo) {
    let lost: u64 = meta.options.lost_per_cpu().iter().map(|&(_, n)| n).sum();
    if lost > 0 && info.lost_events == 0 {
        info.notes.push(format!(
            "the ring buffer overwrote or dropped {lost} events before extraction (per-CPU stats in the file)"
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::{counts_not_time, read_with, Threads};
    use crate::event::Event;
    use crate::input::Input;
    use crate::read::{Decode, EventSink};
    use crate::testing::finishes;
    use std::time::Duration;

    #[test]
    fn only_unconverted_counters_are_counts() {
        assert!(counts_not_time(Some("counter"), false));
        assert!(counts_not_time(Some("counter"), true));
        assert!(counts_not_time(Some("x86-tsc"), false));
        assert!(!counts_not_time(Some("x86-tsc"), true));
        for clock in [
            Some("local"),
            Some("global"),
            Some("mono"),
            Some("boot"),
            None,
        ] {
            assert!(!counts_not_time(clock, false), "{clock:?}");
        }
    }

    /// Every event, loss and history start as a line, with the decoding a sink asks for.
    struct Transcript(Decode, Vec<String>);

    impl EventSink for Transcript {
        fn event(&mut self, ev: &Event<'_>) {
            self.1.push(format!("{ev:?}"));
        }
        fn decode(&self) -> Decode {
            self.0
        }
        fn lost(&mut self, cpu: Option<u32>, count: Option<u64>) {
            self.1.push(format!("lost {cpu:?} {count:?}"));
        }
        fn history_begins(&mut self, cpu: Option<u32>) {
            self.1.push(format!("history {cpu:?}"));
        }
    }

    /// One and three workers, with their usual bound on the batches in flight and with the
    /// smallest, so that threads also wait for each other on the fixtures' few batches.
    const THREADED: [Threads; 4] = [
        Threads::with(1),
        Threads {
            in_flight: 3,
            ..Threads::with(1)
        },
        Threads::with(3),
        Threads {
            in_flight: 3,
            ..Threads::with(3)
        },
    ];

    /// Decoding on worker threads hands on exactly what decoding in line does, in the same
    /// order: uncompressed and zstd files, one with lost events, one whose tasks are named
    /// only by the switches to them, for each kind of decoding.
    #[test]
    fn worker_threads_change_nothing() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/fixtures");
        let files = [
            "tracedat/v6.dat",
            "tracedat/v7-zstd.dat",
            "tracedat/lost.dat",
            "tracedat/trace.dat",
            "recorded/wq/trace.dat",
        ];
        let mut losses = 0;
        for file in files {
            let path = format!("{dir}/{file}");
            for decode in [Decode::Everything, Decode::Typed, Decode::SCHED] {
                let run = |threads| {
                    let mut t = Transcript(decode, Vec::new());
                    let info = read_with(Input::open(&path).unwrap(), &mut t, threads).unwrap();
                    (t.1, format!("{info:?}"))
                };
                let (inline, info) = run(Threads::with(0));
                assert!(inline.len() > 100, "{file}: {} records", inline.len());
                losses += inline.iter().filter(|l| l.starts_with("lost")).count();
                for threads in THREADED {
                    let (threaded, threaded_info) = run(threads);
                    assert_eq!(
                        inline.len(),
                        threaded.len(),
                        "{file} {decode:?} {threads:?}"
                    );
                    if let Some(i) = (0..inline.len()).find(|&i| inline[i] != threaded[i]) {
                        panic!(
                            "{file} {decode:?} {threads:?}: record {i} differs:\n{}\n{}",
                            inline[i], threaded[i]
                        );
                    }
                    assert_eq!(info, threaded_info, "{file} {decode:?} {threads:?}");
                }
            }
        }
        assert!(losses > 0, "no file had a lost-events marker");
    }

    /// Panics at its 50th event, as a broken analysis would.
    struct Fails(usize);

    impl EventSink for Fails {
        fn event(&mut self, _: &Event<'_>) {
            self.0 += 1;
            assert!(self.0 < 50, "the analysis failed");
        }
    }

    /// An analysis that panics ends the read with its panic: the merging, decompressing and
    /// decoding threads stop instead of waiting for it forever.
    #[test]
    fn a_panicking_analysis_ends_the_read() {
        // 20 009 events: five batches, more than the three in flight.
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../tests/fixtures/tracedat/v6.dat"
        );
        for threads in [Threads::with(0)].into_iter().chain(THREADED) {
            let read = finishes(Duration::from_secs(60), move || {
                read_with(Input::open(path).unwrap(), &mut Fails(0), threads).map(drop)
            });
            assert!(read.is_err(), "{threads:?}");
        }
    }
}
