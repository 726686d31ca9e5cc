//! `prev_state` of `sched_switch`: why the previous task left the CPU.

use serde::Serialize;

/// The state a task was in when it was switched out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskState {
    /// `R`: still runnable, so it did not block.
    Runnable,
    /// `R+`: preempted while runnable.
    Preempted,
    /// `S`: waiting for an event.
    Sleeping,
    /// `D`: uninterruptible wait (I/O, a lock).
    Uninterruptible,
    /// `I`: an idle kernel thread waiting.
    Idle,
    /// `T`/`t`: stopped or traced.
    Stopped,
    /// `X`/`Z`/`x`: exiting or dead.
    Dead,
    /// `P`: a parked kthread.
    Parked,
    Unknown,
}

impl TaskState {
    /// True when the task still wants the CPU, i.e. it was preempted rather than blocking.
    pub fn is_runnable(self) -> bool {
        matches!(self, TaskState::Runnable | TaskState::Preempted)
    }

    /// Decodes the letters the kernel prints (`R`, `R+`, `S`, `D|K`, `I`…) or, in
    /// `trace-cmd report -R` raw form, the number. Raw numbers are kernel-version specific: the
    /// low bits (1 = S, 2 = D, 4 = T, 8 = t, 16/32 = X/Z) are stable; a value
    /// that is exactly a kernel's "preempted" marker (TASK_REPORT_MAX / TASK_STATE_MAX) is R+.
    pub fn parse(s: &str) -> TaskState {
        let s = s.trim();
        if let Ok(n) = s.parse::<u64>() {
            return Self::from_raw(n);
        }
        let mut chars = s.chars();
        match chars.next() {
            Some('R') if s.contains('+') => TaskState::Preempted,
            Some('R') => TaskState::Runnable,
            Some('S') => TaskState::Sleeping,
            Some('D') => TaskState::Uninterruptible,
            Some('I') => TaskState::Idle,
            Some('T') | Some('t') => TaskState::Stopped,
            Some('X') | Some('Z') | Some('x') => TaskState::Dead,
            Some('P') => TaskState::Parked,
            _ => TaskState::Unknown,
        }
    }

    /// Decodes the number binary traces (Perfetto, `trace.dat`) store for kernels 4.14 and
    /// later: one bit per state from 0x1 (S) to 0x80 (I), the lowest set bit being the letter
    /// the kernel prints first, and 0x100 (TASK_REPORT_MAX) for "preempted while runnable".
    pub fn from_report_bits(n: u64) -> TaskState {
        match n & 0xff {
            0 if n & 0x100 != 0 => TaskState::Preempted,
            0 => TaskState::Runnable,
            low => match low.trailing_zeros() {
                0 => TaskState::Sleeping,
                1 => TaskState::Uninterruptible,
                2 | 3 => TaskState::Stopped,
                4 | 5 => TaskState::Dead,
                6 => TaskState::Parked,
                _ => TaskState::Idle,
            },
        }
    }

    /// The bits [`TaskState::from_report_bits`] reads back as this state, for writing a binary
    /// trace. `Unknown` has none: no bit pattern means "not known".
    pub fn to_report_bits(self) -> Option<u64> {
        Some(match self {
            TaskState::Runnable => 0,
            TaskState::Preempted => 0x100,
            TaskState::Sleeping => 0x1,
            TaskState::Uninterruptible => 0x2,
            TaskState::Stopped => 0x4,
            TaskState::Dead => 0x10,
            TaskState::Parked => 0x40,
            TaskState::Idle => 0x80,
            TaskState::Unknown => return None,
        })
    }

    /// The raw `prev_state` number (see [`TaskState::parse`]).
    pub fn from_raw(n: u64) -> TaskState {
        match n {
            0 => TaskState::Runnable,
            n if n & 1 != 0 => TaskState::Sleeping,
            n if n & 2 != 0 => TaskState::Uninterruptible,
            n if n & 0xc != 0 => TaskState::Stopped,
            n if n & 0x30 != 0 => TaskState::Dead,
            // TASK_REPORT_MAX (4.14 on), TASK_STATE_MAX before: alone, never with a state bit.
            0x100 | 0x400 | 0x800 | 0x1000 => TaskState::Preempted,
            _ => TaskState::Unknown,
        }
    }

    /// The kernel's letter for this state.
    pub fn letter(self) -> &'static str {
        match self {
            TaskState::Runnable => "R",
            TaskState::Preempted => "R+",
            TaskState::Sleeping => "S",
            TaskState::Uninterruptible => "D",
            TaskState::Idle => "I",
            TaskState::Stopped => "T",
            TaskState::Dead => "X",
            TaskState::Parked => "P",
            TaskState::Unknown => "?",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::TaskState::*;
    use super::*;

    #[test]
    fn letters() {
        assert_eq!(TaskState::parse("R+"), Preempted);
        assert_eq!(TaskState::parse("R"), Runnable);
        assert_eq!(TaskState::parse("S"), Sleeping);
        assert_eq!(TaskState::parse("D|K"), Uninterruptible);
        assert_eq!(TaskState::parse("I"), Idle);
        assert_eq!(TaskState::parse("Z"), Dead);
        assert_eq!(TaskState::parse("?"), Unknown);
    }

    #[test]
    fn raw_numbers_from_trace_cmd_report_r() {
        assert_eq!(TaskState::parse("0"), Runnable);
        assert_eq!(TaskState::parse("1"), Sleeping);
        assert_eq!(TaskState::parse("2"), Uninterruptible);
        assert_eq!(TaskState::parse("1024"), Preempted);
        assert_eq!(TaskState::parse("4096"), Preempted);
        assert_eq!(TaskState::parse("64"), Unknown);
        // TASK_PARKED of 3.x-4.13, not a preempted marker.
        assert_eq!(TaskState::parse("512"), Unknown);
    }

    #[test]
    fn report_bits_read_back_as_the_state() {
        for s in [
            Runnable,
            Preempted,
            Sleeping,
            Uninterruptible,
            Stopped,
            Dead,
            Parked,
            Idle,
        ] {
            assert_eq!(TaskState::from_report_bits(s.to_report_bits().unwrap()), s);
        }
        assert_eq!(Unknown.to_report_bits(), None);
    }

    #[test]
    fn report_bits() {
        let states: Vec<TaskState> = [0, 1, 2, 4, 8, 0x10, 0x20, 0x40, 0x80, 0x100, 0x101, 0x82]
            .into_iter()
            .map(TaskState::from_report_bits)
            .collect();
        assert_eq!(
            states,
            [
                Runnable,
                Sleeping,
                Uninterruptible,
                Stopped,
                Stopped,
                Dead,
                Dead,
                Parked,
                Idle,
                Preempted,
                Sleeping,
                Uninterruptible
            ]
        );
    }
}
