//! Shape, ground-truth and determinism tests for the generator.

use std::collections::{BTreeMap, HashMap, HashSet};

use rtsleuth_tracegen::{
    expected_to_json, generate, generate_to, intended_latencies, lat_mark, replicate_str, Expected,
    Scenario, TaskSpec, Variant,
};

fn sc(seed: u64) -> Scenario {
    Scenario::new(seed)
        .cpus(2)
        .wakeups(60)
        .start_us(130_000_000)
}

fn event_lines(text: &str) -> Vec<&str> {
    text.lines()
        .filter(|l| l.contains(": sched_") || l.contains("_entry: ") || l.contains("_exit: "))
        .collect()
}

#[test]
fn modern5_header_and_line_shape() {
    let (t, e) = generate(&sc(1), Variant::Modern5);
    let head: Vec<&str> = t.lines().take(12).collect();
    let entries = format!(
        "# entries-in-buffer/entries-written: {0}/{0}   #P:2",
        e.event_lines
    );
    assert_eq!(
        head,
        [
            "# tracer: nop",
            "#",
            entries.as_str(),
            "#",
            "#                                _-----=> irqs-off/BH-disabled",
            "#                               / _----=> need-resched",
            "#                              | / _---=> hardirq/softirq",
            "#                              || / _--=> preempt-depth",
            "#                              ||| / _-=> migrate-disable",
            "#                              |||| /     delay",
            "#           TASK-PID     CPU#  |||||  TIMESTAMP  FUNCTION",
            "#              | |         |   |||||     |         |",
        ]
    );
    for l in t.lines().skip(12) {
        // comm right-aligned in 16, '-', pid left-aligned in 7, " [ddd] ", 5 flags, " %5lu.%06lu: "
        assert_eq!(&l[16..17], "-", "{l}");
        assert_eq!(&l[24..26], " [", "{l}");
        assert_eq!(&l[29..31], "] ", "{l}");
        assert_eq!(&l[36..42], "   130", "{l}");
        assert_eq!(&l[42..43], ".", "{l}");
        assert_eq!(&l[49..51], ": ", "{l}");
    }
    assert!(t.contains("          <idle>-0       [000] d..2.   130."));
    assert!(t.contains(
        ": sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm="
    ));
    assert!(t.ends_with('\n'));
}

#[test]
fn variant_headers_and_lines() {
    let s = sc(2);
    let (t, _) = generate(&s, Variant::Legacy4);
    assert!(t.contains("\n#           TASK-PID   CPU#  ||||    TIMESTAMP  FUNCTION\n#              | |       |   ||||       |         |\n"));
    assert!(!t.contains("migrate-disable"));
    assert!(t.contains("          <idle>-0     [000] d..2   130."));

    let (t, _) = generate(&s, Variant::Tgid);
    assert!(t.contains("\n#           TASK-PID       TGID    CPU#  |||||  TIMESTAMP  FUNCTION\n"));
    assert!(t.contains("          <idle>-0       (-------) [000] d..2.   130."));
    assert!(t.contains("      cyclictest-2610    (   2608) [000] "));

    let (t, _) = generate(&s, Variant::TgidAndroid);
    assert!(t.contains("\n#           TASK-PID    TGID   CPU#  ||||    TIMESTAMP  FUNCTION\n"));
    assert!(t.contains("          <idle>-0     (-----) [000] d..2   130."));
    assert!(t.contains("      cyclictest-2610  ( 2608) [000] "));

    let (t, _) = generate(&s, Variant::Rt7);
    for name in [
        "need-resched-lazy",
        "preempt-lazy-depth",
        "migrate-disable",
        "hardirq/softirq",
    ] {
        assert!(t.contains(name), "{name}");
    }
    assert!(t.contains("          <idle>-0       [000] d...2.. "));
    assert!(t.contains("] d..h1.. "));

    let (t, _) = generate(&s, Variant::LatencyFormat);
    assert!(t.contains("\n#                  ||||| /     delay           \n#  cmd     pid     |||||| time  |   caller     \n#     \\   /        ||||||  \\    |    /       \n"));
    assert!(t.contains("\n  <idle>-0         0d..2. 130"));
    assert!(t.contains("\ncyclicte-2610      0"));

    let (t, _) = generate(&s, Variant::TraceCmdReport);
    assert!(t.starts_with("version = 6\ncpus=2\n"));
    assert!(t.contains("          <idle>-0     [000]   130."));
    assert!(t.contains(": sched_switch:         swapper/0:0 [120] R ==> "));
    assert!(t.contains(": sched_wakeup:         cyclictest:2610 [19] CPU:000"));
    assert!(t.contains(": sched_waking:         comm="));

    let (t, _) = generate(&s, Variant::TraceCmdRaw);
    assert!(t.contains(": sched_switch:          prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=0 next_comm="));
    assert!(t.contains(" prev_state=1 ") && t.contains(" prev_state=256 "));

    let (t, _) = generate(&s, Variant::TracePipe);
    assert!(t.starts_with("          <idle>-0       [00"));
    assert!(!t.contains('#'));
}

#[test]
fn options_produce_special_lines() {
    let s = sc(3)
        .lost_events(true)
        .buffer_started(true)
        .elided(true)
        .trailing_newline(false)
        .wakeups(400);
    let (t, e) = generate(&s, Variant::Modern5);
    assert!(t.contains("\n##### CPU 1 buffer started ####\n"));
    assert!(t.contains("\n[...]\n"));
    assert!(t
        .lines()
        .any(|l| l.starts_with("CPU:") && l.contains(" [LOST ") && l.ends_with(" EVENTS]")));
    assert!(!t.ends_with('\n'));
    assert!(e.lost_events > 0);
    assert_eq!(e.event_lines + e.other_lines, t.lines().count() as u64);
    let (t, _) = generate(&s, Variant::TraceCmdReport);
    assert!(t
        .lines()
        .any(|l| l.starts_with("CPU:") && l.ends_with(" EVENTS DROPPED]")));
    assert!(!t.contains("buffer started"));
    let (t, _) = generate(&sc(3).empty_cpu(true).cpus(3), Variant::TraceCmdReport);
    assert!(t.starts_with("version = 6\nCPU 2 is empty\ncpus=3\n"));
    assert!(!t.contains("[002]"));
}

/// pid -> (samples, runtime, switches); event counts by name; event lines.
type Recomputed = (
    BTreeMap<u32, (Vec<u64>, u64, u64)>,
    BTreeMap<String, u64>,
    u64,
);

/// A deliberately naive reimplementation of the latency definition over
/// kernel-format text (Modern5, TracePipe, Legacy4, Rt7 or Tgid).
fn recompute(text: &str) -> Recomputed {
    let has_waking = text.contains(": sched_waking: ");
    let mut running: HashSet<u32> = HashSet::new();
    let mut pending: HashMap<u32, u64> = HashMap::new();
    let mut on_cpu: HashMap<u32, (u32, u64)> = HashMap::new();
    // pid -> (samples, runtime, switches)
    let mut out: BTreeMap<u32, (Vec<u64>, u64, u64)> = BTreeMap::new();
    let mut names: BTreeMap<String, u64> = BTreeMap::new();
    let mut lines = 0;
    // CPUs named by a `buffer started` line, and their first event once seen.
    let mut started: HashMap<u32, Option<u64>> = HashMap::new();
    for l in text.lines() {
        if let Some(rest) = l.strip_prefix("##### CPU ") {
            let cpu = rest.split_whitespace().next().unwrap().parse().unwrap();
            started.insert(cpu, None);
            continue;
        }
        if l.starts_with('#') || l == "[...]" {
            continue;
        }
        if l.contains("[LOST ") {
            pending.clear();
            continue;
        }
        lines += 1;
        let colon = l.find(": ").unwrap();
        let mut head = l[..colon].split_whitespace().rev();
        let ts_s = head.next().unwrap();
        let (s, us) = ts_s.split_once('.').unwrap();
        let ts = s.parse::<u64>().unwrap() * 1_000_000_000 + us.parse::<u64>().unwrap() * 1000;
        head.next(); // flags
        let cpu: u32 = head
            .next()
            .unwrap()
            .trim_matches(|c| c == '[' || c == ']')
            .parse()
            .unwrap();
        if let Some(first @ None) = started.get_mut(&cpu) {
            *first = Some(ts);
        }
        let rest = &l[colon + 2..];
        let (name, payload) = rest.split_once(": ").unwrap();
        *names.entry(name.to_string()).or_default() += 1;
        let kv: HashMap<&str, &str> = payload
            .split_whitespace()
            .filter_map(|t| t.split_once('='))
            .collect();
        let num = |k: &str| kv[k].parse::<u32>().unwrap();
        let starts = if has_waking {
            name == "sched_waking"
        } else {
            name == "sched_wakeup" || name == "sched_wakeup_new"
        };
        if starts {
            let pid = num("pid");
            if pid != 0 && !running.contains(&pid) && !pending.contains_key(&pid) {
                pending.insert(pid, ts);
            }
        }
        if name == "sched_switch" {
            let (prev, next) = (num("prev_pid"), num("next_pid"));
            if let Some((p, t0)) = on_cpu.remove(&cpu) {
                if p == prev {
                    out.entry(p).or_default().1 += ts - t0;
                }
            }
            running.remove(&prev);
            if prev != 0 {
                out.entry(prev).or_default();
            }
            if next != 0 {
                running.insert(next);
                on_cpu.insert(cpu, (next, ts));
                let e = out.entry(next).or_default();
                e.2 += 1;
                if let Some(t0) = pending.remove(&next) {
                    // Not while a CPU's recorded history began within it.
                    if !started.values().flatten().any(|&f| f > t0) {
                        e.0.push(ts - t0);
                    }
                }
            }
        }
    }
    (out, names, lines)
}

fn check_against_text(e: &Expected, text: &str) {
    let (got, names, lines) = recompute(text);
    assert_eq!(lines, e.event_lines);
    assert_eq!(names, e.events);
    let mine: BTreeMap<u32, (Vec<u64>, u64, u64)> = e
        .tasks
        .iter()
        .map(|t| (t.pid, (t.samples_ns.clone(), t.runtime_ns, t.switches)))
        .collect();
    assert_eq!(got, mine);
    for t in &e.tasks {
        assert_eq!(t.count as usize, t.samples_ns.len());
        assert_eq!(t.sum_ns, t.samples_ns.iter().sum::<u64>());
        assert_eq!(t.max_ns, t.samples_ns.iter().copied().max().unwrap_or(0));
    }
}

#[test]
fn ground_truth_matches_naive_reparse() {
    for seed in 0..12 {
        for (i, s) in [
            sc(seed),
            sc(seed).with_waking(false),
            sc(seed)
                .lost_events(true)
                .buffer_started(true)
                .elided(true)
                .wakeups(300),
            sc(seed).cpus(4).trailing_newline(false).noise(false),
            sc(seed).cpus(1).with_waking(false).lost_events(true),
        ]
        .into_iter()
        .enumerate()
        {
            for v in [
                Variant::Modern5,
                Variant::TracePipe,
                Variant::Legacy4,
                Variant::Rt7,
                Variant::Tgid,
            ] {
                let (t, e) = generate(&s, v);
                assert!(e.sample_count() > 0, "seed {seed} case {i}");
                check_against_text(&e, &t);
            }
        }
    }
}

#[test]
fn ground_truth_matches_intended_latencies() {
    for seed in 0..20 {
        for s in [sc(seed), sc(seed).with_waking(false), sc(seed).cpus(3)] {
            let (_, e) = generate(&s, Variant::Modern5);
            let mut intended: Vec<(u32, u64)> = intended_latencies(&s)
                .into_iter()
                .map(|(p, l)| (p, l * 1000))
                .collect();
            let mut got: Vec<(u32, u64)> = e
                .tasks
                .iter()
                .flat_map(|t| t.samples_ns.iter().map(move |&l| (t.pid, l)))
                .collect();
            intended.sort_unstable();
            got.sort_unstable();
            assert_eq!(got, intended, "seed {seed}");
        }
    }
}

#[test]
fn forked_task_counts_only_without_waking() {
    let s = |waking: bool| {
        Scenario::new(1)
            .cpus(1)
            .tasks(vec![TaskSpec::other(2442, "bash").forked()])
            .wakeups(1)
            .noise(false)
            .running_wakeups(false)
            .repeated_wakeups(false)
            .with_waking(waking)
            .start_us(130_000_000)
    };
    let (t, with) = generate(&s(true), Variant::Modern5);
    let (t2, without) = generate(&s(false), Variant::Modern5);
    assert_eq!(t, t2, "no sched_waking is ever printed for a fork");
    assert!(t.contains("sched_wakeup_new: comm=bash pid=2442 prio=120 target_cpu=000"));
    // The option alone does not put sched_waking in the trace, so both
    // count the fork; a trace with other sched_waking events would not.
    assert_eq!(with.task(2442).unwrap().count, 1);
    assert_eq!(without.task(2442).unwrap().count, 1);
    let two = Scenario::new(2)
        .cpus(1)
        .tasks(vec![
            TaskSpec::other(2442, "bash").forked(),
            TaskSpec::other(2438, "bash"),
        ])
        .wakeups(2)
        .noise(false)
        .running_wakeups(false)
        .repeated_wakeups(false)
        .start_us(130_000_000);
    let (t, e) = generate(&two, Variant::Modern5);
    assert!(t.contains(": sched_waking: "));
    let t2442 = e.task(2442).unwrap();
    assert_eq!((t2442.count, t2442.switches), (0, 1), "{t}");
}

#[test]
fn every_variant_has_the_same_truth() {
    let s = sc(9).lost_events(true).wakeups(200);
    let (_, base) = generate(&s, Variant::Modern5);
    for v in Variant::ALL {
        let (t, e) = generate(&s, v);
        assert_eq!(e.tasks, base.tasks, "{v}");
        assert_eq!(e.event_lines, base.event_lines, "{v}");
        assert_eq!(e.lost_events, base.lost_events, "{v}");
        let mut ev = e.events.clone();
        if let Some(n) = ev.remove("print") {
            ev.insert("tracing_mark_write".into(), n);
        }
        assert_eq!(ev, base.events, "{v}");
        assert_eq!(
            e.event_lines + e.other_lines,
            t.lines().count() as u64,
            "{v}"
        );
        assert_eq!(e.bytes, t.len() as u64, "{v}");
    }
}

#[test]
fn latency_format_marks_and_microseconds() {
    assert_eq!(lat_mark(10_000), ' ');
    assert_eq!(lat_mark(10_001), '+');
    assert_eq!(lat_mark(100_001), '!');
    assert_eq!(lat_mark(1_000_001), '#');
    assert_eq!(lat_mark(10_000_001), '*');
    assert_eq!(lat_mark(100_000_001), '@');
    assert_eq!(lat_mark(1_000_000_001), '$');
    let (t, _) = generate(&sc(4), Variant::LatencyFormat);
    let ev: Vec<&str> = t.lines().filter(|l| !l.starts_with('#')).collect();
    let ts = |l: &str| -> u64 { l[26..].split("us").next().unwrap().trim().parse().unwrap() };
    for w in ev.windows(2) {
        let mark = w[0].as_bytes()[w[0].find("us").unwrap() + 2] as char;
        assert_eq!(mark, lat_mark((ts(w[1]) - ts(w[0])) * 1000), "{}", w[0]);
    }
    assert_eq!(
        ev.last().unwrap().as_bytes()[ev.last().unwrap().find("us").unwrap() + 2],
        b' '
    );
    assert_eq!(&ev[0][8..9], "-");
}

#[test]
fn deterministic_for_a_seed() {
    for v in Variant::ALL {
        let a = generate(&sc(11).lost_events(true), v);
        let b = generate(&sc(11).lost_events(true), v);
        assert_eq!(a, b);
        let c = generate(&sc(12).lost_events(true), v);
        assert_ne!(a.0, c.0);
    }
}

#[test]
fn streaming_and_size_limit() {
    let s = Scenario::new(21)
        .cpus(4)
        .wakeups(u64::MAX)
        .size_limit(200_000)
        .max_samples(5);
    let mut buf = Vec::new();
    let e = generate_to(&mut buf, &s, Variant::Modern5).unwrap();
    let text = String::from_utf8(buf).unwrap();
    assert_eq!((text.clone(), e.clone()), generate(&s, Variant::Modern5));
    let header = text
        .lines()
        .take_while(|l| l.starts_with('#'))
        .map(|l| l.len() + 1)
        .sum::<usize>();
    let body = text.len() - header;
    assert!((200_000..201_000).contains(&body), "{body}");
    assert!(e.samples_truncated);
    assert!(e.tasks.iter().all(|t| t.samples_ns.len() <= 5));
    assert!(e.sample_count() > 100);
    assert!(text.contains(&format!("entries-written: {0}/{0} ", e.event_lines)));
    let j = expected_to_json(&e);
    assert!(j.contains("\"samples_truncated\": true"));
    assert!(j.contains("\"comm\": \"Web Content\""));
}

#[test]
fn replicate_keeps_order_and_count() {
    for v in [
        Variant::Modern5,
        Variant::TraceCmdReport,
        Variant::LatencyFormat,
        Variant::TgidAndroid,
    ] {
        let (t, e) = generate(&sc(8).start_us(99_990_000_000), v);
        let header = t
            .lines()
            .take_while(|l| l.starts_with('#') || !l.contains(": "))
            .count();
        let (out, st) = replicate_str(&t, 3 * t.len() as u64);
        assert!(st.copies >= 3, "{v}");
        assert_eq!(st.bytes, out.len() as u64);
        // Header once at the top.
        assert_eq!(
            out.lines().take(header).collect::<Vec<_>>(),
            t.lines().take(header).collect::<Vec<_>>()
        );
        assert_eq!(
            out.lines().filter(|l| l.starts_with("# tracer")).count(),
            usize::from(v != Variant::TraceCmdReport)
        );
        // Full copies hold exactly the original event count.
        assert!(st.event_lines >= 3 * e.event_lines, "{v}");
        let evs = event_lines(&out);
        assert_eq!(evs.len() as u64, st.event_lines.min(evs.len() as u64));
        // Timestamps strictly increase across copies, and the line layout is kept.
        let ts: Vec<f64> = out
            .lines()
            .skip(header)
            .map(|l| {
                if v == Variant::LatencyFormat {
                    l[26..]
                        .split("us")
                        .next()
                        .unwrap()
                        .trim()
                        .parse::<f64>()
                        .unwrap()
                } else {
                    let colon = l.find(": ").unwrap();
                    l[..colon]
                        .split_whitespace()
                        .last()
                        .unwrap()
                        .parse::<f64>()
                        .unwrap()
                        * 1e6
                }
            })
            .collect();
        assert!(ts.windows(2).all(|w| w[0] < w[1]), "{v}");
        let orig_lines: Vec<&str> = t.lines().skip(header).collect();
        let n = orig_lines.len();
        let second: Vec<&str> = out.lines().skip(header + n).take(n).collect();
        for (a, b) in orig_lines.iter().zip(&second) {
            let (pa, pb) = (a.find(": ").unwrap(), b.find(": ").unwrap());
            assert_eq!(a[pa..], b[pb..]);
            assert_eq!(a[..20], b[..20]);
        }
    }
}
