//! A chain finding cut into its links (docs/claims.md, "Wake chains"): each link's wait is
//! checked as a finding of the link's task, with that task's wake-up and run, so the stretch
//! rules need no notion of chains. The waker's own runs (`waker_run`) belong to no link.

use super::finding::{Finding, Link, Stretch};

/// One link's wait (or the victim's own) as a finding of its own.
#[derive(Clone, Debug)]
pub struct Segment {
    /// The link's task as the victim: its wake-up, run and the stretches of its wait.
    pub finding: Finding,
    /// The link it is cut from; `None` for the victim's own wait.
    pub link: Option<usize>,
    /// For each of its stretches, the index in the whole finding's timeline, so a violation
    /// names the stretch the engine printed.
    pub index: Vec<usize>,
}

/// A chain finding cut: the segments, and the stretches that lie in a waker's run but are
/// not `waker_run` (stretch index, link index).
#[derive(Debug, Default)]
pub struct Cut {
    pub segments: Vec<Segment>,
    pub in_runs: Vec<(usize, usize)>,
}

/// What a span of the chain's window is.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Part {
    Wait(Option<usize>),
    Run(usize),
}

/// The spans of the window in order: each link's wait, its run up to its waking of the next
/// (when not empty), then the victim's wait.
fn parts(f: &Finding) -> Vec<(i64, i64, Part)> {
    let mut out = Vec::new();
    for (i, l) in f.chain.iter().enumerate() {
        let lo = if i == 0 { f.window_start() } else { l.woken };
        out.push((lo, l.run, Part::Wait(Some(i))));
        if l.wakes_next > l.run {
            out.push((l.run, l.wakes_next, Part::Run(i)));
        }
    }
    out.push((f.wakeup, f.run, Part::Wait(None)));
    out
}

/// The span a stretch belongs to: the one its first nanosecond lies in; a zero-length stretch
/// joins the first wait whose closed span holds it (never a run, which is one stretch).
fn place(parts: &[(i64, i64, Part)], s: &Stretch) -> usize {
    let found = if s.end <= s.start {
        parts
            .iter()
            .position(|&(lo, hi, p)| matches!(p, Part::Wait(_)) && lo <= s.start && s.start <= hi)
    } else {
        parts.iter().rposition(|&(lo, _, _)| lo <= s.start + 1)
    };
    found.unwrap_or(0)
}

/// The pseudo-finding of a link's wait: the link's task woken at `woken` and run at `run` on
/// its CPU; the first link is due at the chain's start by its timer or interrupt, the others
/// are plain wake-ups.
fn link_finding(f: &Finding, i: usize, l: &Link, switched_in: bool) -> Finding {
    let start = i == 0;
    let expected = if start { f.expected } else { None };
    let source = match (start, l.woken_by.as_str()) {
        (true, "timer") => "timer",
        (true, "queue") => "queued",
        // chain_start checks an interrupt start's due time; due_evidence knows no such source.
        (true, _) => "interrupt",
        (false, _) => "wakeup",
    };
    Finding {
        set: f.set.clone(),
        comm: l.comm.clone(),
        pid: l.pid,
        prio: l.prio,
        cpu: l.cpu,
        latency_us: (l.run - expected.unwrap_or(l.woken)) as f64 / 1e3,
        source: source.into(),
        expected,
        wakeup: l.woken,
        run: l.run,
        run_at: if switched_in { "switch" } else { "inferred" }.into(),
        root_cause: String::new(),
        components: Vec::new(),
        timeline: Vec::new(),
        chain: Vec::new(),
    }
}

/// The victim's own wait, from its wake-up by the last link: a plain wake-up.
fn victim_finding(f: &Finding) -> Finding {
    Finding {
        latency_us: (f.run - f.wakeup) as f64 / 1e3,
        source: "wakeup".into(),
        expected: None,
        timeline: Vec::new(),
        chain: Vec::new(),
        ..f.clone()
    }
}

/// Cuts a chain finding into its links' waits and the victim's; `switched_in` says whether a
/// link's run is a switch-in (`run_at: switch`) or the task's first event (`inferred`).
pub fn cut(f: &Finding, switched_in: impl Fn(&Link) -> bool) -> Cut {
    let parts = parts(f);
    let mut segments: Vec<Segment> = parts
        .iter()
        .filter_map(|&(_, _, p)| match p {
            Part::Wait(Some(i)) => Some(Segment {
                finding: link_finding(f, i, &f.chain[i], switched_in(&f.chain[i])),
                link: Some(i),
                index: Vec::new(),
            }),
            Part::Wait(None) => Some(Segment {
                finding: victim_finding(f),
                link: None,
                index: Vec::new(),
            }),
            Part::Run(_) => None,
        })
        .collect();
    let mut in_runs = Vec::new();
    for (k, s) in f.timeline.iter().enumerate() {
        if s.kind == "waker_run" {
            continue;
        }
        let (_, _, part) = parts[place(&parts, s)];
        let link = match part {
            Part::Run(i) => {
                in_runs.push((k, i));
                continue;
            }
            Part::Wait(link) => link,
        };
        let seg = segments.iter_mut().find(|g| g.link == link).unwrap();
        let mut s = s.clone();
        s.before = link == Some(0) && s.start < seg.finding.wakeup;
        seg.finding.timeline.push(s);
        seg.index.push(k);
    }
    Cut { segments, in_runs }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stretch(kind: &str, cpu: u32, start: i64, end: i64) -> Stretch {
        Stretch {
            kind: kind.into(),
            before: start < 1_000_050_000,
            cpu,
            start,
            end,
            culprit: None,
            culprit_pid: None,
            detail: String::new(),
        }
    }

    fn link(pid: i64, cpu: u32, woken: i64, run: i64, wakes_next: i64, by: &str) -> Link {
        Link {
            pid,
            comm: format!("t{pid}"),
            prio: 19,
            cpu,
            woken,
            run,
            wakes_next,
            woken_by: by.into(),
            interrupt: None,
        }
    }

    /// pipe_chain's shape, two links: the producer (pid 10, CPU0) due at 1.000000 by its
    /// timer, woken at 1.000030 inside the interrupt, run at 1.000045, waking the relay (pid
    /// 11, CPU0) at 1.000047; the relay runs at once (no waker_run of its own: it wakes the
    /// consumer at its run, 1.000050); the consumer (pid 20, CPU1) runs at 1.003000.
    fn chain_finding() -> Finding {
        Finding {
            set: "t".into(),
            comm: "consumer".into(),
            pid: 20,
            prio: 29,
            cpu: 1,
            latency_us: 3000.0,
            source: "chain".into(),
            expected: Some(1_000_000_000),
            wakeup: 1_000_050_000,
            run: 1_003_000_000,
            run_at: "switch".into(),
            root_cause: "higher_priority".into(),
            components: Vec::new(),
            timeline: vec![
                stretch("black_hole", 0, 1_000_000_000, 1_000_029_000),
                stretch("hardirq", 0, 1_000_029_000, 1_000_030_000),
                stretch("hardirq", 0, 1_000_030_000, 1_000_032_000),
                stretch("kernel_path", 0, 1_000_032_000, 1_000_045_000),
                stretch("waker_run", 0, 1_000_045_000, 1_000_047_000),
                stretch("kernel_path", 0, 1_000_047_000, 1_000_050_000),
                stretch("higher_priority", 1, 1_000_050_000, 1_003_000_000),
            ],
            chain: vec![
                link(10, 0, 1_000_030_000, 1_000_045_000, 1_000_047_000, "timer"),
                link(11, 0, 1_000_047_000, 1_000_050_000, 1_000_050_000, "task"),
            ],
        }
    }

    fn kinds(s: &Segment) -> Vec<(&str, bool)> {
        let tl = &s.finding.timeline;
        tl.iter().map(|s| (s.kind.as_str(), s.before)).collect()
    }

    /// Each link's wait becomes a finding of the link's task: the first due at the chain's
    /// start by its timer, before its own wake-up only up to it; the second a plain wake-up;
    /// the victim's from its wake-up; the waker_run stretch in none, indices kept.
    #[test]
    fn a_chain_is_cut_into_its_links() {
        let cut = cut(&chain_finding(), |l| l.pid == 10);
        assert!(cut.in_runs.is_empty());
        let [p, r, v] = &cut.segments[..] else {
            panic!("{:?}", cut.segments)
        };
        assert_eq!(
            (
                p.link,
                p.finding.pid,
                p.finding.cpu,
                p.finding.source.as_str()
            ),
            (Some(0), 10, 0, "timer")
        );
        assert_eq!(
            (p.finding.expected, p.finding.wakeup, p.finding.run),
            (Some(1_000_000_000), 1_000_030_000, 1_000_045_000)
        );
        assert_eq!(p.finding.run_at, "switch");
        assert_eq!(
            kinds(p),
            [
                ("black_hole", true),
                ("hardirq", true),
                ("hardirq", false),
                ("kernel_path", false)
            ]
        );
        assert_eq!(p.index, [0, 1, 2, 3]);
        assert_eq!(
            (
                r.link,
                r.finding.pid,
                r.finding.expected,
                r.finding.source.as_str()
            ),
            (Some(1), 11, None, "wakeup")
        );
        assert_eq!(r.finding.run_at, "inferred");
        assert_eq!(
            (kinds(r), r.index.clone()),
            (vec![("kernel_path", false)], vec![5])
        );
        assert_eq!(
            (v.link, v.finding.pid, v.finding.expected, v.finding.wakeup),
            (None, 20, None, 1_000_050_000)
        );
        assert_eq!(v.finding.source, "wakeup");
        assert_eq!(
            (kinds(v), v.index.clone()),
            (vec![("higher_priority", false)], vec![6])
        );
        assert!(v.finding.chain.is_empty());
    }

    /// An interrupt start is no timer finding; a stretch other than waker_run inside a
    /// waker's run belongs to no wait and is reported; a stretch lengthened past its wait's
    /// end stays in the wait it starts in.
    #[test]
    fn interrupt_starts_and_stretches_out_of_place() {
        let mut f = chain_finding();
        f.chain[0].woken_by = "interrupt".into();
        f.timeline[4].kind = "hardirq".into();
        f.timeline[3].end += 1_000_000;
        let cut = cut(&f, |_| true);
        assert_eq!(cut.segments[0].finding.source, "interrupt");
        assert_eq!(cut.segments[0].index, [0, 1, 2, 3]);
        assert_eq!(cut.in_runs, [(4, 0)]);
    }

    /// A zero-length stretch at a wait's end stays in that wait, not in the run after it.
    #[test]
    fn a_zero_length_stretch_joins_a_wait() {
        let mut f = chain_finding();
        let at = f.chain[0].run;
        f.timeline.insert(4, stretch("kernel_path", 0, at, at));
        let cut = cut(&f, |_| true);
        assert!(cut.in_runs.is_empty());
        assert_eq!(cut.segments[0].index, [0, 1, 2, 3, 4]);
    }
}
