//! Nanoseconds per line of the ftrace text line parser alone, on a trace recorded on a real
//! kernel, next to the cost of just finding the lines (the floor every reader pays).
//! `cargo bench -p rtsleuth-trace --bench parse_line`

use rtsleuth_trace::read::ftrace_text::{parse_line, Line, LineContext};
use rtsleuth_trace::read::Decode;
use std::hint::black_box;
use std::time::Instant;

fn main() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/fixtures/recorded/fifo_below/trace.txt"
    );
    let text = std::fs::read_to_string(path).expect("the recorded fixture");
    let lines: Vec<&str> = text.lines().collect();
    let rounds = 30;
    let time = |f: &dyn Fn(&str) -> usize| {
        let start = Instant::now();
        let mut n = 0;
        for _ in 0..rounds {
            for l in &lines {
                n += f(black_box(l));
            }
        }
        black_box(n);
        start.elapsed().as_nanos() as f64 / (rounds * lines.len()) as f64
    };
    let floor = time(&|l| memchr::memchr(b'\n', l.as_bytes()).unwrap_or(l.len()));
    let mut report = vec![("find the line end (floor)", floor)];
    for (what, decode) in [
        ("parse_line, decode nothing", Decode::Only(&[])),
        ("parse_line, decode sched events", Decode::SCHED),
        ("parse_line, decode everything", Decode::Everything),
    ] {
        let ctx = LineContext {
            decode,
            ..LineContext::default()
        };
        let ns = time(&|l| match parse_line(l, &ctx) {
            Line::Event(e, _) => e.pid as usize,
            _ => 0,
        });
        report.push((what, ns));
    }
    let bytes_per_line = text.len() as f64 / lines.len() as f64;
    println!(
        "{} lines of {path}, {bytes_per_line:.0} bytes/line",
        lines.len()
    );
    for (what, ns) in report {
        println!(
            "{what:<34} {ns:7.1} ns/line  {:7.0} MB/s on one core  {:5.1}x floor",
            bytes_per_line / ns * 1e3,
            ns / floor
        );
    }
}
