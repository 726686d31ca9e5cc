//! The columns in front of a function_graph call: the optional absolute TIME
//! (`funcgraph-abstime`, `360.774522 |`), the CPU (`1)`), and the optional TASK/PID
//! (`funcgraph-proc`, `sh-4802 |`). The kernel decides per option, not per line, but
//! tools such as perf-tools' funcslower paste runs with different options into one file, so
//! every line is read on its own instead of trusting a header.

use super::text;
use crate::event::{Timestamp, MAX_CPUS};

/// A task as the graph prints it: `comm-pid` (comm cut to the column width).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Task<'a> {
    pub comm: &'a str,
    pub pid: i32,
}

impl<'a> Task<'a> {
    /// `sh-4802`, `<idle>-0`, `kworker/0:1-12` (the pid is after the last dash).
    pub fn parse(cell: &'a str) -> Option<Task<'a>> {
        let (comm, pid) = text::trim(cell).rsplit_once('-')?;
        let pid = pid.parse().ok()?;
        (!comm.is_empty() && !comm.contains(' ')).then_some(Task { comm, pid })
    }
}

/// The leading TIME and CPU of a line, and the text after the CPU's `)`.
pub struct Lead<'a> {
    pub ts: Option<Timestamp>,
    pub cpu: u32,
    pub rest: &'a str,
}

/// Splits `[TIME |] CPU)` off a line; `None` when the line does not start like a graph line.
pub fn lead(line: &str) -> Option<Lead<'_>> {
    let mut s = text::trim_start(line);
    let mut ts = None;
    if let Some((t, rest)) = time_column(s) {
        ts = Some(t);
        s = text::trim_start(rest);
    }
    let close = digit_run(s);
    if close == 0 || s.as_bytes().get(close) != Some(&b')') {
        return None;
    }
    Some(Lead {
        ts,
        // A CPU no kernel has makes the line damaged, not an entry (see `MAX_CPUS`).
        cpu: u32::try_from(text::number(&s[..close])?)
            .ok()
            .filter(|&c| c < MAX_CPUS)?,
        rest: &s[close + 1..],
    })
}

/// A leading `secs.fraction |` (blanks allowed before the bar): the time and the text after
/// the bar.
fn time_column(s: &str) -> Option<(Timestamp, &str)> {
    let secs = digit_run(s);
    if secs == 0 || s.as_bytes().get(secs) != Some(&b'.') {
        return None;
    }
    let end = secs + 1 + digit_run(&s[secs + 1..]);
    let rest = text::trim_start(&s[end..]).strip_prefix('|')?;
    Some((seconds_to_ns(&s[..secs], &s[secs + 1..end])?, rest))
}

/// How many ASCII digits `s` starts with.
fn digit_run(s: &str) -> usize {
    s.bytes().take_while(u8::is_ascii_digit).count()
}

/// `7238523` and `638008` -> nanoseconds; only the `secs.fraction` form the kernel prints.
fn seconds_to_ns(secs: &str, frac: &str) -> Option<Timestamp> {
    if frac.len() > 9 {
        return None;
    }
    let scale = 10u64.pow(9 - frac.len() as u32);
    text::number(secs)?
        .checked_mul(1_000_000_000)?
        .checked_add(text::number(frac)? * scale)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_cpu_and_task() {
        let l = lead("7238523.638008 |   0)   0.153 us    |    rcu_irq_enter();").unwrap();
        assert_eq!((l.ts, l.cpu), (Some(7_238_523_638_008_000), 0));
        assert_eq!(l.rest, "   0.153 us    |    rcu_irq_enter();");
        let l = lead(" 3) # 1837.709 us |  }").unwrap();
        assert_eq!((l.ts, l.cpu), (None, 3));
        // A CPU no kernel has: not a graph line.
        assert!(lead(" 8192) # 1837.709 us |  }").is_none());
        assert_eq!(
            Task::parse("  <idle>-0   "),
            Some(Task {
                comm: "<idle>",
                pid: 0
            })
        );
        assert_eq!(Task::parse("kworker/0:1-12").map(|t| t.pid), Some(12));
        assert!(Task::parse("d..1").is_none());
    }

    #[test]
    fn not_a_lead() {
        for line in [
            "Tracing \"do_nanosleep\"... Ctrl-C to end.",
            "x) a",
            "(1) b",
            "",
        ] {
            assert!(lead(line).is_none(), "{line}");
        }
    }
}
