//! Fuzzes the ftrace text reader with both analyses attached: whatever the bytes, reading must
//! return a `TraceInfo` or an `Error` naming the input, never panic, and account for every line.

#![no_main]

use libfuzzer_sys::fuzz_target;
use rtsleuth_analyze::latency::{Latency, LatencyOptions};
use rtsleuth_analyze::stats::Stats;
use rtsleuth_trace::read::ftrace_text::{self, NonEvent};

const NAME: &str = "fuzz-input.txt";

fuzz_target!(|data: &[u8]| {
    // The first byte picks a small block size so block boundaries fall everywhere.
    let (chunk, bytes) = match data.split_first() {
        Some((&b, rest)) => (1 + usize::from(b % 128), rest),
        None => (64, data),
    };
    let mut sink = (Latency::new(LatencyOptions::default()), Stats::new());
    match ftrace_text::read_bytes(NAME, bytes.to_vec(), chunk, &mut sink) {
        Ok(info) => {
            let c = &info.lines;
            let lines = bytes.iter().filter(|&&b| b == b'\n').count() as u64
                + u64::from(bytes.last().is_some_and(|&b| b != b'\n'));
            assert_eq!(c.total, lines, "line count");
            let kinds: u64 = NonEvent::ALL.iter().map(|&k| c.get(k)).sum();
            assert_eq!(
                c.events + c.lost_markers + c.buffer_started + kinds,
                c.total,
                "lines by kind"
            );
            let _ = sink.0.document(&info);
            let _ = sink.1.document(&info);
        }
        Err(e) => assert!(
            e.to_string().contains(NAME),
            "error without the input name: {e}"
        ),
    }
});
