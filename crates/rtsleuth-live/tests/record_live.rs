//! The capture on the running kernel: scheduler, IRQ and timer events recorded for a second
//! under load, written as trace.dat, then read by `trace-cmd report` and by rtsleuth, which
//! must agree event for event; the kernel's own counters must match what the file holds.
//!
//! Needs root and tracefs; skipped with a message otherwise, failed under CI. It records into
//! a private instance through a tracefs session, which removes it again, on failure too.

mod tracedat_peer;

use rtsleuth_analyze::stats::Stats;
use rtsleuth_live::cpus::CpuList;
use rtsleuth_live::record::{write_tracedat, RawCapture, TraceMeta, WaitEnd};
use rtsleuth_live::testing::live_tracefs;
use rtsleuth_live::tracefs::{Buffer, Session, Tracefs};
use rtsleuth_trace::input::Input;
use rtsleuth_trace::read;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

const EVENTS: &[&str] = &[
    "sched:sched_switch",
    "sched:sched_waking",
    "sched:sched_wakeup",
    "irq:irq_handler_entry",
    "irq:irq_handler_exit",
    "irq:softirq_raise",
    "irq:softirq_entry",
    "irq:softirq_exit",
    "timer:hrtimer_start",
    "timer:hrtimer_expire_entry",
    "timer:hrtimer_expire_exit",
    "timer:timer_start",
    "timer:timer_expire_entry",
    "timer:timer_expire_exit",
];

/// Threads that sleep and wake for `d`: switches, wake-ups and timers on every CPU.
fn load(d: Duration) -> Vec<JoinHandle<()>> {
    let end = Instant::now() + d;
    (0..4)
        .map(|_| {
            std::thread::spawn(move || {
                while Instant::now() < end {
                    std::thread::sleep(Duration::from_micros(300));
                }
            })
        })
        .collect()
}

#[test]
fn a_recorded_trace_reads_the_same_in_trace_cmd_and_rtsleuth() {
    let Some((root, _lock)) = live_tracefs() else {
        return;
    };
    let tracefs = Tracefs::at(&root);
    let dir = tempfile::tempdir().unwrap();
    let cpus = CpuList::online().unwrap();
    let mut session = Session::new(&tracefs, Buffer::private()).unwrap();
    let events: Vec<String> = EVENTS.iter().map(|e| e.to_string()).collect();
    session.enable_events(&events).unwrap();
    let capture = RawCapture::start(session.dir(), &cpus, dir.path()).unwrap();
    session.tracing_on(true).unwrap();
    let workers = load(Duration::from_secs(1));
    let (never, raised) = (AtomicBool::new(false), AtomicBool::new(true));
    let waited = Instant::now();
    assert_eq!(
        capture.wait(Some(Duration::from_secs(1)), &never),
        WaitEnd::Elapsed
    );
    assert!(waited.elapsed() >= Duration::from_secs(1));
    // Ctrl-C: the flag raised ends the wait at once.
    assert_eq!(capture.wait(None, &raised), WaitEnd::Stopped);
    for w in workers {
        w.join().unwrap();
    }
    session.tracing_on(false).unwrap();
    let capture = capture.finish().unwrap();
    let meta = TraceMeta::gather(&root, session.dir()).unwrap();
    session.restore().unwrap();

    let out = dir.path().join("trace.dat");
    write_tracedat(&out, &meta, &capture).unwrap();
    let (ours, info) = tracedat_peer::ours(&out);
    assert!(ours.len() > 1000, "only {} events in a second", ours.len());
    assert_eq!(capture.lost_events(), 0, "{:?}", capture.cpus);

    // (c) Every CPU reported; the kernel's count of events read is what the file holds.
    assert_eq!(
        capture.cpus.iter().map(|c| c.cpu).collect::<Vec<_>>(),
        cpus.as_slice()
    );
    for c in &capture.cpus {
        let in_file = ours.iter().filter(|r| r.1 as usize == c.cpu).count() as u64;
        assert_eq!(c.stats.read_events, in_file, "cpu {}", c.cpu);
        assert!(c.stats_text.contains("entries:"), "{}", c.stats_text);
    }
    assert_eq!(capture.read_events(), info.events);
    assert_eq!(
        capture.bytes(),
        std::fs::metadata(&out).unwrap().len() - header_bytes(&out)
    );

    // (a) trace-cmd reads the same events, in the same order, at the same times.
    let Some((peer, text)) = tracedat_peer::trace_cmd(&out) else {
        return;
    };
    let head = |r: &tracedat_peer::ReportRow| (r.0, r.1, r.2, r.4.clone());
    assert_eq!(peer.len(), ours.len(), "{}", &text[..text.len().min(2000)]);
    assert_eq!(
        (peer[0].0, peer[peer.len() - 1].0),
        (info.first_ts.unwrap(), info.last_ts.unwrap())
    );
    let first_diff = peer.iter().zip(&ours).position(|(p, o)| head(p) != head(o));
    assert_eq!(first_diff, None);

    // (b) rtsleuth stats counts each event as trace-cmd does.
    let mut stats = Stats::new();
    let info = read::read(Input::open(out.to_str().unwrap()).unwrap(), &mut stats).unwrap();
    let doc = stats.document(&info).json;
    let ours_per_event: BTreeMap<String, u64> =
        serde_json::from_value(doc["per_event"].clone()).unwrap();
    let mut peer_per_event = BTreeMap::new();
    for r in &peer {
        *peer_per_event.entry(r.4.clone()).or_insert(0u64) += 1;
    }
    assert_eq!(ours_per_event, peer_per_event);
    assert!(ours_per_event["sched_switch"] > 100, "{ours_per_event:?}");
}

/// Where the first CPU's pages start: the file minus its pages.
fn header_bytes(path: &Path) -> u64 {
    let stat = std::process::Command::new("trace-cmd")
        .args(["report", "--stat", "-i"])
        .arg(path)
        .output();
    let Ok(o) = stat else {
        return 0;
    };
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    let re = regex::Regex::new(r"CPU\d+ data recorded at offset=0x([0-9a-f]+)").unwrap();
    re.captures_iter(&text)
        .map(|c| u64::from_str_radix(&c[1], 16).unwrap())
        .min()
        .unwrap_or(0)
}

#[test]
fn a_directory_without_per_cpu_buffers_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let e = RawCapture::start(dir.path(), &CpuList::from(vec![0]), dir.path())
        .err()
        .expect("no tracefs there");
    let msg = e.to_string();
    assert!(
        msg.contains(&format!("{}/per_cpu", dir.path().display()))
            && msg.contains("not a tracefs buffer"),
        "{msg}"
    );
}
