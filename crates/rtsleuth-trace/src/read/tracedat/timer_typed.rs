//! The timer interrupt's events typed straight from their binary fields: `hrtimer_start`,
//! `hrtimer_expire_entry`/`_exit`, `hrtimer_cancel` and x86's `irq_vectors`. Every timer
//! interrupt records several of them, and printing each to text (its callback looked up and
//! formatted) only to parse it back was most of what `explain` paid for them on a trace.dat.
//! Typed out of line from the scheduler's events, so that the batch loop stays as small as it
//! was for the readers that never ask for them.

use super::event_format::EventFormat;
use super::typed::Slot;
use crate::event::{EventKind, IrqVector};
use crate::ring_buffer::Endian;

/// How to type one timer event id, decided once from its format.
#[derive(Debug, Clone)]
pub enum Timer {
    Start {
        hrtimer: Slot,
        function: Slot,
        expires: Slot,
        softexpires: Slot,
    },
    ExpireEntry {
        hrtimer: Slot,
        function: Slot,
        now: Slot,
    },
    /// `hrtimer_expire_exit` (`exit`) or `hrtimer_cancel`.
    Hrtimer { exit: bool, hrtimer: Slot },
    /// An x86 `irq_vectors` event, `vector=%d`: named by the event without `_entry`/`_exit`.
    Vector { entry: bool, vector: Slot },
}

impl Timer {
    /// The typing of `f`, when its format prints what the text typing reads the way this
    /// typing gives it.
    pub fn for_format(f: &EventFormat) -> Option<Timer> {
        let s = |n| Slot::of(f, n);
        match &*f.name {
            "hrtimer_start" if prints_callback(f) => Some(Timer::Start {
                hrtimer: s("hrtimer")?,
                function: s("function")?,
                expires: s("expires")?,
                softexpires: s("softexpires")?,
            }),
            "hrtimer_expire_entry" if prints_callback(f) => Some(Timer::ExpireEntry {
                hrtimer: s("hrtimer")?,
                function: s("function")?,
                now: s("now")?,
            }),
            "hrtimer_expire_exit" | "hrtimer_cancel" if prints_only_timer(f) => {
                Some(Timer::Hrtimer {
                    exit: f.name.as_ref() == "hrtimer_expire_exit",
                    hrtimer: s("hrtimer")?,
                })
            }
            name if f.print_fmt.starts_with(r#""vector=%d","#) => {
                let entry = name.ends_with("_entry");
                (entry || name.ends_with("_exit")).then_some(())?;
                Some(Timer::Vector {
                    entry,
                    vector: s("vector")?,
                })
            }
            _ => None,
        }
    }

    /// The typing names a callback by its symbol ([`Self::callback`]).
    pub fn names_callback(&self) -> bool {
        matches!(self, Timer::Start { .. } | Timer::ExpireEntry { .. })
    }

    /// The callback address the typing names by its symbol.
    pub fn callback(&self, data: &[u8], e: Endian) -> Option<u64> {
        match self {
            Timer::Start { function, .. } | Timer::ExpireEntry { function, .. } => {
                function.uint(data, e)
            }
            _ => None,
        }
    }

    /// Writes the event's kind into `out`, in place (see [`super::typed::Typed::type_into`]);
    /// leaves it alone if the record is too short for its fields or `symbol` does not name its
    /// callback.
    #[inline(never)]
    pub fn type_into<'a>(
        &self,
        name: &'a str,
        data: &'a [u8],
        e: Endian,
        symbol: impl Fn(u64) -> Option<&'a str>,
        out: &mut EventKind<'a>,
    ) {
        if let Some(kind) = self.kind(name, data, e, symbol) {
            *out = kind;
        }
    }

    /// The event's kind; `None` if the record is too short for its fields or `symbol` does
    /// not name its callback.
    #[inline(always)]
    fn kind<'a>(
        &self,
        name: &'a str,
        data: &'a [u8],
        e: Endian,
        symbol: impl Fn(u64) -> Option<&'a str>,
    ) -> Option<EventKind<'a>> {
        Some(match self {
            Timer::Start {
                hrtimer,
                function,
                expires,
                softexpires,
            } => EventKind::HrtimerStart {
                hrtimer: hrtimer.uint(data, e)?,
                function: symbol(function.uint(data, e)?)?,
                expires: expires.uint(data, e)?,
                softexpires: softexpires.uint(data, e)?,
            },
            Timer::ExpireEntry {
                hrtimer,
                function,
                now,
            } => EventKind::HrtimerExpireEntry {
                hrtimer: hrtimer.uint(data, e)?,
                now: now.uint(data, e)?,
                function: symbol(function.uint(data, e)?)?,
            },
            Timer::Hrtimer {
                exit: true,
                hrtimer,
            } => EventKind::HrtimerExpireExit {
                hrtimer: hrtimer.uint(data, e)?,
            },
            Timer::Hrtimer {
                exit: false,
                hrtimer,
            } => EventKind::HrtimerCancel {
                hrtimer: hrtimer.uint(data, e)?,
            },
            Timer::Vector { entry, vector } => {
                let v = IrqVector {
                    name: vector_name(name, *entry)?,
                    // `%d` of a negative vector is no vector number.
                    vector: u32::try_from(vector.int(data, e)?).ok(),
                };
                match entry {
                    true => EventKind::IrqVectorEntry(v),
                    false => EventKind::IrqVectorExit(v),
                }
            }
        })
    }
}

/// `hrtimer=%p function=%ps …` (`%pf` before 4.20): the callback printed as its bare symbol,
/// which is what the typing gives. The numbers are the fields' own, `.tv64` or not.
fn prints_callback(f: &EventFormat) -> bool {
    let fmt = &f.print_fmt;
    fmt.starts_with(r#""hrtimer=%p function=%ps "#)
        || fmt.starts_with(r#""hrtimer=%p function=%pf "#)
}

/// `hrtimer=%p`, nothing else.
fn prints_only_timer(f: &EventFormat) -> bool {
    f.print_fmt.starts_with(r#""hrtimer=%p","#)
}

/// The vector's name in an `irq_vectors` event's: `local_timer` of `local_timer_entry`.
fn vector_name(name: &str, entry: bool) -> Option<&str> {
    match entry {
        true => name.strip_suffix("_entry"),
        false => name.strip_suffix("_exit"),
    }
}
