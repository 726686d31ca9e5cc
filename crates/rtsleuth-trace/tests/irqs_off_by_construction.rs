//! `Event::irqs_off_by_construction` answers typed events from their kind and the others from
//! their name: the two must agree. Every event of recordings in each format is asked both ways,
//! once as read and once with its kind taken away, which leaves the name alone to answer.

use rtsleuth_trace::event::{Event, EventKind};
use rtsleuth_trace::input::Input;
use rtsleuth_trace::read::{self, Decode, EventSink};
use std::path::Path;

/// Events whose two answers differ, and how many typed events were asked.
#[derive(Default)]
struct Ask {
    disagree: Vec<String>,
    typed: usize,
}

impl EventSink for Ask {
    fn event(&mut self, ev: &Event<'_>) {
        if matches!(ev.kind, EventKind::Other) {
            return;
        }
        self.typed += 1;
        let by_name = Event {
            kind: EventKind::Other,
            ..ev.clone()
        };
        if ev.irqs_off_by_construction() != by_name.irqs_off_by_construction() {
            self.disagree.push(format!("{} {:?}", ev.name, ev.kind));
        }
    }

    fn decode(&self) -> Decode {
        Decode::Everything
    }
}

#[test]
fn the_kind_answers_as_the_name_does() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures");
    for file in [
        "recorded/variants/trace.txt",
        "recorded/variants/trace.dat",
        "recorded/softirq/trace.txt",
        "recorded/wq/trace.dat",
        "recorded/perf_data_sched/perf.data",
        "perfetto/recorder_drops_own_switches.pftrace.zst",
    ] {
        let path = root.join(file);
        let mut ask = Ask::default();
        read::read(Input::open(path.to_str().unwrap()).unwrap(), &mut ask).unwrap();
        assert!(ask.typed > 100, "{file}: only {} typed events", ask.typed);
        assert!(ask.disagree.is_empty(), "{file}: {:?}", ask.disagree);
    }
}
