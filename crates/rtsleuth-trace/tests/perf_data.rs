//! perf.data read against `perf script` of the same file, item for item. Each recorded fixture
//! `tests/fixtures/recorded/perf_data_*/` keeps the `perf.data` and what perf 6.1 printed for
//! it, `perf.data.script.txt.zst` (`perf script --ns -F comm,pid,tid,cpu,time,event,trace
//! --show-lost-events`, see each README). The text is taken apart here by plain string
//! splitting, which shares nothing with the reader.

mod typed;

use rtsleuth_trace::event::{Event, EventKind};
use rtsleuth_trace::input::{Format, Input};
use rtsleuth_trace::read::{self, EventSink, TraceInfo};
use std::path::{Path, PathBuf};
use std::sync::Once;
use typed::typed;

fn dir(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures/recorded")
        .join(name)
}

/// perf's build-id cache for the fixtures: the kernel symbols `perf script` named the timer
/// callbacks with (trimmed, see `perf_data_buildid/README.md`). Every test sets the same value,
/// so the order they run in does not matter.
fn symbols_from_fixture() {
    static SET: Once = Once::new();
    SET.call_once(|| std::env::set_var("PERF_BUILDID_DIR", dir("perf_data_buildid")));
}

/// One line of `perf script`, or one item rtsleuth handed to its sink, in the terms both share.
#[derive(Debug, PartialEq)]
enum Item {
    Event {
        ts: u64,
        cpu: u32,
        /// `None` where perf printed tid -1 (a task past its exit; rtsleuth names it by the
        /// record's common_pid instead, so the two are not compared).
        tid: Option<i32>,
        tgid: Option<i32>,
        comm: Option<String>,
        name: String,
        /// The scheduler and hrtimer fields, as `key=value`.
        fields: Vec<String>,
    },
    Lost {
        cpu: u32,
        count: u64,
    },
}

/// `value` of `key=value` in `payload`, where the value runs up to `until` (task names hold
/// blanks) or else to the next blank.
fn field<'a>(payload: &'a str, key: &str, until: Option<&str>) -> &'a str {
    let start = payload.find(&format!("{key}=")).unwrap() + key.len() + 1;
    let rest = &payload[start..];
    match until {
        Some(u) => &rest[..rest.find(u).unwrap()],
        None => rest.split(' ').next().unwrap(),
    }
}

fn kv(pairs: &[(&str, String)]) -> Vec<String> {
    pairs.iter().map(|(k, v)| format!("{k}={v}")).collect()
}

/// `      comm   pid/tid  [cpu] secs.nanos: system:event: payload`, or
/// `      comm   pid/tid  [cpu] secs.nanos: PERF_RECORD_LOST lost N`.
fn perf_line(line: &str) -> Item {
    let (task, rest) = line.split_once(" [").unwrap();
    let (cpu, rest) = rest.split_once("] ").unwrap();
    let cpu: u32 = cpu.parse().unwrap();
    let (time, rest) = rest.trim_start().split_once(": ").unwrap();
    let (secs, nanos) = time.split_once('.').unwrap();
    assert_eq!(nanos.len(), 9, "--ns: {line}");
    let ts = secs.parse::<u64>().unwrap() * 1_000_000_000 + nanos.parse::<u64>().unwrap();
    let rest = rest.trim_start();
    if let Some(n) = rest.strip_prefix("PERF_RECORD_LOST lost ") {
        return Item::Lost {
            cpu,
            count: n.trim().parse().unwrap(),
        };
    }
    let (comm, ids) = task.trim().rsplit_once(' ').unwrap();
    let comm = comm.trim_end();
    let (pid, tid) = ids.split_once('/').unwrap();
    let (pid, tid): (i32, i32) = (pid.parse().unwrap(), tid.parse().unwrap());
    let (event, payload) = rest
        .split_once(": ")
        .unwrap_or((rest.trim_end_matches(':'), ""));
    let name = event.split_once(':').unwrap().1.to_string();
    let p = payload.trim();
    let fields = match name.as_str() {
        "sched_switch" => {
            let mut state = field(p, "prev_state", Some(" ==>")).to_string();
            // rtsleuth keeps one state for an exiting task: a zombie is dead.
            if state == "Z" {
                state = "X".into();
            }
            kv(&[
                (
                    "prev_comm",
                    field(p, "prev_comm", Some(" prev_pid=")).into(),
                ),
                ("prev_pid", field(p, "prev_pid", None).into()),
                ("prev_prio", field(p, "prev_prio", None).into()),
                ("prev_state", state),
                (
                    "next_comm",
                    field(p, "next_comm", Some(" next_pid=")).into(),
                ),
                ("next_pid", field(p, "next_pid", None).into()),
                ("next_prio", field(p, "next_prio", None).into()),
            ])
        }
        "sched_waking" | "sched_wakeup" | "sched_wakeup_new" => kv(&[
            ("comm", field(p, "comm", Some(" pid=")).into()),
            ("pid", field(p, "pid", None).into()),
            ("prio", field(p, "prio", None).into()),
            (
                "target_cpu",
                field(p, "target_cpu", None)
                    .parse::<u32>()
                    .unwrap()
                    .to_string(),
            ),
        ]),
        "hrtimer_start" | "hrtimer_expire_entry" => {
            kv(&[("function", field(p, "function", None).into())])
        }
        _ => Vec::new(),
    };
    let comm = match comm {
        // A thread no COMM or FORK record named: perf prints `:tid`.
        c if c.starts_with(':') => "<...>",
        c => c,
    };
    Item::Event {
        ts,
        cpu,
        tid: (tid >= 0).then_some(tid),
        tgid: (pid >= 0).then_some(pid),
        comm: (tid >= 0).then(|| comm.to_string()),
        name,
        fields,
    }
}

/// What rtsleuth handed over, with perf's `-1` lines' task left out as in [`perf_line`].
struct Items {
    items: Vec<Item>,
    /// tids perf printed as -1, in order, to blank out the same fields here.
    unknown: Vec<bool>,
}

impl EventSink for Items {
    fn event(&mut self, ev: &Event<'_>) {
        // Only the fields the perf script side compares: the scheduler's and the callbacks'.
        let compared = matches!(
            ev.kind,
            EventKind::SchedSwitch { .. }
                | EventKind::SchedWaking { .. }
                | EventKind::SchedWakeup { .. }
                | EventKind::SchedWakeupNew { .. }
                | EventKind::HrtimerStart { .. }
                | EventKind::HrtimerExpireEntry { .. }
        );
        let fields = if compared {
            kv(&typed(&ev.kind))
        } else {
            Vec::new()
        };
        let known = !self.unknown.get(self.items.len()).copied().unwrap_or(false);
        self.items.push(Item::Event {
            ts: ev.ts,
            cpu: ev.cpu,
            tid: known.then_some(ev.pid),
            tgid: ev.tgid,
            comm: known.then(|| ev.comm.to_string()),
            name: ev.name.to_string(),
            fields,
        });
    }

    fn lost(&mut self, cpu: Option<u32>, count: Option<u64>) {
        self.items.push(Item::Lost {
            cpu: cpu.unwrap(),
            count: count.unwrap(),
        });
    }
}

fn perf_script(name: &str) -> Vec<Item> {
    let z = std::fs::read(dir(name).join("perf.data.script.txt.zst")).unwrap();
    let text = String::from_utf8(zstd::stream::decode_all(&z[..]).unwrap()).unwrap();
    text.lines().map(perf_line).collect()
}

fn read_perf_data(name: &str, want: &[Item]) -> (Vec<Item>, TraceInfo) {
    symbols_from_fixture();
    let unknown = want
        .iter()
        .map(|i| matches!(i, Item::Event { tid: None, .. }))
        .collect();
    let mut sink = Items {
        items: Vec::new(),
        unknown,
    };
    let path = dir(name).join("perf.data");
    let input = Input::open(path.to_str().unwrap()).unwrap();
    assert_eq!(input.format, Format::PerfData);
    let info = read::read(input, &mut sink).unwrap();
    (sink.items, info)
}

fn ts(i: &Item) -> Option<u64> {
    match i {
        Item::Event { ts, .. } => Some(*ts),
        Item::Lost { .. } => None,
    }
}

fn cpu(i: &Item) -> u32 {
    match i {
        Item::Event { cpu, .. } | Item::Lost { cpu, .. } => *cpu,
    }
}

/// Asserts `got` is `want` item for item, except that events of different CPUs at the same
/// nanosecond may come in another order; returns how many such groups were reordered.
///
/// perf orders equal times by their place in the file. Inside compressed records the crate's
/// sort has no place to go by (its order of ties there is unspecified), so only the set of
/// events at one time is compared, in CPU order.
fn compare(got: &[Item], want: &[Item], name: &str) -> usize {
    let mut reordered = 0;
    let mut i = 0;
    while i < want.len() {
        if got[i] == want[i] {
            i += 1;
            continue;
        }
        let t = ts(&want[i]);
        assert!(
            t.is_some() && ts(&got[i]) == t,
            "{name}: line {}: {:?} != {:?}",
            i + 1,
            got[i],
            want[i]
        );
        let end = i + want[i..].iter().take_while(|w| ts(w) == t).count();
        let (mut g, mut w): (Vec<&Item>, Vec<&Item>) =
            (got[i..end].iter().collect(), want[i..end].iter().collect());
        g.sort_by_key(|x| cpu(x));
        w.sort_by_key(|x| cpu(x));
        assert_eq!(g, w, "{name}: lines {}..{}", i + 1, end);
        let cpus: Vec<u32> = want[i..end].iter().map(cpu).collect();
        assert!(
            cpus.windows(2).any(|w| w[0] != w[1]),
            "{name}: a tie on one CPU reordered at line {}",
            i + 1
        );
        reordered += 1;
        i = end;
    }
    reordered
}

/// Every fixture, event for event and loss for loss, in perf's order: (fixture, events, lines
/// where perf printed tid -1, PERF_RECORD_LOST lines, groups of events at one nanosecond on
/// several CPUs that came in another order).
#[test]
fn every_event_is_the_one_perf_script_printed() {
    for (name, events, exited, lost, reordered) in [
        ("perf_data_sched", 9259, 59, 0, 0),
        ("perf_data_hog", 17713, 2, 0, 0),
        ("perf_data_zstd", 17957, 192, 0, 1),
        ("perf_data_lost", 9991, 0, 1, 0),
    ] {
        let want = perf_script(name);
        let (got, info) = read_perf_data(name, &want);
        let count = |items: &[Item], f: fn(&Item) -> bool| items.iter().filter(|i| f(i)).count();
        let is_event = |i: &Item| matches!(i, Item::Event { .. });
        assert_eq!(count(&want, is_event), events, "{name}: perf's events");
        assert_eq!(
            count(&want, |i| matches!(i, Item::Event { tid: None, .. })),
            exited,
            "{name}"
        );
        assert_eq!(
            count(&want, |i| matches!(i, Item::Lost { .. })),
            lost,
            "{name}"
        );
        assert_eq!(got.len(), want.len(), "{name}: items");
        assert_eq!(
            compare(&got, &want, name),
            reordered,
            "{name}: ties reordered"
        );
        assert_eq!(info.events, events as u64, "{name}");
        assert_eq!(info.out_of_order, 0, "{name}");
        assert_eq!(info.header.perf_version.as_deref(), Some("6.1.187"));
        assert_eq!(info.kernel.as_deref(), Some("6.18.44-fc-v595"));
        assert_eq!(info.header.nr_cpus, Some(2));
        assert_eq!(info.cpus, [0, 1], "{name}");
    }
}

/// The hog recording names cyclictest's timer callback: the symbols came from the build-id
/// cache, so explain can tell its own timer.
#[test]
fn timer_callbacks_are_named_from_the_build_id_cache() {
    let want = perf_script("perf_data_hog");
    let (got, info) = read_perf_data("perf_data_hog", &want);
    let wakeups = got
        .iter()
        .filter(
            |i| matches!(i, Item::Event { fields, .. } if fields == &["function=hrtimer_wakeup"]),
        )
        .count();
    assert!(wakeups > 1000, "{wakeups}");
    assert!(
        !info.warnings().iter().any(|w| w.contains("kernel symbols")),
        "{:?}",
        info.warnings()
    );
}

/// `perf record -m 1` under a context-switch storm: one `PERF_RECORD_LOST` of 805 records on
/// CPU 0 in place, and perf's end-of-run summary (`LOST_SAMPLES`, 977 in all: 370+2+301+1+301+2
/// over the three events' two CPUs) as the total and a note.
#[test]
fn lost_records_are_losses_in_place_and_the_summary_a_note() {
    let want = perf_script("perf_data_lost");
    let (got, info) = read_perf_data("perf_data_lost", &want);
    let lost: Vec<&Item> = got
        .iter()
        .filter(|i| matches!(i, Item::Lost { .. }))
        .collect();
    assert_eq!(lost, [&Item::Lost { cpu: 0, count: 805 }]);
    assert_eq!((info.lost_events, info.lines.lost_markers), (977, 1));
    let w = info.warnings();
    assert!(
        w.iter()
            .any(|w| w.contains("977 samples lost in all")
                && w.contains("805 of them at known places")),
        "{w:?}"
    );
}
