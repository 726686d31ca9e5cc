//! Rules about the wake-up itself (docs/claims.md "The wake-up"): pairing, the due time's
//! evidence, the victim not running, lost events, impossible states and completeness.

use super::finding::Finding;
use super::raw::Event;
use super::rules_timeline::TOL;
use super::sched::Wakeup;
use super::{Ctx, Out};

/// The referee's wake-up a finding claims, if any: its preemption wait for `source:
/// preempted`.
pub fn own_wakeup<'a>(f: &Finding, cx: &'a Ctx) -> Option<&'a Wakeup> {
    match (f.source.as_str(), f.run_at.as_str()) {
        ("preempted", _) => cx.sched.preemption_at(f.pid, f.wakeup),
        (_, "resumed") => cx.sched.in_place_at(f.pid, f.wakeup),
        _ => cx.sched.wakeup_at(f.pid, f.wakeup),
    }
}

/// wakeup_pairing: wakeup_ts starts one of the referee's wake-ups of the task (for `run_at:
/// resumed`, a waking of the task still on its CPU that resumed in place); for `run_at:
/// switch`, run_ts is its switch-in on the finding's CPU; otherwise an event of the task is
/// at run_ts on that CPU and no switch-in of it comes before (`resumed`: run_ts is no later
/// than the task's first own event after the waking).
pub fn wakeup_pairing(f: &Finding, cx: &Ctx, out: &mut Out) {
    let Some(w) = own_wakeup(f, cx) else {
        let what = match f.source.as_str() {
            "preempted" => "preemption wait",
            _ => "wake-up",
        };
        out.put(
            "wakeup_pairing",
            None,
            format!("wakeup_ts starts no {what} of the task"),
        );
        return;
    };
    if f.run_at == "switch" {
        if !w.end_switch || (w.end - f.run).abs() > TOL || w.end_cpu != f.cpu {
            out.put(
                "wakeup_pairing",
                None,
                format!(
                    "the task was switched in at {:.6} on CPU{} (switch {})",
                    w.end as f64 / 1e9,
                    w.end_cpu,
                    w.end_switch
                ),
            );
        }
        return;
    }
    let at_run = cx
        .trace
        .inside(f.cpu, f.run - TOL - 1, f.run + TOL + 1)
        .any(|e| e.pid == f.pid || e.num("next_pid") == Some(f.pid));
    let switched_before = w.end_switch && w.end < f.run - TOL;
    let resumed_late = f.run_at == "resumed" && f.run > w.end + TOL;
    if f.run_at == "resumed" && !resumed_late && f.cpu == w.end_cpu {
        return;
    }
    if !at_run || resumed_late || (switched_before && f.run_at != "mark") {
        out.put(
            "wakeup_pairing",
            None,
            format!("run_at {}: no event of the task at run_ts", f.run_at),
        );
    }
}

/// due_evidence: what `source` says proves `expected_ts`.
pub fn due_evidence(f: &Finding, cx: &Ctx, out: &mut Out) {
    let why = match (f.source.as_str(), f.expected) {
        ("wakeup", None) => return,
        ("wakeup", Some(_)) => "source wakeup with an expected_ts".to_string(),
        (_, None) => format!("source {} without expected_ts", f.source),
        (_, Some(e)) if e > f.wakeup + TOL => "expected_ts after wakeup_ts".to_string(),
        ("timer", Some(e)) if super::rules_timerlat::timed_by_sample(f, cx) => {
            match super::rules_timerlat::timerlat_due(f, cx, e) {
                Ok(()) => return,
                Err(w) => w,
            }
        }
        ("timer", Some(e)) => match timer_due(f, cx, e) {
            Ok(()) => return,
            Err(w) => w,
        },
        ("tracemark", Some(_)) => match mark_due(f, cx) {
            Ok(()) => return,
            Err(w) => w,
        },
        ("period", Some(e)) => match period_due(f, cx, e) {
            Ok(()) => return,
            Err(w) => w,
        },
        ("chain", Some(_)) => return,
        ("queued", Some(e)) => match own_wakeup(f, cx) {
            None => "no referee wake-up at wakeup_ts".to_string(),
            Some(w) => match super::works::due_at(w, cx, Some(e), TOL) {
                Ok(()) => return,
                Err(why) => why,
            },
        },
        ("preempted", Some(e)) if (e - f.wakeup).abs() > TOL => {
            "expected_ts is not the switch-out that began the wait".to_string()
        }
        ("preempted", Some(_)) if own_wakeup(f, cx).is_none() => {
            "no switch-out of the task while runnable at wakeup_ts".to_string()
        }
        ("preempted", Some(_)) => return,
        (s, _) => format!("unknown source {s}"),
    };
    out.put("due_evidence", None, why);
}

/// queued_path: a queued finding's stretches before the wake-up are kernel_path on the
/// waker CPU (the queueing's own path to its waking).
pub fn queued_path(f: &Finding, cx: &Ctx, out: &mut Out) {
    if f.source != "queued" {
        return;
    }
    let waker_cpu = own_wakeup(f, cx).map(|w| w.waker_cpu);
    for (k, s) in f.timeline.iter().enumerate() {
        if s.before && (s.kind != "kernel_path" || Some(s.cpu) != waker_cpu) {
            let why = format!("a {} stretch on CPU{} before the wake-up", s.kind, s.cpu);
            out.put("queued_path", Some(k), why);
        }
    }
}

/// timer: the task's own last hrtimer_start of `hrtimer_wakeup` before the wake-up, armed
/// before expected_ts, and an hrtimer_expire_entry of that pointer after it, at or before
/// the wake-up.
fn timer_due(f: &Finding, cx: &Ctx, expected: i64) -> Result<(), String> {
    let armed = timer_fired(f.pid, f.wakeup, cx)?;
    if armed.ts > expected + TOL {
        return Err("expected_ts is before the timer was armed".into());
    }
    Ok(())
}

/// The hrtimer_start of `pid`'s own timer that woke it at `woken`: its last arming of an
/// `hrtimer_wakeup` timer, with an hrtimer_expire_entry of that pointer after it, at or
/// before `woken` (what a chain's timer start needs too).
pub fn timer_fired(pid: i64, woken: i64, cx: &Ctx) -> Result<&Event, String> {
    let armed = armed_timer_of(pid, woken, cx)
        .ok_or("the task armed no hrtimer_wakeup timer before the wake-up")?;
    let ptr = armed.field("hrtimer");
    let ev = &cx.trace.events;
    let (from, to) = (
        ev.partition_point(|e| e.ts <= armed.ts),
        ev.partition_point(|e| e.ts <= woken),
    );
    let fired = ev[from..to.max(from)]
        .iter()
        .any(|e| e.name == "hrtimer_expire_entry" && e.field("hrtimer") == ptr);
    if !fired {
        return Err("no hrtimer_expire_entry of the armed timer before the wake-up".into());
    }
    Ok(armed)
}

/// The task's own last `hrtimer_start` of an `hrtimer_wakeup` timer at or before its wake-up.
pub fn armed_timer<'a>(f: &Finding, cx: &'a Ctx) -> Option<&'a Event> {
    armed_timer_of(f.pid, f.wakeup, cx)
}

/// `pid`'s own last `hrtimer_start` of an `hrtimer_wakeup` timer at or before `at`.
fn armed_timer_of(pid: i64, at: i64, cx: &Ctx) -> Option<&Event> {
    cx.trace.of_pid(pid).rev().filter(|e| e.ts <= at).find(|e| {
        e.name == "hrtimer_start"
            && e.field("function")
                .is_some_and(|x| x.starts_with("hrtimer_wakeup"))
    })
}

/// tracemark: the task's `hit latency threshold (X > Y)` mark after run_ts, with X within
/// 1 us of latency_us, or expected_ts == wakeup_ts.
fn mark_due(f: &Finding, cx: &Ctx) -> Result<(), String> {
    let mark = cx
        .trace
        .of_pid(f.pid)
        .filter(|e| e.ts >= f.run - TOL)
        .find(|e| e.fields.contains("hit latency threshold"))
        .ok_or("no `hit latency threshold` mark of the task after run_ts")?;
    let x: Option<f64> = mark
        .fields
        .split("threshold (")
        .nth(1)
        .and_then(|r| r.split(' ').next())
        .and_then(|x| x.parse().ok());
    match x {
        Some(x) if (x - f.latency_us).abs() <= 1.0 || f.expected == Some(f.wakeup) => Ok(()),
        _ => Err(format!(
            "the mark says {x:?} us, latency_us {}",
            f.latency_us
        )),
    }
}

/// period: at least three earlier wake-ups of the task (referee's pairing); expected_ts after
/// the previous one and at most one period (median gap of the last ten) before wakeup_ts.
fn period_due(f: &Finding, cx: &Ctx, expected: i64) -> Result<(), String> {
    let starts: Vec<i64> = cx
        .sched
        .wakeups
        .get(&f.pid)
        .into_iter()
        .flatten()
        .map(|w| w.start)
        .filter(|&s| s < f.wakeup - TOL)
        .collect();
    if starts.len() < 4 {
        return Err(format!("only {} earlier wake-ups: no rhythm", starts.len()));
    }
    let last = &starts[starts.len().saturating_sub(11)..];
    let mut gaps: Vec<i64> = last.windows(2).map(|w| w[1] - w[0]).collect();
    gaps.sort_unstable();
    let period = gaps[gaps.len() / 2];
    let prev = *starts.last().unwrap();
    if expected <= prev || f.wakeup - expected > period + TOL {
        return Err(format!(
            "expected_ts not within one period ({} us) before the wake-up",
            period / 1000
        ));
    }
    Ok(())
}

/// victim_never_runs: no event in the victim's pid column (task-context ones only for `run_at:
/// resumed`) and no switch from or to it, on any CPU, strictly inside (window start, the
/// moment it ran).
pub fn victim_never_runs(f: &Finding, cx: &Ctx, out: &mut Out) {
    let hi = match (f.run_at.as_str(), own_wakeup(f, cx)) {
        ("timerlat", _) => super::rules_timerlat::switched_in_by(f, cx),
        ("switch", _) | (_, None) => f.run,
        (_, Some(w)) => w.end.min(f.run),
    };
    if let Some(e) = running_inside(f.pid, (f.window_start(), hi), f.run_at == "resumed", cx) {
        out.put(
            "victim_never_runs",
            None,
            format!(
                "{} of the victim at {:.6} on CPU{}",
                e.name,
                e.ts as f64 / 1e9,
                e.cpu
            ),
        );
    }
}

/// The first event inside (lo, hi) showing `pid` running: in its pid column (in task context
/// only for a task that never left its CPU, `in_place`) or a switch from or to it.
fn running_inside(pid: i64, (lo, hi): (i64, i64), in_place: bool, cx: &Ctx) -> Option<&Event> {
    let ev = &cx.trace.events;
    let from = ev.partition_point(|e| e.ts <= lo);
    ev[from..].iter().take_while(|e| e.ts < hi).find(|e| {
        // An interrupt shows its pid current too, except on a task that never left (resumed).
        let own = e.pid == pid && (e.task_context() || !in_place);
        let switch = e.name == "sched_switch"
            && (e.num("prev_pid") == Some(pid) || e.num("next_pid") == Some(pid));
        own || switch
    })
}

/// lost: no lost-events marker on the finding's CPU or its waker CPU inside its window.
pub fn no_lost_events_inside(f: &Finding, cx: &Ctx, out: &mut Out) {
    let waker = own_wakeup(f, cx).map(|w| w.waker_cpu);
    for &(cpu, ts) in &cx.trace.lost {
        if ts > f.window_start() && ts <= f.run && (cpu == f.cpu || Some(cpu) == waker) {
            out.put(
                "lost_events",
                None,
                format!("events lost on CPU{cpu} at {:.6}", ts as f64 / 1e9),
            );
        }
    }
}

/// V2: no moment inside the window where the victim or a culprit task was switched in on one
/// CPU while still running on another.
pub fn no_impossible_state(f: &Finding, cx: &Ctx, out: &mut Out) {
    let culprits: Vec<i64> = f.timeline.iter().filter_map(|s| s.culprit_pid).collect();
    for &(pid, ts) in &cx.sched.impossible {
        if ts >= f.window_start() && ts <= f.run && (pid == f.pid || culprits.contains(&pid)) {
            out.put(
                "V2_impossible_state",
                None,
                format!("pid {pid} on two CPUs at {:.6}", ts as f64 / 1e9),
            );
        }
    }
}

/// chain_required: a wake-up whose chain of wakers has a proven start (within
/// [`chains::DEPTH`] links) that a chain finding could hold ([`chain_due`]) is a `chain`
/// finding.
pub fn chain_required(f: &Finding, cx: &Ctx, out: &mut Out) {
    if matches!(f.source.as_str(), "chain" | "preempted") {
        return;
    }
    let Some(w) = own_wakeup(f, cx) else {
        return;
    };
    if let Some((links, start)) = chain_due(w, cx) {
        out.put(
            "chain_required",
            None,
            format!(
                "source {}, but its wakers go back {links} link(s) to a wake-up from a hard-IRQ frame at {:.6}",
                f.source,
                start.start as f64 / 1e9
            ),
        );
    }
}

/// The proven chain back from `w` (its links and its start's wake-up) when a chain finding
/// could hold: its start's due time can be shown (chain_start) and the task did not run after
/// it (victim_never_runs).
pub fn chain_due<'a>(w: &'a Wakeup, cx: &'a Ctx) -> Option<(usize, &'a Wakeup)> {
    let (links, start) = super::chains::proven(w, cx)?;
    let queued = super::works::queueing_of(start, cx).ok();
    let entry = match (super::chains::soft_timer(w, cx), queued) {
        (Some(st), _) => st.due,
        (None, Some(q)) => q,
        (None, None) => super::chains::start_entry(start, cx)?,
    };
    let ran = running_inside(w.pid, (entry, w.start), false, cx);
    ran.is_none().then_some((links, start))
}
