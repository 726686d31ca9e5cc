//! The referee's own wake chains (docs/claims.md, "Wake chains"): from a wake-up, back
//! through the tasks whose wakings caused it, to a wake-up from a hard-IRQ frame (a device
//! interrupt, or a timer's expiry), the chain's proven start.

use super::sched::{Waker, Wakeup};
use super::Ctx;

/// The most links followed; a longer chain is unproven.
pub const DEPTH: usize = 8;

/// A proven chain ending in `w`: the number of task links before it and the start's wake-up
/// (the first link's own, woken from a hard-IRQ frame). `None` when `w` itself was woken by
/// an interrupt (no chain: its own due time, if any, is the timer's), or when following back
/// stops before a proven start.
pub fn proven<'a>(w: &'a Wakeup, cx: &'a Ctx) -> Option<(usize, &'a Wakeup)> {
    let mut cur = w;
    for links in 0..=DEPTH {
        match cur.waker {
            Waker::HardIrq if links > 0 => return Some((links, cur)),
            Waker::Task(p) if !cur.raced => cur = waker_link(p, cur, cx)?,
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
        && last.start >= cx.window.unwrap_or(i64::MIN);
    held.then_some(last)
}
