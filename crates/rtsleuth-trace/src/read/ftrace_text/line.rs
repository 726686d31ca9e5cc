//! One line of ftrace text: an event, or one of the other things traces contain.
//!
//! An event line is `comm-pid [tgid] [cpu] flags timestamp: name: payload` in one of its
//! variants; the latency format is `comm-pid cpuflags timestamp-us marker: name: payload`;
//! `perf script` prints `comm tid [cpu] timestamp: system:name: payload` ([`super::perf_line`]).

use super::{payload, perf_line, rtla};
use crate::event::{possible_cpu, Event, EventKind, FlagLayout, Flags, Timestamp, MAX_CPUS};
use crate::read::Decode;

/// What a line turned out to be.
#[derive(Debug, PartialEq)]
pub enum Line<'a> {
    /// An event, and how its timestamp was printed.
    Event(Event<'a>, TimestampUnit),
    /// `CPU:1 [LOST 123 EVENTS]`: the ring buffer dropped events on that CPU here.
    Lost {
        cpu: Option<u32>,
        count: Option<u64>,
    },
    /// `##### CPU 2 buffer started ####`: earlier events of that CPU were overwritten.
    BufferStarted {
        cpu: u32,
    },
    Other(NonEvent),
}

/// Lines that carry no event. They are counted, never silently dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum NonEvent {
    Blank,
    /// `#` comments and the column header.
    Comment,
    /// `version = 6`, `cpus=4`, `CPU 3 is empty` from `trace-cmd report`.
    TraceCmdHeader,
    /// `[...]` or `...`: someone cut lines out when pasting.
    Elided,
    /// ` => function` lines of a `<stack trace>`, and the callchain lines under a `perf script`
    /// sample recorded with `-g`.
    StackFrame,
    /// `perf script`'s side-band records (`PERF_RECORD_COMM`, `PERF_RECORD_MMAP`…): perf's own
    /// bookkeeping, printed with `--show-*-events`.
    PerfRecord,
    /// What `atrace` prints before the trace: `capturing trace... done`, then `TRACE:`.
    AtracePreamble,
    /// Anything else: not a line rtsleuth understands.
    Unparsed,
}

impl NonEvent {
    pub const ALL: [NonEvent; 8] = [
        NonEvent::Blank,
        NonEvent::Comment,
        NonEvent::TraceCmdHeader,
        NonEvent::Elided,
        NonEvent::StackFrame,
        NonEvent::PerfRecord,
        NonEvent::AtracePreamble,
        NonEvent::Unparsed,
    ];

    /// The name used in reports and JSON.
    pub fn key(self) -> &'static str {
        match self {
            NonEvent::Blank => "blank",
            NonEvent::Comment => "comment",
            NonEvent::TraceCmdHeader => "trace_cmd_header",
            NonEvent::Elided => "elided",
            NonEvent::StackFrame => "stack_frame",
            NonEvent::PerfRecord => "perf_record",
            NonEvent::AtracePreamble => "atrace_preamble",
            NonEvent::Unparsed => "unparsed",
        }
    }
}

/// How the lines of this trace are laid out (from its header) and what to decode.
#[derive(Debug, Clone, Copy)]
pub struct LineContext {
    pub flag_layout: Option<FlagLayout>,
    pub decode: Decode,
}

impl Default for LineContext {
    fn default() -> Self {
        LineContext {
            flag_layout: None,
            decode: Decode::Everything,
        }
    }
}

impl LineContext {
    /// Decodes a flag field with the header's layout, or by its width when the header said
    /// nothing or does not fit this field. Inlined with [`Flags::parse`] so that the flags are
    /// built where the line keeps them: returned through the stack and copied on, a copy read
    /// them in wider loads than they were written in, and stalled on store forwarding.
    #[inline(always)]
    fn flags(&self, field: &[u8]) -> Option<Flags> {
        if let Some(f) = self.flag_layout.and_then(|l| Flags::parse(field, l)) {
            return Some(f);
        }
        Flags::parse(field, FlagLayout::for_width(field.len()))
    }
}

/// Classifies and parses one line (without its newline).
pub fn parse_line<'a>(line: &'a str, ctx: &LineContext) -> Line<'a> {
    let line = line.strip_suffix('\r').unwrap_or(line);
    let t = line.trim_ascii_start();
    let Some(&first) = t.as_bytes().first() else {
        return Line::Other(NonEvent::Blank);
    };
    if first == b'#' {
        if t.starts_with("#####") && t.contains("buffer started") {
            match first_number(t) {
                Some(cpu) if possible_cpu(cpu) => return Line::BufferStarted { cpu: cpu as u32 },
                Some(_) => return Line::Other(NonEvent::Unparsed),
                None => {}
            }
        }
        return Line::Other(NonEvent::Comment);
    }
    parse_event(t, ctx).unwrap_or_else(|| classify_other(t))
}

fn classify_other(t: &str) -> Line<'_> {
    let t = t.trim_ascii_end();
    if t.starts_with("=>") || perf_line::is_callchain_frame(t) {
        return Line::Other(NonEvent::StackFrame);
    }
    if t == "[...]" || (t.len() >= 3 && t.bytes().all(|b| b == b'.')) {
        return Line::Other(NonEvent::Elided);
    }
    if t.contains("[LOST") || t.contains("EVENTS DROPPED") {
        let cpu = t.strip_prefix("CPU:").and_then(first_number);
        if cpu.is_some_and(|c| !possible_cpu(c)) {
            return Line::Other(NonEvent::Unparsed);
        }
        let count = t.split_once('[').and_then(|(_, rest)| first_number(rest));
        return Line::Lost {
            cpu: cpu.map(|c| c as u32),
            count,
        };
    }
    if t.starts_with("version =")
        || t.starts_with("cpus=")
        || (t.starts_with("CPU") && (t.ends_with(" is empty") || t.contains("data recorded at")))
    {
        return Line::Other(NonEvent::TraceCmdHeader);
    }
    if t == "TRACE:" || t.starts_with("capturing trace...") {
        return Line::Other(NonEvent::AtracePreamble);
    }
    Line::Other(NonEvent::Unparsed)
}

/// The first run of decimal digits in `s`.
fn first_number(s: &str) -> Option<u64> {
    let start = s.find(|c: char| c.is_ascii_digit())?;
    let digits = &s[start..];
    let end = digits
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(digits.len());
    digits[..end].parse().ok()
}

/// The common part of an event line, before `: name: payload`.
struct Prefix<'a> {
    comm: &'a str,
    pid: i32,
    tgid: Option<i32>,
    cpu: u32,
    flags: Flags,
    ts: Timestamp,
    unit: TimestampUnit,
    /// The task was printed `comm tid`: the line is perf script's, and its event is
    /// `system:name`.
    perf: bool,
}

impl<'a> Prefix<'a> {
    /// Completes a prefix from the `comm-pid`, with or without `(tgid)`, or perf's `comm tid`,
    /// before the CPU column. Inlined for the reason [`split_prefix`] gives.
    #[inline(always)]
    fn new(
        task: &'a str,
        cpu: u32,
        flags: Flags,
        (ts, unit): (Timestamp, TimestampUnit),
    ) -> Option<Self> {
        // A CPU no kernel has is a damaged line, not an event (see [`MAX_CPUS`]).
        if cpu >= MAX_CPUS {
            return None;
        }
        let (task, tgid) = split_tgid(task.trim_ascii())?;
        let ftrace = split_task(task);
        let (comm, pid, tgid, perf) = match ftrace {
            Some((comm, pid)) if !perf_reads_too(comm) => (comm, pid, tgid, false),
            _ => match perf_line::split_task(task).filter(|_| tgid.is_none()) {
                Some((comm, tid, pid)) => (comm, tid, pid, true),
                None => {
                    let (comm, pid) = ftrace?;
                    (comm, pid, tgid, false)
                }
            },
        };
        Some(Prefix {
            comm,
            pid,
            tgid,
            cpu,
            flags,
            ts,
            unit,
            perf,
        })
    }
}

/// The unit the timestamps of a text trace were printed in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum TimestampUnit {
    /// `secs.fraction`, the default for every time-based trace clock.
    #[default]
    Seconds,
    /// The latency format prints microseconds (`130508844us`); the latency tracers print them
    /// relative to the start of the section they caught.
    Microseconds,
    /// The `counter` and `x86-tsc` clocks print raw counts, not time.
    Counter,
}

/// Parses an event line (or a perf record in an event's place), or returns `None` if the line
/// is not one.
fn parse_event<'a>(line: &'a str, ctx: &LineContext) -> Option<Line<'a>> {
    let (prefix, rest) = split_prefix(line, ctx)?;
    let (name, payload) = if prefix.perf {
        match perf_line::rest(rest)? {
            perf_line::Rest::Event { name, payload } => (name, payload),
            perf_line::Rest::Lost(count) => {
                return Some(Line::Lost {
                    cpu: Some(prefix.cpu),
                    count,
                })
            }
            perf_line::Rest::SideBand => return Some(Line::Other(NonEvent::PerfRecord)),
        }
    } else {
        split_name(rest)
    };
    // The timerlat tracer prints its samples with no event name (`#1 context irq …`), the
    // osnoise tracer its period summaries (nine numbers); in a trace.dat the same records are
    // the `timerlat` and `osnoise` events.
    let name = match name {
        "" if payload.starts_with('#') => "timerlat",
        "" if rtla::is_summary(payload) => "osnoise",
        name => name,
    };
    let kind = if ctx.decode.wants(name) {
        payload::decode(name, payload)
    } else {
        EventKind::Other
    };
    let event = Event {
        ts: prefix.ts,
        cpu: prefix.cpu,
        pid: prefix.pid,
        comm: prefix.comm,
        tgid: prefix.tgid,
        flags: prefix.flags,
        name,
        payload,
        kind,
    };
    Some(Line::Event(event, prefix.unit))
}

/// Whether `line` is an event line as `perf script` prints it.
pub(super) fn printed_by_perf(line: &str) -> bool {
    split_prefix(line.trim_ascii_start(), &LineContext::default()).is_some_and(|(p, _)| p.perf)
}

/// The prefix of an event line and the text after it. The common form is parsed in line:
/// a prefix returned through the stack was copied on in wider loads than its fields were
/// written in, and each copy stalled on store forwarding.
#[inline(always)]
fn split_prefix<'a>(line: &'a str, ctx: &LineContext) -> Option<(Prefix<'a>, &'a str)> {
    if let Some(split) = common_prefix(line, ctx) {
        return Some(split);
    }
    unusual_prefix(line, ctx)
}

/// The prefix of a line [`common_prefix`] does not read.
#[inline(never)]
fn unusual_prefix<'a>(line: &'a str, ctx: &LineContext) -> Option<(Prefix<'a>, &'a str)> {
    let mut colons = colon_spaces(line.as_bytes());
    let first = colons.next()?;
    prefix_ending_at(line, first, ctx).or_else(|| {
        // A task name holding `": "` (tmux names its server `tmux: server`) puts the first
        // colon-space inside the task column; the prefix ends at a later one, the first
        // before which the columns parse. Only lines that failed every form above get here.
        colons
            .take_while(|&c| c < PREFIX_SPAN)
            .find_map(|c| prefix_ending_at(line, c, ctx))
            .filter(|(p, _)| plausible_spaced_name(p.comm))
    })
}

/// The bracketed or latency-format prefix made of `line[..colon]`, and the text after the
/// colon-space at `colon`.
fn prefix_ending_at<'a>(
    line: &'a str,
    colon: usize,
    ctx: &LineContext,
) -> Option<(Prefix<'a>, &'a str)> {
    let head = &line[..colon];
    let prefix = bracketed_prefix(head, ctx).or_else(|| latency_prefix(head, ctx))?;
    Some((prefix, line.get(colon + 2..).unwrap_or("")))
}

/// Whether a task name found past a colon-space can be one: at most [`LONGEST_NAME`] bytes,
/// and no run of blanks. ftrace pads the task column on its left; a run of blanks inside a
/// candidate name is that padding, with text before the task column taken for part of the
/// name (a line quoted in prose: ``- default: `      bash-2438 [000] ...``).
fn plausible_spaced_name(comm: &str) -> bool {
    comm.len() <= LONGEST_NAME && !comm.contains("  ") && !comm.contains('\t')
}

/// The kernel's task names have at most 15 bytes (`TASK_COMM_LEN`); Android's atrace prints a
/// process's command line in their place, a few dozen bytes.
const LONGEST_NAME: usize = 64;

/// How far into a line its prefix may end: a task name (at most 15 bytes in the kernel, a few
/// dozen where Android prints a process's command line), pid, TGID, CPU, flags and timestamp
/// take far less. The bound keeps a hostile line of many colons linear to read.
const PREFIX_SPAN: usize = 256;

/// The form nearly every line has, `comm-pid [(tgid)] [cpu] [flags] secs.frac: `, in one
/// forward pass. Anything unusual returns `None` and goes to the general parsers below, which
/// define the behaviour; this is only their fast path.
#[inline(always)]
fn common_prefix<'a>(line: &'a str, ctx: &LineContext) -> Option<(Prefix<'a>, &'a str)> {
    let b = line.as_bytes();
    let open = memchr::memchr(b'[', b)?;
    // A `": "` before the bracket means the bracket is in the payload (latency format).
    if open == 0 || b[open - 1] != b' ' || holds_colon_space(&b[..=open]) {
        return None;
    }
    let mut i = open + 1;
    let mut cpu: u32 = 0;
    while i < b.len() && b[i].is_ascii_digit() && i - open <= 6 {
        cpu = cpu * 10 + u32::from(b[i] - b'0');
        i += 1;
    }
    if i == open + 1 || b.get(i) != Some(&b']') {
        return None;
    }
    i = skip_spaces(b, i + 1);
    let first = i;
    while i < b.len() && b[i] != b' ' {
        i += 1;
    }
    let (flags, ts_tok) = if b[i - 1] == b':' {
        (Flags::UNKNOWN, &b[first..i - 1])
    } else {
        let flags = ctx.flags(&b[first..i])?;
        let ts = skip_spaces(b, i);
        i = ts + memchr::memchr(b':', &b[ts..])?;
        i += 1;
        (flags, &b[ts..i - 1])
    };
    if !matches!(b.get(i), None | Some(b' ')) {
        return None;
    }
    // SAFETY: `ts_tok` is cut from `line` at ASCII bytes.
    let ts = parse_seconds(unsafe { std::str::from_utf8_unchecked(ts_tok) })?;
    let prefix = Prefix::new(&line[..open], cpu, flags, ts)?;
    Some((prefix, line.get(i + 1..).unwrap_or("")))
}

/// Whether `b` holds `": "`. A task column rarely holds a colon at all, which eight bytes at
/// a time show at once; a colon anywhere sends the whole field to the exact search.
fn holds_colon_space(b: &[u8]) -> bool {
    const ONES: u64 = u64::from_ne_bytes([0x01; 8]);
    const HIGHS: u64 = u64::from_ne_bytes([0x80; 8]);
    const COLONS: u64 = u64::from_ne_bytes([b':'; 8]);
    let mut words = b.chunks_exact(8);
    let colon = words.by_ref().any(|w| {
        let x = u64::from_ne_bytes(w.try_into().expect("8 bytes")) ^ COLONS;
        // Non-zero exactly when a byte of `x` is zero: where `w` holds a colon.
        x.wrapping_sub(ONES) & !x & HIGHS != 0
    }) || words.remainder().contains(&b':');
    colon && b.windows(2).any(|p| p == b": ")
}

fn skip_spaces(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && b[i] == b' ' {
        i += 1;
    }
    i
}

/// Where a timestamp may end: each `": "`, and a `:` ending the line.
fn colon_spaces(bytes: &[u8]) -> impl Iterator<Item = usize> + '_ {
    memchr::memchr_iter(b':', bytes).filter(|&i| matches!(bytes.get(i + 1), None | Some(b' ')))
}

/// `comm-pid (tgid) [cpu] flags timestamp`, flags and tgid optional.
fn bracketed_prefix<'a>(head: &'a str, ctx: &LineContext) -> Option<Prefix<'a>> {
    let b = head.as_bytes();
    for open in memchr::memchr_iter(b'[', b) {
        if open == 0 || !matches!(b[open - 1], b' ' | b'\t') {
            continue;
        }
        let digits = b[open + 1..]
            .iter()
            .take_while(|c| c.is_ascii_digit())
            .count();
        let close = open + 1 + digits;
        if digits == 0 || b.get(close) != Some(&b']') {
            continue;
        }
        let Some(cpu) = decimal(&b[open + 1..close]).and_then(|c| u32::try_from(c).ok()) else {
            continue;
        };
        let mut fields = head[close + 1..].split_ascii_whitespace();
        let (flags, ts_tok) = match (fields.next(), fields.next(), fields.next()) {
            (Some(ts), None, None) => (Flags::UNKNOWN, ts),
            (Some(f), Some(ts), None) => (ctx.flags(f.as_bytes())?, ts),
            _ => continue,
        };
        return Prefix::new(&head[..open], cpu, flags, parse_seconds(ts_tok)?);
    }
    None
}

/// The latency format: `comm-pid cpu+flags time`, e.g. `bash-2438  0d..2. 130508844us+`.
fn latency_prefix<'a>(head: &'a str, ctx: &LineContext) -> Option<Prefix<'a>> {
    let head = head.trim_ascii_end();
    let (before_ts, ts_tok) = head.rsplit_once([' ', '\t'])?;
    let ts = parse_microseconds(ts_tok)?;
    let before_ts = before_ts.trim_ascii_end();
    let (task, cpu_flags) = before_ts.rsplit_once([' ', '\t'])?;
    let ndigits = cpu_flags.bytes().take_while(u8::is_ascii_digit).count();
    if ndigits == 0 {
        return None;
    }
    let cpu = cpu_flags[..ndigits].parse().ok()?;
    let flags = ctx.flags(&cpu_flags.as_bytes()[ndigits..])?;
    Prefix::new(task, cpu, flags, (ts, TimestampUnit::Microseconds))
}

/// Separates a trailing `(  611)` / `(-----)` TGID column from `comm-pid`.
fn split_tgid(s: &str) -> Option<(&str, Option<i32>)> {
    let Some(inner) = s.strip_suffix(')') else {
        return Some((s, None));
    };
    let open = inner.rfind('(')?;
    let tgid = inner[open + 1..].trim_ascii();
    let tgid = if tgid.bytes().all(|b| b == b'-') {
        None
    } else {
        Some(tgid.parse().ok()?)
    };
    Some((inner[..open].trim_ascii_end(), tgid))
}

/// Whether a task read as `comm-pid` with this comm can be read as perf's `comm tid` too. Both
/// forms read only a task whose last word is perf's `-1` (unknown, `:-1    -1/-1`), which as
/// `comm-pid` is pid 1 with an empty comm or one ending in a blank or a `/`; perf's form is
/// tried first for those. Every other task skips perf's backward search for a blank.
fn perf_reads_too(comm: &str) -> bool {
    comm.as_bytes()
        .last()
        .map_or(true, |b| matches!(b, b' ' | b'\t' | b'/'))
}

/// `comm-pid`; the comm may itself contain dashes, so the pid follows the last one.
fn split_task(s: &str) -> Option<(&str, i32)> {
    // The pid's digits run back from the end to that dash: a short scan, no search.
    let b = s.as_bytes();
    let digits = b.iter().rev().take_while(|c| c.is_ascii_digit()).count();
    let dash = b.len().checked_sub(digits + 1)?;
    if b[dash] != b'-' {
        return None;
    }
    let pid = i32::try_from(decimal(&b[dash + 1..])?).ok()?;
    Some((&s[..dash], pid))
}

/// `12345.678901` seconds (any number of fraction digits up to nanoseconds), or a bare counter
/// value for the `counter` and `x86-tsc` clocks.
pub(super) fn parse_seconds(tok: &str) -> Option<(Timestamp, TimestampUnit)> {
    let b = tok.as_bytes();
    let (secs, int_len) = leading_decimal(b);
    if int_len == 0 || int_len > 19 {
        return None;
    }
    let Some(rest) = b[int_len..].strip_prefix(b".") else {
        // No fraction: a counter clock, or not a timestamp at all.
        return (int_len == b.len()).then_some((secs, TimestampUnit::Counter));
    };
    // Nanoseconds: up to 9 fraction digits count, further ones must still be digits.
    let (mut frac, kept) = leading_decimal(&rest[..rest.len().min(9)]);
    if rest[kept..].iter().any(|c| !c.is_ascii_digit()) {
        return None;
    }
    for _ in kept..9 {
        frac *= 10;
    }
    let ts = secs.checked_mul(1_000_000_000)?.checked_add(frac)?;
    Some((ts, TimestampUnit::Seconds))
}

/// The value of the leading ASCII digits of `b` and how many there were (values of more than
/// 19 digits wrap; callers reject them by the count).
fn leading_decimal(b: &[u8]) -> (u64, usize) {
    let mut n = 0u64;
    for (i, &c) in b.iter().enumerate() {
        let d = c.wrapping_sub(b'0');
        if d > 9 {
            return (n, i);
        }
        n = n.wrapping_mul(10).wrapping_add(u64::from(d));
    }
    (n, b.len())
}

/// A run of ASCII digits as a number; `None` when empty, not all digits, or too large.
fn decimal(digits: &[u8]) -> Option<u64> {
    match leading_decimal(digits) {
        (n, len) if len == digits.len() && (1..=19).contains(&len) => Some(n),
        _ => None,
    }
}

/// `130508844us` plus an optional delay marker (`+ ! # * @ $`), as the latency format prints.
fn parse_microseconds(tok: &str) -> Option<Timestamp> {
    let tok = tok.trim_end_matches(['+', '!', '#', '*', '@', '$']);
    let us = tok.strip_suffix("us")?;
    let (int, frac) = us.split_once('.').unwrap_or((us, ""));
    if int.is_empty()
        || !int.bytes().all(|b| b.is_ascii_digit())
        || !frac.bytes().all(|b| b.is_ascii_digit())
    {
        return None;
    }
    let digits = &frac[..frac.len().min(3)];
    let frac_ns = if digits.is_empty() {
        0
    } else {
        digits.parse::<u64>().ok()? * 10u64.pow(3 - digits.len() as u32)
    };
    int.parse::<u64>()
        .ok()?
        .checked_mul(1000)?
        .checked_add(frac_ns)
}

/// Splits `name: payload`. Lines without an event name are function-tracer entries
/// (`func <-parent`), stack-trace markers, syscall-tracer lines or the latency tracers'
/// context-switch records; they get the name trace-cmd uses for them.
/// Bytes that end an event name (`:`) or show the text is not one (space, tab, `(`): one
/// table lookup per byte in the reader's hottest loop.
static ENDS_NAME: [bool; 256] = {
    let mut t = [false; 256];
    t[b':' as usize] = true;
    t[b' ' as usize] = true;
    t[b'\t' as usize] = true;
    t[b'(' as usize] = true;
    t
};

fn split_name(rest: &str) -> (&str, &str) {
    let b = rest.as_bytes();
    let lead = rest.trim_ascii_start();
    if is_atrace_mark(lead.as_bytes()) {
        return (MARKER, lead.trim_ascii_end());
    }
    let word = b
        .iter()
        .position(|&c| ENDS_NAME[usize::from(c)])
        .unwrap_or(b.len());
    if word > 0 && b.get(word) == Some(&b':') && matches!(b.get(word + 1), None | Some(b' ')) {
        let (name, payload) = (&rest[..word], rest[word + 1..].trim_ascii_start());
        // Old kernels print a trace_marker write whose caller they could not name with the
        // address 0 in the name's place (`0: B|1234|draw`); it is the same write.
        if name == "0" && (is_atrace_mark(payload.as_bytes()) || payload.starts_with(CLOCK_SYNC)) {
            return (MARKER, payload);
        }
        return (name, payload);
    }
    let t = rest.trim_ascii();
    let name = if t.starts_with("<stack trace>") {
        "kernel_stack"
    } else if t.starts_with("<user stack trace>") {
        "user_stack"
    } else if t.contains(" <-") || (word > 0 && word == t.len()) {
        "function"
    } else if t.contains("==>") {
        "context_switch"
    } else if t.contains(" + [") {
        "wakeup"
    } else if word > 0 && b.get(word) == Some(&b'(') {
        "sys_enter"
    } else if t.contains(" -> 0x") {
        "sys_exit"
    } else {
        ""
    };
    (name, t)
}

/// The name trace_marker writes get, with or without one printed.
const MARKER: &str = "tracing_mark_write";

/// The mark systrace writes to line up its clocks with the trace's.
const CLOCK_SYNC: &str = "trace_event_clock_sync:";

/// Android's userspace trace points as atrace writes them to trace_marker: `B|pid|name`
/// (begin), `E` or `E|pid` (end), `C|pid|name|value` (counter), `S`/`F|pid|name|cookie`
/// (async begin and end), `I`/`N` (instants), `G`/`H` (async on a named track). Tools that
/// rewrite atrace output sometimes drop the event name before them, and a name may hold
/// `": "`, so they are recognised before looking for an event name.
fn is_atrace_mark(b: &[u8]) -> bool {
    match b {
        [kind, b'|', ..] => b"BECSFINGH".contains(kind),
        [b'E', rest @ ..] => rest.trim_ascii().is_empty(),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(line: &str) -> Event<'_> {
        match parse_line(line, &LineContext::default()) {
            Line::Event(e, _) => e,
            other => panic!("not an event: {other:?}"),
        }
    }

    #[test]
    fn modern_line() {
        let e = ev("            bash-2438    [000] dN.2.   130.508857: sched_wakeup_new: comm=bash pid=2442 prio=120 target_cpu=000");
        assert_eq!(
            (e.comm, e.pid, e.cpu, e.ts),
            ("bash", 2438, 0, 130_508_857_000)
        );
        assert!(e.flags.need_resched && e.flags.irqs_off);
        assert_eq!(e.flags.preempt_depth, 2);
        assert_eq!(e.name, "sched_wakeup_new");
        assert_eq!(e.tgid, None);
    }

    #[test]
    fn tgid_columns() {
        let e = ev("com.google.android.youtube-23071 (23071) [002] d..5 214168.479892: sched_wakeup: comm=Binder:549_4 pid=2029 prio=120 success=1 target_cpu=000");
        assert_eq!(
            (e.comm, e.pid, e.tgid, e.cpu),
            ("com.google.android.youtube", 23071, Some(23071), 2)
        );
        let e = ev("            bash-2438    (-------) [000] .....   130.508817: sched_process_fork: comm=bash pid=2438 child_comm=bash child_pid=2442");
        assert_eq!((e.comm, e.tgid), ("bash", None));
    }

    /// At every position, across the seams of the eight-byte words and in the remainder, as
    /// a search of each pair of bytes finds it.
    #[test]
    fn a_colon_space_is_found_wherever_it_is() {
        for len in 0..40 {
            for at in 0..len {
                let mut b = vec![b'a'; len];
                b[at] = b':';
                let spaced = at + 1 < len;
                if spaced {
                    b[at + 1] = b' ';
                }
                assert_eq!(holds_colon_space(&b), spaced, "{len} {at}");
                b[0] = 0xff;
                assert_eq!(holds_colon_space(&b), spaced && at > 0, "{len} {at} high");
            }
        }
        assert!(!holds_colon_space(b"kworker/0:1-77 ["));
        assert!(holds_colon_space(b"tmux: server-9 ["));
    }

    #[test]
    fn a_comm_pid_splits_at_the_dash_before_the_trailing_digits() {
        assert_eq!(split_task("a-b-12"), Some(("a-b", 12)));
        assert_eq!(split_task("-7"), Some(("", 7)));
        assert_eq!(split_task("kworker/u8:2-3"), Some(("kworker/u8:2", 3)));
        for bad in [
            "bash",
            "bash-",
            "bash-12x",
            "bash12",
            "x-1-a",
            "a-99999999999",
            "",
        ] {
            assert_eq!(split_task(bad), None, "{bad}");
        }
    }

    #[test]
    fn a_task_read_both_ways_is_perfs_only_when_it_ends_in_its_minus_one() {
        let unambiguous_task = |t| split_task(t).filter(|(comm, _)| !perf_reads_too(comm));
        assert_eq!(
            unambiguous_task("rust-lld-15130"),
            Some(("rust-lld", 15130))
        );
        assert_eq!(unambiguous_task("sh -c-123"), Some(("sh -c", 123)));
        assert_eq!(
            unambiguous_task("kworker/0:1-77"),
            Some(("kworker/0:1", 77))
        );
        for perfs in [":-1    -1/-1", "-1", "swapper -1", "x\t-1"] {
            assert_eq!(unambiguous_task(perfs), None, "{perfs}");
        }
        let ctx = LineContext::default();
        let perf = ":-1    -1/-1 [000] 18170.615560043: sched:sched_switch: x";
        let (p, _) = split_prefix(perf, &ctx).unwrap();
        assert_eq!((p.comm, p.pid, p.tgid, p.perf), (":-1", -1, Some(-1), true));
        let ftrace = "sh -c-123 [000] 18170.615560043: sched_switch: x";
        let (p, _) = split_prefix(ftrace, &ctx).unwrap();
        assert_eq!((p.comm, p.pid, p.tgid, p.perf), ("sh -c", 123, None, false));
    }

    #[test]
    fn awkward_comms() {
        let e = ev("     Web Content-2711  [003] d... 26186.336632: sched_waking: comm=Timer pid=2745 prio=120 target_cpu=001");
        assert_eq!((e.comm, e.pid), ("Web Content", 2711));
        let e = ev("   IntentService[E-1234 [001] ...1   652.762396: sys_enter: NR 172 (29, c350)");
        assert_eq!((e.comm, e.pid, e.cpu), ("IntentService[E", 1234, 1));
        let e = ev("           <...>-4083  [004] ....   395.705679: sys_ioctl(fd: ff, cmd: 5410, arg: 7ffe0babe8fc)");
        assert_eq!((e.comm, e.pid, e.name), ("<...>", 4083, "sys_enter"));
        let e = ev("    kworker/u8:2-events-77 [001] ..... 1.5: workqueue_execute_end: work struct 000000002b1a0c2a: function vmstat_update");
        assert_eq!((e.comm, e.pid), ("kworker/u8:2-events", 77));
    }

    /// A colon-space in the task column (tmux names its processes `tmux: server` and
    /// `tmux: client`) is not the end of the timestamp, in every prefix form.
    #[test]
    fn task_names_with_colon_space() {
        let e = ev("tmux: server-1613 [000] d.h1 21926.770742: sched_stat_runtime: comm=tmux: server pid=1613 runtime=77432 [ns] vruntime=2398343 [ns]");
        assert_eq!(
            (e.comm, e.pid, e.cpu, e.ts, e.name),
            (
                "tmux: server",
                1613,
                0,
                21_926_770_742_000,
                "sched_stat_runtime"
            )
        );
        assert!(e.flags.hardirq && e.flags.irqs_off);
        assert!(e.payload.starts_with("comm=tmux: server pid=1613"));
        let e = ev("  a: b: c-7 (    5) [003] .... 1.000002: sched_waking: comm=x pid=2 prio=120 target_cpu=001");
        assert_eq!((e.comm, e.pid, e.tgid, e.cpu), ("a: b: c", 7, Some(5), 3));
        let e = ev("    tmux: client-99  [001]  7115.449594: sched_switch:          prev_comm=tmux: client prev_pid=99 prev_prio=120 prev_state=64 next_comm=swapper/1 next_pid=0 next_prio=120");
        assert_eq!(
            (e.comm, e.pid, e.cpu, e.flags.known),
            ("tmux: client", 99, 1, false)
        );
        let e = ev("tmux: se-1613    0d.h1 130508844us+: irq_handler_entry: irq=9 name=acpi");
        assert_eq!(
            (e.comm, e.pid, e.cpu, e.ts),
            ("tmux: se", 1613, 0, 130_508_844_000)
        );
        let e = ev("tmux: server  1613 [002] 21926.770742: sched:sched_wakeup: comm=a pid=2 prio=120 target_cpu=002");
        assert_eq!(
            (e.comm, e.pid, e.cpu, e.name),
            ("tmux: server", 1613, 2, "sched_wakeup")
        );
        let e = ev("kworker/0:1 H-1217 [000] d..3 1.5: sched_switch: prev_comm=kworker/0:1 H prev_pid=1217 prev_prio=100 prev_state=S ==> next_comm=swapper/0 next_pid=0 next_prio=120");
        assert_eq!((e.comm, e.pid), ("kworker/0:1 H", 1217));
        // A trace line quoted in prose is not one.
        for prose in [
            "- default: `      bash-2438 [000] d..2. 1.5: sched_switch: x",
            "- latency: header `# latency: 0 us, #8794/8794, CPU#0 | (M:PREEMPT(none) VP:0, KP:0, SP:0 HP:0 #P:2)`; lines `cyclicte-7825      0d..2. 169193us!: sched_switch: ...`",
        ] {
            assert_eq!(
                parse_line(prose, &LineContext::default()),
                Line::Other(NonEvent::Unparsed),
                "{prose}"
            );
        }
        // The span searched for a later colon is bounded: a line of colons is not an event.
        let colons = format!("x{}", ": ".repeat(100_000));
        assert_eq!(
            parse_line(&colons, &LineContext::default()),
            Line::Other(NonEvent::Unparsed)
        );
    }

    /// atrace's userspace trace points, with the event name the kernel prints, with the
    /// address 0 in its place (old kernels), and with none.
    #[test]
    fn atrace_marks() {
        for (line, text) in [
            ("  RenderThread-1143  (  611) [004] ...1 514769.085985: tracing_mark_write: B|611|draw: frame 3", "B|611|draw: frame 3"),
            ("  RenderThread-1143  (  611) [004] ...1 514769.085990: tracing_mark_write: E", "E"),
            ("  surfaceflinger-296 [001] ...1 100.000001: 0: B|296|onMessageReceived", "B|296|onMessageReceived"),
            ("  surfaceflinger-296 [001] ...1 100.000002: 0: E", "E"),
            ("  surfaceflinger-296 [001] ...1 100.000003: 0: C|296|VSYNC-sf|1", "C|296|VSYNC-sf|1"),
            ("           dummy-0000  [000] 0.0: 0: trace_event_clock_sync: parent_ts=0.0", "trace_event_clock_sync: parent_ts=0.0"),
            ("  surfaceflinger-296 [001] ...1 100.000004: B|296|handleMessage: refresh", "B|296|handleMessage: refresh"),
            ("  surfaceflinger-296 [001] ...1 100.000005: E", "E"),
            ("  surfaceflinger-296 [001] ...1 100.000006: E|296", "E|296"),
            ("  surfaceflinger-296 [001] ...1 100.000007: C|296|HW_VSYNC_0|0", "C|296|HW_VSYNC_0|0"),
            ("  Binder:549_4-2029 [000] ...1 100.000008: S|549|launching: com.app|12", "S|549|launching: com.app|12"),
        ] {
            let e = ev(line);
            assert_eq!(e.name, "tracing_mark_write", "{line}");
            assert_eq!(
                e.kind,
                EventKind::Marker {
                    kind: crate::event::MarkerKind::TracingMarkWrite,
                    text
                },
                "{line}"
            );
        }
        // Not marks: a function named like a letter is still a function, an event named 0
        // with other text keeps its name.
        assert_eq!(ev("  bash-1 [000] .... 1.0: Eval <-foo").name, "function");
        assert_eq!(ev("  bash-1 [000] .... 1.0: 0: hello").name, "0");
    }

    #[test]
    fn trace_cmd_report_without_flags() {
        let e = ev("              ls-4734  [002] 106439.675591: sched_switch:          prev_comm=trace-cmd prev_pid=4734 prev_prio=120 prev_state=1024 next_comm=migration/2 next_pid=18 next_prio=0");
        assert!(!e.flags.known);
        assert_eq!(
            (e.cpu, e.ts, e.name),
            (2, 106_439_675_591_000, "sched_switch")
        );
        assert!(e.payload.starts_with("prev_comm=trace-cmd"));
        let e = ev("\t   <...>-15430 [006]  7115.449594: sched_switch:          prev_comm=trace-cmd prev_pid=15430 prev_prio=120 prev_state=64 next_comm=swapper/6 next_pid=0 next_prio=120");
        assert_eq!((e.comm, e.pid, e.cpu), ("<...>", 15430, 6));
    }

    #[test]
    fn latency_format() {
        let e = ev("    bash-2438      0d..2. 130508844us+: sched_stat_runtime: comm=bash pid=2438 runtime=2296747 [ns]");
        assert_eq!(
            (e.comm, e.pid, e.cpu, e.ts),
            ("bash", 2438, 0, 130_508_844_000)
        );
        assert!(e.flags.irqs_off);
        let e =
            ev("      ps-6143    2d..1  259us+: trace_hardirqs_on <-_raw_spin_unlock_irqrestore");
        assert_eq!((e.cpu, e.ts, e.name), (2, 259_000, "function"));
        assert_eq!(e.flags.preempt_depth, 1);
        let e = ev("      ps-6143    2d..1  306us : <stack trace>");
        assert_eq!((e.ts, e.name), (306_000, "kernel_stack"));
        let e = ev("  <idle>-0       3d.h4    1us+:      0:120:R   + [003]  2448: 94:R sleep");
        assert_eq!((e.cpu, e.name), (3, "wakeup"));
        let e = ev("  kworker-1234   1d..h1.. 17us : irq_handler_entry: irq=9 name=acpi");
        assert_eq!((e.cpu, e.pid), (1, 1234));
        assert!(e.flags.hardirq && e.flags.irqs_off);
    }

    #[test]
    fn rt_seven_flags() {
        let e = ev(
            "     ktimersoftd-9     [001] d..h1.. 1000.000100: irq_handler_entry: irq=9 name=acpi",
        );
        assert!(e.flags.hardirq && e.flags.irqs_off);
        assert_eq!(e.flags.preempt_depth, 1);
    }

    #[test]
    fn timestamp_units() {
        let ctx = LineContext::default();
        let unit = |l| match parse_line(l, &ctx) {
            Line::Event(_, u) => u,
            other => panic!("{other:?}"),
        };
        assert_eq!(
            unit("  a-1 [000] .... 12.000001: x: y"),
            TimestampUnit::Seconds
        );
        assert_eq!(
            unit("  a-1 [000] .... 12000001: x: y"),
            TimestampUnit::Counter
        );
        assert_eq!(
            unit("  a-1   0d..2. 12us : x: y"),
            TimestampUnit::Microseconds
        );
    }

    #[test]
    fn timestamps() {
        let secs = |t| parse_seconds(t).map(|(ts, _)| ts);
        assert_eq!(secs("26186.336630"), Some(26_186_336_630_000));
        assert_eq!(secs("1.000000001"), Some(1_000_000_001));
        assert_eq!(secs("123456789"), Some(123_456_789));
        assert_eq!(secs("1.2.3"), None);
        assert_eq!(parse_microseconds("306us"), Some(306_000));
        assert_eq!(parse_microseconds("12.5us!"), Some(12_500));
        assert_eq!(parse_microseconds("12"), None);
    }

    #[test]
    fn other_lines() {
        let ctx = LineContext::default();
        assert_eq!(
            parse_line("CPU:1 [LOST 123 EVENTS]", &ctx),
            Line::Lost {
                cpu: Some(1),
                count: Some(123)
            }
        );
        assert_eq!(
            parse_line("##### CPU 2 buffer started ####", &ctx),
            Line::BufferStarted { cpu: 2 }
        );
        assert_eq!(
            parse_line("# tracer: nop", &ctx),
            Line::Other(NonEvent::Comment)
        );
        assert_eq!(parse_line("   ", &ctx), Line::Other(NonEvent::Blank));
        assert_eq!(parse_line("[...]", &ctx), Line::Other(NonEvent::Elided));
        assert_eq!(
            parse_line(" => vfs_read", &ctx),
            Line::Other(NonEvent::StackFrame)
        );
        assert_eq!(
            parse_line("version = 6", &ctx),
            Line::Other(NonEvent::TraceCmdHeader)
        );
        assert_eq!(
            parse_line("CPU 3 is empty", &ctx),
            Line::Other(NonEvent::TraceCmdHeader)
        );
        for preamble in ["capturing trace... done", "TRACE:", "TRACE:\r"] {
            assert_eq!(
                parse_line(preamble, &ctx),
                Line::Other(NonEvent::AtracePreamble),
                "{preamble}"
            );
        }
        assert_eq!(
            parse_line("Tracing \"do_nanosleep\"... Ctrl-C to end.", &ctx),
            Line::Other(NonEvent::Unparsed)
        );
        assert_eq!(parse_line(" gid=4", &ctx), Line::Other(NonEvent::Unparsed));
    }

    /// A CPU column no kernel can have is damage: the line is not an event (the text reader
    /// counts it as not understood), in every prefix form and in the markers that name CPUs.
    #[test]
    fn cpus_beyond_max_cpus_are_not_events() {
        let ctx = LineContext::default();
        let unparsed = Line::Other(NonEvent::Unparsed);
        for line in [
            "  bash-1 [4000000000] d..2. 10.000000: sched_waking: comm=a pid=2 prio=9 target_cpu=000",
            "  bash-1 [8192] d..2. 10.000000: sched_waking: comm=a pid=2 prio=9 target_cpu=000",
            "  bash-1 (1) [123456789] d..2 10.000000: sched_waking: comm=a pid=2 prio=9",
            "  bash-1   8192d..2. 130508844us+: sched_waking: comm=a pid=2 prio=9",
            "  perf 1 [9000] 10.000000: sched:sched_waking: comm=a pid=2 prio=9",
            "CPU:4000000000 [LOST 3 EVENTS]",
            "##### CPU 9999 buffer started ####",
        ] {
            assert_eq!(parse_line(line, &ctx), unparsed, "{line}");
        }
        // The largest CPU number there can be is still an event.
        assert_eq!(
            ev("  bash-1 [8191] d..2. 10.000000: sched_waking: comm=a pid=2 prio=9").cpu,
            8191
        );
    }
}
