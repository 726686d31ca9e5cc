//! Recognising a trace format from its first bytes.

use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Format {
    /// ftrace text: `trace`, `trace_pipe`, `trace-cmd report`, atrace, latency-format and the
    /// latency tracers' output.
    FtraceText,
    /// function_graph tracer output.
    FunctionGraph,
    /// trace-cmd's binary `trace.dat`.
    TraceDat,
    /// Perfetto protobuf trace.
    Perfetto,
    /// `perf record`'s `perf.data` (tracepoint samples).
    PerfData,
    /// Android systrace HTML with the ftrace text embedded ([`super::systrace`]).
    SystraceHtml,
    /// `atrace -z` output: a text preamble, a `TRACE:` line, then the ftrace text
    /// zlib-compressed ([`super::atrace`]).
    AtraceZ,
    /// A JSON document or JSON lines: rtsleuth's own output (which `diff` compares) or a
    /// soak's findings file (which `report` and `diff` read), never a trace.
    Json,
}

impl Format {
    pub fn name(self) -> &'static str {
        match self {
            Format::FtraceText => "ftrace text",
            Format::FunctionGraph => "function_graph text",
            Format::TraceDat => "trace-cmd trace.dat",
            Format::Perfetto => "Perfetto protobuf",
            Format::PerfData => "perf.data",
            Format::SystraceHtml => "systrace HTML",
            Format::AtraceZ => "atrace -z output (zlib-compressed ftrace text)",
            Format::Json => "JSON",
        }
    }

    /// Whether the ftrace text reader reads it: ftrace text itself, or a container of it
    /// that [`super::Input`] has already opened.
    pub fn is_ftrace_text(self) -> bool {
        self == Format::FtraceText || self.is_container()
    }

    /// A container of ftrace text: its [`super::Input`] reads the text inside, not the file's
    /// bytes.
    pub fn is_container(self) -> bool {
        matches!(self, Format::SystraceHtml | Format::AtraceZ)
    }

    /// Decides the format from the first bytes of a (decompressed) stream. The error explains
    /// why the bytes are not a trace.
    pub fn detect(head: &[u8]) -> Result<Format, String> {
        if head.starts_with(b"\x17\x08\x44tracing") {
            return Ok(Format::TraceDat);
        }
        // Either byte order: perf writes the magic as a native 64-bit number.
        if head.starts_with(b"PERFILE2") || head.starts_with(b"2ELIFREP") {
            return Ok(Format::PerfData);
        }
        if looks_like_perfetto(head) {
            return Ok(Format::Perfetto);
        }
        if super::atrace::detect(head).is_some() {
            return Ok(Format::AtraceZ);
        }
        let text = text_prefix(head).ok_or_else(|| describe_binary(head))?;
        let text = text.as_ref();
        if text.trim_start().starts_with('{') {
            return Ok(Format::Json);
        }
        if is_html(text) {
            return Ok(Format::SystraceHtml);
        }
        if is_function_graph(text) {
            return Ok(Format::FunctionGraph);
        }
        Ok(Format::FtraceText)
    }
}

/// An HTML page: the doctype or the root element first, in any case (the first systrace wrote
/// `<!DOCTYPE HTML>`, later ones `<!DOCTYPE html>`).
fn is_html(text: &str) -> bool {
    let start = text.trim_start_matches('\u{feff}').trim_start().as_bytes();
    [&b"<!doctype html"[..], b"<html"].iter().any(|tag| {
        start
            .get(..tag.len())
            .is_some_and(|s| s.eq_ignore_ascii_case(tag))
    })
}

/// The head as text, if it is text: no NUL bytes, and invalid UTF-8 in at most one byte in a
/// thousand (a trace with one damaged line is still a trace; the reader counts that line as
/// unparsed). Invalid bytes are replaced for the sniffing only.
fn text_prefix(head: &[u8]) -> Option<std::borrow::Cow<'_, str>> {
    if memchr::memchr(0, head).is_some() {
        return None;
    }
    let invalid: usize = head.utf8_chunks().map(|c| c.invalid().len()).sum();
    (invalid <= head.len() / 1000 + 1).then(|| String::from_utf8_lossy(head))
}

fn describe_binary(head: &[u8]) -> String {
    if let Some(pos) = memchr::memchr(0, head) {
        return format!("binary data (a NUL byte at offset {pos}), and no trace format rtsleuth knows starts like this");
    }
    let bad = std::str::from_utf8(head)
        .err()
        .map(|e| e.valid_up_to())
        .unwrap_or(0);
    format!("binary data (invalid UTF-8 at byte offset {bad}), and no trace format rtsleuth knows starts like this")
}

/// A Perfetto trace is a `Trace` message: repeated field 1 (`packet`), length-delimited, so the
/// file starts with 0x0a and a varint length that fits in the file; TracePackets themselves
/// start with a field tag. Text never starts with a 0x0a line feed followed by such bytes and
/// a NUL within the first packet.
fn looks_like_perfetto(head: &[u8]) -> bool {
    if head.first() != Some(&0x0a) {
        return false;
    }
    let mut len: u64 = 0;
    let mut i = 1;
    while i < head.len().min(11) {
        let b = head[i];
        len |= u64::from(b & 0x7f) << (7 * (i - 1));
        i += 1;
        if b & 0x80 == 0 {
            break;
        }
    }
    len > 0
        && head
            .get(i)
            .is_some_and(|&tag| tag & 0x07 <= 5 && tag >= 0x08)
        && text_prefix(head).is_none()
}

/// function_graph output announces itself in the header, or one of its first lines is a
/// timed call the function_graph reader understands (with or without the TIME and TASK
/// columns): fragments pasted without a header, and files with prose around the output.
fn is_function_graph(text: &str) -> bool {
    let mut looked = 0;
    for line in text.lines() {
        let l = line.trim();
        if l.starts_with("# tracer: function_graph") {
            return true;
        }
        if l.is_empty() || l.starts_with('#') {
            continue;
        }
        looked += 1;
        if looked > 20 {
            break;
        }
        if crate::graph_line::is_graph_line(line) {
            return true;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats() {
        assert_eq!(
            Format::detect(b"\x17\x08\x44tracing6\0"),
            Ok(Format::TraceDat)
        );
        assert_eq!(
            Format::detect(b"# tracer: nop\n  bash-1 [000] .... 1.0: x: y\n"),
            Ok(Format::FtraceText)
        );
        assert_eq!(
            Format::detect(b"# tracer: function_graph\n#\n"),
            Ok(Format::FunctionGraph)
        );
        assert_eq!(
            Format::detect(b" 0)   0.646 us    |  _raw_spin_lock();\n"),
            Ok(Format::FunctionGraph)
        );
        assert_eq!(
            Format::detect(b"<!DOCTYPE html>\n<html>"),
            Ok(Format::SystraceHtml)
        );
        assert_eq!(
            Format::detect(b"\xef\xbb\xbf <!DOCTYPE HTML>\n<html>"),
            Ok(Format::SystraceHtml)
        );
        assert_eq!(
            Format::detect(b"capturing trace... done\nTRACE:\n\x78\x9c\xed\xfd\x00"),
            Ok(Format::AtraceZ)
        );
        assert_eq!(
            Format::detect(b"\x0a\x05\x08\x01\x10\x00\x00\x0a"),
            Ok(Format::Perfetto)
        );
        assert_eq!(
            Format::detect(b"PERFILE2\x68\0\0\0\0\0\0\0"),
            Ok(Format::PerfData)
        );
        assert_eq!(Format::detect(b"2ELIFREP\0"), Ok(Format::PerfData));
    }

    #[test]
    fn one_damaged_byte_does_not_make_a_trace_binary() {
        let mut t = b"# tracer: nop\n".repeat(200);
        t.extend_from_slice(b"\xc3bash-1 [000] .... 1.0: x: y\n");
        assert_eq!(Format::detect(&t), Ok(Format::FtraceText));
    }

    #[test]
    fn garbage_is_explained() {
        let err = Format::detect(b"\x7fELF\x02\x01\x01\0\0").unwrap_err();
        assert!(err.contains("NUL byte at offset 7"), "{err}");
        let err = Format::detect(b"abc\xff\xfe\xfd").unwrap_err();
        assert!(err.contains("invalid UTF-8 at byte offset 3"), "{err}");
    }
}
