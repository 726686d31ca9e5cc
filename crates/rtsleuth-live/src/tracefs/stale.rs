//! Private instances (`instances/rtsleuth-PID`) whose run is gone. A run killed with SIGKILL
//! cannot remove its own, and the instance goes on holding its buffers (and tracing, if it
//! was on); the next run that makes a private instance removes such leftovers and says so.

use std::path::Path;

/// The instance name a process with this pid uses ([`super::Buffer::private`]).
pub fn private_name(pid: u32) -> String {
    format!("rtsleuth-{pid}")
}

/// Removes every `instances/rtsleuth-PID` under `root` whose process no longer exists, and
/// says what it removed, or could not. An instance of a live process, or one named otherwise,
/// is left alone (a reused pid keeps an instance one run longer: never removes a live one).
pub fn remove_stale_instances(root: &Path) -> Vec<String> {
    let dir = root.join("instances");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut notes = Vec::new();
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(pid) = name
            .strip_prefix("rtsleuth-")
            .and_then(|p| p.parse::<u32>().ok())
            .filter(|&pid| name == private_name(pid))
        else {
            continue;
        };
        if Path::new("/proc").join(pid.to_string()).exists() {
            continue;
        }
        let path = entry.path();
        notes.push(match std::fs::remove_dir(&path) {
            Ok(()) => format!(
                "removed {}, left behind by rtsleuth process {pid}, which is gone (killed with SIGKILL?): its buffers were still allocated",
                path.display()
            ),
            Err(e) => format!(
                "{} was left behind by rtsleuth process {pid}, which is gone, and could not be removed ({e}); remove it with rmdir",
                path.display()
            ),
        });
    }
    notes
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Outside tracefs, `rmdir` of an empty directory stands for removing an instance: the
    /// dead pid's goes, a live pid's and a foreign name stay.
    #[test]
    fn only_instances_of_gone_processes_are_removed() {
        let root = tempfile::tempdir().unwrap();
        let instances = root.path().join("instances");
        let mut dead = std::process::Command::new("true").spawn().unwrap();
        let dead_pid = dead.id();
        dead.wait().unwrap();
        let live = private_name(std::process::id());
        for name in [
            private_name(dead_pid),
            live.clone(),
            "rtsleuth-test".into(),
            "rtsleuth-012".into(),
        ] {
            std::fs::create_dir_all(instances.join(name)).unwrap();
        }
        let notes = remove_stale_instances(root.path());
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(notes[0].starts_with("removed "), "{notes:?}");
        assert!(
            notes[0].contains(&format!("process {dead_pid}")),
            "{notes:?}"
        );
        assert!(!instances.join(private_name(dead_pid)).exists());
        for kept in [live.as_str(), "rtsleuth-test", "rtsleuth-012"] {
            assert!(instances.join(kept).exists(), "{kept}");
        }
    }
}
