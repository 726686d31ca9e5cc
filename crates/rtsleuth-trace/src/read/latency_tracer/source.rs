//! Reading a trace that may be a latency tracer's output: its events go to the sink as for any
//! text trace, and when its header shows a latency tracer the section itself is parsed too.
//!
//! Such an output is one section, small enough to hold: it is read into memory once, parsed,
//! and its events are read from that copy, so standard input works as well as a file.

use super::{is_latency_tracer, LatencyTrace};
use crate::error::{Error, Result};
use crate::input::{describe_read_error, Format, Input};
use crate::read::ftrace_text::Header;
use crate::read::{EventSink, TraceInfo};
use std::io::{self, Read};

/// How much of the start is looked at for the header (as the text reader does).
const HEAD_BYTES: usize = 64 * 1024;
/// A latency tracer's buffer holds one section; beyond this the file is not one.
const MAX_BYTES: u64 = 256 << 20;

/// Reads `input` into `sink`; returns the latency tracer's section when it is one's output.
pub fn read(
    mut input: Input,
    sink: &mut (dyn EventSink + Send),
) -> Result<(TraceInfo, Option<LatencyTrace>)> {
    if input.format != Format::FtraceText {
        return Ok((crate::read::read(input, sink)?, None));
    }
    let head = peek(&mut input)?;
    if !is_latency_tracer(&Header::scan(&String::from_utf8_lossy(&head))) {
        return Ok((crate::read::read(input, sink)?, None));
    }
    let mut bytes = Vec::new();
    (&mut input.reader)
        .take(MAX_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| describe_read_error(&input.name, e))?;
    if bytes.len() as u64 > MAX_BYTES {
        return Err(Error::Malformed {
            path: input.name,
            format: "latency tracer output",
            offset: MAX_BYTES,
            reason: "longer than 256 MiB, which no single latency section is".into(),
        });
    }
    let section = LatencyTrace::parse(&input.name, &String::from_utf8_lossy(&bytes))?;
    let mut copy = Input::from_reader(&input.name, Box::new(io::Cursor::new(bytes)))?;
    copy.compression = input.compression;
    Ok((crate::read::read(copy, sink)?, Some(section)))
}

/// The first [`HEAD_BYTES`] of the input, which stays readable from its start.
fn peek(input: &mut Input) -> Result<Vec<u8>> {
    let mut reader = std::mem::replace(&mut input.reader, Box::new(io::empty()));
    let mut head = Vec::with_capacity(HEAD_BYTES);
    let got = (&mut reader)
        .take(HEAD_BYTES as u64)
        .read_to_end(&mut head)
        .map_err(|e| describe_read_error(&input.name, e));
    input.reader = Box::new(io::Cursor::new(head.clone()).chain(reader));
    got?;
    Ok(head)
}
