//! A Perfetto file whose pre-read finds a CPU with events, but whose every bundle of that CPU
//! fails to decode in the reading proper. Perfetto's buffer is a ring, so each CPU's history
//! begins at its first event and the common window waits for every CPU the pre-read named: here
//! it never opens, nothing is measured, and the report says why. The pre-read stops at a
//! bundle's first event once it knows the CPU, so damage after that event is only met later.
//!
//! The trace is encoded here byte by byte (protobuf's wire format, no code shared with the
//! reader), and the expected values are worked out by hand in each test's comment.

use rtsleuth_analyze::latency::{Latency, LatencyOptions};
use rtsleuth_trace::input::Input;
use serde_json::Value;
use std::io::Write;

fn varint(mut v: u64, out: &mut Vec<u8>) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// A varint field.
fn int(field: u64, v: u64) -> Vec<u8> {
    let mut out = Vec::new();
    varint(field << 3, &mut out);
    varint(v, &mut out);
    out
}

/// A length-delimited field (a string or a message).
fn bytes(field: u64, body: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    varint(field << 3 | 2, &mut out);
    varint(body.len() as u64, &mut out);
    out.extend_from_slice(body);
    out
}

/// An `FtraceEvent` at `ts` by `pid`, its body in field `kind`.
fn event(ts: u64, pid: u64, kind: u64, body: &[u8]) -> Vec<u8> {
    [int(1, ts), int(2, pid), bytes(kind, body)].concat()
}

/// `sched_switch` (field 4) from the idle task (state R) to `next`.
fn switch_from_idle(ts: u64, cpu: u64, next: (&str, u64, u64)) -> Vec<u8> {
    let body = [
        bytes(1, format!("swapper/{cpu}").as_bytes()),
        int(2, 0),
        int(3, 120),
        int(4, 0),
        bytes(5, next.0.as_bytes()),
        int(6, next.1),
        int(7, next.2),
    ]
    .concat();
    event(ts, 0, 4, &body)
}

/// `sched_waking` (field 20) of `rt`, pid 10, prio 9, onto CPU 0.
fn waking(ts: u64) -> Vec<u8> {
    let body = [bytes(1, b"rt"), int(2, 10), int(3, 9), int(5, 0)].concat();
    event(ts, 0, 20, &body)
}

/// A `TracePacket` (sequence 7) holding one `FtraceEventBundle`, in the `Trace` framing.
fn packet(cpu: u64, events: &[Vec<u8>], tail: &[u8]) -> Vec<u8> {
    let mut bundle = int(1, cpu);
    for e in events {
        bundle.extend(bytes(2, e));
    }
    bundle.extend_from_slice(tail);
    bytes(1, &[bytes(1, &bundle), int(10, 7)].concat())
}

/// CPU1 shows bash switched in at 900 ns; on CPU0 rt (pid 10) is woken at 1000 ns and switched
/// in at 1500 ns. `damage` appends to CPU1's bundle an event whose length runs past its end.
fn trace(damage: bool) -> Vec<u8> {
    let tail: &[u8] = if damage { &[0x12, 100] } else { &[] };
    let cpu1 = packet(1, &[switch_from_idle(900, 1, ("bash", 20, 120))], tail);
    let cpu0 = packet(
        0,
        &[waking(1000), switch_from_idle(1500, 0, ("rt", 10, 9))],
        &[],
    );
    [cpu1, cpu0].concat()
}

/// `latency`'s document for the trace read from a file (the pre-read needs one).
fn latency(bytes: &[u8]) -> (Value, Vec<String>) {
    let mut file = tempfile::NamedTempFile::new().unwrap();
    file.write_all(bytes).unwrap();
    let path = file.path().to_str().unwrap();
    let mut lat = Latency::new(LatencyOptions::default());
    let info = rtsleuth_trace::read::read(Input::open(path).unwrap(), &mut lat).unwrap();
    (lat.document(&info).json, info.notes)
}

fn wakeups_of_rt(doc: &Value) -> Option<&Value> {
    let tasks = doc["tasks"].as_array()?;
    tasks.iter().find(|t| t["pid"] == 10).map(|t| &t["wakeups"])
}

/// Undamaged: both CPUs are recorded from 1000 ns (CPU0's first event, the later of the two),
/// so rt's wake-up at 1000 ns is measured: 500 ns.
#[test]
fn every_cpu_read_opens_the_window() {
    let (doc, notes) = latency(&trace(false));
    assert!(notes.is_empty(), "{notes:?}");
    assert_eq!(wakeups_of_rt(&doc), Some(&Value::from(1)), "{doc}");
    assert_eq!(doc["trace"]["window_start"], 1e-6);
}

/// Damaged: the pre-read saw CPU1's bundle start with its CPU and an event, the reading proper
/// skipped the whole packet. CPU1 never shows an event, so no moment is known to have every CPU
/// recorded: rt's wake-up is not measured (one dropped before the window), a warning names
/// CPU1 without claiming the file said its buffer wrapped, and a note the skipped packet.
#[test]
fn a_cpu_whose_every_bundle_fails_keeps_the_window_closed_and_says_so() {
    let (doc, notes) = latency(&trace(true));
    assert_eq!(wakeups_of_rt(&doc), Some(&Value::from(0)), "{doc}");
    assert_eq!(doc["trace"]["dropped_before_window"], 1);
    let warnings: Vec<&str> = (doc["warnings"].as_array().unwrap().iter())
        .filter_map(Value::as_str)
        .collect();
    let starts = |lines: &[&str], with: &str| lines.iter().any(|l| l.starts_with(with));
    assert!(
        starts(&warnings, "CPU [1] recorded no event"),
        "{warnings:?}"
    );
    // A Perfetto file does not say that its ring buffer wrapped: the warning says what the rule
    // assumes (claims.md, V1), not that the trace stated it.
    let silent = warnings.iter().find(|w| w.starts_with("CPU [1]")).unwrap();
    assert!(silent.contains("may have been overwritten"), "{silent}");
    assert!(!silent.contains("the trace says"), "{silent}");
    let notes: Vec<&str> = notes.iter().map(String::as_str).collect();
    let skipped = "1 TracePacket from byte 0 on could not be decoded";
    assert!(starts(&notes, skipped), "{notes:?}");
}
