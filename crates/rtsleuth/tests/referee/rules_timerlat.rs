//! Rules about timerlat activations (docs/claims.md, "Timerlat activations"): the samples that
//! pair and time them, where the thread is switched in, the tasks osnoise's `thread_noise`
//! names, and that every activation has its finding.

use super::finding::{Finding, Stretch};
use super::frames::noise_span;
use super::raw::Event;
use super::rules_timeline::TOL;
use super::{Ctx, Out};

/// A timerlat sample as printed: (seq, context, latency ns).
pub fn sample(e: &Event) -> Option<(i64, &str, i64)> {
    if e.name != "timerlat_sample" {
        return None;
    }
    Some((e.num("seq")?, e.field("context")?, e.num("timer_latency")?))
}

/// The sample at run_ts on the finding's CPU that closes its activation: the task's thread
/// sample, or for `timerlat_irq` the irq sample that is its CPU's last timerlat sample, the
/// CPU's thread (its latest thread sample before) being the task.
fn closing_sample<'a>(f: &Finding, cx: &'a Ctx) -> Option<(&'a Event, i64, i64)> {
    let irq = f.run_at == "timerlat_irq";
    let (e, seq, lat) = cx
        .trace
        .inside(f.cpu, f.run - TOL - 1, f.run + TOL + 1)
        .filter(|e| irq || e.pid == f.pid)
        .find_map(|e| match sample(e)? {
            (seq, ctx, lat) if ctx == if irq { "irq" } else { "thread" } => Some((e, seq, lat)),
            _ => None,
        })?;
    if irq {
        let later = cx
            .trace
            .inside(f.cpu, e.ts, i64::MAX)
            .any(|x| sample(x).is_some());
        let thread = cx
            .trace
            .before(f.cpu, e.ts)
            .find(|x| matches!(sample(x), Some((_, "thread", _))));
        if later || thread.map(|t| t.pid) != Some(f.pid) {
            return None;
        }
    }
    Some((e, seq, lat))
}

/// The irq-context sample `seq` of `cpu`, the latest at or before `ts`.
fn irq_sample(cx: &Ctx, cpu: u32, seq: i64, ts: i64) -> Option<&Event> {
    cx.trace
        .before(cpu, ts)
        .find(|e| matches!(sample(e), Some((s, "irq", _)) if s == seq))
}

/// timerlat_pairing: run_ts is the task's thread sample `#N` on its CPU, wakeup_ts the irq
/// sample `#N` of that CPU before it; for `timerlat_irq`, both are that irq sample, the last
/// of the CPU.
pub fn timerlat_pairing(f: &Finding, cx: &Ctx, out: &mut Out) {
    let why = match closing_sample(f, cx) {
        None => format!(
            "no closing timerlat sample of the task at run_ts ({})",
            f.run_at
        ),
        Some((e, seq, _)) => match irq_sample(cx, f.cpu, seq, e.ts) {
            Some(i) if (i.ts - f.wakeup).abs() <= TOL => return,
            Some(i) => format!("the irq sample #{seq} is at {:.6}", i.ts as f64 / 1e9),
            None => format!("no irq sample #{seq} before the thread's"),
        },
    };
    out.put("wakeup_pairing", None, why);
}

/// The finding's due time comes from a timerlat sample: a timerlat activation, or a traced
/// wake-up of the thread its sample at run_ts times (`run_at: mark`).
pub fn timed_by_sample(f: &Finding, cx: &Ctx) -> bool {
    f.run_at.starts_with("timerlat") || f.run_at == "mark" && closing_sample(f, cx).is_some()
}

/// due_evidence for a timerlat activation: expected_ts is the sample minus its latency.
pub fn timerlat_due(f: &Finding, cx: &Ctx, expected: i64) -> Result<(), String> {
    let (e, _, lat) = closing_sample(f, cx).ok_or("no closing timerlat sample at run_ts")?;
    // Due before the recorded history: explained from where that begins (V1); while the task
    // still ran, from its last event in task context; never after the wake-up (the text
    // prints both to the µs).
    let window = cx.window.unwrap_or(i64::MIN);
    let ran = (cx.trace.of_pid(f.pid))
        .rfind(|x| x.ts < f.wakeup && x.task_context())
        .map_or(i64::MIN, |x| x.ts);
    let from = (e.ts - lat).max(window).max(ran).min(f.wakeup);
    if (from - expected).abs() > TOL {
        return Err(format!("the sample says due at {:.9}", from as f64 / 1e9));
    }
    Ok(())
}

/// Where the thread can have been switched in at the earliest: the first `thread_noise` of its
/// CPU printed at or after the irq sample (the task switched out for it), else run_ts.
pub fn switched_in_by(f: &Finding, cx: &Ctx) -> i64 {
    cx.trace
        .inside(f.cpu, f.wakeup - TOL - 1, f.run)
        .find(|e| e.name == "thread_noise")
        .map_or(f.run, |e| e.ts)
}

/// The `thread_noise` events of `cpu` printed inside (lo, hi]: (ts, pid, start).
fn thread_noise(cx: &Ctx, cpu: u32, lo: i64, hi: i64) -> Vec<(i64, i64, i64)> {
    cx.trace
        .inside(cpu, lo, hi + 1)
        .filter(|e| e.name == "thread_noise")
        .filter_map(|e| {
            let (who, start, _) = noise_span(e)?;
            let pid = who.rsplit(':').next()?.parse().ok()?;
            Some((e.ts, pid, start))
        })
        .collect()
}

/// thread_noise_holds: an `unknown` stretch naming a task is that task's `thread_noise`.
pub fn thread_noise_holds(f: &Finding, cx: &Ctx, out: &mut Out) {
    for (i, s) in f.timeline.iter().enumerate() {
        let Some(pid) = s.culprit_pid.filter(|_| s.kind == "unknown") else {
            continue;
        };
        if let Err(why) = held(s, pid, f.run, cx) {
            out.put("thread_noise_holds", Some(i), why);
        }
    }
}

fn held(s: &Stretch, pid: i64, run: i64, cx: &Ctx) -> Result<(), String> {
    let noise = thread_noise(cx, s.cpu, s.start, run);
    let &(at, who, start) = noise
        .iter()
        .find(|n| n.0 >= s.end - 1_000)
        .ok_or("no thread_noise after the stretch")?;
    if who != pid || start > s.start + 10_000 {
        return Err(format!(
            "the thread_noise after it is pid {who} from {start}"
        ));
    }
    if noise.iter().any(|n| n.0 < s.end - 1_000 && n.0 < at) {
        return Err("another task's thread_noise inside".into());
    }
    match cx
        .trace
        .inside(s.cpu, s.start, s.end)
        .find(|e| e.pid != pid && e.pid >= 0)
    {
        Some(e) => Err(format!("{} of pid {} inside", e.name, e.pid)),
        None => Ok(()),
    }
}

/// completeness for timerlat targets (no referee wake-ups): every activation later than
/// `least` inside the window, with no lost events between its samples, has a finding; so
/// does each CPU's last irq sample with no thread sample after it, on the target's CPU.
pub fn activations_found(pid: i64, findings: &[Finding], least: i64, cx: &Ctx, out: &mut Out) {
    let window = cx.window.unwrap_or(i64::MIN);
    let mut require = |ts: i64, what: String| {
        if !findings
            .iter()
            .any(|f| f.pid == pid && (f.run - ts).abs() <= TOL)
        {
            out.put(
                "completeness",
                None,
                format!("pid {pid}: {what} has no finding"),
            );
        }
    };
    for (&cpu, ix) in &cx.trace.by_cpu {
        let mut samples = (ix.iter().rev())
            .map(|&i| &cx.trace.events[i])
            .filter_map(|e| Some((e, sample(e)?)));
        let Some((last, (seq, "irq", lat))) = samples.next() else {
            continue;
        };
        let thread = samples.find(|(_, s)| s.1 == "thread");
        if thread.map(|t| t.0.pid) == Some(pid) && lat > least + 2 && last.ts - lat >= window {
            require(
                last.ts,
                format!("CPU{cpu}'s last timerlat #{seq} (irq, {lat} ns)"),
            );
        }
    }
    for e in cx.trace.of_pid(pid) {
        let Some((seq, "thread", lat)) = sample(e) else {
            continue;
        };
        // Its timer fired while the thread itself ran: no wait to explain.
        let Some(irq) = irq_sample(cx, e.cpu, seq, e.ts).filter(|i| i.pid != pid) else {
            continue;
        };
        let due = e.ts - lat;
        let lost =
            (cx.trace.lost.iter()).any(|&(c, t)| c == e.cpu && t > irq.ts.min(due) && t <= e.ts);
        if due >= window && !lost && lat > least + 2 {
            require(
                e.ts,
                format!("timerlat #{seq} at {:.6} ({lat} ns)", e.ts as f64 / 1e9),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::{check_finding, explain, finding, peers, root, Ctx};

    fn rules(vs: &[super::super::Violation]) -> Vec<&'static str> {
        vs.iter().map(|v| v.rule).collect()
    }

    /// rtsleuth's first finding on an rtla fixture, and the referee's view of that trace.
    fn first_finding(name: &str) -> (super::Finding, Ctx) {
        let path = root().join("tests/fixtures/rtla").join(name);
        let (_, trace) = peers::read(&path).unwrap();
        let doc = explain(&path, &["--top", "20", "--threshold", "0"]).unwrap();
        let (found, bad) = finding::findings("t", &doc);
        assert!(bad.is_empty(), "{bad:?}");
        (found.into_iter().next().unwrap(), Ctx::new(trace))
    }

    /// The kernel documentation's stack dump: rtsleuth's finding holds, and each of its claims
    /// made false is caught by the rule that states it.
    #[test]
    fn false_timerlat_claims_are_flagged() {
        let (f, cx) = first_finding("doc_print_stack.txt");
        let f = &f;
        assert!(
            check_finding(f, &cx).is_empty(),
            "{:?}",
            check_finding(f, &cx)
        );
        let insmod = f
            .timeline
            .iter()
            .position(|s| s.culprit_pid == Some(1026))
            .unwrap();
        let irq = f.timeline.iter().position(|s| s.kind == "hardirq").unwrap();

        let mut m = f.clone();
        m.timeline[insmod].culprit_pid = Some(1001);
        m.timeline[insmod].culprit = Some("timerlat/7-1001".into());
        assert!(rules(&check_finding(&m, &cx)).contains(&"thread_noise_holds"));

        let mut m = f.clone();
        m.timeline[irq].culprit = Some("irq_work:246".into());
        assert!(rules(&check_finding(&m, &cx)).contains(&"irq_frame_open"));

        let mut m = f.clone();
        m.expected = m.expected.map(|e| e - 5_000);
        assert!(rules(&check_finding(&m, &cx)).contains(&"due_evidence"));

        let mut m = f.clone();
        m.run_at = "timerlat_irq".into();
        assert!(rules(&check_finding(&m, &cx)).contains(&"wakeup_pairing"));

        let mut m = f.clone();
        m.wakeup += 400_000;
        assert!(rules(&check_finding(&m, &cx)).contains(&"wakeup_pairing"));
    }

    /// A traced wake-up timed by the thread's sample: a due time the sample does not give is
    /// caught.
    #[test]
    fn a_due_time_the_sample_does_not_give_is_flagged() {
        let (f, cx) = first_finding("written_traced_wakeup.txt");
        let f = &f;
        assert_eq!(f.run_at, "mark");
        assert!(
            check_finding(f, &cx).is_empty(),
            "{:?}",
            check_finding(f, &cx)
        );
        let mut m = f.clone();
        m.expected = m.expected.map(|e| e - 5_000);
        assert!(rules(&check_finding(&m, &cx)).contains(&"due_evidence"));
    }
}
