//! A whole run: memory locked and `/dev/cpu_dma_latency` held, one measuring thread per plan,
//! the calling thread supervising (live view, Ctrl-C, a failed thread), everything released
//! when the threads are joined, whichever way the run ends.

use super::options::MeasureOptions;
use super::progress::ThreadView;
use super::summary::LiveStats;
use super::thread::{measure, OnSpike, Shared, Spike, ThreadResult};
use crate::cpus::CpuList;
use crate::dma_latency::DmaLatency;
use crate::signals::Interrupt;
use crate::LiveError;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::{Duration, Instant};

/// How often the supervisor looks at the threads (and redraws the live view).
const TICK: Duration = Duration::from_millis(100);

/// Measuring threads only sleep and record, so a small stack suffices; with MCL_FUTURE every
/// page of it is faulted in and locked.
const STACK_BYTES: usize = 256 * 1024;

/// Why the run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ending {
    /// Every thread reached its duration or loop count.
    Completed,
    /// A wake-up exceeded the `--break` threshold.
    Break,
    /// SIGINT, SIGTERM or SIGHUP.
    Interrupted,
}

impl Ending {
    pub fn name(self) -> &'static str {
        match self {
            Ending::Completed => "completed",
            Ending::Break => "break",
            Ending::Interrupted => "interrupted",
        }
    }
}

/// What a run measured.
#[derive(Clone, Debug, PartialEq)]
pub struct Outcome {
    pub threads: Vec<ThreadResult>,
    pub brk: Option<Spike>,
    pub ended: Ending,
    pub elapsed: Duration,
    /// `/dev/cpu_dma_latency` was held at 0 for the run (a kernel without cpuidle has none).
    pub idle_held: bool,
}

/// Receives each thread's running numbers (the live view).
pub type Progress<'a> = &'a mut dyn FnMut(&[ThreadView]);

/// Optional callers' hooks into a run.
#[derive(Default)]
pub struct Hooks<'a> {
    /// Called from the thread that saw a spike (see [`OnSpike`]).
    pub on_spike: Option<&'a dyn OnSpike>,
    /// Ends the run cleanly when a signal arrives.
    pub interrupt: Option<&'a Interrupt>,
    /// Called about every 100 ms with each thread's running numbers.
    pub progress: Option<Progress<'a>>,
}

/// Runs the measurement `opts` describes and returns what it measured.
pub fn run(opts: &MeasureOptions, hooks: Hooks<'_>) -> Result<Outcome, LiveError> {
    let plans = opts.plan()?;
    CpuList::from(plans.iter().map(|p| p.cpu).collect::<Vec<_>>()).require_online()?;
    let _memory = MemoryLock::lock()?;
    let qos = DmaLatency::hold(0)?;
    let stop = AtomicBool::new(false);
    let broke = AtomicBool::new(false);
    let shared = Shared {
        stop: &stop,
        broke: &broke,
        spike_ns: opts.break_us.or(opts.spike_us).map(|us| us * 1000),
        stop_at_spike: opts.break_us.is_some(),
        on_spike: hooks.on_spike,
        duration_ns: opts.duration.map(|d| d.as_nanos() as u64),
        loops: opts.loops,
        hist_us: opts.hist_us,
    };
    let lives: Vec<LiveStats> = plans.iter().map(|_| LiveStats::default()).collect();
    let started = Instant::now();
    let mut progress = hooks.progress;
    let results = thread::scope(|scope| {
        let mut handles = Vec::new();
        for (plan, live) in plans.iter().zip(&lives) {
            let shared = &shared;
            let spawned = thread::Builder::new()
                .name(format!("rtsleuth-m{}", plan.index))
                .stack_size(STACK_BYTES)
                .spawn_scoped(scope, move || {
                    let result = measure(*plan, live, shared);
                    if result.is_err() {
                        shared.stop.store(true, Ordering::Relaxed);
                    }
                    result
                });
            match spawned {
                Ok(h) => handles.push(h),
                Err(source) => {
                    // The scope joins the threads already started once they see the flag.
                    stop.store(true, Ordering::Relaxed);
                    return Err(LiveError::Sys {
                        call: "pthread_create",
                        source,
                    });
                }
            }
        }
        while !handles.iter().all(|h| h.is_finished()) {
            thread::sleep(TICK);
            if hooks.interrupt.is_some_and(Interrupt::raised) {
                stop.store(true, Ordering::Relaxed);
            }
            if let Some(draw) = progress.as_mut() {
                let views: Vec<ThreadView> = plans
                    .iter()
                    .zip(&lives)
                    .map(|(p, l)| ThreadView::of(p, l))
                    .collect();
                draw(&views);
            }
        }
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
            })
            .collect::<Result<Vec<_>, _>>()
    })?;
    let brk = results.iter().find_map(|r| r.brk);
    let ended = if brk.is_some() {
        Ending::Break
    } else if hooks.interrupt.is_some_and(Interrupt::raised) {
        Ending::Interrupted
    } else {
        Ending::Completed
    };
    Ok(Outcome {
        threads: results,
        brk,
        ended,
        elapsed: started.elapsed(),
        idle_held: qos.is_some(),
    })
}

/// All of the process's memory locked, now and as it grows, so that no wake-up waits for a
/// page fault; unlocked on drop.
struct MemoryLock;

impl MemoryLock {
    fn lock() -> Result<MemoryLock, LiveError> {
        // SAFETY: mlockall only changes how the process's pages are kept.
        if unsafe { libc::mlockall(libc::MCL_CURRENT | libc::MCL_FUTURE) } != 0 {
            return Err(LiveError::last_os("mlockall"));
        }
        Ok(MemoryLock)
    }
}

impl Drop for MemoryLock {
    fn drop(&mut self) {
        // SAFETY: undoes mlockall; failure leaves memory locked until exit, nothing worse.
        unsafe { libc::munlockall() };
    }
}
