//! Who the scheduler must prefer: the order of scheduling classes and priorities, as the kernel
//! prints a task's priority in `sched_switch` (`prio`).
//!
//! A deadline task (printed as a negative prio) runs before any real-time task, a real-time task
//! (0–99, lower runs first) before any normal one, and normal tasks (100 and up: CFS/EEVDF, nice
//! values included) share the CPU by fairness: none outranks another. Waiting behind a task of
//! the same rank is the scheduler's design (`fair_share`), not a fault.

use std::cmp::Ordering;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Rank {
    Normal,
    RealTime(i32),
    Deadline,
}

fn rank(prio: i32) -> Rank {
    match prio {
        ..=-1 => Rank::Deadline,
        0..=99 => Rank::RealTime(prio),
        _ => Rank::Normal,
    }
}

/// How task `a` stands against task `b`: `Greater` when the scheduler must prefer `a`.
pub fn compare(a: i32, b: i32) -> Ordering {
    match (rank(a), rank(b)) {
        (Rank::RealTime(x), Rank::RealTime(y)) => y.cmp(&x),
        (x, y) => level(x).cmp(&level(y)),
    }
}

fn level(r: Rank) -> u8 {
    match r {
        Rank::Normal => 0,
        Rank::RealTime(_) => 1,
        Rank::Deadline => 2,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_then_priorities() {
        assert_eq!(compare(9, 19), Ordering::Greater);
        assert_eq!(compare(19, 19), Ordering::Equal);
        assert_eq!(compare(29, 19), Ordering::Less);
        // Nice values do not rank normal tasks.
        assert_eq!(compare(100, 139), Ordering::Equal);
        assert_eq!(compare(120, 120), Ordering::Equal);
        assert_eq!(compare(98, 120), Ordering::Greater);
        assert_eq!(compare(-1, 0), Ordering::Greater);
        assert_eq!(compare(120, -1), Ordering::Less);
    }
}
