//! Errors name the input and, where one exists, the line or byte offset at fault: a user
//! handed a bad file must know which file and where. An underlying I/O error is part of the
//! message (field `cause`), not a separate `source`, so that printing the error chain does not
//! say it twice.

use std::io;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{path}: {cause}")]
    Io { path: String, cause: io::Error },

    #[error("{path}: is a directory; give a trace file (e.g. {path}/trace)")]
    IsDirectory { path: String },

    #[error("{path}: empty input, there is no trace in it")]
    Empty { path: String },

    #[error(
        "{path}: {compression} data is corrupt or truncated (at compressed byte {offset}): {cause}"
    )]
    Decompress {
        path: String,
        compression: &'static str,
        offset: u64,
        cause: io::Error,
    },

    #[error("{path}: this is {format}, which rtsleuth cannot read yet; {hint}")]
    Unsupported {
        path: String,
        format: &'static str,
        hint: &'static str,
    },

    /// A format rtsleuth reads, given to a command that does not analyse it.
    #[error("{path}: this is {format}, which this command does not analyse; {hint}")]
    WrongCommand {
        path: String,
        format: &'static str,
        hint: &'static str,
    },

    /// An analysis that reads its input twice was given a stream.
    #[error("{path}: {what} reads the trace twice; give a file, not standard input")]
    NeedsFile { path: String, what: &'static str },

    #[error("{path}: not a trace rtsleuth knows: {why}")]
    NotATrace { path: String, why: String },

    /// A binary trace whose bytes contradict its own structure (a bad magic, a size past the
    /// end, an unknown compression). `offset` is the file (or section) byte where it went wrong.
    #[error("{path}: {format} is malformed at byte {offset}: {reason}")]
    Malformed {
        path: String,
        format: &'static str,
        offset: u64,
        reason: String,
    },

    #[error("{path}:{line}: line is longer than {limit} bytes (it starts at byte {offset}); this is not ftrace text")]
    LineTooLong {
        path: String,
        line: u64,
        offset: u64,
        limit: usize,
    },

    /// The timestamps are a counter's raw values with no conversion to time in the file: no
    /// duration can be measured from them.
    #[error("{path}: its timestamps are raw counts of {clock}, not time, and the file gives no conversion to nanoseconds, so no latency can be measured from them (`rtsleuth stats` still reads it). Record with a trace clock that counts time (`trace-cmd record -C mono` or `-C global`; `echo mono > /sys/kernel/tracing/trace_clock`), or record x86-tsc with trace-cmd and keep the tsc2nsec conversion it stores in the trace.dat")]
    CounterClock { path: String, clock: String },

    /// A line of a soak's findings file that is not what `measure --explain-every` writes.
    #[error("{path}:{line}: {why}")]
    SpikeLine {
        path: String,
        line: u64,
        why: String,
    },
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
