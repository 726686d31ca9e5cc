//! rtsleuth-trace: the bottom layer of rtsleuth. It turns a path into bytes of a known format
//! ([`input`]) and bytes into [`event::Event`]s ([`read`]), one at a time, with the trace's
//! facts ([`read::TraceInfo`]) and where its history is valid ([`validity`]). Nothing here
//! knows what an analysis will do with the events.

pub mod error;
pub mod event;
pub mod graph_line;
pub mod input;
pub mod progress;
pub mod read;
pub mod ring_buffer;
pub mod validity;

#[cfg(test)]
mod testing;

pub use error::{Error, Result};
