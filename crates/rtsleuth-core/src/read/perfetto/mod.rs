//! Placeholder until the reader lands.

use super::{EventSink, TraceInfo};
use crate::error::{Error, Result};
use crate::input::Input;

pub fn read(input: Input, _sink: &mut (dyn EventSink + Send)) -> Result<TraceInfo> {
    Err(Error::Unsupported {
        path: input.name,
        format: input.format.name(),
        hint: "the reader is being written",
    })
}
