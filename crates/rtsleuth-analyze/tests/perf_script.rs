//! `perf script` text read as ftrace text: every line of the recorded fixtures
//! (`tests/fixtures/recorded/perf_script_*`) against a plain split-based reading written here,
//! which shares nothing with the reader; lost records, the `--header` block, and damaged input.

#[path = "../../rtsleuth-trace/tests/shared_fixtures/mod.rs"]
mod shared_fixtures;

use rtsleuth_analyze::document::Block;
use rtsleuth_analyze::stats::Stats;
use rtsleuth_trace::event::{Event, EventKind};
use rtsleuth_trace::input::Input;
use rtsleuth_trace::read::ftrace_text::{self, NonEvent, TimestampUnit};
use rtsleuth_trace::read::{self, EventSink, TraceInfo};
use std::path::{Path, PathBuf};

fn fixture(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures/recorded")
        .join(rel)
}

/// What both readings must agree on, for one event line.
#[derive(Debug, PartialEq)]
struct Seen {
    ts: u64,
    cpu: u32,
    pid: i32,
    comm: String,
    name: String,
    /// sched_switch: prev pid, prio, state, next pid, prio; wake-ups: woken pid, prio, target.
    fields: Vec<String>,
}

#[derive(Default)]
struct Collect(Vec<Seen>);

impl EventSink for Collect {
    fn event(&mut self, ev: &Event<'_>) {
        let fields = match ev.kind {
            EventKind::SchedSwitch {
                prev_pid,
                prev_prio,
                prev_state,
                next_pid,
                next_prio,
                ..
            } => vec![
                prev_pid.to_string(),
                prev_prio.map_or("?".into(), |p| p.to_string()),
                prev_state.letter().to_string(),
                next_pid.to_string(),
                next_prio.map_or("?".into(), |p| p.to_string()),
            ],
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
            }
            | EventKind::SchedWakeupNew {
                pid,
                prio,
                target_cpu,
                ..
            } => vec![
                pid.to_string(),
                prio.to_string(),
                target_cpu.map_or("-".into(), |c| c.to_string()),
            ],
            _ => Vec::new(),
        };
        self.0.push(Seen {
            ts: ev.ts,
            cpu: ev.cpu,
            pid: ev.pid,
            comm: ev.comm.to_string(),
            name: ev.name.to_string(),
            fields,
        });
    }
}

fn read_events(path: &Path) -> (Vec<Seen>, TraceInfo) {
    let mut sink = Collect::default();
    let info = read::read(Input::open(path.to_str().unwrap()).unwrap(), &mut sink).unwrap();
    (sink.0, info)
}

fn text_of(path: &Path) -> String {
    let bytes = std::fs::read(path).unwrap();
    String::from_utf8(zstd::stream::decode_all(&bytes[..]).unwrap()).unwrap()
}

/// `comm tid [cpu] secs.frac: [period] system:name: payload`, taken apart by splitting.
fn split_line(line: &str) -> Seen {
    let (task, rest) = line.split_once(" [").unwrap();
    let (comm, ids) = task.trim().rsplit_once(' ').unwrap();
    let tid = ids.rsplit('/').next().unwrap();
    let (cpu, rest) = rest.split_once("] ").unwrap();
    let (ts, rest) = rest.trim_start().split_once(": ").unwrap();
    let (secs, frac) = ts.split_once('.').unwrap();
    let ns = format!("{frac:0<9}");
    let mut words = rest.split_whitespace().peekable();
    if words.peek().unwrap().bytes().all(|b| b.is_ascii_digit()) {
        words.next(); // the -F period column
    }
    let event = words.next().unwrap().strip_suffix(':').unwrap();
    let name = event.split_once(':').unwrap().1;
    let kv: Vec<(&str, &str)> = words.filter_map(|w| w.split_once('=')).collect();
    let get = |k: &str| kv.iter().find(|(key, _)| *key == k).unwrap().1.to_string();
    let fields = match name {
        "sched_switch" => {
            let mut f = [
                "prev_pid",
                "prev_prio",
                "prev_state",
                "next_pid",
                "next_prio",
            ]
            .map(get);
            // rtsleuth keeps one state for exiting tasks: a zombie (`Z`) is dead (`X`).
            if f[2] == "Z" {
                f[2] = "X".into();
            }
            f.to_vec()
        }
        "sched_waking" | "sched_wakeup" | "sched_wakeup_new" => vec![
            get("pid"),
            get("prio"),
            get("target_cpu").parse::<u32>().unwrap().to_string(),
        ],
        _ => Vec::new(),
    };
    Seen {
        ts: secs.parse::<u64>().unwrap() * 1_000_000_000 + ns.parse::<u64>().unwrap(),
        cpu: cpu.parse().unwrap(),
        pid: tid.parse().unwrap(),
        comm: comm.trim().to_string(),
        name: name.to_string(),
        fields,
    }
}

#[test]
fn every_line_is_the_event_perf_printed() {
    for rel in [
        "perf_script_sched/trace.txt.zst",
        "perf_script_sched/trace-ns.txt.zst",
        "perf_script_events/trace.txt.zst",
        "perf_script_events/trace-ns.txt.zst",
        "perf_script_events/trace-fields.txt.zst",
    ] {
        let path = fixture(rel);
        let text = text_of(&path);
        let want: Vec<Seen> = text.lines().map(split_line).collect();
        let (got, info) = read_events(&path);
        assert_eq!(got.len(), want.len(), "{rel}: events");
        for (i, (g, w)) in got.iter().zip(&want).enumerate() {
            assert_eq!(g, w, "{rel} line {}", i + 1);
        }
        assert_eq!(info.lines.total, want.len() as u64, "{rel}: lines");
        assert_eq!(info.events, want.len() as u64, "{rel}: events counted");
        assert_eq!(info.unparsed(), 0, "{rel}: unparsed");
        assert_eq!(info.timestamps, TimestampUnit::Seconds, "{rel}");
        assert!(info.header.perf_script, "{rel}: printed by perf");
    }
}

/// `--ns` prints the same events with nanoseconds: cut to microseconds they are the default
/// output's, and the reader keeps the nanoseconds it was given.
#[test]
fn nanoseconds_are_kept() {
    for dir in ["perf_script_sched", "perf_script_events"] {
        let (us, _) = read_events(&fixture(&format!("{dir}/trace.txt.zst")));
        let (ns, _) = read_events(&fixture(&format!("{dir}/trace-ns.txt.zst")));
        assert_eq!(us.len(), ns.len(), "{dir}");
        assert!(ns.iter().any(|e| e.ts % 1000 != 0), "{dir}: no ns digits");
        for (u, mut n) in us.into_iter().zip(ns) {
            n.ts = n.ts / 1000 * 1000;
            assert_eq!(u, n, "{dir}");
        }
    }
}

/// `perf script --show-lost-events`: 15 `PERF_RECORD_LOST` lines, 6 + 216 records lost on CPU
/// 0 and 1 (counted with awk on the text).
#[test]
fn lost_records_are_lost_events() {
    struct Lost(Vec<(Option<u32>, Option<u64>)>);
    impl EventSink for Lost {
        fn event(&mut self, _: &Event<'_>) {}
        fn lost(&mut self, cpu: Option<u32>, count: Option<u64>) {
            self.0.push((cpu, count));
        }
    }
    let path = fixture("perf_script_lost/trace.txt.zst");
    let mut sink = Lost(Vec::new());
    let info = read::read(Input::open(path.to_str().unwrap()).unwrap(), &mut sink).unwrap();
    assert_eq!(info.lines.lost_markers, 15);
    assert_eq!(info.lost_events, 222);
    assert_eq!(info.events, 2000 - 15);
    assert_eq!(info.unparsed(), 0);
    let on = |cpu| -> u64 {
        sink.0
            .iter()
            .filter(|(c, _)| *c == Some(cpu))
            .map(|(_, n)| n.unwrap())
            .sum()
    };
    assert_eq!((on(0), on(1)), (6, 216));
    assert_eq!(sink.0[0], (Some(1), Some(18)));
}

/// `perf script --header`: the header is comments that name the perf version and the CPUs,
/// and stats says who printed the text.
#[test]
fn the_header_says_perf() {
    let mut stats = Stats::new();
    let path = fixture("perf_script_events/trace-header-head.txt");
    let info = read::read(Input::open(path.to_str().unwrap()).unwrap(), &mut stats).unwrap();
    assert_eq!(info.lines.get(NonEvent::Comment), 66);
    assert_eq!(info.events, 14);
    assert_eq!(info.header.perf_version.as_deref(), Some("6.1.187"));
    assert_eq!(info.header.nr_cpus, Some(2));
    let doc = stats.document(&info);
    assert_eq!(doc.json["printed_by"], "perf script");
    assert_eq!(doc.json["perf_version"], "6.1.187");
    let Block::Pairs(_, pairs) = &doc.blocks[0] else {
        panic!("no summary");
    };
    let format = pairs.iter().find(|(k, _)| k == "Format").unwrap();
    assert_eq!(
        format.1,
        "ftrace text, printed by perf script (perf 6.1.187)"
    );
    let mut plain = Stats::new();
    let info = read::read(
        Input::open(fixture("perf_script_sched/trace.txt.zst").to_str().unwrap()).unwrap(),
        &mut plain,
    )
    .unwrap();
    assert_eq!(
        plain.document(&info).json["perf_version"],
        serde_json::Value::Null
    );
}

/// Damage in the middle of real lines: each bad line is counted and shown, the rest read.
#[test]
fn damaged_lines_are_counted() {
    let good = "      cyclictest 11681 [000]  4903.672477:                    timer:hrtimer_start: hrtimer=0xffffc90002573b48 function=hrtimer_wakeup expires=4903675224023 softexpires=4903675224023 mode=0x0 was_armed=0\n";
    let text = [
        good,
        "      cyclictest 11681 [000]  4903.67\n",
        "@@@ \u{1}garbage ###\n",
        "   stress-ng-cpu 11676 [000]  4903.673465:             futex:made_up_event: x=1\n",
        "   stress-ng-cpu 11676 [000]  4903.673474:                     sched:sched_switch: prev_comm=stress-ng-cpu prev_pid=116\n",
        "   stress-ng-cpu 11676 [000]  4903.673474:                     sched:sched_switch\n",
        "            perf 11879 [000]  4949.817407: PERF_RECORD_LOST lost\n",
        good,
    ]
    .concat();
    for chunk in [7, 64, 4096] {
        #[derive(Default)]
        struct Kinds(Vec<String>);
        impl EventSink for Kinds {
            fn event(&mut self, ev: &Event<'_>) {
                self.0.push(
                    format!("{}:{:?}", ev.name, ev.kind)
                        .chars()
                        .take(40)
                        .collect(),
                );
            }
        }
        let mut sink = Kinds::default();
        let info = ftrace_text::read_bytes("damaged", text.clone().into_bytes(), chunk, &mut sink)
            .unwrap();
        assert_eq!(info.lines.total, 8);
        // The unknown event and the cut sched_switch are events, kept by name, not decoded.
        assert_eq!(info.events, 4, "{:?}", sink.0);
        assert!(sink.0[1].starts_with("made_up_event:Other"), "{:?}", sink.0);
        assert!(sink.0[2].starts_with("sched_switch:Other"), "{:?}", sink.0);
        // The cut timestamp, the garbage and the event without its `: `.
        assert_eq!(info.unparsed(), 3);
        let lines: Vec<u64> = info.unparsed_examples.iter().map(|u| u.line).collect();
        assert_eq!(lines, [2, 3, 6]);
        // A lost record without its count still marks the loss.
        assert_eq!((info.lines.lost_markers, info.lost_events), (1, 0));
    }
}

/// perf script of `cpu-clock` samples with callchains (a third-party file): the samples are
/// events, the callchain lines stack frames, nothing unparsed.
#[test]
fn callchains_are_stack_frames() {
    let Some(path) =
        shared_fixtures::realworld("ms-perf-tools-linux-android/TestData/Perf/perf.data.txt")
    else {
        return;
    };
    let mut stats = Stats::new();
    let info = read::read(Input::open(path.to_str().unwrap()).unwrap(), &mut stats).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    let samples = text.lines().filter(|l| l.ends_with("cpu-clock: ")).count() as u64;
    let frames = text.lines().filter(|l| l.starts_with('\t')).count() as u64;
    assert_eq!(info.events, samples);
    assert_eq!(info.lines.get(NonEvent::StackFrame), frames);
    assert_eq!(info.unparsed(), 0);
    assert_eq!(
        stats.document(&info).json["per_event"]["cpu-clock"],
        samples
    );
}
