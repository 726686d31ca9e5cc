//! Soak lines and break traces (docs/claims.md, "Soak lines", "Break traces"): what each
//! `rtsleuth.spike/1` line, and a `measure --break` document, claims about the spike it
//! explains, checked from the findings file and the run's `rtsleuth.measure/1` document alone,
//! with the referee's own sums. The captures are not in the corpus (about 8 MB
//! each), so a finding's own claims are left to explain's rules on ordinary traces.

use serde_json::Value;
use std::collections::BTreeMap;

/// How far a finding may reach past the measured spike (finding_matches_measure), and its due
/// time lie from the thread's deadline (spike_is_finding), in ns.
const SLACK_NS: f64 = 20_000.0;

/// Sums of µs printed to 3 decimals may differ by this much a term.
const ROUNDING_US: f64 = 0.001;

/// A kind of stretch and its culprit (`null` for none), as the lines print them.
type Cause = (String, String);

/// The rows of one cause: spikes, total and largest µs.
type Row = (u64, f64, f64);

/// Every claim `lines` and `measure` break, each as `[rule] what`.
pub fn violations(lines: &[Value], measure: &Value) -> Vec<String> {
    let mut out = Vec::new();
    for l in lines {
        check_line(l, &mut out);
    }
    check_counts(lines, &measure["spikes"], &mut out);
    let mut summed: BTreeMap<Cause, Row> = BTreeMap::new();
    for row in lines.iter().flat_map(|l| rows(&l["aggregate"])) {
        let s = summed.entry(row.0).or_default();
        *s = (s.0 + row.1 .0, s.1 + row.1 .1, s.2.max(row.1 .2));
    }
    let by_cause: BTreeMap<Cause, Row> = rows(&measure["spikes"]["by_cause"]).collect();
    if !same_rows(&summed, &by_cause, lines.len()) {
        out.push(format!(
            "[aggregate] the lines' rows add up to {summed:?}, the run says {by_cause:?}"
        ));
    }
    out
}

/// The claims of one line about its spike.
fn check_line(l: &Value, out: &mut Vec<String>) {
    let (spike, f) = (&l["spike"], &l["finding"]);
    let n = &spike["n"];
    if f.is_null() {
        if l["unexplained"].is_null() {
            out.push(format!(
                "[spike_is_finding] line {n}: no finding and no reason"
            ));
        }
        return;
    }
    check_spike(spike, f, &format!("line {n}"), out);
    let mut own: BTreeMap<Cause, Row> = BTreeMap::new();
    for c in f["components"].as_array().into_iter().flatten() {
        let us = num(&c["us"]);
        let row = own.entry(cause(c)).or_default();
        *row = (1, row.1 + us, row.2 + us);
    }
    let printed: BTreeMap<Cause, Row> = rows(&l["aggregate"]).collect();
    let terms = f["components"].as_array().map_or(0, Vec::len);
    if !same_rows(&own, &printed, terms) {
        out.push(format!(
            "[aggregate] line {n}: rows {printed:?}, its finding's stretches make {own:?}"
        ));
    }
}

/// What a finding claims about the spike it explains: the same task, due at the spike's
/// deadline, not longer than measured.
fn check_spike(spike: &Value, f: &Value, which: &str, out: &mut Vec<String>) {
    if f["task"]["pid"] != spike["tid"] {
        out.push(format!(
            "[spike_is_finding] {which}: another task's finding"
        ));
    }
    let due_ns = num(&f["expected_ts"]) * 1e9;
    let off = (due_ns - num(&spike["expected_mono_ns"])).abs();
    // A time missing makes NaN, which is not within the slack either.
    if off.is_nan() || off > SLACK_NS {
        out.push(format!(
            "[spike_is_finding] {which}: due {off:.0} ns from the deadline"
        ));
    }
    let (found, measured) = (num(&f["latency_us"]), num(&spike["latency_us"]));
    let over = found * 1e3 - measured * 1e3;
    if over.is_nan() || over > SLACK_NS {
        out.push(format!(
            "[finding_matches_measure] {which}: {found} us found, {measured} us measured"
        ));
    }
}

/// Break traces (docs/claims.md): the `measure --break` document's findings against its
/// `break`, the spike that stopped the run.
pub fn break_violations(measure: &Value) -> Vec<String> {
    let mut out = Vec::new();
    let (spike, findings) = (&measure["break"], &measure["findings"]);
    match findings.as_array().map(Vec::as_slice) {
        Some([]) if spike["unexplained"].is_string() => {}
        Some([]) => out.push("[spike_is_finding] break: no finding and no reason".into()),
        Some([f]) => check_spike(spike, f, "break", &mut out),
        _ => out.push(format!(
            "[spike_is_finding] break: findings should be one or none, not {findings}"
        )),
    }
    out
}

/// seen = captured + missed; captured = the lines = explained + unexplained.
fn check_counts(lines: &[Value], spikes: &Value, out: &mut Vec<String>) {
    let count = |k: &str| spikes[k].as_u64();
    let explained = lines.iter().filter(|l| !l["finding"].is_null()).count() as u64;
    let lines_n = lines.len() as u64;
    // A count missing, or too large to add, breaks the claim rather than the referee.
    let seen = count("captured")
        .zip(count("missed"))
        .and_then(|(c, m)| c.checked_add(m));
    let holds = seen.is_some()
        && count("seen") == seen
        && count("captured") == Some(lines_n)
        && count("explained") == Some(explained)
        && count("unexplained") == Some(lines_n - explained);
    if !holds {
        out.push(format!(
            "[counts] {lines_n} lines, {explained} explained; the run says {spikes}"
        ));
    }
}

/// The aggregate rows of `v`, by cause.
fn rows(v: &Value) -> impl Iterator<Item = (Cause, Row)> + '_ {
    v.as_array().into_iter().flatten().map(|r| {
        let spikes = r["spikes"].as_u64().unwrap_or(0);
        (cause(r), (spikes, num(&r["total_us"]), num(&r["max_us"])))
    })
}

fn cause(v: &Value) -> Cause {
    (v["kind"].to_string(), v["culprit"].to_string())
}

/// The same causes, counts and µs, up to the rounding of `terms` printed figures a sum.
fn same_rows(a: &BTreeMap<Cause, Row>, b: &BTreeMap<Cause, Row>, terms: usize) -> bool {
    let close = |x: f64, y: f64| (x - y).abs() <= ROUNDING_US * terms as f64;
    a.len() == b.len()
        && a.iter().zip(b).all(|((ka, ra), (kb, rb))| {
            ka == kb && ra.0 == rb.0 && close(ra.1, rb.1) && close(ra.2, rb.2)
        })
}

fn num(v: &Value) -> f64 {
    v.as_f64().unwrap_or(f64::NAN)
}

#[cfg(test)]
mod tests {
    use super::{break_violations, violations};
    use serde_json::Value;

    fn read_json(path: std::path::PathBuf) -> Value {
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
    }

    fn recorded_break() -> Value {
        read_json(super::super::root().join("tests/fixtures/recorded/break/measure.json"))
    }

    /// The recorded break (tests/fixtures/recorded/break) keeps every claim of its findings.
    #[test]
    fn the_recorded_break_keeps_its_claims() {
        let measure = recorded_break();
        assert_eq!(measure["findings"].as_array().unwrap().len(), 1);
        assert_eq!(break_violations(&measure), Vec::<String>::new());
    }

    /// The example that failed before the engine kept the rule: 0bd32e2's break carried no
    /// deadline, so nothing tied its finding to the spike that broke.
    #[test]
    fn a_break_without_its_deadline_is_flagged() {
        let dir = super::super::root().join("tests/fixtures/recorded/break");
        let found = break_violations(&read_json(dir.join("measure-0bd32e2.json")));
        assert_eq!(
            found,
            ["[spike_is_finding] break: due NaN ns from the deadline"]
        );
    }

    /// Each claim of the break broken on purpose is flagged by its own rule, and only by it.
    #[test]
    fn each_broken_break_claim_is_flagged_by_its_rule() {
        let measure = recorded_break();
        type Break = fn(&mut Value);
        let breaks: [(&str, Break); 6] = [
            ("finding_matches_measure", |m| {
                let us = m["findings"][0]["latency_us"].as_f64().unwrap();
                m["break"]["latency_us"] = (us - 21.0).into();
            }),
            ("spike_is_finding", |m| {
                let ns = m["break"]["expected_mono_ns"].as_f64().unwrap();
                m["break"]["expected_mono_ns"] = (ns + 21_000.0).into();
            }),
            ("spike_is_finding", |m| {
                m["break"]
                    .as_object_mut()
                    .unwrap()
                    .remove("expected_mono_ns");
            }),
            ("spike_is_finding", |m| m["break"]["tid"] = 1.into()),
            ("spike_is_finding", |m| {
                let f = m["findings"][0].clone();
                m["findings"] = vec![f.clone(), f].into();
            }),
            ("spike_is_finding", |m| {
                m["findings"] = Vec::<Value>::new().into()
            }),
        ];
        for (rule, broken) in breaks {
            let mut m = measure.clone();
            broken(&mut m);
            assert_flagged_by(rule, &break_violations(&m));
        }
        let mut unexplained = measure.clone();
        unexplained["findings"] = Vec::<Value>::new().into();
        unexplained["break"]["unexplained"] = "no wake-up due at the deadline".into();
        assert_eq!(break_violations(&unexplained), Vec::<String>::new());
    }

    fn recorded() -> (Vec<Value>, Value) {
        let dir = super::super::root().join("tests/fixtures/recorded/soak");
        let text = std::fs::read_to_string(dir.join("findings.jsonl")).unwrap();
        let lines = text.lines().map(|l| serde_json::from_str(l).unwrap());
        (lines.collect(), read_json(dir.join("measure.json")))
    }

    /// `found` is not empty, and every claim in it is `rule`'s.
    fn assert_flagged_by(rule: &str, found: &[String]) {
        assert!(!found.is_empty(), "{rule}: nothing flagged");
        let tag = format!("[{rule}]");
        assert!(
            found.iter().all(|v| v.starts_with(&tag)),
            "{rule}: {found:?}"
        );
    }

    /// The recorded soak (tests/fixtures/recorded/soak) keeps every claim of its lines.
    #[test]
    fn the_recorded_soak_keeps_its_lines_claims() {
        let (lines, measure) = recorded();
        assert_eq!(lines.len(), 12);
        assert_eq!(violations(&lines, &measure), Vec::<String>::new());
    }

    /// The example that failed before the engine kept the rule: a live soak's line whose
    /// finding ends 44.7 us after the thread read its clock (the trace's clock and the
    /// thread's disagreed; tests/fixtures/recorded/soak/README.md).
    #[test]
    fn a_line_longer_than_its_measure_is_flagged() {
        let dir = super::super::root().join("tests/fixtures/recorded/soak");
        let line = read_json(dir.join("clocks-disagree.json"));
        let mut found = Vec::new();
        super::check_line(&line, &mut found);
        assert_eq!(
            found,
            ["[finding_matches_measure] line 3: 1925.877 us found, 1881.534 us measured"]
        );
        let mut withheld = line.clone();
        withheld["finding"] = Value::Null;
        withheld["unexplained"] = "the clocks disagree".into();
        found.clear();
        super::check_line(&withheld, &mut found);
        assert_eq!(found, Vec::<String>::new());
    }

    /// Each claim broken on purpose is flagged by its own rule, and only by it.
    #[test]
    fn each_broken_claim_is_flagged_by_its_rule() {
        let (lines, measure) = recorded();
        type Break = fn(&mut Vec<Value>, &mut Value);
        let breaks: [(&str, Break); 6] = [
            // 21 us past what the thread measured (line 1: 1152.151 found, 1154.335 measured).
            ("finding_matches_measure", |l, _| {
                l[0]["spike"]["latency_us"] = 1131.15.into()
            }),
            ("spike_is_finding", |l, _| {
                let ns = l[1]["spike"]["expected_mono_ns"].as_f64().unwrap();
                l[1]["spike"]["expected_mono_ns"] = (ns - 21_000.0).into();
            }),
            ("spike_is_finding", |l, _| l[2]["spike"]["tid"] = 1.into()),
            ("counts", |_, m| m["spikes"]["missed"] = 1.into()),
            ("counts", |_, m| m["spikes"]["missed"] = u64::MAX.into()),
            ("aggregate", |l, _| {
                l[3]["aggregate"][0]["total_us"] = 1.0.into()
            }),
        ];
        for (rule, broken) in breaks {
            let (mut l, mut m) = (lines.clone(), measure.clone());
            broken(&mut l, &mut m);
            assert_flagged_by(rule, &violations(&l, &m));
        }
    }
}
