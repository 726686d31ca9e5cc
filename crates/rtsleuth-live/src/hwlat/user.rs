//! The user-space detector: one SCHED_FIFO thread per CPU reads CLOCK_MONOTONIC in a tight
//! loop for `width` of every `window` and records the gaps between reads.
//!
//! Unlike the kernel tracer it cannot turn interrupts off, so besides SMIs, hypervisor steal
//! and firmware it also sees the interrupts and kernel work that run on its CPU; at the default
//! priority 99 no thread can preempt it, so nothing scheduled by Linux's normal rules can be
//! mistaken for hardware. What it finds is an upper bound on hardware latency, and
//! `rtsleuth irq` on a trace of the same time tells interrupts apart from the rest.
//!
//! CLOCK_MONOTONIC rather than CLOCK_MONOTONIC_RAW: both are read through the vDSO at the same
//! cost, NTP may slew MONOTONIC by at most 0.05% (5 ns on a 10 µs gap), and MONOTONIC is the
//! trace clock `mono`, so a gap's timestamp can be looked up in a trace directly.

use super::gaps::scan;
use super::result::{CpuResult, Detection};
use super::schedule::Schedule;
use super::settings::{Mode, Settings};
use super::tally::Tally;
use crate::clock::{mono, sleep_until_or, wall_offset};
use crate::sched::{pin_current_thread, set_current_thread_policy, Policy};
use crate::LiveError;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// Time for every thread to pin itself and take its priority before window 0.
const SETUP: u64 = 20_000_000;

/// Runs the detector on every CPU of the settings until the duration ends or `stop` is set.
pub fn run(settings: &Settings, stop: &AtomicBool) -> Result<Detection, LiveError> {
    settings.cpus.require_online()?;
    let failed = AtomicBool::new(false);
    let start = mono() + SETUP;
    let wall_offset = wall_offset();
    let cpus = settings.cpus.as_slice();
    let results: Vec<Result<CpuResult, LiveError>> = std::thread::scope(|scope| {
        let threads: Vec<_> = cpus
            .iter()
            .enumerate()
            .map(|(index, &cpu)| {
                let schedule = Schedule::new(
                    start,
                    settings.duration.as_nanos() as u64,
                    settings.window_us * 1000,
                    settings.width_us * 1000,
                    index,
                    cpus.len(),
                );
                let failed = &failed;
                let spawned = std::thread::Builder::new()
                    .name(format!("hwlat/{cpu}"))
                    .spawn_scoped(scope, move || {
                        let halt =
                            || stop.load(Ordering::Relaxed) || failed.load(Ordering::Relaxed);
                        let result = detect(cpu, settings, &schedule, halt);
                        if result.is_err() {
                            failed.store(true, Ordering::Relaxed);
                        }
                        result.map(|tally| tally.finish(cpu, wall_offset))
                    });
                // Threads already started see the flag and stop instead of running the
                // whole duration before the error is reported.
                if spawned.is_err() {
                    failed.store(true, Ordering::Relaxed);
                }
                spawned
            })
            .collect();
        threads
            .into_iter()
            .map(|t| match t {
                Ok(handle) => handle.join().unwrap_or_else(|_| {
                    Err(LiveError::Unsupported("a detector thread panicked".into()))
                }),
                Err(source) => Err(LiveError::Sys {
                    call: "pthread_create",
                    source,
                }),
            })
            .collect()
    });
    let ended = mono();
    Ok(Detection {
        mode: Mode::User,
        settings: settings.clone(),
        elapsed: Duration::from_nanos(ended.saturating_sub(start)),
        interrupted: stop.load(Ordering::Relaxed),
        cpus: results.into_iter().collect::<Result<_, _>>()?,
        warnings: Vec::new(),
    })
}

/// One CPU's detector: pinned, at SCHED_FIFO, spinning in each window of its schedule.
fn detect(
    cpu: usize,
    settings: &Settings,
    schedule: &Schedule,
    halt: impl Fn() -> bool,
) -> Result<Tally, LiveError> {
    pin_current_thread(cpu)?;
    set_current_thread_policy(Policy::Fifo, settings.prio)?;
    let mut tally = Tally::new(settings.top);
    let threshold = settings.threshold_us * 1000;
    let mut ready = mono();
    while let Some(start) = schedule.next_start(ready) {
        if !sleep_until_or(start, &halt) {
            break;
        }
        let window = scan(mono, schedule.width(), threshold, &halt, |gap| {
            tally.gap(gap)
        });
        tally.window(&window);
        // A window that overran the next start (a gap longer than the rest of the window)
        // skips to the following one rather than starting late.
        ready = window.last;
    }
    Ok(tally)
}
