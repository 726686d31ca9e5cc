//! `Parallel` gives each block of a trace to two sinks on two threads: each must still see
//! every event and every lost-events mark, in file order, exactly as a sink read alone does,
//! and analyses fed that way must say the same.

use rtsleuth_analyze::explain::{Explain, ExplainOptions};
use rtsleuth_analyze::latency::{Latency, LatencyOptions};
use rtsleuth_trace::event::Event;
use rtsleuth_trace::read::{ftrace_text, Decode, EventSink, Parallel, TraceInfo};

/// Remembers what it was handed, in order (the fixture is small).
#[derive(Default, Debug, PartialEq)]
struct Seen(Vec<(u64, u32, i32, String)>);

impl EventSink for Seen {
    fn event(&mut self, ev: &Event<'_>) {
        self.0.push((ev.ts, ev.cpu, ev.pid, ev.name.to_string()));
    }

    fn decode(&self) -> Decode {
        Decode::Everything
    }

    fn lost(&mut self, cpu: Option<u32>, count: Option<u64>) {
        let (cpu, count) = (cpu.unwrap_or(u32::MAX), count.unwrap_or(0));
        self.0.push((count, cpu, -1, "LOST".to_string()));
    }
}

/// A real recording with lost events (50 KB), read in 4 KB blocks so that it is 13 blocks.
fn read(sink: &mut (dyn EventSink + Send)) -> TraceInfo {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/fixtures/recorded/variants/lost/trace_pipe.txt"
    );
    let bytes = std::fs::read(path).unwrap();
    ftrace_text::read_bytes("lost", bytes, 4096, sink).unwrap()
}

#[test]
fn both_sides_see_every_record_in_file_order() {
    let mut alone = Seen::default();
    read(&mut alone);
    assert!(
        alone.0.iter().any(|r| r.3 == "LOST"),
        "the fixture has lost events"
    );
    assert!(alone.0.len() > 400, "{}", alone.0.len()); // 50 KB: 13 blocks of 4 KB
    let mut both = Parallel(Seen::default(), Seen::default());
    read(&mut both);
    assert_eq!(both.0, alone);
    assert_eq!(both.1, alone);
}

#[test]
fn analyses_in_parallel_say_what_they_say_alone() {
    let opts = || ExplainOptions {
        threshold_us: Some(50.0),
        ..ExplainOptions::default()
    };
    let mut alone = (
        Explain::new(opts()),
        Latency::new(LatencyOptions::default()),
    );
    let info = read(&mut alone);
    let mut both = Parallel(
        Explain::new(opts()),
        Latency::new(LatencyOptions::default()),
    );
    read(&mut both);
    assert_eq!(both.0.document(&info).json, alone.0.document(&info).json);
    assert_eq!(both.1.document(&info).json, alone.1.document(&info).json);
}
