//! `write_compact` read back by rtsleuth's Perfetto reader: exactly the events it says it
//! wrote, every interned comm and kernel symbol resolved, in order, nothing lost.

use std::collections::{BTreeMap, HashMap};
use std::io::Cursor;

use rtsleuth_trace::event::{Event, EventKind, UNKNOWN_PID};
use rtsleuth_trace::input::Input;
use rtsleuth_trace::read::{self, Decode, EventSink, TraceInfo};
use rtsleuth_tracegen::{write_compact, CompactCounts, CompactSpec};

#[derive(Default)]
struct Seen {
    per_name: BTreeMap<String, u64>,
    /// Each pid's comm as compact switches (interned) name it.
    switch_comm: HashMap<i32, String>,
    /// Each pid's comm as compact wakings (interned) name it.
    waking_comm: HashMap<i32, String>,
    /// Each pid's comm as ordinary `sched_wakeup` events (plain strings) name it.
    wakeup_comm: HashMap<i32, String>,
    last_ts_per_cpu: HashMap<u32, u64>,
    backwards: u64,
    unknown_prev: u64,
    problems: Vec<String>,
}

impl EventSink for Seen {
    fn event(&mut self, ev: &Event<'_>) {
        *self.per_name.entry(ev.name.to_string()).or_default() += 1;
        let ts = ev.ts;
        let last = self.last_ts_per_cpu.entry(ev.cpu).or_insert(0);
        if ts < *last {
            self.backwards += 1;
        }
        *last = ts;
        match ev.kind {
            EventKind::SchedSwitch {
                prev_pid,
                next_comm,
                next_pid,
                ..
            } => {
                if next_pid == 0 && next_comm != format!("swapper/{}", ev.cpu) {
                    self.problems
                        .push(format!("CPU {} idles as {next_comm}", ev.cpu));
                }
                if prev_pid == UNKNOWN_PID {
                    self.unknown_prev += 1;
                }
                if next_pid != 0 {
                    same(
                        &mut self.problems,
                        &mut self.switch_comm,
                        next_pid,
                        next_comm,
                        "switch",
                    );
                }
            }
            EventKind::SchedWaking { comm, pid, .. } => same(
                &mut self.problems,
                &mut self.waking_comm,
                pid,
                comm,
                "waking",
            ),
            EventKind::SchedWakeup { comm, pid, .. } => same(
                &mut self.problems,
                &mut self.wakeup_comm,
                pid,
                comm,
                "wakeup",
            ),
            _ => {}
        }
        if ev.name == "hrtimer_expire_entry" || ev.name == "hrtimer_start" {
            let named = [
                "tick_sched_timer",
                "hrtimer_wakeup",
                "sched_rt_period_timer",
                "it_real_fn",
                "watchdog_timer_fn",
            ]
            .iter()
            .any(|f| ev.payload.contains(&format!("function={f} ")));
            if !named {
                self.problems
                    .push(format!("{} without a symbol: {}", ev.name, ev.payload));
            }
        }
    }

    fn decode(&self) -> Decode {
        Decode::Everything
    }
}

/// Notes a problem when `pid` was named other than `comm` before.
fn same(
    problems: &mut Vec<String>,
    names: &mut HashMap<i32, String>,
    pid: i32,
    comm: &str,
    what: &str,
) {
    let known = names.entry(pid).or_insert_with(|| comm.to_string());
    if known != comm {
        problems.push(format!("{what}: pid {pid} is {comm}, earlier {known}"));
    }
}

fn expected(n: &CompactCounts) -> BTreeMap<String, u64> {
    [
        ("sched_switch", n.switches),
        ("sched_waking", n.wakings),
        ("sched_wakeup", n.wakeups),
        ("irq_handler_entry", n.irq_entries),
        ("irq_handler_exit", n.irq_exits),
        ("softirq_raise", n.softirq_raises),
        ("softirq_entry", n.softirq_entries),
        ("softirq_exit", n.softirq_exits),
        ("hrtimer_start", n.hrtimer_starts),
        ("hrtimer_expire_entry", n.hrtimer_expire_entries),
        ("hrtimer_expire_exit", n.hrtimer_expire_exits),
        ("cpu_idle", n.cpu_idles),
        ("print", n.prints),
    ]
    .into_iter()
    .filter(|&(_, v)| v > 0)
    .map(|(k, v)| (k.to_string(), v))
    .collect()
}

fn generate(spec: &CompactSpec) -> (Vec<u8>, CompactCounts) {
    let mut bytes = Vec::new();
    let counts = write_compact(&mut bytes, spec).unwrap();
    assert_eq!(counts.bytes, bytes.len() as u64);
    (bytes, counts)
}

fn read_back(name: &str, input: Input) -> (Seen, TraceInfo) {
    let mut seen = Seen::default();
    let info = read::read(input, &mut seen).unwrap_or_else(|e| panic!("{name}: {e}"));
    (seen, info)
}

fn check(spec: &CompactSpec, seen: &Seen, info: &TraceInfo, counts: &CompactCounts) {
    assert_eq!(seen.per_name, expected(counts));
    assert_eq!(info.events, counts.events());
    assert!(counts.events() >= spec.events, "{counts:?}");
    assert_eq!(info.lost_events, 0);
    assert_eq!(info.out_of_order, 0);
    assert_eq!(seen.backwards, 0);
    assert!(info.notes.is_empty(), "{:?}", info.notes);
    assert_eq!(info.cpus, (0..spec.cpus).collect::<Vec<_>>());
    assert!(
        seen.problems.is_empty(),
        "{:?}",
        &seen.problems[..5.min(seen.problems.len())]
    );
    // A compact switch names only the task switched to: what ran before is unknown only at
    // each CPU's first switch.
    assert_eq!(seen.unknown_prev, u64::from(spec.cpus));
    // Interned comms (switch and waking columns) name every task as its plain-string
    // sched_wakeup does, and every task of the table turns up.
    for (pid, comm) in &seen.waking_comm {
        assert_eq!(seen.wakeup_comm.get(pid), Some(comm), "pid {pid}");
        if let Some(c) = seen.switch_comm.get(pid) {
            assert_eq!(c, comm, "pid {pid}");
        }
    }
    // The idle tasks' comms (one per CPU) are checked against their CPUs above.
    let mut names: Vec<&String> = seen.switch_comm.values().collect();
    names.extend(seen.waking_comm.values());
    names.sort();
    names.dedup();
    assert!(
        names.len() + spec.cpus as usize >= counts.comms * 9 / 10,
        "{} of {} comms",
        names.len(),
        counts.comms
    );
    // Delta-coded columns add up to the times they were written at.
    assert_eq!(info.first_ts, Some(counts.first_ns));
    assert_eq!(info.last_ts, Some(counts.last_ns));
    assert!(counts.first_ns.abs_diff(spec.start_ns) < 1_000_000);
}

#[test]
fn rtsleuth_reads_back_exactly_what_was_written() {
    for (cpus, bundle_events, seed) in [(8, 1024, 1), (4, 64, 7), (1, 8, 3)] {
        let spec = CompactSpec {
            cpus,
            bundle_events,
            seed,
            ..CompactSpec::new(60_000)
        };
        let (bytes, counts) = generate(&spec);
        assert!(counts.bundles > 20, "{counts:?}");
        assert!(
            counts.switches > 5_000 && counts.wakings > 3_000,
            "{counts:?}"
        );
        let input = Input::from_reader("gen.pftrace", Box::new(Cursor::new(bytes))).unwrap();
        let (seen, info) = read_back("stream", input);
        check(&spec, &seen, &info, &counts);
    }
}

#[test]
fn a_file_reads_like_a_stream() {
    // A plain file is pre-scanned and mapped; the bench reads files.
    let spec = CompactSpec::new(30_000);
    let (bytes, counts) = generate(&spec);
    let path =
        std::env::temp_dir().join(format!("tracegen-compact-{}.pftrace", std::process::id()));
    std::fs::write(&path, &bytes).unwrap();
    let input = Input::open(path.to_str().unwrap()).unwrap();
    let (seen, info) = read_back("file", input);
    std::fs::remove_file(&path).unwrap();
    check(&spec, &seen, &info, &counts);
}

#[test]
fn the_same_seed_gives_the_same_bytes() {
    let spec = CompactSpec::new(5_000);
    assert_eq!(generate(&spec).0, generate(&spec).0);
    let other = CompactSpec {
        seed: 2,
        ..spec.clone()
    };
    assert_ne!(generate(&spec).0, generate(&other).0);
}
