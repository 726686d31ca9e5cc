//! One entry of a latency tracer's output in the latency format:
//! `ps-6143    2d...    0us!: trace_hardirqs_off <-__lock_task_sighand`.
//!
//! The common fields are the ftrace text reader's ([`parse_line`]); what is particular to the
//! latency tracers is the delay marker glued to the time, which says how long it was until the
//! next entry (the kernel's `trace_find_mark`): it is where the section spent its time.

use crate::event::Flags;
use crate::read::ftrace_text::{parse_line, Line, LineContext};

#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    pub comm: String,
    pub pid: i32,
    pub cpu: u32,
    pub flags: Flags,
    /// Microseconds since the section started, as printed (nanoseconds).
    pub time_ns: u64,
    /// The delay marker's lower bound on the time to the next entry, in µs: `+` 10, `!` 100,
    /// `#` 1000, `*` 10 000, `@` 100 000, `$` 1 000 000; `None` when unmarked (under 10 µs).
    pub delay_over_us: Option<u64>,
    /// `function` for function entries, `kernel_stack` for `<stack trace>`, an event name
    /// otherwise (the text reader's names).
    pub name: String,
    /// For a function entry `func <-parent`, else the event's fields.
    pub text: String,
    /// Lines were cut out (`[...]`) between the previous entry and this one.
    pub after_elision: bool,
}

impl Entry {
    /// Parses a latency-format line; `None` for anything else.
    pub fn parse(line: &str, ctx: &LineContext) -> Option<Entry> {
        let Line::Event(ev, _) = parse_line(line, ctx) else {
            return None;
        };
        Some(Entry {
            comm: ev.comm.to_string(),
            pid: ev.pid,
            cpu: ev.cpu,
            flags: ev.flags,
            time_ns: ev.ts,
            delay_over_us: delay_mark(line),
            name: ev.name.to_string(),
            text: ev.payload.to_string(),
            after_elision: false,
        })
    }

    /// The function of a function entry (`func <-parent`).
    pub fn function(&self) -> Option<(&str, &str)> {
        if self.name != "function" {
            return None;
        }
        let (f, p) = self.text.split_once(" <-").unwrap_or((&self.text, ""));
        Some((f.trim(), p.trim()))
    }
}

/// The character between `us` and the `:` that ends the line's prefix.
fn delay_mark(line: &str) -> Option<u64> {
    let colon = line.find(": ")?;
    let before = line[..colon].trim_end();
    let mark = before.strip_suffix(['+', '!', '#', '*', '@', '$'])?;
    mark.ends_with("us").then_some(())?;
    Some(match before.as_bytes()[before.len() - 1] {
        b'+' => 10,
        b'!' => 100,
        b'#' => 1_000,
        b'*' => 10_000,
        b'@' => 100_000,
        _ => 1_000_000,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delay_markers_and_functions() {
        let ctx = LineContext::default();
        let e = Entry::parse(
            "      ps-6143    2d...    0us!: trace_hardirqs_off <-__lock_task_sighand",
            &ctx,
        )
        .unwrap();
        assert_eq!(
            (e.comm.as_str(), e.pid, e.cpu, e.time_ns),
            ("ps", 6143, 2, 0)
        );
        assert!(e.flags.irqs_off);
        assert_eq!(e.delay_over_us, Some(100));
        assert_eq!(
            e.function(),
            Some(("trace_hardirqs_off", "__lock_task_sighand"))
        );
        let e = Entry::parse("      ps-6143    2d..1  306us : <stack trace>", &ctx).unwrap();
        assert_eq!(
            (e.name.as_str(), e.time_ns, e.delay_over_us),
            ("kernel_stack", 306_000, None)
        );
        assert_eq!(e.function(), None);
        let e = Entry::parse(
            "    bash-1994    1d..1   12us#: irq_enter <-smp_apic_timer_interrupt",
            &ctx,
        )
        .unwrap();
        assert_eq!(e.delay_over_us, Some(1000));
        assert_eq!(Entry::parse(" => vfs_read", &ctx), None);
        assert_eq!(Entry::parse("[...]", &ctx), None);
    }
}
