//! The referee's own reading of a work's queueing waking its pool's worker (docs/claims.md,
//! "Works"), from the events as the peer printed them.

use super::raw::Event;
use super::sched::Wakeup;
use super::Ctx;

/// When the work whose queueing woke `w` was queued: `w` starts at a sched_waking of its task
/// that follows, on its CPU, a workqueue_queue_work in the same pid column and context, with
/// nothing of that CPU between but workqueue_activate_work of the same work in that column.
pub fn queueing_of(w: &Wakeup, cx: &Ctx) -> Result<i64, String> {
    if w.raced {
        return Err("a raced wake-up starts at a switch-out, not a waking".into());
    }
    let pid = w.pid.to_string();
    let mut back = cx.trace.before(w.waker_cpu, w.start);
    let waking = (back.by_ref())
        .find(|e| e.name == "sched_waking" && e.field("pid") == Some(pid.as_str()))
        .filter(|e| e.ts == w.start)
        .ok_or("no sched_waking of the task at its wake-up's start")?;
    let context = |e: &Event| (e.pid, e.in_hardirq(), e.in_interrupt());
    let mut activated = None;
    for e in back {
        if context(e) != context(waking) {
            return Err(format!(
                "{} in another column or context before the waking",
                e.name
            ));
        }
        match e.name.as_str() {
            "workqueue_activate_work" if activated.is_none() => activated = work_of(e),
            "workqueue_queue_work" if activated.is_some_and(|a| Some(a) != work_of(e)) => {
                return Err("the work activated is not the one queued".into())
            }
            "workqueue_queue_work" => return Ok(e.ts),
            other => return Err(format!("{other} between the queueing and the waking")),
        }
    }
    Err("no workqueue_queue_work before the waking".into())
}

/// `w` is a work's queueing's waking, and `expected` (when given) is that queueing, within
/// `tol` ns: the due time a `queued` finding, or a chain's `queue` start, claims.
pub fn due_at(w: &Wakeup, cx: &Ctx, expected: Option<i64>, tol: i64) -> Result<(), String> {
    let queued = queueing_of(w, cx)?;
    match expected {
        Some(e) if (e - queued).abs() <= tol => Ok(()),
        _ => Err(format!(
            "expected_ts is not the queueing at {:.9}",
            queued as f64 / 1e9
        )),
    }
}

/// The work a workqueue event names: `work struct=PTR` (queue) or `work struct PTR`.
fn work_of(e: &Event) -> Option<&str> {
    let rest = e.fields.split_once("work struct")?.1;
    rest.trim_start_matches(['=', ' ']).split([' ', ':']).next()
}
