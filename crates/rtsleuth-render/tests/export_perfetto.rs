//! `export::perfetto` read back by rtsleuth's own Perfetto reader: every event the export
//! carries comes back equal (time, CPU, pid, comm, thread group, kind and typed fields), and
//! `explain` finds the same late wake-ups in the export as in the input. On a recorded ftrace
//! text trace, a trace.dat, the lab's hardirq run (text and trace.dat) and the realworld
//! Android Perfetto traces.

#[path = "../../rtsleuth-trace/tests/shared_fixtures/mod.rs"]
mod shared_fixtures;

use rtsleuth_analyze::explain::{Explain, ExplainOptions, Outline};
use rtsleuth_render::export::perfetto::{PerfettoExport, Summary};
use rtsleuth_trace::event::{Event, EventKind, MarkerKind};
use rtsleuth_trace::input::Input;
use rtsleuth_trace::read::{self, Decode, EventSink};
use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};

/// An event as owned data; the kind as its `Debug` text, which holds every typed field.
#[derive(Debug, Clone, PartialEq)]
struct Seen {
    ts: u64,
    cpu: u32,
    pid: i32,
    comm: String,
    tgid: Option<i32>,
    kind: String,
    /// The comm the event's own fields give its task (`sched_switch` `prev_comm`…).
    own_comm: Option<String>,
}

/// Collects the events the export carries (a test may keep every event of a small trace).
#[derive(Default)]
struct Collect(Vec<Seen>);

/// The kinds the export writes (its module doc), listed here again as the test's own claim.
fn carried(kind: &EventKind<'_>) -> bool {
    use EventKind::*;
    matches!(
        kind,
        SchedSwitch { .. }
            | SchedWaking { .. }
            | SchedWakeup { .. }
            | SchedWakeupNew { .. }
            | SchedMigrateTask { .. }
            | SchedProcessFork { .. }
            | SchedProcessExit { .. }
            | IrqHandlerEntry { .. }
            | IrqHandlerExit { .. }
            | SoftirqRaise { .. }
            | SoftirqEntry { .. }
            | SoftirqExit { .. }
            | HrtimerStart { .. }
            | HrtimerExpireEntry { .. }
            | HrtimerExpireExit { .. }
            | HrtimerCancel { .. }
            | IrqVectorEntry(_)
            | IrqVectorExit(_)
            | IpiRaise { .. }
            | IpiEntry { .. }
            | IpiExit { .. }
            | IrqDisable { .. }
            | IrqEnable { .. }
            | PreemptDisable { .. }
            | PreemptEnable { .. }
            | Marker { .. }
    )
}

impl EventSink for Collect {
    fn event(&mut self, ev: &Event<'_>) {
        if !carried(&ev.kind) {
            return;
        }
        // Perfetto has one marker event, `print`: every marker comes back as one.
        let kind = match ev.kind {
            EventKind::Marker { text, .. } => EventKind::Marker {
                kind: MarkerKind::Print,
                text,
            },
            k => k,
        };
        self.0.push(Seen {
            ts: ev.ts,
            cpu: ev.cpu,
            pid: ev.pid,
            comm: ev.comm.to_string(),
            tgid: ev.tgid,
            kind: format!("{kind:?}"),
            own_comm: own_comm(ev).map(str::to_string),
        });
    }

    fn decode(&self) -> Decode {
        Decode::Everything
    }
}

/// The comm `ev`'s fields give the task it ran in, if they name it (the idle task is always
/// `<idle>`).
fn own_comm<'a>(ev: &Event<'a>) -> Option<&'a str> {
    if ev.pid <= 0 {
        return None;
    }
    match ev.kind {
        EventKind::SchedSwitch {
            prev_comm,
            prev_pid,
            next_comm,
            next_pid,
            ..
        } => match ev.pid {
            p if p == prev_pid => Some(prev_comm),
            p if p == next_pid => Some(next_comm),
            _ => None,
        },
        EventKind::SchedWaking { comm, pid, .. }
        | EventKind::SchedWakeup { comm, pid, .. }
        | EventKind::SchedWakeupNew { comm, pid, .. }
        | EventKind::SchedMigrateTask { comm, pid, .. }
        | EventKind::SchedProcessExit { comm, pid, .. }
            if pid == ev.pid =>
        {
            Some(comm)
        }
        _ => None,
    }
}

fn fixture(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures")
        .join(rel)
}

fn read_into(path: &Path, sink: &mut (dyn EventSink + Send)) {
    let input = Input::open(path.to_str().unwrap()).unwrap();
    read::read(input, sink).unwrap();
}

/// Exports `input` (explain's default targets) and returns the export's summary, the input's
/// events and findings, and the export's events and findings, read back.
struct RoundTrip {
    summary: Summary,
    bytes: u64,
    before: Vec<Seen>,
    after: Vec<Seen>,
    findings_before: Vec<Outline>,
    findings_after: Vec<Outline>,
}

fn round_trip(input: &Path) -> RoundTrip {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("export.pftrace");
    let export = PerfettoExport::new("export", BufWriter::new(File::create(&out).unwrap()));
    let mut sinks = (
        (Explain::new(ExplainOptions::default()), Collect::default()),
        export,
    );
    read_into(input, &mut sinks);
    let ((mut explain, before), export) = sinks;
    let findings_before = explain.outlines();
    let summary = export.finish(&findings_before).unwrap();

    let mut again = (Explain::new(ExplainOptions::default()), Collect::default());
    read_into(&out, &mut again);
    let (mut explain, after) = again;
    RoundTrip {
        summary,
        bytes: std::fs::metadata(&out).unwrap().len(),
        before: sorted(before.0),
        after: sorted(after.0),
        findings_before,
        findings_after: explain.outlines(),
    }
}

/// Events in (time, CPU) order, the order the Perfetto reader merges CPUs in; events of one
/// CPU keep their order.
fn sorted(mut v: Vec<Seen>) -> Vec<Seen> {
    v.sort_by_key(|s| (s.ts, s.cpu));
    v
}

/// Every event back, equal. Its comm where the input knew it (`<...>` is no name), except
/// that an event whose own fields name its task otherwise (trace-cmd prints the comm it saved
/// last, which may be a later one) comes back with the name its fields give. Returns how many
/// events that was.
fn assert_events_equal(rt: &RoundTrip) -> usize {
    assert_eq!(rt.before.len(), rt.after.len(), "event counts");
    assert_eq!(rt.summary.events, rt.before.len() as u64);
    let mut renamed = 0;
    for (i, (a, b)) in rt.before.iter().zip(&rt.after).enumerate() {
        assert_eq!(
            (a.ts, a.cpu, a.pid, &a.kind),
            (b.ts, b.cpu, b.pid, &b.kind),
            "event {i}"
        );
        let want = match &a.own_comm {
            Some(own) if *own != a.comm => {
                renamed += 1;
                own
            }
            _ => &a.comm,
        };
        if a.comm != "<...>" {
            assert_eq!(*want, b.comm, "comm of event {i}: {a:?} / {b:?}");
        }
        if a.tgid.is_some() {
            assert_eq!(a.tgid, b.tgid, "tgid of event {i}: {a:?} / {b:?}");
        }
    }
    renamed
}

/// The same findings: task, times, and every stretch's kind, span, culprit and detail. The
/// export carries no context flags (Perfetto records them only on request, and not the preempt
/// depth), so the words a flag adds to a detail are not compared.
fn assert_same_findings(rt: &RoundTrip) {
    fn without_flags(mut f: Vec<Outline>) -> Vec<Outline> {
        let strip = |s: &mut String| *s = s.replace("; need-resched (N) was set", "");
        for o in &mut f {
            strip(&mut o.summary);
            o.timeline.iter_mut().for_each(|s| strip(&mut s.detail));
        }
        f
    }
    assert!(!rt.findings_before.is_empty());
    assert_eq!(
        without_flags(rt.findings_before.clone()),
        without_flags(rt.findings_after.clone())
    );
}

#[test]
fn recorded_text_trace_round_trips_with_the_same_findings() {
    let rt = round_trip(&fixture("recorded/fifo_above/trace.txt"));
    assert_events_equal(&rt);
    assert_same_findings(&rt);
    // `rtsleuth stats`: 20448 events, of which sched_stat_runtime, hrtimer_setup, timer_*,
    // tick_stop… are not carried.
    assert_eq!(rt.summary.events, 16580);
    assert_eq!(rt.summary.events + rt.summary.skipped, 20448);
    // 5 findings: 3 stretches each but one with 4 (22 slices with the 5 enclosing ones), one
    // flow per stretch with a culprit.
    assert_eq!(rt.summary.findings, 5);
    let stretches: usize = rt.findings_before.iter().map(|f| f.timeline.len()).sum();
    assert_eq!(rt.summary.slices, stretches as u64 + 5);
    let culprits = rt
        .findings_before
        .iter()
        .flat_map(|f| &f.timeline)
        .filter(|s| s.culprit.is_some())
        .count();
    assert_eq!(rt.summary.flows, culprits as u64);
    println!("fifo_above: {:?}, {} bytes", rt.summary, rt.bytes);
}

#[test]
fn trace_dat_round_trips() {
    let rt = round_trip(&fixture("tracedat/trace.dat"));
    // `rtsleuth stats`: 20009 events, sched_stat_runtime, timer_* and the like not carried.
    assert_eq!((rt.summary.events, rt.summary.skipped), (15766, 4243));
    assert_events_equal(&rt);
    println!("trace.dat: {:?}, {} bytes", rt.summary, rt.bytes);
}

/// The done-when: the lab's hardirq run exported, read back equal, with the finding
/// that names the culprit callback.
#[test]
fn lab_hardirq_export_round_trips() {
    for trace in [
        "lab/rt/hardirq/trace.txt.zst",
        "lab/rt/hardirq/trace.dat.zst",
    ] {
        let rt = round_trip(&fixture(trace));
        assert_events_equal(&rt);
        assert_same_findings(&rt);
        // Text and trace.dat of one run hold the same events.
        assert_eq!(
            (rt.summary.events, rt.summary.skipped),
            (16359, 2980),
            "{trace}"
        );
        let worst = &rt.findings_before[0];
        assert_eq!(worst.pid, 194, "{trace}");
        assert!(
            worst.timeline.iter().any(|s| s
                .culprit
                .as_deref()
                .is_some_and(|c| c.contains("hardirq_fire"))),
            "{trace}: {worst:?}"
        );
        println!("{trace}: {:?}, {} bytes", rt.summary, rt.bytes);
    }
}

#[test]
fn realworld_perfetto_traces_round_trip() {
    let Some(dir) = shared_fixtures::realworld("ms-perf-tools-linux-android/TestData/Perfetto")
    else {
        return;
    };
    // Events carried, and left out (cpu_idle, cpu_frequency, workqueue, sys_*… of
    // tests/fixtures/perfetto/*.expected.json).
    for (name, events, skipped) in [
        ("perfetto_android12_cpuschedstack.pftrace", 51374, 12913),
        (
            "perfetto_trace_cpu_sampling_not_scoped.pftrace",
            55716,
            8199,
        ),
        ("test_trace.perfetto-trace", 24014, 11863),
    ] {
        let rt = round_trip(&dir.join(name));
        assert_eq!(
            (rt.summary.events, rt.summary.skipped),
            (events, skipped),
            "{name}"
        );
        assert_events_equal(&rt);
        println!("{name}: {:?}, {} bytes", rt.summary, rt.bytes);
    }
}
