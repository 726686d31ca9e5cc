//! The Perfetto protobuf reader on real traces and on damaged input.
//!
//! The three Android traces in ../shared/fixtures/realworld/ms-perf-tools-linux-android are
//! compared exactly with what `tests/fixtures/perfetto/independent_decode.py` (a standard-
//! library protobuf walker sharing no code with the reader) found in them: counts per event
//! name and per CPU, first and last timestamp, the first 200 events in trace order, and digests
//! over every sched_switch / sched_waking / sched_wakeup in trace order. The digests are built
//! here from the typed decoding and the rendered payload, which are checked against each other
//! on every event.
//!
//! When the shared folder is absent the fixture tests print `skipped: ...` and pass, unless
//! `CI` is set. The damaged-input tests build their traces by hand and always run.

mod shared_fixtures;

use rtsleuth_trace::event::{Event, EventKind, TaskState};
use rtsleuth_trace::input::{Format, Input};
use rtsleuth_trace::read::{self, Decode, EventSink, TraceInfo};
use rtsleuth_trace::Error;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

const EXPECTED: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/fixtures/perfetto");

fn fixture(name: &str) -> Option<PathBuf> {
    shared_fixtures::realworld(&format!(
        "ms-perf-tools-linux-android/TestData/Perfetto/{name}"
    ))
}

/// 64-bit FNV-1a, the digest the Python decoder writes.
#[derive(Clone, Copy)]
struct Fnv(u64);

impl Fnv {
    fn new() -> Self {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
    fn line(&mut self, s: &str) {
        for b in s.bytes().chain([b'\n']) {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
    }
}

struct Digest {
    count: u64,
    fnv: Fnv,
    first: Vec<String>,
}

/// What the independent decoder reports, gathered from the events the reader hands out.
struct Collect {
    decode: Decode,
    by_name: BTreeMap<String, u64>,
    by_cpu: BTreeMap<u32, u64>,
    first: Vec<Value>,
    digests: BTreeMap<&'static str, Digest>,
    lost_markers: u64,
    /// (ts, comm, payload) of the first event of each name, for spot checks.
    samples: BTreeMap<String, (u64, i32, String, String)>,
    /// Events given a kind with no payload text (the text is promised to `Everything` only).
    typed_without_text: u64,
}

impl Collect {
    fn new(decode: Decode) -> Self {
        let digests = ["sched_switch", "sched_waking", "sched_wakeup"]
            .into_iter()
            .map(|n| {
                (
                    n,
                    Digest {
                        count: 0,
                        fnv: Fnv::new(),
                        first: Vec::new(),
                    },
                )
            })
            .collect();
        Collect {
            decode,
            by_name: BTreeMap::new(),
            by_cpu: BTreeMap::new(),
            first: Vec::new(),
            digests,
            lost_markers: 0,
            samples: BTreeMap::new(),
            typed_without_text: 0,
        }
    }

    fn digest(&mut self, name: &'static str, line: String) {
        let d = self.digests.get_mut(name).unwrap();
        d.count += 1;
        d.fnv.line(&line);
        if d.first.len() < 3 {
            d.first.push(line);
        }
    }

    fn report(&self, info: &TraceInfo) -> Value {
        let digests: serde_json::Map<String, Value> = self
            .digests
            .iter()
            .map(|(n, d)| {
                let v = json!({"count": d.count, "fnv1a64": format!("{:016x}", d.fnv.0), "first": d.first});
                (n.to_string(), v)
            })
            .collect();
        json!({
            "events": info.events,
            "unknown_events": 0,
            "first_ts": info.first_ts,
            "last_ts": info.last_ts,
            "by_name": self.by_name,
            "by_cpu": self.by_cpu.iter().map(|(c, n)| (c.to_string(), *n)).collect::<BTreeMap<_, _>>(),
            "lost_markers": self.lost_markers,
            "first_events": self.first,
            "digests": digests,
        })
    }
}

impl EventSink for Collect {
    fn event(&mut self, e: &Event<'_>) {
        *self.by_name.entry(e.name.to_string()).or_default() += 1;
        *self.by_cpu.entry(e.cpu).or_default() += 1;
        if self.first.len() < 200 {
            self.first.push(json!([e.ts, e.cpu, e.pid, e.name]));
        }
        self.samples
            .entry(e.name.to_string())
            .or_insert_with(|| (e.ts, e.pid, e.comm.to_string(), e.payload.to_string()));
        assert!(!e.flags.known, "Perfetto has no flag column: {e:?}");
        if self.decode != Decode::Everything && e.payload.is_empty() {
            // Typed from its fields, with no text to check the kind against.
            self.typed_without_text += u64::from(!matches!(e.kind, EventKind::Other));
            return;
        }
        let f = e.fields();
        match e.kind {
            EventKind::SchedSwitch {
                prev_comm,
                prev_pid,
                prev_state,
                next_pid,
                next_prio,
                ..
            } => {
                let letters = f
                    .get("prev_state")
                    .unwrap()
                    .trim_end_matches("==>")
                    .trim_end();
                assert_eq!(TaskState::parse(letters), prev_state, "{e:?}");
                assert_eq!(f.get_i64("prev_pid"), Some(i64::from(prev_pid)), "{e:?}");
                assert_eq!(f.get_i64("next_pid"), Some(i64::from(next_pid)), "{e:?}");
                assert_eq!(e.pid, prev_pid, "a switch runs in the task it switches out");
                if prev_pid != 0 && !prev_comm.is_empty() {
                    assert_eq!(e.comm, prev_comm, "the running task is named by the switch");
                }
                let next_prio = next_prio.map_or("?".into(), |p| p.to_string());
                let line = format!(
                    "{} {} {prev_pid} {next_pid} {letters} {next_prio}",
                    e.ts, e.cpu
                );
                self.digest("sched_switch", line);
            }
            EventKind::SchedWaking {
                pid,
                prio,
                target_cpu,
                ..
            }
            | EventKind::SchedWakeup {
                pid,
                prio,
                target_cpu,
                ..
            } => {
                assert_eq!(f.get_i64("pid"), Some(i64::from(pid)), "{e:?}");
                let target = target_cpu.map_or(-1, i64::from);
                let line = format!("{} {} {pid} {prio} {target}", e.ts, e.cpu);
                let name = if e.name == "sched_waking" {
                    "sched_waking"
                } else {
                    "sched_wakeup"
                };
                self.digest(name, line);
            }
            EventKind::Other if !self.decode.wants(e.name) => {
                assert_eq!(e.payload, "", "an event the sink did not ask for: {e:?}");
            }
            _ => {}
        }
    }

    fn decode(&self) -> Decode {
        self.decode
    }

    fn lost(&mut self, _cpu: Option<u32>, count: Option<u64>) {
        if count.is_none() {
            self.lost_markers += 1;
        }
    }
}

fn read_path(path: &Path, decode: Decode) -> (Collect, TraceInfo) {
    let input = Input::open(path.to_str().unwrap()).unwrap();
    assert_eq!(input.format, Format::Perfetto, "{}", path.display());
    let mut sink = Collect::new(decode);
    let info = read::read(input, &mut sink).unwrap();
    (sink, info)
}

/// Reads `name` and compares it with its expected JSON, key by key for readable failures.
fn check(name: &str) -> Option<(Collect, TraceInfo)> {
    let path = fixture(name)?;
    let (sink, info) = read_path(&path, Decode::Everything);
    let want: Value = serde_json::from_str(
        &std::fs::read_to_string(Path::new(EXPECTED).join(format!("{name}.expected.json")))
            .unwrap(),
    )
    .unwrap();
    let got = sink.report(&info);
    for (key, value) in got.as_object().unwrap() {
        assert_eq!(value, &want[key], "{name}: {key}");
    }
    assert_eq!(info.out_of_order, 0, "{name}");
    assert_eq!(info.format, Format::Perfetto);
    assert!(info.notes.is_empty(), "{name}: {:?}", info.notes);
    Some((sink, info))
}

#[test]
fn android12_cpuschedstack() {
    let Some((sink, info)) = check("perfetto_android12_cpuschedstack.pftrace") else {
        return;
    };
    assert_eq!(info.events, 64287);
    assert_eq!(info.cpus, [0, 1, 2, 3]);
    assert_eq!(info.header.nr_cpus, Some(4));
    assert_eq!(info.bytes, 3581915);
    // The first switch: `1795799213600 3 446 459 R+ 130` in the independent decoder's words.
    let (ts, pid, comm, payload) = &sink.samples["sched_switch"];
    assert_eq!(
        (*ts, *pid, comm.as_str()),
        (1795799213600, 446, "traced_probes")
    );
    assert_eq!(
        payload,
        "prev_comm=traced_probes prev_pid=446 prev_prio=120 prev_state=R+ ==> next_comm=logd.reader.per next_pid=459 next_prio=130"
    );
}

#[test]
fn cpu_sampling_not_scoped() {
    let Some((sink, info)) = check("perfetto_trace_cpu_sampling_not_scoped.pftrace") else {
        return;
    };
    assert_eq!(info.events, 63915);
    assert_eq!((info.cpus.len(), info.header.nr_cpus), (4, Some(4)));
    let (_, _, _, payload) = &sink.samples["cpu_idle"];
    assert!(
        payload.starts_with("state=") && payload.contains(" cpu_id="),
        "{payload}"
    );
}

#[test]
fn test_trace_two_ftrace_sequences() {
    // Two ftrace data sources (sched, power) whose bundles lag each other by ~2.5 s in the
    // file: the merge must still put every event in order (checked by `check`).
    let Some((sink, info)) = check("test_trace.perfetto-trace") else {
        return;
    };
    assert_eq!(info.events, 35877);
    // An 8-CPU system (ftrace_stats has 8 entries), 6 CPUs with events.
    assert_eq!(info.cpus, [0, 1, 2, 3, 5, 6]);
    assert_eq!(info.header.nr_cpus, Some(8));
    let (_, _, _, payload) = &sink.samples["sched_wakeup"];
    assert_eq!(
        payload,
        "comm=kworker/u17:9 pid=834 prio=100 target_cpu=003"
    );
}

#[test]
fn a_sched_only_sink_gets_no_payload_text() {
    let Some(path) = fixture("test_trace.perfetto-trace") else {
        return;
    };
    let (sink, info) = read_path(&path, Decode::SCHED);
    assert_eq!(info.events, 35877);
    assert_eq!(sink.samples["cpu_idle"].3, "");
    // The scheduler events are typed from their fields and not printed.
    assert_eq!(sink.samples["sched_switch"].3, "");
    let sched: u64 = ["sched_switch", "sched_waking", "sched_wakeup"]
        .iter()
        .map(|n| sink.by_name.get(*n).copied().unwrap_or(0))
        .sum();
    assert!(sched > 0 && sink.typed_without_text >= sched, "{sched}");
}

// ---------------------------------------------------------------------------------------
// Hand-built traces: a minimal protobuf writer, enough for packets of ftrace events.

fn varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn uint(field: u64, v: u64) -> Vec<u8> {
    let mut out = Vec::new();
    varint(&mut out, field << 3);
    varint(&mut out, v);
    out
}

fn bytes(field: u64, body: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    varint(&mut out, (field << 3) | 2);
    varint(&mut out, body.len() as u64);
    out.extend_from_slice(body);
    out
}

/// A packet with one bundle of `cpu` holding a `cpu_idle` event per timestamp.
fn idle_packet(cpu: u64, timestamps: &[u64]) -> Vec<u8> {
    let mut bundle = uint(1, cpu);
    for &ts in timestamps {
        let idle = [uint(1, 1), uint(2, cpu)].concat();
        let event = [uint(1, ts), uint(2, 0), bytes(13, &idle)].concat();
        bundle.extend(bytes(2, &event));
    }
    bytes(1, &bytes(1, &bundle))
}

fn read_bytes(data: Vec<u8>) -> Result<(Collect, TraceInfo), Error> {
    let input = Input::from_reader("hand-built", Box::new(std::io::Cursor::new(data)))?;
    let mut sink = Collect::new(Decode::Everything);
    let info = read::read(input, &mut sink)?;
    Ok((sink, info))
}

fn two_packets() -> Vec<u8> {
    [idle_packet(1, &[300, 400]), idle_packet(0, &[100, 350])].concat()
}

#[test]
fn hand_built_trace_is_merged_across_cpus() {
    let (sink, info) = read_bytes(two_packets()).unwrap();
    assert_eq!(info.events, 4);
    let order: Vec<_> = sink
        .first
        .iter()
        .map(|v| (v[0].as_u64(), v[1].as_u64()))
        .collect();
    assert_eq!(
        order,
        [
            (Some(100), Some(0)),
            (Some(300), Some(1)),
            (Some(350), Some(0)),
            (Some(400), Some(1))
        ]
    );
    assert_eq!(sink.samples["cpu_idle"].3, "state=1 cpu_id=0");
    assert_eq!(sink.samples["cpu_idle"].2, "<idle>");
}

#[test]
fn truncated_anywhere_in_the_last_packet_keeps_the_packets_before_it() {
    let good = two_packets();
    let first_len = idle_packet(1, &[300, 400]).len();
    // Inside the key, the length varint, the bundle header, an event.
    for cut in [first_len + 1, first_len + 2, first_len + 5, good.len() - 3] {
        let (sink, info) = read_bytes(good[..cut].to_vec()).unwrap();
        assert_eq!(info.events, 2, "cut at {cut}");
        assert_eq!(sink.by_cpu.keys().copied().collect::<Vec<_>>(), [1]);
        assert_eq!(info.notes.len(), 1, "cut at {cut}: {:?}", info.notes);
        assert!(
            info.notes[0].starts_with(&format!(
                "the trace ends inside the TracePacket at byte {first_len} ("
            )),
            "cut at {cut}: {}",
            info.notes[0]
        );
        assert!(info.warnings().contains(&info.notes[0]));
    }
}

#[test]
fn a_length_past_the_end_is_a_truncation() {
    let mut data = idle_packet(2, &[5]);
    data.extend([0x0a, 0xff, 0xff, 0x03]);
    let (_, info) = read_bytes(data).unwrap();
    assert_eq!(info.events, 1);
    assert!(
        info.notes[0].contains("(0 bytes of 65535 bytes)"),
        "{:?}",
        info.notes
    );
}

#[test]
fn garbage_after_a_valid_prefix_is_skipped_with_its_offset() {
    let good = two_packets();
    let mut data = good.clone();
    data.extend(b"\x12garbage that is no packet");
    let (_, info) = read_bytes(data.clone()).unwrap();
    assert_eq!(info.events, 4);
    let n = good.len();
    assert_eq!(
        info.notes,
        [format!(
            "the packet framing is damaged in 1 place from byte {n} on: {} bytes were skipped to reach the next packet that decodes (first: expected a TracePacket (key 0x0a), found key 0x12); from byte {n} to the end no packet decodes",
            data.len() - n
        )]
    );
    // Good packets after the garbage are found again.
    data.extend(idle_packet(2, &[500]));
    data.extend(idle_packet(2, &[600]));
    let (sink, info) = read_bytes(data).unwrap();
    assert_eq!(info.events, 6);
    assert_eq!(sink.by_cpu[&2], 2);
    assert!(
        info.notes[0].contains(&format!("from byte {n} on: 26 bytes were skipped")),
        "{:?}",
        info.notes
    );
}

/// A packet whose bundle claims 9 bytes but holds 2.
fn undecodable_packet() -> Vec<u8> {
    bytes(1, &[0x0a, 9, 8, 0])
}

#[test]
fn a_damaged_packet_is_skipped_and_counted() {
    let good = idle_packet(0, &[1]);
    // Last in the file, and between two good packets.
    for (data, events) in [
        ([good.clone(), undecodable_packet()].concat(), 1),
        (
            [good.clone(), undecodable_packet(), idle_packet(1, &[2])].concat(),
            2,
        ),
    ] {
        let (_, info) = read_bytes(data).unwrap();
        assert_eq!(info.events, events);
        assert_eq!(
            info.notes,
            [format!(
                "1 TracePacket from byte {} on could not be decoded and was skipped (first: TracePacket: failed to decode Protobuf message: TracePacket.data: buffer underflow); the other packets were read",
                good.len()
            )]
        );
    }
}

#[test]
fn a_file_where_no_packet_decodes_is_refused() {
    match read_bytes([undecodable_packet(), undecodable_packet()].concat()) {
        Err(Error::Malformed { offset, reason, .. }) => {
            assert_eq!(offset, 0);
            assert!(reason.starts_with("no TracePacket decodes"), "{reason}");
        }
        other => panic!("expected Malformed, got {:?}", other.map(|(_, i)| i.events)),
    }
}

#[test]
fn packets_without_ftrace_events_are_not_a_trace_to_read() {
    // Two process trees: a valid Perfetto trace, but nothing to analyse. (Pid 0 puts a NUL
    // byte in it: format detection takes a NUL-free, all-ASCII stream for text.)
    let tree = bytes(1, &bytes(2, &bytes(1, &uint(1, 0))));
    match read_bytes([tree.clone(), tree].concat()) {
        Err(Error::NotATrace { why, .. }) => {
            assert!(why.contains("(2 packets) holds no ftrace events"), "{why}")
        }
        other => panic!("expected NotATrace, got {:?}", other.map(|(_, i)| i.events)),
    }
}

#[test]
fn lost_events_are_reported_in_stream_order() {
    let mut bundle = uint(1, 0);
    bundle.extend(uint(3, 1));
    let event = [uint(1, 50), uint(2, 7), bytes(13, &uint(1, 2))].concat();
    bundle.extend(bytes(2, &event));
    let data = [idle_packet(0, &[10]), bytes(1, &bytes(1, &bundle))].concat();
    let (sink, info) = read_bytes(data).unwrap();
    assert_eq!((info.events, sink.lost_markers), (2, 1));
    assert!(
        info.notes[0].contains("lost events (CPU 0 1x"),
        "{:?}",
        info.notes
    );
}
