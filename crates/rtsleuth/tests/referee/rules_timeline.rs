//! Rules over a finding's own numbers (docs/claims.md "The timeline"): tiling, components,
//! root_cause, the kernel_path bound (E1) and the common window (V1).

use super::finding::Finding;
use super::{Ctx, Out};
use std::collections::BTreeMap;

/// Timestamps compared to ±2 ns (the JSON's float seconds rounded back to ns).
pub const TOL: i64 = 2;
/// E1: `KERNEL_PATH_MAX_NS` of rules.md.
pub const KERNEL_PATH_MAX_NS: i64 = 1_000_000;

/// tiling: the timeline starts at the window start, each stretch ends where the next starts,
/// the last ends at run_ts, phases lie on their side of wakeup_ts, and the stretch durations
/// add up to latency_us (±1 ns per stretch).
pub fn tiling(f: &Finding, out: &mut Out) {
    let tl = &f.timeline;
    if tl.is_empty() {
        if f.latency_us > 0.0 {
            out.put(
                "tiling",
                None,
                "empty timeline with a non-zero latency".into(),
            );
        }
        return;
    }
    if (tl[0].start - f.window_start()).abs() > TOL {
        out.put(
            "tiling",
            Some(0),
            "the timeline does not start at expected_ts/wakeup_ts".into(),
        );
    }
    if (tl[tl.len() - 1].end - f.run).abs() > TOL {
        out.put(
            "tiling",
            Some(tl.len() - 1),
            "the timeline does not end at run_ts".into(),
        );
    }
    for (i, s) in tl.iter().enumerate() {
        if i > 0 && (tl[i - 1].end - s.start).abs() > TOL {
            out.put(
                "tiling",
                Some(i),
                "gap or overlap with the previous stretch".into(),
            );
        }
        let ok = if s.before {
            s.start >= f.window_start() - TOL && s.end <= f.wakeup + TOL
        } else {
            s.start >= f.wakeup - TOL && s.end <= f.run + TOL
        };
        if !ok || s.end < s.start {
            out.put("tiling", Some(i), "stretch outside its phase".into());
        }
    }
    let sum: i64 = tl.iter().map(|s| s.end - s.start).sum();
    if (sum as f64 - f.latency_us * 1e3).abs() > tl.len() as f64 + 1.0 {
        out.put(
            "tiling",
            None,
            format!(
                "stretches add up to {} ns, latency_us {}",
                sum, f.latency_us
            ),
        );
    }
}

/// components: per (kind, culprit) the components' us equal the timeline's durations.
pub fn components_add_up(f: &Finding, out: &mut Out) {
    let mut want: BTreeMap<(String, Option<String>), (f64, usize)> = BTreeMap::new();
    for s in &f.timeline {
        let e = want.entry((s.kind.clone(), s.culprit.clone())).or_default();
        e.0 += (s.end - s.start) as f64 / 1e3;
        e.1 += 1;
    }
    let mut got: BTreeMap<(String, Option<String>), f64> = BTreeMap::new();
    for c in &f.components {
        *got.entry((c.kind.clone(), c.culprit.clone())).or_default() += c.us;
    }
    for (k, (us, n)) in &want {
        let g = got.get(k).copied().unwrap_or(0.0);
        if (g - us).abs() > 0.002 * *n as f64 + 0.002 {
            out.put(
                "components",
                None,
                format!("{k:?}: components {g} us, timeline {us} us"),
            );
        }
    }
    for k in got.keys().filter(|k| !want.contains_key(*k)) {
        out.put(
            "components",
            None,
            format!("{k:?} is in components, not in the timeline"),
        );
    }
}

/// root_cause: the kind with the largest summed us over the components.
pub fn root_cause_is_largest(f: &Finding, out: &mut Out) {
    let mut by_kind: BTreeMap<&str, f64> = BTreeMap::new();
    for c in &f.components {
        *by_kind.entry(c.kind.as_str()).or_default() += c.us;
    }
    let Some(max) = by_kind.values().copied().reduce(f64::max) else {
        return;
    };
    let mine = by_kind.get(f.root_cause.as_str()).copied().unwrap_or(-1.0);
    if mine < max - 0.001 {
        out.put(
            "root_cause",
            None,
            format!(
                "root_cause {} has {mine} us, another kind has {max} us",
                f.root_cause
            ),
        );
    }
}

/// E1: every kernel_path run of the timeline (neighbours joined) lasts at most 1 ms, except
/// timer slack: a before-wakeup stretch of a `timer` finding whose detail names the slack and
/// which the armed timer's `expires - softexpires` spans.
pub fn kernel_path_bound(f: &Finding, cx: &Ctx, out: &mut Out) {
    let tl = &f.timeline;
    let mut i = 0;
    while i < tl.len() {
        if tl[i].kind != "kernel_path" {
            i += 1;
            continue;
        }
        let mut j = i;
        while j + 1 < tl.len() && tl[j + 1].kind == "kernel_path" {
            j += 1;
        }
        let len: i64 = tl[i..=j].iter().map(|s| s.end - s.start).sum();
        if len > KERNEL_PATH_MAX_NS && !timer_slack(f, cx, i, j, len) {
            out.put(
                "E1_kernel_path_bound",
                Some(i),
                format!("kernel_path of {} us", len / 1000),
            );
        }
        i = j + 1;
    }
}

fn timer_slack(f: &Finding, cx: &Ctx, i: usize, j: usize, len: i64) -> bool {
    if f.source != "timer"
        || !f.timeline[i..=j]
            .iter()
            .all(|s| s.before && s.detail.contains("slack"))
    {
        return false;
    }
    super::rules_wakeup::armed_timer(f, cx).is_some_and(|e| {
        match (e.num("expires"), e.num("softexpires")) {
            (Some(h), Some(s)) => h - s >= len,
            _ => false,
        }
    })
}

/// V1: the finding's window starts at or after the common window start.
pub fn common_window(f: &Finding, cx: &Ctx, out: &mut Out) {
    if let Some(w) = cx.window {
        if f.window_start() < w - TOL || f.wakeup < w - TOL {
            out.put(
                "V1_common_window",
                None,
                format!(
                    "window starts {:.6}, before the common window {:.6}",
                    f.window_start() as f64 / 1e9,
                    w as f64 / 1e9
                ),
            );
        }
    }
}
