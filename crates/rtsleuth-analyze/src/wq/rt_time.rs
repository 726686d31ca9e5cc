//! How long real-time tasks held each CPU, as a running total, so the time a work waited behind
//! them is the difference of two readings: no per-work list of who ran meanwhile.

use rtsleuth_trace::event::Timestamp;

/// One CPU's account.
#[derive(Debug, Default, Clone, Copy)]
struct Cpu {
    /// Time real-time tasks ran here, in intervals that have ended.
    total_ns: u64,
    /// When the real-time task running now was switched in.
    since: Option<Timestamp>,
    /// The last real-time task switched in here: (pid, prio).
    last: Option<(i32, i32)>,
}

/// Real-time (kernel prio < 100) run time per CPU, from `sched_switch`. A task already running
/// when the trace starts is unknown until its CPU's first switch, and counts as not real-time.
#[derive(Debug, Default)]
pub struct RtTime {
    cpus: Vec<Cpu>,
}

impl RtTime {
    /// A switch to `next_pid`; a task of unknown prio is not counted as real-time.
    pub fn switch(&mut self, cpu: u32, ts: Timestamp, next_pid: i32, next_prio: Option<i32>) {
        let i = cpu as usize;
        if i >= self.cpus.len() {
            self.cpus.resize(i + 1, Cpu::default());
        }
        let c = &mut self.cpus[i];
        if let Some(since) = c.since.take() {
            c.total_ns = c.total_ns.saturating_add(ts.saturating_sub(since));
        }
        match next_prio {
            Some(prio) if next_pid != 0 && prio < 100 => {
                c.since = Some(ts);
                c.last = Some((next_pid, prio));
            }
            _ => {}
        }
    }

    /// Real-time run time on `cpu` up to `ts`: subtract two readings for an interval.
    pub fn reading(&self, cpu: u32, ts: Timestamp) -> u64 {
        self.cpus.get(cpu as usize).map_or(0, |c| {
            c.total_ns
                .saturating_add(c.since.map_or(0, |s| ts.saturating_sub(s)))
        })
    }

    /// The last real-time task switched in on `cpu`: (pid, prio).
    pub fn last(&self, cpu: u32) -> Option<(i32, i32)> {
        self.cpus.get(cpu as usize).and_then(|c| c.last)
    }

    /// After lost events nobody knows who ran: the open interval is dropped.
    pub fn forget_running(&mut self) {
        self.cpus.iter_mut().for_each(|c| c.since = None);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_only_real_time_intervals() {
        let mut rt = RtTime::default();
        rt.switch(0, 100, 7, Some(9)); // FIFO task in
        rt.switch(0, 400, 8, Some(120)); // normal task in: 300 ns of RT
        rt.switch(0, 500, 7, Some(9)); // RT again
        assert_eq!(rt.reading(0, 450), 300);
        assert_eq!(rt.reading(0, 650), 450);
        assert_eq!(rt.last(0), Some((7, 9)));
        assert_eq!(rt.reading(1, 650), 0);
        rt.forget_running();
        assert_eq!(rt.reading(0, 900), 300);
    }
}
