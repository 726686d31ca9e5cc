//! Android systrace HTML: a trace viewer page with the ftrace text inside it, which this module
//! streams out for the text reader. Two generations of pages exist:
//!
//! - catapult's systrace (2015 on) puts each trace in a `<script class="trace-data"
//!   type="application/text">` block: the ftrace text as atrace dumped it, next to blocks of
//!   JSON (Chrome trace events, metadata) from other agents;
//! - the first systrace (2012-2014) puts it in a JavaScript string, `var linuxPerfData = "\`,
//!   every line ending in `\n\` (an escaped line feed, then a line continuation) and a
//!   `dummy-0000 [000] 0.0: 0: trace_event_clock_sync: parent_ts=0.0\n";` sentinel last.
//!
//! The page is read a line at a time (a line longer than [`MAX_LINE`] in pieces of that size),
//! so memory stays bounded whatever the size of the viewer code or of the trace. Only the text
//! blocks are given out; JSON blocks are skipped. Newer tools (`trace2html`) can store the trace
//! base64-encoded and compressed; that form is recognised and refused with a clear error.
//!
//! A page cut short inside its trace gives the text up to the cut, as a text trace cut short
//! does.

use super::chunks::MAX_LINE;
use super::compression::describe_read_error;
use crate::error::{Error, Result};
use std::io::{self, BufRead, BufReader, Read};

/// Text gathered before a read hands it out: large enough that the line loop is not entered
/// per read, small enough to be nothing next to the text reader's blocks.
const OUT_TARGET: usize = 64 * 1024;

/// The ftrace text of a systrace page, as a stream.
pub(crate) struct SystraceText {
    src: BufReader<Box<dyn Read + Send>>,
    state: State,
    /// The page line being read (reused).
    line: Vec<u8>,
    /// The legacy string's current line, decoded (reused).
    decoded: Vec<u8>,
    out: Vec<u8>,
    pos: usize,
    seen: Seen,
    /// A read error, returned once the text gathered before it is out.
    failed: Option<io::Error>,
    eof: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// In the page, looking for the trace.
    Page,
    /// In a trace-data block, before its first non-blank line (which tells what it holds).
    BlockStart,
    /// In a block of ftrace text.
    Text,
    /// In a block of something else (JSON, encoded data).
    Skipped,
    /// In the legacy `linuxPerfData` string.
    Legacy,
}

/// What the page held, to say why nothing could be read.
#[derive(Debug, Default)]
struct Seen {
    text: u32,
    json: u32,
    encoded: u32,
    empty: u32,
    legacy: bool,
}

impl SystraceText {
    /// Reads the page up to the start of its ftrace text. A page without any is an error that
    /// says what it holds instead.
    pub(crate) fn open(name: &str, reader: Box<dyn Read + Send>) -> Result<SystraceText> {
        let mut t = SystraceText {
            src: BufReader::with_capacity(64 * 1024, reader),
            state: State::Page,
            line: Vec::new(),
            decoded: Vec::new(),
            out: Vec::new(),
            pos: 0,
            seen: Seen::default(),
            failed: None,
            eof: false,
        };
        t.fill();
        if t.out.is_empty() {
            return Err(match t.failed.take() {
                Some(e) => describe_read_error(name, e),
                None => t.seen.nothing_read(name),
            });
        }
        Ok(t)
    }

    /// Reads page lines until some text is gathered or the page ends. A read error ends the
    /// page too; it is handed on once the text before it is out (damage to a compressed page
    /// is then reported as for any compressed text).
    fn fill(&mut self) {
        self.out.clear();
        self.pos = 0;
        while self.out.len() < OUT_TARGET && !self.eof {
            match self.next_line() {
                Ok(true) => self.take_line(),
                Ok(false) => {
                    self.eof = true;
                    self.end_of_page();
                }
                Err(e) => {
                    self.failed = Some(e);
                    self.eof = true;
                }
            }
        }
    }

    /// The next line of the page (with its line feed), or the next [`MAX_LINE`] bytes of a
    /// longer one; `false` at the end.
    fn next_line(&mut self) -> io::Result<bool> {
        self.line.clear();
        loop {
            let buf = match self.src.fill_buf() {
                Ok(buf) => buf,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if buf.is_empty() {
                return Ok(!self.line.is_empty());
            }
            let room = &buf[..buf.len().min(MAX_LINE - self.line.len())];
            let (take, done) = match memchr::memchr(b'\n', room) {
                Some(nl) => (nl + 1, true),
                None => (room.len(), self.line.len() + room.len() == MAX_LINE),
            };
            self.line.extend_from_slice(&room[..take]);
            self.src.consume(take);
            if done {
                return Ok(true);
            }
        }
    }

    /// Reads one page line in whatever states it passes through.
    fn take_line(&mut self) {
        let line = std::mem::take(&mut self.line);
        let mut rest = &line[..];
        while !rest.is_empty() {
            rest = match self.state {
                State::Page => self.in_page(rest),
                State::BlockStart | State::Text | State::Skipped => self.in_block(rest),
                State::Legacy => self.in_legacy(rest),
            };
        }
        self.line = line;
    }

    /// Looks for the start of a trace-data block or of the legacy string; returns what follows
    /// it, or nothing.
    fn in_page<'a>(&mut self, rest: &'a [u8]) -> &'a [u8] {
        let mut from = 0;
        loop {
            let script = find_ignoring_case(&rest[from..], b"<script").map(|i| from + i);
            let legacy = memchr::memmem::find(&rest[from..], b"linuxPerfData").map(|i| from + i);
            let script_first = match (script, legacy) {
                (Some(s), Some(l)) => s < l,
                (script, _) => script.is_some(),
            };
            match (script, legacy) {
                (Some(s), _) if script_first => {
                    let Some(gt) = memchr::memchr(b'>', &rest[s..]).map(|i| s + i) else {
                        return &[];
                    };
                    let tag = &rest[s..gt];
                    // A tag starts its line or follows another; one inside a string of the
                    // viewer's code does not. trace2html calls its block `viewer-data`.
                    let opens_line = matches!(rest[..s].trim_ascii_end().last(), None | Some(b'>'));
                    if opens_line && (contains(tag, b"trace-data") || contains(tag, b"viewer-data"))
                    {
                        self.state = State::BlockStart;
                        return &rest[gt + 1..];
                    }
                    from = gt + 1;
                }
                (_, Some(l)) => {
                    let after = &rest[l + b"linuxPerfData".len()..];
                    let after = after.trim_ascii_start();
                    if let Some(value) = after.strip_prefix(b"=") {
                        if let Some(string) = value.trim_ascii_start().strip_prefix(b"\"") {
                            self.state = State::Legacy;
                            self.seen.legacy = true;
                            return string;
                        }
                    }
                    from = l + 1;
                }
                (_, None) => return &[],
            }
        }
    }

    /// A piece of a trace-data block: decides what the block holds at its first non-blank
    /// line, gives out text, and returns what follows `</script` if the block ends here.
    fn in_block<'a>(&mut self, rest: &'a [u8]) -> &'a [u8] {
        let close = find_ignoring_case(rest, b"</script");
        let content = close.map_or(rest, |c| &rest[..c]);
        let blank = content.trim_ascii().is_empty();
        if self.state == State::BlockStart && !blank {
            self.state = match classify(content) {
                Block::Text => {
                    self.seen.text += 1;
                    State::Text
                }
                Block::Json => {
                    self.seen.json += 1;
                    State::Skipped
                }
                Block::Encoded => {
                    self.seen.encoded += 1;
                    State::Skipped
                }
            };
        }
        if self.state == State::Text && !(close.is_some() && blank) {
            self.out.extend_from_slice(content);
            if close.is_some() {
                self.out.push(b'\n');
            }
        }
        match close {
            Some(c) => {
                if self.state == State::BlockStart {
                    self.seen.empty += 1;
                }
                self.state = State::Page;
                &rest[c + b"</script".len()..]
            }
            None => &[],
        }
    }

    /// A piece of the legacy string, unescaped as JavaScript reads it; returns what follows
    /// the string if it ends here. Lines end at `\n` escapes, and also at raw line breaks and
    /// at `</script` (pages cut down by hand lose the escapes or the closing quote).
    fn in_legacy<'a>(&mut self, rest: &'a [u8]) -> &'a [u8] {
        let close = find_ignoring_case(rest, b"</script");
        let body = close.map_or(rest, |c| &rest[..c]);
        let mut i = 0;
        while i < body.len() {
            match body[i] {
                b'\\' => {
                    i += match body.get(i + 1) {
                        // A line continuation: the escaped line break is nothing.
                        Some(b'\n') => 2,
                        Some(b'\r') if body.get(i + 2) == Some(&b'\n') => 3,
                        Some(b'n') => {
                            self.end_decoded_line();
                            2
                        }
                        Some(&c) => {
                            match c {
                                b't' => self.decoded.push(b'\t'),
                                b'\\' | b'"' | b'\'' | b'/' => self.decoded.push(c),
                                // Not an escape JavaScript knows: kept as written.
                                _ => self.decoded.extend_from_slice(&[b'\\', c]),
                            }
                            2
                        }
                        None => 1,
                    };
                }
                b'"' if ends_string(&body[i + 1..]) => {
                    self.end_decoded_line();
                    self.state = State::Page;
                    return &rest[i + 1..];
                }
                b'\n' => {
                    self.end_decoded_line();
                    i += 1;
                }
                b'\r' if body.get(i + 1) == Some(&b'\n') => i += 1,
                b => {
                    self.decoded.push(b);
                    i += 1;
                }
            }
        }
        if self.decoded.len() > MAX_LINE {
            // No line is this long; the text reader says so.
            self.out.append(&mut self.decoded);
        }
        match close {
            Some(c) => {
                self.end_decoded_line();
                self.state = State::Page;
                &rest[c + b"</script".len()..]
            }
            None => &[],
        }
    }

    /// Gives out the decoded line, except blank ones and the legacy page's sentinel (the
    /// generator's, not the kernel's: an event at time 0 at the end of the trace).
    fn end_decoded_line(&mut self) {
        let line = self.decoded.trim_ascii();
        let sentinel = line.starts_with(b"dummy-0000 ")
            && line.ends_with(b"trace_event_clock_sync: parent_ts=0.0");
        if !line.is_empty() && !sentinel {
            self.out.extend_from_slice(&self.decoded);
            self.out.push(b'\n');
        }
        self.decoded.clear();
    }

    /// The page ended: a string or text block still open was cut short; what was read of it
    /// stands.
    fn end_of_page(&mut self) {
        match self.state {
            State::Legacy => self.end_decoded_line(),
            State::Text if self.out.last().is_some_and(|&b| b != b'\n') => self.out.push(b'\n'),
            _ => {}
        }
    }
}

impl Read for SystraceText {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            if self.pos < self.out.len() {
                let n = buf.len().min(self.out.len() - self.pos);
                buf[..n].copy_from_slice(&self.out[self.pos..self.pos + n]);
                self.pos += n;
                return Ok(n);
            }
            if let Some(e) = self.failed.take() {
                return Err(e);
            }
            if self.eof {
                return Ok(0);
            }
            self.fill();
        }
    }
}

impl Seen {
    /// Why a page gave no ftrace text.
    fn nothing_read(&self, name: &str) -> Error {
        let path = name.to_string();
        if self.encoded > 0 {
            return Error::Unsupported {
                path,
                format: "systrace HTML with base64-encoded, compressed trace data",
                hint: "open it in ui.perfetto.dev or chrome://tracing, or record the trace again with atrace / systrace writing plain text",
            };
        }
        let why = if self.json > 0 {
            format!(
                "systrace HTML whose {} trace-data block(s) hold JSON trace events, and none the ftrace text rtsleuth reads",
                self.json
            )
        } else if self.empty > 0 || self.legacy {
            "systrace HTML whose trace data is empty".to_string()
        } else {
            "an HTML page without systrace data: no `<script class=\"trace-data\">` block and no `var linuxPerfData = \"...\"` string".to_string()
        };
        Error::NotATrace { path, why }
    }
}

enum Block {
    Text,
    Json,
    Encoded,
}

/// What a trace-data block holds, from its first non-blank line: JSON opens with a brace or a
/// bracket, encoded data is one long run of base64 characters, anything else is text.
fn classify(first: &[u8]) -> Block {
    let first = first.trim_ascii_start();
    if matches!(first.first(), Some(b'{' | b'[')) {
        return Block::Json;
    }
    let word = first
        .iter()
        .take_while(|b| !b.is_ascii_whitespace())
        .count();
    let base64 = |b: &u8| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'=');
    if word >= 64 && first[..word].iter().all(base64) {
        Block::Encoded
    } else {
        Block::Text
    }
}

/// After a `"` in the legacy string: whether it closes the string (`";`, or the end of the
/// line). Old generators did not escape quotes in the trace, so a quote inside a line is text.
fn ends_string(after: &[u8]) -> bool {
    matches!(
        after.iter().find(|&&b| b != b' ' && b != b'\t'),
        None | Some(b';' | b'\r' | b'\n' | b'<')
    )
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    memchr::memmem::find(hay, needle).is_some()
}

/// The first `needle` (lower case, starting with `<`) in `hay`, in any case: HTML tags are
/// case-insensitive.
fn find_ignoring_case(hay: &[u8], needle: &[u8]) -> Option<usize> {
    memchr::memchr_iter(b'<', hay).find(|&i| {
        hay.get(i..i + needle.len())
            .is_some_and(|w| w.eq_ignore_ascii_case(needle))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(page: &str) -> Result<String> {
        let mut t = SystraceText::open(
            "t.html",
            Box::new(io::Cursor::new(page.as_bytes().to_vec())),
        )?;
        let mut s = String::new();
        t.read_to_string(&mut s).unwrap();
        Ok(s)
    }

    #[test]
    fn trace_data_blocks_give_their_text_and_skip_json() {
        let page = "<!DOCTYPE html>\n<script>var x = document.querySelectorAll('.trace-data');</script>\n\
            <!-- BEGIN TRACE -->\n  <script class=\"trace-data\" type=\"application/text\">\n\
            # tracer: nop\n  a-1 [000] .... 1.000001: x: y\n  </script>\n\
            <script class=\"trace-data\" type=\"application/text\">\n{\"traceEvents\": [\n]}\n</script>\n\
            <SCRIPT class='trace-data'>  b-2 [001] .... 1.000002: x: z</SCRIPT>\n</html>\n";
        assert_eq!(
            text(page).unwrap(),
            "# tracer: nop\n  a-1 [000] .... 1.000001: x: y\n  b-2 [001] .... 1.000002: x: z\n"
        );
    }

    #[test]
    fn the_legacy_string_is_unescaped() {
        let page = "<!DOCTYPE HTML>\n<script>if (!linuxPerfData) return;</script>\n  <script>\n  var linuxPerfData = \"\\\n\
            # tracer: nop\\n\\\n  a-1 [000] .... 1.000001: print: say \\\"hi\\\" \\\\o/ \"x\"\\n\\\n\
            \x20          dummy-0000  [000] 0.0: 0: trace_event_clock_sync: parent_ts=0.0\\n\";\n  </script>\n";
        assert_eq!(
            text(page).unwrap(),
            "# tracer: nop\n  a-1 [000] .... 1.000001: print: say \"hi\" \\o/ \"x\"\n"
        );
        // Cut down by hand: no escapes, no closing quote.
        let page = "<html>\n  var linuxPerfData = \"\\\n# tracer: nop\n  a-1 [000] .... 1.0: x: y\n  </script>\n";
        assert_eq!(
            text(page).unwrap(),
            "# tracer: nop\n  a-1 [000] .... 1.0: x: y\n"
        );
    }

    #[test]
    fn pages_without_text_say_what_they_hold() {
        let err = |page: &str| text(page).unwrap_err().to_string();
        assert!(err("<html><body>hello</body></html>").contains("without systrace data"));
        assert!(
            err("<html><script class=\"trace-data\">\n[{\"ph\": \"X\"}]\n</script>")
                .contains("hold JSON trace events")
        );
        assert!(err("<html><script class=\"trace-data\">\n\n</script>").contains("empty"));
        let encoded = format!(
            "<html><script id=\"viewer-data\" type=\"text/plain\">{}</script>",
            "H4sIAAAAAAAAA+1d".repeat(8)
        );
        assert!(err(&encoded).contains("base64-encoded"));
    }

    #[test]
    fn a_page_cut_inside_its_trace_gives_what_it_has() {
        assert_eq!(
            text("<html><script class=\"trace-data\">\n  a-1 [000] .... 1.0: x: y\n  a-1 [000] .... 1.1: x").unwrap(),
            "  a-1 [000] .... 1.0: x: y\n  a-1 [000] .... 1.1: x\n"
        );
        assert_eq!(
            text("<html>var linuxPerfData = \"\\\n  a-1 [000] .... 1.0: x: y\\n\\\n  a-1 [0")
                .unwrap(),
            "  a-1 [000] .... 1.0: x: y\n  a-1 [0\n"
        );
    }
}
