//! The trace clock: named where the file names it, and counter clocks (raw cycle or event
//! counts, not time) never measured as if they were nanoseconds. Fixtures in
//! `tests/fixtures/tracedat/clock_*` (their READMEs say how they were recorded).

mod counting;

use counting::read_documents;
use rtsleuth_trace::input::Input;
use rtsleuth_trace::read::ftrace_text::TimestampUnit;
use rtsleuth_trace::read::{self, NullSink, TraceInfo};
use rtsleuth_trace::Error;
use std::path::PathBuf;

fn fixture(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures/tracedat")
        .join(rel)
}

fn info(rel: &str) -> TraceInfo {
    let input = Input::open(fixture(rel).to_str().unwrap()).unwrap();
    read::read(input, &mut NullSink).unwrap()
}

/// The refusal the measuring commands give, as text.
fn refusal(info: &TraceInfo) -> String {
    match info.require_time() {
        Err(e @ Error::CounterClock { .. }) => e.to_string(),
        other => panic!("{}: not refused: {other:?}", info.source),
    }
}

/// `by_hand.txt`: four lines whose timestamps are integers (1000, 1200, 601000, 602000).
#[test]
fn text_without_a_decimal_point_is_a_counter_and_is_not_time() {
    let bytes = std::fs::read(fixture("clock_counter/by_hand.txt")).unwrap();
    let (events, info, docs) = read_documents("by_hand.txt", bytes).unwrap();
    assert_eq!(events, 4);
    assert_eq!(info.timestamps, TimestampUnit::Counter);
    assert_eq!((info.clock.as_deref(), info.clock_ns()), (None, false));
    // The raw counts are kept as they are (no unit is made up for them).
    assert_eq!((info.first_ts, info.last_ts), (Some(1000), Some(602000)));
    let msg = refusal(&info);
    assert!(
        msg.starts_with("by_hand.txt: its timestamps are raw counts of a counter trace clock"),
        "{msg}"
    );
    assert!(msg.contains("-C mono") && msg.contains("tsc2nsec"), "{msg}");
    // Every JSON `trace` object says so; stats reads the trace.
    for doc in &docs {
        assert_eq!(doc["trace"]["clock"], serde_json::Value::Null, "{doc}");
        assert_eq!(doc["trace"]["clock_ns"], false, "{doc}");
    }
    assert_eq!(docs[0]["events"], 4);
}

/// `clock_counter/trace.txt`: the kernel's `trace` file read with trace_clock `counter`.
#[test]
fn a_kernel_capture_on_the_counter_clock_is_refused() {
    let info = info("clock_counter/trace.txt");
    // `grep -c ': sched_' trace.txt`
    assert_eq!(info.events, 45);
    assert_eq!(info.timestamps, TimestampUnit::Counter);
    assert!(!info.clock_ns());
    refusal(&info);
}

/// `clock_x86_tsc/trace.dat`: extracted by trace-cmd with trace_clock `x86-tsc`, on a machine
/// whose TSC trace-cmd cannot convert (no TSC2NSEC option in the file).
#[test]
fn a_tracedat_on_x86_tsc_without_tsc2nsec_names_its_clock_and_is_refused() {
    let info = info("clock_x86_tsc/trace.dat");
    assert_eq!(info.clock.as_deref(), Some("x86-tsc"));
    assert!(!info.clock_ns());
    // `trace-cmd report trace.dat | grep -c ': sched_'`; its first and last lines print
    // 3939668328232 and 3939731872908, the raw TSC values, as the reader keeps them.
    assert_eq!(info.events, 67);
    assert_eq!(info.first_ts, Some(3_939_668_328_232));
    assert_eq!(info.last_ts, Some(3_939_731_872_908));
    let msg = refusal(&info);
    assert!(msg.contains("the `x86-tsc` trace clock"), "{msg}");
    // The kernel's own text of the same buffer prints the same first count.
    let text = std::fs::read_to_string(fixture("clock_x86_tsc/trace.txt")).unwrap();
    assert!(text.contains("[000] d..2. 3939668328232: sched_switch"));
}

/// trace.dat files on time clocks name them and are measured: `lost.dat` was recorded with
/// the default `local` clock (`trace-cmd dump --options`: `[local] global counter ...`).
#[test]
fn a_tracedat_on_a_time_clock_names_it() {
    let info = info("lost.dat");
    assert_eq!(info.clock.as_deref(), Some("local"));
    assert!(info.clock_ns());
    assert!(info.require_time().is_ok());
}

/// One line whose timestamp lost its decimal point is damage in a trace of seconds, not a
/// counter clock: the kernel prints every line of a buffer on one clock.
#[test]
fn one_damaged_timestamp_does_not_make_a_counter_trace() {
    let text = "\
          <idle>-0       [001] d.h3.   100.000000: sched_waking: comm=ct pid=7 prio=19 target_cpu=001
          <idle>-0       [001] d..2.   100.000010: sched_switch: prev_comm=swapper/1 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=ct next_pid=7 next_prio=19
              ct-7       [001] d..2.      100000020: sched_switch: prev_comm=ct prev_pid=7 prev_prio=19 prev_state=S ==> next_comm=swapper/1 next_pid=0 next_prio=120
";
    let (_, info, _) = read_documents("one.txt", text.as_bytes().to_vec()).unwrap();
    assert_eq!(info.timestamps, TimestampUnit::Seconds);
    assert!(info.require_time().is_ok());
}
