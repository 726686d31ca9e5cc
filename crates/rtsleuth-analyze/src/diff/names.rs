//! Names that survive a reboot. Pids change between two runs of the same test, so tasks and
//! culprits are matched by what stays: the comm.
//!
//! - A task is its comm, without its own pid when the comm ends with `-pid` or `_pid`
//!   (`worker-4711` of pid 4711 is `worker`; `kworker/0:1` of pid 1 stays whole). Several
//!   tasks of one name in a run (cyclictest's parent and its threads, `cyclictest -t 4`) are
//!   told apart by their order of creation, i.e. of pid: the first keeps the name, the next are
//!   `name#2`, `name#3`... so the thread created second in one run meets the thread created
//!   second in the other.
//! - A culprit written `comm-pid` (explain's task culprits) loses its `-pid`: `fifo_burst-25322`
//!   is `fifo_burst`, and the four `stress-ng-cpu-N` workers of one run add up to one
//!   `stress-ng-cpu`. Interrupts, vectors, softirqs and callbacks have no pid and stay as they are.

/// The task's name without its own pid, when the comm ends with `-pid` or `_pid`.
pub fn task_name(comm: &str, pid: i64) -> &str {
    let digits = pid.to_string();
    comm.strip_suffix(digits.as_str())
        .and_then(|rest| rest.strip_suffix(['-', '_']))
        .filter(|name| pid > 0 && !name.is_empty())
        .unwrap_or(comm)
}

/// A culprit without the pid of a `comm-pid` culprit.
pub fn culprit_name(culprit: &str) -> &str {
    match culprit.rsplit_once('-') {
        Some((comm, pid))
            if !comm.is_empty() && !pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit()) =>
        {
            comm
        }
        _ => culprit,
    }
}

/// Keys for `(name, pid)` tasks of one run, in the given order: equal names numbered by pid.
pub fn number(tasks: &[(&str, i64)]) -> Vec<String> {
    tasks
        .iter()
        .map(|&(name, pid)| {
            let before = tasks.iter().filter(|&&(n, p)| n == name && p < pid).count();
            if before == 0 {
                name.to_string()
            } else {
                format!("{name}#{}", before + 1)
            }
        })
        .collect()
}

/// The name part of a key (`cyclictest#2` -> `cyclictest`), which a gate's task selector matches.
pub fn key_name(key: &str) -> &str {
    match key.rsplit_once('#') {
        Some((name, n)) if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) => name,
        _ => key,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_task_loses_only_its_own_pid() {
        assert_eq!(task_name("worker-4711", 4711), "worker");
        assert_eq!(task_name("worker_4711", 4711), "worker");
        assert_eq!(task_name("worker4711", 4711), "worker4711");
        assert_eq!(task_name("worker-4711", 4712), "worker-4711");
        assert_eq!(task_name("kworker/0:1", 1), "kworker/0:1");
        assert_eq!(task_name("1234", 1234), "1234");
        assert_eq!(task_name("-1234", 1234), "-1234");
        assert_eq!(task_name("cyclictest", 25331), "cyclictest");
    }

    #[test]
    fn a_culprit_loses_a_trailing_pid() {
        assert_eq!(culprit_name("fifo_burst-25322"), "fifo_burst");
        assert_eq!(culprit_name("stress-ng-mlock-12580"), "stress-ng-mlock");
        assert_eq!(culprit_name("kworker/0:1-23"), "kworker/0:1");
        assert_eq!(culprit_name("irq 24 (eth0)"), "irq 24 (eth0)");
        assert_eq!(culprit_name("softirq 1 (TIMER)"), "softirq 1 (TIMER)");
        assert_eq!(culprit_name("irq/24-eth0"), "irq/24-eth0");
        assert_eq!(culprit_name("-12"), "-12");
    }

    #[test]
    fn same_names_are_numbered_in_pid_order() {
        let keys = number(&[
            ("cyclictest", 30),
            ("cyclictest", 12),
            ("ktimer", 5),
            ("cyclictest", 31),
        ]);
        assert_eq!(
            keys,
            ["cyclictest#2", "cyclictest", "ktimer", "cyclictest#3"]
        );
        assert_eq!(key_name("cyclictest#3"), "cyclictest");
        assert_eq!(key_name("cyclictest"), "cyclictest");
        assert_eq!(key_name("a#b"), "a#b");
    }
}
