//! rtsleuth-core: reads Linux kernel traces and explains real-time latency.
//!
//! Data flows one way: [`input`] turns a path into bytes of a known format, [`read`] turns
//! bytes into [`event::Event`]s, [`analyze`] consumes events one at a time with bounded state,
//! and [`report`] renders the result as text, JSON or CSV. Nothing downstream knows which
//! format the events came from.

pub mod analyze;
pub mod diff;
pub mod error;
pub mod event;
pub mod export;
pub mod fleet;
pub mod input;
pub mod progress;
pub mod read;
pub mod report;
pub mod ring_buffer;
pub mod soak;
pub mod validity;

pub use error::{Error, Result};
