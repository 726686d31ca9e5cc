//! Wake chains on a recording whose chain start is known from the injection
//! (`tests/fixtures/recorded/pipe_chain`): a SCHED_FIFO producer sleeps to an absolute
//! deadline every 2 ms and writes it into a pipe; its consumer marks every read more than
//! 1 ms late with that deadline. The trace clock is `mono`, the deadlines' clock, so a
//! deadline is a trace timestamp. Expected values come from the program's own grid and marks,
//! read from the raw text here, never from explain.

mod common;

use common::{golden, ok, repo_root};
use serde_json::Value;

const TRACE: &str = "tests/fixtures/recorded/pipe_chain/trace.txt.zst";
const PRODUCER: i64 = 17895;
const PERIOD_NS: i64 = 2_000_000;
/// How far a chain's start may be from the deadline: the timer's clock conversion.
const TOL_NS: i64 = 5_000;

fn ns(v: &Value) -> i64 {
    (v.as_f64().expect("a timestamp") * 1e9).round() as i64
}

/// `(mark ts, due)` of every `pipe_chain late <us> due <ns> seq <n>` mark.
fn marks() -> Vec<(i64, i64)> {
    let raw = std::fs::read(repo_root().join(TRACE)).unwrap();
    let text = String::from_utf8(zstd::decode_all(raw.as_slice()).unwrap()).unwrap();
    let mut out = Vec::new();
    for line in text.lines().filter(|l| l.contains("pipe_chain late ")) {
        let ts_field = line.split(": ").next().unwrap().rsplit(' ').next().unwrap();
        let (s, frac) = ts_field.split_once('.').unwrap();
        let ts = s.parse::<i64>().unwrap() * 1_000_000_000 + frac.parse::<i64>().unwrap() * 1_000;
        let due = line
            .split(" due ")
            .nth(1)
            .unwrap()
            .split(' ')
            .next()
            .unwrap();
        out.push((ts, due.parse().unwrap()));
    }
    out
}

fn consumer_findings() -> Vec<Value> {
    let out = ok(&[
        "explain",
        TRACE,
        "--task",
        "consumer",
        "--threshold",
        "0",
        "--top",
        "2000",
        "--json",
    ]);
    let doc: Value = serde_json::from_str(&out).unwrap();
    doc["findings"].as_array().unwrap().clone()
}

/// Every chain starts on the producer's 2 ms grid: at the last deadline before the producer
/// was woken, the producer being the chain's only link, woken by its timer.
#[test]
fn every_consumer_chain_starts_at_the_producers_deadline() {
    let marks = marks();
    let base = marks[0].1;
    let findings = consumer_findings();
    let chains: Vec<&Value> = findings.iter().filter(|f| f["source"] == "chain").collect();
    // 944 wake-ups; the few left are the program's start and exit, where the consumer woke
    // the producer.
    assert!(
        chains.len() >= 935,
        "{} chains of {}",
        chains.len(),
        findings.len()
    );
    for f in chains {
        let links = f["chain"].as_array().unwrap();
        assert_eq!(links.len(), 1, "{f}");
        let l = &links[0];
        assert_eq!(l["task"]["pid"], PRODUCER);
        assert_eq!(l["woken_by"], "timer");
        let woken = ns(&l["woken_ts"]);
        let due = base + (woken - base).div_euclid(PERIOD_NS) * PERIOD_NS;
        let start = ns(&f["expected_ts"]);
        assert!(
            (start - due).abs() <= TOL_NS,
            "start {start}, deadline {due}: {f}"
        );
        assert_eq!(ns(&l["wakes_next_ts"]), ns(&f["wakeup_ts"]));
    }
}

/// Each late read's mark names the deadline it read: the chain of the wake-up it ran in starts
/// there (the earliest deadline, when one wake-up read two), and its latency is the mark's
/// figure less the consumer's own way from the switch to its clock read.
#[test]
fn every_late_read_is_a_chain_from_its_marked_deadline() {
    let findings = consumer_findings();
    let mut checked = 0;
    for (mark, due) in marks() {
        let f = (findings.iter())
            .filter(|f| ns(&f["run_ts"]) <= mark)
            .max_by_key(|f| ns(&f["run_ts"]))
            .expect("a wake-up before the mark");
        let start = ns(&f["expected_ts"]);
        if start < due - TOL_NS {
            continue; // the second deadline of a read that took two
        }
        assert_eq!(f["source"], "chain", "{f}");
        assert!(
            (start - due).abs() <= TOL_NS,
            "start {start}, mark's due {due}"
        );
        checked += 1;
    }
    assert!(checked >= 100, "{checked} marks matched");
}

/// The worst chain, seq 992, as the fixture's README derives it by hand: due 49176.122679084,
/// the producer switched in at .122723 and woke the consumer at .122725, which ran at .126023
/// after fifo_burst held CPU1.
#[test]
fn the_worst_chain_is_the_readmes() {
    let findings = consumer_findings();
    let f = (findings.iter())
        .max_by(|a, b| {
            a["latency_us"]
                .as_f64()
                .partial_cmp(&b["latency_us"].as_f64())
                .unwrap()
        })
        .unwrap();
    assert!((ns(&f["expected_ts"]) - 49_176_122_679_084).abs() <= TOL_NS);
    assert_eq!(ns(&f["run_ts"]), 49_176_126_023_000);
    let l = &f["chain"][0];
    assert_eq!(ns(&l["run_ts"]), 49_176_122_723_000);
    assert_eq!(ns(&l["wakes_next_ts"]), 49_176_122_725_000);
    let waker_run: Vec<&Value> = (f["timeline"].as_array().unwrap().iter())
        .filter(|s| s["kind"] == "waker_run")
        .collect();
    assert_eq!(waker_run.len(), 1);
    assert_eq!(waker_run[0]["culprit_pid"], PRODUCER);
    let hog: f64 = (f["components"].as_array().unwrap().iter())
        .filter(|c| c["kind"] == "higher_priority" && c["culprit_pid"] == 17892)
        .map(|c| c["us"].as_f64().unwrap())
        .sum();
    // fifo_burst held CPU1 from before the wake-up (.122725) to the switch (.126023).
    assert!((3200.0..=3298.0).contains(&hog), "fifo_burst {hog} us");
    assert_eq!(f["root_cause"], "higher_priority");
}

/// `--due` explains the wake-up due then, however late the others were (docs/claims.md, "Break
/// traces"): the producer sleeps to every deadline the marks name, and asked for one it is
/// that wake-up, due there by its own timer; halfway between two deadlines there is none.
#[test]
fn due_picks_the_wakeup_due_then_not_the_worst() {
    let explain_due = |due: i64, top: &str| -> Vec<Value> {
        let secs = format!("{}.{:09}", due / 1_000_000_000, due % 1_000_000_000);
        let pid = PRODUCER.to_string();
        let mut args = vec!["explain", TRACE, "--pid", &pid, "--top", top, "--json"];
        if due > 0 {
            args.extend(["--due", &secs]);
        }
        let doc: Value = serde_json::from_str(&ok(&args)).unwrap();
        doc["findings"].as_array().unwrap().clone()
    };
    let worst = ns(&explain_due(0, "1")[0]["expected_ts"]);
    let mut other = 0;
    for (_, due) in marks().into_iter().step_by(10) {
        let found = explain_due(due, "5");
        assert_eq!(found.len(), 1, "due {due}: {found:?}");
        let f = &found[0];
        assert_eq!(f["source"], "timer", "{f}");
        assert!((ns(&f["expected_ts"]) - due).abs() <= TOL_NS, "{f}");
        other += usize::from((due - worst).abs() > TOL_NS);
        assert!(explain_due(due + PERIOD_NS / 2, "5").is_empty());
    }
    assert!(other >= 10, "{other} deadlines other than the worst's");
}

/// The report of a chain finding: the chain's start, each link's milestones and the stretches
/// between them, in the text and in the JSON.
#[test]
fn a_chain_finding_reads_as_its_links() {
    golden(
        "explain-chain.txt",
        &ok(&["explain", TRACE, "--task", "consumer", "--top", "1"]),
    );
    golden(
        "explain-chain.json",
        &ok(&[
            "explain", TRACE, "--task", "consumer", "--top", "1", "--json",
        ]),
    );
}

/// A kworker woken by a work's queueing starts a chain there (docs/claims.md, "Works"): in
/// the recorded `tests/fixtures/tracedat/v7-none.dat`, as `trace-cmd report -t` prints it,
///
/// ```text
/// <idle>-0     [000] 7769.944418661: workqueue_queue_work: ... function=virtio_transport_rx_work ...
/// <idle>-0     [000] 7769.944419883: workqueue_activate_work: ...
/// <idle>-0     [000] 7769.944421405: sched_waking: comm=kworker/0:0 pid=29181 prio=120 target_cpu=000
/// <idle>-0     [000] 7769.944429230: sched_switch: swapper/0:0 [120] R ==> kworker/0:0:29181 [120]
/// kworker/0:0-29181 [000] 7769.944442475: sched_waking: comm=tokio-rt-worker pid=70 prio=110 ...
/// ```
///
/// so the vsock reader's wake-up is a one-link chain due at the queueing, through the kworker.
#[test]
fn a_kworkers_wakee_is_a_chain_from_the_queueing() {
    let out = ok(&[
        "explain",
        "tests/fixtures/tracedat/v7-none.dat",
        "--pid",
        "70",
        "--threshold",
        "0",
        "--top",
        "1000",
        "--json",
    ]);
    let doc: Value = serde_json::from_str(&out).unwrap();
    let f = (doc["findings"].as_array().unwrap().iter())
        .find(|f| f["wakeup_ts"].as_f64() == Some(7769.944442475))
        .expect("the vsock reader's wake-up");
    assert_eq!(f["source"], "chain");
    assert_eq!(f["expected_ts"].as_f64(), Some(7769.944418661));
    let link = &f["chain"][0];
    assert_eq!(f["chain"].as_array().unwrap().len(), 1);
    assert_eq!(
        (link["task"]["pid"].as_i64(), link["woken_by"].as_str()),
        (Some(29181), Some("queue"))
    );
    let times: Vec<f64> = ["woken_ts", "run_ts", "wakes_next_ts"]
        .iter()
        .map(|k| link[k].as_f64().unwrap())
        .collect();
    assert_eq!(times, [7769.944421405, 7769.94442923, 7769.944442475]);
}
