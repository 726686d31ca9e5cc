//! Synthetic Linux ftrace **text** traces with exactly known wake-up
//! latencies, for testing rtsleuth's reader and `latency` analysis against
//! exact numbers, and for producing large benchmark inputs.
//!
//! The crate deliberately knows nothing about rtsleuth's reader: it only
//! *produces* text (and, for benchmarks, Perfetto protobuf traces in the shape
//! Android phones write: [`write_compact`]). A small scheduler simulation ([`Scenario`]) yields an
//! abstract, internally consistent event stream; each [`Variant`] renders that
//! same stream the way a particular kernel or trace-cmd version prints it, and
//! the ground truth ([`Expected`]) is computed from the abstract stream with
//! the latency definition below — so it is identical for every variant.
//!
//! # Wake-up latency definition (the ground truth follows it exactly)
//! - If the trace has any `sched_waking`, a wake-up starts at `sched_waking`,
//!   otherwise at `sched_wakeup` / `sched_wakeup_new`.
//! - It starts only if the task is not running and has no pending wake-up
//!   (the first one wins); pid 0 is ignored.
//! - It ends at the next `sched_switch` with `next_pid` = the task, on any
//!   CPU; latency = switch ts − wake ts. Pending wake-ups at the end of the
//!   trace are not counted; a lost-events line drops all pending wake-ups.
//! - A printed `CPU n buffer started` line says CPU n lost its oldest events: it is recorded
//!   only from its first event on, and a wake-up during which that first event came is not
//!   counted. (Lost events are drops in the middle: the kernel header counts them as
//!   dropped, not written, so it does not say the buffer was overwritten.)
//! - `runtime_ns` sums on-CPU intervals (switch-in → switch-out, both in the
//!   trace); `switches` counts switch-ins.
//!
//! All timestamps are whole microseconds, so the µs-resolution
//! `latency-format` represents the same trace exactly.
//!
//! ```
//! use rtsleuth_tracegen::{generate, Scenario, Variant};
//! let (text, expected) = generate(&Scenario::new(7).cpus(2).wakeups(20), Variant::Modern5);
//! assert!(text.starts_with("# tracer: nop\n"));
//! assert!(expected.sample_count() > 0);
//! ```

mod format;
mod json;
mod perfetto;
mod replicate;
mod rng;
mod scenario;
mod sim;
mod truth;

use std::io::{self, Write};

pub use format::lat_mark;
pub use json::expected_to_json;
pub use perfetto::{write_compact, CompactCounts, CompactSpec};
pub use replicate::{replicate, replicate_str, ReplicateStats};
pub use rng::SplitMix64;
pub use scenario::{Policy, Scenario, TaskSpec, Variant};
pub use truth::{Expected, ExpectedTask};

use format::Formatter;
use sim::Sim;
use truth::Oracle;

/// Generates the whole trace in memory.
pub fn generate(scenario: &Scenario, variant: Variant) -> (String, Expected) {
    let mut buf = Vec::new();
    let exp = generate_to(&mut buf, scenario, variant).expect("writing to a Vec cannot fail");
    (String::from_utf8(buf).expect("generator emits UTF-8"), exp)
}

/// Streams the trace to `w` (wrap it in a `BufWriter`). Memory use is bounded
/// by the simulation's in-flight state plus the stored samples; use
/// [`Scenario::max_samples`] for huge outputs.
///
/// Kernel headers print the number of entries, so for those variants the
/// deterministic simulation is first run once into a byte counter (about
/// twice the CPU time, no extra memory).
pub fn generate_to<W: Write>(
    w: &mut W,
    scenario: &Scenario,
    variant: Variant,
) -> io::Result<Expected> {
    let needs_count = !matches!(
        variant,
        Variant::TracePipe | Variant::TraceCmdReport | Variant::TraceCmdRaw
    );
    let entries = if needs_count {
        let mut sink = io::sink();
        run(&mut sink, scenario, variant, None)?.event_lines
    } else {
        0
    };
    run(w, scenario, variant, Some(entries))
}

fn run<W: Write>(
    w: &mut W,
    sc: &Scenario,
    variant: Variant,
    header: Option<u64>,
) -> io::Result<Expected> {
    let mut sim = Sim::new(sc);
    let tasks = sim.tasks.clone();
    let cpus = sim.cpus();
    let mut fmt = Formatter::new(variant, &tasks, cpus);
    let prints_started = !matches!(
        variant,
        Variant::TracePipe | Variant::TraceCmdReport | Variant::TraceCmdRaw
    );
    let mut oracle = Oracle::new(&tasks, cpus, sc.max_samples, prints_started);
    if let Some(entries) = header {
        let empty: Vec<u32> = if sc.empty_cpu && cpus > 1 {
            vec![cpus - 1]
        } else {
            vec![]
        };
        fmt.header(w, entries, &empty, sc.trace_cmd_version)?;
    }
    let header_bytes = fmt.bytes;
    while let Some(item) = sim.next_item() {
        oracle.feed(&item);
        fmt.item(w, &item)?;
        if let Some(limit) = sc.size_limit {
            if fmt.bytes - header_bytes >= limit {
                break;
            }
        }
    }
    fmt.finish(w, sc.trailing_newline)?;
    let mut exp = std::mem::take(&mut fmt.expected);
    exp.bytes = fmt.bytes;
    let lost_seen = exp.lost_events;
    oracle.finish(&tasks, &mut exp);
    debug_assert_eq!(lost_seen, exp.lost_events);
    Ok(exp)
}

/// The latencies (pid, µs) the simulation *intended* for its measured
/// wake-up cycles, in scheduling order, ignoring lost events and size limits.
/// Independent of the oracle; used to cross-check it.
pub fn intended_latencies(scenario: &Scenario) -> Vec<(u32, u64)> {
    let mut sim = Sim::new(scenario);
    while sim.next_item().is_some() {}
    sim.intended
}
