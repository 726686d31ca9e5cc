//! tracefs, configured for a job and put back exactly as it was found.
//!
//! [`Tracefs`] finds (or mounts) the file system. A [`Session`] is the only way rtsleuth writes to
//! it: every write first saves the file's current value, and dropping the session (normal return,
//! `?` error, panic unwinding, or the return after [`crate::signals::Interrupt`] saw Ctrl-C)
//! writes the saved values back in reverse order. By default a session works in a private
//! instance (`instances/rtsleuth-PID`), which leaves the top-level buffer and its contents alone
//! entirely; jobs that only exist at the top level (the `hwlat` tracer) ask for it explicitly.

mod buffer_size;
mod events;
mod mount;
mod observe;
mod saved;
mod session;
mod spike_stop;
mod stale;

pub use buffer_size::{is_expansion, BufferSize};
pub use events::AvailableEvents;
pub use mount::Tracefs;
pub(crate) use mount::{pick_mount, MOUNT_POINTS};
pub use observe::{differences, expansion, observe};
pub use session::{Buffer, Session};
pub use spike_stop::SpikeStop;
pub use stale::remove_stale_instances;
