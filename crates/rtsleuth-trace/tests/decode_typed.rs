//! `Decode::Typed` against `Decode::Everything` on binary traces: the same events with the same
//! kinds, only the payload text of the events typed straight from their fields left out (what
//! spares explain printing every scheduler event on trace.dat and perf.data).

use rtsleuth_trace::event::Event;
use rtsleuth_trace::input::Input;
use rtsleuth_trace::read::{self, Decode, EventSink};
use std::path::Path;

/// Each event's name, kind (as debug text) and payload, under one decoding.
struct Collect {
    decode: Decode,
    events: Vec<(String, String, String)>,
}

impl EventSink for Collect {
    fn event(&mut self, ev: &Event<'_>) {
        let kind = format!("{:?}", ev.kind);
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
fn typed_decoding_gives_every_kind_and_skips_only_the_fast_payloads() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures");
    for name in [
        "tracedat/v7-zstd.dat",
        "tracedat/v6.dat",
        "tracedat/lost.dat",
    ] {
        let path = root.join(name);
        let all = read_with(&path, Decode::Everything);
        let typed = read_with(&path, Decode::Typed);
        assert_eq!(all.len(), typed.len(), "{name}");
        assert!(all.len() > 1000, "{name}");
        let mut without_text = 0;
        for (a, t) in all.iter().zip(&typed) {
            assert_eq!((&a.0, &a.1), (&t.0, &t.1), "{name}");
            if t.2.is_empty() && !a.2.is_empty() {
                without_text += 1;
                // Only the scheduler events typed from their binary fields go without text.
                assert_ne!(a.1, "Other", "{name}");
                assert!(a.0.starts_with("sched_"), "{name}: {a:?}");
            } else {
                assert_eq!(a.2, t.2, "{name}");
            }
        }
        assert!(without_text > 100, "{name}: {without_text}");
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
