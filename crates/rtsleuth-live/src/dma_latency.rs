//! `/dev/cpu_dma_latency` held at a target: the PM QoS request that keeps CPUs out of deep idle
//! states, as cyclictest does while it measures.
//!
//! The kernel drops the request when the file is closed, which happens on drop and also when the
//! process dies any other way, so it can never be left held after exit. A kernel built without
//! cpuidle (Debian's armmp) has no such file, and no idle states to hold the CPUs out of.

use crate::LiveError;
use std::fs::File;
use std::io::Write;
use std::path::Path;

const PATH: &str = "/dev/cpu_dma_latency";

/// An open PM QoS request; dropping it releases the request.
pub struct DmaLatency {
    _file: File,
}

impl DmaLatency {
    /// Requests that no CPU take more than `us` microseconds to leave idle; `None` when the
    /// kernel has no `/dev/cpu_dma_latency` (built without cpuidle).
    pub fn hold(us: i32) -> Result<Option<DmaLatency>, LiveError> {
        Self::hold_at(Path::new(PATH), us)
    }

    fn hold_at(path: &Path, us: i32) -> Result<Option<DmaLatency>, LiveError> {
        let mut file = match File::options().write(true).open(path) {
            Ok(file) => file,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(LiveError::file(path, e)),
        };
        file.write_all(&us.to_ne_bytes())
            .map_err(|e| LiveError::file(path, e))?;
        Ok(Some(DmaLatency { _file: file }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kernel_without_the_device_holds_nothing_and_is_no_error() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("cpu_dma_latency");
        assert!(DmaLatency::hold_at(&missing, 0).unwrap().is_none());
        std::fs::write(&missing, b"").unwrap();
        assert!(DmaLatency::hold_at(&missing, 0).unwrap().is_some());
        assert_eq!(std::fs::read(&missing).unwrap(), 0i32.to_ne_bytes());
    }
}
