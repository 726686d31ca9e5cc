//! The referee's own definitions: priority ranks, the rhythm rule of `period`, and what an
//! interrupt culprit names.

/// How the scheduler ranks a task, from the priority the kernel prints: deadline (prio < 0)
/// above real-time (0..=99, lower number first) above normal (>= 100; CFS/EEVDF tasks form one
/// rank whatever their nice value). Smaller is stronger.
pub fn rank(prio: i32) -> (u8, i32) {
    match prio {
        p if p < 0 => (0, 0),
        p if p <= 99 => (1, p),
        _ => (2, 0),
    }
}

pub fn outranks(a: i32, b: i32) -> bool {
    rank(a) < rank(b)
}

/// The relation a task-culprit kind claims between the culprit (`x`) and the victim (`p`).
pub fn relation_holds(kind: &str, x: i32, p: i32) -> bool {
    match kind {
        "higher_priority" => outranks(x, p),
        "fair_share" => rank(x) == rank(p),
        "preempt_off" => outranks(p, x),
        _ => true,
    }
}

/// Whether an event is emitted with interrupts off whatever the task does (rule E4 of issue
/// 23), so its `d` flag proves nothing: the scheduler's, timer and hrtimer bookkeeping,
/// queued work, softirq raises, and anything in interrupt context (`hard`, `soft`; the x86
/// irq_vectors events are flagged hard-IRQ).
pub fn irqs_off_by_construction(name: &str, hard: bool, soft: bool) -> bool {
    let exact = [
        "sched_switch",
        "sched_waking",
        "sched_wakeup",
        "sched_wakeup_new",
        "sched_migrate_task",
        "sched_pi_setprio",
        "hrtimer_start",
        "hrtimer_cancel",
        "hrtimer_init",
        "timer_start",
        "timer_cancel",
        "timer_init",
        "workqueue_queue_work",
        "workqueue_activate_work",
        "softirq_raise",
    ];
    let interrupt = [
        "irq_",
        "softirq_",
        "local_timer_",
        "timer_expire_",
        "hrtimer_expire_",
    ];
    hard || soft
        || exact.contains(&name)
        || name.starts_with("sched_stat_")
        || interrupt.iter().any(|p| name.starts_with(p))
}

/// How many wake-ups the rhythm rule looks at: the one judged and the nine before it.
pub const RHYTHM_WAKEUPS: usize = 10;

/// The median of the intervals: for an even count the upper median (of eight intervals the
/// fifth smallest), as the engine's `period.rs` states its rule.
pub fn median(intervals: &[u64]) -> u64 {
    let mut s = intervals.to_vec();
    s.sort_unstable();
    s[s.len() / 2]
}

/// The rhythm rule, independently: `w` holds the starts of the task's last ten wake-ups, the
/// one judged last (w_{k-9}..w_k). Returns the period and the due time it proves, or why the
/// history proves none.
pub fn period_due(w: &[u64]) -> Result<(u64, u64), String> {
    if w.len() < RHYTHM_WAKEUPS {
        return Err(format!(
            "only {} wake-ups of the task so far (the rule needs {RHYTHM_WAKEUPS})",
            w.len()
        ));
    }
    let w = &w[w.len() - RHYTHM_WAKEUPS..];
    let k = RHYTHM_WAKEUPS - 1;
    let intervals: Vec<u64> = w[..k]
        .windows(2)
        .map(|p| p[1].saturating_sub(p[0]))
        .collect();
    let m = median(&intervals);
    if m == 0 {
        return Err("median interval is zero".into());
    }
    if let Some(bad) = intervals
        .iter()
        .find(|&&i| i.abs_diff(m).saturating_mul(20) > m)
    {
        return Err(format!(
            "irregular history: interval {bad} ns is more than 5% from the median {m} ns (intervals {intervals:?})"
        ));
    }
    let Some(gap) = w[k].checked_sub(w[k - 1]) else {
        return Err("this wake-up starts before the previous one (events out of order)".into());
    };
    if gap.saturating_mul(2) > m.saturating_mul(3) {
        return Err(format!(
            "this wake-up came {gap} ns after the previous one, more than 1.5 periods ({m} ns)"
        ));
    }
    let projected = (0..k)
        .map(|j| w[j].saturating_add((k - j) as u64 * m))
        .min()
        .unwrap();
    let due = w[k].saturating_sub(m).max(projected).min(w[k]);
    Ok((m, due))
}

/// What an interrupt stretch's culprit string says about the frame that must be open.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IrqCulprit {
    Any,
    Irq(u32),
    Vector { vector: Option<u32>, name: String },
    Softirq(u32),
    Callback(String),
}

/// Reads the culprit strings of interrupt kinds: `irq 24 (eth0)`, `vector 236 (local_timer)`,
/// `vector (local_timer)`, `softirq 1 (TIMER)`, anything else an hrtimer callback function.
pub fn irq_culprit(c: Option<&str>) -> IrqCulprit {
    let Some(c) = c else {
        return IrqCulprit::Any;
    };
    let paren = |rest: &str| -> Option<String> {
        let rest = rest.trim();
        rest.strip_prefix('(')?
            .strip_suffix(')')
            .map(str::to_string)
    };
    if let Some(rest) = c.strip_prefix("irq ") {
        if let Some((n, _)) = rest.split_once(' ') {
            if let Ok(n) = n.parse() {
                return IrqCulprit::Irq(n);
            }
        }
    }
    if let Some(rest) = c.strip_prefix("softirq ") {
        if let Some((n, _)) = rest.split_once(' ') {
            if let Ok(n) = n.parse() {
                return IrqCulprit::Softirq(n);
            }
        }
    }
    if let Some(rest) = c.strip_prefix("vector ") {
        if let Some(name) = rest.strip_prefix('(').and_then(|r| r.strip_suffix(')')) {
            return IrqCulprit::Vector {
                vector: None,
                name: name.to_string(),
            };
        }
        if let Some((n, name)) = rest.split_once(' ') {
            if let (Ok(n), Some(name)) = (n.parse(), paren(name)) {
                return IrqCulprit::Vector {
                    vector: Some(n),
                    name,
                };
            }
        }
    }
    IrqCulprit::Callback(c.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranks() {
        assert!(outranks(-1, 0) && outranks(0, 99) && outranks(9, 19) && outranks(99, 100));
        assert!(!outranks(100, 139) && !outranks(139, 100) && rank(100) == rank(139));
        assert!(relation_holds("fair_share", 120, 100));
        assert!(relation_holds("preempt_off", 120, 19));
        assert!(!relation_holds("higher_priority", 120, 19));
    }

    #[test]
    fn rhythm() {
        let w: Vec<u64> = (0..10)
            .map(|n| 1_000_000 * n + if n == 9 { 300_000 } else { 5_000 })
            .collect();
        assert_eq!(period_due(&w), Ok((1_000_000, 9_005_000)));
        let mut irregular = w.clone();
        irregular[4] += 200_000;
        assert!(period_due(&irregular).is_err());
        assert!(period_due(&w[1..]).is_err());
    }

    #[test]
    fn culprits() {
        assert_eq!(irq_culprit(Some("irq 24 (eth0)")), IrqCulprit::Irq(24));
        assert_eq!(
            irq_culprit(Some("softirq 1 (TIMER)")),
            IrqCulprit::Softirq(1)
        );
        assert_eq!(
            irq_culprit(Some("vector 236 (local_timer)")),
            IrqCulprit::Vector {
                vector: Some(236),
                name: "local_timer".into()
            }
        );
        assert_eq!(
            irq_culprit(Some("vector (reschedule)")),
            IrqCulprit::Vector {
                vector: None,
                name: "reschedule".into()
            }
        );
        assert_eq!(
            irq_culprit(Some("timer_callback [irq_noise]")),
            IrqCulprit::Callback("timer_callback [irq_noise]".into())
        );
    }
}
