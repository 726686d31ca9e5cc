//! A tracepoint sample turned into an [`Event`]: the raw record (`PERF_SAMPLE_RAW`) is the
//! same record ftrace keeps, decoded with the file's event formats; the time, CPU and task
//! are the sample's own, as `perf script` prints them.
//!
//! The flags come from the record's `common_flags` and `common_preempt_count`, which perf fills
//! as ftrace does (irqs off, hard/soft IRQ, NMI, need-resched are the same bits), but perf does
//! not take off the one preemption level the tracepoint itself holds, as ftrace does on
//! preemptible kernels: the preempt depth of an event can read one higher than in a trace.dat
//! of the same kernel (every sched_switch: depth 3 in `perf_data_hog`, 2 in
//! `recorded/variants/trace.dat`, another build of the same 6.18 kernel). No analysis uses
//! the depth.

use super::threads::Threads;
use crate::event::MAX_CPUS;
use crate::read::tracedat::{RecordDecoder, Task};
use crate::read::{EventSink, TraceInfo};
use linux_perf_data::linux_perf_event_reader::SampleRecord;
use std::collections::BTreeMap;

/// Turns samples into events and counts those that cannot be events.
pub struct Samples<'m> {
    pub decoder: RecordDecoder<'m>,
    pub threads: Threads,
    /// Samples without a tracepoint record, by event name (`cycles`, `cpu-clock`…).
    not_tracepoints: BTreeMap<String, u64>,
    /// Samples that lack a time or a CPU (attrs recorded without `PERF_SAMPLE_TIME`/`CPU`).
    unplaced: u64,
    /// CPU numbers at or above this are damage: analyses keep state per CPU number.
    cpu_bound: u32,
    beyond_cpus: u64,
}

impl<'m> Samples<'m> {
    /// `nr_cpus`: the CPU count the file's header gives, if it does.
    pub fn new(decoder: RecordDecoder<'m>, nr_cpus: Option<u32>) -> Samples<'m> {
        Samples {
            decoder,
            threads: Threads::default(),
            not_tracepoints: BTreeMap::new(),
            unplaced: 0,
            cpu_bound: nr_cpus.unwrap_or(MAX_CPUS).min(MAX_CPUS),
            beyond_cpus: 0,
        }
    }

    /// Hands `s`, a sample of the event called `event`, to the sink.
    pub fn emit(
        &mut self,
        s: &SampleRecord<'_>,
        event: &str,
        info: &mut TraceInfo,
        sink: &mut (dyn EventSink + Send),
    ) {
        let Some(raw) = s.raw.as_ref().map(|r| r.as_slice()) else {
            *self.not_tracepoints.entry(event.to_string()).or_default() += 1;
            return;
        };
        let (Some(ts), Some(cpu)) = (s.timestamp, s.cpu) else {
            self.unplaced += 1;
            return;
        };
        if cpu >= self.cpu_bound {
            self.beyond_cpus += 1;
            return;
        }
        let Some(d) = self.decoder.decode(&raw) else {
            return;
        };
        // The kernel reports tid -1 for a task past its exit (perf prints `:-1 -1`); the
        // record's own `common_pid` still names it.
        let pid = match s.tid {
            Some(tid) if tid >= 0 => tid,
            _ => d.pid,
        };
        let task = Task {
            pid,
            comm: self.threads.name(pid),
            tgid: s.pid.filter(|&p| p >= 0),
        };
        d.hand_on(ts, cpu, task, info, sink);
    }

    /// What was skipped, one note each.
    pub fn finish(self, notes: &mut Vec<String>) {
        for (event, n) in &self.not_tracepoints {
            notes.push(format!(
                "{n} samples of {event} were skipped: they carry no tracepoint record (rtsleuth reads tracepoint samples only)"
            ));
        }
        if self.unplaced > 0 {
            notes.push(format!(
                "{} samples were skipped: they carry no time or no CPU",
                self.unplaced
            ));
        }
        if self.beyond_cpus > 0 {
            notes.push(format!(
                "{} samples name a CPU beyond the {} the file has and were skipped (damaged)",
                self.beyond_cpus, self.cpu_bound
            ));
        }
        self.decoder.finish(notes);
    }
}
