//! The referee's own wake chains (docs/claims.md, "Wake chains"): from a wake-up, back
//! through the tasks whose wakings caused it, to a wake-up from a hard-IRQ frame (a device
//! interrupt, or a timer's expiry), the chain's proven start.

use super::frames::Frame;
use super::sched::{Waker, Wakeup};
use super::Ctx;

/// The most links followed; a longer chain is unproven.
pub const DEPTH: usize = 8;

/// A proven chain ending in `w`: the number of task links before it and the start's wake-up
/// (the first link's own, woken from a hard-IRQ frame). `None` when `w` itself was woken by
/// an interrupt (no chain: its own due time, if any, is the timer's), or when following back
/// stops before a proven start.
pub fn proven<'a>(w: &'a Wakeup, cx: &'a Ctx) -> Option<(usize, &'a Wakeup)> {
    let links = follow(w, cx)?;
    Some((links.len(), links[0]))
}

/// The links' own wake-ups of a proven chain ending in `w`, from the start, so a chain
/// finding can be compared with the referee's link by link.
pub fn follow<'a>(w: &'a Wakeup, cx: &'a Ctx) -> Option<Vec<&'a Wakeup>> {
    let mut links = Vec::new();
    let mut cur = w;
    for n in 0..=DEPTH {
        // A work's queueing woke it (docs/claims.md, "Works"): the victim is due then by
        // itself, a link starts the chain there.
        if super::works::queueing_of(cur, cx).is_ok() {
            links.reverse();
            return (n > 0).then_some(links);
        }
        if let (0, Waker::Softirq(_)) = (n, cur.waker) {
            return soft_timer(w, cx).map(|st| vec![st.thread]);
        }
        match cur.waker {
            Waker::HardIrq if n > 0 => {
                links.reverse();
                return Some(links);
            }
            Waker::Task(p) if !cur.raced => {
                cur = waker_link(p, cur, cx)?;
                links.push(cur);
            }
            _ => return None,
        }
    }
    None
}

/// Task `p`'s wake-up that it ran from, without a switch on its CPU, until its waking of
/// `woken`; and inside the common window.
fn waker_link<'a>(p: i64, woken: &Wakeup, cx: &'a Ctx) -> Option<&'a Wakeup> {
    let t = woken.start;
    let own = cx.sched.wakeups.get(&p)?;
    let last = own.iter().filter(|w| w.end <= t).max_by_key(|w| w.end)?;
    let held = last.end_cpu == woken.waker_cpu
        && cx.sched.switches_inside(last.end_cpu, last.end, t) == 0
        && !lost_between(cx, last.end_cpu, last.end, t)
        && last.start >= cx.window.unwrap_or(i64::MIN);
    held.then_some(last)
}

/// A lost-events marker of `cpu` in (lo, hi]: a switch there may not have been recorded, so
/// the waker cannot be shown to have run through.
pub fn lost_between(cx: &Ctx, cpu: u32, lo: i64, hi: i64) -> bool {
    cx.trace
        .lost
        .iter()
        .any(|&(c, ts)| c == cpu && ts > lo && ts <= hi)
}

/// The hard-IRQ frames a wake-up's waking ran inside on its waker CPU, outermost first: what
/// a chain's start was woken inside. Frames of entry/exit events open at the waking; when
/// none is, the latest one closed before it, if every event of the CPU in between is
/// flagged hard-IRQ (the same interrupt still running). osnoise's noise frames are printed
/// after the interrupt, so they prove no start.
pub fn hard_frames_at<'a>(w: &Wakeup, cx: &'a Ctx) -> Vec<&'a Frame> {
    let Some(frames) = cx.frames.get(&w.waker_cpu) else {
        return Vec::new();
    };
    let open: Vec<&Frame> = (frames.hard_open_at(w.start).into_iter())
        .filter(|f| !f.noise)
        .collect();
    if !open.is_empty() {
        return open;
    }
    let visit = frames.hard_closed_before(w.start);
    let still_hard =
        |exit: i64| (cx.trace.inside(w.waker_cpu, exit, w.start)).all(|e| e.in_hardirq());
    match visit.last() {
        Some(last) if still_hard(last.exit) => visit,
        _ => Vec::new(),
    }
}

/// A frame that is a sleeping task's own timer expiring (`hrtimer_wakeup`).
pub fn timer_frame(f: &Frame) -> bool {
    f.label.starts_with("hrtimer_wakeup")
}

/// The entry of the hard-IRQ frames a chain's start `w` was woken in, when its due time can
/// be shown (chain_start): inside its own timer's expiry with the arming traced (the due time
/// is at or before that entry), or inside another traced interrupt (the entry is the due
/// time).
pub fn start_entry(w: &Wakeup, cx: &Ctx) -> Option<i64> {
    let open = hard_frames_at(w, cx);
    let (outer, inner) = (open.first()?, open.last()?);
    if timer_frame(inner) && super::rules_wakeup::timer_fired(w.pid, w.start, cx).is_err() {
        return None;
    }
    Some(outer.entry)
}

/// A soft-timer start (claims.md, soft_timer): the softirq thread's wake-up, and the due time
/// of the timer the victim armed, from the expire entry's `now` and the arming's
/// `softexpires`.
pub struct SoftStart<'a> {
    pub thread: &'a Wakeup,
    pub due: i64,
}

/// The soft-timer start of `w`, a wake-up in a softirq: the soft `hrtimer_expire_entry` open
/// at its waking is of a timer its task armed, the thread was woken in hard-IRQ context or on
/// an exit path no earlier than the due time, and ran from then to the waking.
pub fn soft_timer<'a>(w: &'a Wakeup, cx: &'a Ctx) -> Option<SoftStart<'a>> {
    let Waker::Softirq(thread) = w.waker else {
        return None;
    };
    let entry = open_soft_expiry(w, cx)?;
    let ptr = entry.field("hrtimer")?;
    let armed = (cx.trace.of_pid(w.pid).rev())
        .filter(|e| e.ts <= w.start && e.name == "hrtimer_start")
        .filter(|e| {
            !e.field("function")
                .is_some_and(|f| f.starts_with("hrtimer_wakeup"))
        })
        .find(|e| e.in_interrupt() == Some(false))
        .filter(|e| e.field("hrtimer") == Some(ptr))?;
    let now: i64 = entry.field("now")?.parse().ok()?;
    let soft: i64 = armed.field("softexpires")?.parse().ok()?;
    let due = entry.ts - (now - soft);
    let link = waker_link(thread, w, cx)?;
    let after_interrupt = matches!(link.waker, Waker::HardIrq | Waker::ExitPath);
    (after_interrupt && link.start + 2_000 >= due).then_some(SoftStart { thread: link, due })
}

/// The innermost soft `hrtimer_expire_entry` still open at `w`'s waking on its CPU.
fn open_soft_expiry<'a>(w: &Wakeup, cx: &'a Ctx) -> Option<&'a super::raw::Event> {
    for e in cx.trace.before(w.waker_cpu, w.start) {
        match e.name.as_str() {
            "hrtimer_expire_exit" | "sched_switch" => return None,
            "hrtimer_expire_entry" if !e.in_hardirq() && e.flags.is_some() => return Some(e),
            "hrtimer_expire_entry" => return None,
            _ => {}
        }
    }
    None
}
