//! Numbers the input chooses never size what the program allocates: one damaged CPU number
//! in a text line, a Perfetto bundle or a trace.dat CPU table used to make the per-CPU state of
//! `latency` and `explain` grow to that number (128 GB for CPU 4,000,000,000) or run for ever.
//! Each input here runs through every analysis under a time limit; the damaged part is
//! skipped and said, the rest is read.

mod counting;

use counting::{read_documents, within};
use std::time::Duration;

/// Far more than any of these inputs needs (they are read in milliseconds), far less than
/// filling per-CPU state for billions of CPUs takes.
const LIMIT: Duration = Duration::from_secs(20);

/// Two good sched lines around one whose CPU column is 4,000,000,000.
const TEXT: &str = "\
          <idle>-0       [001] d.h3.   100.000000: sched_waking: comm=ct pid=7 prio=19 target_cpu=001
          <idle>-0 [4000000000] dNh4.   100.000002: sched_wakeup: comm=ct pid=7 prio=19 target_cpu=001
          <idle>-0       [001] d..2.   100.000010: sched_switch: prev_comm=swapper/1 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=ct next_pid=7 next_prio=19
";

#[test]
fn a_text_line_with_cpu_4000000000_is_a_line_not_understood() {
    let (events, info, docs) = within(LIMIT, || {
        read_documents("cpu.txt", TEXT.as_bytes().to_vec()).unwrap()
    });
    assert_eq!(events, 2);
    assert_eq!(info.cpus, [1]);
    assert_eq!(info.unparsed(), 1);
    let example = &info.unparsed_examples[0];
    assert_eq!(example.line, 2);
    assert!(example.text.contains("[4000000000]"), "{}", example.text);
    // The waking on CPU1 at 100.000000 and the switch-in at 100.000010: one wake-up of 10 us.
    let ct = &docs[1]["tasks"][0];
    assert_eq!(
        (&ct["pid"], &ct["wakeups"], &ct["max_us"]),
        (&7.into(), &1.into(), &10.0.into())
    );
}

/// A 2-event Perfetto trace: one bundle of CPU 0 (kept) and one of CPU 4,000,000,000
/// (skipped), each a `print` event. Encoded by hand below so the bytes are plain to see.
fn perfetto_bytes() -> Vec<u8> {
    // FtraceEvent { timestamp (1) = ts, pid (2) = 5, print (3) = { buf (2) = "x" } }
    let event = |ts: u8| -> Vec<u8> { vec![0x08, ts, 0x10, 5, 0x1a, 3, 0x12, 1, b'x'] };
    // FtraceEventBundle { cpu (1) = cpu varint, event (2) = [event] }
    let bundle = |cpu: &[u8], ts: u8| -> Vec<u8> {
        let ev = event(ts);
        let mut b = vec![0x08];
        b.extend(cpu);
        b.extend([0x12, ev.len() as u8]);
        b.extend(ev);
        b
    };
    // TracePacket { ftrace_events (1) = bundle }, framed as Trace.packet (1).
    let packet = |bundle: Vec<u8>| -> Vec<u8> {
        let mut p = vec![0x0a, bundle.len() as u8];
        p.extend(bundle);
        let mut framed = vec![0x0a, p.len() as u8];
        framed.extend(p);
        framed
    };
    // 4,000,000,000 as a varint: 0x80 0xd0 0xac 0xf3 0x0e.
    let mut bytes = packet(bundle(&[0], 10));
    bytes.extend(packet(bundle(&[0x80, 0xd0, 0xac, 0xf3, 0x0e], 20)));
    bytes
}

#[test]
fn a_perfetto_bundle_of_cpu_4000000000_is_skipped_with_its_offset() {
    let bytes = perfetto_bytes();
    assert_eq!(bytes.len(), 38);
    let (events, info, _) = within(LIMIT, move || read_documents("cpu.pftrace", bytes).unwrap());
    assert_eq!(events, 1);
    assert_eq!(info.cpus, [0]);
    // The first frame is 2 + 15 bytes: the second starts at byte 17.
    assert!(
        info.notes
            .iter()
            .any(|n| n.contains("from byte 17 on") && n.contains("CPU 4000000000")),
        "{:?}",
        info.notes
    );
}

/// `lost.dat` (two CPUs, trace-cmd v7) with CPU 0's entry in the top instance's CPU table
/// renamed CPU 4,000,000,000. The table follows the buffer's name (""), clock ("local"), page
/// size (4096) and CPU count (2): `u32 cpu, u64 offset, u64 size` per CPU.
fn tracedat_bytes() -> Vec<u8> {
    let dir =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/tracedat");
    let mut b = std::fs::read(dir.join("lost.dat")).unwrap();
    let mut table = b"\0local\0".to_vec();
    table.extend(4096u32.to_le_bytes());
    table.extend(2u32.to_le_bytes());
    let at = b.windows(table.len()).position(|w| w == table).unwrap() + table.len();
    assert_eq!(b[at..at + 4], 0u32.to_le_bytes());
    b[at..at + 4].copy_from_slice(&4_000_000_000u32.to_le_bytes());
    b
}

#[test]
fn a_tracedat_cpu_table_entry_of_cpu_4000000000_is_skipped_with_its_offset() {
    let (events, info, _) = within(LIMIT, || {
        read_documents("cpu.dat", tracedat_bytes()).unwrap()
    });
    assert!(events > 0);
    assert_eq!(info.cpus, [1]);
    // CPU 0's data is at byte 24576, 2797 bytes (`trace-cmd dump --flyrecord lost.dat`).
    assert!(
        info.notes
            .iter()
            .any(|n| n.contains("CPU 4000000000") && n.contains("at byte 24576 (2797 bytes)")),
        "{:?}",
        info.notes
    );
}

/// `graph` keeps per-CPU state by hash, so a large CPU column never cost memory there; it is
/// still a damaged line, counted as not understood with its line number like the text reader's.
#[test]
fn a_function_graph_line_with_cpu_9000_is_a_line_not_understood() {
    let text = "\
# tracer: function_graph
#
# CPU  DURATION                  FUNCTION CALLS
# |     |   |                     |   |   |   |
 0)               |  do_sys_open() {
 0)   0.153 us    |    getname();
 0)   1.000 us    |  }
 9000)   0.153 us    |    rcu_irq_enter();
 1)   2.000 us    |  vfs_read();
";
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("graph.txt");
    std::fs::write(&path, text).unwrap();
    let path = path.to_str().unwrap().to_string();
    let opts = rtsleuth_analyze::graph::GraphOptions {
        func: None,
        top: 10,
        threshold_us: 1.0,
    };
    let doc = within(LIMIT, move || {
        rtsleuth_analyze::graph::analyze(&path, &opts).unwrap()
    });
    assert_eq!(doc.json["trace"]["cpus"], serde_json::json!([0, 1]));
    let warned = doc
        .warnings
        .iter()
        .any(|w| w.contains("first at line 8") && w.contains("9000)"));
    assert!(warned, "{:?}", doc.warnings);
}

/// Found by the damage tests once they drove every analysis: a wake-up in place (ct-7 wakes
/// itself from a hard interrupt at 100.000100) whose interrupt, by the next damaged
/// timestamp, ended at 100.000050, before it began. `latency` and `explain` computed
/// 50 - 100 in unsigned nanoseconds (a panic in debug builds, 18 446 744 073 709 551 566 ns
/// in release); such a wake-up has no latency to measure, as a switch-in before the wake-up
/// has none.
#[test]
fn a_wakeup_in_place_that_ends_before_it_begins_is_not_measured() {
    let text = "\
              ct-7       [001] d.h3.   100.000100: sched_waking: comm=ct pid=7 prio=19 target_cpu=001
              ct-7       [001] d.h2.   100.000050: irq_handler_exit: irq=11 ret=handled
              ct-7       [001] .....   100.000060: sys_exit: NR 0 = 0
";
    let (events, _, docs) = within(LIMIT, || {
        read_documents("backwards.txt", text.as_bytes().to_vec()).unwrap()
    });
    assert_eq!(events, 3);
    let [_, latency, explain, ..] = docs;
    assert_eq!(
        latency["tasks"].as_array().map_or(0, Vec::len),
        0,
        "{latency}"
    );
    assert_eq!(
        explain["findings"].as_array().map_or(0, Vec::len),
        0,
        "{explain}"
    );
}
