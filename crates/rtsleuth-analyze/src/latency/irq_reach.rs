//! `latency --irq`: how long after a device interrupt arrived each thread it led to ran.
//!
//! # Definition
//! - An interrupt is selected by its number or by a part of its handler's name
//!   (`irq_handler_entry`). Its *visit* on a CPU starts at that entry, when no other handler is
//!   open there, and lasts while the CPU's events stay flagged hard-IRQ, past the handler's exit
//!   (a threaded handler's thread is woken after `irq_handler_exit`).
//! - A thread is *reached* (link 1) when a `sched_waking` flagged hard-IRQ inside a selected
//!   visit starts its wake-up, and (link n + 1) when a reached thread, running since that
//!   wake-up without a switch-out, starts another's wake-up in task context: the wake chain of
//!   docs/claims.md, from its interrupt, up to [`CHAIN_DEPTH`] links. A waking on an
//!   interrupt's exit path ([`ExitPath`]) names no waker and reaches no one.
//! - Each reached wake-up is one sample: from the visit's entry to the moment the thread ran,
//!   as [`crate::wakeups`] ends a wake-up. A wake-up it does not measure (lost events,
//!   unrecorded CPUs) is no sample, and lost events end every chain in flight.
//! - Samples are kept per interrupt, thread and waker (the interrupt itself, or the thread of
//!   the link before): the IRQ thread's row and its application's are separate distributions.

use super::LatencyHistogram;
use crate::wakeups::Wake;
use crate::waking::{ExitPath, HardVisit, IrqSelector, Waker, CHAIN_DEPTH};
use rtsleuth_trace::event::{Event, EventKind, Timestamp};
use rustc_hash::FxHashMap as HashMap;
use std::collections::BTreeMap;

/// A selected interrupt as the trace named it, and how often it was entered.
#[derive(Debug, Default)]
pub struct Interrupt {
    pub name: String,
    pub entries: u64,
    pub cpus: std::collections::BTreeSet<u32>,
}

/// How a thread was reached: the visit's entry, its interrupt, the link and its waker.
#[derive(Debug, Clone, Copy)]
struct Reach {
    entry: Timestamp,
    irq: u32,
    link: usize,
    via: Option<i32>,
    /// The start of the wake-up it reached (to match its end).
    woken: Timestamp,
}

/// One distribution: a thread reached from an interrupt through one waker.
#[derive(Debug, Default)]
pub struct Receiver {
    pub link: usize,
    pub hist: LatencyHistogram,
}

/// Per CPU: the hard interrupts open (a handler's number; `None` for a vector or a hard
/// timer callback), the visit (of a handler, or of another interrupt) and the exit path.
#[derive(Debug, Default)]
struct Cpu {
    open: Vec<Option<u32>>,
    visit: HardVisit<Option<u32>>,
    exit_path: ExitPath,
}

impl Cpu {
    /// Leaves the innermost open frame like `frame`, and any above it whose exit is missing.
    fn exit(&mut self, frame: Option<u32>) {
        if let Some(at) = self.open.iter().rposition(|&f| f == frame) {
            self.open.truncate(at);
        }
    }
}

#[derive(Debug)]
pub struct IrqReach {
    pub selector: IrqSelector,
    pub interrupts: BTreeMap<u32, Interrupt>,
    /// Every interrupt the trace entered, by number: what a selection that matched none
    /// could have named.
    pub seen: BTreeMap<u32, String>,
    /// A `sched_waking` printed its context flags: wakings can be told apart.
    pub flags_known: bool,
    /// Keyed by (interrupt, thread, waker).
    pub receivers: BTreeMap<(u32, i32, Option<i32>), Receiver>,
    cpus: HashMap<u32, Cpu>,
    /// Reached wake-ups not yet ended.
    pending: HashMap<i32, Reach>,
    /// Threads running since a reached wake-up.
    holders: HashMap<i32, Reach>,
}

impl IrqReach {
    pub fn new(selector: IrqSelector) -> IrqReach {
        IrqReach {
            selector,
            interrupts: BTreeMap::new(),
            seen: BTreeMap::new(),
            flags_known: false,
            receivers: BTreeMap::new(),
            cpus: HashMap::default(),
            pending: HashMap::default(),
            holders: HashMap::default(),
        }
    }

    /// Every event, before the wake-up steps it caused.
    pub fn observe(&mut self, ev: &Event<'_>) {
        let cpu = self.cpus.entry(ev.cpu).or_default();
        cpu.visit.observe(ev);
        cpu.exit_path.observe(ev);
        if ev.flags.known && !ev.flags.hardirq {
            cpu.open.clear();
        }
        let frame = match ev.kind {
            EventKind::IrqHandlerEntry { irq, .. } => Some(Some(irq)),
            EventKind::IrqVectorEntry(_) => Some(None),
            EventKind::HrtimerExpireEntry { .. } if ev.flags.hardirq => Some(None),
            _ => None,
        };
        if let Some(frame) = frame {
            if cpu.open.is_empty() {
                cpu.visit.enter(ev.ts, frame);
            }
            cpu.open.push(frame);
        }
        match ev.kind {
            EventKind::IrqHandlerEntry { irq, name } => {
                self.seen.entry(irq).or_insert_with(|| name.to_string());
                if self.selector.selects(irq, name) {
                    let i = self.interrupts.entry(irq).or_default();
                    if i.name != name {
                        i.name = name.to_string();
                    }
                    i.entries += 1;
                    i.cpus.insert(ev.cpu);
                }
            }
            EventKind::IrqHandlerExit { irq, .. } => cpu.exit(Some(irq)),
            EventKind::IrqVectorExit(_) | EventKind::HrtimerExpireExit { .. } => cpu.exit(None),
            _ => {}
        }
    }

    /// The wake-up of `pid` starts with `ev`: reached when the interrupt or a reached thread
    /// did the waking.
    pub fn started(&mut self, ev: &Event<'_>, pid: i32) {
        let cpu = self.cpus.entry(ev.cpu).or_default();
        self.flags_known |= matches!(ev.kind, EventKind::SchedWaking { .. }) && ev.flags.known;
        let waker = Waker::of(ev).filter(|_| !cpu.exit_path.hides_waker(ev));
        let reach = match waker {
            Some(Waker::HardIrq) => cpu
                .visit
                .get()
                .and_then(|(entry, irq)| Some((entry, irq?)))
                .filter(|&(_, irq)| self.interrupts.contains_key(&irq))
                .map(|(entry, irq)| Reach {
                    entry,
                    irq,
                    link: 1,
                    via: None,
                    woken: ev.ts,
                }),
            Some(Waker::Task(p)) => {
                self.holders
                    .get(&p)
                    .filter(|r| r.link < CHAIN_DEPTH)
                    .map(|r| Reach {
                        link: r.link + 1,
                        via: Some(p),
                        woken: ev.ts,
                        ..*r
                    })
            }
            _ => None,
        };
        match reach {
            Some(r) => self.pending.insert(pid, r),
            None => self.pending.remove(&pid),
        };
    }

    /// The wake-up `w` ended: a sample when it was reached. `counted` says whether its CPU is
    /// one the report measures.
    pub fn ran(&mut self, w: &Wake, counted: bool) {
        let reach = (self.pending.remove(&w.pid)).filter(|r| r.woken == w.start);
        let Some(r) = reach else {
            self.holders.remove(&w.pid);
            return;
        };
        if counted {
            let row = (self.receivers.entry((r.irq, w.pid, r.via))).or_insert_with(|| Receiver {
                link: r.link,
                hist: LatencyHistogram::default(),
            });
            row.hist.record(w.run.saturating_sub(r.entry), w.run);
        }
        self.holders.insert(w.pid, r);
    }

    /// `pid` was switched out: what it wakes from now on is not the interrupt's doing.
    pub fn switched_out(&mut self, pid: i32) {
        self.holders.remove(&pid);
    }

    /// The wake-up of `pid` will not be measured: it carries no chain on.
    pub fn forget(&mut self, pid: i32) {
        self.pending.remove(&pid);
        self.holders.remove(&pid);
    }

    /// Events were lost or the trace contradicts itself: no chain in flight is proven.
    pub fn clear(&mut self) {
        self.pending.clear();
        self.holders.clear();
        for cpu in self.cpus.values_mut() {
            *cpu = Cpu::default();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Latency, LatencyOptions};
    use rtsleuth_trace::read::ftrace_text::read_bytes;

    /// `(comm, link, waker pid, max us)` of each row `--irq 25` gives for `lines`.
    fn rows(lines: &[&str]) -> Vec<(String, u64, Option<i64>, f64)> {
        let mut lat = Latency::new(LatencyOptions {
            irq: Some("25".parse().unwrap()),
            ..LatencyOptions::default()
        });
        let text = lines.join("\n") + "\n";
        let info = read_bytes("t", text.into_bytes(), 1 << 16, &mut lat).unwrap();
        let doc = lat.document(&info);
        let rows = doc.json["irq"]["receivers"].as_array().unwrap().clone();
        rows.iter()
            .map(|r| {
                (
                    r["comm"].as_str().unwrap().to_string(),
                    r["link"].as_u64().unwrap(),
                    r["woken_by"]["pid"].as_i64(),
                    r["max_us"].as_f64().unwrap(),
                )
            })
            .collect()
    }

    const ENTRY: &str =
        "          <idle>-0       [001] d.h1.   100.000000: irq_handler_entry: irq=25 name=eth0";
    const EXIT: &str =
        "          <idle>-0       [001] d.h1.   100.000004: irq_handler_exit: irq=25 ret=handled";
    const WAKE_THREAD: &str = "          <idle>-0       [001] d.h3.   100.000006: sched_waking: comm=irq/25-eth0 pid=50 prio=49 target_cpu=001";
    const RUN_THREAD: &str = "          <idle>-0       [001] d..2.   100.000020: sched_switch: prev_comm=swapper/1 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=irq/25-eth0 next_pid=50 next_prio=49";
    const WAKE_APP: &str = "     irq/25-eth0-50      [001] d..3.   100.000030: sched_waking: comm=app pid=60 prio=29 target_cpu=001";
    const THREAD_SLEEPS: &str = "     irq/25-eth0-50      [001] d..2.   100.000035: sched_switch: prev_comm=irq/25-eth0 prev_pid=50 prev_prio=49 prev_state=S ==> next_comm=app next_pid=60 next_prio=29";

    /// The thread is woken after the handler's exit, still in hard-IRQ context, and wakes the
    /// application: 20 us to the thread, 35 us to the application, both from the entry.
    #[test]
    fn the_irq_thread_and_the_application_it_wakes() {
        let got = rows(&[
            ENTRY,
            EXIT,
            WAKE_THREAD,
            RUN_THREAD,
            WAKE_APP,
            THREAD_SLEEPS,
        ]);
        assert_eq!(
            got,
            [
                ("irq/25-eth0".into(), 1, None, 20.0),
                ("app".into(), 2, Some(50), 35.0)
            ]
        );
    }

    /// Another interrupt entered before the CPU left hard-IRQ context owns what it wakes.
    #[test]
    fn a_vector_entered_after_the_handler_is_another_interrupt() {
        let timer =
            "          <idle>-0       [001] d.h1.   100.000005: local_timer_entry: vector=236";
        let got = rows(&[ENTRY, EXIT, timer, WAKE_THREAD, RUN_THREAD]);
        assert_eq!(got, []);
    }

    /// A waking on the interrupt's exit path (interrupts still off, the same pid column) is
    /// irq_exit's, not the thread's: the thread was interrupted while running.
    #[test]
    fn a_waking_on_an_exit_path_is_not_the_threads() {
        let irq_on_thread = [
            "     irq/25-eth0-50      [001] d.h1.   100.000025: irq_handler_entry: irq=3 name=ata",
            "     irq/25-eth0-50      [001] d.h1.   100.000026: irq_handler_exit: irq=3 ret=handled",
            "     irq/25-eth0-50      [001] d..3.   100.000030: sched_waking: comm=app pid=60 prio=29 target_cpu=001",
            THREAD_SLEEPS,
        ];
        let mut lines = vec![ENTRY, EXIT, WAKE_THREAD, RUN_THREAD];
        lines.extend(irq_on_thread);
        let got = rows(&lines);
        assert_eq!(got, [("irq/25-eth0".into(), 1, None, 20.0)]);
    }

    /// Switched out, the thread's later wakings are no longer the interrupt's doing.
    #[test]
    fn a_switch_out_ends_the_chain() {
        let back = "          <idle>-0       [001] d..2.   100.000025: sched_switch: prev_comm=swapper/1 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=irq/25-eth0 next_pid=50 next_prio=49";
        let preempted = "     irq/25-eth0-50      [001] d..2.   100.000022: sched_switch: prev_comm=irq/25-eth0 prev_pid=50 prev_prio=49 prev_state=R+ ==> next_comm=swapper/1 next_pid=0 next_prio=120";
        let got = rows(&[
            ENTRY,
            EXIT,
            WAKE_THREAD,
            RUN_THREAD,
            preempted,
            back,
            WAKE_APP,
            THREAD_SLEEPS,
        ]);
        assert_eq!(got, [("irq/25-eth0".into(), 1, None, 20.0)]);
    }

    /// Lost events end every chain in flight.
    #[test]
    fn lost_events_end_the_chain() {
        let lost = "CPU:1 [LOST 3 EVENTS]";
        let got = rows(&[
            ENTRY,
            EXIT,
            WAKE_THREAD,
            RUN_THREAD,
            lost,
            WAKE_APP,
            THREAD_SLEEPS,
        ]);
        assert_eq!(got, [("irq/25-eth0".into(), 1, None, 20.0)]);
    }

    #[test]
    fn selections_parse() {
        use super::IrqSelector;
        assert_eq!("25".parse(), Ok(IrqSelector::Number(25)));
        assert_eq!(" eth0 ".parse(), Ok(IrqSelector::Name("eth0".into())));
        assert!("".parse::<IrqSelector>().is_err());
        assert!("4294967296".parse::<IrqSelector>().is_err());
        assert!(IrqSelector::Name("eth".into()).selects(9, "eth0-rx-0"));
        assert!(!IrqSelector::Number(9).selects(25, "9"));
    }
}
