//! `rtsleuth hwlat`: the report formats from a fixed result (goldens), the arguments it
//! refuses, and a live run of the user-space detector that must leave the machine usable.

mod common;

use common::{golden, run};
use rtsleuth_live::hwlat::{document, CpuResult, Detection, Mode, Settings, Spike};
use rtsleuth_render::{Exporter, JsonExporter, TextExporter};
use serde_json::Value;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

const S: u64 = 1_000_000_000;

fn spike(us: u64, ts: u64) -> Spike {
    Spike {
        ns: us * 1000 + 250,
        ts,
        wall: ts + 1_700_000_000 * S,
    }
}

fn settings() -> Settings {
    Settings {
        width_us: 100_000,
        window_us: 500_000,
        threshold_us: 10,
        duration: Duration::from_secs(2),
        cpus: "0-1".parse().unwrap(),
        prio: 99,
        top: 3,
    }
}

/// Two CPUs: one with three gaps (two kept), one quiet.
fn user_result() -> Detection {
    Detection {
        mode: Mode::User,
        settings: settings(),
        elapsed: Duration::from_millis(1850),
        interrupted: false,
        cpus: vec![
            CpuResult {
                cpu: 0,
                windows: Some(4),
                measured_ns: Some(400_000_000),
                gaps: 3,
                max_ns: 2_012_250,
                nmi_count: None,
                worst: vec![spike(2012, 100 * S + 5), spike(40, 101 * S)],
            },
            CpuResult {
                cpu: 1,
                windows: Some(4),
                measured_ns: Some(399_999_000),
                gaps: 0,
                max_ns: 0,
                nmi_count: None,
                worst: vec![],
            },
        ],
        warnings: vec![],
    }
}

fn kernel_result() -> Detection {
    let mut d = user_result();
    d.mode = Mode::Kernel;
    d.interrupted = true;
    d.elapsed = Duration::from_millis(700);
    for c in &mut d.cpus {
        c.windows = None;
        c.measured_ns = None;
        c.nmi_count = Some(c.cpu as u64 * 2);
    }
    d.cpus[1].worst = vec![spike(12, 102 * S)];
    d.cpus[1].gaps = 6;
    d.cpus[1].max_ns = 12_250;
    d.warnings = vec!["1 line(s) of the trace were not hwlat samples and were skipped".into()];
    d
}

fn export(exporter: &dyn Exporter, d: &Detection) -> String {
    let mut out = Vec::new();
    exporter.export(&document(d), &mut out).unwrap();
    String::from_utf8(out).unwrap()
}

#[test]
fn user_report_text() {
    let text = export(&TextExporter, &user_result());
    // Totals of both CPUs: 8 windows, 0.799999 s measured, 3 gaps, longest 2012.25 us.
    assert!(
        text.contains("  all        8       0.800     3  2012.25"),
        "{text}"
    );
    assert!(
        text.contains("    0  100.000000  1700000100.000000  2012.25"),
        "{text}"
    );
    golden("hwlat-user.txt", &text);
}

#[test]
fn user_report_json() {
    let json = export(&JsonExporter, &user_result());
    let v: Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["schema"], "rtsleuth.hwlat/1");
    assert_eq!(v["mode"], "user");
    assert_eq!(v["settings"]["width_us"], 100_000);
    assert_eq!(v["settings"]["cpus"], serde_json::json!([0, 1]));
    assert_eq!(v["settings"]["prio"], 99);
    assert_eq!(v["cpus"][0]["windows"], 4);
    assert_eq!(v["cpus"][0]["measured_s"], 0.4);
    assert_eq!(v["cpus"][0]["max_us"], 2012.25);
    assert_eq!(v["cpus"][0]["worst"][0]["ts"], 100.000000005);
    assert_eq!(v["cpus"][0]["worst"][1]["us"], 40.25);
    assert_eq!(v["total"]["gaps"], 3);
    assert_eq!(v["total"]["windows"], 8);
    assert_eq!(v["total"]["measured_s"], 0.799999);
    golden("hwlat-user.json", &json);
}

#[test]
fn kernel_report_text_and_json() {
    let d = kernel_result();
    let text = export(&TextExporter, &d);
    assert!(
        text.contains("  all        -           -     9  2012.25     2"),
        "{text}"
    );
    assert!(text.contains("(interrupted)"), "{text}");
    assert!(
        text.ends_with("warning: 1 line(s) of the trace were not hwlat samples and were skipped\n")
    );
    golden("hwlat-kernel.txt", &text);
    let v: Value = serde_json::from_str(&export(&JsonExporter, &d)).unwrap();
    assert_eq!(v["mode"], "kernel");
    assert_eq!(v["settings"]["prio"], Value::Null);
    assert_eq!(v["cpus"][1]["windows"], Value::Null);
    assert_eq!(v["cpus"][1]["nmi_count"], 2);
    assert_eq!(v["total"]["measured_s"], Value::Null);
    assert_eq!(v["total"]["gaps"], 9);
    assert_eq!(v["interrupted"], true);
    assert_eq!(v["warnings"].as_array().unwrap().len(), 1);
}

/// Runs `rtsleuth hwlat ARGS` expecting failure, and returns its stderr.
fn refused(args: &[&str]) -> String {
    let mut all = vec!["hwlat"];
    all.extend_from_slice(args);
    let out = run(&all);
    assert!(!out.status.success(), "rtsleuth {all:?} should fail");
    assert!(out.stdout.is_empty(), "rtsleuth {all:?} printed a report");
    String::from_utf8(out.stderr).unwrap()
}

#[test]
fn bad_arguments_are_refused_before_anything_runs() {
    let err = refused(&["--width", "500000", "--window", "500000"]);
    assert!(
        err.contains("--width (500000 us) must be shorter than --window (500000 us)"),
        "{err}"
    );
    let err = refused(&["--width", "980000", "--window", "1000000"]);
    assert!(err.contains("spins 98% of the time"), "{err}");
    let err = refused(&["--threshold", "0"]);
    assert!(err.contains("--threshold must be above 0 us"), "{err}");
    let err = refused(&["--mode", "smm"]);
    assert!(
        err.contains("unknown mode \"smm\" (auto, kernel or user)"),
        "{err}"
    );
    let err = refused(&["--duration", "0"]);
    assert!(err.contains("--duration"), "{err}");
    let err = refused(&["--cpus", "0-x"]);
    assert!(err.contains("not a CPU list"), "{err}");
    let err = refused(&["--cpus", "4000", "--mode", "user"]);
    assert!(err.contains("CPU 4000 is not online"), "{err}");
}

/// `--mode kernel` where the kernel has no hwlat tracer names what it has instead.
#[test]
fn kernel_mode_without_the_tracer_says_what_there_is() {
    let tracers = rtsleuth_live::tracefs::Tracefs::find_mounted()
        .ok()
        .flatten()
        .and_then(|root| rtsleuth_live::hwlat::available_tracers(&root).ok());
    if tracers
        .as_deref()
        .is_some_and(rtsleuth_live::hwlat::lists_hwlat)
    {
        eprintln!("skipped: this kernel has the hwlat tracer");
        return;
    }
    let err = refused(&["--mode", "kernel", "--duration", "1"]);
    match tracers {
        Some(list) => assert!(
            err.contains(&format!(
                "this kernel has no hwlat tracer (available_tracers: {list})"
            )),
            "{err}"
        ),
        None => assert!(err.contains("hwlat tracer"), "{err}"),
    }
}

/// The user-space detector on every online CPU for 2 s: 4 windows of 0.1 s each, and a
/// normal thread of this test keeps getting the CPU all along: windows are staggered between
/// CPUs, so it waits at most for the one spin that caught it on its CPU.
#[test]
fn live_user_detector_measures_every_cpu_and_leaves_the_machine_usable() {
    let Some((_root, _lock)) = rtsleuth_live::testing::live_tracefs() else {
        return;
    };
    let done = Arc::new(AtomicBool::new(false));
    let ticker = {
        let done = Arc::clone(&done);
        std::thread::spawn(move || {
            let (mut worst, mut ticks) = (Duration::ZERO, 0);
            let mut last = Instant::now();
            while !done.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(5));
                worst = worst.max(last.elapsed());
                last = Instant::now();
                ticks += 1;
            }
            (worst, ticks)
        })
    };
    // `--mode user` said: the default (auto) is the kernel's tracer where the kernel has one.
    let out = run(&[
        "hwlat",
        "--mode",
        "user",
        "--duration",
        "2",
        "--width",
        "100000",
        "--window",
        "500000",
        "--json",
    ]);
    done.store(true, Ordering::Relaxed);
    let (stall, ticks) = ticker.join().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["mode"], "user");
    let online = rtsleuth_live::cpus::CpuList::online().unwrap();
    let cpus = v["cpus"].as_array().unwrap();
    assert_eq!(cpus.len(), online.as_slice().len());
    for (c, want) in cpus.iter().zip(online.as_slice()) {
        assert_eq!(c["cpu"].as_u64().unwrap() as usize, *want);
        let windows = c["windows"].as_u64().unwrap();
        assert!((3..=5).contains(&windows), "cpu {want}: {windows} windows");
        let measured = c["measured_s"].as_f64().unwrap();
        let per_window = measured / windows as f64;
        assert!(
            (0.09..=0.11).contains(&per_window),
            "cpu {want}: {measured} s in {windows} windows"
        );
        assert!((measured - 0.4).abs() <= 0.04, "cpu {want}: {measured} s");
        assert!(c["max_us"].as_f64().unwrap() >= 0.0);
        eprintln!("cpu {want}: {} gaps, max {} us", c["gaps"], c["max_us"]);
    }
    // A thread sleeping 5 ms at a time over the 2+ s run: about 400 ticks if nothing ever
    // delayed it, never more than one 100 ms spin at a time.
    eprintln!("test thread: {ticks} ticks, longest wait {stall:?}");
    assert!(ticks >= 200, "the test thread ran only {ticks} times");
    assert!(
        stall < Duration::from_millis(150),
        "the test thread stalled {stall:?}"
    );
}

/// Ctrl-C ends a long run within one sleep step, and the report of what was measured until
/// then still comes out, marked interrupted.
#[test]
fn live_interrupt_ends_the_run_with_a_report() {
    let Some((_root, _lock)) = rtsleuth_live::testing::live_tracefs() else {
        return;
    };
    let child = common::rtsleuth()
        .args(["hwlat", "--duration", "60", "--mode", "user", "--json"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    let sent = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    let started = Instant::now();
    let out = child.wait_with_output().unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "took {:?}",
        started.elapsed()
    );
    assert!(out.status.success());
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["interrupted"], true);
    let elapsed = v["elapsed_s"].as_f64().unwrap();
    assert!((1.3..2.5).contains(&elapsed), "{elapsed}");
    // The first window of each CPU (0.5 s from its start) was watched whole, the one running
    // when the signal came only in part.
    for c in v["cpus"].as_array().unwrap() {
        assert!(c["windows"].as_u64().unwrap() >= 1, "{c}");
        assert!(c["measured_s"].as_f64().unwrap() >= 0.5, "{c}");
    }
}
