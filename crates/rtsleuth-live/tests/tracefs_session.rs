//! A session leaves tracefs as it found it: after a normal end, an error, and a panic, on the
//! top-level buffer and in a private instance. The state is first made unusual (other clock,
//! an event enabled with a filter, uneven buffer sizes, an option off) so that "restored" cannot
//! pass by resetting to defaults.

use rtsleuth_live::cpus::CpuList;
use rtsleuth_live::testing::live_tracefs;
use rtsleuth_live::tracefs::{differences, observe, Buffer, Session, SpikeStop, Tracefs};
use std::collections::BTreeMap;
use std::path::Path;

/// A session that puts tracefs into an unusual state, for the session under test to start from.
fn unusual(tracefs: &Tracefs) -> Session {
    let mut s = Session::new(tracefs, Buffer::Top).unwrap();
    s.set_clock("global").unwrap();
    s.enable_events(&["irq:irq_handler_entry".into()]).unwrap();
    s.set_filter("irq:irq_handler_entry", "irq == 1").unwrap();
    s.set("per_cpu/cpu0/buffer_size_kb", "1411").unwrap();
    s.set_option("irq-info", false).unwrap();
    s
}

/// Everything the session under test changes, on whatever buffer it has.
fn change_everything(s: &mut Session) {
    s.set_tracer("nop").unwrap();
    s.set_clock("mono").unwrap();
    s.set_cpus(&CpuList::from(vec![0])).unwrap();
    s.set_buffer_kb(2048).unwrap();
    s.set_option("irq-info", true).unwrap();
    s.enable_events(&["sched:*".into(), "timer:hrtimer_expire_entry".into()])
        .unwrap();
    s.set_filter("sched:sched_switch", "prev_prio < 100")
        .unwrap();
    let cmdlines: u32 = std::fs::read_to_string(s.root().join("saved_cmdlines_size"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    s.set_global("saved_cmdlines_size", &(cmdlines * 2).to_string())
        .unwrap();
    s.tracing_on(true).unwrap();
}

fn assert_same(before: &BTreeMap<String, String>, root: &Path) {
    let diff = differences(before, &observe(root));
    assert!(
        diff.is_empty(),
        "tracefs not restored:\n{}",
        diff.join("\n")
    );
}

fn with_unusual_state(test: impl FnOnce(&Tracefs, &BTreeMap<String, String>)) {
    let Some((root, _lock)) = live_tracefs() else {
        return;
    };
    let tracefs = Tracefs::at(&root);
    let outer = unusual(&tracefs);
    let before = observe(&root);
    assert_eq!(
        before["trace_clock"]
            .split(' ')
            .find(|c| c.starts_with('[')),
        Some("[global]")
    );
    test(&tracefs, &before);
    assert_same(&before, &root);
    outer.restore().unwrap();
}

#[test]
fn top_level_is_restored_after_a_normal_end() {
    with_unusual_state(|tracefs, before| {
        let mut s = Session::new(tracefs, Buffer::Top).unwrap();
        change_everything(&mut s);
        let during = observe(tracefs.root());
        assert_eq!(during["tracing_cpumask"], "1");
        // The kernel rounds both up to whole pages.
        assert!(
            during["per_cpu/cpu0"].parse::<u32>().unwrap() >= 2048,
            "{}",
            during["per_cpu/cpu0"]
        );
        assert_ne!(during["saved_cmdlines_size"], before["saved_cmdlines_size"]);
        assert_eq!(during["filter sched:sched_switch"], "prev_prio < 100");
        assert_ne!(&during, before);
        s.restore().unwrap();
    });
}

#[test]
fn top_level_is_restored_after_an_error() {
    with_unusual_state(|tracefs, _| {
        let result = (|| {
            let mut s = Session::new(tracefs, Buffer::Top)?;
            s.set_clock("mono")?;
            s.enable_events(&["sched:sched_switch".into(), "nosuch:event".into()])
        })();
        let err = result.unwrap_err().to_string();
        assert!(
            err.contains("nosuch:event") && err.contains("set_event"),
            "{err}"
        );
    });
}

#[test]
fn top_level_is_restored_after_a_panic() {
    with_unusual_state(|tracefs, _| {
        let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let mut s = Session::new(tracefs, Buffer::Top).unwrap();
            change_everything(&mut s);
            panic!("mid-run");
        }));
        assert!(panicked.is_err());
    });
}

#[test]
fn a_private_instance_is_removed_and_the_top_level_untouched() {
    with_unusual_state(|tracefs, before| {
        let mut s = Session::new(tracefs, Buffer::private()).unwrap();
        let dir = s.dir().to_owned();
        assert!(dir.starts_with(tracefs.root().join("instances")) && dir.is_dir());
        change_everything(&mut s);
        let top = observe(tracefs.root());
        assert!(top["instances"].contains(&format!("rtsleuth-{}", std::process::id())));
        assert_ne!(
            top["saved_cmdlines_size"], before["saved_cmdlines_size"],
            "a global file changes for everyone"
        );
        assert!(
            !top["trace_clock"].contains("[mono]"),
            "the instance's clock is its own"
        );
        drop(s);
        assert!(!dir.exists());
    });
}

#[test]
fn an_existing_instance_is_not_taken_over() {
    with_unusual_state(|tracefs, _| {
        let first = Session::new(tracefs, Buffer::Instance("rtsleuth-test-twice".into())).unwrap();
        let err = Session::new(tracefs, Buffer::Instance("rtsleuth-test-twice".into()))
            .err()
            .unwrap();
        assert!(err.to_string().contains("already exists"), "{err}");
        drop(first);
    });
}

#[test]
fn a_spike_stop_marks_the_trace_and_stops_recording() {
    with_unusual_state(|tracefs, _| {
        let mut s = Session::new(tracefs, Buffer::private()).unwrap();
        s.enable_events(&["sched:sched_switch".into()]).unwrap();
        s.tracing_on(true).unwrap();
        let stop = SpikeStop::open(&s).unwrap();
        stop.mark_and_stop(1234, 100);
        let dir = s.dir();
        assert_eq!(
            std::fs::read_to_string(dir.join("tracing_on"))
                .unwrap()
                .trim(),
            "0"
        );
        let trace = std::fs::read_to_string(dir.join("trace")).unwrap();
        let mark = trace
            .lines()
            .find(|l| l.contains("tracing_mark_write"))
            .unwrap();
        assert!(
            mark.ends_with("hit latency threshold (1234 > 100)"),
            "{mark}"
        );
    });
}
