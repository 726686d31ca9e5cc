//! How a task of one trace is matched with the same task in another.

/// The key a set of traces matches tasks by: the comm with its trailing digits dropped.
/// Pids differ from run to run and are never part of it; per-CPU and per-instance threads
/// (`ksoftirqd/1`, `rcuc/0`, `worker3`) carry their number at the end of the comm, and are
/// matched with their siblings of other traces (and of the same trace) as one task. A comm
/// that is all digits is kept whole.
pub fn task_key(comm: &str) -> &str {
    let stripped = comm.trim_end_matches(|c: char| c.is_ascii_digit());
    if stripped.is_empty() {
        comm
    } else {
        stripped
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trailing_digits_go_and_nothing_else() {
        assert_eq!(task_key("cyclictest"), "cyclictest");
        assert_eq!(task_key("ksoftirqd/1"), "ksoftirqd/");
        assert_eq!(task_key("irq/45-eth0"), "irq/45-eth");
        assert_eq!(task_key("noise_irqs_off/"), "noise_irqs_off/");
        assert_eq!(task_key("1234"), "1234");
    }
}
