//! Reading the `hwlat` tracer's lines from the `trace` file.
//!
//! The kernel prints one line per window whose worst gap passed `tracing_thresh`
//! (`trace_hwlat_print` in kernel/trace/trace_output.c):
//!
//! ```text
//! <...>-1729  [001] d...   678.473449: #1     inner/outer(us):   11/12    ts:1581527483.343962693 count:6
//! ```
//!
//! after the usual `comm-pid [cpu] flags time:` columns: the sample's sequence number, the
//! longest gap inside a pair of clock reads and between pairs (µs), the wall-clock time
//! (CLOCK_REALTIME) of the first gap, and since Linux 5.7 `count:`, how many gaps the window
//! had. When NMIs arrived during the window, ` nmi-total:` (µs in NMIs; left out where
//! sched_clock is not NMI-safe) and ` nmi-count:` follow. Later `key:value` fields are ignored,
//! so a kernel that adds one still parses.

/// One window the kernel reported.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelSample {
    pub cpu: usize,
    /// The line's trace timestamp, nanoseconds of the trace clock.
    pub trace_ts: u64,
    pub seq: u64,
    /// Longest gap between the two reads of one loop iteration, µs.
    pub inner_us: u64,
    /// Longest gap between iterations, µs.
    pub outer_us: u64,
    /// `ts:` — CLOCK_REALTIME of the first gap, nanoseconds since the epoch.
    pub wall: u64,
    /// Gaps above the threshold in the window; `None` before Linux 5.7.
    pub count: Option<u64>,
    pub nmi_total_us: Option<u64>,
    pub nmi_count: Option<u64>,
}

impl KernelSample {
    /// The longest gap of the window, inner or outer.
    pub fn max_us(&self) -> u64 {
        self.inner_us.max(self.outer_us)
    }
}

/// What one line of the `trace` file is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Line {
    Sample(KernelSample),
    /// Header comments and blank lines.
    Comment,
    /// A line that is neither, with why.
    Bad(String),
}

const MARKER: &str = "inner/outer(us):";

/// Classifies one line of the `trace` file.
pub fn parse_line(line: &str) -> Line {
    let trimmed = line.trim();
    if trimmed.is_empty() || trimmed.starts_with('#') {
        return Line::Comment;
    }
    match sample(trimmed) {
        Ok(s) => Line::Sample(s),
        Err(why) => Line::Bad(why),
    }
}

fn sample(line: &str) -> Result<KernelSample, String> {
    let (head, body) = line
        .split_once(MARKER)
        .ok_or_else(|| format!("no {MARKER:?}: not an hwlat sample"))?;
    let (columns, seq) = head
        .trim_end()
        .rsplit_once('#')
        .ok_or("no #sequence number before inner/outer")?;
    let seq = number(seq, "sequence number")?;
    let columns = columns
        .trim_end()
        .strip_suffix(':')
        .ok_or("no 'time:' before the sample")?;
    let (columns, time) = columns
        .rsplit_once(char::is_whitespace)
        .ok_or("no trace timestamp")?;
    let trace_ts = seconds(time).ok_or_else(|| format!("bad trace timestamp {time:?}"))?;
    let cpu = cpu_column(columns).ok_or("no [cpu] column")?;

    let mut fields = body.split_whitespace();
    let (inner, outer) = fields
        .next()
        .and_then(|f| f.split_once('/'))
        .ok_or("no inner/outer values")?;
    let mut s = KernelSample {
        cpu,
        trace_ts,
        seq,
        inner_us: number(inner, "inner")?,
        outer_us: number(outer, "outer")?,
        wall: 0,
        count: None,
        nmi_total_us: None,
        nmi_count: None,
    };
    let mut wall = None;
    for field in fields {
        let Some((key, value)) = field.split_once(':') else {
            return Err(format!("unexpected {field:?}"));
        };
        match key {
            "ts" => wall = Some(seconds(value).ok_or_else(|| format!("bad ts {value:?}"))?),
            "count" => s.count = Some(number(value, "count")?),
            "nmi-total" => s.nmi_total_us = Some(number(value, "nmi-total")?),
            "nmi-count" => s.nmi_count = Some(number(value, "nmi-count")?),
            _ => {}
        }
    }
    s.wall = wall.ok_or("no ts: field")?;
    Ok(s)
}

fn number(text: &str, what: &str) -> Result<u64, String> {
    text.trim()
        .parse()
        .map_err(|_| format!("bad {what} {:?}", text.trim()))
}

/// The last `[NNN]` column: the CPU (a task name may contain brackets, but not digits only
/// followed by the flags and the time).
fn cpu_column(columns: &str) -> Option<usize> {
    columns.rmatch_indices('[').find_map(|(at, _)| {
        let rest = &columns[at + 1..];
        let end = rest.find(']')?;
        rest[..end].parse().ok()
    })
}

/// `SECONDS.FRACTION` (up to nanoseconds) as nanoseconds.
fn seconds(text: &str) -> Option<u64> {
    let (secs, frac) = text.split_once('.').unwrap_or((text, ""));
    if frac.len() > 9 || !frac.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let scale = 10u64.pow(9 - frac.len() as u32);
    let frac: u64 = if frac.is_empty() {
        0
    } else {
        frac.parse().ok()?
    };
    secs.parse::<u64>()
        .ok()?
        .checked_mul(1_000_000_000)?
        .checked_add(frac * scale)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(line: &str) -> KernelSample {
        match parse_line(line) {
            Line::Sample(s) => s,
            other => panic!("{line:?} gave {other:?}"),
        }
    }

    /// The hwlat tracer's `trace` from real kernels: Debian's 6.12 PREEMPT_RT and the lab's
    /// tracer kernel under qemu, watching CPU 1 while the host stopped the whole VM once
    /// (tests/fixtures/lab/KERNEL/black_hole: `stops.txt` names the phase of each line of
    /// `host_stop.txt`). Every line parses, the windows come in order on CPU 1, and the one
    /// window far above emulation's few-ms noise is the stop, within 25 % of the host's figure
    /// (the host times SIGSTOP to SIGCONT from outside).
    #[test]
    fn real_kernel_output_shows_the_stop() {
        let lab = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/lab");
        for kernel in ["rt", "tracer"] {
            let dir = lab.join(kernel).join("black_hole");
            let read = |name: &str| std::fs::read_to_string(dir.join(name)).unwrap();
            let phase = read("stops.txt")
                .lines()
                .position(|l| l == "hwlat_trace")
                .unwrap();
            let stop_us: f64 = read("host_stop.txt").lines().nth(phase).unwrap()
                ["host_stop_us=".len()..]
                .parse()
                .unwrap();
            let samples: Vec<KernelSample> = read("hwlat_trace.txt")
                .lines()
                .filter_map(|l| match parse_line(l) {
                    Line::Sample(s) => Some(s),
                    Line::Comment => None,
                    Line::Bad(why) => panic!("{kernel}: {l:?}: {why}"),
                })
                .collect();
            assert!(samples.len() >= 2, "{kernel}: {samples:?}");
            assert!(samples.iter().all(|s| s.cpu == 1 && s.count.is_some()));
            assert!(samples.windows(2).all(|w| w[1].seq == w[0].seq + 1));
            let long: Vec<u64> = samples
                .iter()
                .map(KernelSample::max_us)
                .filter(|&us| us > 20_000)
                .collect();
            assert_eq!(long.len(), 1, "{kernel}: {samples:?}");
            let got = long[0] as f64;
            assert!(
                (got - stop_us).abs() <= stop_us * 0.25,
                "{kernel}: {got} us for a {stop_us} us stop"
            );
        }
    }

    /// The example of the commit that added `count:` (Linux 5.7).
    #[test]
    fn the_documented_line_with_count() {
        let s = sample(
            "           <...>-1729  [001] d...   678.473449: #1     inner/outer(us):   11/12    \
             ts:1581527483.343962693 count:6",
        );
        assert_eq!(
            s,
            KernelSample {
                cpu: 1,
                trace_ts: 678_473_449_000,
                seq: 1,
                inner_us: 11,
                outer_us: 12,
                wall: 1_581_527_483_343_962_693,
                count: Some(6),
                nmi_total_us: None,
                nmi_count: None,
            }
        );
        assert_eq!(s.max_us(), 12);
    }

    /// Linux 4.9 to 5.6 print no count.
    #[test]
    fn an_old_line_without_count() {
        let s = sample(
            "          <idle>-0     [003] d... 19452.055471: #12    inner/outer(us):  103/9     \
             ts:1499801089.066141940",
        );
        assert_eq!((s.cpu, s.seq, s.inner_us, s.outer_us), (3, 12, 103, 9));
        assert_eq!(s.count, None);
        assert_eq!(s.wall, 1_499_801_089_066_141_940);
        assert_eq!(s.trace_ts, 19_452_055_471_000);
        assert_eq!(s.max_us(), 103);
    }

    /// NMIs, with and without their total time (generic sched_clock kernels print only the
    /// count), on a kernel with a TGID column, 5-character flags and nanosecond timestamps.
    #[test]
    fn nmi_fields_tgid_column_and_new_flags() {
        let s = sample(
            "     hwlatd-1209    (-------) [000] dn...  1029.331271003: #3     inner/outer(us):   \
             19/22    ts:1581527508.543230543 count:2 nmi-total:7 nmi-count:1",
        );
        assert_eq!((s.cpu, s.trace_ts), (0, 1_029_331_271_003));
        assert_eq!(
            (s.count, s.nmi_total_us, s.nmi_count),
            (Some(2), Some(7), Some(1))
        );
        let arm = sample(
            "<...>-88 [12] d.... 5.000001: #7 inner/outer(us): 40/0 ts:1.5 count:1 nmi-count:3 \
             future:9",
        );
        assert_eq!((arm.cpu, arm.wall), (12, 1_500_000_000));
        assert_eq!((arm.nmi_total_us, arm.nmi_count), (None, Some(3)));
    }

    #[test]
    fn headers_are_comments_and_broken_lines_say_why() {
        assert_eq!(parse_line("# tracer: hwlat"), Line::Comment);
        assert_eq!(parse_line("   "), Line::Comment);
        let bad = |line: &str, says: &str| match parse_line(line) {
            Line::Bad(why) => assert!(why.contains(says), "{line:?}: {why:?}"),
            other => panic!("{line:?} gave {other:?}"),
        };
        bad(
            "<...>-1 [001] d... 1.0: 0xffff: hwlat: time running backwards",
            "not an hwlat sample",
        );
        bad(
            "<...>-1 [001] d... 1.0: #1 inner/outer(us): x/2 ts:1.0",
            "bad inner",
        );
        bad(
            "<...>-1 [001] d... 1.0: #1 inner/outer(us): 1/2 count:3",
            "no ts:",
        );
        bad(
            "<...>-1 [001] d... 1.0: #1 inner/outer(us): 1/2 ts:1.0 count:",
            "bad count",
        );
        bad(
            "<...>-1 d... 1.0: #1 inner/outer(us): 1/2 ts:1.0",
            "no [cpu]",
        );
        bad(
            "<...>-1 [001] d... 1.0 #1 inner/outer(us): 1/2 ts:1.0",
            "time:",
        );
        bad(
            "<...>-1 [001] d... 1.0: inner/outer(us): 1/2 ts:1.0",
            "#sequence",
        );
        bad(
            "<...>-1 [001] d... 1.0: #1 inner/outer(us): 1/2 ts:1.1234567890",
            "bad ts",
        );
        bad(
            "<...>-1 [001] d... 1.0: #1 inner/outer(us):",
            "no inner/outer",
        );
    }
}
