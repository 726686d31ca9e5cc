//! The comment lines a latency tracer prints above its entries: the summary line
//! (`# latency: 259 us, #4/4, CPU#2 | (M:preempt VP:0, KP:0, SP:0 HP:0 #P:4)`), the task line
//! (`#    | task: ps-6143 (uid:0 nice:0 policy:0 rt_prio:0)`) and where the section started and
//! ended (`#  => started at: __lock_task_sighand`).

use crate::event::MAX_CPUS;

/// The `# latency:` line: how long the worst section lasted and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Summary {
    /// The section's length as the tracer measured it, whole microseconds.
    pub latency_us: u64,
    /// `#4/4`: entries printed of entries recorded during the section.
    pub entries_shown: u64,
    pub entries_total: u64,
    pub cpu: u32,
    /// The preemption model (`preempt`, `desktop`, `PREEMPT(none)`…).
    pub model: Option<String>,
    /// `#P:4`: CPUs in the system.
    pub nr_cpus: Option<u32>,
}

impl Summary {
    /// Parses the text after `# `; `None` if it is not a well-formed summary line.
    pub fn parse(comment: &str) -> Option<Summary> {
        let rest = comment.strip_prefix("latency:")?.trim_start();
        let (us, rest) = rest.split_once(" us,")?;
        let rest = rest.trim_start().strip_prefix('#')?;
        let (counts, rest) = rest.split_once(',')?;
        let (shown, total) = counts.split_once('/')?;
        let rest = rest.trim_start().strip_prefix("CPU#")?;
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        let cpu = rest[..digits].parse().ok().filter(|&c| c < MAX_CPUS)?;
        let tail = &rest[digits..];
        let model = tail.split_once("(M:").and_then(|(_, m)| {
            let end = m.find(" VP:").or_else(|| m.find(' '))?;
            Some(m[..end].to_string())
        });
        let nr_cpus = tail
            .split_once("#P:")
            .and_then(|(_, p)| p.trim_end().trim_end_matches(')').trim().parse().ok());
        Some(Summary {
            latency_us: us.trim().parse().ok()?,
            entries_shown: shown.trim().parse().ok()?,
            entries_total: total.trim().parse().ok()?,
            cpu,
            model,
            nr_cpus,
        })
    }
}

/// The task the section was caught in (for the wake-up tracers, the task that was woken).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Task {
    pub comm: String,
    pub pid: i32,
    pub nice: Option<i32>,
    /// The scheduling policy number (0 other, 1 FIFO, 2 RR, 6 deadline).
    pub policy: Option<u32>,
    pub rt_prio: Option<u32>,
}

impl Task {
    /// Parses the text after `# ` of `| task: comm-pid (uid:0 nice:0 policy:0 rt_prio:0)`.
    pub fn parse(comment: &str) -> Option<Task> {
        let rest = comment
            .strip_prefix('|')?
            .trim_start()
            .strip_prefix("task:")?;
        let (name, attrs) = rest.split_once(" (").unwrap_or((rest, ""));
        // Comms may hold dashes (`kworker/3:1H-312`): the pid follows the last one.
        let (comm, pid) = name.trim().rsplit_once('-')?;
        let attr = |key: &str| -> Option<&str> {
            attrs
                .trim_end_matches(')')
                .split_whitespace()
                .find_map(|kv| kv.strip_prefix(key)?.strip_prefix(':'))
        };
        Some(Task {
            comm: comm.to_string(),
            pid: pid.parse().ok()?,
            nice: attr("nice").and_then(|v| v.parse().ok()),
            policy: attr("policy").and_then(|v| v.parse().ok()),
            rt_prio: attr("rt_prio").and_then(|v| v.parse().ok()),
        })
    }
}

/// `=> started at: func` or `=> ended at: func`, from the text after `# `.
pub fn section_end<'a>(comment: &'a str, which: &str) -> Option<&'a str> {
    let rest = comment
        .strip_prefix("=>")?
        .trim_start()
        .strip_prefix(which)?;
    let func = rest.trim_start().strip_prefix("at:")?.trim();
    (!func.is_empty()).then_some(func)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_lines_old_and_new() {
        assert_eq!(
            Summary::parse("latency: 259 us, #4/4, CPU#2 | (M:preempt VP:0, KP:0, SP:0 HP:0 #P:4)"),
            Some(Summary {
                latency_us: 259,
                entries_shown: 4,
                entries_total: 4,
                cpu: 2,
                model: Some("preempt".into()),
                nr_cpus: Some(4),
            })
        );
        let s = Summary::parse(
            "latency: 0 us, #8794/8794, CPU#0 | (M:PREEMPT(none) VP:0, KP:0, SP:0 HP:0 #P:2)",
        )
        .unwrap();
        assert_eq!(
            (s.entries_total, s.model.as_deref()),
            (8794, Some("PREEMPT(none)"))
        );
        assert_eq!(Summary::parse("latency: many us, #4/4, CPU#2"), None);
        assert_eq!(
            Summary::parse("latency: 9 us, #4/4, CPU#8192 | (#P:4)"),
            None
        );
        assert_eq!(Summary::parse("latency: 259 us, #4/4"), None);
    }

    #[test]
    fn task_line_with_dashes_in_the_comm() {
        let t =
            Task::parse("| task: kworker/3:1H-312 (uid:0 nice:-20 policy:0 rt_prio:0)").unwrap();
        assert_eq!(
            (t.comm.as_str(), t.pid, t.nice),
            ("kworker/3:1H", 312, Some(-20))
        );
        let t = Task::parse("| task: sleep-2389 (uid:0 nice:0 policy:1 rt_prio:5)").unwrap();
        assert_eq!((t.policy, t.rt_prio), (Some(1), Some(5)));
        assert_eq!(Task::parse("| task: nopid (uid:0)"), None);
    }

    #[test]
    fn started_and_ended() {
        assert_eq!(
            section_end("=> started at: __lock_task_sighand", "started"),
            Some("__lock_task_sighand")
        );
        assert_eq!(
            section_end("=> ended at:   _raw_spin_unlock_irqrestore", "ended"),
            Some("_raw_spin_unlock_irqrestore")
        );
        assert_eq!(section_end("=> ended at:", "ended"), None);
    }
}
