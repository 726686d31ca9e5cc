//! The latency tracers' output (../shared/fixtures/realworld/kernel-doc-ftrace: the samples of
//! the kernel's Documentation/trace/ftrace.rst): every header field, the entry count and the
//! stack of each sample, counted by hand from the file; and bad input.
//!
//! When the shared folder is absent the realworld tests print `skipped: ...` and pass, unless
//! `CI` is set.

mod shared_fixtures;

use rtsleuth_trace::error::Error;
use rtsleuth_trace::input::Input;
use rtsleuth_trace::read::latency_tracer::{self, LatencyTrace};
use rtsleuth_trace::read::NullSink;
use std::io::Cursor;

/// Reads `ftrace.rst.<name>.txt` through the reader the `irq` command uses.
fn kdoc(name: &str) -> Option<LatencyTrace> {
    let path = shared_fixtures::realworld(&format!(
        "kernel-doc-ftrace/extracted/ftrace.rst.{name}.txt"
    ))?;
    let path = path.to_str().unwrap();
    let (info, section) = latency_tracer::read(Input::open(path).unwrap(), &mut NullSink).unwrap();
    let section = section.unwrap_or_else(|| panic!("{name}: not recognised"));
    // The text reader still reads its entries as events.
    assert_eq!(info.events, section.entries.len() as u64, "{name}");
    Some(section)
}

fn task(t: &LatencyTrace) -> (&str, i32) {
    let task = t.task.as_ref().unwrap();
    (task.comm.as_str(), task.pid)
}

/// `# latency: 259 us, #4/4, CPU#2 | (M:preempt VP:0, KP:0, SP:0 HP:0 #P:4)`,
/// `| task: ps-6143 (uid:0 nice:0 policy:0 rt_prio:0)`, started at `__lock_task_sighand`, ended
/// at `_raw_spin_unlock_irqrestore`; 4 entries (`0us!: trace_hardirqs_off`, `259us+:
/// trace_hardirqs_on`, `263us+: time_hardirqs_on`, `306us : <stack trace>`); 10 stack frames
/// from `trace_hardirqs_on_caller` to `system_call_fastpath`.
#[test]
fn irqsoff_l0904() {
    let Some(t) = kdoc("L0904.irqsoff") else {
        return;
    };
    assert_eq!(t.tracer, "irqsoff");
    let s = &t.summary;
    assert_eq!(
        (s.latency_us, s.entries_shown, s.entries_total, s.cpu),
        (259, 4, 4, 2)
    );
    assert_eq!((s.model.as_deref(), s.nr_cpus), (Some("preempt"), Some(4)));
    assert_eq!(task(&t), ("ps", 6143));
    assert_eq!(t.task.as_ref().unwrap().policy, Some(0));
    assert_eq!(t.started_at.as_deref(), Some("__lock_task_sighand"));
    assert_eq!(t.ended_at.as_deref(), Some("_raw_spin_unlock_irqrestore"));
    assert_eq!(t.entries.len(), 4);
    let first = &t.entries[0];
    assert_eq!(
        first.function(),
        Some(("trace_hardirqs_off", "__lock_task_sighand"))
    );
    assert_eq!((first.time_ns, first.delay_over_us), (0, Some(100)));
    assert_eq!(
        (t.entries[3].name.as_str(), t.entries[3].time_ns),
        ("kernel_stack", 306_000)
    );
    assert_eq!(t.stack.len(), 10);
    assert_eq!(t.stack[0], "trace_hardirqs_on_caller");
    assert_eq!(t.stack[9], "system_call_fastpath");
    // The section's time went in the first step: trace_hardirqs_off at 0 us, on at 259 us.
    let step = t.longest_steps(1)[0];
    assert_eq!(step.ns, 259_000);
    assert_eq!(step.from.function().unwrap().0, "trace_hardirqs_off");
    assert_eq!((t.elided, t.other_lines), (0, 0));
}

/// `# latency: 16 us, #4/4, CPU#0`, task `swapper/0-0`, started and ended at
/// `run_timer_softirq`; 14 frames from `_raw_spin_unlock_irq` to `x86_64_start_kernel`.
#[test]
fn irqsoff_l1389_idle_task() {
    let Some(t) = kdoc("L1389.irqsoff") else {
        return;
    };
    assert_eq!((t.summary.latency_us, t.summary.cpu), (16, 0));
    assert_eq!(task(&t), ("swapper/0", 0));
    assert_eq!(t.started_at.as_deref(), Some("run_timer_softirq"));
    assert_eq!(t.ended_at.as_deref(), Some("run_timer_softirq"));
    assert_eq!(t.stack.len(), 14);
    assert_eq!(t.stack[13], "x86_64_start_kernel");
    // `<idle>-0       0dNs3   17us : ...`: need-resched and softirq context.
    assert!(t.entries[1].flags.need_resched && t.entries[1].flags.softirq);
}

/// `# latency: 71 us, #168/168, CPU#3`, `bash-2042`, `ata_scsi_queuecmd` both ends; 9 entries,
/// one `[...]`, 9 more and `120us : <stack trace>` (19); 25 frames. The longest step that is not
/// across the cut: `72us+: trace_hardirqs_on` to the stack at 120 us, 48 us.
#[test]
fn irqsoff_l1440_elided() {
    let Some(t) = kdoc("L1440.irqsoff") else {
        return;
    };
    assert_eq!(
        (t.summary.latency_us, t.summary.entries_total, t.summary.cpu),
        (71, 168, 3)
    );
    assert_eq!(task(&t), ("bash", 2042));
    assert_eq!((t.entries.len(), t.elided, t.stack.len()), (19, 1, 25));
    assert!(t.entries[9].after_elision);
    assert_eq!(t.entries[9].function(), Some(("delay_tsc", "__delay")));
    let step = t.longest_steps(1)[0];
    assert_eq!((step.from.time_ns, step.ns), (72_000, 48_000));
}

/// irqsoff with the function_graph display: `# latency: 3751 us, #274/274, CPU#0 |
/// (M:desktop ...)`, `bash-1507`, `free_debug_processing` → `return_to_handler`; the 12 graph
/// lines are not latency-format entries, the `<stack trace>` line is; 14 frames.
#[test]
fn irqsoff_l1518_graph_display() {
    let Some(t) = kdoc("L1518.irqsoff") else {
        return;
    };
    assert_eq!((t.summary.latency_us, t.summary.entries_total), (3751, 274));
    assert_eq!(t.summary.model.as_deref(), Some("desktop"));
    assert_eq!(task(&t), ("bash", 1507));
    assert_eq!(t.ended_at.as_deref(), Some("return_to_handler"));
    assert_eq!((t.entries.len(), t.other_lines, t.elided), (1, 12, 1));
    assert_eq!(t.entries[0].time_ns, 3_792_000);
    assert_eq!(
        t.stack.first().map(String::as_str),
        Some("free_debug_processing")
    );
    assert_eq!(t.stack.len(), 14);
}

#[test]
fn preemptirqsoff_samples() {
    // `# latency: 100 us, #4/4, CPU#3`, `ls-2230`, `ata_scsi_queuecmd`; 19 frames.
    if let Some(t) = kdoc("L1740.preemptirqsoff") {
        assert_eq!(t.tracer, "preemptirqsoff");
        assert_eq!((t.summary.latency_us, t.summary.cpu), (100, 3));
        assert_eq!(task(&t), ("ls", 2230));
        assert_eq!((t.entries.len(), t.stack.len()), (4, 19));
        assert_eq!(t.stack[0], "sub_preempt_count");
    }
    // `# latency: 161 us, #339/339, CPU#3`, `ls-2269`, started at `schedule`, ended at
    // `mutex_unlock`; 59 entries around 3 cuts (the first 25 are `kworker/-59`'s, before the
    // switch); 8 frames from `__mutex_unlock_slowpath`.
    if let Some(t) = kdoc("L1793.preemptirqsoff") {
        assert_eq!((t.summary.latency_us, t.summary.entries_total), (161, 339));
        assert_eq!(task(&t), ("ls", 2269));
        assert_eq!(t.started_at.as_deref(), Some("schedule"));
        assert_eq!(t.ended_at.as_deref(), Some("mutex_unlock"));
        assert_eq!((t.entries.len(), t.elided, t.stack.len()), (59, 3, 8));
        assert_eq!(
            (t.entries[0].comm.as_str(), t.entries[0].pid),
            ("kworker/", 59)
        );
        assert_eq!(t.stack[0], "__mutex_unlock_slowpath");
    }
}

#[test]
fn preemptoff_samples() {
    // `# latency: 46 us, #4/4, CPU#1`, `sshd-1991`, `do_IRQ` both ends; 4 frames.
    if let Some(t) = kdoc("L1588.preemptoff") {
        assert_eq!(t.tracer, "preemptoff");
        assert_eq!((t.summary.latency_us, t.summary.cpu), (46, 1));
        assert_eq!(task(&t), ("sshd", 1991));
        assert_eq!(t.started_at.as_deref(), Some("do_IRQ"));
        assert_eq!(
            t.stack,
            ["sub_preempt_count", "irq_exit", "do_IRQ", "ret_from_intr"]
        );
    }
    // `# latency: 83 us, #241/241, CPU#1`, `bash-1994`, `wake_up_new_task` → `task_rq_unlock`;
    // 32 entries, 3 cuts, 7 frames ending in `stub_clone`.
    if let Some(t) = kdoc("L1626.preemptoff") {
        assert_eq!((t.summary.latency_us, t.summary.entries_total), (83, 241));
        assert_eq!(t.started_at.as_deref(), Some("wake_up_new_task"));
        assert_eq!(t.ended_at.as_deref(), Some("task_rq_unlock"));
        assert_eq!((t.entries.len(), t.elided, t.stack.len()), (32, 3, 7));
        assert_eq!(t.stack[6], "stub_clone");
    }
}

#[test]
fn wakeup_samples() {
    // `# latency: 15 us, #4/4, CPU#3`, woken task `kworker/3:1H-312 (uid:0 nice:-20 ...)`, no
    // started/ended lines and no stack.
    if let Some(t) = kdoc("L1909.wakeup") {
        assert_eq!(t.tracer, "wakeup");
        assert_eq!((t.summary.latency_us, t.summary.cpu), (15, 3));
        assert_eq!(task(&t), ("kworker/3:1H", 312));
        assert_eq!(t.task.as_ref().unwrap().nice, Some(-20));
        assert_eq!((t.started_at.as_ref(), t.stack.len()), (None, 0));
        assert_eq!(t.entries[3].name, "context_switch");
    }
    // Two `# tracer:` lines (`wakeup`, then `wakeup_rt`): the one above the summary counts.
    if let Some(t) = kdoc("L1976.wakeup") {
        assert_eq!(t.tracer, "wakeup_rt");
        assert_eq!(t.summary.latency_us, 5);
        let task = t.task.as_ref().unwrap();
        assert_eq!(
            (task.comm.as_str(), task.pid, task.policy, task.rt_prio),
            ("sleep", 2389, Some(1), Some(5))
        );
    }
    // `# latency: 29 us, #85/85, CPU#3`, `sleep-2448`: all 85 entries printed.
    if let Some(t) = kdoc("L2027.wakeup_rt") {
        assert_eq!((t.summary.latency_us, t.summary.entries_shown), (29, 85));
        assert_eq!(t.entries.len(), 85);
    }
    // `# latency: 6 us, #12/12, CPU#2`, `sleep-5882`, events mixed with functions.
    if let Some(t) = kdoc("L2153.wakeup_rt") {
        assert_eq!((t.summary.latency_us, t.summary.cpu), (6, 2));
        assert_eq!(task(&t), ("sleep", 5882));
        assert_eq!(t.entries.len(), 12);
        assert_eq!(t.entries[2].name, "sched_wakeup");
    }
}

fn read_bytes(bytes: &[u8]) -> rtsleuth_trace::Result<Option<LatencyTrace>> {
    let input = Input::from_reader("mem", Box::new(Cursor::new(bytes.to_vec())))?;
    Ok(latency_tracer::read(input, &mut NullSink)?.1)
}

const GOOD: &str = concat!(
    "# tracer: irqsoff\n",
    "#\n",
    "# latency: 259 us, #4/4, CPU#2 | (M:preempt VP:0, KP:0, SP:0 HP:0 #P:4)\n",
    "#    | task: ps-6143 (uid:0 nice:0 policy:0 rt_prio:0)\n",
    "      ps-6143    2d...    0us!: trace_hardirqs_off <-__lock_task_sighand\n",
    "      ps-6143    2d..1  259us+: trace_hardirqs_on <-_raw_spin_unlock_irqrestore\n",
    "      ps-6143    2d..1  306us : <stack trace>\n",
    " => do_task_stat\n",
    " => proc_tgid_stat\n",
);

#[test]
fn other_traces_are_not_latency_tracer_output() {
    let nop = b"# tracer: nop\n  bash-1 [000] d... 1.000000: irq_handler_entry: irq=1 name=x\n";
    assert_eq!(read_bytes(nop).unwrap(), None);
    // A latency-format buffer of the nop tracer has a `# latency:` line but no section.
    let fmt = b"# tracer: nop\n# latency: 0 us, #1/1, CPU#0 | (M:preempt VP:0, KP:0, SP:0 HP:0 #P:2)\n  bash-1 0d..2 5us : x: y\n";
    assert_eq!(read_bytes(fmt).unwrap(), None);
}

#[test]
fn bad_input_is_a_clear_error() {
    assert!(matches!(read_bytes(b""), Err(Error::Empty { .. })));
    assert!(matches!(
        read_bytes(b"\x7fELF\x02\x01\0\0"),
        Err(Error::NotATrace { .. })
    ));
    // A summary line that says nothing readable: the error names the byte where it starts.
    let bad = GOOD.replace("259 us, #4/4", "lots of us");
    match read_bytes(bad.as_bytes()) {
        Err(Error::Malformed { offset, reason, .. }) => {
            assert_eq!(offset, 20);
            assert!(reason.contains("summary line"), "{reason}");
        }
        other => panic!("{other:?}"),
    }
    // Cut inside the header: a section without entries is no trace.
    let cut = &GOOD[..GOOD.find("      ps-6143").unwrap()];
    assert!(matches!(
        read_bytes(cut.as_bytes()),
        Err(Error::NotATrace { .. })
    ));
    // Cut inside the stack: what is there is read.
    let cut = &GOOD[..GOOD.len() - 8];
    let t = read_bytes(cut.as_bytes()).unwrap().unwrap();
    assert_eq!(t.stack, ["do_task_stat", "proc_tg"]);
    // Garbage after the header is counted, not fatal.
    let t = LatencyTrace::parse("mem", &format!("{GOOD}\u{1}\u{2} garbage\n")).unwrap();
    assert_eq!((t.entries.len(), t.other_lines), (3, 1));
    // No summary line at all.
    assert!(matches!(
        LatencyTrace::parse("mem", "# tracer: irqsoff\n"),
        Err(Error::Malformed { offset: 0, .. })
    ));
}
