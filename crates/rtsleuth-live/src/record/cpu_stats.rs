//! A CPU's ring-buffer counters from `per_cpu/cpuN/stats`: how many events the buffer
//! overwrote before they were read (`overrun`), how many were dropped because the buffer was
//! full in no-overwrite mode or a writer was interrupted (`dropped events`, `commit overrun`),
//! how many the reader consumed (`read events`).
//!
//! The file counts from the last buffer reset, which the capture does not control, so a
//! capture reports each counter's growth over its own run ([`CpuStats::since`]).

use crate::LiveError;
use serde::Serialize;
use std::path::Path;

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct CpuStats {
    /// Events in the buffer now (a level, not a counter).
    pub entries: u64,
    pub overrun: u64,
    pub commit_overrun: u64,
    /// Bytes in the buffer now (a level).
    pub bytes: u64,
    pub dropped_events: u64,
    pub read_events: u64,
}

impl CpuStats {
    /// Parses the stats text; fields a kernel does not print stay 0.
    pub fn parse(text: &str) -> CpuStats {
        let mut s = CpuStats::default();
        for line in text.lines() {
            let Some((key, value)) = line.split_once(':') else {
                continue;
            };
            let Ok(n) = value.trim().parse::<u64>() else {
                continue;
            };
            match key.trim() {
                "entries" => s.entries = n,
                "overrun" => s.overrun = n,
                "commit overrun" => s.commit_overrun = n,
                "bytes" => s.bytes = n,
                "dropped events" => s.dropped_events = n,
                "read events" => s.read_events = n,
                _ => {}
            }
        }
        s
    }

    /// Reads `<trace_dir>/per_cpu/cpu<cpu>/stats`: the parsed counters and the text as it was.
    pub fn read(trace_dir: &Path, cpu: usize) -> Result<(CpuStats, String), LiveError> {
        let path = trace_dir.join(format!("per_cpu/cpu{cpu}/stats"));
        let text = std::fs::read_to_string(&path).map_err(|e| LiveError::file(&path, e))?;
        Ok((CpuStats::parse(&text), text))
    }

    /// The counters' growth since `before`; the levels as they are now.
    pub fn since(&self, before: &CpuStats) -> CpuStats {
        CpuStats {
            entries: self.entries,
            overrun: self.overrun.saturating_sub(before.overrun),
            commit_overrun: self.commit_overrun.saturating_sub(before.commit_overrun),
            bytes: self.bytes,
            dropped_events: self.dropped_events.saturating_sub(before.dropped_events),
            read_events: self.read_events.saturating_sub(before.read_events),
        }
    }

    /// Events the kernel lost: overwritten plus dropped.
    pub fn lost(&self) -> u64 {
        self.overrun + self.dropped_events
    }
}

#[cfg(test)]
mod tests {
    use super::CpuStats;

    const KERNEL_6_18: &str = "entries: 12\noverrun: 300\ncommit overrun: 1\nbytes: 4096\noldest event ts:  16773.262607\nnow ts: 16773.262607\ndropped events: 7\nread events: 900\n";

    #[test]
    fn every_counter_is_read_and_timestamps_are_ignored() {
        let s = CpuStats::parse(KERNEL_6_18);
        assert_eq!(
            s,
            CpuStats {
                entries: 12,
                overrun: 300,
                commit_overrun: 1,
                bytes: 4096,
                dropped_events: 7,
                read_events: 900,
            }
        );
        assert_eq!(s.lost(), 307);
    }

    #[test]
    fn growth_is_counted_from_the_start_and_levels_are_kept() {
        let before = CpuStats::parse(KERNEL_6_18);
        let after = CpuStats {
            entries: 0,
            overrun: 310,
            read_events: 1000,
            ..before
        };
        let d = after.since(&before);
        assert_eq!(
            (d.entries, d.overrun, d.dropped_events, d.read_events),
            (0, 10, 0, 100)
        );
        // A buffer reset in between (counters fell) is not a negative loss.
        assert_eq!(before.since(&after).overrun, 0);
    }
}
