//! A session on tracefs as a freshly booted machine has it, reproduced as a plain directory
//! tree: the top-level ring buffer still its boot stub (`7 (expanded: 1408)`, per-CPU files `7`),
//! no instances, the default `saved_cmdlines_size`, no event ever enabled. A machine that has
//! traced once can never show this state again, so the live tests cannot see it; these can.
//!
//! The tree is not a kernel: a write to the top-level size does not resize the per-CPU files.
//! Where a test needs the kernel's answer (its expansion to 1410 KB), it writes it itself; files
//! the kernel reads back in another form than they are written (an event's `filter`) are left
//! to the live tests.

use rtsleuth_live::tracefs::{differences, expansion, observe, Buffer, Session, Tracefs};
use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

/// The files a fresh 6.18 boot shows on a two-CPU machine, with their contents.
const FRESH: &[(&str, &str)] = &[
    ("buffer_size_kb", "7 (expanded: 1408)\n"),
    ("buffer_subbuf_size_kb", "4\n"),
    ("per_cpu/cpu0/buffer_size_kb", "7\n"),
    ("per_cpu/cpu1/buffer_size_kb", "7\n"),
    ("current_tracer", "nop\n"),
    ("tracing_on", "1\n"),
    (
        "trace_clock",
        "[local] global counter uptime perf mono mono_raw boot\n",
    ),
    ("tracing_cpumask", "3\n"),
    ("set_event", ""),
    ("tracing_thresh", "0\n"),
    ("saved_cmdlines_size", "128\n"),
    ("options/irq-info", "1\n"),
    ("events/sched/sched_switch/filter", "none\n"),
    ("trace", ""),
    ("trace_marker", ""),
];

fn fresh_tree() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (rel, text) in FRESH {
        let path = dir.path().join(rel);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, text).unwrap();
    }
    fs::create_dir(dir.path().join("instances")).unwrap();
    dir
}

fn read(root: &Path, rel: &str) -> String {
    fs::read_to_string(root.join(rel)).unwrap()
}

/// Every file of the tree with its content, for "nothing else was touched".
fn contents(root: &Path) -> BTreeMap<String, String> {
    FRESH
        .iter()
        .map(|(rel, _)| (rel.to_string(), read(root, rel)))
        .collect()
}

#[test]
fn a_session_on_a_never_used_buffer_writes_back_its_expanded_size_never_the_stub() {
    let tree = fresh_tree();
    let root = tree.path();
    let tracefs = Tracefs::at(root);
    let mut s = Session::new(&tracefs, Buffer::Top).unwrap();
    s.set_tracer("nop").unwrap();
    s.set_buffer_kb(4096).unwrap();
    s.set_global("saved_cmdlines_size", "1024").unwrap();
    s.enable_events(&["sched:sched_switch".into()]).unwrap();
    s.tracing_on(true).unwrap();
    assert_eq!(read(root, "buffer_size_kb"), "4096\n");
    let notes = s.restore().unwrap();

    // The stub goes back as what it expands to; the per-CPU files were never written.
    assert_eq!(read(root, "buffer_size_kb"), "1408\n");
    assert_eq!(read(root, "per_cpu/cpu0/buffer_size_kb"), "7\n");
    assert_eq!(read(root, "per_cpu/cpu1/buffer_size_kb"), "7\n");
    // Everything else is back as a fresh boot had it.
    assert_eq!(read(root, "saved_cmdlines_size"), "128\n");
    assert_eq!(read(root, "set_event"), "");
    assert_eq!(read(root, "tracing_on"), "1\n");
    assert_eq!(read(root, "current_tracer"), "nop\n");
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(
        notes[0].contains("7 KB boot stub") && notes[0].contains("configured 1408 KB"),
        "{}",
        notes[0]
    );
}

#[test]
fn one_cpus_buffer_on_a_stub_is_restored_as_the_expanded_size() {
    // A CPU's own file reads `7` on a stub; saving that would shrink the CPU to 7 KB.
    let tree = fresh_tree();
    let root = tree.path();
    let mut s = Session::new(&Tracefs::at(root), Buffer::Top).unwrap();
    s.set("per_cpu/cpu0/buffer_size_kb", "1411").unwrap();
    s.restore().unwrap();
    assert_eq!(read(root, "per_cpu/cpu0/buffer_size_kb"), "1408\n");
    assert_eq!(read(root, "per_cpu/cpu1/buffer_size_kb"), "7\n");
    assert_eq!(read(root, "buffer_size_kb"), "7 (expanded: 1408)\n");
}

#[test]
fn the_kernels_expansion_of_the_stub_is_no_difference_but_is_reported() {
    let tree = fresh_tree();
    let root = tree.path();
    let before = observe(root);
    assert_eq!(before["buffer_size_kb"], "7 (expanded: 1408)");
    assert_eq!(before["per_cpu/cpu0"], "7");
    assert_eq!(before["instances"], "");

    // What the kernel does on first use: 1408 KB in 4080-byte data pages reads back as 1410.
    for rel in [
        "buffer_size_kb",
        "per_cpu/cpu0/buffer_size_kb",
        "per_cpu/cpu1/buffer_size_kb",
    ] {
        fs::write(root.join(rel), "1410\n").unwrap();
    }
    let expanded = observe(root);
    assert_eq!(differences(&before, &expanded), Vec::<String>::new());
    let note = expansion(&before, &expanded).expect("the expansion is reported");
    assert!(note.contains("(1410 KB per CPU)"), "{note}");

    // Once expanded, nothing more is reported, and a real change is still a difference.
    assert_eq!(expansion(&expanded, &observe(root)), None);
    fs::write(root.join("per_cpu/cpu1/buffer_size_kb"), "2048\n").unwrap();
    assert_eq!(
        differences(&before, &observe(root)),
        vec!["per_cpu/cpu1: Some(\"7\") -> Some(\"2048\")".to_string()]
    );
}

#[test]
fn a_stub_shrunk_to_its_stub_size_is_a_difference() {
    // Writing 7 back gives a working 7 KB buffer: it reads "7", no longer a stub. That is the
    // damage a naive restore does, and it must not pass as restored.
    let tree = fresh_tree();
    let root = tree.path();
    let before = observe(root);
    fs::write(root.join("buffer_size_kb"), "7\n").unwrap();
    let diff = differences(&before, &observe(root));
    assert_eq!(
        diff,
        vec!["buffer_size_kb: Some(\"7 (expanded: 1408)\") -> Some(\"7\")".to_string()]
    );
    assert_eq!(expansion(&before, &observe(root)), None);
}

#[test]
fn a_session_failing_on_a_fresh_tree_leaves_no_instance_and_no_change_behind() {
    let tree = fresh_tree();
    let root = tree.path();
    let before = contents(root);
    // The instance directory is made, but it is a plain directory with no `tracing_on` in it,
    // so the session fails at its first write and must remove what it made.
    let err = Session::new(&Tracefs::at(root), Buffer::Instance("rtsleuth-test".into()))
        .err()
        .expect("no tracing_on in the instance");
    assert!(err.to_string().contains("tracing_on"), "{err}");
    assert_eq!(fs::read_dir(root.join("instances")).unwrap().count(), 0);
    assert_eq!(contents(root), before);
}
