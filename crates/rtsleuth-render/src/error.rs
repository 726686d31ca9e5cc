//! What can go wrong while rendering: reading the trace again (the HTML report runs the
//! analyses itself), drawing a chart, or writing a Parquet table.

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Trace(#[from] rtsleuth_trace::Error),

    #[error("drawing {what}: {cause}")]
    Chart { what: String, cause: String },

    /// Writing a Parquet table failed (the disk, or the file's directory).
    #[error("{path}: writing Parquet: {cause}")]
    Parquet { path: String, cause: String },
}

/// Drawing a chart of the HTML report failed (the SVG backend writes to memory, so in practice
/// only a plotting-library bug gets here); `what` names the chart.
impl Error {
    pub(crate) fn chart(what: &str, cause: impl std::fmt::Display) -> Error {
        Error::Chart {
            what: what.to_string(),
            cause: cause.to_string(),
        }
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
