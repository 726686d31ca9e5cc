//! Android's containers of ftrace text: systrace HTML (both generations) and `atrace -z`.
//!
//! Every event of the real-world systrace pages is read, checked against the counts of
//! `tests/fixtures/systrace/independent_count.py` (regular expressions, no code shared with
//! rtsleuth; its output is committed next to it). The `atrace -z` fixture is made from one of
//! those pages (`tests/fixtures/atrace/README.md`). Bad pages and damaged zlib data give what
//! can be read or an error naming the file, never a panic.

mod shared_fixtures;

use rtsleuth_trace::event::Event;
use rtsleuth_trace::input::{Format, Input};
use rtsleuth_trace::read::{self, EventSink, TraceInfo};
use rtsleuth_trace::Error;
use serde_json::Value;
use std::collections::BTreeMap;
use std::io::{Cursor, Write};
use std::path::{Path, PathBuf};

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/fixtures");

/// What the independent count reports of a trace.
#[derive(Debug, Default, PartialEq)]
struct Counts {
    by_name: BTreeMap<String, u64>,
    cpus: Vec<u32>,
    first_ts: u64,
    last_ts: u64,
}

impl EventSink for Counts {
    fn event(&mut self, e: &Event<'_>) {
        *self.by_name.entry(e.name.to_string()).or_default() += 1;
        if !self.cpus.contains(&e.cpu) {
            self.cpus.push(e.cpu);
            self.cpus.sort();
        }
        if self.by_name.values().sum::<u64>() == 1 {
            self.first_ts = e.ts;
        }
        self.last_ts = e.ts;
    }
}

/// `secs.frac` as nanoseconds.
fn ns(ts: &str) -> u64 {
    let (s, f) = ts.split_once('.').unwrap();
    let f = format!("{f:0<9}");
    s.parse::<u64>().unwrap() * 1_000_000_000 + f[..9].parse::<u64>().unwrap()
}

/// The committed output of `independent_count.py`.
fn expected(rel: &str) -> Counts {
    let path = Path::new(FIXTURES).join(rel);
    let j: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    let by_name: BTreeMap<String, u64> = j["by_name"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| (k.clone(), v.as_u64().unwrap()))
        .collect();
    assert_eq!(
        by_name.values().sum::<u64>(),
        j["events"].as_u64().unwrap(),
        "{rel}"
    );
    Counts {
        by_name,
        cpus: j["cpus"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c.as_u64().unwrap() as u32)
            .collect(),
        first_ts: ns(j["first_ts"].as_str().unwrap()),
        last_ts: ns(j["last_ts"].as_str().unwrap()),
    }
}

fn read_input(input: Input) -> Result<(TraceInfo, Counts), Error> {
    let mut counts = Counts::default();
    let info = read::read(input, &mut counts)?;
    assert_eq!(
        info.events,
        counts.by_name.values().sum::<u64>(),
        "events counted and handed on"
    );
    Ok((info, counts))
}

fn read_bytes(name: &str, bytes: Vec<u8>) -> Result<(TraceInfo, Counts), Error> {
    read_input(Input::from_reader(name, Box::new(Cursor::new(bytes)))?)
}

fn trappy(name: &str) -> Option<PathBuf> {
    shared_fixtures::realworld(&format!("trappy/tests/{name}"))
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(bytes).unwrap();
    e.finish().unwrap()
}

/// LF as a terminal writes it (`ONLCR`).
fn crlf(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len() * 2);
    for &b in bytes {
        if b == b'\n' {
            out.push(b'\r');
        }
        out.push(b);
    }
    out
}

#[test]
fn realworld_systrace_pages_read_every_event() {
    for page in [
        "trace_systrace.html",
        "trace_surfaceflinger.html",
        "trace_legacy_systrace.html",
    ] {
        let Some(path) = trappy(page) else { return };
        let want = expected(&format!("systrace/{page}.expected.json"));
        let input = Input::open(path.to_str().unwrap()).unwrap();
        assert_eq!(input.format, Format::SystraceHtml, "{page}");
        let (info, got) = read_input(input).unwrap();
        assert_eq!(got, want, "{page}");
        assert_eq!(info.unparsed(), 0, "{page}: {:?}", info.unparsed_examples);
        assert_eq!(info.format, Format::SystraceHtml);
        assert_eq!(info.header.tracer.as_deref(), Some("nop"), "{page}");
        // The same page compressed, and from a stream (standard input).
        let bytes = std::fs::read(&path).unwrap();
        let (_, gz) = read_bytes(page, gzip(&bytes)).unwrap();
        assert_eq!(gz, want, "{page}.gz");
        let (_, streamed) = read_bytes(page, bytes).unwrap();
        assert_eq!(streamed, want, "{page} streamed");
    }
}

/// trappy cut its legacy page down (no `\n\` escapes, no closing quote); the first systrace
/// wrote every line with them, a sentinel line last and `";` after it. Put back, as a Windows
/// editor would save it too, the page reads the same events.
#[test]
fn legacy_page_as_the_generator_wrote_it() {
    let Some(path) = trappy("trace_legacy_systrace.html") else {
        return;
    };
    let want = expected("systrace/trace_legacy_systrace.html.expected.json");
    let cut = std::fs::read_to_string(path).unwrap();
    let (head, rest) = cut.split_once("var linuxPerfData = \"\\\n").unwrap();
    let (string, tail) = rest.split_once("  </script>").unwrap();
    let mut page = format!("{head}var linuxPerfData = \"\\\n");
    for line in string.lines() {
        page.push_str(line);
        page.push_str("\\n\\\n");
    }
    page.push_str(
        "           dummy-0000  [000] 0.0: 0: trace_event_clock_sync: parent_ts=0.0\\n\";\n",
    );
    page.push_str("  var timelineViewEl;\n  if (!linuxPerfData) return;\n  </script>");
    page.push_str(tail);
    for (what, bytes) in [
        ("escaped", page.clone().into_bytes()),
        ("escaped, CR LF", crlf(page.as_bytes())),
    ] {
        let (info, got) = read_bytes("legacy.html", bytes).unwrap();
        assert_eq!(got, want, "{what}");
        assert_eq!(info.unparsed(), 0, "{what}: {:?}", info.unparsed_examples);
    }
}

#[test]
fn atrace_z_reads_every_event() {
    let path = Path::new(FIXTURES).join("atrace/surfaceflinger.atrace-z");
    let want = expected("atrace/surfaceflinger.atrace-z.expected.json");
    let input = Input::open(path.to_str().unwrap()).unwrap();
    assert_eq!(input.format, Format::AtraceZ);
    let (info, got) = read_input(input).unwrap();
    assert_eq!(got, want);
    assert_eq!(info.unparsed(), 0, "{:?}", info.unparsed_examples);
    assert!(info.notes.is_empty(), "{:?}", info.notes);
    let bytes = std::fs::read(&path).unwrap();
    // Through an old adb's terminal, every LF became CR LF, in the zlib data too.
    let (_, got) = read_bytes("crlf.atrace-z", crlf(&bytes)).unwrap();
    assert_eq!(got, want, "CR LF");
    // `atrace -z -o FILE` writes no preamble before `TRACE:`.
    let start = bytes.windows(7).position(|w| w == b"TRACE:\n").unwrap();
    let (_, got) = read_bytes("o.atrace-z", bytes[start..].to_vec()).unwrap();
    assert_eq!(got, want, "no preamble");
    let (_, got) = read_bytes("gz", gzip(&bytes)).unwrap();
    assert_eq!(got, want, "gzip around it");
}

/// `atrace` without `-z` prints the same preamble and `TRACE:` line, then the text itself:
/// every event reads, and the preamble is no line rtsleuth failed to understand.
#[test]
fn plain_atrace_reads_with_its_preamble() {
    use std::io::Read;
    let path = Path::new(FIXTURES).join("atrace/surfaceflinger.atrace-z");
    let want = expected("atrace/surfaceflinger.atrace-z.expected.json");
    let bytes = std::fs::read(&path).unwrap();
    let at = bytes.windows(7).position(|w| w == b"TRACE:\n").unwrap() + 7;
    let mut text = b"capturing trace... done\nTRACE:\n".to_vec();
    flate2::read::ZlibDecoder::new(&bytes[at..])
        .read_to_end(&mut text)
        .unwrap();
    let (info, got) = read_bytes("plain.atrace", text).unwrap();
    assert_eq!(got, want);
    assert_eq!(info.unparsed(), 0, "{:?}", info.unparsed_examples);
}

/// Cut or damaged anywhere, the zlib data gives the lines before the damage with a warning
/// that says so, or, when nothing decompresses, an error naming the file.
#[test]
fn damaged_atrace_z() {
    let bytes = std::fs::read(Path::new(FIXTURES).join("atrace/surfaceflinger.atrace-z")).unwrap();
    let zlib_at = bytes.windows(7).position(|w| w == b"TRACE:\n").unwrap() + 7;
    let total = expected("atrace/surfaceflinger.atrace-z.expected.json")
        .by_name
        .values()
        .sum::<u64>();
    let mut partial = 0;
    let cuts = (zlib_at + 2..bytes.len())
        .step_by(997)
        .chain([bytes.len() - 1]);
    for cut in cuts {
        match read_bytes("cut.atrace-z", bytes[..cut].to_vec()) {
            Ok((info, got)) => {
                let events = got.by_name.values().sum::<u64>();
                // Cut in the checksum, the text itself may be whole.
                assert!(events <= total, "cut at {cut}: {events}");
                assert!(
                    info.notes
                        .iter()
                        .any(|n| n.contains("zlib stream is damaged")),
                    "cut at {cut}: {:?}",
                    info.notes
                );
                partial += 1;
            }
            Err(e) => {
                let msg = e.to_string();
                assert!(msg.starts_with("cut.atrace-z: "), "{msg}");
                assert!(
                    matches!(e, Error::Decompress { .. } | Error::Empty { .. }),
                    "cut at {cut}: {msg}"
                );
            }
        }
    }
    assert!(partial > 20, "{partial} cuts read in part");
    // The header alone: nothing decompresses.
    let e = read_bytes("short.atrace-z", bytes[..zlib_at + 2].to_vec()).unwrap_err();
    assert!(
        matches!(
            e,
            Error::Decompress {
                compression: "zlib",
                ..
            }
        ),
        "{e}"
    );
    // Flipped bytes: corrupt data is refused or read up to the damage, never a panic.
    for at in (zlib_at + 10..bytes.len()).step_by(1511) {
        let mut bad = bytes.clone();
        bad[at] ^= 0x5a;
        if let Ok((info, _)) = read_bytes("bad.atrace-z", bad) {
            assert!(
                info.notes.iter().any(|n| n.contains("zlib")) || info.unparsed() > 0,
                "corrupt at {at} read without a word"
            );
        }
    }
}

/// Pages that are not systrace, or whose trace data rtsleuth does not read, are refused with
/// an error that says what they hold; a page cut short in its trace gives the events before
/// the cut.
#[test]
fn bad_pages() {
    let err = |page: &str| read_bytes("p.html", page.as_bytes().to_vec()).unwrap_err();
    let msg = err("<!DOCTYPE html>\n<html><body><p>hello</p></body></html>\n").to_string();
    assert!(
        msg.starts_with("p.html: not a trace rtsleuth knows: an HTML page without systrace data"),
        "{msg}"
    );
    let msg = err("<html>\n<script class=\"trace-data\" type=\"application/text\">\n{\"traceEvents\": []}\n</script>\n").to_string();
    assert!(msg.contains("hold JSON trace events"), "{msg}");
    let msg = err(&format!(
        "<html>\n<script class=\"trace-data\" type=\"application/text\">\n{}\n</script>\n",
        "eJztvQtcVNX2OH7O".repeat(20)
    ));
    assert!(matches!(msg, Error::Unsupported { .. }), "{msg}");
    assert!(msg.to_string().contains("base64-encoded"), "{msg}");
    let msg = err("<html><script class=\"trace-data\">\n\n   \n</script>").to_string();
    assert!(msg.contains("empty"), "{msg}");
    // An unterminated tag or string, binary bytes in the page: no panic, a clear error.
    for page in [
        &b"<html><script class=\"trace-data\""[..],
        b"<html>var linuxPerfData = \"",
        b"<html>\x00\x01\x02\xff\xfe<script class=\"trace-data\">\n",
    ] {
        let e = read_bytes("p.html", page.to_vec()).unwrap_err();
        assert!(e.to_string().starts_with("p.html"), "{e}");
    }

    let Some(path) = trappy("trace_surfaceflinger.html") else {
        return;
    };
    let page = std::fs::read(path).unwrap();
    let text_at = memchr_find(&page, b"# tracer: nop").unwrap();
    let end_at = memchr_find(&page, b"</script>\n  <script class=\"trace-data\"").unwrap();
    // Cut inside the trace: every whole line before the cut reads, and no line after it.
    for cut in (text_at + 1000..end_at).step_by(9973) {
        let (info, got) = read_bytes("cut.html", page[..cut].to_vec()).unwrap();
        let whole_lines = page[text_at..cut].iter().filter(|&&b| b == b'\n').count() as u64;
        let events = got.by_name.values().sum::<u64>();
        assert!(
            events + 11 == whole_lines || events + 11 == whole_lines + 1,
            "cut at {cut}: {events} events, {whole_lines} whole lines"
        );
        assert!(info.unparsed() <= 1, "cut at {cut}");
    }
    // A gzipped page cut inside its trace: read up to the damage, with the gzip warning.
    let gz = gzip(&page);
    let (info, got) = read_bytes("cut.html.gz", gz[..gz.len() * 3 / 4].to_vec()).unwrap();
    let events = got.by_name.values().sum::<u64>();
    assert!(events > 0 && events < 2506, "{events}");
    assert!(
        info.notes
            .iter()
            .any(|n| n.contains("gzip stream is damaged")),
        "{:?}",
        info.notes
    );
    // Cut inside the viewer code, before any trace: the damage is the error.
    let e = read_bytes("viewer.html.gz", gz[..gz.len() / 40].to_vec()).unwrap_err();
    assert!(
        matches!(
            e,
            Error::Decompress {
                compression: "gzip",
                ..
            }
        ),
        "{e}"
    );
    // A viewer line far longer than any trace line is read past, in bounded pieces.
    let mut long = b"<!DOCTYPE html>\n<script>var x = \"".to_vec();
    long.extend_from_slice(&vec![b'x'; 3 << 20]);
    long.extend_from_slice(b"\";</script>\n");
    long.extend_from_slice(&page[memchr_find(&page, b"<!-- BEGIN TRACE -->").unwrap()..]);
    let (_, got) = read_bytes("long.html", long).unwrap();
    assert_eq!(
        got,
        expected("systrace/trace_surfaceflinger.html.expected.json")
    );
}

fn memchr_find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}
