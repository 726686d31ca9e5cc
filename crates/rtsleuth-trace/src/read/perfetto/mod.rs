//! The Perfetto protobuf reader: the ftrace data of a `.perfetto-trace` / `.pftrace`.
//!
//! The trace is read one `TracePacket` at a time (`packets`). Ftrace bundles become events
//! (`bundle`, with `CompactSched` columns unpacked by `compact`); process trees name tasks
//! (`tasks`, found first by `prescan` in a plain file); interned kernel symbols name
//! functions (`symbols`); ring-buffer stats count lost events (`ftrace_stats`). Bundles of different
//! CPUs and data sources interleave, so events pass through a bounded merge (`order`) before
//! `emit` names, decodes and hands them to the sink. Memory is bounded by the merge window,
//! not by the trace.

mod ahead;
mod bundle;
mod checked_bundle;
mod compact;
mod emit;
mod ftrace_stats;
mod kind;
pub mod messages;
pub use kind::softirq_action;
mod order;
mod packets;
mod payload;
mod prescan;
mod skips;
mod symbols;
pub mod tasks;
#[cfg(test)]
mod tests;
mod unpack;

use super::{EventSink, TraceInfo};
use crate::error::{Error, Result};
use crate::event::MAX_CPUS;
use crate::input::{describe_read_error, Input};
use ahead::Ahead;
use bundle::Record;
use emit::Emitter;
use messages::{Data, FtraceEventBundle, TracePacket};
use order::Limits;
use packets::{Packets, Step};
use rustc_hash::FxHashSet as HashSet;
use std::collections::BTreeSet;
use unpack::Unpacked;

const FORMAT: &str = "Perfetto protobuf";

/// How the merge is bounded (see [`order`]): nothing goes out before 65536 events have
/// arrived, at most 262144 wait (a few tens of megabytes), and a CPU silent for 5 s of its
/// data source's time is idle.
const WINDOW: Limits = Limits {
    warmup: 1 << 16,
    cap: 1 << 18,
    idle: 5_000_000_000,
};

/// Reads a Perfetto trace into `sink`.
pub fn read(input: Input, sink: &mut (dyn EventSink + Send)) -> Result<TraceInfo> {
    read_with(input, sink, WINDOW)
}

fn read_with(input: Input, sink: &mut (dyn EventSink + Send), window: Limits) -> Result<TraceInfo> {
    let mut info = TraceInfo::new(&input.name, input.format, input.compression);
    let mut reader = Reader::new(&input.name, sink, window);
    // Perfetto's central buffer is a ring by default and each CPU's data reaches it on its own
    // schedule, so each CPU's history begins at its first event (Perfetto's trace processor
    // crops its ftrace data to the same common window). A file says which CPUs have events.
    match &input.file {
        Some(file) => {
            let skim = prescan::skim(file);
            for (ts, tree) in skim.trees {
                reader.emitter.tree(ts, tree);
            }
            reader.trees_known = true;
            skim.cpus
                .into_iter()
                .for_each(|c| sink.history_begins(Some(c)));
        }
        None => sink.history_begins(None),
    }
    std::thread::scope(|scope| {
        let mut ahead = Ahead::start(scope, Packets::<_, TracePacket>::new(input.reader));
        reader.read_packets(&mut ahead, sink, &mut info)?;
        let mut packets = ahead.finish();
        info.bytes = packets.offset();
        if let Some(damage) = packets.damage() {
            if reader.packets == 0 {
                return Err(damage.into_error());
            }
            info.notes.push(damage.note(&format!(
                "the first {} bytes of the trace ({} packets)",
                info.bytes, reader.packets
            )));
        }
        reader.finish(sink, info)
    })
}

/// The trace clock a bundle's `ftrace_clock` names (Perfetto's `FtraceClock`); every one
/// counts nanoseconds. `None` for FTRACE_CLOCK_UNKNOWN and numbers Perfetto does not define.
fn ftrace_clock_name(clock: i32) -> Option<&'static str> {
    match clock {
        2 => Some("global"),
        3 => Some("local"),
        4 => Some("mono_raw"),
        _ => None,
    }
}

fn malformed(path: &str, offset: u64, reason: String) -> Error {
    Error::Malformed {
        path: path.to_string(),
        format: FORMAT,
        offset,
        reason,
    }
}

/// Everything learnt while going through the packets.
struct Reader {
    path: String,
    merger: order::Merger<Record>,
    emitter: Emitter,
    /// The process trees were found before reading ([`prescan`]); skip them when met again.
    trees_known: bool,
    counters: ftrace_stats::RingCounters,
    skips: skips::Skips,
    sequences: HashSet<u32>,
    packets: u64,
    unknown_events: u64,
    compressed: u64,
    clocks: BTreeSet<i32>,
    /// `FtraceEventBundle.error`s: how many, and the first (CPU, page time, status).
    parse_errors: u64,
    first_parse_error: Option<(u32, u64, i32)>,
    /// `FtraceEventBundle.broken_abi_trace_page`s.
    broken_pages: u64,
    /// Events past [`checked_bundle::MAX_BUNDLE_EVENTS`] of their bundle, and the first such
    /// bundle's packet offset.
    over_cap: (u64, Option<u64>),
}

impl Reader {
    fn new(path: &str, sink: &(dyn EventSink + Send), window: Limits) -> Self {
        Reader {
            path: path.to_string(),
            merger: order::Merger::new(window),
            emitter: Emitter::new(sink.decode()),
            trees_known: false,
            counters: ftrace_stats::RingCounters::default(),
            skips: skips::Skips::default(),
            sequences: HashSet::default(),
            packets: 0,
            unknown_events: 0,
            compressed: 0,
            clocks: BTreeSet::new(),
            parse_errors: 0,
            first_parse_error: None,
            broken_pages: 0,
            over_cap: (0, None),
        }
    }

    /// Takes every packet in order until the end of the stream or the packet it is cut in.
    fn read_packets<'s, S: packets::Source + Send + 's>(
        &mut self,
        ahead: &mut Ahead<'s, S>,
        sink: &mut (dyn EventSink + Send),
        info: &mut TraceInfo,
    ) -> Result<()> {
        loop {
            match ahead.next() {
                Ok(Step::Packet { offset, packet }) => {
                    self.packet(offset, packet, sink, info);
                    let spent = self.merger.spent();
                    if !spent.is_empty() {
                        ahead.give_back(spent);
                    }
                }
                Ok(Step::End) => return Ok(()),
                Ok(Step::Skipped {
                    offset,
                    len,
                    damage,
                    whole_packet,
                    resumed,
                }) => match whole_packet {
                    true => self.skips.packet(offset, damage),
                    false => self.skips.span(offset, len, damage, resumed),
                },
                Ok(Step::Truncated { offset, have, want }) => {
                    let want = want.map_or("its length".to_string(), |w| format!("{w} bytes"));
                    info.notes.push(format!(
                        "the trace ends inside the TracePacket at byte {offset} ({have} bytes of {want}): it was cut short; the packets before it were read"
                    ));
                    return Ok(());
                }
                Err(e) => return Err(describe_read_error(&self.path, e)),
            }
        }
    }

    fn packet(
        &mut self,
        offset: u64,
        Unpacked { packet, events }: Unpacked,
        sink: &mut (dyn EventSink + Send),
        info: &mut TraceInfo,
    ) {
        self.packets += 1;
        let seq = packet.trusted_packet_sequence_id.unwrap_or(0);
        // The first packet of every sequence says "dropped" too; only a later one means loss.
        let first_of_sequence = self.sequences.insert(seq);
        let dropped = packet.previous_packet_dropped.unwrap_or(0) != 0 && !first_of_sequence;
        match packet.data {
            Some(Data::FtraceEvents(b)) => {
                if let Some(field) = b.undefined_field {
                    self.skips.undefined_field(offset, field);
                }
                if b.over_cap > 0 {
                    self.over_cap.0 += b.over_cap;
                    self.over_cap.1.get_or_insert(offset);
                }
                self.bundle(seq, (b.bundle, events), dropped, offset)
            }
            Some(Data::ProcessTree(t)) if !self.trees_known => {
                self.emitter.tree(packet.timestamp, t)
            }
            Some(Data::ProcessTree(_)) => {}
            Some(Data::FtraceStats(s)) => self.counters.add(&s),
            Some(Data::SystemInfo(s)) => {
                let release = s.utsname.and_then(|u| u.release);
                info.kernel = info.kernel.take().or(release);
            }
            Some(Data::CompressedPackets(_)) => self.compressed += 1,
            None => {}
        }
        while let Some(r) = self.merger.pop_ready() {
            self.emitter.emit(r, sink, info);
        }
    }

    /// Hands the bundle's events, unpacked on the decoding thread, to the merge. A bundle that
    /// contradicts itself is skipped with its packet: its events cannot be trusted, the other
    /// packets' can.
    fn bundle(
        &mut self,
        seq: u32,
        (b, events): (FtraceEventBundle, Option<unpack::Events>),
        dropped: bool,
        offset: u64,
    ) {
        let cpu = b.cpu.unwrap_or(0);
        if cpu >= MAX_CPUS {
            let why = format_args!(
                "FtraceEventBundle of CPU {cpu}, beyond the {MAX_CPUS} a kernel can have"
            );
            return self.skips.packet(offset, why);
        }
        let lost = b.lost_events == Some(true) || dropped;
        if let Some(clock) = b.ftrace_clock.filter(|&c| c != 0) {
            self.clocks.insert(clock);
        }
        if let Some(e) = b.error.first() {
            let first = (cpu, e.timestamp.unwrap_or(0), e.status.unwrap_or(0));
            self.first_parse_error.get_or_insert(first);
        }
        self.parse_errors += b.error.len() as u64;
        self.broken_pages += u64::from(b.broken_abi_trace_page.is_some());
        let expanded = match events {
            Some(Ok(expanded)) => expanded,
            Some(Err(e)) => {
                return self
                    .skips
                    .packet(offset, format_args!("FtraceEventBundle: {e}"))
            }
            // Only a CPU beyond MAX_CPUS is left packed, and that was skipped above.
            None => return,
        };
        self.unknown_events += expanded.unknown;
        if lost {
            // Before the bundle's first event; an empty bundle's loss is where its CPU was.
            let at = expanded
                .times
                .first()
                .copied()
                .or_else(|| self.merger.last_ts(seq, cpu))
                .unwrap_or(0);
            self.merger.push(seq, cpu, at, Record::Lost);
        }
        self.merger
            .push_run(seq, cpu, expanded.events, expanded.times);
    }

    fn finish(
        mut self,
        sink: &mut (dyn EventSink + Send),
        mut info: TraceInfo,
    ) -> Result<TraceInfo> {
        while let Some(r) = self.merger.pop_any() {
            self.emitter.emit(r, sink, &mut info);
        }
        for (cpu, n) in self.counters.lost() {
            info.lost_events += n;
            sink.lost(Some(cpu), Some(n));
        }
        info.header.nr_cpus = self.counters.cpus();
        info.lines.total = info.events;
        info.lines.events = info.events;
        self.notes(&mut info);
        if let (0, Some((offset, reason))) = (self.packets, self.skips.first()) {
            return Err(malformed(
                &self.path,
                offset,
                format!("no TracePacket decodes (the first damage: {reason})"),
            ));
        }
        if info.events == 0 {
            return Err(Error::NotATrace {
                path: info.source,
                why: format!(
                    "this Perfetto trace ({} packets) holds no ftrace events; record it with the linux.ftrace data source (sched/sched_switch, sched/sched_waking, …){}",
                    self.packets,
                    info.notes.iter().map(|n| format!("; {n}")).collect::<String>()
                ),
            });
        }
        Ok(info)
    }

    /// What the user should know about how complete the events are.
    fn notes(&self, info: &mut TraceInfo) {
        self.skips.notes(&mut info.notes);
        if !self.emitter.lost_markers.is_empty() {
            let per_cpu: Vec<String> = self
                .emitter
                .lost_markers
                .iter()
                .map(|(cpu, n)| format!("CPU {cpu} {n}x"))
                .collect();
            info.notes.push(format!(
                "the kernel ring buffer lost events ({}; how many is not recorded): intervals spanning them are not measured",
                per_cpu.join(", ")
            ));
        }
        let lost = self.counters.lost();
        if !lost.is_empty() {
            let per_cpu: Vec<String> = lost.iter().map(|(c, n)| format!("CPU {c}: {n}")).collect();
            info.notes.push(format!(
                "ftrace_stats: the kernel overwrote or dropped {} events before Perfetto read them ({})",
                lost.iter().map(|(_, n)| n).sum::<u64>(),
                per_cpu.join(", ")
            ));
        }
        if let Some((cpu, ts, status)) = self.first_parse_error {
            info.notes.push(format!(
                "Perfetto could not parse the kernel ring buffer in {} place(s) (first: CPU {cpu}, page of {}.{:09} s, FtraceParseStatus {status}) and skipped the rest of each page: events there are missing",
                self.parse_errors,
                ts / 1_000_000_000,
                ts % 1_000_000_000
            ));
        }
        if self.broken_pages > 0 {
            let n = self.broken_pages;
            let (s, are) = if n == 1 { ("", "is") } else { ("s", "are") };
            info.notes.push(format!(
                "{n} kernel ring-buffer page{s} Perfetto could not parse {are} in the trace only as raw bytes (broken_abi_trace_page): their events are missing"
            ));
        }
        if let (n, Some(at)) = self.over_cap {
            info.notes.push(format!(
                "{n} ftrace events were skipped from bundles holding more than {} (first: the packet at byte {at}): no Perfetto writes bundles that large, so the trace is damaged there",
                checked_bundle::MAX_BUNDLE_EVENTS
            ));
        }
        if self.unknown_events > 0 {
            info.notes.push(format!(
                "{} ftrace events of kinds rtsleuth does not read from Perfetto traces were skipped",
                self.unknown_events
            ));
        }
        if self.compressed > 0 {
            info.notes.push(format!(
                "{} packets hold compressed packets, which rtsleuth does not read yet: decompress the trace first (`traceconv decompress_packets IN OUT`)",
                self.compressed
            ));
        }
        for &clock in &self.clocks {
            let name = ftrace_clock_name(clock).unwrap_or("an unknown clock");
            info.notes.push(format!(
                "the ftrace clock was {name}, not boot: timestamps are on that clock"
            ));
        }
        // Bundles name their clock only when it is not boot (FTRACE_CLOCK_UNSPECIFIED).
        info.clock = match self.clocks.first() {
            Some(&c) => ftrace_clock_name(c).map(str::to_string),
            None => Some("boot".into()),
        };
    }
}
