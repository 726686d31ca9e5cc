//! What rtsleuth does on a running system, as opposed to on a trace file: it configures tracefs
//! and puts it back exactly as it found it, measures wake-up latency like cyclictest, records
//! traces, detects hardware latency and audits the machine's real-time setup.
//!
//! Everything here touches global kernel state (tracefs, scheduling policy, PM QoS), so every
//! module that changes something owns a guard that undoes it on drop, and long-running loops poll
//! [`signals::Interrupt`] so that Ctrl-C and SIGTERM end them through the normal, restoring path.

pub mod error;
pub mod signals;

pub use error::LiveError;
pub mod audit;
pub mod clock;
pub mod cpus;
pub mod dma_latency;
pub mod duration;
pub mod hwlat;
pub mod measure;
pub mod record;
pub mod sched;
#[doc(hidden)]
pub mod testing;
pub mod tracefs;
