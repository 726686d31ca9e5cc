//! `Decode::Typed` against `Decode::Everything` on binary traces: the same events with the same
//! kinds and the same fields read from payloads, only the payload text of the events typed
//! straight from their fields, and of those never typed at all, left out (what spares explain
//! printing every scheduler event and every `sched_stat_runtime` on trace.dat and perf.data).

mod shared_fixtures;

use rtsleuth_trace::event::{Event, EventKind};
use rtsleuth_trace::input::Input;
use rtsleuth_trace::read::ftrace_text::payload_decoder;
use rtsleuth_trace::read::{self, Decode, EventSink};
use std::path::{Path, PathBuf};

/// Each event's name, kind and what the model reads of its payload (as debug text), and its
/// payload, under one decoding.
struct Collect {
    decode: Decode,
    events: Vec<(String, String, String)>,
}

impl EventSink for Collect {
    fn event(&mut self, ev: &Event<'_>) {
        let kind = format!("{:?} {:?}", ev.kind, ev.pi_setprio());
        self.events
            .push((ev.name.to_string(), kind, ev.payload.to_string()));
    }

    fn decode(&self) -> Decode {
        self.decode
    }
}

fn read_with(path: &Path, decode: Decode) -> Vec<(String, String, String)> {
    let mut sink = Collect {
        decode,
        events: Vec::new(),
    };
    read::read(Input::open(path.to_str().unwrap()).unwrap(), &mut sink).unwrap();
    sink.events
}

#[test]
fn typed_decoding_gives_every_kind_and_skips_only_the_payloads_it_does_not_read() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures");
    for name in [
        "tracedat/v7-zstd.dat",
        "tracedat/v6.dat",
        "tracedat/lost.dat",
        // PREEMPT_RT: priority inheritance, whose `sched_pi_setprio` is read by its fields.
        "lab/rt/timerfd/trace.dat.zst",
    ] {
        let path = root.join(name);
        let all = read_with(&path, Decode::Everything);
        let typed = read_with(&path, Decode::Typed);
        assert_eq!(all.len(), typed.len(), "{name}");
        assert!(all.len() > 1000, "{name}");
        let (mut fast, mut never_typed) = (0, 0);
        for (a, t) in all.iter().zip(&typed) {
            assert_eq!((&a.0, &a.1), (&t.0, &t.1), "{name}");
            if t.2.is_empty() && !a.2.is_empty() {
                if payload_decoder(&a.0).is_none() {
                    // Never typed from text, and no field of it is read.
                    assert!(a.1.starts_with("Other "), "{name}: {a:?}");
                    assert!(!Event::FIELDS_READ.contains(&a.0.as_str()), "{name}: {a:?}");
                    never_typed += 1;
                } else {
                    // Otherwise only the scheduler and timer events typed from their fields.
                    assert!(!a.1.starts_with("Other "), "{name}: {a:?}");
                    assert!(typed_from_fields(&a.0, &a.2), "{name}: {a:?}");
                    fast += 1;
                }
            } else {
                assert_eq!(a.2, t.2, "{name}");
            }
        }
        assert!(fast > 100, "{name}: {fast}");
        if name.starts_with("lab/rt") {
            assert!(
                typed.iter().any(|t| t.1.contains(" Some((")),
                "{name}: no pi_setprio"
            );
        }
        assert!(never_typed > 0, "{name}: {never_typed}");
    }
}

#[test]
fn a_union_promises_text_only_with_everything() {
    let sched = Decode::SCHED;
    assert_eq!(sched.union(sched), sched);
    assert_eq!(sched.union(Decode::LATENCY), Decode::Typed);
    assert_eq!(Decode::Typed.union(sched), Decode::Typed);
    assert_eq!(Decode::Typed.union(Decode::Everything), Decode::Everything);
    assert_eq!(sched.union(Decode::Everything), Decode::Everything);
}

/// The events the binary readers type from their fields rather than from printed text.
fn typed_from_fields(name: &str, payload: &str) -> bool {
    name.starts_with("sched_") || name.starts_with("hrtimer_") || payload.starts_with("vector=")
}

/// Every trace.dat of the repository's fixtures and of the realworld ones.
fn every_trace_dat() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures");
    let mut dirs = vec![root];
    dirs.extend(shared_fixtures::realworld(""));
    let mut found = Vec::new();
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if path.is_dir() {
                dirs.push(path);
            } else if name.ends_with(".dat") || name.ends_with(".dat.zst") {
                found.push(path);
            }
        }
    }
    found.sort();
    found
}

/// A timer event typed from its binary fields (as `Decode::Typed` reads it) has the kind its
/// printed payload (as `Decode::Everything` prints it) reads as: the callback's symbol, the
/// timer, the times and the vector, on every kernel's formats the fixtures hold (`%pf` and
/// `.tv64` before 4.x, `%ps` and `was_armed` on 6.x).
#[test]
fn timer_events_typed_from_their_fields_read_as_their_text() {
    let mut checked = 0;
    for path in every_trace_dat() {
        let all = read_with(&path, Decode::Everything);
        let typed = read_with(&path, Decode::Typed);
        assert_eq!(all.len(), typed.len(), "{}", path.display());
        for ((name, _, payload), (_, kind, _)) in all.iter().zip(&typed) {
            let Some(decode) = payload_decoder(name) else {
                continue;
            };
            if name.starts_with("sched_") || !typed_from_fields(name, payload) {
                continue;
            }
            let text = decode(name, payload).unwrap_or(EventKind::Other);
            let at = || format!("{}: {name}: {payload}", path.display());
            assert_eq!(kind, &format!("{text:?} None"), "{}", at());
            checked += 1;
        }
    }
    assert!(checked > 10_000, "{checked}");
}
