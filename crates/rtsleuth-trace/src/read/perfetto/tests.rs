//! The reader end to end on traces encoded here with the reader's own messages (CompactSched,
//! generic events, interned kernel symbols: none of the real fixtures has them), and the merge
//! window on the real fixtures.

use super::checked_bundle::CheckedBundle;
use super::messages::{
    Body, CompactSched, Data, FtraceError, FtraceEvent, FtraceEventBundle, Generic, GenericField,
    GenericValue, HrtimerStart, InternedData, InternedString, Print, Process, ProcessTree,
    SchedPiSetprio, SchedSwitch, TracePacket,
};
use super::order::Limits;
use super::{read, read_with};
use crate::event::{Event, EventKind, IrqVector, MarkerKind, TaskState};
use crate::input::Input;
use crate::read::{Decode, EventSink, TraceInfo};
use prost::Message;

/// Every event as one line: `ts cpu pid comm name | payload`.
#[derive(Default)]
struct Lines(Vec<String>, Vec<(u64, Option<u32>, Option<u64>)>);

impl EventSink for Lines {
    fn event(&mut self, e: &Event<'_>) {
        self.0.push(format!(
            "{} {} {} {} {} | {}",
            e.ts, e.cpu, e.pid, e.comm, e.name, e.payload
        ));
        if let EventKind::SchedSwitch { prev_state, .. } = e.kind {
            assert_eq!(
                TaskState::parse(&e.payload[e.payload.find("prev_state=").unwrap() + 11..]),
                prev_state
            );
        }
        if let EventKind::Marker { kind, text } = e.kind {
            assert_eq!(
                (kind, text),
                (MarkerKind::Print, "hit latency threshold (120 > 100)")
            );
        }
    }

    fn lost(&mut self, cpu: Option<u32>, count: Option<u64>) {
        self.1.push((self.0.len() as u64, cpu, count));
    }
}

fn packet(data: Data) -> Vec<u8> {
    encode(TracePacket {
        trusted_packet_sequence_id: Some(7),
        data: Some(data),
        ..TracePacket::default()
    })
}

/// A packet in the `Trace` framing: field 1, length-delimited.
fn encode(p: TracePacket) -> Vec<u8> {
    let mut out = vec![0x0a];
    p.encode_length_delimited(&mut out).unwrap();
    out
}

fn read_trace(bytes: Vec<u8>) -> (Lines, TraceInfo) {
    let input = Input::from_reader("synthetic", Box::new(std::io::Cursor::new(bytes))).unwrap();
    let mut sink = Lines::default();
    let info = read(input, &mut sink).unwrap();
    (sink, info)
}

fn compact_trace() -> Vec<u8> {
    let tree = packet(Data::ProcessTree(ProcessTree {
        processes: vec![Process {
            pid: Some(10),
            cmdline: vec!["/usr/bin/cyclictest".into()],
        }],
        threads: vec![],
    }));
    let first = packet(Data::FtraceEvents(CheckedBundle::from(FtraceEventBundle {
        cpu: Some(1),
        event: vec![FtraceEvent {
            timestamp: Some(1300),
            pid: Some(10),
            body: Some(Body::Print(Print {
                buf: Some("hit latency threshold (120 > 100)\n".into()),
            })),
        }],
        compact_sched: Some(CompactSched {
            intern_table: vec![
                "cyclictest".into(),
                "kworker/1:0".into(),
                "swapper/1".into(),
            ],
            switch_timestamp: vec![1000, 500, 700],
            switch_prev_state: vec![1, 0x100, 2],
            switch_next_pid: vec![10, 20, 0],
            switch_next_prio: vec![19, 120, 120],
            switch_next_comm_index: vec![0, 1, 2],
            waking_timestamp: vec![1200, 100],
            waking_pid: vec![20, 10],
            waking_target_cpu: vec![1, 1],
            waking_prio: vec![120, 19],
            waking_comm_index: vec![1, 0],
        }),
        ..FtraceEventBundle::default()
    })));
    // The next bundle of the CPU goes on from where the last one left it (idle).
    let second = packet(Data::FtraceEvents(CheckedBundle::from(FtraceEventBundle {
        cpu: Some(1),
        lost_events: Some(true),
        compact_sched: Some(CompactSched {
            intern_table: vec!["cyclictest".into()],
            switch_timestamp: vec![3000],
            switch_prev_state: vec![0],
            switch_next_pid: vec![10],
            switch_next_prio: vec![19],
            switch_next_comm_index: vec![0],
            ..CompactSched::default()
        }),
        ..FtraceEventBundle::default()
    })));
    [tree, first, second].concat()
}

#[test]
fn compact_sched_becomes_full_events() {
    let (sink, info) = read_trace(compact_trace());
    assert_eq!(
        sink.0,
        [
            // The CPU's first switch: what ran before is not in the trace, so neither its pid
            // nor its prio is printed.
            "1000 1 -1 <...> sched_switch | prev_comm=<...> prev_pid=? prev_prio=? prev_state=S ==> next_comm=cyclictest next_pid=10 next_prio=19",
            // A compact waking runs in the task the CPU last switched to.
            "1200 1 10 cyclictest sched_waking | comm=kworker/1:0 pid=20 prio=120 target_cpu=001",
            // Ties: regular events before compact rows.
            "1300 1 10 cyclictest print | hit latency threshold (120 > 100)",
            "1300 1 10 cyclictest sched_waking | comm=cyclictest pid=10 prio=19 target_cpu=001",
            "1500 1 10 cyclictest sched_switch | prev_comm=cyclictest prev_pid=10 prev_prio=19 prev_state=R+ ==> next_comm=kworker/1:0 next_pid=20 next_prio=120",
            "2200 1 20 kworker/1:0 sched_switch | prev_comm=kworker/1:0 prev_pid=20 prev_prio=120 prev_state=D ==> next_comm=swapper/1 next_pid=0 next_prio=120",
            "3000 1 0 <idle> sched_switch | prev_comm=swapper/1 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=cyclictest next_pid=10 next_prio=19",
        ]
    );
    // The second bundle's loss comes before its first event.
    assert_eq!(sink.1, [(6, Some(1), None)]);
    assert_eq!(info.events, 7);
    assert_eq!((info.first_ts, info.last_ts), (Some(1000), Some(3000)));
    assert_eq!(info.cpus, [1]);
    assert!(
        info.notes[0].contains("lost events (CPU 1 1x"),
        "{:?}",
        info.notes
    );
}

/// Every switch of [`compact_trace`] as typed: (prev_pid, prev_prio, next_pid, next_prio).
/// By hand from the columns: CPU1's switches at 1000, 1500 (1000 + 500), 2200 (+ 700) go to
/// pids 10 (prio 19), 20 (120), 0 (120); the second bundle's at 3000 to 10 (19). Each switches
/// away from the task the one before switched to; the first has none before it, so its task
/// and prio are unknown (not pid -1 prio -1 ranked as a deadline task, not prio 0).
#[test]
fn compact_sched_never_invents_a_task_or_a_prio() {
    #[derive(Default)]
    struct Switches(
        Vec<(i32, Option<i32>, i32, Option<i32>)>,
        Vec<Vec<(i32, i32)>>,
    );
    impl EventSink for Switches {
        fn event(&mut self, e: &Event<'_>) {
            if let EventKind::SchedSwitch {
                prev_pid,
                prev_prio,
                next_pid,
                next_prio,
                ..
            } = e.kind
            {
                self.0.push((prev_pid, prev_prio, next_pid, next_prio));
                self.1
                    .push(e.kind.task_prios().into_iter().flatten().collect());
            }
        }
    }
    let input =
        Input::from_reader("synthetic", Box::new(std::io::Cursor::new(compact_trace()))).unwrap();
    let mut sink = Switches::default();
    read(input, &mut sink).unwrap();
    assert_eq!(
        sink.0,
        [
            (crate::event::UNKNOWN_PID, None, 10, Some(19)),
            (10, Some(19), 20, Some(120)),
            (20, Some(120), 0, Some(120)),
            (0, Some(120), 10, Some(19)),
        ]
    );
    // The unknown task states no prio at all.
    assert_eq!(sink.1[0], [(10, 19)]);
}

/// A full (not compact) sched_switch without `prev_prio` or `next_pid`: unknown, not 0 (the
/// highest real-time priority; the idle task).
#[test]
fn a_missing_switch_field_is_unknown() {
    let switch = super::messages::SchedSwitch {
        prev_comm: Some("a".into()),
        prev_pid: Some(5),
        prev_prio: None,
        prev_state: Some(0),
        next_comm: Some("b".into()),
        next_pid: None,
        next_prio: Some(120),
    };
    let bytes = packet(Data::FtraceEvents(CheckedBundle::from(FtraceEventBundle {
        cpu: Some(0),
        event: vec![FtraceEvent {
            timestamp: Some(100),
            pid: Some(5),
            body: Some(Body::SchedSwitch(switch)),
        }],
        ..FtraceEventBundle::default()
    })));
    let input = Input::from_reader("synthetic", Box::new(std::io::Cursor::new(bytes))).unwrap();
    let mut sink = Kinds::default();
    read(input, &mut sink).unwrap();
    assert_eq!(sink.0.len(), 1);
    assert!(
        sink.0[0].starts_with(
            "sched_switch prev_comm=a prev_pid=5 prev_prio=? prev_state=R ==> next_comm=b next_pid=? next_prio=120 SchedSwitch { prev_comm: \"a\", prev_pid: 5, prev_prio: None,"
        ),
        "{}",
        sink.0[0]
    );
    assert!(
        sink.0[0].contains("next_pid: -1, next_prio: Some(120)"),
        "{}",
        sink.0[0]
    );
}

/// Collects the typed decoding of every event.
#[derive(Default)]
struct Kinds(Vec<String>);

impl EventSink for Kinds {
    fn event(&mut self, e: &Event<'_>) {
        self.0
            .push(format!("{} {} {:?}", e.name, e.payload, e.kind));
    }
}

#[test]
fn generic_events_are_typed_like_the_text_traces() {
    let field = |name: &str, value: GenericValue| GenericField {
        name: Some(name.into()),
        value: Some(value),
    };
    let generic = |ts, name: &str, fields| FtraceEvent {
        timestamp: Some(ts),
        pid: Some(0),
        body: Some(Body::Generic(Generic {
            event_name: Some(name.into()),
            field: fields,
        })),
    };
    let trace = packet(Data::FtraceEvents(CheckedBundle::from(FtraceEventBundle {
        cpu: Some(2),
        event: vec![
            generic(
                10,
                "local_timer_entry",
                vec![field("vector", GenericValue::Int(236))],
            ),
            generic(
                20,
                "my_driver_event",
                vec![
                    field("dev", GenericValue::Str("spi0".into())),
                    field("len", GenericValue::Uint(64)),
                ],
            ),
        ],
        ..FtraceEventBundle::default()
    })));
    let input = Input::from_reader("synthetic", Box::new(std::io::Cursor::new(trace))).unwrap();
    let mut sink = Kinds::default();
    read(input, &mut sink).unwrap();
    let vector = EventKind::IrqVectorEntry(IrqVector {
        name: "local_timer",
        vector: Some(236),
    });
    assert_eq!(
        sink.0,
        [
            format!("local_timer_entry vector=236 {vector:?}"),
            "my_driver_event dev=spi0 len=64 Other".to_string(),
        ]
    );
}

/// Collects what a sink that wants `decode` is given: name, payload, kind, and the priority
/// inheritance the event model reads from the payload.
struct Given(Decode, Vec<String>);

impl EventSink for Given {
    fn event(&mut self, e: &Event<'_>) {
        let kind = format!("{:?}", e.kind);
        let kind = kind
            .split_once([' ', '('])
            .map_or(&*kind, |k| k.0)
            .to_string();
        self.1.push(format!(
            "{} [{}] {kind} {:?}",
            e.name,
            e.payload,
            e.pi_setprio()
        ));
    }

    fn decode(&self) -> Decode {
        self.0
    }
}

/// The payload text is printed for every event under `Everything`; under `Typed` only where
/// the kind is typed from it (a generic event) or the event model reads it
/// (`sched_pi_setprio`): a switch is typed from its fields and goes without.
#[test]
fn payload_text_only_where_it_is_wanted() {
    let event = |ts, body| FtraceEvent {
        timestamp: Some(ts),
        pid: Some(5),
        body: Some(body),
    };
    let trace = packet(Data::FtraceEvents(CheckedBundle::from(FtraceEventBundle {
        cpu: Some(0),
        event: vec![
            event(
                10,
                Body::SchedSwitch(SchedSwitch {
                    prev_comm: Some("a".into()),
                    prev_pid: Some(5),
                    prev_prio: Some(120),
                    prev_state: Some(1),
                    next_comm: Some("b".into()),
                    next_pid: Some(6),
                    next_prio: Some(20),
                }),
            ),
            event(
                20,
                Body::Generic(Generic {
                    event_name: Some("local_timer_entry".into()),
                    field: vec![GenericField {
                        name: Some("vector".into()),
                        value: Some(GenericValue::Int(236)),
                    }],
                }),
            ),
            event(
                30,
                Body::SchedPiSetprio(SchedPiSetprio {
                    comm: Some("b".into()),
                    newprio: Some(10),
                    oldprio: Some(20),
                    pid: Some(6),
                }),
            ),
        ],
        ..FtraceEventBundle::default()
    })));
    let given = |decode| {
        let input = Input::from_reader("t", Box::new(std::io::Cursor::new(trace.clone()))).unwrap();
        let mut sink = Given(decode, Vec::new());
        read(input, &mut sink).unwrap();
        sink.1
    };
    let pi = "sched_pi_setprio [comm=b pid=6 oldprio=20 newprio=10] Other Some((6, 10))";
    assert_eq!(
        given(Decode::Typed),
        [
            "sched_switch [] SchedSwitch None",
            "local_timer_entry [vector=236] IrqVectorEntry None",
            pi,
        ]
    );
    assert_eq!(
        given(Decode::Everything)[0],
        "sched_switch [prev_comm=a prev_pid=5 prev_prio=120 prev_state=S ==> next_comm=b next_pid=6 next_prio=20] SchedSwitch None"
    );
}

#[test]
fn interned_kernel_symbols_name_functions() {
    let start = |ts, function| FtraceEvent {
        timestamp: Some(ts),
        pid: Some(42),
        body: Some(Body::HrtimerStart(HrtimerStart {
            hrtimer: Some(0xffff_8880_1234_5678),
            function: Some(function),
            expires: Some(5000),
            softexpires: Some(4950),
            mode: Some(0),
        })),
    };
    let bundle = |events| {
        Some(Data::FtraceEvents(CheckedBundle::from(FtraceEventBundle {
            cpu: Some(0),
            event: events,
            ..FtraceEventBundle::default()
        })))
    };
    let symbols = InternedData {
        kernel_symbols: vec![InternedString {
            iid: Some(1),
            str: Some(b"hrtimer_wakeup".to_vec()),
        }],
    };
    let trace = [
        encode(TracePacket {
            trusted_packet_sequence_id: Some(3),
            sequence_flags: Some(1),
            interned_data: Some(symbols),
            data: bundle(vec![start(100, 1), start(200, 0xffff_ffff_8100_0000)]),
            ..TracePacket::default()
        }),
        // A cleared state forgets the table: index 1 is no longer known.
        encode(TracePacket {
            trusted_packet_sequence_id: Some(3),
            sequence_flags: Some(1),
            data: bundle(vec![start(300, 1)]),
            ..TracePacket::default()
        }),
    ]
    .concat();
    let input = Input::from_reader("synthetic", Box::new(std::io::Cursor::new(trace))).unwrap();
    let mut sink = Kinds::default();
    read(input, &mut sink).unwrap();
    let payload = |f: &str| {
        format!("hrtimer_start hrtimer=ffff888012345678 function={f} expires=5000 softexpires=4950 mode=ABS")
    };
    let kind = |f| {
        format!(
            "{:?}",
            EventKind::HrtimerStart {
                hrtimer: 0xffff_8880_1234_5678,
                function: f,
                expires: 5000,
                softexpires: 4950
            }
        )
    };
    assert_eq!(
        sink.0,
        [
            format!("{} {}", payload("hrtimer_wakeup"), kind("hrtimer_wakeup")),
            format!(
                "{} {}",
                payload("0xffffffff81000000"),
                kind("0xffffffff81000000")
            ),
            format!("{} {}", payload("0x1"), kind("0x1")),
        ]
    );
}

/// A bundle that contradicts itself loses its own packet's events, not the trace.
#[test]
fn ragged_compact_columns_skip_their_packet() {
    let good = compact_trace();
    let bad = packet(Data::FtraceEvents(CheckedBundle::from(FtraceEventBundle {
        cpu: Some(0),
        compact_sched: Some(CompactSched {
            switch_timestamp: vec![1, 2],
            ..CompactSched::default()
        }),
        ..FtraceEventBundle::default()
    })));
    let (clean, clean_info) = read_trace(good.clone());
    let (damaged, info) = read_trace([good.clone(), bad].concat());
    assert_eq!(damaged.0, clean.0);
    assert_eq!(info.notes[1..], clean_info.notes);
    assert_eq!(
        info.notes[0],
        format!(
            "1 TracePacket from byte {} on could not be decoded and was skipped (first: FtraceEventBundle: CompactSched switch columns differ in length ([2, 0, 0, 0, 0])); the other packets were read",
            good.len()
        )
    );
}

/// Perfetto's own record of ring-buffer pages it could not parse means events are missing:
/// each kind is counted into a note, and the bundle's events are still read.
#[test]
fn pages_perfetto_could_not_parse_are_reported() {
    let good = compact_trace();
    let with_errors = |page: Option<Vec<u8>>| {
        packet(Data::FtraceEvents(CheckedBundle::from(FtraceEventBundle {
            cpu: Some(2),
            error: vec![
                FtraceError {
                    timestamp: Some(5_000_000_123),
                    status: Some(9),
                },
                FtraceError::default(),
            ],
            broken_abi_trace_page: page,
            ..FtraceEventBundle::default()
        })))
    };
    let (clean, clean_info) = read_trace(good.clone());
    let trace = [good, with_errors(Some(vec![0; 16])), with_errors(None)].concat();
    let (read, info) = read_trace(trace);
    assert_eq!(read.0, clean.0);
    assert_eq!(info.notes[..clean_info.notes.len()], clean_info.notes);
    assert_eq!(
        info.notes[clean_info.notes.len()..],
        [
            "Perfetto could not parse the kernel ring buffer in 4 place(s) (first: CPU 2, page of 5.000000123 s, FtraceParseStatus 9) and skipped the rest of each page: events there are missing",
            "1 kernel ring-buffer page Perfetto could not parse is in the trace only as raw bytes (broken_abi_trace_page): their events are missing",
        ]
    );
}

/// The kernel release of the recording machine comes from the trace's system_info packet
/// (the releases expected here are what `strings` finds in the files).
#[test]
fn the_kernel_release_is_read_from_system_info() {
    let dir = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/fixtures/realworld/ms-perf-tools-linux-android/TestData/Perfetto"
    );
    for (name, release) in [
        (
            "perfetto_android12_cpuschedstack.pftrace",
            "5.10.43-android12-9-00031-g5b153f189546-ab7618735",
        ),
        ("test_trace.perfetto-trace", "4.19.113-22067904"),
    ] {
        let Ok(input) = Input::open(&format!("{dir}/{name}")) else {
            println!("skipped: {dir}/{name} not found");
            return;
        };
        let info = read(input, &mut crate::read::NullSink).unwrap();
        assert_eq!(info.kernel.as_deref(), Some(release), "{name}");
        assert_eq!(info.uname, None);
    }
    let (_, info) = read_trace(compact_trace());
    assert_eq!(info.kernel, None);
}

/// A window smaller than the trace must give the same events in the same order (the fixtures
/// fit the default window whole). The warm-up must cover the ~5700 events test_trace has before
/// its second ftrace data source first writes; a window too small for that lag hands out late
/// events and counts them.
#[test]
fn a_small_window_keeps_the_order_of_real_traces() {
    let dir = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/fixtures/realworld/ms-perf-tools-linux-android/TestData/Perfetto"
    );
    let read_window = |name: &str, window: Limits| {
        let input = Input::open(&format!("{dir}/{name}")).unwrap();
        let mut sink = Lines::default();
        let info = read_with(input, &mut sink, window).unwrap();
        (sink.0, info.out_of_order)
    };
    for name in [
        "perfetto_android12_cpuschedstack.pftrace",
        "perfetto_trace_cpu_sampling_not_scoped.pftrace",
        "test_trace.perfetto-trace",
    ] {
        if !std::path::Path::new(&format!("{dir}/{name}")).is_file() {
            println!("skipped: {dir}/{name} not found");
            return;
        }
        let (whole, late) = read_window(name, super::WINDOW);
        assert_eq!(late, 0);
        let small = Limits {
            warmup: 8192,
            cap: 16384,
            ..super::WINDOW
        };
        let (windowed, late) = read_window(name, small);
        assert_eq!(late, 0, "{name}");
        if let Some(i) = (0..whole.len()).find(|&i| windowed[i] != whole[i]) {
            panic!(
                "{name}: event {i} differs with a 16384-event window:\n{}\n{}",
                windowed[i], whole[i]
            );
        }
        let tiny = Limits {
            warmup: 0,
            cap: 64,
            ..super::WINDOW
        };
        let (events, late) = read_window(name, tiny);
        assert_eq!(events.len(), whole.len());
        assert!(
            late > 0,
            "{name}: a 64-event window must hand out late events"
        );
    }
}

/// Bundles name their ftrace clock only when it is not boot (Perfetto's
/// FTRACE_CLOCK_UNSPECIFIED); every Perfetto ftrace clock counts nanoseconds.
#[test]
fn the_ftrace_clock_is_named() {
    let (_, info) = read_trace(compact_trace());
    assert_eq!(
        (info.clock.as_deref(), info.clock_ns()),
        (Some("boot"), true)
    );
    let global = packet(Data::FtraceEvents(CheckedBundle::from(FtraceEventBundle {
        cpu: Some(0),
        ftrace_clock: Some(2),
        event: vec![FtraceEvent {
            timestamp: Some(100),
            pid: Some(5),
            body: Some(Body::Print(Print {
                buf: Some("hit latency threshold (120 > 100)\n".into()),
            })),
        }],
        ..FtraceEventBundle::default()
    })));
    let (_, info) = read_trace(global);
    assert_eq!(
        (info.clock.as_deref(), info.clock_ns()),
        (Some("global"), true)
    );
}
