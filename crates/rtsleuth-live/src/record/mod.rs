//! Recording a trace the way `trace-cmd record` does, without trace-cmd: the kernel's per-CPU
//! ring-buffer pages are copied raw from `per_cpu/cpuN/trace_pipe_raw` to spool files while the
//! trace runs ([`RawCapture`]), then joined with the system's event formats, symbols and comms
//! ([`TraceMeta`]) into a version 6 trace.dat ([`write_tracedat`]) that `trace-cmd report`,
//! kernelshark and rtsleuth's own reader all read.
//!
//! The order a caller follows: configure tracefs, [`RawCapture::start`], turn `tracing_on`
//! on, wait ([`RawCapture::wait`]), turn it off, [`RawCapture::finish`], [`TraceMeta::gather`]
//! (before tracefs is restored: restoring can clear the saved comms), [`write_tracedat`].
//!
//! Raw pages instead of the text `trace_pipe`: the kernel does no formatting, a page is one
//! read(2), and the file keeps every field at full precision.

mod armed;
mod capture;
mod cpu_reader;
mod cpu_stats;
mod dat_out;
mod header_page;
mod job;
mod report;
mod trace_meta;
mod tracedat_writer;

pub use armed::{spool_dir, Armed, BufferOptions};
pub use capture::{Capture, CpuCapture, RawCapture, WaitEnd};
pub use cpu_stats::CpuStats;
pub use job::{record, RecordOptions, Recording, Until};
pub use trace_meta::{EventSystem, TraceMeta};
pub use tracedat_writer::write_tracedat;
