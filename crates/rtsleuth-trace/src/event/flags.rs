//! The context flags ftrace prints before the timestamp (`d..2.`, `dNh1`, `1d..h1..`).
//!
//! Every RT question starts here: were interrupts off, was a reschedule pending, were we in
//! hard-IRQ or softirq context, how deep was preemption disabled. The column's width and meaning
//! changed across kernels, so the layout is a parameter rather than a fixed table.

use serde::Serialize;

/// Which character stands for what, as announced by the trace header or inferred from the width.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FlagLayout {
    /// irqs-off, need-resched, hardirq/softirq, preempt-depth (kernels before 5.14: `d.h1`).
    Classic4,
    /// Classic4 plus migrate-disable (5.14 and later: `d.h1.`).
    WithMigrate5,
    /// PREEMPT_RT patches: irqs-off, need-resched, need-resched-lazy, hardirq/softirq,
    /// preempt-depth, preempt-lazy-depth, migrate-disable (`d..h1..`).
    Rt7,
}

impl FlagLayout {
    /// The layout a flag field of `width` characters most likely has when no header says more.
    pub fn for_width(width: usize) -> FlagLayout {
        match width {
            0..=4 => FlagLayout::Classic4,
            7.. => FlagLayout::Rt7,
            _ => FlagLayout::WithMigrate5,
        }
    }
}

/// Decoded context flags of one event. `known` is false when the trace has no flag column
/// (e.g. plain `trace-cmd report`), so that nobody mistakes "unknown" for "IRQs on".
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Flags {
    pub known: bool,
    pub irqs_off: bool,
    pub bh_off: bool,
    /// TIF_NEED_RESCHED: the scheduler wants to switch at the next preemption point.
    pub need_resched: bool,
    /// PREEMPT_NEED_RESCHED folded into the preempt count (x86).
    pub preempt_resched: bool,
    pub need_resched_lazy: bool,
    pub hardirq: bool,
    pub softirq: bool,
    pub nmi: bool,
    pub preempt_depth: u8,
    pub migrate_disable: u8,
    pub preempt_lazy_depth: u8,
}

impl Flags {
    /// Flags of a trace that does not print them.
    pub const UNKNOWN: Flags = Flags {
        known: false,
        irqs_off: false,
        bh_off: false,
        need_resched: false,
        preempt_resched: false,
        need_resched_lazy: false,
        hardirq: false,
        softirq: false,
        nmi: false,
        preempt_depth: 0,
        migrate_disable: 0,
        preempt_lazy_depth: 0,
    };

    /// Is any reschedule request pending (the `N`/`n`/`p`/lazy letters)?
    pub fn resched_pending(&self) -> bool {
        self.need_resched || self.preempt_resched || self.need_resched_lazy
    }

    /// Decodes a flag field. Returns `None` when a character cannot stand where it is, which
    /// tells the line parser that this token is not a flag field at all. Always inlined, so
    /// that the flags are built in registers rather than in a struct a caller copies on.
    #[inline(always)]
    pub fn parse(field: &[u8], layout: FlagLayout) -> Option<Flags> {
        let mut f = Flags {
            known: true,
            ..Flags::UNKNOWN
        };
        let positions: &[Slot] = match layout {
            FlagLayout::Classic4 => &[Slot::Irqs, Slot::Resched, Slot::Context, Slot::Preempt],
            FlagLayout::WithMigrate5 => &[
                Slot::Irqs,
                Slot::Resched,
                Slot::Context,
                Slot::Preempt,
                Slot::Migrate,
            ],
            FlagLayout::Rt7 => &[
                Slot::Irqs,
                Slot::Resched,
                Slot::ReschedLazy,
                Slot::Context,
                Slot::Preempt,
                Slot::PreemptLazy,
                Slot::Migrate,
            ],
        };
        if field.is_empty() || field.len() > positions.len() + 1 {
            return None;
        }
        for (i, &c) in field.iter().enumerate() {
            // A trailing extra character (a newer kernel's column we do not know yet) is
            // accepted if it looks like a flag, and ignored.
            let Some(slot) = positions.get(i) else {
                return (c == b'.' || c.is_ascii_hexdigit()).then_some(f);
            };
            slot.apply(c, &mut f)?;
        }
        Some(f)
    }
}

#[derive(Clone, Copy)]
enum Slot {
    Irqs,
    Resched,
    ReschedLazy,
    Context,
    Preempt,
    PreemptLazy,
    Migrate,
}

impl Slot {
    /// Applies one flag character; nested matches keep this a couple of jumps per character
    /// (it runs for every line of a trace).
    #[inline(always)]
    fn apply(self, c: u8, f: &mut Flags) -> Option<()> {
        if c == b'.' {
            return Some(());
        }
        match self {
            Slot::Irqs => match c {
                b'd' => f.irqs_off = true,
                b'D' => {
                    f.irqs_off = true;
                    f.bh_off = true;
                }
                b'b' => f.bh_off = true,
                // The architecture cannot report the IRQ state.
                b'X' => {}
                _ => return None,
            },
            Slot::Resched => match c {
                b'N' => {
                    f.need_resched = true;
                    f.preempt_resched = true;
                }
                b'n' => f.need_resched = true,
                b'p' => f.preempt_resched = true,
                b'B' => {
                    f.need_resched = true;
                    f.preempt_resched = true;
                    f.need_resched_lazy = true;
                }
                b'L' => {
                    f.need_resched_lazy = true;
                    f.preempt_resched = true;
                }
                b'b' => {
                    f.need_resched = true;
                    f.need_resched_lazy = true;
                }
                b'l' => f.need_resched_lazy = true,
                _ => return None,
            },
            Slot::ReschedLazy => match c {
                b'L' => f.need_resched_lazy = true,
                _ => return None,
            },
            Slot::Context => match c {
                b'h' => f.hardirq = true,
                b's' => f.softirq = true,
                b'H' => {
                    f.hardirq = true;
                    f.softirq = true;
                }
                b'z' => f.nmi = true,
                b'Z' => {
                    f.nmi = true;
                    f.hardirq = true;
                }
                _ => return None,
            },
            Slot::Preempt => f.preempt_depth = hex(c)?,
            Slot::PreemptLazy => f.preempt_lazy_depth = hex(c)?,
            Slot::Migrate => f.migrate_disable = hex(c)?,
        }
        Some(())
    }
}

#[inline(always)]
fn hex(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modern_five_char_field() {
        let f = Flags::parse(b"dNh2.", FlagLayout::WithMigrate5).unwrap();
        assert!(f.known && f.irqs_off && f.need_resched && f.preempt_resched && f.hardirq);
        assert_eq!((f.preempt_depth, f.migrate_disable), (2, 0));
        let f = Flags::parse(b"...1a", FlagLayout::WithMigrate5).unwrap();
        assert!(!f.irqs_off && !f.resched_pending());
        assert_eq!((f.preempt_depth, f.migrate_disable), (1, 10));
    }

    #[test]
    fn classic_four_char_field() {
        let f = Flags::parse(b"dNs6", FlagLayout::Classic4).unwrap();
        assert!(f.irqs_off && f.softirq && !f.hardirq && f.need_resched);
        assert_eq!(f.preempt_depth, 6);
        let f = Flags::parse(b"d.H5", FlagLayout::Classic4).unwrap();
        assert!(f.hardirq && f.softirq);
    }

    #[test]
    fn rt_seven_char_field() {
        let f = Flags::parse(b"d..h1..", FlagLayout::Rt7).unwrap();
        assert!(f.irqs_off && f.hardirq && !f.need_resched_lazy);
        assert_eq!(f.preempt_depth, 1);
        let f = Flags::parse(b".NL.2.1", FlagLayout::Rt7).unwrap();
        assert!(f.need_resched && f.need_resched_lazy);
        assert_eq!((f.preempt_depth, f.migrate_disable), (2, 1));
    }

    #[test]
    fn lazy_and_bh_letters() {
        let f = Flags::parse(b"Dp.1.", FlagLayout::WithMigrate5).unwrap();
        assert!(f.irqs_off && f.bh_off && f.preempt_resched && !f.need_resched);
        let f = Flags::parse(b"bl...", FlagLayout::WithMigrate5).unwrap();
        assert!(f.bh_off && !f.irqs_off && f.need_resched_lazy && !f.need_resched);
        let f = Flags::parse(b"d.Z.", FlagLayout::Classic4).unwrap();
        assert!(f.nmi && f.hardirq);
    }

    #[test]
    fn rejects_what_is_not_a_flag_field() {
        assert!(Flags::parse(b"1234.5678:", FlagLayout::Classic4).is_none());
        assert!(Flags::parse(b"dq..", FlagLayout::Classic4).is_none());
        assert!(Flags::parse(b"", FlagLayout::Classic4).is_none());
    }
}
