//! What a tracefs user would notice changed: the settings a session may touch, read back.
//!
//! Sessions compare this before and after restoring, so a restore that silently failed (another
//! tool changed something meanwhile, a kernel that reads a value back differently) is reported
//! instead of trusted; the tests use it to prove the restore. Sizes are compared by what they
//! mean: a boot-time stub buffer the kernel expanded on first use is the same buffer (see
//! [`super::buffer_size`]), and [`expansion`] says that it happened.

use super::buffer_size::{is_expansion, BufferSize};
use super::events::LATENCY;
use std::collections::BTreeMap;
use std::path::Path;

/// Files of a buffer directory whose values a session may change.
const BUFFER_FILES: &[&str] = &[
    "buffer_size_kb",
    "current_tracer",
    "tracing_on",
    "trace_clock",
    "tracing_cpumask",
    "set_event",
    "tracing_thresh",
    "buffer_subbuf_size_kb",
];

/// Global files a session may change.
const GLOBAL_FILES: &[&str] = &["saved_cmdlines_size"];

/// The observable state of the tracefs mounted at `root`, top-level buffer and instance list,
/// as `name -> value`. Files this kernel lacks are left out.
pub fn observe(root: &Path) -> BTreeMap<String, String> {
    let mut state = BTreeMap::new();
    let mut add = |key: String, path: &Path| {
        if let Ok(value) = std::fs::read_to_string(path) {
            state.insert(key, value.trim().to_owned());
        }
    };
    for name in BUFFER_FILES.iter().chain(GLOBAL_FILES) {
        add((*name).to_owned(), &root.join(name));
    }
    for (dir, prefix) in [("options", "options/"), ("per_cpu", "per_cpu/")] {
        for entry in sorted_entries(&root.join(dir)) {
            let file = if dir == "per_cpu" {
                entry.join("buffer_size_kb")
            } else {
                entry.clone()
            };
            add(format!("{prefix}{}", name_of(&entry)), &file);
        }
    }
    // The filters of the groups the latency preset enables.
    for group in LATENCY {
        for event in sorted_entries(&root.join("events").join(group)) {
            if event.is_dir() {
                add(
                    format!("filter {group}:{}", name_of(&event)),
                    &event.join("filter"),
                );
            }
        }
    }
    let instances: Vec<String> = sorted_entries(&root.join("instances"))
        .iter()
        .map(|p| name_of(p))
        .collect();
    state.insert("instances".to_owned(), instances.join(" "));
    state
}

/// The keys whose values differ between two observations, with both values. A ring buffer
/// the kernel expanded from its boot stub in between is not a difference ([`expansion`]).
pub fn differences(
    before: &BTreeMap<String, String>,
    after: &BTreeMap<String, String>,
) -> Vec<String> {
    let keys: std::collections::BTreeSet<&String> = before.keys().chain(after.keys()).collect();
    keys.into_iter()
        .filter(|k| before.get(*k) != after.get(*k) && !expanded_size(k, before, after))
        .map(|k| format!("{k}: {:?} -> {:?}", before.get(k), after.get(k)))
        .collect()
}

/// What the user should be told when the top-level buffer was a boot stub before and the kernel
/// expanded it since, which no restore can undo.
pub fn expansion(
    before: &BTreeMap<String, String>,
    after: &BTreeMap<String, String>,
) -> Option<String> {
    let (stub_kb, expands_to_kb) = stub(before)?;
    let now = after
        .get("buffer_size_kb")
        .and_then(|v| BufferSize::parse(v))?;
    let BufferSize::Kb(kb) = now else {
        return None;
    };
    expanded_size("buffer_size_kb", before, after).then(|| {
        format!(
            "the top-level ring buffer was still its {stub_kb} KB boot stub; the kernel expanded it \
             to its configured {expands_to_kb} KB ({kb} KB per CPU) on first use, which is \
             permanent until reboot and was left so (writing {stub_kb} back would leave a \
             {stub_kb} KB buffer)"
        )
    })
}

/// Whether `key` is a buffer size that was the boot stub before and is now the size the kernel's
/// expansion of it gives.
fn expanded_size(
    key: &str,
    before: &BTreeMap<String, String>,
    after: &BTreeMap<String, String>,
) -> bool {
    if key != "buffer_size_kb" && !key.starts_with("per_cpu/") {
        return false;
    }
    let Some((_, expands_to_kb)) = stub(before) else {
        return false;
    };
    let subbuf_kb = after
        .get("buffer_subbuf_size_kb")
        .and_then(|v| v.parse().ok())
        .unwrap_or(4);
    matches!(
        after.get(key).and_then(|v| BufferSize::parse(v)),
        Some(BufferSize::Kb(kb)) if is_expansion(expands_to_kb, kb, subbuf_kb)
    )
}

/// The stub size and expanded size of an observation's top-level buffer, if it is a stub.
fn stub(state: &BTreeMap<String, String>) -> Option<(u64, u64)> {
    match BufferSize::parse(state.get("buffer_size_kb")?)? {
        BufferSize::Unexpanded {
            stub_kb,
            expands_to_kb,
        } => Some((stub_kb, expands_to_kb)),
        _ => None,
    }
}

fn sorted_entries(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .map(|rd| rd.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    entries.sort();
    entries
}

fn name_of(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}
