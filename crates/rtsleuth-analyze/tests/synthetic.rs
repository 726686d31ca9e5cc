//! End-to-end checks of the ftrace text reader and the `latency` / `stats` analyses against the
//! exact ground truth of `rtsleuth-tracegen`.
//!
//! Every dialect (`Variant::ALL`) is generated for several seeds and option sets, read through
//! the real reader (`Input::from_reader` + `read::read`, i.e. format detection and the default
//! block size) and again through `read_bytes` with tiny blocks (64, 1000, 4096 bytes) so that
//! block boundaries fall everywhere; the analyses must report exactly what the generator knows.
//!
//! Conventions of the JSON documents: durations are `ns / 1e3` (µs) and timestamps `ns / 1e9`
//! (s) as `f64`; both are converted back to whole nanoseconds here, which is exact for every
//! value the generator produces (timestamps far below 2^53 ns).

use rtsleuth_analyze::latency::{Latency, LatencyOptions};
use rtsleuth_analyze::stats::Stats;
use rtsleuth_trace::input::{Format, Input};
use rtsleuth_trace::read::{self, ftrace_text, TraceInfo};
use rtsleuth_tracegen::{generate, Expected, ExpectedTask, Scenario, Variant};
use serde_json::Value;
use std::collections::BTreeMap;

/// Block sizes exercised besides the reader's default.
const SMALL_CHUNKS: [usize; 3] = [64, 1000, 4096];

/// Both analyses, fed the same events in one pass.
type Both = (Latency, Stats);

/// What one read of a trace produced.
struct Outcome {
    info: TraceInfo,
    latency: Value,
    stats: Value,
}

fn run_with(read: impl FnOnce(&mut Both) -> rtsleuth_trace::Result<TraceInfo>) -> Outcome {
    let mut both: Both = (Latency::new(LatencyOptions::default()), Stats::new());
    let info = read(&mut both).unwrap_or_else(|e| panic!("reading failed: {e}"));
    Outcome {
        latency: both.0.document(&info).json,
        stats: both.1.document(&info).json,
        info,
    }
}

/// Reads run in a fixed two-thread pool so that the block grouping, which follows the thread
/// count, is the same on every machine.
fn pool() -> &'static rayon::ThreadPool {
    static POOL: std::sync::OnceLock<rayon::ThreadPool> = std::sync::OnceLock::new();
    POOL.get_or_init(|| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .expect("a two-thread pool")
    })
}

/// The production path: format detection, then the reader with its default block size.
fn read_default(name: &str, text: &str) -> Outcome {
    let input = Input::from_reader(
        name,
        Box::new(std::io::Cursor::new(text.as_bytes().to_vec())),
    )
    .unwrap_or_else(|e| panic!("opening failed: {e}"));
    assert_eq!(input.format, Format::FtraceText, "{name}: detected format");
    pool().install(|| run_with(|sink| read::read(input, sink)))
}

fn read_chunked(name: &str, text: &str, chunk: usize) -> Outcome {
    pool().install(|| {
        run_with(|sink| ftrace_text::read_bytes(name, text.as_bytes().to_vec(), chunk, sink))
    })
}

/// µs (`ns / 1e3`) back to ns.
fn us_to_ns(v: &Value, ctx: &str) -> u64 {
    let us = v
        .as_f64()
        .unwrap_or_else(|| panic!("{ctx}: not a number: {v}"));
    let ns = (us * 1e3).round();
    assert!(ns >= 0.0, "{ctx}: negative duration {us}");
    ns as u64
}

/// s (`ns / 1e9`) back to ns.
fn secs_to_ns(v: &Value, ctx: &str) -> u64 {
    let s = v
        .as_f64()
        .unwrap_or_else(|| panic!("{ctx}: not a number: {v}"));
    (s * 1e9).round() as u64
}

/// The exact nearest-rank percentile: the smallest sample with at least `num/den` of the
/// samples at or below it (rank `ceil(n * num / den)`, at least 1), in integer arithmetic.
fn nearest_rank(sorted: &[u64], num: u64, den: u64) -> u64 {
    let n = sorted.len() as u64;
    let rank = (n * num).div_ceil(den).max(1);
    sorted[(rank - 1) as usize]
}

/// The percentiles the latency report shows: (JSON key, numerator, denominator).
const PERCENTILES: [(&str, u64, u64); 3] = [
    ("p50_us", 50, 100),
    ("p99_us", 99, 100),
    ("p999_us", 999, 1000),
];

/// Below this the histogram is exact for whole-microsecond samples (it counts microseconds
/// while every sample is whole, with 2048 unit-wide buckets before the first doubling).
const EXACT_BELOW_NS: u64 = 2_048_000;

/// Checks a reported percentile against the exact nearest-rank value: exact when the samples
/// are whole microseconds and the value is below [`EXACT_BELOW_NS`] or is the minimum or
/// maximum; otherwise within 0.1% (the HDR histogram's three significant digits).
fn check_percentile(ctx: &str, key: &str, got: u64, sorted: &[u64]) {
    let (num, den) = PERCENTILES
        .iter()
        .find(|p| p.0 == key)
        .map(|p| (p.1, p.2))
        .expect("known percentile");
    let exact = nearest_rank(sorted, num, den);
    let whole_us = sorted.iter().all(|v| v % 1000 == 0);
    let extreme = exact == sorted[0] || exact == *sorted.last().unwrap();
    if whole_us && (exact < EXACT_BELOW_NS || extreme) {
        assert_eq!(
            got,
            exact,
            "{ctx}: {key} (ns) must be the exact nearest-rank value (n = {})",
            sorted.len()
        );
    } else {
        let err = got.abs_diff(exact) as f64;
        assert!(
            err <= exact as f64 * 1e-3,
            "{ctx}: {key} = {got} ns, exact nearest-rank value {exact} ns (n = {}, err {:.4}%)",
            sorted.len(),
            100.0 * err / exact as f64
        );
    }
}

/// Checks one task row of the latency JSON against the ground truth.
fn check_task(ctx: &str, row: &Value, exp: &ExpectedTask, lost_markers: bool) {
    let ctx = format!("{ctx} pid {} ({})", exp.pid, exp.comm);
    assert_eq!(row["comm"], exp.comm.as_str(), "{ctx}: comm");
    assert_eq!(row["prio"], u64::from(exp.prio), "{ctx}: prio");
    assert_eq!(row["wakeups"], exp.count, "{ctx}: wake-up count");
    assert_eq!(row["switches"], exp.switches, "{ctx}: switches");
    let runtime = us_to_ns(&row["runtime_us"], &ctx);
    if lost_markers {
        // The analysis drops every on-CPU interval that spans a `[LOST]` marker (the
        // switch-out may be among the lost events); the generator's markers drop nothing, so
        // its oracle counts those intervals. Only the bound holds.
        assert!(
            runtime <= exp.runtime_ns,
            "{ctx}: runtime {runtime} ns > oracle {} ns",
            exp.runtime_ns
        );
    } else {
        assert_eq!(runtime, exp.runtime_ns, "{ctx}: runtime (ns)");
    }
    if exp.count == 0 {
        // A task never woken has no latency figures at all, rather than zeros.
        for key in [
            "min_us",
            "max_us",
            "max_at_ts",
            "avg_us",
            "p50_us",
            "p99_us",
            "p999_us",
        ] {
            assert!(row[key].is_null(), "{ctx}: {key} without samples");
        }
        return;
    }
    assert_eq!(
        us_to_ns(&row["max_us"], &ctx),
        exp.max_ns,
        "{ctx}: max (ns)"
    );
    assert_eq!(
        secs_to_ns(&row["max_at_ts"], &ctx),
        exp.max_at_ns,
        "{ctx}: max_at (ns)"
    );
    // The sum, through the average: avg * count is within a rounding error of the exact sum.
    let avg_us = row["avg_us"].as_f64().expect("avg_us");
    let sum_ns = (avg_us * 1e3 * exp.count as f64).round() as u64;
    assert_eq!(sum_ns, exp.sum_ns, "{ctx}: sum (ns) from avg_us {avg_us}");
    let want_avg = exp.sum_ns as f64 / exp.count as f64 / 1e3;
    assert!(
        (avg_us - want_avg).abs() <= want_avg * 1e-12,
        "{ctx}: avg_us {avg_us} != {want_avg}"
    );

    assert_eq!(
        exp.samples_ns.len() as u64,
        exp.count,
        "{ctx}: samples kept"
    );
    let mut sorted = exp.samples_ns.clone();
    sorted.sort_unstable();
    assert_eq!(sorted.iter().sum::<u64>(), exp.sum_ns, "{ctx}: oracle sum");
    assert_eq!(*sorted.last().unwrap(), exp.max_ns, "{ctx}: oracle max");
    assert_eq!(us_to_ns(&row["min_us"], &ctx), sorted[0], "{ctx}: min (ns)");
    for (key, _, _) in PERCENTILES {
        check_percentile(&ctx, key, us_to_ns(&row[key], &ctx), &sorted);
    }
}

/// Checks both documents of one read against the ground truth.
fn check_outcome(ctx: &str, variant: Variant, empty_cpu: bool, o: &Outcome, exp: &Expected) {
    // --- stats / trace info ---
    let info = &o.info;
    assert_eq!(info.events, exp.event_lines, "{ctx}: events");
    assert_eq!(info.lines.events, exp.event_lines, "{ctx}: event lines");
    assert_eq!(
        info.lines.total - info.lines.events,
        exp.other_lines,
        "{ctx}: non-event lines"
    );
    assert_eq!(
        info.unparsed(),
        0,
        "{ctx}: unparsed lines: {:?}",
        info.unparsed_examples
    );
    assert_eq!(info.lost_events, exp.lost_events, "{ctx}: lost events");
    assert_eq!(info.bytes, exp.bytes, "{ctx}: bytes");
    assert_eq!(info.out_of_order, 0, "{ctx}: out of order");

    let s = &o.stats;
    assert_eq!(s["schema"], "rtsleuth.stats/1");
    assert_eq!(s["events"], exp.event_lines, "{ctx}: stats.events");
    assert_eq!(
        s["lost_events"], exp.lost_events,
        "{ctx}: stats.lost_events"
    );
    assert_eq!(
        s["lines"]["total"], info.lines.total,
        "{ctx}: stats.lines.total"
    );
    assert_eq!(s["lines"]["unparsed"], 0, "{ctx}: stats.lines.unparsed");
    let per_event: BTreeMap<String, u64> =
        serde_json::from_value(s["per_event"].clone()).expect("per_event is a map of counts");
    assert_eq!(per_event, exp.events, "{ctx}: per-event counts");
    assert_eq!(
        per_event.values().sum::<u64>(),
        exp.event_lines,
        "{ctx}: per-event sum"
    );
    let want_cpus: Vec<u32> = (0..exp.cpus)
        .filter(|&c| !(empty_cpu && exp.cpus > 1 && c == exp.cpus - 1))
        .collect();
    let cpus: Vec<u32> = serde_json::from_value(s["cpus"].clone()).expect("cpus");
    assert_eq!(cpus, want_cpus, "{ctx}: cpus with events");
    assert_eq!(info.cpus, want_cpus, "{ctx}: info.cpus");
    if variant != Variant::TracePipe {
        assert_eq!(s["nr_cpus"], exp.cpus, "{ctx}: nr_cpus from the header");
    }

    // --- latency ---
    let l = &o.latency;
    assert_eq!(l["schema"], "rtsleuth.latency/1");
    let start = if exp.has_waking {
        "sched_waking"
    } else {
        "sched_wakeup"
    };
    assert_eq!(l["start_event"], start, "{ctx}: start event");
    let rows = l["tasks"].as_array().expect("tasks[]");
    let mut by_pid: BTreeMap<u64, &Value> = BTreeMap::new();
    for r in rows {
        let pid = r["pid"].as_u64().expect("pid");
        assert!(
            by_pid.insert(pid, r).is_none(),
            "{ctx}: pid {pid} listed twice"
        );
    }
    // The report lists tasks that were switched in or measured; the oracle also lists tasks
    // that were only switched out.
    let expected: Vec<&ExpectedTask> = exp
        .tasks
        .iter()
        .filter(|t| t.switches > 0 || t.count > 0)
        .collect();
    let want_pids: Vec<u64> = expected.iter().map(|t| u64::from(t.pid)).collect();
    let got_pids: Vec<u64> = by_pid.keys().copied().collect();
    assert_eq!(got_pids, want_pids, "{ctx}: tasks in the report");
    for t in &expected {
        check_task(
            ctx,
            by_pid[&u64::from(t.pid)],
            t,
            info.lines.lost_markers > 0,
        );
    }
    let total = &l["total"];
    assert_eq!(
        total["wakeups"],
        exp.sample_count(),
        "{ctx}: total wake-ups"
    );
    if let Some((_, max_ns, max_at)) = exp.overall_max() {
        assert_eq!(
            us_to_ns(&total["max_us"], ctx),
            max_ns,
            "{ctx}: overall max"
        );
        assert_eq!(
            secs_to_ns(&total["max_at_ts"], ctx),
            max_at,
            "{ctx}: overall max_at"
        );
    }
}

/// A named option set: the scenario for a seed.
type OptionSet = (&'static str, fn(u64) -> Scenario);

/// The option sets. `empty-cpu` and `everything` leave the last CPU without events.
fn option_sets() -> Vec<OptionSet> {
    vec![
        ("defaults", |s| Scenario::new(s).wakeups(80)),
        ("no-waking", |s| {
            Scenario::new(s).wakeups(80).with_waking(false)
        }),
        ("lost", |s| Scenario::new(s).wakeups(80).lost_events(true)),
        ("buffer-started+elided", |s| {
            Scenario::new(s)
                .cpus(3)
                .wakeups(60)
                .buffer_started(true)
                .elided(true)
        }),
        ("no-trailing-newline", |s| {
            Scenario::new(s).wakeups(40).trailing_newline(false)
        }),
        ("quiet", |s| {
            Scenario::new(s)
                .wakeups(80)
                .noise(false)
                .repeated_wakeups(false)
                .running_wakeups(false)
        }),
        ("overlong-comms", |s| {
            Scenario::new(s).wakeups(60).overlong_comms(true)
        }),
        ("spaced-comms", |s| {
            Scenario::new(s).wakeups(60).spaced_comms(true)
        }),
        ("empty-cpu", |s| {
            Scenario::new(s).cpus(3).wakeups(60).empty_cpu(true)
        }),
        ("everything", |s| {
            Scenario::new(s)
                .cpus(4)
                .wakeups(150)
                .lost_events(true)
                .buffer_started(true)
                .elided(true)
                .overlong_comms(true)
                .empty_cpu(true)
                .trailing_newline(false)
        }),
        ("everything-no-waking", |s| {
            Scenario::new(s)
                .cpus(2)
                .wakeups(100)
                .with_waking(false)
                .lost_events(true)
                .elided(true)
                .start_us(123_456_789_000)
        }),
    ]
}

const SEEDS: [u64; 2] = [1, 0x5eed_2024];

/// The first difference between two JSON values, as `path: a != b`.
fn json_diff(path: &str, a: &Value, b: &Value) -> Option<String> {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            for k in x.keys().chain(y.keys()) {
                let (va, vb) = (
                    x.get(k).unwrap_or(&Value::Null),
                    y.get(k).unwrap_or(&Value::Null),
                );
                if let Some(d) = json_diff(&format!("{path}.{k}"), va, vb) {
                    return Some(d);
                }
            }
            None
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => x
            .iter()
            .zip(y)
            .enumerate()
            .find_map(|(i, (va, vb))| json_diff(&format!("{path}[{i}]"), va, vb)),
        _ if a == b => None,
        _ => Some(format!("{path}: {a} != {b}")),
    }
}

fn assert_json_eq(ctx: &str, what: &str, a: &Value, b: &Value) {
    if let Some(d) = json_diff("", a, b) {
        panic!("{ctx}: {what} document differs at {d}");
    }
}

/// Compares two reads of the same trace: the documents must be identical.
fn assert_same(ctx: &str, a: &Outcome, b: &Outcome) {
    assert_json_eq(ctx, "latency", &a.latency, &b.latency);
    assert_json_eq(ctx, "stats", &a.stats, &b.stats);
    assert_eq!(a.info.lines, b.info.lines, "{ctx}: line counts differ");
    assert_eq!(a.info.cpus, b.info.cpus, "{ctx}: cpus differ");
    assert_eq!(
        a.info.timestamps, b.info.timestamps,
        "{ctx}: timestamp unit differs"
    );
    assert_eq!(a.info.header, b.info.header, "{ctx}: header differs");
}

fn check_variant(variant: Variant) {
    let mut round = 0;
    for (set, make) in option_sets() {
        for seed in SEEDS {
            let sc = make(seed);
            let (text, exp) = generate(&sc, variant);
            let name = format!("{variant}-{set}-{seed}.txt");
            assert!(
                exp.event_lines > 0 && exp.sample_count() > 0,
                "{name}: empty scenario"
            );
            assert!(!exp.samples_truncated);
            let empty_cpu = set.starts_with("empty-cpu") || set == "everything";
            // The production path (format detection, 4 MiB blocks) for the first seed; one
            // large block for the others (cheaper in debug builds, same single-block parse).
            let base = if seed == SEEDS[0] {
                read_default(&name, &text)
            } else {
                read_chunked(&name, &text, 1 << 18)
            };
            check_outcome(&name, variant, empty_cpu, &base, &exp);
            // One small block size per trace, in rotation, keeps the debug-mode runtime low
            // while every option set meets at least two of them.
            let chunk = SMALL_CHUNKS[round % SMALL_CHUNKS.len()];
            round += 1;
            let ctx = format!("{name} (blocks of {chunk} bytes)");
            let o = read_chunked(&name, &text, chunk);
            check_outcome(&ctx, variant, empty_cpu, &o, &exp);
            assert_same(&ctx, &base, &o);
        }
    }
}

macro_rules! variant_tests {
    ($($test:ident => $variant:ident,)*) => {
        $(
            #[test]
            fn $test() {
                check_variant(Variant::$variant);
            }
        )*
    };
}

variant_tests! {
    modern5 => Modern5,
    legacy4 => Legacy4,
    tgid => Tgid,
    tgid_android => TgidAndroid,
    rt7 => Rt7,
    latency_format => LatencyFormat,
    trace_cmd_report => TraceCmdReport,
    trace_cmd_raw => TraceCmdRaw,
    trace_pipe => TracePipe,
}

#[test]
fn every_variant_is_covered() {
    assert_eq!(Variant::ALL.len(), 9, "a new Variant needs its test above");
}

/// `read_bytes` with blocks smaller than the comment header must read the same header as one
/// big block: `nr_cpus`, `tracer`, the entries counts and the flag layout.
#[test]
fn small_blocks_keep_the_header() {
    for variant in Variant::ALL {
        let (text, exp) = generate(&Scenario::new(3).wakeups(20), variant);
        let name = format!("{variant}.txt");
        let base = read_default(&name, &text);
        if variant != Variant::TracePipe {
            assert_eq!(base.stats["nr_cpus"], exp.cpus, "{name}: nr_cpus");
        }
        for chunk in SMALL_CHUNKS {
            let ctx = format!("{name} (blocks of {chunk} bytes)");
            assert_same(&ctx, &base, &read_chunked(&name, &text, chunk));
        }
    }
}

/// A minimal trace (trace_pipe shape, no header): task `rt` (pid 100, prio 19) is woken on
/// CPU 0 and switched in after each latency in turn, runs 5 µs and sleeps again.
fn hand_trace(latencies_us: &[u64]) -> String {
    let mut out = String::new();
    let mut t = 100_000_000u64; // µs
    let line = |t: u64, comm: &str, pid: u32, rest: &str| {
        format!(
            "{comm:>16}-{pid:<7} [000] d..2. {:>5}.{:06}: {rest}\n",
            t / 1_000_000,
            t % 1_000_000
        )
    };
    for &lat in latencies_us {
        out += &line(
            t,
            "<idle>",
            0,
            "sched_waking: comm=rt pid=100 prio=19 target_cpu=000",
        );
        t += lat;
        out += &line(t, "<idle>", 0, "sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=rt next_pid=100 next_prio=19");
        t += 5;
        out += &line(t, "rt", 100, "sched_switch: prev_comm=rt prev_pid=100 prev_prio=19 prev_state=S ==> next_comm=swapper/0 next_pid=0 next_prio=120");
        t += 10;
    }
    out
}

/// The latency row of task 100 in a hand-made trace.
fn hand_row(latencies_us: &[u64]) -> Value {
    let text = hand_trace(latencies_us);
    let o = read_default("hand.txt", &text);
    let rows = o.latency["tasks"].as_array().expect("tasks[]").clone();
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(rows[0]["wakeups"], latencies_us.len());
    rows[0].clone()
}

fn check_hand_percentiles(latencies_us: &[u64]) {
    let row = hand_row(latencies_us);
    let mut sorted: Vec<u64> = latencies_us.iter().map(|us| us * 1000).collect();
    sorted.sort_unstable();
    let ctx = format!("{} hand-made samples", sorted.len());
    for (key, _, _) in PERCENTILES {
        check_percentile(&ctx, key, us_to_ns(&row[key], &ctx), &sorted);
    }
}

/// Whole-microsecond samples: exact below 2.048 ms, within 0.1% above (odd microseconds
/// above 2.048 ms share a bucket with their neighbour).
#[test]
fn percentiles_of_whole_microseconds() {
    // Spread over 1..2047 µs: every percentile exact.
    let spread: Vec<u64> = (0..500u64).map(|i| 1 + (i * 7919) % 2047).collect();
    check_hand_percentiles(&spread);
    // Mostly above 2 ms, odd values, max far away: within 0.1%.
    let high: Vec<u64> = (0..300u64)
        .map(|i| 2049 + 2 * ((i * 31) % 500))
        .chain([90_000])
        .collect();
    check_hand_percentiles(&high);
    // A few samples: the extremes are exact whatever their size.
    check_hand_percentiles(&[3, 70_001, 123_457]);
    check_hand_percentiles(&[17]);
}

/// p99.9 is the nearest-rank value: for n = 1000 samples that is the 999th smallest, not the
/// largest. 999 samples of 100 µs and one of 5000 µs: p99.9 = 100 µs.
#[test]
fn p999_nearest_rank_at_multiples_of_1000() {
    for n in [1000usize, 2000] {
        let mut lat = vec![100u64; n - 1];
        lat.push(5000);
        let row = hand_row(&lat);
        assert_eq!(row["p99_us"], 100.0, "n = {n}: p99");
        assert_eq!(
            row["p999_us"],
            100.0,
            "n = {n}: p99.9 (rank {})",
            n - n / 1000
        );
        assert_eq!(row["max_us"], 5000.0, "n = {n}: max");
    }
}

/// With small blocks the header must still be read in full, however many threads rayon has.
/// Pinned to one rayon thread, the reader scans only its first batch of 8 blocks: with one-line
/// blocks (chunk size 1) every header longer than 8 lines is cut, and with 64-byte blocks the
/// latency format's 18-line header loses its `cmd pid` line and its flag legend (flag layout
/// Classic4 instead of WithMigrate5, latency_format false).
#[test]
fn one_line_blocks_keep_the_header() {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .expect("a one-thread pool");
    for variant in Variant::ALL {
        let (text, _) = generate(&Scenario::new(3).wakeups(20), variant);
        let name = format!("{variant}.txt");
        let base = read_default(&name, &text);
        for chunk in [1, 64] {
            let ctx = format!("{name} (blocks of {chunk} bytes, 1 rayon thread)");
            let small = pool.install(|| read_chunked(&name, &text, chunk));
            assert_same(&ctx, &base, &small);
        }
    }
}
