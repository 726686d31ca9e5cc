//! The `rtsleuth` binary end to end on a real recorded trace: golden outputs, the JSON
//! contract, stdin, compressed input, error messages and exit codes.
//!
//! Goldens live in `tests/golden/`; `UPDATE_GOLDEN=1 cargo test -p rtsleuth --test cli`
//! rewrites them. The binary runs from the repository root with a relative trace path, so the
//! source path printed in the outputs is the same on every machine.

mod common;

use common::{golden, ok, repo_root, rtsleuth, run};
use serde_json::Value;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Command, Output, Stdio};

const TRACE: &str = "tests/fixtures/recorded/variants/trace.txt";

#[test]
fn stats_text() {
    golden("stats.txt", &ok(&["stats", TRACE]));
}

#[test]
fn latency_text() {
    golden("latency.txt", &ok(&["latency", TRACE]));
}

#[test]
fn latency_rt_only_hist_text() {
    let out = ok(&["latency", "--rt-only", "--hist", TRACE]);
    // Real-time tasks only: cyclictest (prio 19), fifo_burst (9), migration/1 (0).
    assert!(out.contains("cyclictest   15514    19"), "{out}");
    assert!(!out.contains("rcu_preempt  "), "{out}");
    assert!(out.contains("Histogram of 515 wake-ups"), "{out}");
    golden("latency-rt-hist.txt", &out);
}

#[test]
fn latency_csv() {
    let out = ok(&["latency", "--csv", TRACE]);
    let mut lines = out.lines();
    assert_eq!(
        lines.next(),
        Some("Task,PID,Prio,Runtime ms,Switches,Wakeups,Avg us,p50 us,p99 us,p99.9 us,Max us,Max at s")
    );
    assert!(
        out.lines().any(|l| l.starts_with("cyclictest,15514,19,")),
        "{out}"
    );
    golden("latency.csv", &out);
}

#[test]
fn stats_json() {
    let out = ok(&["stats", "--json", TRACE]);
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["schema"], "rtsleuth.stats/1");
    assert_eq!(v["format"], "ftrace_text");
    assert_eq!(v["events"], 8794);
    assert_eq!(v["cpus"], serde_json::json!([0, 1]));
    assert_eq!(v["lost_events"], 0);
    let per_event = v["per_event"].as_object().unwrap();
    assert_eq!(per_event["sched_switch"], 1195);
    assert_eq!(per_event["sched_waking"], 607);
    assert_eq!(per_event["tracing_mark_write"], 12);
    let sum: u64 = per_event.values().map(|n| n.as_u64().unwrap()).sum();
    assert_eq!(sum, 8794, "per_event adds up to the events");
    golden("stats.json", &out);
}

#[test]
fn latency_json() {
    let out = ok(&["latency", "--json", TRACE]);
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["schema"], "rtsleuth.latency/1");
    let trace = &v["trace"];
    assert_eq!(trace["format"], "ftrace_text");
    assert_eq!(trace["events"], 8794);
    assert_eq!(trace["cpus"], serde_json::json!([0, 1]));
    assert_eq!(trace["start"], 633.040295);
    assert_eq!(trace["end"], 633.660147);
    assert_eq!(trace["lost_events"], 0);
    let tasks = v["tasks"].as_array().unwrap();
    assert!(!tasks.is_empty());
    for t in tasks {
        for key in ["comm", "pid", "prio", "max_us", "avg_us"] {
            assert!(t.get(key).is_some(), "task without {key}: {t}");
        }
        assert!(
            t["comm"].is_string() && t["pid"].is_i64() && t["prio"].is_i64(),
            "{t}"
        );
    }
    // The measured thread: reference max 293 000 ns over 500 wake-ups (tests/fixtures/recorded
    // README, from independent_latency.py).
    let cyclictest = tasks.iter().find(|t| t["pid"] == 15514).unwrap();
    assert_eq!(cyclictest["comm"], "cyclictest");
    assert_eq!(cyclictest["prio"], 19);
    assert_eq!(cyclictest["max_us"], 293.0);
    assert_eq!(cyclictest["wakeups"], 500);
    golden("latency.json", &out);
}

/// Runs with the trace on standard input (`-`).
fn with_stdin(args: &[&str], file: &str) -> Output {
    let mut child = rtsleuth()
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let data = std::fs::read(repo_root().join(file)).unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let feeder = std::thread::spawn(move || {
        // The reader may stop early on an error; a broken pipe here is fine.
        let _ = stdin.write_all(&data);
    });
    let out = child.wait_with_output().unwrap();
    feeder.join().unwrap();
    out
}

#[test]
fn stdin_gives_the_same_output_as_the_path() {
    for args in [
        &["stats"][..],
        &["stats", "--json"],
        &["latency"],
        &["latency", "--json"],
        &["latency", "--csv"],
    ] {
        let by_path = ok(&[args, &[TRACE]].concat());
        let out = with_stdin(&[args, &["-"]].concat(), TRACE);
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.lines().all(|l| l.starts_with("rtsleuth: warning: ")),
            "{args:?}: {stderr}"
        );
        // Only the name of the source differs.
        let by_stdin = String::from_utf8(out.stdout)
            .unwrap()
            .replace("<stdin>", TRACE);
        assert_eq!(by_stdin, by_path, "{args:?}");
    }
}

#[test]
fn compressed_stdin() {
    let out = with_stdin(
        &["latency", "-"],
        "tests/fixtures/recorded/variants/trace.txt.xz",
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        ok(&["latency", TRACE])
    );
}

#[test]
fn compressed_files_give_the_same_latency_output() {
    let plain_text = ok(&["latency", TRACE]);
    let plain_json = ok(&["latency", "--json", TRACE]);
    for ext in ["zst", "gz", "xz"] {
        let path = format!("{TRACE}.{ext}");
        assert_eq!(ok(&["latency", &path]), plain_text, "{ext}");
        let json = ok(&["latency", "--json", &path]).replace(&path, TRACE);
        assert_eq!(json, plain_json, "{ext}");
    }
}

/// A bad input: exit code 1, nothing on stdout, one line `rtsleuth: <path>: ...` on stderr.
fn fails(args: &[&str], path: &str) -> String {
    let out = run(args);
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
    assert!(
        out.stdout.is_empty(),
        "{args:?} wrote to stdout: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(
        stderr.starts_with(&format!("rtsleuth: {path}:")),
        "{args:?}: {stderr:?}"
    );
    assert!(
        stderr.ends_with('\n') && stderr.lines().count() == 1,
        "{args:?}: not one line: {stderr:?}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
    stderr
}

#[test]
fn bad_inputs_fail_with_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty.txt");
    std::fs::write(&empty, b"").unwrap();
    let prose = dir.path().join("prose.txt");
    std::fs::write(&prose, b"hello\nworld\n").unwrap();
    let elf = dir.path().join("elf");
    std::fs::write(&elf, b"\x7fELF\x02\x01\x01\0\0\0\0\0").unwrap();
    // Cut before anything decompresses (a stream cut later is read up to the cut).
    let cut = dir.path().join("cut.txt.gz");
    let gz = std::fs::read(repo_root().join(TRACE).with_extension("txt.gz")).unwrap();
    std::fs::write(&cut, &gz[..20]).unwrap();
    // A v6 trace.dat cut inside its page header format (which starts at byte 38).
    let cut_dat = dir.path().join("cut.dat");
    let dat = std::fs::read(repo_root().join("tests/fixtures/tracedat/v6.dat")).unwrap();
    std::fs::write(&cut_dat, &dat[..200]).unwrap();

    let s = |p: &Path| p.to_str().unwrap().to_string();
    let dir_path = s(dir.path());
    let cases: Vec<(String, &str)> = vec![
        (
            s(&cut_dat),
            "malformed at byte 38: header_page needs 205 bytes but the data ends after 162: the file is truncated",
        ),
        (
            "tests/fixtures/recorded/variants/README.md".into(),
            "not a trace rtsleuth knows",
        ),
        (
            "tests/fixtures/recorded/no-such-file.txt".into(),
            "No such file or directory",
        ),
        // A directory is a set; none of these files is a readable trace.
        (dir_path.clone(), "no trace could be read among 5 files"),
        (s(&empty), "empty input"),
        (s(&prose), "not a trace rtsleuth knows"),
        (s(&elf), "NUL byte at offset 7"),
        (
            s(&cut),
            "gzip data is corrupt or truncated (at compressed byte",
        ),
    ];
    for (path, what) in &cases {
        for cmd in ["stats", "latency"] {
            let msg = fails(&[cmd, path], path);
            assert!(msg.contains(what), "{cmd} {path}: want {what:?} in {msg:?}");
            let msg = fails(&[cmd, "--json", path], path);
            assert!(msg.contains(what), "{cmd} --json {path}: {msg:?}");
        }
        let msg = fails(&["latency", "--csv", path], path);
        // CSV is one trace's table: a set (a directory) is refused before anything is read.
        let what = if *path == dir_path {
            "--csv writes one trace's table"
        } else {
            what
        };
        assert!(msg.contains(what), "latency --csv {path}: {msg:?}");
    }
}

#[test]
fn error_message_does_not_repeat_its_cause() {
    let path = "tests/fixtures/recorded/no-such-file.txt";
    let msg = fails(&["stats", path], path);
    assert_eq!(
        msg,
        format!("rtsleuth: {path}: No such file or directory (os error 2)\n")
    );

    let dir = tempfile::tempdir().unwrap();
    let cut = dir.path().join("cut.txt.zst");
    let zst = std::fs::read(repo_root().join(TRACE).with_extension("txt.zst")).unwrap();
    std::fs::write(&cut, &zst[..20]).unwrap();
    let cut = cut.to_str().unwrap();
    let msg = fails(&["stats", cut], cut);
    let cause = msg.rsplit_once("): ").unwrap().1.trim_end();
    assert_eq!(msg.matches(cause).count(), 1, "{msg:?}");
}

/// A compressed trace cut in half: the lines before the cut are read (the numbers are the
/// ones `crates/rtsleuth-trace/tests/bad_input.rs` checks against the plain text), exit 0, and
/// the warning says where the stream stopped, in the report and in the JSON.
#[test]
fn a_cut_compressed_trace_is_read_up_to_the_cut_with_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let cut = dir.path().join("cut.txt.gz");
    let gz = std::fs::read(repo_root().join(TRACE).with_extension("txt.gz")).unwrap();
    std::fs::write(&cut, &gz[..gz.len() / 2]).unwrap();
    let cut = cut.to_str().unwrap();
    let warning = "the gzip stream is damaged at compressed byte 36448 (";
    let read = "): read the first 520334 bytes of text (4256 lines; the 44 bytes of the line it cut were dropped); the rest was not read";
    let text = ok(&["stats", cut]);
    assert!(text.contains(warning) && text.contains(read), "{text}");
    let json: Value = serde_json::from_str(&ok(&["stats", "--json", cut])).unwrap();
    assert_eq!(json["events"], 4244);
    let w = json["warnings"][0].as_str().unwrap();
    assert!(w.starts_with(warning) && w.ends_with(read), "{w}");
}

#[test]
fn stdin_errors_name_stdin() {
    let out = with_stdin(
        &["stats", "-"],
        "tests/fixtures/recorded/variants/README.md",
    );
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    assert!(
        stderr.starts_with("rtsleuth: <stdin>: not a trace rtsleuth knows"),
        "{stderr:?}"
    );
}

#[test]
fn trace_dat_from_stdin_reads_like_the_file() {
    let out = with_stdin(&["stats", "-"], "tests/fixtures/tracedat/trace.dat");
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("trace-cmd trace.dat"), "{text}");
    assert!(text.contains("Events        20009"), "{text}");
}

#[test]
fn bogus_sort_is_a_usage_error() {
    let out = run(&["latency", "--sort", "bogus", TRACE]);
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(out.stdout.is_empty());
    assert!(
        stderr.contains("invalid value 'bogus' for '--sort <SORT>'"),
        "{stderr}"
    );
    assert!(
        stderr.contains("max, avg, p99, wakeups, runtime, pid, task"),
        "{stderr}"
    );
}

/// `--due` takes seconds in the trace's clock: anything else is a usage error that says so.
#[test]
fn a_due_time_that_is_not_seconds_is_a_usage_error() {
    for bad in ["soon", "-1", "NaN", "inf", ""] {
        let due = format!("--due={bad}");
        let out = run(&["explain", &due, TRACE]);
        let stderr = String::from_utf8(out.stderr).unwrap();
        assert_eq!(out.status.code(), Some(2), "{bad}: {stderr}");
        assert!(out.stdout.is_empty());
        assert!(
            stderr.contains("is not a time in seconds"),
            "{bad}: {stderr}"
        );
    }
}

#[test]
fn usage_errors() {
    for args in [
        &[][..],
        &["latency"],
        &["nonsense", TRACE],
        &["latency", "--csv", "--json", TRACE],
    ] {
        let out = run(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(out.stdout.is_empty(), "{args:?}");
    }
}

/// A synthetic trace whose latency report is far bigger than a pipe buffer: `tasks` tasks,
/// each woken once and switched in 5 us later.
fn many_tasks_trace(tasks: u32) -> String {
    let mut s = String::from("# tracer: nop\n");
    let mut t = 100_000_000u64; // us
    for i in 0..tasks {
        let pid = 1000 + i;
        let ts = |us: u64| format!("{}.{:06}", us / 1_000_000, us % 1_000_000);
        s += &format!(
            "          <idle>-0       [000] d..2.   {}: sched_waking: comm=task{i} pid={pid} prio=120 target_cpu=000\n",
            ts(t)
        );
        t += 5;
        s += &format!(
            "          <idle>-0       [000] d..2.   {}: sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=task{i} next_pid={pid} next_prio=120\n",
            ts(t)
        );
        t += 5;
        s += &format!(
            "        task{i}-{pid}    [000] d..2.   {}: sched_switch: prev_comm=task{i} prev_pid={pid} prev_prio=120 prev_state=S ==> next_comm=swapper/0 next_pid=0 next_prio=120\n",
            ts(t)
        );
        t += 5;
    }
    s
}

#[test]
fn closed_stdout_pipe_exits_quietly() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("many.txt");
    std::fs::write(&path, many_tasks_trace(3_000)).unwrap();
    let path = path.to_str().unwrap();
    for args in [
        &["latency", path][..],
        &["latency", "--csv", path],
        &["latency", "--json", path],
    ] {
        let mut child = rtsleuth()
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Like `| head -1`: read one line, close the pipe.
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        let mut first = String::new();
        stdout.read_line(&mut first).unwrap();
        assert!(!first.is_empty());
        drop(stdout);
        let mut stderr = String::new();
        child
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut stderr)
            .unwrap();
        let status = child.wait().unwrap();
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        assert!(stderr.is_empty(), "{args:?}: {stderr}");
        assert_eq!(status.code(), Some(0), "{args:?}: {stderr}");
    }
}

#[test]
fn closed_stdout_pipe_through_a_shell() {
    // The literal `rtsleuth ... | head -1`, reporting rtsleuth's own exit status.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("many.txt");
    std::fs::write(&path, many_tasks_trace(3_000)).unwrap();
    let script = format!(
        "\"$0\" latency '{}' 2>\"$1\" | head -1 >/dev/null; exit ${{PIPESTATUS[0]}}",
        path.display()
    );
    let err = dir.path().join("stderr");
    let status = Command::new("bash")
        .arg("-c")
        .arg(&script)
        .arg(env!("CARGO_BIN_EXE_rtsleuth"))
        .arg(&err)
        .status()
        .unwrap();
    let stderr = std::fs::read_to_string(&err).unwrap();
    assert_eq!(status.code(), Some(0), "{stderr}");
    assert!(stderr.is_empty(), "{stderr}");
}

#[test]
fn many_tasks_trace_is_measured() {
    // The synthetic trace of the pipe tests is itself read right: every task woken once, 5 us.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("many.txt");
    std::fs::write(&path, many_tasks_trace(50)).unwrap();
    let v: Value =
        serde_json::from_str(&ok(&["latency", "--json", path.to_str().unwrap()])).unwrap();
    let tasks = v["tasks"].as_array().unwrap();
    let woken: Vec<_> = tasks.iter().filter(|t| t["wakeups"] == 1).collect();
    assert_eq!(woken.len(), 50);
    assert!(woken.iter().all(|t| t["max_us"] == 5.0), "{woken:?}");
}

#[test]
fn task_without_wakeups_has_null_latencies_in_json() {
    let v: Value = serde_json::from_str(&ok(&[
        "latency",
        "--json",
        "tests/fixtures/recorded/stress_other/trace.txt",
    ]))
    .unwrap();
    // A CPU hog never sleeps: it is switched in 375 times, always after being preempted, and
    // never woken.
    let sleep = v["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["pid"] == 15398)
        .unwrap();
    assert_eq!(
        (&sleep["comm"], &sleep["switches"]),
        (&Value::from("stress-ng-cpu"), &Value::from(375))
    );
    assert_eq!(sleep["wakeups"], 0);
    for key in [
        "min_us",
        "max_us",
        "avg_us",
        "p50_us",
        "p99_us",
        "p999_us",
        "max_at_ts",
    ] {
        assert!(
            sleep[key].is_null(),
            "{key} = {} for a task never woken",
            sleep[key]
        );
    }
}

const FIFO_ABOVE: &str = "tests/fixtures/recorded/fifo_above/trace.txt";

#[test]
fn explain_text() {
    golden("explain.txt", &ok(&["explain", "--top", "3", FIFO_ABOVE]));
}

/// Preemption waits in the text report: the SCHED_RR pair's slice waits (fair_share) and the
/// fair server's kworker run ahead of an RT task (unknown, the task named).
#[test]
fn explain_preemptions_text() {
    golden(
        "explain-preemptions.txt",
        &ok(&[
            "explain",
            "--preemptions",
            "--pid",
            "9337",
            "--threshold",
            "20",
            "--top",
            "2",
            "tests/fixtures/recorded/rr_pair/trace.txt",
        ]),
    );
}

#[test]
fn explain_threshold_text() {
    golden(
        "explain-threshold.txt",
        &ok(&["explain", "--top", "1", "--threshold", "100", FIFO_ABOVE]),
    );
}

/// The `rtsleuth.explain/1` contract of PRODUCT.md, field by field, on the cyclictest
/// `--tracemark` recording: the mark picks the thread, its timer gives the due time.
#[test]
fn explain_json() {
    let out = ok(&[
        "explain",
        "--json",
        "--top",
        "2",
        "--threshold",
        "100",
        "tests/fixtures/recorded/tracemark/trace.txt",
    ]);
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["schema"], "rtsleuth.explain/1");
    for key in ["format", "events", "cpus", "start", "end", "lost_events"] {
        assert!(v["trace"].get(key).is_some(), "trace without {key}");
    }
    let kinds = [
        "hardirq",
        "irqs_off",
        "softirq",
        "higher_priority",
        "preempt_off",
        "black_hole",
        "kernel_path",
        "unknown",
    ];
    let findings = v["findings"].as_array().unwrap();
    // Only one wake-up of the marked thread is 100 us late or more.
    assert_eq!(findings.len(), 1, "{v:#}");
    let f = &findings[0];
    assert_eq!(
        f["task"],
        serde_json::json!({"comm": "cyclictest", "pid": 15294, "prio": 19})
    );
    assert_eq!(f["cpu"], 0);
    assert_eq!(f["source"], "timer");
    assert_eq!(f["latency_us"], 1950.366);
    assert_eq!(f["expected_ts"], 631.360512634);
    assert_eq!(f["wakeup_ts"], 631.360516);
    assert_eq!(f["run_ts"], 631.362463);
    assert_eq!(f["root_cause"], "higher_priority");
    assert!(f["summary"].as_str().unwrap().contains("fifo_burst-15291"));
    let mut sum = 0.0;
    for c in f["components"].as_array().unwrap() {
        assert!(kinds.contains(&c["kind"].as_str().unwrap()), "{c}");
        assert!(["before_wakeup", "after_wakeup"].contains(&c["phase"].as_str().unwrap()));
        for key in ["us", "start_ts", "end_ts"] {
            assert!(c[key].is_f64(), "{key} in {c}");
        }
        assert!(c["culprit"].is_string() || c["culprit"].is_null());
        assert!(c["detail"].is_string());
        sum += c["us"].as_f64().unwrap();
    }
    assert!((sum - 1950.366).abs() < 0.001, "{sum}");
    let agg = v["aggregate"].as_array().unwrap();
    assert_eq!(agg[0]["kind"], "higher_priority");
    assert_eq!(agg[0]["culprit"], "fifo_burst-15291");
    assert_eq!(agg[0]["spikes"], 1);
    assert_eq!(agg[0]["total_us"], 1937.0);
    golden("explain.json", &out);
}

#[test]
fn explain_without_targets_says_so() {
    // The trace_pipe variant has real-time tasks, but not under this name.
    let out = run(&["explain", "--task", "no-such-task", TRACE]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("no wake-up of a target task was found"),
        "{text}"
    );
}

#[test]
fn explain_all_conflicts_with_a_pid() {
    let out = run(&["explain", "--all", "--pid", "1", TRACE]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot be used with"));
}

/// The README's example output is what the binary prints.
#[test]
fn readme_example_is_current() {
    let readme = std::fs::read_to_string(repo_root().join("README.md")).unwrap();
    let out = ok(&["explain", "--top", "1", FIFO_ABOVE]);
    let threshold = ok(&["explain", "--top", "1", "--threshold", "100", FIFO_ABOVE]);
    let blocks: Vec<&str> = readme.split("```").collect();
    let example = blocks
        .iter()
        .find(|b| b.contains("#1 cyclictest-17321"))
        .unwrap();
    let aggregate = blocks
        .iter()
        .find(|b| b.contains("Aggregate over every"))
        .unwrap();
    for (block, got) in [(example, &out), (aggregate, &threshold)] {
        for line in block.lines().filter(|l| !l.trim().is_empty()) {
            assert!(
                got.contains(line),
                "README line not in the output: {line:?}\n{got}"
            );
        }
    }
}

/// The text report names the same root cause and culprit as the JSON, on every hand-written
/// synthetic trace (their numbers are checked in rtsleuth-analyze's tests/explain.rs).
#[test]
fn explain_text_names_cause_and_culprit() {
    let dir = repo_root().join("tests/fixtures/explain/synthetic");
    let mut checked = 0;
    for e in std::fs::read_dir(&dir).unwrap() {
        let p = e.unwrap().path();
        let Some(trace) = p.to_str().unwrap().strip_suffix(".expected.json") else {
            continue;
        };
        let expected: Value = serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
        let mut args: Vec<String> = vec!["explain".into()];
        args.extend(
            expected["args"]
                .as_array()
                .unwrap()
                .iter()
                .map(|a| a.as_str().unwrap().to_string()),
        );
        args.push(format!("{trace}.txt"));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let text = ok(&args);
        let json: Value = serde_json::from_str(&ok(&[&args[..], &["--json"]].concat())).unwrap();
        let f = &json["findings"][0];
        let head = format!(
            "#1 {}-{} (prio {}) CPU{}: ",
            f["task"]["comm"].as_str().unwrap(),
            f["task"]["pid"],
            f["task"]["prio"],
            f["cpu"]
        );
        let line = text
            .lines()
            .find(|l| l.trim_start().starts_with(&head))
            .unwrap_or_else(|| panic!("{head}\n{text}"));
        assert!(
            line.ends_with(&format!(
                "root cause {}",
                expected["findings"][0]["root_cause"].as_str().unwrap()
            )),
            "{line}"
        );
        let main = f["components"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["kind"] == f["root_cause"])
            .max_by(|a, b| a["us"].as_f64().partial_cmp(&b["us"].as_f64()).unwrap())
            .unwrap();
        if let Some(culprit) = main["culprit"].as_str() {
            let summary = text
                .lines()
                .skip_while(|l| !l.contains(&head))
                .nth(1)
                .unwrap();
            assert!(summary.contains(culprit), "{culprit} not in {summary}");
        }
        checked += 1;
    }
    assert!(checked >= 13, "{checked}");
}

const GRAPH_SLOW: &str = "tests/fixtures/function_graph/abnormal.txt";
const GRAPH_NORMAL: &str = "tests/fixtures/function_graph/normal.txt";

#[test]
fn graph_compare_text() {
    let out = ok(&["graph", GRAPH_SLOW, "--compare", GRAPH_NORMAL, "--top", "8"]);
    golden("graph-compare.txt", &out);
}

#[test]
fn graph_func_json() {
    let out = ok(&[
        "graph",
        GRAPH_SLOW,
        "--func",
        "smp_apic_timer_interrupt",
        "--json",
    ]);
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["compare"]["extra"][0]["us"], 7.5);
    golden("graph-func.json", &out);
}

/// A report's annotated excerpt prints what its clean twin prints, and a warning more.
#[test]
fn graph_annotated_compare_text() {
    let annotated = "tests/fixtures/function_graph/annotated.txt";
    let clean = "tests/fixtures/function_graph/annotated_clean.txt";
    let want = ok(&["graph", clean, "--compare", clean]);
    let got = ok(&["graph", annotated, "--compare", clean]);
    let warning = "warning: 25 lines carry hand-drawn markup (arrows, bars, notes), which was stripped: their calls are read at the column where the call text starts; first at line 58\n";
    assert_eq!(got, format!("{want}{warning}"));
    assert!(want.contains("  delta    +10.122 us\n"), "{want}");
}

#[test]
fn graph_refusals() {
    // An event trace given to graph, and a function_graph trace given to stats.
    let err = fails(&["graph", TRACE], TRACE);
    assert!(
        err.contains("`rtsleuth graph` reads function_graph"),
        "{err}"
    );
    let err = fails(&["stats", GRAPH_NORMAL], GRAPH_NORMAL);
    assert!(err.contains("use `rtsleuth graph`"), "{err}");
    let out = with_stdin(&["graph", "-", "--func", "f"], GRAPH_NORMAL);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("give a file, not standard input"));
}

/// Every command that analyses a trace names, in its TRACE help, every input it reads: people
/// find out from `--help` whether their perf, Perfetto or trace-cmd file is worth trying.
#[test]
fn every_analysis_help_lists_every_format_read() {
    let formats = [
        "ftrace text",
        "trace_pipe",
        "trace-cmd report",
        "atrace",
        "latency tracers",
        "`perf script`",
        "trace-cmd trace.dat",
        "perf.data",
        "Perfetto protobuf",
        ".gz, .zst or .xz",
    ];
    for command in [
        "stats", "explain", "latency", "wq", "irq", "report", "export",
    ] {
        let help = ok(&[command, "--help"]);
        let missing: Vec<&str> = formats
            .iter()
            .copied()
            .filter(|f| !help.contains(f))
            .collect();
        assert!(
            missing.is_empty(),
            "{command} --help lacks {missing:?}:\n{help}"
        );
    }
}

/// Counter clocks give counts, not time: every command that prints microseconds refuses the
/// trace with one line naming the clock and the fix; `stats` reads it and says so. Before,
/// `latency` printed the 600000 counts of `by_hand.txt` (woken at 1000, run at 601000) as
/// "600 us".
#[test]
fn counter_clocks_are_refused_by_every_measuring_command() {
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("page.html");
    let page = page.to_str().unwrap();
    for (path, clock) in [
        (
            "tests/fixtures/tracedat/clock_counter/by_hand.txt",
            "a counter trace clock",
        ),
        (
            "tests/fixtures/tracedat/clock_counter/trace.txt",
            "a counter trace clock",
        ),
        (
            "tests/fixtures/tracedat/clock_x86_tsc/trace.dat",
            "the `x86-tsc` trace clock",
        ),
    ] {
        let runs: [&[&str]; 6] = [
            &["latency", path],
            &["latency", "--json", path],
            &["explain", path],
            &["irq", path],
            &["wq", path],
            &["report", path, "-o", page],
        ];
        for args in runs {
            let msg = fails(args, path);
            assert!(
                msg.contains(&format!("its timestamps are raw counts of {clock}"))
                    && msg.contains("-C mono"),
                "{args:?}: {msg}"
            );
        }
        let stats = ok(&["stats", path]);
        assert!(stats.contains("raw counts, not nanoseconds"), "{stats}");
        let json: serde_json::Value =
            serde_json::from_str(&ok(&["stats", "--json", path])).unwrap();
        assert_eq!(json["trace"]["clock_ns"], false);
    }
}

/// `latency --csv=preemption` writes the preemption-wait table: rr_pair's README counts 6
/// slice-end waits of 9336 (worst 100 003 us) and 8 of 9337 (worst 100 002 us), and the shell
/// that started them waited once, 974 us.
#[test]
fn latency_csv_of_preemption_waits() {
    let out = ok(&[
        "latency",
        "--csv=preemption",
        "tests/fixtures/recorded/rr_pair/trace.txt",
    ]);
    let rows: Vec<Vec<&str>> = out.lines().map(|l| l.split(',').collect()).collect();
    assert_eq!(
        rows[0],
        ["Task", "PID", "Waits", "Avg us", "p50 us", "p99 us", "Max us", "Max at s"]
    );
    let got: Vec<(&str, &str, &str, &str)> =
        rows[1..].iter().map(|r| (r[1], r[2], r[6], r[7])).collect();
    assert_eq!(
        got,
        [
            ("8938", "1", "974", "32577.894644"),
            ("9336", "6", "100003", "32579.491706"),
            ("9337", "8", "100002", "32579.191708"),
        ]
    );
}

/// `latency --hist` adds the preemption waits' histogram: rr_pair's 14 waits of the two RR
/// tasks by hand are 6 us, 27 us, 3 481 and 3 870 us, and ten of one slice (~100 ms).
#[test]
fn latency_hist_of_preemption_waits() {
    let out = ok(&[
        "latency",
        "--json",
        "--hist",
        "--task",
        "fifo_burst",
        "tests/fixtures/recorded/rr_pair/trace.txt",
    ]);
    let v: Value = serde_json::from_str(&out).unwrap();
    let buckets: Vec<(u64, u64)> = (v["preemption"]["histogram"].as_array().unwrap().iter())
        .map(|b| (b["lt_us"].as_u64().unwrap(), b["count"].as_u64().unwrap()))
        .filter(|b| b.1 > 0)
        .collect();
    assert_eq!(buckets, [(8, 1), (32, 1), (4096, 2), (131072, 10)]);
}
