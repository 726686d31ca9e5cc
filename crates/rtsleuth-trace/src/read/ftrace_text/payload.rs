//! Decoding the printed payload of the events rtsleuth reasons about into [`EventKind`].
//!
//! Three printers produce these payloads: the kernel's own print formats (`key=value`),
//! `trace-cmd report -R` (the same fields, numbers raw) and trace-cmd's plugins, which print
//! `sched_switch` as `comm:pid [prio] S ==> comm:pid [prio]` and `sched_wakeup` as
//! `comm:pid [prio] success=1 CPU:002`. A payload that does not decode becomes
//! [`EventKind::Other`] and keeps its text.

use super::rtla;
use crate::event::{same_bytes, EventKind, Fields, IrqVector, MarkerKind, TaskState};

/// Types a printed payload: the event's kind, or [`EventKind::Other`] when it does not decode.
pub fn decode<'a>(name: &'a str, payload: &'a str) -> EventKind<'a> {
    decoder(name)
        .and_then(|decode| decode(name, payload))
        .unwrap_or(EventKind::Other)
}

/// How the payload of an event named so is typed.
pub type Decoder = for<'a> fn(&'a str, &'a str) -> Option<EventKind<'a>>;

/// The decoding of the events named `name`; `None` for events never typed (they are always
/// [`EventKind::Other`]), which a binary reader then need not print to text at all.
pub fn decoder(name: &str) -> Option<Decoder> {
    let decode: Decoder = match name {
        "sched_switch" => |_, payload| sched_switch(payload),
        "sched_waking" => |_, payload| {
            wakeup(payload).map(|(comm, pid, prio, target_cpu)| EventKind::SchedWaking {
                comm,
                pid,
                prio,
                target_cpu,
            })
        },
        "sched_wakeup" => |_, payload| {
            wakeup(payload).map(|(comm, pid, prio, target_cpu)| EventKind::SchedWakeup {
                comm,
                pid,
                prio,
                target_cpu,
            })
        },
        "sched_wakeup_new" => |_, payload| {
            wakeup(payload).map(|(comm, pid, prio, target_cpu)| EventKind::SchedWakeupNew {
                comm,
                pid,
                prio,
                target_cpu,
            })
        },
        "sched_migrate_task" => |_, payload| migrate(payload),
        "sched_process_fork" => |_, payload| fork(payload),
        "sched_process_exit" => |_, payload| process_exit(payload),
        "irq_handler_entry" => |_, payload| irq_entry(payload),
        "irq_handler_exit" => |_, payload| irq_exit(payload),
        "softirq_raise" => |_, payload| {
            softirq(payload).map(|(vec, action)| EventKind::SoftirqRaise { vec, action })
        },
        "softirq_entry" => |_, payload| {
            softirq(payload).map(|(vec, action)| EventKind::SoftirqEntry { vec, action })
        },
        "softirq_exit" => |_, payload| {
            softirq(payload).map(|(vec, action)| EventKind::SoftirqExit { vec, action })
        },
        "hrtimer_start" => |_, payload| hrtimer_start(payload),
        "hrtimer_expire_entry" => |_, payload| hrtimer_expire_entry(payload),
        "hrtimer_expire_exit" => |_, payload| {
            hrtimer_ptr(payload).map(|hrtimer| EventKind::HrtimerExpireExit { hrtimer })
        },
        "hrtimer_cancel" => {
            |_, payload| hrtimer_ptr(payload).map(|hrtimer| EventKind::HrtimerCancel { hrtimer })
        }
        "ipi_raise" => |_, payload| {
            Some(EventKind::IpiRaise {
                reason: ipi_reason(payload),
            })
        },
        "ipi_entry" => |_, payload| {
            Some(EventKind::IpiEntry {
                reason: ipi_reason(payload),
            })
        },
        "ipi_exit" => |_, payload| {
            Some(EventKind::IpiExit {
                reason: ipi_reason(payload),
            })
        },
        "irq_disable" => |_, payload| {
            caller(payload).map(|(caller, parent)| EventKind::IrqDisable { caller, parent })
        },
        "irq_enable" => |_, payload| {
            caller(payload).map(|(caller, parent)| EventKind::IrqEnable { caller, parent })
        },
        "preempt_disable" => |_, payload| {
            caller(payload).map(|(caller, parent)| EventKind::PreemptDisable { caller, parent })
        },
        "preempt_enable" => |_, payload| {
            caller(payload).map(|(caller, parent)| EventKind::PreemptEnable { caller, parent })
        },
        "workqueue_queue_work" => |_, payload| queue_work(payload),
        "workqueue_activate_work" => {
            |_, payload| work(payload).map(|(work, _)| EventKind::WorkqueueActivateWork { work })
        }
        "workqueue_execute_start" => |_, payload| {
            work(payload)
                .map(|(work, function)| EventKind::WorkqueueExecuteStart { work, function })
        },
        "workqueue_execute_end" => |_, payload| {
            work(payload).map(|(work, function)| EventKind::WorkqueueExecuteEnd { work, function })
        },
        "tracing_mark_write" => |_, payload| Some(marker(MarkerKind::TracingMarkWrite, payload)),
        "print" => |_, payload| Some(marker(MarkerKind::Print, strip_ip(payload))),
        "bputs" => |_, payload| Some(marker(MarkerKind::Bputs, strip_ip(payload))),
        "bprint" => |_, payload| Some(marker(MarkerKind::Bprint, strip_ip(payload))),
        "console" => |_, payload| Some(marker(MarkerKind::Console, payload)),
        "sys_enter" => |_, payload| sys_enter(payload),
        "sys_exit" => |_, payload| sys_exit(payload),
        "function" => |_, payload| function(payload),
        // The timerlat tracer's samples (named so by the line reader) and the osnoise event.
        "timerlat" | "timerlat_sample" => |_, payload| rtla::sample(payload),
        "osnoise" => |_, payload| rtla::summary(payload),
        "sample_threshold" => |_, payload| rtla::threshold(payload),
        // The osnoise tracer's noise events and x86's vectors are known by their names' form.
        _ if rtla::noise_source(name).is_some() => {
            |name, payload| rtla::noise(rtla::noise_source(name)?, payload)
        }
        _ if name.ends_with("_entry") || name.ends_with("_exit") => irq_vector,
        _ => return None,
    };
    Some(decode)
}

/// A decimal `i32`, optionally negative, surrounded by optional blanks.
fn int(s: &str) -> Option<i32> {
    let b = s.trim_ascii().as_bytes();
    let (negative, digits) = match b.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, b),
    };
    if digits.is_empty() || digits.len() > 10 {
        return None;
    }
    let mut n: i64 = 0;
    for &c in digits {
        let d = c.wrapping_sub(b'0');
        if d > 9 {
            return None;
        }
        n = n * 10 + i64::from(d);
    }
    i32::try_from(if negative { -n } else { n }).ok()
}

fn uint(s: &str) -> Option<u32> {
    int(s)
        .and_then(|n| u32::try_from(n).ok())
        .or_else(|| s.trim_ascii().parse().ok())
}

/// A kernel pointer printed in hex, with or without `0x`.
fn hex(s: &str) -> Option<u64> {
    let s = s.trim_ascii();
    crate::read::hex::u64_digits(s.strip_prefix("0x").unwrap_or(s).as_bytes())
}

fn sched_switch(p: &str) -> Option<EventKind<'_>> {
    if !p.starts_with("prev_comm=") {
        return sched_switch_plugin(p);
    }
    sched_switch_kernel(p).or_else(|| sched_switch_fields(p))
}

/// The kernel's own format, keys in their fixed order:
/// `prev_comm=%s prev_pid=%d prev_prio=%d prev_state=%s ==> next_comm=%s next_pid=%d next_prio=%d`.
/// Scanning for the known keys is several times cheaper than splitting generic fields, and
/// this is the most frequent event of every latency trace.
fn sched_switch_kernel(p: &str) -> Option<EventKind<'_>> {
    let mut c = Cursor(p.strip_prefix("prev_comm=")?);
    let prev_comm = c.until(" prev_pid=")?;
    let prev_pid = int(c.until(" prev_prio=")?)?;
    let prev_prio = Some(int(c.until(" prev_state=")?)?);
    let prev_state = TaskState::parse(c.until(" ==> next_comm=")?);
    let next_comm = c.until(" next_pid=")?;
    let next_pid = int(c.until(" next_prio=")?)?;
    Some(EventKind::SchedSwitch {
        prev_comm,
        prev_pid,
        prev_prio,
        prev_state,
        next_comm,
        next_pid,
        next_prio: Some(int(c.0)?),
    })
}

/// A payload consumed from the left, one known separator at a time.
struct Cursor<'a>(&'a str);

impl<'a> Cursor<'a> {
    /// The text up to `sep`, which is consumed too. (A plain scan for the separator's first
    /// byte beats a general substring search, and memchr's setup, on segments this short.)
    fn until(&mut self, sep: &str) -> Option<&'a str> {
        let (hay, sep_b) = (self.0.as_bytes(), sep.as_bytes());
        let first = *sep_b.first()?;
        let at = (0..hay.len()).find(|&i| {
            hay[i] == first
                && hay
                    .get(i..i + sep_b.len())
                    .is_some_and(|h| same_bytes(h, sep_b))
        })?;
        let before = &self.0[..at];
        self.0 = &self.0[at + sep.len()..];
        Some(before.trim_ascii())
    }
}

/// Any `key=value` form of sched_switch, e.g. `trace-cmd report -R` (numeric state, no `==>`).
fn sched_switch_fields(p: &str) -> Option<EventKind<'_>> {
    let (mut prev_comm, mut prev_pid, mut prev_prio, mut prev_state) =
        (None, None, None, TaskState::Unknown);
    let (mut next_comm, mut next_pid, mut next_prio) = (None, None, None);
    for (k, v) in Fields::new(p).iter() {
        match k {
            "prev_comm" => prev_comm = Some(v),
            "prev_pid" => prev_pid = int(v),
            "prev_prio" => prev_prio = int(v),
            "prev_state" => prev_state = TaskState::parse(v.trim_end_matches("==>")),
            "next_comm" => next_comm = Some(v),
            "next_pid" => next_pid = int(v),
            "next_prio" => next_prio = int(v),
            _ => {}
        }
    }
    Some(EventKind::SchedSwitch {
        prev_comm: prev_comm?,
        prev_pid: prev_pid?,
        prev_prio: Some(prev_prio?),
        prev_state,
        next_comm: next_comm?,
        next_pid: next_pid?,
        next_prio: Some(next_prio?),
    })
}

/// trace-cmd's sched_switch plugin: `prev:4734 [120] R ==> next:18 [0]`.
fn sched_switch_plugin(p: &str) -> Option<EventKind<'_>> {
    let (prev, next) = p.split_once(" ==> ")?;
    let (prev_comm, prev_pid, prev_prio, state) = plugin_task(prev)?;
    let (next_comm, next_pid, next_prio, _) = plugin_task(next)?;
    Some(EventKind::SchedSwitch {
        prev_comm,
        prev_pid,
        prev_prio: Some(prev_prio),
        prev_state: TaskState::parse(state),
        next_comm,
        next_pid,
        next_prio: Some(next_prio),
    })
}

/// `comm:pid [prio] rest` as trace-cmd's plugins print a task; the comm may contain `:`.
fn plugin_task(s: &str) -> Option<(&str, i32, i32, &str)> {
    let s = s.trim_ascii();
    let open = s.rfind(" [")?;
    let close = open + s[open..].find(']')?;
    let (comm, pid) = s[..open].rsplit_once(':')?;
    let prio = int(&s[open + 2..close])?;
    Some((comm, int(pid)?, prio, s[close + 1..].trim_ascii()))
}

/// sched_waking / sched_wakeup / sched_wakeup_new in kernel or plugin form.
fn wakeup(p: &str) -> Option<(&str, i32, i32, Option<u32>)> {
    if !p.starts_with("comm=") {
        let (comm, pid, prio, rest) = plugin_task(p)?;
        let cpu = rest.rsplit_once("CPU:").and_then(|(_, c)| uint(c));
        return Some((comm, pid, prio, cpu));
    }
    wakeup_kernel(p).or_else(|| wakeup_fields(p))
}

/// The kernel's format: `comm=%s pid=%d prio=%d target_cpu=%03d` (older kernels put
/// `success=%d` before `target_cpu`, Android kernels add `state=W` after it).
fn wakeup_kernel(p: &str) -> Option<(&str, i32, i32, Option<u32>)> {
    let mut c = Cursor(p.strip_prefix("comm=")?);
    let comm = c.until(" pid=")?;
    let pid = int(c.until(" prio=")?)?;
    let Some(prio) = c.until(" ") else {
        return Some((comm, pid, int(c.0)?, None));
    };
    let cpu = c
        .until("target_cpu=")
        .and_then(|_| uint(c.0.split_ascii_whitespace().next()?));
    Some((comm, pid, int(prio)?, cpu))
}

fn wakeup_fields(p: &str) -> Option<(&str, i32, i32, Option<u32>)> {
    let (mut comm, mut pid, mut prio, mut cpu) = (None, None, None, None);
    for (k, v) in Fields::new(p).iter() {
        match k {
            "comm" => comm = Some(v),
            "pid" => pid = int(v),
            "prio" => prio = int(v),
            "target_cpu" => cpu = uint(v),
            _ => {}
        }
    }
    Some((comm?, pid?, prio?, cpu))
}

/// The kernel's `comm=%s pid=%d prio=%d orig_cpu=%d dest_cpu=%d`, else any `key=value` form.
fn migrate(p: &str) -> Option<EventKind<'_>> {
    let [comm, pid, prio, orig_cpu, dest_cpu] =
        in_order(p, ["comm=", " pid=", " prio=", " orig_cpu=", " dest_cpu="]).or_else(|| {
            let f = Fields::new(p);
            Some([
                f.get("comm")?,
                f.get("pid")?,
                f.get("prio")?,
                f.get("orig_cpu")?,
                f.get("dest_cpu")?,
            ])
        })?;
    Some(EventKind::SchedMigrateTask {
        comm,
        pid: int(pid)?,
        prio: int(prio)?,
        orig_cpu: uint(orig_cpu)?,
        dest_cpu: uint(dest_cpu)?,
    })
}

/// The kernel's `comm=%s pid=%d child_comm=%s child_pid=%d`; raw printers name the first two
/// fields `parent_comm`/`parent_pid`, as the event's format does.
fn fork(p: &str) -> Option<EventKind<'_>> {
    let [parent_comm, parent_pid, child_comm, child_pid] =
        in_order(p, ["comm=", " pid=", " child_comm=", " child_pid="]).or_else(|| {
            let f = Fields::new(p);
            Some([
                f.get("comm").or_else(|| f.get("parent_comm"))?,
                f.get("pid").or_else(|| f.get("parent_pid"))?,
                f.get("child_comm")?,
                f.get("child_pid")?,
            ])
        })?;
    Some(EventKind::SchedProcessFork {
        parent_comm,
        parent_pid: int(parent_pid)?,
        child_comm,
        child_pid: int(child_pid)?,
    })
}

/// The kernel's `comm=%s pid=%d prio=%d` (newer kernels add `group_dead=`).
fn process_exit(p: &str) -> Option<EventKind<'_>> {
    let [comm, pid, prio] = in_order(p, ["comm=", " pid=", " prio="]).or_else(|| {
        let f = Fields::new(p);
        Some([f.get("comm")?, f.get("pid")?, f.get("prio")?])
    })?;
    Some(EventKind::SchedProcessExit {
        comm,
        pid: int(pid)?,
        prio: int(prio)?,
    })
}

/// The values of a payload printed with exactly these keys in this order, as a kernel print
/// format prints them (`keys[0]` starts the payload, the others come with their leading
/// blank). Each value runs to the next key of the list, not to the next blank or `key=`, so a
/// task name holding blanks, colons or `=` (`comm=tmux: server`, `comm=a=b`) stays whole. The
/// last value is a number and ends at a blank: newer kernels may print more fields after it.
fn in_order<'a, const N: usize>(p: &'a str, keys: [&str; N]) -> Option<[&'a str; N]> {
    let mut c = Cursor(p.strip_prefix(keys[0])?);
    let mut values = [""; N];
    for i in 1..N {
        values[i - 1] = c.until(keys[i])?;
    }
    values[N - 1] = c.0.split_ascii_whitespace().next()?;
    Some(values)
}

fn irq_entry(p: &str) -> Option<EventKind<'_>> {
    let f = Fields::new(p);
    Some(EventKind::IrqHandlerEntry {
        irq: uint(f.get("irq")?)?,
        name: f.get("name").unwrap_or(""),
    })
}

fn irq_exit(p: &str) -> Option<EventKind<'_>> {
    let f = Fields::new(p);
    Some(EventKind::IrqHandlerExit {
        irq: uint(f.get("irq")?)?,
        // `ret=handled` as the kernel prints it, `ret=1` raw.
        handled: matches!(f.get("ret"), Some("handled" | "1")),
    })
}

/// `vec=1 [action=TIMER]`: the bracket hides `action` from the field splitter. Raw printers
/// give only `vec=1`; the names then come from the kernel's fixed softirq numbering.
fn softirq(p: &str) -> Option<(u32, &str)> {
    let rest = p.strip_prefix("vec=")?;
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    let vec = uint(&rest[..digits])?;
    // The kernel's ` [action=` straight after the number is checked first: the general
    // search's set-up cost more than the rest of the decoding.
    let after = (rest[digits..].strip_prefix(" [action="))
        .or_else(|| rest.split_once("action=").map(|(_, a)| a));
    let action = match after {
        Some(a) => a.trim_ascii_end().trim_end_matches(']'),
        None => SOFTIRQ_NAMES.get(vec as usize).copied().unwrap_or(""),
    };
    Some((vec, action))
}

/// `enum { HI_SOFTIRQ = 0, TIMER_SOFTIRQ, … }`, unchanged since 2.6.
const SOFTIRQ_NAMES: [&str; 10] = [
    "HI", "TIMER", "NET_TX", "NET_RX", "BLOCK", "IRQ_POLL", "TASKLET", "SCHED", "HRTIMER", "RCU",
];

/// `hrtimer=%p function=%ps expires=%llu softexpires=%llu`, then `mode=` and `was_armed=` on
/// newer kernels: the kernel's order is read straight, anything else field by field.
fn hrtimer_start(p: &str) -> Option<EventKind<'_>> {
    let Some([hrtimer, function, expires, softexpires]) =
        in_kernel_order(p, ["hrtimer", "function", "expires", "softexpires"])
    else {
        return hrtimer_start_fields(p);
    };
    Some(EventKind::HrtimerStart {
        hrtimer: hex(hrtimer)?,
        function: symbol(function),
        expires: expires.parse().ok()?,
        softexpires: softexpires.parse().unwrap_or(0),
    })
}

/// One pass over the fields (every timer interrupt prints several of these events, so a
/// lookup per field would scan the payload four times).
fn hrtimer_start_fields(p: &str) -> Option<EventKind<'_>> {
    let (mut hrtimer, mut function, mut expires, mut softexpires) = (None, "", None, 0);
    for (k, v) in Fields::new(p).iter() {
        match k {
            "hrtimer" => hrtimer = hex(v),
            "function" => function = symbol(v),
            "expires" => expires = v.trim_ascii().parse().ok(),
            "softexpires" => softexpires = v.trim_ascii().parse().unwrap_or(0),
            _ => {}
        }
    }
    Some(EventKind::HrtimerStart {
        hrtimer: hrtimer?,
        function,
        expires: expires?,
        softexpires,
    })
}

/// `hrtimer=%p now=%llu function=%ps`, or `hrtimer=%p function=%ps now=%llu` as newer kernels
/// print it (this project's recordings, 6.18: without it the walk ran for every timer
/// interrupt), read like [`hrtimer_start`].
fn hrtimer_expire_entry(p: &str) -> Option<EventKind<'_>> {
    let straight = match in_kernel_order(p, ["hrtimer", "function", "now"]) {
        Some([hrtimer, function, now]) => Some([hrtimer, now, function]),
        None => in_kernel_order(p, ["hrtimer", "now", "function"]),
    };
    let Some([hrtimer, now, function]) = straight else {
        return hrtimer_expire_entry_fields(p);
    };
    Some(EventKind::HrtimerExpireEntry {
        hrtimer: hex(hrtimer)?,
        now: now.parse().ok()?,
        function: symbol(function),
    })
}

fn hrtimer_expire_entry_fields(p: &str) -> Option<EventKind<'_>> {
    let (mut hrtimer, mut now, mut function) = (None, None, "");
    for (k, v) in Fields::new(p).iter() {
        match k {
            "hrtimer" => hrtimer = hex(v),
            "now" => now = v.trim_ascii().parse().ok(),
            "function" => function = symbol(v),
            _ => {}
        }
    }
    Some(EventKind::HrtimerExpireEntry {
        hrtimer: hrtimer?,
        now: now?,
        function,
    })
}

/// The values of `keys` when `p` prints exactly them, in this order, one space apart, each
/// value free of white space, then nothing or fields of other names; else `None`. Wherever it
/// answers, the general walk ([`Fields`]) gives the same values (a timer interrupt prints
/// several of these events, and the walk's search for each next key is most of their cost).
fn in_kernel_order<'a, const N: usize>(p: &'a str, keys: [&str; N]) -> Option<[&'a str; N]> {
    let mut values = [""; N];
    let mut rest = p;
    for (i, key) in keys.iter().enumerate() {
        if i > 0 {
            rest = rest.strip_prefix(' ')?;
        }
        rest = rest.strip_prefix(key)?.strip_prefix('=')?;
        let end = rest
            .bytes()
            .position(|b| b.is_ascii_whitespace())
            .unwrap_or(rest.len());
        values[i] = &rest[..end];
        rest = &rest[end..];
    }
    let Some(tail) = rest.strip_prefix(' ') else {
        return rest.is_empty().then_some(values);
    };
    // The last value ends where another field starts, and none of `keys` comes again.
    let next_key = tail
        .bytes()
        .take_while(|&b| b.is_ascii_alphanumeric() || b == b'_');
    let starts_field = tail.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && tail.as_bytes().get(next_key.count()) == Some(&b'=');
    let repeated = |k: &&str| contains(tail.as_bytes(), k.as_bytes());
    (starts_field && !keys.iter().any(repeated)).then_some(values)
}

/// Whether `needle` (not empty) occurs in `hay`. Tails are a few words long: a search from
/// each occurrence of the first byte beats `memmem`, whose set-up cost is paid per call.
fn contains(hay: &[u8], needle: &[u8]) -> bool {
    memchr::memchr_iter(needle[0], hay).any(|i| hay[i..].starts_with(needle))
}

/// A callback's name: `trace-cmd report`'s hrtimer plugin prints `hrtimer_wakeup/0x0` where
/// the kernel prints `hrtimer_wakeup`.
fn symbol(v: &str) -> &str {
    memchr::memchr(b'/', v.as_bytes()).map_or(v, |at| &v[..at])
}

fn hrtimer_ptr(p: &str) -> Option<u64> {
    match in_kernel_order(p, ["hrtimer"]) {
        Some([hrtimer]) => hex(hrtimer),
        None => hex(Fields::new(p).get("hrtimer")?),
    }
}

/// x86 `irq_vectors` events: `local_timer_entry: vector=236`, `reschedule_exit: vector=253`…
fn irq_vector<'a>(name: &'a str, p: &'a str) -> Option<EventKind<'a>> {
    let vector = p.strip_prefix("vector=").map(uint);
    let vector = vector?;
    if let Some(v) = name.strip_suffix("_entry") {
        return Some(EventKind::IrqVectorEntry(IrqVector { name: v, vector }));
    }
    name.strip_suffix("_exit")
        .map(|v| EventKind::IrqVectorExit(IrqVector { name: v, vector }))
}

/// `target_mask=… (Function call interrupts)` → `Function call interrupts`; raw printers give
/// `reason=Function call interrupts`.
fn ipi_reason(p: &str) -> &str {
    if let Some((_, r)) = p.split_once("reason=") {
        return r.trim_ascii();
    }
    match (p.rfind('('), p.rfind(')')) {
        (Some(a), Some(b)) if a < b => &p[a + 1..b],
        _ => p.trim_ascii(),
    }
}

fn caller(p: &str) -> Option<(&str, &str)> {
    let f = Fields::new(p);
    Some((f.get("caller")?, f.get("parent").unwrap_or("")))
}

/// `work struct=0000… function=f workqueue=wq req_cpu=1 cpu=1` (newer kernels),
/// `work struct 0000…: function f` (older ones and execute_start/end) or `work=0x… function=f`
/// (raw printers).
fn work(p: &str) -> Option<(u64, &str)> {
    let rest = p
        .strip_prefix("work struct")
        .or_else(|| p.strip_prefix("work="))?;
    let rest = rest.trim_start_matches([' ', '=']);
    let end = rest.find([' ', ':']).unwrap_or(rest.len());
    let work = hex(&rest[..end])?;
    let function = rest
        .split_once("function")
        .map(|(_, f)| {
            let f = f.trim_start_matches([' ', '=']);
            f.split(' ').next().unwrap_or("")
        })
        .unwrap_or("");
    Some((work, function))
}

fn queue_work(p: &str) -> Option<EventKind<'_>> {
    let (work, function) = work(p)?;
    let f = Fields::new(p);
    Some(EventKind::WorkqueueQueueWork {
        work,
        function,
        workqueue: f.get("workqueue").unwrap_or(""),
        req_cpu: f.get("req_cpu").and_then(uint),
        cpu: f.get("cpu").and_then(uint),
    })
}

fn marker(kind: MarkerKind, text: &str) -> EventKind<'_> {
    EventKind::Marker {
        kind,
        text: text.trim_ascii_end(),
    }
}

/// `print`, `bprint` and `bputs` are printed as `ip: text` (their print format is `%ps: %s`):
/// the caller's symbol from the kernel (`tracing_mark_write: …` for trace_marker writes), or a
/// raw address from trace-cmd (`0xc042f8a0f: …`). The ip is dropped.
fn strip_ip(p: &str) -> &str {
    match p.split_once(": ") {
        Some((ip, text)) if !ip.is_empty() && !ip.contains(' ') => text,
        _ => p,
    }
}

/// `NR 172 (29, c350, …)`.
fn sys_enter(p: &str) -> Option<EventKind<'_>> {
    let rest = p.strip_prefix("NR ")?;
    let nr = rest.split(' ').next()?.parse().ok()?;
    Some(EventKind::SysEnter { nr })
}

/// `NR 172 = 0`.
fn sys_exit(p: &str) -> Option<EventKind<'_>> {
    let (nr, ret) = p.strip_prefix("NR ")?.split_once(" = ")?;
    Some(EventKind::SysExit {
        nr: nr.trim_ascii().parse().ok()?,
        ret: ret.trim_ascii().parse().ok()?,
    })
}

/// `do_nanosleep <-hrtimer_nanosleep`.
fn function(p: &str) -> Option<EventKind<'_>> {
    let (function, parent) = p.split_once(" <-").unwrap_or((p, ""));
    Some(EventKind::Function {
        function: function.trim_ascii(),
        parent: parent.trim_ascii(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Payloads near the kernel's hrtimer formats: every order, spacing and extra field the
    /// straight read must either read as the general walk does or leave to it.
    fn hrtimer_payloads() -> Vec<String> {
        let values = ["ffff8881f9a1e0e8", "0xffffc90005e73c58", "x1", ""];
        let functions = [
            "hrtimer_wakeup",
            "hrtimer_wakeup/0x0",
            "timer_callback [irq_noise]",
        ];
        let tails = [
            "",
            " ",
            " mode=ABS|PINNED|HARD was_armed=0",
            " mode=ABS",
            "  mode=ABS",
            " 7 mode=ABS",
            " mode=ABS hrtimer=ffff1",
            " now=5",
            "\tmode=ABS",
            " =5",
            " 9x=1",
        ];
        let mut out = Vec::new();
        for v in values {
            for f in functions {
                for t in tails {
                    out.push(format!(
                        "hrtimer={v} function={f} expires=1000 softexpires=990{t}"
                    ));
                    out.push(format!(
                        "hrtimer={v} function={f} expires=10x0 softexpires=9{t}"
                    ));
                    out.push(format!(
                        "hrtimer={v}  function={f} expires=1000 softexpires=990{t}"
                    ));
                    out.push(format!(
                        "function={f} hrtimer={v} expires=1000 softexpires=990{t}"
                    ));
                    out.push(format!("hrtimer={v} now=130508000123 function={f}{t}"));
                    out.push(format!("hrtimer={v} function={f} now=130508000123{t}"));
                    out.push(format!("hrtimer={v} function={f} now=1305x{t}"));
                    out.push(format!("hrtimer={v} now=13050800012\r function={f}{t}"));
                    out.push(format!("   hrtimer={v} now=1 function={f}{t}"));
                    out.push(format!("hrtimer={v}{t}"));
                }
            }
        }
        out
    }

    #[test]
    fn hrtimer_events_read_straight_as_field_by_field() {
        for p in hrtimer_payloads() {
            assert_eq!(hrtimer_start(&p), hrtimer_start_fields(&p), "{p:?}");
            assert_eq!(
                hrtimer_expire_entry(&p),
                hrtimer_expire_entry_fields(&p),
                "{p:?}"
            );
            let by_field = Fields::new(&p).get("hrtimer").and_then(hex);
            assert_eq!(hrtimer_ptr(&p), by_field, "{p:?}");
        }
    }

    /// Pointers as printers write them, with or without `0x`, in either case of digit and
    /// padded with blanks; anything else, or more than 64 bits, is no pointer.
    #[test]
    fn hex_pointers() {
        let cases = [
            ("ffff8881f9a1e0e8", Some(0xffff_8881_f9a1_e0e8)),
            ("FFFF8881F9A1E0E8", Some(0xffff_8881_f9a1_e0e8)),
            ("0xffffc90005e73c58", Some(0xffff_c900_05e7_3c58)),
            ("00000000ed69ee9d", Some(0xed69_ee9d)),
            ("0", Some(0)),
            ("00", Some(0)),
            ("0x", None),
            ("", None),
            (" ", None),
            ("+", None),
            ("+1f", Some(0x1f)),
            ("0x+1f", Some(0x1f)),
            ("-1", None),
            ("0x-1", None),
            ("g", None),
            ("1g", None),
            ("ffffffffffffffff", Some(u64::MAX)),
            ("10000000000000000", None),
            ("000000000000000000000001", Some(1)),
            (" 1a ", Some(0x1a)),
            ("0X1a", None),
            ("1 a", None),
            ("é1", None),
        ];
        for (text, want) in cases {
            assert_eq!(hex(text), want, "{text:?}");
        }
    }

    /// The kernel's form, raw printers' and odd spacings name the same action.
    #[test]
    fn softirq_actions() {
        let cases = [
            ("vec=1 [action=TIMER]", Some((1, "TIMER"))),
            ("vec=7 [action=SCHED] ", Some((7, "SCHED"))),
            ("vec=9 action=RCU", Some((9, "RCU"))),
            ("vec=3  [action=NET_RX]", Some((3, "NET_RX"))),
            ("vec=1 [action=]", Some((1, ""))),
            ("vec=9", Some((9, "RCU"))),
            ("vec=12", Some((12, ""))),
            ("vec=x [action=TIMER]", None),
        ];
        for (payload, want) in cases {
            assert_eq!(softirq(payload), want, "{payload:?}");
        }
    }

    #[test]
    fn the_kernels_hrtimer_order_is_read_straight() {
        let p = "hrtimer=ffff8881f9a1e0e8 function=hrtimer_wakeup expires=1000 softexpires=990 mode=ABS was_armed=0";
        let keys = ["hrtimer", "function", "expires", "softexpires"];
        let got = in_kernel_order(p, keys);
        assert_eq!(
            got,
            Some(["ffff8881f9a1e0e8", "hrtimer_wakeup", "1000", "990"])
        );
        assert_eq!(in_kernel_order("hrtimer=ab", ["hrtimer"]), Some(["ab"]));
        // A callback named with its module, or a key printed again, is left to the walk.
        let module = "hrtimer=ab now=1 function=timer_callback [irq_noise]";
        assert_eq!(
            in_kernel_order(module, ["hrtimer", "now", "function"]),
            None
        );
        assert_eq!(
            in_kernel_order("hrtimer=ab mode=A hrtimer=cd", ["hrtimer"]),
            None
        );
        // Anywhere in the tail, even inside another field's value or at its very end.
        let inside = "hrtimer=ab mode=A note=xhrtimer";
        assert_eq!(in_kernel_order(inside, ["hrtimer"]), None);
        let start = "hrtimer=ab now=1 function=f mode=ABS was_armed=0";
        assert_eq!(
            in_kernel_order(start, ["hrtimer", "now", "function"]),
            Some(["ab", "1", "f"])
        );
    }

    #[test]
    fn contains_finds_a_needle_anywhere_and_only_whole() {
        let hay = b"mode=ABS was_armed=0";
        for (needle, found) in [
            (&b"mode"[..], true),
            (b"armed=0", true),
            (b"=0", true),
            (b"armed=1", false),
            (b"expires", false),
            (b"mode=ABS was_armed=0 ", false),
        ] {
            assert_eq!(contains(hay, needle), found, "{needle:?}");
        }
    }

    /// `trace-cmd report`'s plugin form (tests/fixtures/recorded/variants/report.txt line
    /// 2873) names the callback as the kernel does.
    #[test]
    fn plugin_hrtimer_callbacks_are_named_as_the_kernel_names_them() {
        let k = decode(
            "hrtimer_expire_entry",
            "hrtimer=0xffffc90005e73c58 now=633204075709 function=hrtimer_wakeup/0x0",
        );
        assert!(
            matches!(
                k,
                EventKind::HrtimerExpireEntry {
                    function: "hrtimer_wakeup",
                    now: 633204075709,
                    ..
                }
            ),
            "{k:?}"
        );
    }

    #[test]
    fn kernel_sched_switch_with_spaces_in_comm() {
        let k = decode(
            "sched_switch",
            "prev_comm=Web Content prev_pid=2711 prev_prio=120 prev_state=S ==> next_comm=CompositorTileW next_pid=3490 next_prio=120",
        );
        assert_eq!(
            k,
            EventKind::SchedSwitch {
                prev_comm: "Web Content",
                prev_pid: 2711,
                prev_prio: Some(120),
                prev_state: TaskState::Sleeping,
                next_comm: "CompositorTileW",
                next_pid: 3490,
                next_prio: Some(120)
            }
        );
    }

    /// Task names with blanks, colons and `=` in every payload field that holds one, read by
    /// the field order of the kernel's print formats.
    #[test]
    fn task_names_with_blanks_colons_and_equals() {
        assert_eq!(
            decode("sched_switch", "prev_comm=tmux: server prev_pid=1613 prev_prio=120 prev_state=S ==> next_comm=kworker/0:1 H next_pid=1217 next_prio=100"),
            EventKind::SchedSwitch {
                prev_comm: "tmux: server",
                prev_pid: 1613,
                prev_prio: Some(120),
                prev_state: TaskState::Sleeping,
                next_comm: "kworker/0:1 H",
                next_pid: 1217,
                next_prio: Some(100)
            }
        );
        assert_eq!(
            decode(
                "sched_wakeup",
                "comm=rs:main Q:Reg pid=1769 prio=120 success=1 target_cpu=001"
            ),
            EventKind::SchedWakeup {
                comm: "rs:main Q:Reg",
                pid: 1769,
                prio: 120,
                target_cpu: Some(1)
            }
        );
        assert_eq!(
            decode(
                "sched_migrate_task",
                "comm=a=b: c pid=7 prio=120 orig_cpu=0 dest_cpu=3"
            ),
            EventKind::SchedMigrateTask {
                comm: "a=b: c",
                pid: 7,
                prio: 120,
                orig_cpu: 0,
                dest_cpu: 3
            }
        );
        assert_eq!(
            decode(
                "sched_process_fork",
                "comm=tmux: server pid=1613 child_comm=tmux: server child_pid=1700"
            ),
            EventKind::SchedProcessFork {
                parent_comm: "tmux: server",
                parent_pid: 1613,
                child_comm: "tmux: server",
                child_pid: 1700
            }
        );
        assert_eq!(
            decode(
                "sched_process_exit",
                "comm=AsyncTask #1 pid=32365 prio=130 group_dead=true"
            ),
            EventKind::SchedProcessExit {
                comm: "AsyncTask #1",
                pid: 32365,
                prio: 130
            }
        );
        // Raw printers name the fork's parent fields as the event format does.
        assert_eq!(
            decode(
                "sched_process_fork",
                "parent_comm=bash parent_pid=2438 child_comm=bash child_pid=2442"
            ),
            EventKind::SchedProcessFork {
                parent_comm: "bash",
                parent_pid: 2438,
                child_comm: "bash",
                child_pid: 2442
            }
        );
    }

    #[test]
    fn raw_and_plugin_sched_switch() {
        let raw = decode("sched_switch", "prev_comm=trace-cmd prev_pid=4734 prev_prio=120 prev_state=1024 next_comm=migration/2 next_pid=18 next_prio=0");
        let plugin = decode(
            "sched_switch",
            "trace-cmd:4734 [120] R+ ==> migration/2:18 [0]",
        );
        for k in [raw, plugin] {
            let EventKind::SchedSwitch {
                prev_pid,
                prev_state,
                next_comm,
                next_pid,
                next_prio,
                ..
            } = k
            else {
                panic!("{k:?}")
            };
            assert_eq!(
                (prev_pid, prev_state, next_comm, next_pid, next_prio),
                (4734, TaskState::Preempted, "migration/2", 18, Some(0))
            );
        }
    }

    #[test]
    fn wakeups() {
        assert_eq!(
            decode(
                "sched_waking",
                "comm=Binder:549_4 pid=2029 prio=120 success=1 target_cpu=000"
            ),
            EventKind::SchedWaking {
                comm: "Binder:549_4",
                pid: 2029,
                prio: 120,
                target_cpu: Some(0)
            }
        );
        // Android kernels print the woken task's state after the target CPU.
        assert_eq!(
            decode(
                "sched_wakeup",
                "comm=Binder_5 pid=1158 prio=120 success=1 target_cpu=002 state=W|m"
            ),
            EventKind::SchedWakeup {
                comm: "Binder_5",
                pid: 1158,
                prio: 120,
                target_cpu: Some(2)
            }
        );
        assert_eq!(
            decode("sched_wakeup", "kworker/u12:1:46 [120] success=1 CPU:002"),
            EventKind::SchedWakeup {
                comm: "kworker/u12:1",
                pid: 46,
                prio: 120,
                target_cpu: Some(2)
            }
        );
    }

    #[test]
    fn interrupts_and_timers() {
        assert_eq!(
            decode("irq_handler_entry", "irq=28 name=radeon"),
            EventKind::IrqHandlerEntry {
                irq: 28,
                name: "radeon"
            }
        );
        assert_eq!(
            decode("irq_handler_exit", "irq=28 ret=handled"),
            EventKind::IrqHandlerExit {
                irq: 28,
                handled: true
            }
        );
        assert_eq!(
            decode("softirq_entry", "vec=1 [action=TIMER]"),
            EventKind::SoftirqEntry {
                vec: 1,
                action: "TIMER"
            }
        );
        assert_eq!(
            decode("hrtimer_start", "hrtimer=ffffaf6e0126bd18 function=hrtimer_wakeup expires=26193635601343 softexpires=26193635551343 mode=ABS"),
            EventKind::HrtimerStart { hrtimer: 0xffffaf6e0126bd18, function: "hrtimer_wakeup", expires: 26193635601343, softexpires: 26193635551343 }
        );
        assert_eq!(
            decode(
                "hrtimer_expire_entry",
                "hrtimer=00000000a1b2 now=130508000123 function=timer_callback [irq_noise]"
            ),
            EventKind::HrtimerExpireEntry {
                hrtimer: 0xa1b2,
                now: 130508000123,
                function: "timer_callback [irq_noise]"
            }
        );
        assert_eq!(
            decode("local_timer_entry", "vector=236"),
            EventKind::IrqVectorEntry(IrqVector {
                name: "local_timer",
                vector: Some(236)
            })
        );
        assert_eq!(
            decode("ipi_entry", "(Rescheduling interrupts)"),
            EventKind::IpiEntry {
                reason: "Rescheduling interrupts"
            }
        );
        assert_eq!(
            decode(
                "irq_disable",
                "caller=_raw_spin_lock_irqsave+0x1d/0x60 parent=console_unlock+0x10/0x40"
            ),
            EventKind::IrqDisable {
                caller: "_raw_spin_lock_irqsave+0x1d/0x60",
                parent: "console_unlock+0x10/0x40"
            }
        );
    }

    #[test]
    fn workqueue_both_generations() {
        assert_eq!(
            decode("workqueue_queue_work", "work struct=000000002b1a0c2a function=vmstat_update workqueue=mm_percpu_wq req_cpu=1 cpu=1"),
            EventKind::WorkqueueQueueWork { work: 0x2b1a0c2a, function: "vmstat_update", workqueue: "mm_percpu_wq", req_cpu: Some(1), cpu: Some(1) }
        );
        assert_eq!(
            decode(
                "workqueue_execute_start",
                "work struct 000000002b1a0c2a: function vmstat_update"
            ),
            EventKind::WorkqueueExecuteStart {
                work: 0x2b1a0c2a,
                function: "vmstat_update"
            }
        );
    }

    #[test]
    fn markers_and_syscalls() {
        assert_eq!(
            decode("tracing_mark_write", "hit latency threshold (3157 > 100)"),
            EventKind::Marker {
                kind: MarkerKind::TracingMarkWrite,
                text: "hit latency threshold (3157 > 100)"
            }
        );
        assert_eq!(
            decode(
                "bprint",
                "0xc042f8a0f: thermal_gpu_power_get: frequency=420 load=91"
            ),
            EventKind::Marker {
                kind: MarkerKind::Bprint,
                text: "thermal_gpu_power_get: frequency=420 load=91"
            }
        );
        assert_eq!(
            decode("print", "tracing_mark_write: fifo_burst start 300"),
            EventKind::Marker {
                kind: MarkerKind::Print,
                text: "fifo_burst start 300"
            }
        );
        assert_eq!(
            decode("sys_enter", "NR 172 (29, c350, 805)"),
            EventKind::SysEnter { nr: 172 }
        );
        assert_eq!(
            decode("sys_exit", "NR 96 = 20"),
            EventKind::SysExit { nr: 96, ret: 20 }
        );
        assert_eq!(decode("sched_switch", "garbage"), EventKind::Other);
    }
}
