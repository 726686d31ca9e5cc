//! The parts of a `perf script` line that differ from ftrace's.
//!
//! perf prints a tracepoint sample as `comm tid [cpu] secs.frac: [period] system:name: payload`:
//! the task is `comm tid` (`comm pid/tid` with `-F pid,tid`) instead of ftrace's `comm-pid`,
//! there is no flag column, the event carries its system, and `-F +period` puts the sample
//! period before it. The payload is the kernel's print format evaluated by libtraceevent, the
//! text ftrace prints, so the ftrace decoders read it. The CPU column and the timestamp are
//! ftrace's, and [`super::line`] reads them for both.
//!
//! In the event's place perf also prints its side-band records (`PERF_RECORD_COMM`, `_MMAP`…
//! with `--show-*-events`) and, with `--show-lost-events`, `PERF_RECORD_LOST lost 18`: the
//! ring buffer dropped that many records on that CPU, perf's `[LOST 18 EVENTS]`.

/// What follows the timestamp of a perf line.
#[derive(Debug, PartialEq)]
pub(super) enum Rest<'a> {
    /// An event, named as ftrace names it (`sched_switch`, not `sched:sched_switch`).
    Event { name: &'a str, payload: &'a str },
    /// `PERF_RECORD_LOST lost 18` / `PERF_RECORD_LOST_SAMPLES lost 3`.
    Lost(Option<u64>),
    /// Any other `PERF_RECORD_*`: perf's own bookkeeping, no kernel event.
    SideBand,
}

/// `comm tid` or `comm pid/tid` as (comm, tid, pid). The tid is the kernel's pid, the number
/// ftrace prints; perf's pid is the thread group. The comm may contain blanks, so the number
/// is the last word.
pub(super) fn split_task(s: &str) -> Option<(&str, i32, Option<i32>)> {
    let (comm, ids) = s.trim_ascii().rsplit_once([' ', '\t'])?;
    let (pid, tid) = match ids.split_once('/') {
        Some((pid, tid)) => (Some(id(pid)?), id(tid)?),
        None => (None, id(ids)?),
    };
    Some((comm.trim_ascii_end(), tid, pid))
}

/// A task id: decimal digits, or `-1` for a sample perf could not attribute.
fn id(s: &str) -> Option<i32> {
    if s == "-1" {
        return Some(-1);
    }
    if s.is_empty() || s.len() > 10 || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// Reads what follows `secs.frac:`; `None` when it is neither an event nor a perf record.
pub(super) fn rest(rest: &str) -> Option<Rest<'_>> {
    let rest = skip_period(rest.trim_ascii_start());
    if let Some(record) = rest.strip_prefix("PERF_RECORD_") {
        return Some(if record.starts_with("LOST") {
            Rest::Lost(
                record
                    .split_once("lost ")
                    .and_then(|(_, n)| n.split_ascii_whitespace().next())
                    .and_then(|n| n.parse().ok()),
            )
        } else {
            Rest::SideBand
        });
    }
    let b = rest.as_bytes();
    let end = memchr::memchr_iter(b':', b).find(|&i| matches!(b.get(i + 1), None | Some(b' ')))?;
    let event = &rest[..end];
    if event.is_empty() || event.contains([' ', '\t']) {
        return None;
    }
    let name = event.split_once(':').map_or(event, |(_, name)| name);
    let payload = rest.get(end + 1..).unwrap_or("").trim_ascii();
    Some(Rest::Event { name, payload })
}

/// Drops the `-F period` column, a number before the event.
fn skip_period(s: &str) -> &str {
    match s.split_once(' ') {
        Some((n, after)) if n.bytes().all(|b| b.is_ascii_digit()) && !n.is_empty() => {
            after.trim_ascii_start()
        }
        _ => s,
    }
}

/// A callchain line under a sample recorded with `-g`: `ffffffff810d47be func+0x1e ([kernel.kallsyms])`
/// (address, symbol, object in parentheses).
pub(super) fn is_callchain_frame(t: &str) -> bool {
    let Some((addr, rest)) = t.split_once(' ') else {
        return false;
    };
    !addr.is_empty() && addr.bytes().all(|b| b.is_ascii_hexdigit()) && rest.ends_with(')')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tasks() {
        assert_eq!(
            split_task("      cyclictest  6112 "),
            Some(("cyclictest", 6112, None))
        );
        assert_eq!(split_task("swapper     0/0"), Some(("swapper", 0, Some(0))));
        assert_eq!(
            split_task("  Web Content 2711/2745"),
            Some(("Web Content", 2745, Some(2711)))
        );
        assert_eq!(
            split_task("kworker/u8:0-ev 25976"),
            Some(("kworker/u8:0-ev", 25976, None))
        );
        assert_eq!(split_task("perf -1"), Some(("perf", -1, None)));
        assert_eq!(split_task(":-1    -1/-1"), Some((":-1", -1, Some(-1))));
        assert_eq!(split_task(":-1 11679/-1"), Some((":-1", -1, Some(11679))));
        assert_eq!(split_task("cyclictest-6112"), None);
        assert_eq!(split_task("perf 12x"), None);
        assert_eq!(split_task("perf 1/"), None);
        assert_eq!(split_task("perf 99999999999"), None);
    }

    #[test]
    fn events() {
        assert_eq!(
            rest("       sched:sched_switch: prev_comm=a prev_pid=1"),
            Some(Rest::Event {
                name: "sched_switch",
                payload: "prev_comm=a prev_pid=1"
            })
        );
        assert_eq!(
            rest("     262842               sched:sched_stat_runtime: comm=perf pid=1 runtime=262842 [ns]"),
            Some(Rest::Event {
                name: "sched_stat_runtime",
                payload: "comm=perf pid=1 runtime=262842 [ns]"
            })
        );
        assert_eq!(
            rest("    1001001                cpu-clock: "),
            Some(Rest::Event {
                name: "cpu-clock",
                payload: ""
            })
        );
        assert_eq!(
            rest(" PERF_RECORD_LOST lost 18"),
            Some(Rest::Lost(Some(18)))
        );
        assert_eq!(
            rest(" PERF_RECORD_LOST_SAMPLES lost 3"),
            Some(Rest::Lost(Some(3)))
        );
        assert_eq!(rest(" PERF_RECORD_LOST"), Some(Rest::Lost(None)));
        assert_eq!(rest(" PERF_RECORD_FORK(1:1):(0:0)"), Some(Rest::SideBand));
        assert_eq!(rest(" no event here"), None);
        assert_eq!(rest(" sched:sched_switch"), None);
        assert_eq!(rest(""), None);
    }

    #[test]
    fn callchains() {
        assert!(is_callchain_frame(
            "ffffffff810d47be smp_call_function_single ([kernel.kallsyms])"
        ));
        assert!(is_callchain_frame("5716258d4c544155 [unknown] ([unknown])"));
        assert!(!is_callchain_frame("deadbeef"));
        assert!(!is_callchain_frame("cafe is not a frame"));
    }
}
