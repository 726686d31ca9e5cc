//! What one line of function_graph output is: the grammar both format detection
//! ([`crate::input`]) and the function_graph reader ([`crate::read::function_graph`]) use.
//!
//! A call line is `[TIME |] CPU) [TASK-PID |] [DURATION] | <2 + 2*depth spaces>BODY`, where
//! BODY is `func() {` (entry), `func();` (a leaf, timed on the same line), or `}` (an exit,
//! timed, optionally with a `/* func */` tail from `funcgraph-tail` and `= value` from
//! `funcgraph-retval`). Arguments (`funcgraph-args`) sit inside the parentheses. The depth is
//! read from the indentation, which the kernel prints from the task's return-stack depth:
//! it lets a reader that starts in the middle of a call tree match exits to entries.
//!
//! Around the calls: `==========>` / `<==========` where an interrupt starts and ends,
//! `------` banners around ` 0) prev-1 => next-2` when the CPU switches tasks, `/* ... */`
//! comments (trace_printk and events inside the graph), `#` headers, and `[...]` where someone
//! cut lines when pasting.
//!
//! Lines pasted into a report may carry hand-drawn markup in the indentation; [`markup`]
//! says what counts as markup and how the call's column survives it.

mod columns;
mod duration;
mod markup;
mod text;

pub use columns::Task;

use crate::event::Timestamp;
use columns::lead;
use duration::Cell;
use markup::Gutter;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallKind {
    /// `func() {`: no duration yet.
    Entry,
    /// `}`: the duration of the call it closes.
    Exit,
    /// `func();`: a call with no traced children, with its duration.
    Leaf,
}

/// One call record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Call<'a> {
    pub kind: CallKind,
    /// The function; for an exit only when a `/* func */` tail names it.
    pub name: Option<&'a str>,
    /// Nesting depth from the indentation (0 = outermost traced call).
    pub depth: u32,
    pub cpu: u32,
    pub task: Option<Task<'a>>,
    /// Absolute time (`funcgraph-abstime`), when printed.
    pub ts: Option<Timestamp>,
    /// Exits and leaves; `None` when the duration column is off (`funcgraph -D`).
    pub duration_ns: Option<u64>,
    /// Hand-drawn markup stood before the call text and was skipped (see [`markup`]).
    pub marked: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GraphLine<'a> {
    Call(Call<'a>),
    /// ` 0)  prev-1  =>  next-2`: the CPU now runs `to`.
    Switch {
        cpu: u32,
        from: Task<'a>,
        to: Task<'a>,
    },
    /// `==========>` or `<==========`.
    IrqMarker,
    /// `#` headers, `------` banner rules, `/* ... */` comments inside the graph.
    Comment,
    /// Hand-drawn markup with no call: a bar carried on between calls, an arrow and its note,
    /// a comment drawn over.
    Drawing,
    /// `[...]` or `...`.
    Elided,
    Blank,
    Unparsed,
}

/// True when `line` is unmistakably a timed function_graph call (format detection).
pub fn is_graph_line(line: &str) -> bool {
    line.contains('|') && matches!(parse_line(line), GraphLine::Call(_) | GraphLine::IrqMarker)
}

/// Classifies one line (without its newline).
pub fn parse_line(line: &str) -> GraphLine<'_> {
    // Nearly every line starts with its TIME or CPU: a digit can start none of the others.
    if text::trim_start(line)
        .as_bytes()
        .first()
        .is_some_and(u8::is_ascii_digit)
    {
        return call_line(line);
    }
    let trimmed = text::trim(line);
    if trimmed.is_empty() {
        return GraphLine::Blank;
    }
    if trimmed.starts_with('#') || (trimmed.len() >= 10 && trimmed.bytes().all(|b| b == b'-')) {
        return GraphLine::Comment;
    }
    if trimmed == "[...]" || trimmed == "..." {
        return GraphLine::Elided;
    }
    call_line(line)
}

/// A line that is a call, an IRQ marker or a task switch, or else unparsed.
fn call_line(line: &str) -> GraphLine<'_> {
    lead(line)
        .and_then(|l| after_cpu(l.cpu, l.ts, l.rest))
        .unwrap_or(GraphLine::Unparsed)
}

/// How many cells (TASK/PID, a latency-format flags column) may come before the duration.
const MAX_LEADING_CELLS: usize = 2;

fn after_cpu<'a>(cpu: u32, ts: Option<Timestamp>, mut rest: &'a str) -> Option<GraphLine<'a>> {
    let mut task = None;
    for _ in 0..=MAX_LEADING_CELLS {
        let Some(bar) = text::find(rest, b'|') else {
            return no_duration_column(cpu, ts, task, rest);
        };
        let cell = &rest[..bar];
        // A duration cell holds no `=`, so it is tried first: most cells are durations.
        if let Some(c) = duration::parse(cell) {
            let duration_ns = match c {
                Cell::Ns(ns) => Some(ns),
                Cell::Blank => None,
            };
            return body(&rest[bar + 1..], 2, cpu, ts, task, duration_ns);
        }
        if cell.contains("==========>") || cell.contains("<==========") {
            return Some(GraphLine::IrqMarker);
        }
        let t = text::trim(cell);
        if text::has_space(t) {
            return None;
        }
        if task.is_none() {
            task = Task::parse(t);
        }
        rest = &rest[bar + 1..];
    }
    None
}

/// A line with no `|` after the CPU: a task-switch banner, an IRQ marker or a call printed
/// without the duration column (then the body starts one space after the `)`).
fn no_duration_column<'a>(
    cpu: u32,
    ts: Option<Timestamp>,
    task: Option<Task<'a>>,
    rest: &'a str,
) -> Option<GraphLine<'a>> {
    if matches!(text::trim(rest), "==========>" | "<==========") {
        return Some(GraphLine::IrqMarker);
    }
    if let Some((from, to)) = rest.split_once("=>") {
        let (from, to) = (Task::parse(from)?, Task::parse(to)?);
        return Some(GraphLine::Switch { cpu, from, to });
    }
    body(rest, 1, cpu, ts, task, None)
}

/// Reads the indentation and the call after the duration's `|` (or the CPU's `)`), skipping
/// hand-drawn markup. `base` is the indentation of depth 0.
fn body<'a>(
    after: &'a str,
    base: usize,
    cpu: u32,
    ts: Option<Timestamp>,
    task: Option<Task<'a>>,
    duration_ns: Option<u64>,
) -> Option<GraphLine<'a>> {
    let found = match markup::split(after) {
        Gutter::Call(found) => found,
        Gutter::Comment => return Some(GraphLine::Comment),
        // A drawing shares a line with no duration, as an entry does.
        Gutter::Drawing if duration_ns.is_none() => return Some(GraphLine::Drawing),
        Gutter::Drawing | Gutter::Neither => return None,
    };
    let depth = (found.column.saturating_sub(base) / 2) as u32;
    let content = found.text;
    let call = |kind, name| {
        Some(GraphLine::Call(Call {
            kind,
            name,
            depth,
            cpu,
            task,
            ts,
            duration_ns,
            marked: found.marked,
        }))
    };
    if let Some(tail) = content.strip_prefix('}') {
        return call(CallKind::Exit, tail_name(tail));
    }
    let name = found.name?;
    // A `/* = retval */` after a leaf is not part of its shape.
    let shape = match content
        .ends_with("*/")
        .then(|| content.rfind("/*"))
        .flatten()
    {
        Some(c) => text::trim_end(&content[..c]),
        None => content,
    };
    if shape.ends_with('{') {
        call(CallKind::Entry, Some(name))
    } else if shape.ends_with(';') {
        call(CallKind::Leaf, Some(name))
    } else {
        None
    }
}

/// The function an exit's `/* func */` tail names: ` /* schedule */`,
/// ` /* kmem_cache_free() */`, ` /* cgroup_migrate = -22 */` (with `funcgraph-retval`).
fn tail_name(tail: &str) -> Option<&str> {
    let inner = tail.trim().strip_prefix("/*")?.strip_suffix("*/")?;
    let name = inner.split('=').next()?.trim();
    let name = name.strip_suffix("()").unwrap_or(name);
    (!name.is_empty()).then_some(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(line: &str) -> Call<'_> {
        match parse_line(line) {
            GraphLine::Call(c) => c,
            other => panic!("{line:?} is {other:?}"),
        }
    }

    #[test]
    fn entries_leaves_exits() {
        let c = call(" 0)               |    do_sys_open() {");
        assert_eq!(
            (c.kind, c.name, c.depth, c.duration_ns),
            (CallKind::Entry, Some("do_sys_open"), 1, None)
        );
        let c = call(" 0)   0.668 us    |        _spin_lock();");
        assert_eq!(
            (c.kind, c.name, c.depth, c.duration_ns),
            (CallKind::Leaf, Some("_spin_lock"), 3, Some(668))
        );
        let c = call("3) * 33998.59 us |  } /* schedule_preempt_disabled */");
        assert_eq!(
            (c.kind, c.name, c.depth, c.cpu),
            (CallKind::Exit, Some("schedule_preempt_disabled"), 0, 3)
        );
        assert_eq!(c.duration_ns, Some(33_998_590));
        let c = call("1)   2.861 us    |      } /* putname() */");
        assert_eq!(c.name, Some("putname"));
        assert_eq!(call(" 0)   0.990 us    |            }").name, None);
    }

    #[test]
    fn retval_args_task_and_time() {
        let c =
            call("1)   0.651 us    |      cgroup_migrate_add_task(); /* = 0xffff93fcfd346c00 */");
        assert_eq!(
            (c.kind, c.name),
            (CallKind::Leaf, Some("cgroup_migrate_add_task"))
        );
        let c = call("1)   2.335 us    |        } /* cpu_cgroup_can_attach = -22 */");
        assert_eq!((c.name, c.depth), (Some("cpu_cgroup_can_attach"), 3));
        let c = call(" 1)               |  do_open(dfd=0xffffff9c, name=0xffff88810a5b8000) {");
        assert_eq!((c.kind, c.name), (CallKind::Entry, Some("do_open")));
        let c = call(
            "0)    sh-4802     |   0.616 us    |                        rcu_process_gp_end();",
        );
        assert_eq!(
            c.task,
            Some(Task {
                comm: "sh",
                pid: 4802
            })
        );
        assert_eq!(c.depth, 11);
        let c =
            call("2678112.003180 |   0)  cksum-26695   | ! 8145.268 us |  } /* ext3_readpages */");
        assert_eq!(
            (c.ts, c.task.map(|t| t.pid)),
            (Some(2_678_112_003_180_000), Some(26695))
        );
        assert_eq!(
            (c.name, c.duration_ns),
            (Some("ext3_readpages"), Some(8_145_268))
        );
    }

    /// A module's functions, as the lab's function_graph of the noise module's timer shows them.
    #[test]
    fn module_functions() {
        let c =
            call("   19.951459 |   1)               |        hardirq_fire [rtsleuth_noise]() {");
        assert_eq!(
            (c.kind, c.name, c.depth),
            (CallKind::Entry, Some("hardirq_fire [rtsleuth_noise]"), 3)
        );
        let c = call(" 1)   1.703 us    |    noise_stop [rtsleuth_noise]();");
        assert_eq!(
            (c.kind, c.name, c.duration_ns),
            (
                CallKind::Leaf,
                Some("noise_stop [rtsleuth_noise]"),
                Some(1703)
            )
        );
        let c = call(" 1) * 30001.00 us |  } /* hardirq_fire [rtsleuth_noise] */");
        assert_eq!(c.name, Some("hardirq_fire [rtsleuth_noise]"));
        for line in [
            " 1)               |  f [m]x() {",
            " 1)               |  f [a b]() {",
        ] {
            assert_eq!(parse_line(line), GraphLine::Unparsed, "{line}");
        }
    }

    #[test]
    fn no_duration_column() {
        let c = call(" 1)     getname_flags();");
        assert_eq!((c.kind, c.depth, c.duration_ns), (CallKind::Leaf, 2, None));
        assert_eq!(call(" 1) }").kind, CallKind::Exit);
    }

    #[test]
    fn around_the_calls() {
        assert_eq!(
            parse_line(" 0)  platfor-3210  =>  vmstat-2854  "),
            GraphLine::Switch {
                cpu: 0,
                from: Task {
                    comm: "platfor",
                    pid: 3210
                },
                to: Task {
                    comm: "vmstat",
                    pid: 2854
                }
            }
        );
        assert_eq!(parse_line(" 1)   ==========> |"), GraphLine::IrqMarker);
        assert_eq!(parse_line(" 1)   <========== |"), GraphLine::IrqMarker);
        assert_eq!(
            parse_line(" ------------------------------------------"),
            GraphLine::Comment
        );
        assert_eq!(
            parse_line("1)               |                /* I'm a comment! */"),
            GraphLine::Comment
        );
        assert_eq!(
            parse_line("# CPU  DURATION                  FUNCTION CALLS"),
            GraphLine::Comment
        );
        assert_eq!(parse_line("[...]"), GraphLine::Elided);
        assert_eq!(parse_line("   "), GraphLine::Blank);
    }

    /// (kind, name, depth, duration, marked) of a call line.
    fn shape(line: &str) -> (CallKind, Option<&str>, u32, Option<u64>, bool) {
        let c = call(line);
        (c.kind, c.name, c.depth, c.duration_ns, c.marked)
    }

    /// Each form of markup drawn over a clean line's indentation leaves the call as it was,
    /// flagged as marked.
    #[test]
    fn markup_over_the_indentation() {
        for (marked, clean) in [
            (
                " 0)   0.210 us    |      +---->ktime_get();",
                " 0)   0.210 us    |            ktime_get();",
            ),
            (
                " 0)   7.512 us    |    +---->}",
                " 0)   7.512 us    |          }",
            ),
            (
                " 0)               | | |     hrtimer_forward() {",
                " 0)               |         hrtimer_forward() {",
            ),
            (
                " 0)   0.105 us    |  | additional part      preempt_count_sub();",
                " 0)   0.105 us    |                         preempt_count_sub();",
            ),
            (
                " 0)               |   (~7.5us)   |       _raw_spin_lock() {",
                " 0)               |                      _raw_spin_lock() {",
            ),
            (
                " 0)   2.340 us    |  <--- re-armed } /* hrtimer_start_range_ns */",
                " 0)   2.340 us    |                } /* hrtimer_start_range_ns */",
            ),
            (
                "  120.000001 |   1)   sh-42   |   0.333 us    | * ^ (x)   f.isra.0();",
                "  120.000001 |   1)   sh-42   |   0.333 us    |           f.isra.0();",
            ),
            (" 1) -->   f();", " 1)       f();"),
        ] {
            let (m, c) = (shape(marked), shape(clean));
            assert_eq!((m.0, m.1, m.2, m.3), (c.0, c.1, c.2, c.3), "{marked}");
            assert_eq!((m.4, c.4), (true, false), "{marked}");
        }
        assert_eq!(
            shape(" 0)   0.210 us    |              +---->ktime_get();"),
            (CallKind::Leaf, Some("ktime_get"), 9, Some(210), true)
        );
    }

    /// Names with underscores and dots, exits with their tail and arguments are call text,
    /// not markup.
    #[test]
    fn symbols_are_not_markup() {
        assert_eq!(
            shape(" 2)   1.020 us    |    __x64_sys_nanosleep();"),
            (
                CallKind::Leaf,
                Some("__x64_sys_nanosleep"),
                1,
                Some(1020),
                false
            )
        );
        assert_eq!(
            shape(" 2)               |  foo.isra.0() {"),
            (CallKind::Entry, Some("foo.isra.0"), 0, None, false)
        );
        assert_eq!(
            shape(" 2)   7.100 us    |  } /* hrtimer_interrupt */"),
            (
                CallKind::Exit,
                Some("hrtimer_interrupt"),
                0,
                Some(7100),
                false
            )
        );
        assert!(
            !call(" 1)               |  do_open(dfd=0xffffff9c, name=0xffff88810a5b8000) {").marked
        );
    }

    #[test]
    fn drawings_and_markers() {
        assert_eq!(parse_line(" 0)               |     |"), GraphLine::Drawing);
        assert_eq!(
            parse_line(" 0)               |     ^---- the extra part"),
            GraphLine::Drawing
        );
        // A drawing has no duration of its own; with one, the line is damaged.
        assert_eq!(parse_line(" 0)   0.210 us    |     |"), GraphLine::Unparsed);
        // Markers and comments are the kernel's, in every column layout.
        assert_eq!(parse_line(" 1) ==========>"), GraphLine::IrqMarker);
        assert_eq!(
            parse_line(" 1)  sh-42  | <=========="),
            GraphLine::IrqMarker
        );
        assert_eq!(
            parse_line(" 1)               |      /* sched_switch: prev=a next=b */"),
            GraphLine::Comment
        );
    }

    #[test]
    fn prose_and_damage_are_unparsed() {
        for line in [
            "Demonstrations of funcgraph, the Linux ftrace version.",
            "Tracing \"do_nanosleep\"... Ctrl-C to end.",
            " 0)   0.668 us    |        _spin_lo",
            " 0)   0.668 us    |",
            " 0)   0.6x8 us    |   f();",
            "^C",
        ] {
            assert_eq!(parse_line(line), GraphLine::Unparsed, "{line}");
        }
    }
}
