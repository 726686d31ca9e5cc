//! Ctrl-C, SIGTERM and SIGHUP turned into a flag that long-running loops poll.
//!
//! The default action of these signals kills the process before any guard can restore tracefs,
//! the scheduling policy or `/dev/cpu_dma_latency`. While an [`Interrupt`] is alive they only set
//! the flag; the loop that sees it returns normally and the guards' `Drop` does the restoring.

use crate::LiveError;
use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
use signal_hook::SigId;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// While alive, SIGINT, SIGTERM and SIGHUP set a flag instead of killing the process.
pub struct Interrupt {
    flag: Arc<AtomicBool>,
    ids: Vec<SigId>,
}

impl Interrupt {
    /// Catches the signals from now until the value is dropped.
    pub fn catch() -> Result<Interrupt, LiveError> {
        let flag = Arc::new(AtomicBool::new(false));
        let mut ids = Vec::new();
        for sig in [SIGINT, SIGTERM, SIGHUP] {
            let id = signal_hook::flag::register(sig, Arc::clone(&flag)).map_err(|source| {
                LiveError::Sys {
                    call: "sigaction",
                    source,
                }
            })?;
            ids.push(id);
        }
        Ok(Interrupt { flag, ids })
    }

    /// Whether one of the signals arrived.
    pub fn raised(&self) -> bool {
        self.flag.load(Ordering::Relaxed)
    }

    /// Raises the flag as a signal would: a helper thread that failed ends the run this way.
    pub fn raise(&self) {
        self.flag.store(true, Ordering::Relaxed);
    }

    /// The flag itself, for threads that must stop when a signal arrives.
    pub fn flag(&self) -> Arc<AtomicBool> {
        Arc::clone(&self.flag)
    }
}

impl Drop for Interrupt {
    fn drop(&mut self) {
        for id in self.ids.drain(..) {
            signal_hook::low_level::unregister(id);
        }
    }
}
