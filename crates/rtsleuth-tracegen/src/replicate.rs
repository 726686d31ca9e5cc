//! `tracegen replicate`: grow a real text trace to a target size by repeating
//! its body with shifted timestamps, for benchmarks on realistic content.

use std::io::{self, Write};

/// What [`replicate`] wrote.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReplicateStats {
    /// Copies of the body started (the last one may be partial).
    pub copies: u64,
    /// Event lines (lines with a timestamp) written.
    pub event_lines: u64,
    /// All lines written, header included.
    pub lines: u64,
    /// Bytes written.
    pub bytes: u64,
    /// Shift between consecutive copies, ns (input span + 1 ms).
    pub shift_ns: u64,
}

/// Where a line's timestamp is and how it is written.
#[derive(Clone, Copy, Debug)]
struct Ts {
    /// Byte range of the digits (`123.456789` or `123456789`).
    start: usize,
    end: usize,
    /// Fraction digits for the `secs.frac` form; `None` = `<n>us` form.
    frac_digits: Option<u32>,
    ns: u64,
}

fn all_digits(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
}

/// Finds the timestamp of an event line: the first whitespace-separated
/// token `<secs>.<frac>:` (kernel and trace-cmd forms, with or without a flags
/// column), or `<usecs>us` followed by an optional delay mark and `:`
/// (latency-format).
fn find_ts(line: &str) -> Option<Ts> {
    let bytes = line.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        while i < bytes.len() && bytes[i] == b' ' {
            i += 1;
        }
        let start = i;
        while i < bytes.len() && bytes[i] != b' ' {
            i += 1;
        }
        let tok = &line[start..i];
        if let Some(body) = tok.strip_suffix(':') {
            if let Some((a, b)) = body.split_once('.') {
                if all_digits(a) && all_digits(b) && b.len() <= 9 {
                    let secs: u64 = a.parse().ok()?;
                    let frac: u64 = b.parse().ok()?;
                    let ns = secs * 1_000_000_000 + frac * 10u64.pow(9 - b.len() as u32);
                    return Some(Ts {
                        start,
                        end: start + body.len(),
                        frac_digits: Some(b.len() as u32),
                        ns,
                    });
                }
            }
        }
        if let Some(pos) = tok.find("us") {
            let num = &tok[..pos];
            let rest = &tok[pos + 2..];
            let next_is_colon = line[i..].trim_start().starts_with(':');
            let rest_ok = matches!(rest, "" | ":")
                || (rest.len() == 2 && rest.ends_with(':') && "+!#*@$".contains(&rest[..1]));
            if all_digits(num) && rest_ok && (rest.ends_with(':') || next_is_colon) {
                let us: u64 = num.parse().ok()?;
                return Some(Ts {
                    start,
                    end: start + num.len(),
                    frac_digits: None,
                    ns: us * 1000,
                });
            }
        }
    }
    None
}

fn render_ts(ts: &Ts, ns: u64) -> String {
    match ts.frac_digits {
        Some(d) => {
            let unit = 10u64.pow(9 - d);
            format!(
                "{}.{:0width$}",
                ns / 1_000_000_000,
                (ns % 1_000_000_000) / unit,
                width = d as usize
            )
        }
        None => format!("{}", ns / 1000),
    }
}

/// Rewrites the timestamp in place, keeping the column: a longer number eats
/// the spaces in front of it (as `%5lu` would have), a shorter one is padded.
fn shift_line(line: &str, ts: &Ts, shift_ns: u64, out: &mut String) {
    let new = render_ts(ts, ts.ns + shift_ns);
    let old_len = ts.end - ts.start;
    let mut cut = ts.start;
    if new.len() > old_len {
        let mut extra = new.len() - old_len;
        // Keep at least one separator space.
        while extra > 0
            && cut >= 2
            && line.as_bytes()[cut - 1] == b' '
            && line.as_bytes()[cut - 2] == b' '
        {
            cut -= 1;
            extra -= 1;
        }
    }
    out.push_str(&line[..cut]);
    for _ in new.len()..old_len {
        out.push(' ');
    }
    out.push_str(&new);
    out.push_str(&line[ts.end..]);
}

/// Repeats the body of `input` (everything from the first event line on)
/// until at least `size` bytes are written; the leading header lines
/// (comments, trace-cmd's `version`/`cpus` lines) are written once. Copy `k`
/// has its timestamps shifted by `k * (span + 1 ms)`, so the output stays
/// time-ordered. Stops at a line boundary.
pub fn replicate<W: Write>(input: &str, size: u64, w: &mut W) -> io::Result<ReplicateStats> {
    let lines: Vec<&str> = input.lines().collect();
    let first_ev = lines.iter().position(|l| find_ts(l).is_some());
    let mut st = ReplicateStats::default();
    let (header, body) = match first_ev {
        Some(i) => (&lines[..i], &lines[i..]),
        None => (&lines[..], &lines[..0]),
    };
    let parsed: Vec<Option<Ts>> = body.iter().map(|l| find_ts(l)).collect();
    let (lo, hi) = parsed
        .iter()
        .flatten()
        .fold((u64::MAX, 0), |(lo, hi), t| (lo.min(t.ns), hi.max(t.ns)));
    st.shift_ns = if lo == u64::MAX {
        0
    } else {
        hi - lo + 1_000_000
    };
    let put = |w: &mut W, s: &str, st: &mut ReplicateStats| -> io::Result<()> {
        w.write_all(s.as_bytes())?;
        w.write_all(b"\n")?;
        st.bytes += s.len() as u64 + 1;
        st.lines += 1;
        Ok(())
    };
    for h in header {
        put(w, h, &mut st)?;
    }
    if parsed.iter().all(Option::is_none) {
        return Ok(st);
    }
    let mut buf = String::new();
    let mut k: u64 = 0;
    while st.bytes < size {
        st.copies += 1;
        for (line, ts) in body.iter().zip(&parsed) {
            match ts {
                Some(ts) => {
                    buf.clear();
                    shift_line(line, ts, k * st.shift_ns, &mut buf);
                    put(w, &buf, &mut st)?;
                    st.event_lines += 1;
                }
                None => put(w, line, &mut st)?,
            }
            if st.bytes >= size {
                break;
            }
        }
        k += 1;
    }
    Ok(st)
}

/// [`replicate`] into a `String`.
pub fn replicate_str(input: &str, size: u64) -> (String, ReplicateStats) {
    let mut v = Vec::new();
    let st = replicate(input, size, &mut v).expect("writing to a Vec cannot fail");
    (String::from_utf8(v).expect("input was UTF-8"), st)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_timestamps() {
        let l = "            bash-2438    [000] dN.2.   130.508857: sched_wakeup_new: comm=bash";
        let t = find_ts(l).unwrap();
        assert_eq!(&l[t.start..t.end], "130.508857");
        let l = "       trace-cmd-4730  [001] 106439.675718: sched_switch:         a:1 [120] R ==> b:2 [0]";
        assert_eq!(find_ts(l).unwrap().ns, 106_439_675_718_000);
        let l = "    bash-2438      0dN.2. 130508857us : sched_wakeup_new: comm=bash";
        assert_eq!(find_ts(l).unwrap().ns, 130_508_857_000);
        let l = "    bash-2438      0dN.2. 130508857us+: sched_wakeup_new: comm=bash";
        assert_eq!(find_ts(l).unwrap().ns, 130_508_857_000);
        assert!(find_ts("CPU:1 [LOST 12 EVENTS]").is_none());
        assert!(find_ts("# tracer: nop").is_none());
    }

    #[test]
    fn shifts_in_place() {
        let l = "          <idle>-0       [001] d..2.  9999.999999: sched_switch: x";
        let t = find_ts(l).unwrap();
        let mut o = String::new();
        shift_line(l, &t, 1, &mut o);
        assert_eq!(
            o,
            "          <idle>-0       [001] d..2.  9999.999999: sched_switch: x"
        );
        o.clear();
        shift_line(l, &t, 1_000, &mut o);
        assert_eq!(
            o,
            "          <idle>-0       [001] d..2. 10000.000000: sched_switch: x"
        );
        o.clear();
        shift_line(l, &t, 100_000_000_000_000, &mut o);
        assert_eq!(
            o,
            "          <idle>-0       [001] d..2. 109999.999999: sched_switch: x"
        );
    }
}
