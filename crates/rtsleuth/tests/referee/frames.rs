//! Interrupt frames per CPU, from the entry/exit pairs the trace prints: `irq_handler_*`
//! (`irq N`; on ARM, a handler inside which `ipi_entry` prints the IPI's kind is exactly
//! `irq N (NAME: KIND)`), irq_vectors `*_entry/_exit` (`vector N`), `hrtimer_expire_*` (the
//! callback's function; hard or soft by the entry's flags, either when the peer prints no flags)
//! and `softirq_*` (`softirq N`). A hard frame whose exit is not traced closes at the CPU's next
//! task-context event, a soft one at its next switch. osnoise's `irq_noise` (`NAME:ID`, hard)
//! and `softirq_noise` (`softirq VEC`) are frames too, from their printed start for their
//! duration plus the interrupts nested in them (claims.md, "Noise frames").

use super::raw::{Event, Trace};
use std::collections::BTreeMap;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ctx {
    Hard,
    Soft,
    Either,
}

#[derive(Clone, Debug)]
pub struct Frame {
    pub ctx: Ctx,
    /// `irq 25`, `vector 236`, `softirq 8` or an hrtimer callback's function name.
    pub label: String,
    pub entry: i64,
    pub exit: i64,
    /// From osnoise's noise events (printed after the interrupt ended), not entry/exit pairs.
    pub noise: bool,
}

impl Frame {
    /// The engine's culprit names this frame: the label itself, or the label then a space
    /// (`irq 25 (virtio0-requests)`, `vector 236 (local_timer)`, `softirq 8 (HRTIMER)`).
    pub fn names(&self, culprit: &str) -> bool {
        culprit == self.label
            || culprit
                .strip_prefix(self.label.as_str())
                .is_some_and(|r| r.starts_with(' '))
    }
}

/// (key to pair entry and exit, ctx, label) of an entry event.
fn entry(e: &Event) -> Option<(String, Ctx, String)> {
    let n = e.name.as_str();
    if n == "irq_handler_entry" {
        let irq = e.num("irq")?;
        return Some((format!("irq {irq}"), Ctx::Hard, format!("irq {irq}")));
    }
    if n == "softirq_entry" {
        let v = e.num("vec")?;
        return Some((format!("softirq {v}"), Ctx::Soft, format!("softirq {v}")));
    }
    if n == "hrtimer_expire_entry" {
        let ctx = match &e.flags {
            None => Ctx::Either,
            Some(_) if e.in_hardirq() => Ctx::Hard,
            Some(_) => Ctx::Soft,
        };
        let f = e.field("function")?.split('/').next()?.to_string();
        return Some((format!("hrtimer {}", e.field("hrtimer")?), ctx, f));
    }
    if n.ends_with("_entry") {
        let v = e.num("vector")?;
        return Some((format!("vector {v}"), Ctx::Hard, format!("vector {v}")));
    }
    None
}

fn exit_key(e: &Event) -> Option<String> {
    match e.name.as_str() {
        "irq_handler_exit" => Some(format!("irq {}", e.num("irq")?)),
        "softirq_exit" => Some(format!("softirq {}", e.num("vec")?)),
        "hrtimer_expire_exit" => Some(format!("hrtimer {}", e.field("hrtimer")?)),
        n if n.ends_with("_exit") => Some(format!("vector {}", e.num("vector")?)),
        _ => None,
    }
}

/// The kind an `ipi_entry` prints in parentheses: `(Rescheduling interrupts)`.
fn ipi_kind(e: &Event) -> Option<&str> {
    e.fields.trim().strip_prefix('(')?.strip_suffix(')')
}

/// A frame still open: its pairing key, its index, and the handler's `name=` for `irq N`.
struct Open {
    key: String,
    frame: usize,
    handler: Option<String>,
}

/// ARM's `ipi_entry` inside an open `irq N` frame names that handler's IPI kind: the frame
/// becomes exactly `irq N (NAME: KIND)`, NAME from its `irq_handler_entry`.
fn name_ipi(frames: &mut [Frame], open: &[Open], e: &Event) {
    let (Some(o), Some(kind)) = (open.last(), ipi_kind(e)) else {
        return;
    };
    if let Some(name) = &o.handler {
        frames[o.frame].label = format!("{} ({name}: {kind})", o.key);
    }
}

/// Every CPU's frames, in entry order.
pub fn build(t: &Trace) -> BTreeMap<u32, CpuFrames> {
    let mut all = frames(t);
    for (cpu, noise) in noise_frames(t) {
        let f = all.entry(cpu).or_default();
        f.extend(noise);
        f.sort_by_key(|f| f.entry);
    }
    all.into_iter()
        .map(|(c, f)| (c, CpuFrames::new(f)))
        .collect()
}

/// `NAME:ID start S duration D ns` (the `start` in seconds, nine decimals).
pub fn noise_span(e: &Event) -> Option<(String, i64, i64)> {
    let w: Vec<&str> = e.fields.split_whitespace().collect();
    let at = w.iter().position(|x| *x == "start")?;
    let start = super::raw::parse_seconds(w.get(at + 1)?)?;
    let dur: i64 = w.get(at + 3)?.parse().ok()?;
    (w.get(at + 2) == Some(&"duration")).then(|| (w[..at].join(" "), start, dur))
}

/// The osnoise interrupt frames of each CPU: irq/softirq noise, lengthened by the irq and NMI
/// noise reported before them that starts inside them.
fn noise_frames(t: &Trace) -> BTreeMap<u32, Vec<Frame>> {
    let mut out: BTreeMap<u32, Vec<Frame>> = BTreeMap::new();
    for (&cpu, ix) in &t.by_cpu {
        let mut nested: Vec<(i64, i64)> = Vec::new();
        for e in ix.iter().map(|&i| &t.events[i]) {
            let (ctx, is_irq) = match e.name.as_str() {
                "irq_noise" => (Ctx::Hard, true),
                "softirq_noise" => (Ctx::Soft, false),
                "nmi_noise" => (Ctx::Hard, true),
                _ => continue,
            };
            let Some((who, start, dur)) = noise_span(e) else {
                continue;
            };
            let mut inner: Vec<(i64, i64)> =
                nested.iter().copied().filter(|n| n.0 >= start).collect();
            inner.sort_unstable();
            let mut end = start + dur;
            for (s, l) in inner {
                if s < end {
                    end += l;
                }
            }
            if is_irq {
                nested.push((start, end - start));
            }
            if e.name == "nmi_noise" {
                continue;
            }
            let label = match ctx {
                Ctx::Soft => format!("softirq {}", who.rsplit(':').next().unwrap_or("")),
                _ => who,
            };
            out.entry(cpu).or_default().push(Frame {
                ctx,
                label,
                entry: start,
                exit: end,
                noise: true,
            });
        }
    }
    out
}

fn frames(t: &Trace) -> BTreeMap<u32, Vec<Frame>> {
    let mut out: BTreeMap<u32, Vec<Frame>> = BTreeMap::new();
    for (&cpu, ix) in &t.by_cpu {
        let frames = out.entry(cpu).or_default();
        let mut open: Vec<Open> = Vec::new();
        for &i in ix {
            let e = &t.events[i];
            if let Some(key) = exit_key(e) {
                if let Some(k) = open.iter().rposition(|o| o.key == key) {
                    frames[open[k].frame].exit = e.ts;
                    open.remove(k);
                }
            } else if e.name == "ipi_entry" {
                name_ipi(frames, &open, e);
            } else if let Some((key, ctx, label)) = entry(e) {
                let handler = (e.name == "irq_handler_entry")
                    .then(|| e.field("name").map(str::to_string))
                    .flatten();
                open.push(Open {
                    key,
                    frame: frames.len(),
                    handler,
                });
                frames.push(Frame {
                    ctx,
                    label,
                    entry: e.ts,
                    exit: i64::MAX,
                    noise: false,
                });
            } else if e.in_interrupt() == Some(false) || e.name == "sched_switch" {
                // A hard frame cannot hold a task-context event; a soft one (a softirq or
                // soft hrtimer run by a thread on PREEMPT_RT) ends at the latest at a switch.
                let switch = e.name == "sched_switch";
                open.retain(|o| {
                    let ends = switch || frames[o.frame].ctx == Ctx::Hard;
                    if ends {
                        frames[o.frame].exit = e.ts;
                    }
                    !ends
                });
            }
        }
        for o in open {
            frames[o.frame].exit = frames[o.frame].entry;
        }
    }
    out
}

/// One CPU's frames in entry order, and the longest of them (to bound a search).
#[derive(Default)]
pub struct CpuFrames {
    pub frames: Vec<Frame>,
    longest: i64,
}

impl CpuFrames {
    fn new(frames: Vec<Frame>) -> CpuFrames {
        let longest = frames
            .iter()
            .map(|f| f.exit.saturating_sub(f.entry))
            .max()
            .unwrap_or(0);
        CpuFrames { frames, longest }
    }

    /// The frames that can be open somewhere in [a, b].
    fn near(&self, a: i64, b: i64) -> &[Frame] {
        let lo = self
            .frames
            .partition_point(|f| f.entry < a.saturating_sub(self.longest));
        let hi = self.frames.partition_point(|f| f.entry <= b);
        &self.frames[lo..hi.max(lo)]
    }

    /// The latest hard-IRQ frame from entry/exit events that closed before `t`, with the
    /// frames around it, outermost first.
    pub fn hard_closed_before(&self, t: i64) -> Vec<&Frame> {
        let hard = |f: &&Frame| f.ctx == Ctx::Hard && !f.noise;
        let before = &self.frames[..self.frames.partition_point(|f| f.entry < t)];
        let Some(last) = before
            .iter()
            .filter(hard)
            .filter(|f| f.exit < t)
            .max_by_key(|f| f.exit)
        else {
            return Vec::new();
        };
        let mut visit: Vec<&Frame> = (self.near(last.entry, last.entry).iter())
            .filter(hard)
            .filter(|f| f.entry <= last.entry && last.exit <= f.exit)
            .collect();
        visit.sort_by_key(|f| f.entry);
        visit
    }

    /// The hard-IRQ frames open at `t` (entry <= t <= exit), outermost first: what a waking
    /// in hard-IRQ context ran inside.
    pub fn hard_open_at(&self, t: i64) -> Vec<&Frame> {
        let mut open: Vec<&Frame> = (self.near(t, t).iter())
            .filter(|f| f.ctx == Ctx::Hard && f.entry <= t && t <= f.exit)
            .collect();
        open.sort_by_key(|f| f.entry);
        open
    }
}

/// Frames of type `ctx` naming `culprit` cover [a, b] without a gap (back-to-back frames
/// carry it on).
pub fn covered(cpu: &CpuFrames, ctx: Ctx, culprit: &str, a: i64, b: i64) -> bool {
    let mut cur = a;
    let fit: Vec<&Frame> = cpu
        .near(a, b)
        .iter()
        .filter(|f| (f.ctx == ctx || f.ctx == Ctx::Either) && f.names(culprit))
        .collect();
    loop {
        let next = fit
            .iter()
            .filter(|f| f.entry <= cur && f.exit > cur)
            .map(|f| f.exit)
            .max();
        match next {
            Some(x) if x >= b => return true,
            Some(x) => cur = x,
            None => return false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// ARM runs each IPI kind inside the one `IPI` handler; its `ipi_entry` names the frame.
    #[test]
    fn an_arm_ipi_handler_is_named_by_its_kind() {
        let t = super::super::text::parse(
            "  <idle>-0 [001] d.h.. 2.606152: irq_handler_entry: irq=2 name=IPI
  <idle>-0 [001] d.h.. 2.606155: ipi_entry: (Function call interrupts)
  <idle>-0 [001] dNh.. 2.606173: sched_wakeup: comm=init pid=179 prio=120 target_cpu=001
  <idle>-0 [001] dNh.. 2.606178: ipi_exit: (Function call interrupts)
  <idle>-0 [001] dNh.. 2.606180: irq_handler_exit: irq=2 ret=handled
",
        );
        let all = build(&t);
        let cpu = &all[&1];
        let us = |u: i64| 2_606_000_000 + u * 1000;
        let named = "irq 2 (IPI: Function call interrupts)";
        assert!(covered(cpu, Ctx::Hard, named, us(152), us(180)));
        assert!(!covered(
            cpu,
            Ctx::Hard,
            "irq 2 (IPI: Rescheduling interrupts)",
            us(152),
            us(180)
        ));
        assert!(!covered(cpu, Ctx::Hard, "irq 2 (IPI)", us(152), us(180)));
    }
}
