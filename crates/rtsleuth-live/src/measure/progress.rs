//! The live view while a run goes on: one cyclictest-style line per thread, redrawn in place.

use super::options::ThreadPlan;
use super::summary::LiveStats;
use std::io::{self, Write};
use std::sync::atomic::Ordering::Relaxed;

/// One thread's running numbers at one moment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ThreadView {
    pub index: usize,
    pub cpu: usize,
    pub tid: i32,
    pub prio: u32,
    pub interval_ns: u64,
    pub cycles: u64,
    pub cur_ns: u64,
    pub min_ns: u64,
    pub avg_ns: u64,
    pub max_ns: u64,
}

impl ThreadView {
    /// Reads a thread's counters; they may be a wake-up apart from each other, which a view
    /// refreshed ten times a second can afford.
    pub fn of(plan: &ThreadPlan, live: &LiveStats) -> ThreadView {
        let cycles = live.cycles.load(Relaxed);
        ThreadView {
            index: plan.index,
            cpu: plan.cpu,
            tid: live.tid.load(Relaxed),
            prio: plan.prio,
            interval_ns: plan.interval_ns,
            cycles,
            cur_ns: live.cur_ns.load(Relaxed),
            min_ns: if cycles == 0 {
                0
            } else {
                live.min_ns.load(Relaxed)
            },
            avg_ns: live.sum_ns.load(Relaxed).checked_div(cycles).unwrap_or(0),
            max_ns: live.max_ns.load(Relaxed),
        }
    }

    /// The line cyclictest prints for a thread, in microseconds with one decimal.
    pub fn line(&self) -> String {
        let us = |ns: u64| ns as f64 / 1000.0;
        format!(
            "T:{:2} ({:6}) P:{:2} I:{} C:{:8} Min:{:7.1} Act:{:7.1} Avg:{:7.1} Max:{:7.1}  CPU{}",
            self.index,
            self.tid,
            self.prio,
            self.interval_ns / 1000,
            self.cycles,
            us(self.min_ns),
            us(self.cur_ns),
            us(self.avg_ns),
            us(self.max_ns),
            self.cpu
        )
    }
}

/// Draws the lines, moving the cursor back up over the previous drawing each time.
pub struct LiveView<W: Write> {
    out: W,
    drawn: usize,
}

impl<W: Write> LiveView<W> {
    pub fn new(out: W) -> LiveView<W> {
        LiveView { out, drawn: 0 }
    }

    /// Draws a line per thread, then `below` (a soak's spike counts and causes).
    pub fn draw(&mut self, views: &[ThreadView], below: &[String]) -> io::Result<()> {
        if self.drawn > 0 {
            write!(self.out, "\x1b[{}A", self.drawn)?;
        }
        let lines = views
            .iter()
            .map(ThreadView::line)
            .chain(below.iter().cloned());
        let mut drawn = 0;
        for line in lines {
            // Erase to the end of the line: a shorter line must not leave the old one's tail.
            writeln!(self.out, "{line}\x1b[K")?;
            drawn += 1;
        }
        // Fewer lines than last time: erase what is left of the old drawing.
        let left = self.drawn.saturating_sub(drawn);
        for _ in 0..left {
            writeln!(self.out, "\x1b[K")?;
        }
        self.drawn = drawn + left;
        self.out.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn view() -> ThreadView {
        ThreadView {
            index: 1,
            cpu: 3,
            tid: 4242,
            prio: 80,
            interval_ns: 1_000_000,
            cycles: 1234,
            cur_ns: 7_260,
            min_ns: 3_049,
            avg_ns: 5_960,
            max_ns: 123_456,
        }
    }

    #[test]
    fn a_cyclictest_style_line() {
        assert_eq!(
            view().line(),
            "T: 1 (  4242) P:80 I:1000 C:    1234 Min:    3.0 Act:    7.3 Avg:    6.0 \
             Max:  123.5  CPU3"
        );
    }

    #[test]
    fn redraws_over_the_previous_lines() {
        let mut out = Vec::new();
        let mut live = LiveView::new(&mut out);
        live.draw(&[view(), view()], &[]).unwrap();
        live.draw(&[view(), view()], &[]).unwrap();
        let text = String::from_utf8(out).unwrap();
        let line = format!("{}\x1b[K\n", view().line());
        assert_eq!(text, format!("{line}{line}\x1b[2A{line}{line}"));
    }

    #[test]
    fn lines_below_the_threads_grow_and_shrink() {
        let mut out = Vec::new();
        let mut live = LiveView::new(&mut out);
        live.draw(&[view()], &["a".into(), "b".into()]).unwrap();
        live.draw(&[view()], &["c".into()]).unwrap();
        let text = String::from_utf8(out).unwrap();
        let line = format!("{}\x1b[K\n", view().line());
        assert_eq!(
            text,
            format!("{line}a\x1b[K\nb\x1b[K\n\x1b[3A{line}c\x1b[K\n\x1b[K\n")
        );
    }

    #[test]
    fn averages_what_was_recorded_so_far() {
        let live = LiveStats::default();
        let plan = ThreadPlan {
            index: 0,
            cpu: 0,
            policy: crate::sched::Policy::Fifo,
            prio: 80,
            interval_ns: 1_000_000,
        };
        assert_eq!(ThreadView::of(&plan, &live).min_ns, 0);
        live.cycles.store(4, Relaxed);
        live.sum_ns.store(10_000, Relaxed);
        live.min_ns.store(1_000, Relaxed);
        let v = ThreadView::of(&plan, &live);
        assert_eq!((v.avg_ns, v.min_ns), (2_500, 1_000));
    }
}
