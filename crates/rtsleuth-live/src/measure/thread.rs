//! One measuring thread: pinned, at its real-time priority, sleeping to absolute deadlines on
//! CLOCK_MONOTONIC and recording how late each wake-up was.

use super::deadline::Deadline;
use super::options::ThreadPlan;
use super::summary::{LiveStats, Recorder, ThreadSummary};
use crate::clock::{mono, sleep_until};
use crate::sched::{current_tid, pin_current_thread, set_current_thread_policy};
use crate::LiveError;
use std::sync::atomic::{AtomicBool, Ordering};

/// A wake-up later than the threshold: with `--break` the first of the run, with
/// `--explain-every` each one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Spike {
    /// The thread's position (cyclictest's `T:` number).
    pub thread: usize,
    pub cpu: usize,
    pub tid: i32,
    pub latency_ns: u64,
    pub threshold_ns: u64,
    /// Which wake-up of that thread it was, from 1.
    pub cycle: u64,
    /// The deadline it slept to and when it read the clock, CLOCK_MONOTONIC nanoseconds (what
    /// ftrace's `mono` clock and, on most machines, its `local` clock count).
    pub expected_ns: u64,
    pub woke_ns: u64,
}

/// Called from the measuring thread that saw the spike, right after its clock read (with
/// `--break` once, before the others are stopped): the place to stop tracing while the trace
/// still ends at the spike. It runs on a real-time thread between two wake-ups, so it must
/// not block.
pub trait OnSpike: Sync {
    fn on_spike(&self, event: &Spike);
}

impl<F: Fn(&Spike) + Sync> OnSpike for F {
    fn on_spike(&self, event: &Spike) {
        self(event)
    }
}

/// What the threads of a run share.
pub struct Shared<'a> {
    /// Set to end the run; polled after every wake-up.
    pub stop: &'a AtomicBool,
    /// Set by the one thread that breaks, so that only one does.
    pub broke: &'a AtomicBool,
    /// Wake-ups later than this are spikes.
    pub spike_ns: Option<u64>,
    /// Whether the first spike ends the run (`--break`) or each is handed on.
    pub stop_at_spike: bool,
    pub on_spike: Option<&'a dyn OnSpike>,
    /// Each thread's end: after this long or this many wake-ups.
    pub duration_ns: Option<u64>,
    pub loops: Option<u64>,
    pub hist_us: Option<usize>,
}

/// A finished thread.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ThreadResult {
    pub plan: ThreadPlan,
    pub tid: i32,
    /// The policy and priority the kernel reported from inside the thread once it was set,
    /// so the report shows what ran rather than what was asked.
    pub policy: &'static str,
    pub prio: i32,
    pub summary: ThreadSummary,
    pub brk: Option<Spike>,
}

/// Sets the thread up as planned and measures until the run ends.
pub fn measure(
    plan: ThreadPlan,
    live: &LiveStats,
    shared: &Shared<'_>,
) -> Result<ThreadResult, LiveError> {
    let tid = current_tid();
    live.tid.store(tid, Ordering::Relaxed);
    pin_current_thread(plan.cpu)?;
    set_current_thread_policy(plan.policy, plan.prio)?;
    let (policy, prio) = current_policy()?;
    let mut recorder = Recorder::new(live, shared.hist_us);
    let start = mono();
    let end = shared.duration_ns.map(|d| start + d);
    let mut deadline = Deadline::start(start, plan.interval_ns);
    let mut brk = None;
    while !shared.stop.load(Ordering::Relaxed) {
        let expected = deadline.next_ns();
        if !sleep_until(expected)? {
            continue; // a signal cut the sleep short: not a wake-up
        }
        let woke = mono();
        let wake = deadline.woke(woke);
        let cycle = recorder.record(wake);
        if let Some(threshold_ns) = shared.spike_ns.filter(|&t| wake.latency_ns > t) {
            let event = Spike {
                thread: plan.index,
                cpu: plan.cpu,
                tid,
                latency_ns: wake.latency_ns,
                threshold_ns,
                cycle,
                expected_ns: expected,
                woke_ns: woke,
            };
            // With --break only the first spike of the run counts; the others stop anyway.
            let handed = !shared.stop_at_spike || !shared.broke.swap(true, Ordering::AcqRel);
            if let Some(hook) = shared.on_spike.filter(|_| handed) {
                hook.on_spike(&event);
            }
            if handed && shared.stop_at_spike {
                shared.stop.store(true, Ordering::Relaxed);
                brk = Some(event);
            }
        }
        if end.is_some_and(|end| woke >= end) || shared.loops.is_some_and(|n| cycle >= n) {
            break;
        }
    }
    Ok(ThreadResult {
        plan,
        tid,
        policy,
        prio,
        summary: recorder.summary(),
        brk,
    })
}

/// The calling thread's policy name and priority, as the kernel has them.
fn current_policy() -> Result<(&'static str, i32), LiveError> {
    let (raw, prio) = crate::sched::current_thread_policy()?;
    let name = match raw {
        libc::SCHED_FIFO => "fifo",
        libc::SCHED_RR => "rr",
        libc::SCHED_OTHER => "other",
        libc::SCHED_BATCH => "batch",
        libc::SCHED_IDLE => "idle",
        _ => "unknown",
    };
    Ok((name, prio))
}
