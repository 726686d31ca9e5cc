//! One line parser for the text the peers print: tracefs `trace`/`trace_pipe`
//! (`TASK-PID [CPU] FLAGS TS: event: fields`, with or without the TGID column and the flags),
//! `trace-cmd report` (plain, or `-l` where the CPU number and flags are one token), and
//! `perf script` (`COMM PID[/TID] [CPU] TS: [period] subsys:event: fields`). Comms may hold
//! spaces and dashes; `<...>` is a comm like any other.

use super::raw::{parse_seconds, Event, Trace};

/// Parses a whole text trace: events, the overwrite signs of its header and lost markers.
pub fn parse(text: &str) -> Trace {
    let mut t = Trace::default();
    let mut pending_lost: Vec<u32> = Vec::new();
    for line in text.lines() {
        if let Some(cpu) = header_overwrite(line, &mut t.overwritten) {
            pending_lost.push(cpu);
            continue;
        }
        if line.starts_with('#') {
            continue;
        }
        if let Some(e) = parse_line(line) {
            if let Some(k) = pending_lost.iter().position(|&c| c == e.cpu) {
                pending_lost.swap_remove(k);
                t.lost.push((e.cpu, e.ts));
            }
            if e.name == "PERF_RECORD_LOST" {
                t.lost.push((e.cpu, e.ts));
                continue;
            }
            t.events.push(e);
        }
    }
    t.finish();
    t
}

/// Header and marker lines: sets `overwritten` for an `entries-in-buffer/entries-written`
/// header with fewer kept than written and for `##### CPU n buffer started ####`; returns the
/// CPU of a `CPU:n [LOST m EVENTS]` or `CPU:n [m EVENTS DROPPED]` marker (its time is that
/// CPU's next event).
fn header_overwrite(line: &str, overwritten: &mut bool) -> Option<u32> {
    if let Some(rest) = line.split("entries-in-buffer/entries-written:").nth(1) {
        let pair = rest.split_whitespace().next().unwrap_or("");
        if let Some((a, b)) = pair.split_once('/') {
            if let (Ok(a), Ok(b)) = (a.parse::<u64>(), b.parse::<u64>()) {
                *overwritten |= a < b;
            }
        }
        return None;
    }
    if line.contains("buffer started") && line.starts_with("#####") {
        *overwritten = true;
        return None;
    }
    let rest = line.trim_start().strip_prefix("CPU:")?;
    let (cpu, tail) = rest.split_once(' ')?;
    let tail = tail.trim_start();
    if tail.starts_with("[LOST") || (tail.starts_with('[') && tail.contains(" EVENTS DROPPED]")) {
        return cpu.parse().ok();
    }
    None
}

fn is_cpu_bracket(tok: &str) -> Option<u32> {
    tok.strip_prefix('[')?.strip_suffix(']')?.parse().ok()
}

fn is_ts(tok: &str) -> Option<i64> {
    parse_seconds(tok.strip_suffix(':')?)
}

/// Tokens of a line with their byte offsets.
fn tokens(line: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, c) in line.char_indices() {
        match (c.is_whitespace(), start) {
            (true, Some(s)) => {
                out.push((s, &line[s..i]));
                start = None;
            }
            (false, None) => start = Some(i),
            _ => {}
        }
    }
    if let Some(s) = start {
        out.push((s, &line[s..]));
    }
    out
}

/// Parses one event line; `None` for anything else.
pub fn parse_line(line: &str) -> Option<Event> {
    let toks = tokens(line);
    // The timestamp: the first `seconds:` token after at least the task and CPU columns.
    let k = (2..toks.len()).find(|&i| is_ts(toks[i].1).is_some())?;
    let ts = is_ts(toks[k].1)?;
    let (cpu, flags, task_end) = cpu_and_flags(&toks, k)?;
    let pid = task_pid(line, &toks[..comm_pid_end_index(&toks, task_end)])?;
    let (name, fields) = match timerlat_sample(&toks[k + 1..]) {
        Some(fields) => ("timerlat_sample".to_string(), fields),
        None => name_and_fields(line, &toks[k + 1..])?,
    };
    Some(Event {
        ts,
        cpu,
        pid,
        flags,
        name,
        fields,
    })
}

/// The event name (the next token ending with ':'; perf may print a period column first) and
/// its fields, from the tokens after the timestamp.
fn name_and_fields(line: &str, toks: &[(usize, &str)]) -> Option<(String, String)> {
    let mut n = 0;
    while n < toks.len() && !toks[n].1.ends_with(':') {
        if toks[n].1.bytes().all(|b| b.is_ascii_digit()) {
            n += 1;
        } else if toks[n].1 == "PERF_RECORD_LOST" {
            // `PERF_RECORD_LOST lost 18`
            return Some(("PERF_RECORD_LOST".into(), String::new()));
        } else {
            return None;
        }
    }
    let (at, raw_name) = *toks.get(n)?;
    let name = raw_name.trim_end_matches(':');
    let name = name.rsplit(':').next().unwrap_or(name).to_string();
    let fields = plugin_fields(&name, line[at + raw_name.len()..].trim());
    // trace-cmd report prints the timerlat tracer's records with their raw format.
    match raw_timerlat(&fields).filter(|_| name == "timerlat") {
        Some(fields) => Some(("timerlat_sample".into(), fields)),
        None => Some((name, fields)),
    }
}

/// The timerlat tracer's sample, which has no event name: `#N context irq timer_latency L ns`,
/// as `seq=N context=irq timer_latency=L`.
fn timerlat_sample(toks: &[(usize, &str)]) -> Option<String> {
    let words: Vec<&str> = toks.iter().map(|t| t.1).collect();
    match words.as_slice() {
        [seq, "context", ctx, "timer_latency", lat, "ns"] => {
            let seq = seq.strip_prefix('#')?;
            Some(format!("seq={seq} context={ctx} timer_latency={lat}"))
        }
        _ => None,
    }
}

/// `seq:N context:C timer_latency:L` (C the kernel's number: 0 irq, 1 thread, 2 user) as
/// `seq=N context=irq timer_latency=L`.
fn raw_timerlat(fields: &str) -> Option<String> {
    let mut w = fields.split_whitespace();
    let mut take = |key: &str| w.next()?.strip_prefix(key).map(str::to_string);
    let (seq, ctx, lat) = (take("seq:")?, take("context:")?, take("timer_latency:")?);
    let ctx = ["irq", "thread", "user-ret"].get(ctx.parse::<usize>().ok()?)?;
    Some(format!("seq={seq} context={ctx} timer_latency={lat}"))
}

/// `trace-cmd report`'s plugins print the scheduler events in their own shape
/// (`bash:14026 [120] R ==> bash:15511 [120]`, `migration/1:21 [0] CPU:001`); written back as
/// the kernel's `key=value` fields. Everything else is kept as printed.
fn plugin_fields(name: &str, fields: &str) -> String {
    let task = |t: &str| -> Option<(String, String, String)> {
        // `comm:pid [prio]`; the comm may hold ':' and spaces.
        let (head, prio) = t.trim().rsplit_once(" [")?;
        let (comm, pid) = head.rsplit_once(':')?;
        Some((
            comm.to_string(),
            pid.to_string(),
            prio.trim_end_matches(']').to_string(),
        ))
    };
    match name {
        "sched_switch" if !fields.contains("prev_pid=") => {
            let parsed = fields.split_once(" ==> ").and_then(|(prev, next)| {
                let (prev, state) = prev.rsplit_once(' ')?;
                Some((task(prev)?, state, task(next)?))
            });
            match parsed {
                Some(((pc, pp, pq), state, (nc, np, nq))) => format!(
                    "prev_comm={pc} prev_pid={pp} prev_prio={pq} prev_state={state} ==> next_comm={nc} next_pid={np} next_prio={nq}"
                ),
                None => fields.to_string(),
            }
        }
        "sched_waking" | "sched_wakeup" | "sched_wakeup_new" if !fields.contains("pid=") => {
            let (who, cpu) = fields.rsplit_once(" CPU:").unwrap_or((fields, ""));
            let who = who
                .trim_end_matches(" success=1")
                .trim_end_matches(" success=0");
            match task(who) {
                Some((c, p, q)) => format!("comm={c} pid={p} prio={q} target_cpu={cpu}"),
                None => fields.to_string(),
            }
        }
        _ => fields.to_string(),
    }
}

/// The CPU and flags before the timestamp token `k`, and the index where the task columns end.
fn cpu_and_flags(toks: &[(usize, &str)], k: usize) -> Option<(u32, Option<String>, usize)> {
    if let Some(cpu) = is_cpu_bracket(toks[k - 1].1) {
        return Some((cpu, None, k - 1));
    }
    if k >= 3 {
        if let Some(cpu) = is_cpu_bracket(toks[k - 2].1) {
            return Some((cpu, Some(toks[k - 1].1.to_string()), k - 2));
        }
    }
    // trace-cmd report -l: `0dN.2.`: the CPU digits, then the flags.
    let tok = toks[k - 1].1;
    let digits = tok.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 || digits == tok.len() {
        return None;
    }
    let cpu = tok[..digits].parse().ok()?;
    Some((cpu, Some(tok[digits..].to_string()), k - 1))
}

/// Drops a TGID column (`(  123)` or `(-------)`, possibly split in two tokens).
fn comm_pid_end_index(toks: &[(usize, &str)], end: usize) -> usize {
    let mut e = end;
    if e > 0 && toks[e - 1].1.ends_with(')') {
        e -= 1;
        if !toks[e].1.starts_with('(') && e > 0 && toks[e - 1].1.starts_with('(') {
            e -= 1;
        }
    }
    e
}

/// The pid from the task columns: `comm-pid` (ftrace, trace-cmd) or `comm pid[/tid]` (perf).
fn task_pid(line: &str, toks: &[(usize, &str)]) -> Option<i64> {
    let &(at, last) = toks.last()?;
    // perf prints `:-1 -1` for a thread it lost track of (after its exit).
    let numeric = |s: &str| {
        let s = s.strip_prefix('-').unwrap_or(s);
        !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
    };
    if toks.len() >= 2 || numeric(last.split('/').next().unwrap_or("")) {
        let (pid, tid) = last.split_once('/').unwrap_or((last, last));
        if numeric(pid) && numeric(tid) {
            return tid.parse().ok();
        }
    }
    let task = &line[toks[0].0..at + last.len()];
    let (_, pid) = task.rsplit_once('-')?;
    pid.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_shapes() {
        let e = parse_line("            bash-14026   [001] d..2.   633.040295: sched_switch: prev_comm=bash prev_pid=14026 prev_prio=120 prev_state=S ==> next_comm=x y next_pid=0 next_prio=120").unwrap();
        assert_eq!(
            (e.ts, e.cpu, e.pid, e.flags.as_deref()),
            (633_040_295_000, 1, 14026, Some("d..2."))
        );
        assert_eq!(e.name, "sched_switch");
        assert_eq!(e.field("next_comm"), Some("x y"));
        let e = parse_line(
            "            bash-14026   (  14026) [001] .....   633.040295: hrtimer_setup: a=1",
        )
        .unwrap();
        assert_eq!((e.cpu, e.pid), (1, 14026));
        let e =
            parse_line("           <...>-1701  [001]    76.211513: sched_switch:   prev_comm=a")
                .unwrap();
        assert_eq!((e.cpu, e.pid, e.flags.as_deref()), (1, 1701, None));
        let e = parse_line("fifo_bur-15705   0d..3.  7769.346285786: hrtimer_start:        hrtimer=0xff function=dl_task_timer").unwrap();
        assert_eq!(
            (e.ts, e.cpu, e.pid, e.flags.as_deref()),
            (7_769_346_285_786, 0, 15705, Some("d..3."))
        );
        let e = parse_line(" Web Content  5760/5761  [003] 18169.860964197:                     sched:sched_waking: comm=migration/0 pid=18").unwrap();
        assert_eq!((e.cpu, e.pid, e.name.as_str()), (3, 5761, "sched_waking"));
        let e = parse_line("            perf 11678/11678 [000]  4903.235148:     262842               sched:sched_stat_runtime: comm=perf").unwrap();
        assert_eq!(
            (e.pid, e.name.as_str(), e.fields.as_str()),
            (11678, "sched_stat_runtime", "comm=perf")
        );
        let e =
            parse_line("  kworker/0:1-H-12  [000] d.h1. 5.000001: irq_handler_entry: irq=1 name=x")
                .unwrap();
        assert_eq!(e.pid, 12);
        assert!(parse_line("CPU:1 [LOST 2435 EVENTS]").is_none());
        let e = parse_line("             :-1    -1 [000] 17468.064602168:               sched:sched_stat_runtime: comm=x").unwrap();
        assert_eq!(e.pid, -1);
        let e = parse_line("            bash-14026 [001]   633.040486: sched_switch:         bash:14026 [120] R ==> my task:15511 [9]").unwrap();
        assert_eq!(
            (
                e.num("prev_pid"),
                e.field("prev_state"),
                e.field("next_comm"),
                e.num("next_prio")
            ),
            (Some(14026), Some("R"), Some("my task"), Some(9))
        );
        let e = parse_line("      fifo_burst-15511 [001]   633.041437: sched_wakeup:         migration/1:21 [0] CPU:001").unwrap();
        assert_eq!(
            (e.num("pid"), e.num("prio"), e.num("target_cpu")),
            (Some(21), Some(0), Some(1))
        );
    }

    #[test]
    fn overwrite_signs() {
        let t = parse("# entries-in-buffer/entries-written: 35099/171563   #P:2\n a-1 [000] ..... 1.000000: x: y=1\n");
        assert!(t.overwritten);
        let t = parse("# entries-in-buffer/entries-written: 5/5   #P:2\n a-1 [000] ..... 1.000000: x: y=1\nCPU:0 [LOST 3 EVENTS]\n a-1 [000] ..... 2.000000: x: y=1\n");
        assert!(!t.overwritten);
        assert_eq!(t.lost, vec![(0, 2_000_000_000)]);
    }
}
