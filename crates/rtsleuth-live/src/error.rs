//! Errors from touching a running system. Each names the file or the operation that failed,
//! because "permission denied" alone does not tell an engineer which knob was refused.

use std::io;
use std::path::PathBuf;

/// Why a live operation failed.
#[derive(Debug, thiserror::Error)]
pub enum LiveError {
    /// Reading or writing a kernel file failed.
    #[error("{path}: {source}")]
    File { path: PathBuf, source: io::Error },
    /// The kernel refused a value written to a tracefs file.
    #[error("writing {value:?} to {path}: {source}")]
    Write {
        path: PathBuf,
        value: String,
        source: io::Error,
    },
    /// Some tracefs settings could not be put back; each failure is listed.
    #[error("tracefs not fully restored: {0}")]
    Restore(String),
    /// A system call failed.
    #[error("{call}: {source}")]
    Sys {
        call: &'static str,
        source: io::Error,
    },
    /// tracefs is neither mounted nor mountable.
    #[error("tracefs is not available: {0}")]
    NoTracefs(String),
    /// The kernel or the machine lacks what the command needs.
    #[error("{0}")]
    Unsupported(String),
    /// The arguments ask for something unsafe or impossible.
    #[error("{0}")]
    Invalid(String),
    /// Reading back a trace failed.
    #[error(transparent)]
    Trace(#[from] rtsleuth_trace::error::Error),
}

impl LiveError {
    /// Wraps an I/O error with the path it came from.
    pub fn file(path: impl Into<PathBuf>, source: io::Error) -> LiveError {
        LiveError::File {
            path: path.into(),
            source,
        }
    }

    /// Wraps the last OS error of a system call.
    pub fn last_os(call: &'static str) -> LiveError {
        LiveError::Sys {
            call,
            source: io::Error::last_os_error(),
        }
    }
}
