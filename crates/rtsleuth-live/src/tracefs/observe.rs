//! What a tracefs user would notice changed: the settings a session may touch, read back.
//!
//! Sessions compare this before and after restoring, so a restore that silently failed (another
//! tool changed something meanwhile, a kernel that reads a value back differently) is reported
//! instead of trusted; the tests use it to prove the restore.

use super::events::LATENCY;
use std::collections::BTreeMap;
use std::path::Path;

/// Files of a buffer directory whose values a session may change.
const BUFFER_FILES: &[&str] = &[
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

/// The keys whose values differ between two observations, with both values.
pub fn differences(
    before: &BTreeMap<String, String>,
    after: &BTreeMap<String, String>,
) -> Vec<String> {
    let keys: std::collections::BTreeSet<&String> = before.keys().chain(after.keys()).collect();
    keys.into_iter()
        .filter(|k| before.get(*k) != after.get(*k))
        .map(|k| format!("{k}: {:?} -> {:?}", before.get(k), after.get(k)))
        .collect()
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
