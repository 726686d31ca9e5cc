//! Rendering of the abstract event stream in each [`Variant`]'s dialect.
//!
//! Format strings follow the printing code they imitate:
//! - kernel `trace`/`trace_pipe`: `trace_print_context()` prints
//!   `"%16s-%-7d "` (5.10+, `%-5d` before), the optional `"(%7d) "` /
//!   `"(-------) "` TGID column, `"[%03d] "`, the flag columns from
//!   `trace_print_lat_fmt()`, then `" %5lu.%06lu: "`;
//! - `options/latency-format`: `lat_print_generic()` `"%8.8s-%-7d %3d"`, the
//!   flags, then `lat_print_timestamp()` `" %4lldus%c: "` where the mark comes
//!   from `trace_find_mark()` on the distance to the next entry;
//! - trace-cmd: libtraceevent's `"%16s-%-5d [%03d] %5lu.%06lu: %s: "` with
//!   the event name padded to 20 columns, and the `sched_switch`/`sched_wakeup`
//!   and `hrtimer` plugins; `-R` prints `" field=value"` for every field.

use std::fmt::Write as _;
use std::io::{self, Write};

use crate::scenario::{TaskSpec, Variant};
use crate::sim::{Ev, Flags, Item, Kind, PrevState, IDLE};
use crate::truth::Expected;

/// Kernel-text dialect differences between kernel generations.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Dialect {
    /// 5.x kernel print formats.
    K5,
    /// 4.x kernel print formats (no hrtimer `mode=`, workqueue by pointer).
    K4,
    /// trace-cmd with plugins.
    Cmd,
    /// trace-cmd -R.
    Raw,
}

pub(crate) struct Formatter<'a> {
    variant: Variant,
    tasks: &'a [TaskSpec],
    line: String,
    need_nl: bool,
    held: Option<Ev>,
    held_after: Vec<String>,
    pub bytes: u64,
    pub expected: Expected,
}

fn fn_addr(name: &str) -> u64 {
    // Stable fake kernel text addresses for raw output.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in name.bytes() {
        h = (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3);
    }
    0xffff_ffff_8100_0000 + (h & 0x00ff_fff0)
}

fn softirq_name(vec: u32) -> &'static str {
    [
        "HI", "TIMER", "NET_TX", "NET_RX", "BLOCK", "IRQ_POLL", "TASKLET", "SCHED", "HRTIMER",
        "RCU",
    ]
    .get(vec as usize)
    .copied()
    .unwrap_or("?")
}

impl<'a> Formatter<'a> {
    pub(crate) fn new(variant: Variant, tasks: &'a [TaskSpec], cpus: u32) -> Self {
        Formatter {
            variant,
            tasks,
            line: String::with_capacity(256),
            need_nl: false,
            held: None,
            held_after: Vec::new(),
            bytes: 0,
            expected: Expected {
                cpus,
                ..Expected::default()
            },
        }
    }

    fn dialect(&self) -> Dialect {
        match self.variant {
            Variant::Legacy4 | Variant::TgidAndroid => Dialect::K4,
            Variant::TraceCmdReport => Dialect::Cmd,
            Variant::TraceCmdRaw => Dialect::Raw,
            _ => Dialect::K5,
        }
    }

    fn write_line<W: Write>(&mut self, w: &mut W, s: &str) -> io::Result<()> {
        if self.need_nl {
            w.write_all(b"\n")?;
            self.bytes += 1;
        }
        w.write_all(s.as_bytes())?;
        self.bytes += s.len() as u64;
        self.need_nl = true;
        Ok(())
    }

    /// Writes the header; `entries` = event lines in the body (only shown by the kernel
    /// headers).
    pub(crate) fn header<W: Write>(
        &mut self,
        w: &mut W,
        entries: u64,
        empty_cpus: &[u32],
        tc_version: u32,
    ) -> io::Result<()> {
        let cpus = self.expected.cpus;
        let mut lines: Vec<String> = Vec::new();
        let info = format!("# entries-in-buffer/entries-written: {entries}/{entries}   #P:{cpus}");
        let pre = |l: &mut Vec<String>| {
            l.push("# tracer: nop".into());
            l.push("#".into());
        };
        match self.variant {
            Variant::Modern5 | Variant::Tgid => {
                pre(&mut lines);
                lines.push(info);
                lines.push("#".into());
                let sp = if self.variant == Variant::Tgid {
                    " ".repeat(12)
                } else {
                    " ".repeat(2)
                };
                for tail in [
                    "  _-----=> irqs-off/BH-disabled",
                    " / _----=> need-resched",
                    "| / _---=> hardirq/softirq",
                    "|| / _--=> preempt-depth",
                    "||| / _-=> migrate-disable",
                    "|||| /     delay",
                ] {
                    lines.push(format!("#                            {sp}{tail}"));
                }
                let (a, b) = if self.variant == Variant::Tgid {
                    ("     TGID   ", "       |    ")
                } else {
                    ("  ", "  ")
                };
                lines.push(format!(
                    "#           TASK-PID  {a} CPU#  |||||  TIMESTAMP  FUNCTION"
                ));
                lines.push(format!(
                    "#              | |    {b}   |   |||||     |         |"
                ));
            }
            Variant::Legacy4 | Variant::TgidAndroid => {
                pre(&mut lines);
                lines.push(info);
                lines.push("#".into());
                let tgid = self.variant == Variant::TgidAndroid;
                let sp = if tgid { " ".repeat(10) } else { " ".repeat(2) };
                for tail in [
                    "  _-----=> irqs-off",
                    " / _----=> need-resched",
                    "| / _---=> hardirq/softirq",
                    "|| / _--=> preempt-depth",
                    "||| /     delay",
                ] {
                    lines.push(format!("#                          {sp}{tail}"));
                }
                let (a, b) = if tgid {
                    ("   TGID   ", "     |    ")
                } else {
                    ("  ", "  ")
                };
                lines.push(format!(
                    "#           TASK-PID {a}CPU#  ||||    TIMESTAMP  FUNCTION"
                ));
                lines.push(format!(
                    "#              | |   {b}  |   ||||       |         |"
                ));
            }
            Variant::Rt7 => {
                pre(&mut lines);
                lines.push(info);
                lines.push("#".into());
                for tail in [
                    "  _-------=> irqs-off",
                    " / _------=> need-resched",
                    "| / _-----=> need-resched-lazy",
                    "|| / _----=> hardirq/softirq",
                    "||| / _---=> preempt-depth",
                    "|||| / _--=> preempt-lazy-depth",
                    "||||| / _-=> migrate-disable",
                    "|||||| /     delay",
                ] {
                    lines.push(format!("#                              {tail}"));
                }
                lines.push("#           TASK-PID     CPU#  |||||||  TIMESTAMP  FUNCTION".into());
                lines.push("#              | |         |   |||||||      |         |".into());
            }
            Variant::LatencyFormat => {
                pre(&mut lines);
                lines.push("# nop latency trace v1.1.5 on 5.15.0".into());
                lines.push(
                    "# --------------------------------------------------------------------".into(),
                );
                lines.push(format!(
                    "# latency: 0 us, #{entries}/{entries}, CPU#0 | (M:preempt VP:0, KP:0, SP:0 HP:0 #P:{cpus})"
                ));
                lines.push("#    -----------------".into());
                lines.push("#    | task: -0 (uid:0 nice:0 policy:0 rt_prio:0)".into());
                lines.push("#    -----------------".into());
                lines.push("#".into());
                for l in [
                    "#                    _------=> CPU#            ",
                    "#                   / _-----=> irqs-off/BH-disabled",
                    "#                  | / _----=> need-resched    ",
                    "#                  || / _---=> hardirq/softirq ",
                    "#                  ||| / _--=> preempt-depth   ",
                    "#                  |||| / _-=> migrate-disable ",
                    "#                  ||||| /     delay           ",
                    "#  cmd     pid     |||||| time  |   caller     ",
                    "#     \\   /        ||||||  \\    |    /       ",
                ] {
                    lines.push(l.into());
                }
            }
            Variant::TraceCmdReport | Variant::TraceCmdRaw => {
                lines.push(format!("version = {tc_version}"));
                for c in empty_cpus {
                    lines.push(format!("CPU {c} is empty"));
                }
                lines.push(format!("cpus={cpus}"));
            }
            Variant::TracePipe => {}
        }
        for l in &lines {
            self.write_line(w, l)?;
            self.expected.other_lines += 1;
        }
        Ok(())
    }

    /// Renders one item (the latency format holds each event back until the
    /// next one is known, for its delay mark).
    pub(crate) fn item<W: Write>(&mut self, w: &mut W, item: &Item) -> io::Result<()> {
        let other = match item {
            Item::Event(ev) => {
                if self.variant == Variant::LatencyFormat {
                    if let Some(prev) = self.held.take() {
                        self.render_event(&prev, ev.ts_us - prev.ts_us);
                        let s = std::mem::take(&mut self.line);
                        self.write_line(w, &s)?;
                        self.line = s;
                        for l in std::mem::take(&mut self.held_after) {
                            self.write_line(w, &l)?;
                        }
                    }
                    self.count_event(ev);
                    self.held = Some(ev.clone());
                } else {
                    self.render_event(ev, 0);
                    let s = std::mem::take(&mut self.line);
                    self.write_line(w, &s)?;
                    self.line = s;
                    self.count_event(ev);
                }
                return Ok(());
            }
            Item::Lost { cpu, n } => {
                self.expected.lost_events += n;
                if self.variant.is_trace_cmd() {
                    format!("CPU:{cpu} [{n} EVENTS DROPPED]")
                } else {
                    format!("CPU:{cpu} [LOST {n} EVENTS]")
                }
            }
            Item::BufferStarted { cpu } => {
                if matches!(
                    self.variant,
                    Variant::TracePipe | Variant::TraceCmdReport | Variant::TraceCmdRaw
                ) {
                    return Ok(());
                }
                format!("##### CPU {cpu} buffer started ####")
            }
            Item::Elided => "[...]".to_string(),
        };
        self.expected.other_lines += 1;
        if self.held.is_some() {
            self.held_after.push(other);
            Ok(())
        } else {
            self.write_line(w, &other)
        }
    }

    /// Flushes a held event and the final newline.
    pub(crate) fn finish<W: Write>(&mut self, w: &mut W, trailing_newline: bool) -> io::Result<()> {
        if let Some(prev) = self.held.take() {
            self.render_event(&prev, 0);
            let s = std::mem::take(&mut self.line);
            self.write_line(w, &s)?;
            for l in std::mem::take(&mut self.held_after) {
                self.write_line(w, &l)?;
            }
        }
        if trailing_newline && self.need_nl {
            w.write_all(b"\n")?;
            self.bytes += 1;
        }
        Ok(())
    }

    fn count_event(&mut self, ev: &Ev) {
        self.expected.event_lines += 1;
        let name = self.event_name(&ev.kind);
        match self.expected.events.get_mut(name) {
            Some(n) => *n += 1,
            None => {
                self.expected.events.insert(name.to_string(), 1);
            }
        }
    }

    fn event_name(&self, k: &Kind) -> &'static str {
        match k {
            Kind::Mark { .. } if self.variant.is_trace_cmd() => "print",
            _ => k.name(),
        }
    }

    fn comm(&self, task: u32, cpu: u32) -> std::borrow::Cow<'a, str> {
        if task == IDLE {
            format!("swapper/{cpu}").into()
        } else {
            self.tasks[task as usize].comm.as_str().into()
        }
    }

    fn pid(&self, task: u32) -> u32 {
        if task == IDLE {
            0
        } else {
            self.tasks[task as usize].pid
        }
    }

    fn prio(&self, task: u32) -> u32 {
        if task == IDLE {
            120
        } else {
            self.tasks[task as usize].prio()
        }
    }

    fn flags(&self, f: &Flags) -> String {
        let irq = if f.irqs_off { 'd' } else { '.' };
        let nr = if f.need_resched { 'N' } else { '.' };
        let ctx = match (f.hard, f.soft) {
            (true, true) => 'H',
            (true, false) => 'h',
            (false, true) => 's',
            _ => '.',
        };
        let digit = |v: u8| {
            if v == 0 {
                '.'
            } else {
                char::from_digit(u32::from(v.min(15)), 16).unwrap_or('f')
            }
        };
        let mut s = String::with_capacity(7);
        match self.variant {
            Variant::Legacy4 | Variant::TgidAndroid => {
                s.extend([irq, nr, ctx, digit(f.preempt)]);
            }
            Variant::Rt7 => {
                s.extend([
                    irq,
                    nr,
                    if f.lazy { 'L' } else { '.' },
                    ctx,
                    digit(f.preempt),
                    '.',
                    digit(f.migrate),
                ]);
            }
            _ => {
                s.extend([irq, nr, ctx, digit(f.preempt), digit(f.migrate)]);
            }
        }
        s
    }

    fn render_event(&mut self, ev: &Ev, delta_us: u64) {
        let mut l = std::mem::take(&mut self.line);
        l.clear();
        let (comm, pid): (std::borrow::Cow<str>, u32) = if ev.cur == IDLE {
            ("<idle>".into(), 0)
        } else if ev.unknown_comm {
            ("<...>".into(), self.pid(ev.cur))
        } else {
            (self.comm(ev.cur, ev.cpu), self.pid(ev.cur))
        };
        let tgid = if ev.cur == IDLE || ev.unknown_comm {
            None
        } else {
            Some(self.tasks[ev.cur as usize].tgid)
        };
        let (secs, usecs) = (ev.ts_us / 1_000_000, ev.ts_us % 1_000_000);
        let cpu = ev.cpu;
        let flags = self.flags(&ev.flags);
        let _ = match self.variant {
            Variant::Modern5 | Variant::TracePipe | Variant::Rt7 => {
                write!(
                    l,
                    "{comm:>16}-{pid:<7} [{cpu:03}] {flags} {secs:>5}.{usecs:06}: "
                )
            }
            Variant::Legacy4 => write!(
                l,
                "{comm:>16}-{pid:<5} [{cpu:03}] {flags} {secs:>5}.{usecs:06}: "
            ),
            Variant::Tgid => {
                let t = tgid.map_or("-------".to_string(), |t| format!("{t:>7}"));
                write!(
                    l,
                    "{comm:>16}-{pid:<7} ({t}) [{cpu:03}] {flags} {secs:>5}.{usecs:06}: "
                )
            }
            Variant::TgidAndroid => {
                let t = tgid.map_or("-----".to_string(), |t| format!("{t:>5}"));
                write!(
                    l,
                    "{comm:>16}-{pid:<5} ({t}) [{cpu:03}] {flags} {secs:>5}.{usecs:06}: "
                )
            }
            Variant::LatencyFormat => {
                let mark = lat_mark(delta_us * 1000);
                write!(
                    l,
                    "{comm:>8.8}-{pid:<7} {cpu:>3}{flags} {:>4}us{mark}: ",
                    ev.ts_us
                )
            }
            Variant::TraceCmdReport | Variant::TraceCmdRaw => {
                write!(l, "{comm:>16}-{pid:<5} [{cpu:03}] {secs:>5}.{usecs:06}: ")
            }
        };
        let name = self.event_name(&ev.kind);
        l.push_str(name);
        l.push_str(": ");
        if self.variant.is_trace_cmd() {
            for _ in name.len()..20 {
                l.push(' ');
            }
        }
        self.payload(&mut l, ev);
        self.line = l;
    }

    fn payload(&self, l: &mut String, ev: &Ev) {
        let d = self.dialect();
        let raw = d == Dialect::Raw;
        let ptr = |p: u64| {
            if matches!(d, Dialect::Cmd | Dialect::Raw) {
                format!("0x{p:x}")
            } else {
                format!("{p:016x}")
            }
        };
        let func = |f: &str| {
            if raw {
                format!("0x{:x}", fn_addr(f))
            } else {
                f.to_string()
            }
        };
        let cpu = ev.cpu;
        let _ = match &ev.kind {
            Kind::Switch { prev, state, next } => {
                let (pc, pp, pr) = (self.comm(*prev, cpu), self.pid(*prev), self.prio(*prev));
                let (nc, np, nr) = (self.comm(*next, cpu), self.pid(*next), self.prio(*next));
                match d {
                    Dialect::K5 | Dialect::K4 => {
                        let st = match state {
                            PrevState::S => "S",
                            PrevState::D => "D",
                            PrevState::I => "I",
                            PrevState::Preempted => "R+",
                            PrevState::Idle => "R",
                        };
                        write!(l, "prev_comm={pc} prev_pid={pp} prev_prio={pr} prev_state={st} ==> next_comm={nc} next_pid={np} next_prio={nr}")
                    }
                    Dialect::Cmd => {
                        // libtraceevent's write_state(): letters "SDTtZXxW" by
                        // bit, 'R' when none is set — so TASK_REPORT_IDLE
                        // (0x80) prints 'W' and the preempt bit (0x100) 'R'.
                        let st = match state {
                            PrevState::S => "S",
                            PrevState::D => "D",
                            PrevState::I => "W",
                            PrevState::Preempted | PrevState::Idle => "R",
                        };
                        write!(l, "{pc}:{pp} [{pr}] {st} ==> {nc}:{np} [{nr}]")
                    }
                    Dialect::Raw => {
                        let st = match state {
                            PrevState::S => 1,
                            PrevState::D => 2,
                            PrevState::I => 128,
                            PrevState::Preempted => 256,
                            PrevState::Idle => 0,
                        };
                        write!(l, " prev_comm={pc} prev_pid={pp} prev_prio={pr} prev_state={st} next_comm={nc} next_pid={np} next_prio={nr}")
                    }
                }
            }
            Kind::Waking { task, target }
            | Kind::Wakeup { task, target }
            | Kind::WakeupNew { task, target } => {
                let (c, p, pr) = (self.comm(*task, cpu), self.pid(*task), self.prio(*task));
                let plugin = !matches!(ev.kind, Kind::Waking { .. });
                match d {
                    Dialect::Cmd if plugin => write!(l, "{c}:{p} [{pr}] CPU:{target:03}"),
                    Dialect::Raw => write!(l, " comm={c} pid={p} prio={pr} target_cpu={target}"),
                    _ => write!(l, "comm={c} pid={p} prio={pr} target_cpu={target:03}"),
                }
            }
            Kind::Migrate { task, orig, dest } => {
                let (c, p, pr) = (self.comm(*task, cpu), self.pid(*task), self.prio(*task));
                let sp = if raw { " " } else { "" };
                write!(
                    l,
                    "{sp}comm={c} pid={p} prio={pr} orig_cpu={orig} dest_cpu={dest}"
                )
            }
            Kind::IrqEntry { irq, name } => {
                let sp = if raw { " " } else { "" };
                write!(l, "{sp}irq={irq} name={name}")
            }
            Kind::IrqExit { irq } => {
                if raw {
                    write!(l, " irq={irq} ret=1")
                } else {
                    write!(l, "irq={irq} ret=handled")
                }
            }
            Kind::SoftirqRaise { vec } | Kind::SoftirqEntry { vec } | Kind::SoftirqExit { vec } => {
                if raw {
                    write!(l, " vec={vec}")
                } else {
                    write!(l, "vec={vec} [action={}]", softirq_name(*vec))
                }
            }
            Kind::LocalTimerEntry | Kind::LocalTimerExit => {
                let sp = if raw { " " } else { "" };
                write!(l, "{sp}vector=236")
            }
            Kind::HrtimerStart {
                timer,
                func: f,
                expires_ns,
                soft_ns,
            } => match d {
                Dialect::K5 => write!(
                    l,
                    "hrtimer={} function={f} expires={expires_ns} softexpires={soft_ns} mode=ABS",
                    ptr(*timer)
                ),
                Dialect::K4 | Dialect::Cmd => write!(
                    l,
                    "hrtimer={} function={f} expires={expires_ns} softexpires={soft_ns}",
                    ptr(*timer)
                ),
                Dialect::Raw => write!(
                    l,
                    " hrtimer={} function={} expires={expires_ns} softexpires={soft_ns} mode=0",
                    ptr(*timer),
                    func(f)
                ),
            },
            Kind::HrtimerExpireEntry {
                timer,
                func: f,
                now_ns,
            } => match d {
                Dialect::K5 | Dialect::K4 => {
                    write!(l, "hrtimer={} function={f} now={now_ns}", ptr(*timer))
                }
                Dialect::Cmd => write!(l, "hrtimer={} now={now_ns} function={f}", ptr(*timer)),
                Dialect::Raw => write!(
                    l,
                    " hrtimer={} now={now_ns} function={}",
                    ptr(*timer),
                    func(f)
                ),
            },
            Kind::HrtimerExpireExit { timer } | Kind::HrtimerCancel { timer } => {
                let sp = if raw { " " } else { "" };
                write!(l, "{sp}hrtimer={}", ptr(*timer))
            }
            Kind::WqQueue {
                work,
                func: f,
                wq,
                cpu: c,
            } => {
                let req = if *wq == "events_unbound" { 8192 } else { *c };
                match d {
                    Dialect::K4 => write!(
                        l,
                        "work struct={} function={f} workqueue={} req_cpu={req} cpu={c}",
                        ptr(*work),
                        ptr(fn_addr(wq) | 0xffff_8800_0000_0000)
                    ),
                    Dialect::Raw => write!(
                        l,
                        " work={} function={} workqueue={wq} req_cpu={req} cpu={c}",
                        ptr(*work),
                        func(f)
                    ),
                    _ => write!(
                        l,
                        "work struct={} function={f} workqueue={wq} req_cpu={req} cpu={c}",
                        ptr(*work)
                    ),
                }
            }
            Kind::WqActivate { work } => {
                if raw {
                    write!(l, " work={}", ptr(*work))
                } else {
                    write!(l, "work struct {}", ptr(*work))
                }
            }
            Kind::WqStart { work, func: f } => {
                if raw {
                    write!(l, " work={} function={}", ptr(*work), func(f))
                } else {
                    write!(l, "work struct {}: function {f}", ptr(*work))
                }
            }
            Kind::WqEnd { work, func: f } => match d {
                Dialect::K4 => write!(l, "work struct {}", ptr(*work)),
                Dialect::Raw => write!(l, " work={} function={}", ptr(*work), func(f)),
                _ => write!(l, "work struct {}: function {f}", ptr(*work)),
            },
            Kind::Mark { text } => match d {
                Dialect::K5 | Dialect::K4 => write!(l, "{text}"),
                Dialect::Cmd => write!(l, "tracing_mark_write: {text}"),
                Dialect::Raw => write!(l, " ip=0x{:x} buf={text}", fn_addr("tracing_mark_write")),
            },
        };
    }
}

/// `trace_find_mark()`: the delay mark for a distance (ns) to the next entry.
pub fn lat_mark(delta_ns: u64) -> char {
    const MARKS: [(u64, char); 6] = [
        (1_000_000_000, '$'),
        (100_000_000, '@'),
        (10_000_000, '*'),
        (1_000_000, '#'),
        (100_000, '!'),
        (10_000, '+'),
    ];
    MARKS
        .iter()
        .find(|(v, _)| delta_ns > *v)
        .map_or(' ', |m| m.1)
}
