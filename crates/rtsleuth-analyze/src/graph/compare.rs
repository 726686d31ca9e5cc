//! Aligning a slow call tree with a typical one and saying where the time went.
//!
//! Children are matched by function name in call order, a repeated call pairing with the
//! same occurrence on the other side (the second `_raw_spin_lock` with the second). What is
//! left over on the slow side is `extra` (whole subtrees, reported at their top), what is left
//! over on the typical side is `missing`. A matched call is `slower` when its *own* code grew
//! (its exclusive time, by more than the threshold): growth that a child explains is reported
//! at that child, so a slow leaf is one row with its path, not one row per ancestor.

use super::tree::CallTree;
use rustc_hash::FxHashMap;

/// A subtree present on one side only.
#[derive(Debug, Clone, PartialEq)]
pub struct Lone {
    /// From the compared function down to this call, itself included.
    pub path: Vec<String>,
    pub ns: u64,
    /// Calls in the subtree, itself included.
    pub calls: u64,
}

/// A call present on both sides whose own code took longer on the slow side.
#[derive(Debug, Clone, PartialEq)]
pub struct Grown {
    pub path: Vec<String>,
    pub slow_ns: u64,
    pub base_ns: u64,
    /// Growth of its exclusive time.
    pub self_delta_ns: i64,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Differences {
    pub extra: Vec<Lone>,
    pub missing: Vec<Lone>,
    pub slower: Vec<Grown>,
}

/// Compares `slow` with `base`; `threshold_ns` is the least exclusive growth reported.
pub fn compare(slow: &CallTree, base: &CallTree, threshold_ns: u64) -> Differences {
    let mut d = Differences::default();
    let mut path = vec![slow.name.clone()];
    walk(slow, base, threshold_ns, &mut path, &mut d);
    d.extra.sort_by_key(|l| std::cmp::Reverse(l.ns));
    d.missing.sort_by_key(|l| std::cmp::Reverse(l.ns));
    d.slower.sort_by_key(|g| std::cmp::Reverse(g.self_delta_ns));
    d
}

fn walk(
    slow: &CallTree,
    base: &CallTree,
    threshold: u64,
    path: &mut Vec<String>,
    d: &mut Differences,
) {
    let self_delta = slow.exclusive_ns() as i64 - base.exclusive_ns() as i64;
    if self_delta > threshold as i64 {
        d.slower.push(Grown {
            path: path.clone(),
            slow_ns: slow.ns,
            base_ns: base.ns,
            self_delta_ns: self_delta,
        });
    }
    let pairs = pair_children(&slow.children, &base.children);
    let mut matched_base = vec![false; base.children.len()];
    for (s, b) in slow.children.iter().zip(&pairs) {
        path.push(s.name.clone());
        match b {
            Some(i) => {
                matched_base[*i] = true;
                walk(s, &base.children[*i], threshold, path, d);
            }
            None => d.extra.push(lone(path, s)),
        }
        path.pop();
    }
    for (b, _) in base.children.iter().zip(matched_base).filter(|(_, m)| !m) {
        path.push(b.name.clone());
        d.missing.push(lone(path, b));
        path.pop();
    }
}

fn lone(path: &[String], t: &CallTree) -> Lone {
    Lone {
        path: path.to_vec(),
        ns: t.ns,
        calls: t.calls(),
    }
}

/// For each slow child, the index of the base child it pairs with: the k-th call of a name
/// pairs with the k-th call of that name.
fn pair_children(slow: &[CallTree], base: &[CallTree]) -> Vec<Option<usize>> {
    let mut by_name: FxHashMap<&str, Vec<usize>> = FxHashMap::default();
    for (i, b) in base.iter().enumerate() {
        by_name.entry(&b.name).or_default().push(i);
    }
    let mut seen: FxHashMap<&str, usize> = FxHashMap::default();
    slow.iter()
        .map(|s| {
            let k = seen.entry(&s.name).or_default();
            let i = by_name
                .get(s.name.as_str())
                .and_then(|v| v.get(*k))
                .copied();
            *k += 1;
            i
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(name: &str, ns: u64, children: Vec<CallTree>) -> CallTree {
        CallTree {
            name: name.into(),
            ns,
            children,
        }
    }

    #[test]
    fn extra_subtree_and_repeated_calls() {
        let base = t(
            "irq",
            10_000,
            vec![
                t("lock", 100, vec![]),
                t("run", 5_000, vec![]),
                t("lock", 100, vec![]),
            ],
        );
        let slow = t(
            "irq",
            17_600,
            vec![
                t("lock", 100, vec![]),
                t(
                    "run",
                    12_500,
                    vec![t("start", 7_500, vec![t("enqueue", 1_000, vec![])])],
                ),
                t("lock", 200, vec![]),
            ],
        );
        let d = compare(&slow, &base, 50);
        assert_eq!(
            d.extra,
            vec![Lone {
                path: vec!["irq".into(), "run".into(), "start".into()],
                ns: 7_500,
                calls: 2
            }]
        );
        // `run` grew by 7.5 us, all of it explained by the extra child: not slower itself. The
        // second lock (paired with the second) grew by 100 ns of its own.
        assert_eq!(
            d.slower,
            vec![Grown {
                path: vec!["irq".into(), "lock".into()],
                slow_ns: 200,
                base_ns: 100,
                self_delta_ns: 100
            }]
        );
        assert!(d.missing.is_empty());
    }

    #[test]
    fn missing_and_own_growth() {
        let base = t("f", 1_000, vec![t("g", 400, vec![])]);
        let slow = t("f", 3_000, vec![]);
        let d = compare(&slow, &base, 1_000);
        assert_eq!(d.missing[0].path, vec!["f".to_string(), "g".to_string()]);
        assert_eq!(d.slower[0].self_delta_ns, 2_400);
    }
}
