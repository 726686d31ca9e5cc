//! `/dev/cpu_dma_latency` held at a target: the PM QoS request that keeps CPUs out of deep idle
//! states, as cyclictest does while it measures.
//!
//! The kernel drops the request when the file is closed, which happens on drop and also when the
//! process dies any other way, so it can never be left held after exit.

use crate::LiveError;
use std::fs::File;
use std::io::Write;

const PATH: &str = "/dev/cpu_dma_latency";

/// An open PM QoS request; dropping it releases the request.
pub struct DmaLatency {
    _file: File,
}

impl DmaLatency {
    /// Requests that no CPU take more than `us` microseconds to leave idle.
    pub fn hold(us: i32) -> Result<DmaLatency, LiveError> {
        let mut file = File::options()
            .write(true)
            .open(PATH)
            .map_err(|e| LiveError::file(PATH, e))?;
        file.write_all(&us.to_ne_bytes())
            .map_err(|e| LiveError::file(PATH, e))?;
        Ok(DmaLatency { _file: file })
    }
}
