//! Third-party ftrace / trace-cmd text traces (../shared/fixtures/realworld, see its
//! SOURCES.md) read exactly: event count, unparsed-line count, CPU list, and a few decoded
//! fields of specific events.
//!
//! Every count here was first taken from the reader and then checked independently: a separate
//! regex classifier (event line = `comm-pid [(tgid)] [cpu] [flags] secs:` or latency format
//! `comm-pid cpuFLAGS NNNus:`; blank, `#`, `=>`, `[...]`, `cpus=`, `version =`, `CPU n is
//! empty` are not unparsed) gave the same numbers for all files, and the unparsed lines were
//! read one by one (prose around the perf-tools examples, `irqsoff` with the function_graph
//! display option, a bprint whose text holds a newline). The decoded fields were checked against
//! the line quoted next to each assertion.
//!
//! When the shared folder is absent the tests print `skipped: ...` and pass, unless `CI` is
//! set.

#[path = "../../rtsleuth-trace/tests/shared_fixtures/mod.rs"]
mod shared_fixtures;
#[path = "../../rtsleuth-trace/tests/typed/mod.rs"]
mod typed;

use rtsleuth_trace::event::{Event, Flags};
use rtsleuth_trace::input::Input;
use rtsleuth_trace::read::{self, EventSink, TraceInfo};
use std::path::{Path, PathBuf};
use typed::typed;

fn root() -> Option<PathBuf> {
    shared_fixtures::realworld("")
}

/// An owned copy of an event, with its typed decoding flattened to `key -> value` strings.
#[derive(Debug, Clone)]
struct Ev {
    ts: u64,
    cpu: u32,
    pid: i32,
    comm: String,
    tgid: Option<i32>,
    flags: Flags,
    name: String,
    payload: String,
    typed: Vec<(&'static str, String)>,
}

impl Ev {
    /// A field of the typed decoding (`EventKind`), not of the raw payload.
    fn f(&self, key: &str) -> &str {
        self.typed
            .iter()
            .find(|(k, _)| *k == key)
            .map(|(_, v)| v.as_str())
            .unwrap_or_else(|| panic!("{} has no typed field {key}: {self:?}", self.name))
    }
}

#[derive(Default)]
struct Collect(Vec<Ev>);

impl EventSink for Collect {
    fn event(&mut self, e: &Event<'_>) {
        self.0.push(Ev {
            ts: e.ts,
            cpu: e.cpu,
            pid: e.pid,
            comm: e.comm.to_string(),
            tgid: e.tgid,
            flags: e.flags,
            name: e.name.to_string(),
            payload: e.payload.to_string(),
            typed: typed(&e.kind),
        });
    }
}

struct Trace {
    info: TraceInfo,
    events: Vec<Ev>,
}

impl Trace {
    /// The `n`th event of the file, counting from 1.
    fn ev(&self, n: usize) -> &Ev {
        &self.events[n - 1]
    }

    /// The first event called `name`.
    fn first(&self, name: &str) -> &Ev {
        self.events
            .iter()
            .find(|e| e.name == name)
            .unwrap_or_else(|| panic!("no {name} event"))
    }
}

fn read_trace(path: &Path) -> Trace {
    let mut sink = Collect::default();
    let input =
        Input::open(path.to_str().unwrap()).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let info = read::read(input, &mut sink).unwrap_or_else(|e| panic!("{e}"));
    Trace {
        info,
        events: sink.0,
    }
}

/// Reads `rel` and checks its counts; returns the trace for field checks, or `None` when the
/// fixtures are absent.
fn check(rel: &str, events: u64, unparsed: u64, lines: u64, cpus: &[u32]) -> Option<Trace> {
    let path = root()?.join(rel);
    let t = read_trace(&path);
    assert_eq!(t.info.events, events, "{rel}: events");
    assert_eq!(
        t.events.len() as u64,
        events,
        "{rel}: events handed to the sink"
    );
    assert_eq!(
        t.info.unparsed(),
        unparsed,
        "{rel}: unparsed lines {:?}",
        t.info.unparsed_examples
    );
    assert_eq!(t.info.lines.total, lines, "{rel}: lines");
    assert_eq!(t.info.cpus, cpus, "{rel}: cpus");
    Some(t)
}

fn flags(e: &Ev) -> (bool, bool, bool, bool, u8) {
    let f = e.flags;
    assert!(f.known, "flags unknown: {e:?}");
    (
        f.irqs_off,
        f.need_resched,
        f.hardirq,
        f.softirq,
        f.preempt_depth,
    )
}

const TRAPPY: &str = "trappy/tests";
const TC: &str =
    "tracecompass-incubator/tracetypes/org.eclipse.tracecompass.incubator.ftrace.core.tests/res";
const KDOC: &str = "kernel-doc-ftrace/extracted/ftrace.rst";

// ---------------------------------------------------------------- trappy (trace-cmd report)

#[test]
fn trappy_raw_trace() {
    let Some(t) = check(&format!("{TRAPPY}/raw_trace.txt"), 3, 0, 7, &[1, 2]) else {
        return;
    };
    // L5: `ls-4734 [002] 106439.675591: sched_switch: prev_comm=trace-cmd prev_pid=4734
    //      prev_prio=120 prev_state=1024 next_comm=migration/2 next_pid=18 next_prio=0`
    let e = t.ev(1);
    assert_eq!((e.comm.as_str(), e.pid, e.cpu), ("ls", 4734, 2));
    assert_eq!(e.ts, 106_439_675_591_000);
    assert!(!e.flags.known);
    assert_eq!(
        (e.f("next_pid"), e.f("next_prio"), e.f("prev_comm")),
        ("18", "0", "trace-cmd")
    );
    assert_eq!(e.f("prev_state"), "R+"); // raw 1024 = TASK_STATE_MAX: preempted
                                         // L6: `... prev_state=1 ...` (raw 1 = S)
    assert_eq!(t.ev(2).f("prev_state"), "S");
    assert_eq!(
        t.info
            .lines
            .get(rtsleuth_trace::read::ftrace_text::NonEvent::TraceCmdHeader),
        4
    );
}

#[test]
fn trappy_trace_sched() {
    let Some(t) = check(
        &format!("{TRAPPY}/trace_sched.txt"),
        11,
        0,
        13,
        &[0, 1, 3, 4],
    ) else {
        return;
    };
    // L3: `rcuos/2-22 [001] 6550.018511: sched_load_avg_sg: cpus=00000002 load=0 utilization=0`
    let e = t.ev(1);
    assert_eq!(
        (e.comm.as_str(), e.pid, e.name.as_str()),
        ("rcuos/2", 22, "sched_load_avg_sg")
    );
    assert_eq!(e.payload, "cpus=00000002 load=0 utilization=0");
    // L11: `<idle>-0 [001] 6550.100000: sched_wakeup: comm=rcu_preempt pid=7 prio=120 success=1 target_cpu=1`
    let w = t.first("sched_wakeup");
    assert_eq!(
        (w.f("comm"), w.f("pid"), w.f("target_cpu")),
        ("rcu_preempt", "7", "1")
    );
    assert_eq!(w.ts, 6_550_100_000_000);
}

#[test]
fn trappy_trace_empty() {
    let Some(t) = check(&format!("{TRAPPY}/trace_empty.txt"), 51, 0, 53, &[0, 1]) else {
        return;
    };
    // L3: `trace-cmd-2461 [000] 34.896920: sched_stat_runtime: comm=trace-cmd pid=2461 runtime=7778999 [ns] ...`
    let e = t.ev(1);
    assert_eq!(
        (e.comm.as_str(), e.pid, e.ts),
        ("trace-cmd", 2461, 34_896_920_000)
    );
    assert!(e
        .payload
        .starts_with("comm=trace-cmd pid=2461 runtime=7778999 [ns]"));
    // L4: `sched_stat_sleep: comm=sshd pid=2450 delay=1802051076 [ns]`
    assert_eq!(t.ev(2).name, "sched_stat_sleep");
}

#[test]
fn trappy_trace_idle_unsorted() {
    let Some(t) = check(
        &format!("{TRAPPY}/trace_idle_unsorted.txt"),
        15,
        0,
        17,
        &[0, 2, 5, 6],
    ) else {
        return;
    };
    // L3 (TAB-indented): `\t   <...>-15430 [006]  7115.449594: sched_switch: prev_comm=trace-cmd
    //      prev_pid=15430 prev_prio=120 prev_state=64 next_comm=swapper/6 next_pid=0 next_prio=120`
    let e = t.ev(1);
    assert_eq!((e.comm.as_str(), e.pid, e.cpu), ("<...>", 15430, 6));
    assert_eq!(
        (e.f("prev_comm"), e.f("next_comm"), e.f("next_pid")),
        ("trace-cmd", "swapper/6", "0")
    );
    // L4: `<idle>-0 [006] 7115.449607: sched_switch: ... next_comm=kworker/6:2 next_pid=11630`
    assert_eq!(t.ev(2).f("next_pid"), "11630");
    // Deliberately unsorted.
    assert_eq!(t.info.out_of_order, 1);
}

#[test]
fn trappy_trace_filesystem() {
    let Some(t) = check(
        &format!("{TRAPPY}/trace_filesystem.txt"),
        69,
        0,
        69,
        &[0, 1, 2, 3, 4, 5, 7],
    ) else {
        return;
    };
    // L1: `<...>-1297 [001] 3843.734440: ext4_da_write_end: dev 8,13 ino 5898483 pos 0 len 4096 copied 4096`
    let e = t.ev(1);
    assert_eq!(
        (e.comm.as_str(), e.pid, e.name.as_str()),
        ("<...>", 1297, "ext4_da_write_end")
    );
    assert_eq!(e.payload, "dev 8,13 ino 5898483 pos 0 len 4096 copied 4096");
    assert_eq!(t.ev(2).name, "ext4_da_write_begin");
}

#[test]
fn trappy_trace_failed_to_parse() {
    let Some(t) = check(
        &format!("{TRAPPY}/trace_failed_to_parse.txt"),
        11,
        0,
        11,
        &[5],
    ) else {
        return;
    };
    // L2: `kworker/5:2-1497 [005] 454.414603: thermal_power_cpu_get_power: [FAILED TO PARSE] cpumask=ARRAY[0f, ...`
    let e = t.ev(2);
    assert_eq!(
        (e.comm.as_str(), e.pid, e.name.as_str()),
        ("kworker/5:2", 1497, "thermal_power_cpu_get_power")
    );
    assert!(
        e.payload
            .starts_with("[FAILED TO PARSE] cpumask=ARRAY[0f, 00"),
        "{}",
        e.payload
    );
    assert_eq!(
        t.ev(1).payload,
        "thermal_zone=cls0 id=0 temp_prev=62357 temp=79553"
    );
}

#[test]
fn trappy_trace_common_clk() {
    let Some(t) = check(
        &format!("{TRAPPY}/trace_common_clk.txt"),
        8,
        0,
        8,
        &[0, 1, 7],
    ) else {
        return;
    };
    // L1: `VideoDecMsgThr-32342 [007] 85636.208531: clock_set_rate: video_subcore0_clk_src state=200000000 cpu_id=7`
    let e = t.ev(1);
    assert_eq!(
        (e.comm.as_str(), e.pid, e.cpu, e.ts),
        ("VideoDecMsgThr", 32342, 7, 85_636_208_531_000)
    );
    assert_eq!(e.payload, "video_subcore0_clk_src state=200000000 cpu_id=7");
    // L4: `writer-14965 [001] ...: clock_enable: ...`
    assert_eq!(
        (t.ev(4).comm.as_str(), t.ev(4).name.as_str()),
        ("writer", "clock_enable")
    );
}

#[test]
fn trappy_trace_equals() {
    let Some(t) = check(&format!("{TRAPPY}/trace_equals.txt"), 7, 0, 7, &[3]) else {
        return;
    };
    // L2: `systemd-journal-1662 [003] 653.065293: bputs: 0xffff0000080feeb8s: equals_event: my_field=foo=bar`
    let e = t.ev(2);
    assert_eq!((e.comm.as_str(), e.pid), ("systemd-journal", 1662));
    assert_eq!(
        (e.f("marker"), e.f("text")),
        ("Bputs", "equals_event: my_field=foo=bar")
    );
    assert_eq!(t.ev(3).f("text"), "equals_event: my_field=foo=bar=baz");
}

#[test]
fn trappy_trace_no_trailing_line() {
    let Some(t) = check(
        &format!("{TRAPPY}/trace_no_trailing_line.txt"),
        10,
        0,
        10,
        &[0, 3],
    ) else {
        return;
    };
    // L1: `<idle>-0 [000] d..2 1136.097253: cpu_idle: state=0 cpu_id=0`
    assert_eq!(flags(t.ev(1)), (true, false, false, false, 2));
    // L3: `chrome-2804 [003] d..3 1136.097350: sched_switch: prev_comm=chrome prev_pid=2804
    //      prev_prio=112 prev_state=S ==> next_comm=swapper/3 next_pid=0 next_prio=120`
    let s = t.first("sched_switch");
    assert_eq!(flags(s), (true, false, false, false, 3));
    assert_eq!(
        (s.f("prev_prio"), s.f("prev_state"), s.f("next_pid")),
        ("112", "S", "0")
    );
    // The last line has no newline and is still an event.
    let last = t.ev(10);
    assert_eq!(last.ts, t.info.last_ts.unwrap());
}

#[test]
fn trappy_trace_not_raw() {
    let Some(t) = check(
        &format!("{TRAPPY}/trace_not_raw.txt"),
        757,
        2,
        763,
        &[0, 1, 2, 5],
    ) else {
        return;
    };
    // The 2 unparsed lines are the ends of bprint texts holding a newline: L6 ` gid=4`, L8 ` gid=1`.
    let ex: Vec<_> = t
        .info
        .unparsed_examples
        .iter()
        .map(|u| (u.line, u.text.as_str()))
        .collect();
    assert_eq!(ex, [(6, " gid=4"), (8, " gid=1")]);
    // L9: `ls-4734 [002] 106439.675591: sched_switch: trace-cmd:4734 [120] R ==> migration/2:18 [0]`
    let s = t.first("sched_switch");
    assert_eq!((s.comm.as_str(), s.pid), ("ls", 4734));
    assert_eq!(
        (s.f("prev_comm"), s.f("prev_pid"), s.f("prev_state")),
        ("trace-cmd", "4734", "R")
    );
    assert_eq!(
        (s.f("next_comm"), s.f("next_pid"), s.f("next_prio")),
        ("migration/2", "18", "0")
    );
    // L5: `bprint: select_task_rq_fair: fig: cpu=0`
    assert_eq!(
        (t.ev(1).f("marker"), t.ev(1).f("text")),
        ("Bprint", "fig: cpu=0")
    );
}

#[test]
fn trappy_doc_trace() {
    let Some(t) = check("trappy/doc/trace.txt", 804, 0, 811, &[4]) else {
        return;
    };
    // L8: `kworker/4:1-51 [004] 1583.765274: thermal_temperature: thermal_zone=soc_thermal id=0 temp_prev=68794 temp=68786`
    let e = t.ev(1);
    assert_eq!(
        (e.comm.as_str(), e.pid, e.cpu, e.ts),
        ("kworker/4:1", 51, 4, 1_583_765_274_000)
    );
    assert_eq!(e.name, "thermal_temperature");
    assert_eq!(t.ev(2).name, "thermal_power_devfreq_get_power");
}

#[test]
fn trappy_doc_trace_dynamic() {
    let Some(t) = check("trappy/doc/trace_dynamic.txt", 1600, 0, 1600, &[0]) else {
        return;
    };
    // L1: `kworker/6:1-457 [000] d..2 109.999957: bprint: 0xc042f8a0f: thermal_gpu_power_get: frequency=420 load=91`
    let e = t.ev(1);
    assert_eq!((e.comm.as_str(), e.pid, e.cpu), ("kworker/6:1", 457, 0));
    assert_eq!(flags(e), (true, false, false, false, 2));
    assert_eq!(e.f("text"), "thermal_gpu_power_get: frequency=420 load=91");
    assert_eq!(
        t.ev(2).f("text"),
        "thermal_gpu_power_get: frequency=420 load=90"
    );
}

// ---------------------------------------------------------------- lisa

#[test]
fn lisa_trace_txt() {
    let Some(t) = check(
        "lisa/tests/assets/trace_txt/trace.txt",
        2941,
        0,
        2943,
        &[0, 1, 2, 3, 4, 5],
    ) else {
        return;
    };
    // 1856 sched_switch lines (grep -c ': sched_switch:').
    assert_eq!(
        t.events.iter().filter(|e| e.name == "sched_switch").count(),
        1856
    );
    // L3: `<...>-1701 [001] 76.211513: sched_switch: prev_comm=trace-cmd prev_pid=1701 prev_prio=120
    //      prev_state=64 next_comm=swapper/1 next_pid=0 next_prio=120`
    let s = t.ev(1);
    assert_eq!((s.comm.as_str(), s.pid, s.cpu), ("<...>", 1701, 1));
    assert_eq!(
        (s.f("prev_comm"), s.f("next_comm"), s.f("next_pid")),
        ("trace-cmd", "swapper/1", "0")
    );
    // L4: `<idle>-0 [002] 76.211513: sched_wakeup: comm=sh pid=1642 prio=120 success=1 target_cpu=2`
    let w = t.first("sched_wakeup");
    assert_eq!(
        (w.f("comm"), w.f("pid"), w.f("prio"), w.f("target_cpu")),
        ("sh", "1642", "120", "2")
    );
    // L5: `... prev_state=0 ...` is raw R.
    assert_eq!(t.ev(3).f("prev_state"), "R");
}

// ---------------------------------------------------------------- tracecompass-incubator

#[test]
fn tracecompass_atrace() {
    let Some(t) = check(
        "tracecompass-incubator/tracetypes/org.eclipse.tracecompass.incubator.atrace.core.tests/res/atrace-test",
        4454,
        0,
        4465,
        &[0, 1, 2, 3],
    ) else {
        return;
    };
    // L12: `com.google.android.youtube-23071 (23071) [002] d..5 214168.479892: sched_wakeup:
    //       comm=Binder:549_4 pid=2029 prio=120 success=1 target_cpu=000`
    let e = t.ev(1);
    assert_eq!(
        (e.comm.as_str(), e.pid, e.tgid),
        ("com.google.android.youtube", 23071, Some(23071))
    );
    assert_eq!(flags(e), (true, false, false, false, 5));
    assert_eq!((e.f("comm"), e.f("target_cpu")), ("Binder:549_4", "0"));
    // L13: `<idle>-0 (-----) [001] d..3 ...: sched_switch: ... next_comm=ksoftirqd/1 next_pid=12`
    assert_eq!((t.ev(2).tgid, t.ev(2).f("next_pid")), (None, "12"));
    // L752: ` BT Service Call-26462 (26439) [001] d.s4 214168.714330: sched_wakeup: comm=rcu_preempt ...`
    let bt = t
        .events
        .iter()
        .find(|e| e.comm == "BT Service Call")
        .unwrap();
    assert_eq!((bt.pid, bt.tgid, bt.cpu), (26462, Some(26439), 1));
    assert_eq!(flags(bt), (true, false, false, true, 4));
}

#[test]
fn tracecompass_ftrace_syscalls() {
    let Some(t) = check(
        &format!("{TC}/ftrace_syscalls.txt"),
        1052,
        0,
        1052,
        &[0, 1, 2, 3, 4, 5, 6, 7],
    ) else {
        return;
    };
    // L1: `<...>-4083 [004] .... 395.705673: sys_rt_sigprocmask -> 0x0` (syscall exit, no event name)
    let e = t.ev(1);
    assert_eq!((e.comm.as_str(), e.pid, e.cpu), ("<...>", 4083, 4));
    assert_eq!(flags(e), (false, false, false, false, 0));
    assert_eq!(
        (e.name.as_str(), e.payload.as_str()),
        ("sys_exit", "sys_rt_sigprocmask -> 0x0")
    );
    // L55: `<idle>-0 [007] d... 395.705709: sched_switch: prev_comm=swapper/7 prev_pid=0
    //       prev_prio=120 prev_state=S ==> next_comm=kworker/u32:4 next_pid=184 next_prio=120`
    let s = t.first("sched_switch");
    assert_eq!(
        (s.f("next_comm"), s.f("next_pid"), s.cpu),
        ("kworker/u32:4", "184", 7)
    );
    // L38: `sshd-3977 [003] d... 395.705699: sched_waking: comm=kworker/u32:4 pid=184 prio=120 target_cpu=007`
    assert_eq!(t.first("sched_waking").f("target_cpu"), "7");
}

#[test]
fn tracecompass_android_sched() {
    let Some(t) = check(
        &format!("{TC}/trace-android-sched"),
        139,
        0,
        150,
        &[0, 1, 2],
    ) else {
        return;
    };
    // L12: `sh-12958 [002] d.H5 365761.623995: sched_wakeup: comm=rcu_preempt pid=8 prio=120 success=1 target_cpu=002`
    let e = t.ev(1);
    assert_eq!(flags(e), (true, false, true, true, 5)); // H = hardirq inside softirq
    assert_eq!((e.f("comm"), e.f("pid")), ("rcu_preempt", "8"));
    // L14: `sh-12958 [002] d..3 ...: sched_switch: prev_comm=sh prev_pid=12958 prev_prio=120 prev_state=S ==> next_comm=rcu_preempt next_pid=8`
    let s = t.first("sched_switch");
    assert_eq!((s.f("prev_state"), s.f("next_pid")), ("S", "8"));
    assert_eq!(flags(s).4, 3);
}

#[test]
fn tracecompass_android_sched_irq() {
    let Some(t) = check(&format!("{TC}/trace-android-sched-irq"), 139, 0, 150, &[0]) else {
        return;
    };
    assert_eq!(t.info.header.entries_in_buffer, Some(69657));
    assert_eq!(t.info.header.overwritten(), Some(223807 - 69657));
    // L12: `<...>-1252 [000] dNh2 108.255501: sched_wakeup: comm=android.display pid=1603 prio=116 ...`
    let e = t.ev(1);
    assert_eq!(flags(e), (true, true, true, false, 2));
    assert_eq!((e.f("comm"), e.f("prio")), ("android.display", "116"));
    // L15: `sched_switch: prev_comm=logd.auditd prev_pid=1252 prev_prio=130 prev_state=R+ ==> next_comm=EventThread next_pid=1338 next_prio=97`
    let s = t.first("sched_switch");
    assert_eq!(
        (s.f("prev_state"), s.f("next_pid"), s.f("next_prio")),
        ("R+", "1338", "97")
    );
}

#[test]
fn tracecompass_android_sched_irq_syscall() {
    let Some(t) = check(
        &format!("{TC}/trace-android-sched-irq-syscall"),
        143,
        0,
        154,
        &[1],
    ) else {
        return;
    };
    // L12: `Binder:2030_3-2053 [001] ...1 652.762396: sys_enter: NR 172 (29, c350, ...)`
    let e = t.ev(1);
    assert_eq!(
        (e.comm.as_str(), e.pid, e.f("nr")),
        ("Binder:2030_3", 2053, "172")
    );
    // L13: `sys_exit: NR 172 = 0`
    assert_eq!((t.ev(2).f("nr"), t.ev(2).f("ret")), ("172", "0"));
    // L23: `sched_switch: ... ==> next_comm=IntentService[E next_pid=3866 next_prio=120`
    let s = t.first("sched_switch");
    assert_eq!(
        (s.f("next_comm"), s.f("next_pid")),
        ("IntentService[E", "3866")
    );
    // L34: `IntentService[E-3866 [001] dN.5 652.763329: sched_wakeup: comm=Binder:2030_4 pid=2404 ...`
    let w = t.first("sched_wakeup");
    assert_eq!((w.comm.as_str(), w.pid), ("IntentService[E", 3866));
    assert_eq!(flags(w), (true, true, false, false, 5));
}

#[test]
fn tracecompass_critical_path() {
    let Some(t) = check(
        &format!("{TC}/trace-critical-path"),
        146,
        0,
        155,
        &[0, 2, 3],
    ) else {
        return;
    };
    // L10: `Compositor-3487 [000] d.h. 26186.336630: irq_handler_entry: irq=28 name=radeon`
    let e = t.ev(1);
    assert_eq!((e.f("irq"), e.f("name")), ("28", "radeon"));
    assert_eq!(flags(e), (true, false, true, false, 0));
    // L11: `Web Content-2711 [003] d... 26186.336632: sched_waking: comm=Timer pid=2745 prio=120 target_cpu=001`
    let w = t.ev(2);
    assert_eq!(
        (w.comm.as_str(), w.pid, w.name.as_str()),
        ("Web Content", 2711, "sched_waking")
    );
    assert_eq!(
        (w.f("comm"), w.f("pid"), w.f("target_cpu")),
        ("Timer", "2745", "1")
    );
    // L16: `gnome-shell-1746 [002] d... ...: sched_switch: ... prev_state=R ==> next_comm=kworker/2:0H next_pid=24678 next_prio=100`
    let s = t.first("sched_switch");
    assert_eq!(
        (s.f("prev_state"), s.f("next_pid"), s.f("next_prio")),
        ("R", "24678", "100")
    );
}

#[test]
fn tracecompass_func_graph_records() {
    // trace-cmd report of function_graph *raw records*: ordinary event lines.
    let Some(t) = check(
        &format!("{TC}/trace-func-graph"),
        199,
        0,
        200,
        &[1, 3, 5, 7],
    ) else {
        return;
    };
    // L2: `trace-cmd-11809 [003] 11658.899115: funcgraph_entry: func=0xffffffffba5ddc00 depth=0`
    let e = t.ev(1);
    assert_eq!(
        (e.comm.as_str(), e.pid, e.cpu, e.name.as_str()),
        ("trace-cmd", 11809, 3, "funcgraph_entry")
    );
    assert_eq!(e.payload, "func=0xffffffffba5ddc00 depth=0");
    assert_eq!(t.ev(3).comm, "sleep");
}

// ---------------------------------------------------------------- perf-tools (annotated)

#[test]
fn perf_tools_functrace() {
    // Prose around the trace: 237 unparsed lines (checked: every one is text, `^C`, or
    // `Tracing "..."`).
    let Some(t) = check(
        "perf-tools/examples/functrace_example.txt",
        37,
        237,
        341,
        &[0, 1],
    ) else {
        return;
    };
    assert_eq!(t.info.unparsed_examples[0].line, 1);
    // L9: `svscan-1678 [000] .... 6412438.703521: do_nanosleep <-hrtimer_nanosleep`
    let e = t.ev(1);
    assert_eq!(
        (e.comm.as_str(), e.pid, e.ts),
        ("svscan", 1678, 6_412_438_703_521_000)
    );
    assert_eq!(
        (e.f("function"), e.f("parent")),
        ("do_nanosleep", "hrtimer_nanosleep")
    );
    assert_eq!(flags(e), (false, false, false, false, 0));
}

#[test]
fn perf_tools_kprobe() {
    let Some(t) = check(
        "perf-tools/examples/kprobe_example.txt",
        134,
        108,
        379,
        &[0, 1],
    ) else {
        return;
    };
    // L8: `kprobe-26042 [001] d... 6910441.001452: do_sys_open: (do_sys_open+0x0/0x220)`
    let e = t.ev(1);
    assert_eq!(
        (e.comm.as_str(), e.pid, e.cpu, e.name.as_str()),
        ("kprobe", 26042, 1, "do_sys_open")
    );
    assert_eq!(e.payload, "(do_sys_open+0x0/0x220)");
    assert!(flags(e).0);
    assert_eq!(
        t.info
            .lines
            .get(rtsleuth_trace::read::ftrace_text::NonEvent::StackFrame),
        30
    );
}

#[test]
fn perf_tools_tpoint() {
    let Some(t) = check(
        "perf-tools/examples/tpoint_example.txt",
        23,
        63,
        210,
        &[0, 1],
    ) else {
        return;
    };
    // L8: `supervise-1692 [001] d... 7269912.982162: block_rq_issue: 202,1 W 0 () 17039656 + 8 [supervise]`
    let e = t.ev(1);
    assert_eq!(
        (e.comm.as_str(), e.pid, e.name.as_str()),
        ("supervise", 1692, "block_rq_issue")
    );
    assert_eq!(e.payload, "202,1 W 0 () 17039656 + 8 [supervise]");
    // L9: `supervise-1696 [000] ...`
    assert_eq!((t.ev(2).pid, t.ev(2).cpu), (1696, 0));
}

// ---------------------------------------------------------------- kernel Documentation/trace/ftrace.rst

fn kdoc(name: &str) -> String {
    format!("{KDOC}.{name}.txt")
}

#[test]
fn kdoc_function_l0860() {
    let Some(t) = check(&kdoc("L0860.function"), 10, 0, 22, &[0, 3]) else {
        return;
    };
    // L12: `bash-1977 [000] .... 17284.993652: sys_close <-system_call_fastpath`
    let e = t.ev(1);
    assert_eq!(
        (e.comm.as_str(), e.pid, e.ts),
        ("bash", 1977, 17_284_993_652_000)
    );
    assert_eq!(
        (e.f("function"), e.f("parent")),
        ("sys_close", "system_call_fastpath")
    );
    assert_eq!(t.ev(4).comm, "sshd");
}

#[test]
fn kdoc_function_l1209_no_flags_column() {
    let Some(t) = check(&kdoc("L1209.function"), 3, 0, 9, &[2]) else {
        return;
    };
    assert_eq!(t.info.header.overwritten(), Some(9452052 - 144405));
    // L7: `<idle>-0 [002]  23636.756054: ttwu_do_activate.constprop.89 <-try_to_wake_up`
    let e = t.ev(1);
    assert!(!e.flags.known);
    assert_eq!(
        (e.f("function"), e.f("parent")),
        ("ttwu_do_activate.constprop.89", "try_to_wake_up")
    );
    assert_eq!(t.ev(3).f("function"), "enqueue_task");
}

#[test]
fn kdoc_function_l2295() {
    let Some(t) = check(&kdoc("L2295.function"), 8, 0, 20, &[2]) else {
        return;
    };
    // L12: `bash-1994 [002] .... 3082.063030: mutex_unlock <-rb_simple_write`
    let e = t.ev(1);
    assert_eq!((e.pid, e.cpu, e.f("function")), (1994, 2, "mutex_unlock"));
    assert_eq!(t.ev(2).f("parent"), "mutex_unlock");
}

#[test]
fn kdoc_function_l2353() {
    let Some(t) = check(&kdoc("L2353.function"), 11, 0, 22, &[3]) else {
        return;
    };
    assert_eq!(t.info.lines.buffer_started, 1); // `##### CPU 3 buffer started ####`
                                                // L5: `yum-updatesd-3111 [003]  1637.254676: finish_task_switch <-thread_return`
    let e = t.ev(1);
    assert_eq!(
        (e.comm.as_str(), e.pid, e.ts),
        ("yum-updatesd", 3111, 1_637_254_676_000)
    );
    assert_eq!(e.f("function"), "finish_task_switch");
}

#[test]
fn kdoc_function_l2915() {
    let Some(t) = check(&kdoc("L2915.function"), 5, 0, 16, &[1, 2, 3]) else {
        return;
    };
    // L13: `<idle>-0 [001] d.h1 4186.475409: hrtimer_interrupt <-smp_apic_timer_interrupt`
    let e = t.ev(2);
    assert_eq!((e.comm.as_str(), e.pid), ("<idle>", 0));
    assert_eq!(flags(e), (true, false, true, false, 1));
    assert_eq!(e.f("parent"), "smp_apic_timer_interrupt");
}

#[test]
fn kdoc_function_l2962() {
    let Some(t) = check(&kdoc("L2962.function"), 8, 0, 19, &[3]) else {
        return;
    };
    // L12: `<idle>-0 [003] dN.1 4228.547803: hrtimer_cancel <-tick_nohz_idle_exit`
    let e = t.ev(1);
    assert_eq!(flags(e), (true, true, false, false, 1));
    assert_eq!(e.f("function"), "hrtimer_cancel");
    assert_eq!(flags(t.ev(3)).4, 2);
}

#[test]
fn kdoc_function_l3051() {
    let Some(t) = check(&kdoc("L3051.function"), 12, 0, 23, &[0]) else {
        return;
    };
    // L12: `bash-1994 [000] .... 4342.324896: file_ra_state_init <-do_dentry_open`
    let e = t.ev(1);
    assert_eq!(
        (e.f("function"), e.f("parent")),
        ("file_ra_state_init", "do_dentry_open")
    );
    assert_eq!(e.ts, 4_342_324_896_000);
}

#[test]
fn kdoc_function_l3333() {
    let Some(t) = check(&kdoc("L3333.function"), 9, 0, 23, &[0]) else {
        return;
    };
    // L15: `bash-1994 [000] .... 5281.568961: mutex_unlock <-rb_simple_write`
    let e = t.ev(1);
    assert_eq!(
        (e.pid, e.ts, e.f("function")),
        (1994, 5_281_568_961_000, "mutex_unlock")
    );
}

#[test]
fn kdoc_events_fragment_l1126() {
    let Some(t) = check(&kdoc("L1126.events-fragment"), 6, 0, 7, &[1, 2]) else {
        return;
    };
    assert_eq!(t.info.lines.buffer_started, 1); // `##### CPU 2 buffer started ####`
                                                // L1: `<idle>-0 [001] dNs4 21169.031481: wake_up_idle_cpu <-add_timer_on`
    assert_eq!(flags(t.ev(1)), (true, true, false, true, 4));
    // L5: `<idle>-0 [002] .N.1 21169.031484: rcu_idle_exit <-cpu_idle`
    let e = t.ev(4);
    assert_eq!((e.cpu, e.f("function")), (2, "rcu_idle_exit"));
    assert_eq!(flags(e), (false, true, false, false, 1));
}

#[test]
fn kdoc_irqsoff_l0904() {
    let Some(t) = check(&kdoc("L0904.irqsoff"), 4, 0, 34, &[2]) else {
        return;
    };
    assert!(t.info.header.latency_format);
    // L21: `ps-6143    2d...    0us!: trace_hardirqs_off <-__lock_task_sighand`
    let e = t.ev(1);
    assert_eq!((e.comm.as_str(), e.pid, e.cpu, e.ts), ("ps", 6143, 2, 0));
    assert_eq!(flags(e), (true, false, false, false, 0));
    // L22: `ps-6143    2d..1  259us+: trace_hardirqs_on <-_raw_spin_unlock_irqrestore`
    let e = t.ev(2);
    assert_eq!(
        (e.ts, flags(e).4, e.f("function")),
        (259_000, 1, "trace_hardirqs_on")
    );
}

#[test]
fn kdoc_irqsoff_l1389() {
    let Some(t) = check(&kdoc("L1389.irqsoff"), 4, 0, 38, &[0]) else {
        return;
    };
    // L22: `<idle>-0       0dNs3   17us : _raw_spin_unlock_irq <-run_timer_softirq`
    let e = t.ev(2);
    assert_eq!((e.pid, e.cpu, e.ts), (0, 0, 17_000));
    assert_eq!(flags(e), (true, true, false, true, 3));
    assert_eq!(t.ev(1).f("function"), "_raw_spin_lock_irq");
}

#[test]
fn kdoc_irqsoff_l1440() {
    let Some(t) = check(&kdoc("L1440.irqsoff"), 19, 0, 65, &[3]) else {
        return;
    };
    // L21: `bash-2042    3d...    0us : _raw_spin_lock_irqsave <-ata_scsi_queuecmd`
    let e = t.ev(1);
    assert_eq!((e.comm.as_str(), e.pid, e.cpu), ("bash", 2042, 3));
    assert_eq!(e.f("parent"), "ata_scsi_queuecmd");
    assert_eq!(
        t.info
            .lines
            .get(rtsleuth_trace::read::ftrace_text::NonEvent::StackFrame),
        25
    );
}

#[test]
fn kdoc_irqsoff_l1518_with_graph_lines() {
    // irqsoff with the function_graph display option: its 12 graph lines are not ftrace event
    // lines and are counted as unparsed; only the `<stack trace>` line is an event.
    let Some(t) = check(&kdoc("L1518.irqsoff"), 1, 12, 47, &[0]) else {
        return;
    };
    assert_eq!(t.info.unparsed_examples[0].line, 20);
    // L33: `bash-1507    0d..1 3792us : <stack trace>`
    let e = t.ev(1);
    assert_eq!((e.comm.as_str(), e.pid, e.ts), ("bash", 1507, 3_792_000));
    assert_eq!(flags(e), (true, false, false, false, 1));
}

#[test]
fn kdoc_preemptoff_l1588() {
    let Some(t) = check(&kdoc("L1588.preemptoff"), 4, 0, 28, &[1]) else {
        return;
    };
    // L21: `sshd-1991    1d.h.    0us+: irq_enter <-do_IRQ`
    let e = t.ev(1);
    assert_eq!((e.comm.as_str(), e.pid, e.cpu), ("sshd", 1991, 1));
    assert_eq!(flags(e), (true, false, true, false, 0));
    // L22: `sshd-1991    1d..1   46us : irq_exit <-do_IRQ`
    assert_eq!((t.ev(2).ts, t.ev(2).f("function")), (46_000, "irq_exit"));
}

#[test]
fn kdoc_preemptoff_l1626() {
    let Some(t) = check(&kdoc("L1626.preemptoff"), 32, 0, 62, &[1]) else {
        return;
    };
    // L21: `bash-1994    1d..1    0us : _raw_spin_lock_irqsave <-wake_up_new_task`
    let e = t.ev(1);
    assert_eq!(flags(e), (true, false, false, false, 1));
    assert_eq!(e.f("parent"), "wake_up_new_task");
    assert_eq!(
        t.info
            .lines
            .get(rtsleuth_trace::read::ftrace_text::NonEvent::Elided),
        3
    );
}

#[test]
fn kdoc_preemptirqsoff_l1740() {
    let Some(t) = check(&kdoc("L1740.preemptirqsoff"), 4, 0, 43, &[3]) else {
        return;
    };
    // L22: `ls-2230    3...1  100us : _raw_spin_unlock_irqrestore <-ata_scsi_queuecmd`
    let e = t.ev(2);
    assert_eq!((e.comm.as_str(), e.pid, e.ts), ("ls", 2230, 100_000));
    assert_eq!(flags(e), (false, false, false, false, 1));
}

#[test]
fn kdoc_preemptirqsoff_l1793() {
    let Some(t) = check(&kdoc("L1793.preemptirqsoff"), 59, 0, 90, &[3]) else {
        return;
    };
    // L21: `kworker/-59      3...1    0us : __schedule <-schedule` (comm cut to 8 characters)
    let e = t.ev(1);
    assert_eq!((e.comm.as_str(), e.pid), ("kworker/", 59));
    assert_eq!(flags(e), (false, false, false, false, 1));
    // L22: `kworker/-59      3d..1    0us : rcu_preempt_qs <-rcu_note_context_switch`
    assert!(flags(t.ev(2)).0);
}

#[test]
fn kdoc_wakeup_l1909() {
    let Some(t) = check(&kdoc("L1909.wakeup"), 4, 0, 21, &[3]) else {
        return;
    };
    // L18: `<idle>-0       3dNs7    0us :      0:120:R   + [003]   312:100:R kworker/3:1H`
    let e = t.ev(1);
    assert_eq!((e.pid, e.cpu, e.ts), (0, 3, 0));
    assert_eq!(flags(e), (true, true, false, true, 7));
    assert!(
        e.payload.ends_with("312:100:R kworker/3:1H"),
        "{:?}",
        e.payload
    );
}

#[test]
fn kdoc_wakeup_l1976() {
    let Some(t) = check(&kdoc("L1976.wakeup"), 4, 0, 23, &[3]) else {
        return;
    };
    // L20: `<idle>-0       3d.h4    0us :      0:120:R   + [003]  2389: 94:R sleep`
    let e = t.ev(1);
    assert_eq!(flags(e), (true, false, true, false, 4));
    assert!(e.payload.ends_with("2389: 94:R sleep"), "{:?}", e.payload);
    // L21: `<idle>-0       3d.h4    1us+: ttwu_do_activate.constprop.87 <-try_to_wake_up`
    assert_eq!(
        (t.ev(2).ts, t.ev(2).f("function")),
        (1_000, "ttwu_do_activate.constprop.87")
    );
}

#[test]
fn kdoc_wakeup_rt_l2027() {
    let Some(t) = check(&kdoc("L2027.wakeup_rt"), 85, 0, 102, &[3]) else {
        return;
    };
    assert_eq!(t.info.header.tracer.as_deref(), Some("wakeup_rt"));
    // L18: `<idle>-0       3d.h4    1us+:      0:120:R   + [003]  2448: 94:R sleep`
    let e = t.ev(1);
    assert_eq!((e.ts, flags(e)), (1_000, (true, false, true, false, 4)));
    // L19: `<idle>-0       3d.h4    2us : ttwu_do_activate.constprop.87 <-try_to_wake_up`
    assert_eq!((t.ev(2).ts, t.ev(2).f("parent")), (2_000, "try_to_wake_up"));
}

#[test]
fn kdoc_wakeup_rt_l2153() {
    let Some(t) = check(&kdoc("L2153.wakeup_rt"), 12, 0, 29, &[2]) else {
        return;
    };
    // L20: `<idle>-0       2d.h4    1us : sched_wakeup: comm=sleep pid=5882 prio=94 success=1 target_cpu=002`
    let w = t.first("sched_wakeup");
    assert_eq!((w.ts, w.cpu), (1_000, 2));
    assert_eq!(
        (w.f("comm"), w.f("pid"), w.f("prio"), w.f("target_cpu")),
        ("sleep", "5882", "94", "2")
    );
    assert_eq!(flags(w), (true, false, true, false, 4));
}

#[test]
fn kdoc_hwlat_l2196() {
    let Some(t) = check(&kdoc("L2196.hwlat"), 12, 0, 23, &[1, 2, 3, 4, 5, 6, 7]) else {
        return;
    };
    // L12: `<...>-1729  [001] d...   678.473449: #1     inner/outer(us):   11/12    ts:1581527483.343962693 count:6`
    let e = t.ev(1);
    assert_eq!(
        (e.comm.as_str(), e.pid, e.cpu, e.ts),
        ("<...>", 1729, 1, 678_473_449_000)
    );
    assert!(
        e.payload.starts_with("#1     inner/outer(us):   11/12"),
        "{:?}",
        e.payload
    );
    // L13: `<...>-1729  [004] d...   689.556542: #2 ...`
    assert_eq!(t.ev(2).cpu, 4);
}

#[test]
fn kdoc_nop_l3465() {
    let Some(t) = check(&kdoc("L3465.nop"), 5, 0, 31, &[2, 5, 7]) else {
        return;
    };
    // L12: `<idle>-0 [005] d... 2440.603828: sched_switch: prev_comm=swapper/5 prev_pid=0 prev_prio=120
    //       prev_state=R ==> next_comm=snapshot-test-2 next_pid=2242 next_prio=120`
    let s = t.ev(1);
    assert_eq!(
        (s.f("next_comm"), s.f("next_pid"), s.f("prev_state")),
        ("snapshot-test-2", "2242", "R")
    );
    // L13: `sleep-2242 [005] ...: sched_switch: prev_comm=snapshot-test-2 prev_pid=2242 ... next_pid=60`
    let s = t.ev(2);
    assert_eq!(
        (s.comm.as_str(), s.pid, s.f("next_pid")),
        ("sleep", 2242, "60")
    );
}

#[test]
fn kdoc_nop_l3598() {
    let Some(t) = check(&kdoc("L3598.nop"), 11, 0, 22, &[0]) else {
        return;
    };
    // L12: `bash-1998 [000] d... 140.733501: sys_write -> 0x2`
    let e = t.ev(1);
    assert_eq!(
        (e.comm.as_str(), e.pid, e.name.as_str()),
        ("bash", 1998, "sys_exit")
    );
    assert_eq!(e.payload, "sys_write -> 0x2");
    // L13: `bash-1998 [000] d... 140.733504: sys_dup2(oldfd: a, newfd: 1)`
    assert_eq!(
        (t.ev(2).name.as_str(), t.ev(2).payload.as_str()),
        ("sys_enter", "sys_dup2(oldfd: a, newfd: 1)")
    );
}

/// Every ftrace text file of the collection is covered by a test above, and none is missed by
/// the format detection.
#[test]
fn every_text_fixture_is_ftrace_text() {
    let Some(root) = root() else { return };
    let mut files = Vec::new();
    for dir in ["trappy/tests", "trappy/doc", "lisa/tests/assets/trace_txt"] {
        for e in std::fs::read_dir(root.join(dir)).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|x| x == "txt") {
                files.push(p);
            }
        }
    }
    for e in std::fs::read_dir(root.join(TC)).unwrap() {
        files.push(e.unwrap().path());
    }
    files.push(root.join(
        "tracecompass-incubator/tracetypes/org.eclipse.tracecompass.incubator.atrace.core.tests/res/atrace-test",
    ));
    for e in std::fs::read_dir(root.join("kernel-doc-ftrace/extracted")).unwrap() {
        let p = e.unwrap().path();
        let name = p.file_name().unwrap().to_str().unwrap().to_string();
        let kind = name.split('.').nth(3).unwrap_or("");
        if [
            "function",
            "irqsoff",
            "preemptoff",
            "preemptirqsoff",
            "wakeup",
            "wakeup_rt",
            "nop",
            "hwlat",
            "events-fragment",
        ]
        .contains(&kind)
        {
            files.push(p);
        }
    }
    assert_eq!(files.len(), 12 + 1 + 7 + 24, "{files:?}");
    for p in files {
        let input = Input::open(p.to_str().unwrap()).unwrap();
        assert_eq!(
            input.format,
            rtsleuth_trace::input::Format::FtraceText,
            "{}",
            p.display()
        );
        explain_adds_up(&p);
    }
}

/// `explain` on someone else's trace: every wake-up of every task is explained without a
/// panic, and its components add up to its latency.
fn explain_adds_up(p: &std::path::Path) {
    use rtsleuth_analyze::explain::{Explain, ExplainOptions};
    let mut explain = Explain::new(ExplainOptions {
        all: true,
        top: usize::MAX,
        threshold_us: Some(0.0),
        ..Default::default()
    });
    let input = Input::open(p.to_str().unwrap()).unwrap();
    let info = rtsleuth_trace::read::read(input, &mut explain).unwrap();
    let doc = explain.document(&info).json;
    for f in doc["findings"].as_array().unwrap() {
        let sum: f64 = f["components"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["us"].as_f64().unwrap())
            .sum();
        let lat = f["latency_us"].as_f64().unwrap();
        assert!((sum - lat).abs() < 0.0015, "{}: {f:#}", p.display());
    }
}
