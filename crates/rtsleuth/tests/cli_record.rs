//! `rtsleuth record` on this machine: the file it writes is a trace both rtsleuth and
//! `trace-cmd` read, it ends on time, with its command, on SIGINT and SIGTERM, and after every
//! one of those (and after errors) tracefs is exactly as it was. Live: needs root and tracefs.

mod common;

use common::{ok, rtsleuth};
use rtsleuth_live::testing::live_tracefs;
use rtsleuth_live::tracefs::{differences, observe};
use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

fn assert_restored(before: &std::collections::BTreeMap<String, String>, root: &Path) {
    let diff = differences(before, &observe(root));
    assert!(
        diff.is_empty(),
        "tracefs not restored:\n{}",
        diff.join("\n")
    );
}

/// The event count `rtsleuth stats` reads back from a recorded file.
fn events_in(file: &Path) -> u64 {
    let stats: Value =
        serde_json::from_str(&ok(&["stats", "--json", file.to_str().unwrap()])).unwrap();
    stats["events"].as_u64().unwrap()
}

fn json_of(out: &Output) -> Value {
    assert!(
        out.status.success() || out.status.code().is_some(),
        "{out:?}"
    );
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)))
}

/// `record -d 1 -e EVENTS --json -o FILE`, which must succeed.
fn timed_recording(events: &str, file: &Path) -> Output {
    let out = rtsleuth()
        .args(["record", "-d", "1", "-e", events, "--json", "-o"])
        .arg(file)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

#[test]
fn a_timed_recording_is_a_trace_rtsleuth_and_trace_cmd_read_alike() {
    let Some((root, _lock)) = live_tracefs() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("t.dat");
    let before = observe(&root);
    let out = timed_recording("sched,irq", &file);
    assert_restored(&before, &root);
    let report = json_of(&out);
    assert_eq!(report["schema"], "rtsleuth.record/1");
    assert_eq!(report["ended"], "elapsed");
    let seconds = report["seconds"].as_f64().unwrap();
    assert!((1.0..1.5).contains(&seconds), "{seconds}");
    let events = report["events"].as_u64().unwrap();
    assert!(events > 100, "{report}");
    assert_eq!(report["lost_events"], 0);
    // The kernel's count of events read is what the file holds, by rtsleuth's reader...
    assert_eq!(events_in(&file), events);
    // ...and by trace-cmd's, when it is installed.
    if let Ok(tc) = Command::new("trace-cmd").arg("report").arg(&file).output() {
        let lines = String::from_utf8_lossy(&tc.stdout)
            .lines()
            .filter(|l| l.contains(": "))
            .count() as u64;
        assert!(
            tc.status.success(),
            "{}",
            String::from_utf8_lossy(&tc.stderr)
        );
        assert_eq!(lines, events);
    }
    let recorded: Vec<&str> = report["recorded"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(recorded[0], "sched:*");
    assert!(recorded.contains(&"irq:*"), "{recorded:?}");
    let per_cpu: u64 = report["cpus"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["events"].as_u64().unwrap())
        .sum();
    assert_eq!(per_cpu, events);
}

#[test]
fn recording_while_a_command_runs_ends_with_it_and_passes_its_exit_status_on() {
    let Some((root, _lock)) = live_tracefs() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("cmd.dat");
    let before = observe(&root);
    let out = rtsleuth()
        .args(["record", "--top-level", "--json", "-o"])
        .arg(&file)
        .args(["--", "sh", "-c", "sleep 0.3; exit 3"])
        .output()
        .unwrap();
    assert_restored(&before, &root);
    assert_eq!(
        out.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report = json_of(&out);
    assert_eq!(report["ended"], "sh exited (exit status: 3)");
    assert!(report["seconds"].as_f64().unwrap() >= 0.3);
    assert_eq!(events_in(&file), report["events"].as_u64().unwrap());
}

/// Starts a recording that only a signal ends, sends `signal` once it runs, and returns its
/// output.
fn interrupted(args: &[&str], signal: libc::c_int, file: &Path) -> Output {
    let child = rtsleuth()
        .arg("record")
        .arg("-o")
        .arg(file)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(800));
    // SAFETY: kill(2) on our own, not yet reaped, child.
    assert_eq!(unsafe { libc::kill(child.id() as i32, signal) }, 0);
    child.wait_with_output().unwrap()
}

#[test]
fn sigint_mid_run_saves_the_trace_and_restores_the_top_level_buffer() {
    let Some((root, _lock)) = live_tracefs() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("int.dat");
    let before = observe(&root);
    let out = interrupted(
        &[
            "--top-level",
            "--clock",
            "mono",
            "-b",
            "2048",
            "--cpus",
            "0",
            "--json",
        ],
        libc::SIGINT,
        &file,
    );
    assert_restored(&before, &root);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report = json_of(&out);
    assert_eq!(report["ended"], "interrupted");
    assert_eq!(report["cpus"].as_array().unwrap().len(), 1, "--cpus 0");
    assert_eq!(events_in(&file), report["events"].as_u64().unwrap());
}

#[test]
fn sigterm_ends_the_recording_and_its_command() {
    let Some((root, _lock)) = live_tracefs() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("term.dat");
    let before = observe(&root);
    let started = std::time::Instant::now();
    let out = interrupted(&["--json", "--", "sleep", "30"], libc::SIGTERM, &file);
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "the command outlived the recording"
    );
    assert_restored(&before, &root);
    let report = json_of(&out);
    assert_eq!(report["ended"], "interrupted");
    // `sleep` was terminated by the SIGTERM rtsleuth passed on: no exit code, so 0.
    assert_eq!(out.status.code(), Some(0));
}

#[test]
fn errors_before_and_after_tracefs_is_changed_leave_it_as_it_was() {
    let Some((root, _lock)) = live_tracefs() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("err.dat");
    let before = observe(&root);
    let cases: [(&[&str], &str); 3] = [
        (
            &["-e", "sched:no_such_event"],
            "unknown event \"sched:no_such_event\"",
        ),
        (
            &["--top-level", "--", "/nonexistent/cmd"],
            "cannot run /nonexistent/cmd",
        ),
        (
            &["--top-level", "--clock", "no-such-clock", "-d", "1"],
            "writing \"no-such-clock\"",
        ),
    ];
    for (args, message) in cases {
        // `-o` before the case's arguments: after a `--` it would be the command's, and the
        // recording would go to the default file in the current directory (the repository).
        let out = rtsleuth()
            .arg("record")
            .arg("-o")
            .arg(&file)
            .args(args)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
        assert!(stderr.contains(message), "{args:?}: {stderr}");
        assert_restored(&before, &root);
    }
}

#[test]
fn tracefs_is_mounted_when_missing_and_unmounted_after() {
    let Some((_root, _lock)) = live_tracefs() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("mnt.dat");
    // A private mount namespace: the machine's own mounts are not touched.
    let script = format!(
        "umount /sys/kernel/debug/tracing 2>/dev/null; umount /sys/kernel/tracing || exit 99; \
         {bin} record -d 1 -e sched -o {file} || exit 98; \
         grep -c tracefs /proc/mounts; true",
        bin = env!("CARGO_BIN_EXE_rtsleuth"),
        file = file.display()
    );
    let out = Command::new("unshare")
        .args(["-m", "sh", "-c", &script])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{:?}: {stdout}\n{stderr}", out.status);
    assert!(
        stdout.contains("tracefs was not mounted; mounted it at /sys/kernel/tracing"),
        "{stdout}"
    );
    assert_eq!(
        stdout.lines().last(),
        Some("0"),
        "tracefs left mounted: {stdout}"
    );
    assert!(events_in(&file) > 0);
}

/// A run killed with SIGKILL cannot remove its private instance (`instances/rtsleuth-PID`),
/// which nothing else would; the next run removes it, says so, and leaves tracefs as it was
/// before the killed run.
#[test]
fn the_next_run_removes_a_sigkilled_runs_instance() {
    let Some((root, _lock)) = live_tracefs() else {
        return;
    };
    let before = observe(&root);
    let dir = tempfile::tempdir().unwrap();
    let child = rtsleuth()
        .args(["record", "-e", "sched", "-o"])
        .arg(dir.path().join("killed.dat"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stale = root
        .join("instances")
        .join(format!("rtsleuth-{}", child.id()));
    std::thread::sleep(Duration::from_millis(800));
    let mut child = child;
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(stale.exists(), "SIGKILL leaves {} behind", stale.display());
    let out = timed_recording("sched", &dir.path().join("next.dat"));
    assert!(!stale.exists(), "{} is still there", stale.display());
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains(&format!("removed {}", stale.display())),
        "{said}"
    );
    assert_restored(&before, &root);
}
