//! The kernel's `hwlat` tracer, driven through a tracefs [`Session`] so that every knob it
//! turns (tracer, threshold, width, window, CPU mask, mode, line format) is put back afterwards.
//!
//! The tracer exists only at the top level of tracefs, so the session works there, and
//! switching the tracer empties the top-level buffer: whatever another user had in it is lost,
//! which the command's help says.

use super::kernel_output::{parse_line, KernelSample, Line};
use super::result::{CpuResult, Detection, Spike};
use super::settings::{Mode, Settings};
use super::worst::Worst;
use crate::clock::{mono, sleep_until_or, wall_offset};
use crate::tracefs::{Buffer, Session, Tracefs};
use crate::LiveError;
use std::collections::BTreeMap;
use std::io::BufRead;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

/// The tracer's name in `available_tracers` and `current_tracer`.
pub const TRACER: &str = "hwlat";

/// How many broken lines a warning quotes.
const QUOTED: usize = 3;

/// The content of `available_tracers`.
pub fn available_tracers(root: &Path) -> Result<String, LiveError> {
    let path = root.join("available_tracers");
    std::fs::read_to_string(&path)
        .map(|t| t.trim().to_owned())
        .map_err(|e| LiveError::file(path, e))
}

/// Whether an `available_tracers` list names the hwlat tracer.
pub fn lists_hwlat(tracers: &str) -> bool {
    tracers.split_whitespace().any(|t| t == TRACER)
}

/// Runs the tracer for the settings' duration (or until `stop`) and reads what it found.
pub fn run(
    tracefs: &Tracefs,
    settings: &Settings,
    stop: &AtomicBool,
) -> Result<Detection, LiveError> {
    let mut session = Session::new(tracefs, Buffer::Top)?;
    configure(&mut session, settings)?;
    let started = Instant::now();
    let end = mono() + settings.duration.as_nanos() as u64;
    let interrupted = !sleep_until_or(end, || stop.load(Ordering::Relaxed));
    session.tracing_on(false)?;
    let elapsed = started.elapsed();
    let path = session.dir().join("trace");
    let file = std::fs::File::open(&path).map_err(|e| LiveError::file(&path, e))?;
    let (cpus, mut read_warnings) = collect(std::io::BufReader::new(file), settings, wall_offset())
        .map_err(|e| LiveError::file(&path, e))?;
    read_warnings.extend(session.restore()?);
    Ok(Detection {
        mode: Mode::Kernel,
        settings: settings.clone(),
        elapsed,
        interrupted,
        cpus,
        warnings: read_warnings,
    })
}

/// Sets the tracer up and starts it.
pub fn configure(session: &mut Session, settings: &Settings) -> Result<(), LiveError> {
    let dir = session.dir().to_owned();
    // The line format the parser reads: `comm-pid [cpu] flags time:`.
    for (option, on) in [("latency-format", false), ("context-info", true)] {
        if dir.join("options").join(option).exists() {
            session.set_option(option, on)?;
        }
    }
    let window_now: u64 = std::fs::read_to_string(dir.join("hwlat_detector/window"))
        .ok()
        .and_then(|w| w.trim().parse().ok())
        .unwrap_or(0);
    let width = ("hwlat_detector/width", settings.width_us.to_string());
    let window = ("hwlat_detector/window", settings.window_us.to_string());
    let order = if width_first(settings.width_us, window_now) {
        [width, window]
    } else {
        [window, width]
    };
    for (file, value) in order {
        session.set(file, &value)?;
    }
    session.set("tracing_thresh", &settings.threshold_us.to_string())?;
    session.set_cpus(&settings.cpus)?;
    // One CPU at a time, as the kernel defaults to: `per-cpu` would turn interrupts off on
    // every CPU at once for the whole width.
    if dir.join("hwlat_detector/mode").exists() {
        session.set("hwlat_detector/mode", "round-robin")?;
    }
    if dir.join("tracing_max_latency").exists() {
        session.set("tracing_max_latency", "0")?;
    }
    session.set_tracer(TRACER)?;
    session.clear_buffer()?;
    session.tracing_on(true)
}

/// The kernel accepts a width only below the current window and a window only above the
/// current width, so width goes first exactly when it fits the window in force. Restoring in
/// reverse order is then valid too: the old window is above the new width when width went
/// first, and the new window is above the old width otherwise.
pub fn width_first(new_width: u64, window_now: u64) -> bool {
    new_width < window_now
}

/// What one CPU's samples add up to.
struct Acc {
    gaps: u64,
    max_ns: u64,
    nmi_count: u64,
    worst: Worst<Spike>,
}

/// Reads the `trace` file: per-CPU results (every CPU of the settings, in order, and any
/// other CPU that reported) and a warning for lines that were not samples.
///
/// A sample is dated by its `ts:` (the wall-clock time of the window's first gap; of the
/// window's end before Linux 5.7), moved to CLOCK_MONOTONIC by `wall_offset`: the line's own
/// trace timestamp is when the window was reported, after it ended, and in whatever trace
/// clock was selected.
pub fn collect(
    trace: impl BufRead,
    settings: &Settings,
    wall_offset: i64,
) -> std::io::Result<(Vec<CpuResult>, Vec<String>)> {
    let new = || Acc {
        gaps: 0,
        max_ns: 0,
        nmi_count: 0,
        worst: Worst::new(settings.top),
    };
    let mut per_cpu: BTreeMap<usize, Acc> = settings
        .cpus
        .as_slice()
        .iter()
        .map(|&c| (c, new()))
        .collect();
    let mut bad = 0usize;
    let mut quoted = Vec::new();
    for (number, line) in trace.lines().enumerate() {
        match parse_line(&line?) {
            Line::Comment => {}
            Line::Sample(s) => add(per_cpu.entry(s.cpu).or_insert_with(new), &s, wall_offset),
            Line::Bad(why) => {
                bad += 1;
                if quoted.len() < QUOTED {
                    quoted.push(format!("line {}: {why}", number + 1));
                }
            }
        }
    }
    let mut warnings = Vec::new();
    if bad > 0 {
        warnings.push(format!(
            "{bad} line(s) of the trace were not hwlat samples and were skipped ({})",
            quoted.join("; ")
        ));
    }
    let cpus = per_cpu
        .into_iter()
        .map(|(cpu, acc)| CpuResult {
            cpu,
            windows: None,
            measured_ns: None,
            gaps: acc.gaps,
            max_ns: acc.max_ns,
            nmi_count: Some(acc.nmi_count),
            worst: acc.worst.into_sorted(),
        })
        .collect();
    Ok((cpus, warnings))
}

fn add(acc: &mut Acc, s: &KernelSample, wall_offset: i64) {
    let ns = s.max_us() * 1000;
    acc.gaps += s.count.unwrap_or(1);
    acc.max_ns = acc.max_ns.max(ns);
    acc.nmi_count += s.nmi_count.unwrap_or(0);
    acc.worst.push(Spike {
        ns,
        ts: s.wall.saturating_add_signed(-wall_offset),
        wall: s.wall,
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn settings() -> Settings {
        Settings {
            width_us: 500_000,
            window_us: 1_000_000,
            threshold_us: 10,
            duration: Duration::from_secs(1),
            cpus: "0-1".parse().unwrap(),
            prio: 99,
            top: 2,
        }
    }

    #[test]
    fn width_goes_first_only_when_it_fits_the_current_window() {
        assert!(width_first(100_000, 1_000_000));
        assert!(!width_first(1_000_000, 1_000_000));
        assert!(!width_first(1_500_000, 1_000_000));
        // No window file (or an unreadable one): the window goes first.
        assert!(!width_first(1, 0));
        assert!(lists_hwlat("blk hwlat function nop"));
        assert!(!lists_hwlat("blk function nop hwlatx"));
    }

    #[test]
    fn collects_per_cpu_counts_max_nmis_and_the_worst() {
        let trace = "\
# tracer: hwlat
#
<...>-1 [001] d... 10.000001: #1 inner/outer(us): 11/12 ts:1000.5 count:6
<...>-1 [000] d... 11.000002: #2 inner/outer(us): 30/2 ts:1001.5 count:1 nmi-total:4 nmi-count:2
<...>-1 [001] d... 12.000003: #3 inner/outer(us): 15/0 ts:1002.5
garbage line
<...>-1 [001] d... 13.000004: #4 inner/outer(us): 9/40 ts:1003.5 count:3
<...>-1 [003] d... 14.000005: #5 inner/outer(us): 20/20 ts:1004.5 count:1
";
        // Wall time runs 900 s ahead of CLOCK_MONOTONIC here.
        let (cpus, warnings) = collect(trace.as_bytes(), &settings(), 900_000_000_000).unwrap();
        assert_eq!(cpus.iter().map(|c| c.cpu).collect::<Vec<_>>(), [0, 1, 3]);
        let one = &cpus[1];
        // 6 + 1 (no count: one window) + 3.
        assert_eq!((one.gaps, one.max_ns, one.nmi_count), (10, 40_000, Some(0)));
        assert_eq!(
            one.worst,
            vec![
                Spike {
                    ns: 40_000,
                    ts: 103_500_000_000,
                    wall: 1_003_500_000_000
                },
                Spike {
                    ns: 15_000,
                    ts: 102_500_000_000,
                    wall: 1_002_500_000_000
                },
            ]
        );
        assert_eq!(
            (cpus[0].gaps, cpus[0].max_ns, cpus[0].nmi_count),
            (1, 30_000, Some(2))
        );
        assert_eq!(cpus[2].gaps, 1);
        assert_eq!(warnings.len(), 1);
        assert!(
            warnings[0].starts_with("1 line(s) of the trace were not hwlat samples")
                && warnings[0].contains("line 6: no \"inner/outer(us):\""),
            "{warnings:?}"
        );
    }

    /// The whole configuration on a made-up tracefs directory: the values the tracer needs
    /// are written, and the session's end puts back every one, the mode file's bracketed
    /// form included.
    #[test]
    fn configure_writes_the_knobs_and_the_session_restores_them() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let files = [
            ("tracing_on", "1"),
            ("current_tracer", "nop"),
            ("tracing_thresh", "0"),
            ("tracing_cpumask", "3"),
            ("tracing_max_latency", "77"),
            ("trace", "old"),
            ("options/latency-format", "1"),
            ("options/context-info", "1"),
            ("hwlat_detector/width", "500000"),
            ("hwlat_detector/window", "1000000"),
            ("hwlat_detector/mode", "none [round-robin] per-cpu"),
        ];
        std::fs::create_dir_all(root.join("options")).unwrap();
        std::fs::create_dir_all(root.join("hwlat_detector")).unwrap();
        for (f, v) in files {
            std::fs::write(root.join(f), format!("{v}\n")).unwrap();
        }
        let tracefs = Tracefs::at(root);
        let mut s = settings();
        s.cpus = "1".parse().unwrap();
        s.width_us = 1_200_000;
        s.window_us = 2_000_000;
        let mut session = Session::new(&tracefs, Buffer::Top).unwrap();
        configure(&mut session, &s).unwrap();
        let read = |f: &str| {
            std::fs::read_to_string(root.join(f))
                .unwrap()
                .trim()
                .to_owned()
        };
        for (f, v) in [
            ("tracing_on", "1"),
            ("current_tracer", "hwlat"),
            ("tracing_thresh", "10"),
            ("tracing_cpumask", "00000002"),
            ("tracing_max_latency", "0"),
            ("trace", ""),
            ("options/latency-format", "0"),
            ("hwlat_detector/width", "1200000"),
            ("hwlat_detector/window", "2000000"),
            ("hwlat_detector/mode", "round-robin"),
        ] {
            assert_eq!(read(f), v, "{f}");
        }
        session.restore().unwrap();
        for (f, v) in files {
            let want = match f {
                "hwlat_detector/mode" => "round-robin",
                "trace" => "",
                _ => v,
            };
            assert_eq!(read(f), want, "{f} after restore");
        }
    }
}
