//! Every bad input gives a clear `Error` that names the file (and, where there is one, the line
//! or byte offset at fault), never a panic, never unbounded memory.

mod shared_fixtures;

use rtsleuth_trace::input::{Format, Input, MAX_LINE};
use rtsleuth_trace::read::{self, NullSink, TraceInfo};
use rtsleuth_trace::Error;
use shared_fixtures::realworld;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

const VARIANTS: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../tests/fixtures/recorded/variants"
);
/// Lines, events and bytes of `variants/trace.txt` (12 header comments + 8794 events).
const TRACE_LINES: u64 = 8806;
const TRACE_EVENTS: u64 = 8794;

fn variant(name: &str) -> PathBuf {
    Path::new(VARIANTS).join(name)
}

fn trace_txt() -> Vec<u8> {
    std::fs::read(variant("trace.txt")).unwrap()
}

/// Opens and reads `path` the way the CLI does.
fn read_path(path: &Path) -> Result<TraceInfo, Error> {
    let input = Input::open(path.to_str().unwrap())?;
    read::read(input, &mut NullSink)
}

fn read_bytes_as_file(
    dir: &tempfile::TempDir,
    name: &str,
    bytes: &[u8],
) -> (PathBuf, Result<TraceInfo, Error>) {
    let path = dir.path().join(name);
    std::fs::write(&path, bytes).unwrap();
    let r = read_path(&path);
    (path, r)
}

/// The error's message, checked to name the file.
fn message(err: &Error, path: &Path) -> String {
    let msg = err.to_string();
    let p = path.to_str().unwrap();
    // `path: ...`, or `path:line: ...` for errors at a line.
    assert!(
        msg.strip_prefix(p)
            .is_some_and(|rest| rest.starts_with(':')),
        "message does not start with the path {p}: {msg}"
    );
    assert!(!msg.contains('\n'), "message is not one line: {msg:?}");
    msg
}

#[test]
fn empty_file() {
    let dir = tempfile::tempdir().unwrap();
    let (path, r) = read_bytes_as_file(&dir, "empty.txt", b"");
    let err = r.unwrap_err();
    assert!(
        matches!(&err, Error::Empty { path: p } if p == path.to_str().unwrap()),
        "{err:?}"
    );
    let msg = message(&err, &path);
    assert!(msg.contains("empty input"), "{msg}");
}

#[test]
fn empty_compressed_file() {
    // A valid gzip stream of zero bytes: the file is not empty, the trace is.
    let dir = tempfile::tempdir().unwrap();
    let gz = {
        let e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        e.finish().unwrap()
    };
    let (path, r) = read_bytes_as_file(&dir, "empty.txt.gz", &gz);
    let err = r.unwrap_err();
    assert!(matches!(err, Error::Empty { .. }), "{err:?}");
    message(&err, &path);
}

#[test]
fn directory() {
    let dir = tempfile::tempdir().unwrap();
    let err = read_path(dir.path()).unwrap_err();
    assert!(matches!(err, Error::IsDirectory { .. }), "{err:?}");
    let msg = message(&err, dir.path());
    assert!(msg.contains("is a directory"), "{msg}");
}

#[test]
fn missing_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nope.txt");
    let err = read_path(&path).unwrap_err();
    match &err {
        Error::Io { cause, .. } => assert_eq!(cause.kind(), io::ErrorKind::NotFound),
        other => panic!("expected Io, got {other:?}"),
    }
    message(&err, &path);
}

/// A small deterministic generator, so the "random" bytes are the same on every run.
fn xorshift_bytes(n: usize, mut seed: u64) -> Vec<u8> {
    (0..n)
        .map(|_| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed >> 24) as u8
        })
        .collect()
}

#[test]
fn random_bytes() {
    let dir = tempfile::tempdir().unwrap();
    for seed in [1u64, 0x9e37_79b9_7f4a_7c15, 42, 7777] {
        let mut bytes = xorshift_bytes(100_000, seed);
        // Keep clear of the compression magics: those are other tests.
        if bytes[0] == 0x1f || bytes[0] == 0x28 || bytes[0] == 0xfd || bytes[0] == 0x0a {
            bytes[0] = 0x01;
        }
        let (path, r) = read_bytes_as_file(&dir, &format!("random-{seed}.bin"), &bytes);
        let err = r.unwrap_err();
        assert!(
            matches!(err, Error::NotATrace { .. }),
            "seed {seed}: {err:?}"
        );
        let msg = message(&err, &path);
        // The message points at the first byte that gave it away.
        let first_nul = bytes.iter().position(|&b| b == 0);
        let bad_utf8 = std::str::from_utf8(&bytes).unwrap_err().valid_up_to();
        let expected = match first_nul {
            Some(nul) if nul < 64 * 1024 => format!("NUL byte at offset {nul}"),
            _ => format!("invalid UTF-8 at byte offset {bad_utf8}"),
        };
        assert!(
            msg.contains(&expected),
            "seed {seed}: want {expected:?} in {msg}"
        );
    }
}

#[test]
fn random_bytes_without_nul() {
    let dir = tempfile::tempdir().unwrap();
    let bytes: Vec<u8> = xorshift_bytes(10_000, 3)
        .into_iter()
        .map(|b| if b == 0 { 0xff } else { b | 0x80 })
        .collect();
    let (path, r) = read_bytes_as_file(&dir, "high.bin", &bytes);
    let err = r.unwrap_err();
    assert!(matches!(err, Error::NotATrace { .. }), "{err:?}");
    let msg = message(&err, &path);
    assert!(msg.contains("invalid UTF-8 at byte offset 0"), "{msg}");
}

#[test]
fn elf_header() {
    let dir = tempfile::tempdir().unwrap();
    let mut elf =
        b"\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x02\x00\x3e\x00".to_vec();
    elf.extend(xorshift_bytes(4000, 5));
    let (path, r) = read_bytes_as_file(&dir, "a.out", &elf);
    let err = r.unwrap_err();
    assert!(matches!(err, Error::NotATrace { .. }), "{err:?}");
    let msg = message(&err, &path);
    assert!(msg.contains("NUL byte at offset 7"), "{msg}");
}

#[test]
fn the_test_binary_itself() {
    // A real ELF file of a few MB.
    let exe = std::env::current_exe().unwrap();
    let err = read_path(&exe).unwrap_err();
    assert!(matches!(err, Error::NotATrace { .. }), "{err:?}");
    let msg = message(&err, &exe);
    assert!(msg.contains("NUL byte at offset 7"), "{msg}");
}

#[test]
fn readme_is_not_a_trace() {
    let readme = variant("../README.md");
    let lines = std::fs::read_to_string(&readme).unwrap().lines().count() as u64;
    let err = read_path(&readme).unwrap_err();
    let Error::NotATrace { why, .. } = &err else {
        panic!("expected NotATrace, got {err:?}");
    };
    let msg = message(&err, &readme);
    assert!(why.contains(&format!("none of its {lines} lines")), "{msg}");
    // It quotes the first line it could not read, with its number.
    // (lines 1-2 are a `#` heading and a blank line, which are not "unparsed")
    assert!(
        msg.contains("line 3 is \"All files here were recorded"),
        "{msg}"
    );
}

#[test]
fn prose_is_not_a_trace() {
    let dir = tempfile::tempdir().unwrap();
    let prose = "It was a dark and stormy night; the rain fell in torrents.\n\
                 \n\
                 Except at occasional intervals, when it was checked by a violent gust of wind.\n";
    let (path, r) = read_bytes_as_file(&dir, "novel.txt", prose.as_bytes());
    let err = r.unwrap_err();
    assert!(matches!(err, Error::NotATrace { .. }), "{err:?}");
    let msg = message(&err, &path);
    assert!(msg.contains("none of its 3 lines"), "{msg}");
    assert!(msg.contains("line 1 is \"It was a dark"), "{msg}");
}

#[test]
fn only_comments() {
    let dir = tempfile::tempdir().unwrap();
    let text = trace_txt();
    let header: Vec<u8> = text
        .split_inclusive(|&b| b == b'\n')
        .take_while(|l| l.starts_with(b"#"))
        .flatten()
        .copied()
        .collect();
    assert_eq!(header.iter().filter(|&&b| b == b'\n').count(), 12);
    let (path, r) = read_bytes_as_file(&dir, "header-only.txt", &header);
    let err = r.unwrap_err();
    assert!(matches!(err, Error::NotATrace { .. }), "{err:?}");
    let msg = message(&err, &path);
    assert!(msg.contains("none of its 12 lines"), "{msg}");
}

/// A gzip-compressed trace.dat is unwrapped and read like the plain file (the trace.dat
/// reader's own tests are in tracedat.rs and tracedat_damaged.rs).
#[test]
fn compressed_trace_dat_reads_like_the_plain_file() {
    let dir = tempfile::tempdir().unwrap();
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(&std::fs::read(variant("trace.dat")).unwrap())
        .unwrap();
    let (_, r) = read_bytes_as_file(&dir, "trace.dat.gz", &e.finish().unwrap());
    let info = r.unwrap();
    assert_eq!(info.format, Format::TraceDat);
    assert_eq!(info.events, 8_794);
    assert_eq!(info.cpus, vec![0, 1]);
}

/// A function_graph sample from the kernel's Documentation/trace/ftrace.rst.
const FUNCTION_GRAPH: &str = "\
# tracer: function_graph
#
# CPU  DURATION                  FUNCTION CALLS
# |     |   |                     |   |   |   |

 0)               |  sys_open() {
 0)               |    do_sys_open() {
 0)               |      getname() {
 0)               |        kmem_cache_alloc() {
 0)   1.382 us    |          __might_sleep();
 0)   2.478 us    |        }
";

/// The event commands refuse function_graph output and name the command that reads it.
fn assert_refused_for_graph(err: &Error, path: &Path) {
    let Error::WrongCommand { format, hint, .. } = err else {
        panic!("{}: expected a refusal, got {err:?}", path.display());
    };
    assert_eq!(*format, "function_graph text", "{}", path.display());
    assert!(hint.contains("rtsleuth graph"), "{hint}");
    message(err, path);
}

#[test]
fn function_graph_is_refused_with_a_hint() {
    let dir = tempfile::tempdir().unwrap();
    let (path, r) = read_bytes_as_file(&dir, "graph.txt", FUNCTION_GRAPH.as_bytes());
    assert_refused_for_graph(&r.unwrap_err(), &path);

    // Without its header: recognised from the `CPU)  duration |` shape.
    let body = FUNCTION_GRAPH.split_once("\n\n").unwrap().1;
    let (path, r) = read_bytes_as_file(&dir, "graph-fragment.txt", body.as_bytes());
    assert_refused_for_graph(&r.unwrap_err(), &path);
}

/// Every function_graph fixture is recognised, header-less fragments, the TIME-column
/// fragment and the perf-tools files with prose before the output included.
#[test]
fn function_graph_realworld_is_recognised() {
    let mut rels: Vec<String> = [
        "ftrace.rst.L2511.function_graph.txt",
        "ftrace.rst.L2563.function_graph-fragment.txt",
        "ftrace.rst.L2619.function_graph.txt",
        "ftrace.rst.L2643.function_graph-fragment.txt",
        "ftrace.rst.L2675.function_graph-fragment.txt",
        "ftrace.rst.L2683.function_graph-fragment.txt",
        "ftrace.rst.L2699.function_graph-fragment.txt",
        "ftrace.rst.L2725.function_graph-fragment.txt",
        "ftrace.rst.L2811.function_graph-fragment.txt",
        "ftrace.rst.L3125.function_graph-fragment.txt",
    ]
    .iter()
    .map(|f| format!("kernel-doc-ftrace/extracted/{f}"))
    .collect();
    rels.push("perf-tools/examples/funcgraph_example.txt".into());
    rels.push("perf-tools/examples/funcslower_example.txt".into());
    for rel in rels {
        let Some(path) = realworld(&rel) else { return };
        assert_refused_for_graph(&read_path(&path).unwrap_err(), &path);
    }
}

/// What the damage note of a compressed stream says: the compressed byte of the damage, the
/// bytes and lines of text read before it.
struct StreamNote {
    offset: u64,
    bytes: u64,
    lines: u64,
}

/// The one note of a damaged `compression` stream, taken apart; its numbers must be the
/// read's own.
fn stream_note(info: &TraceInfo, compression: &str) -> StreamNote {
    assert_eq!(info.notes.len(), 1, "{:?}", info.notes);
    let note = &info.notes[0];
    let number = |after: &str| -> u64 {
        let rest = &note[note.find(after).unwrap_or_else(|| panic!("{note}")) + after.len()..];
        let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
        digits.parse().unwrap()
    };
    let prefix = format!("the {compression} stream is damaged at compressed byte ");
    assert!(note.starts_with(&prefix), "{note}");
    assert!(note.ends_with("; the rest was not read"), "{note}");
    let n = StreamNote {
        offset: number(&prefix),
        bytes: number(": read the first "),
        lines: number(" bytes of text ("),
    };
    assert_eq!(n.bytes, info.bytes, "{note}");
    assert_eq!(n.lines, info.lines.total, "{note}");
    n
}

/// A compressed copy of trace.txt cut in half is read up to the cut: exactly the events of
/// the whole lines decompressed before it (the line the cut splits is dropped, not parsed),
/// with a warning that says where.
fn truncated(ext: &str, compression: &str) {
    let full = std::fs::read(variant(&format!("trace.txt.{ext}"))).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let cut = full.len() / 2;
    let (_, r) = read_bytes_as_file(&dir, &format!("cut.txt.{ext}"), &full[..cut]);
    let info = r.unwrap();
    let note = stream_note(&info, compression);
    assert!(
        note.offset > 0 && note.offset <= cut as u64,
        "{ext}: {}",
        note.offset
    );
    let text = trace_txt();
    let read = &text[..note.bytes as usize];
    assert_eq!(
        read.last(),
        Some(&b'\n'),
        "{ext}: the text read ends with a whole line"
    );
    let plain = read::ftrace_text::read_bytes("prefix", read.to_vec(), 1 << 16, &mut NullSink);
    let plain = plain.unwrap();
    assert_eq!(
        (info.events, info.lines.total),
        (plain.events, plain.lines.total)
    );
    // The dropped part of the cut line is a piece of the next line, without its newline.
    let note_text = &info.notes[0];
    let dropped: usize = note_text
        .split("; the ")
        .nth(1)
        .and_then(|r| r.split(' ').next())
        .map_or(0, |n| n.parse().unwrap());
    let cut_line = &text[read.len()..read.len() + dropped];
    assert!(!cut_line.contains(&b'\n'), "{ext}: {note_text}");
    assert!(
        info.events > 1000 && info.events < TRACE_EVENTS,
        "{ext}: {}",
        info.events
    );
    println!(
        "{ext} cut at {cut}: damage at compressed byte {}, {} bytes of text, {} lines, {} events",
        note.offset, note.bytes, note.lines, info.events
    );
}

#[test]
fn truncated_gzip() {
    truncated("gz", "gzip");
}

#[test]
fn truncated_zstd() {
    truncated("zst", "zstd");
}

#[test]
fn truncated_xz() {
    truncated("xz", "xz");
}

#[test]
fn truncated_everywhere_never_panics() {
    // Cuts at many places, including inside the headers: an error naming the file when nothing
    // could be decompressed, else the lines before the cut and the note; never a panic, never
    // a silent success.
    let dir = tempfile::tempdir().unwrap();
    for (ext, compression) in [("gz", "gzip"), ("zst", "zstd"), ("xz", "xz")] {
        let full = std::fs::read(variant(&format!("trace.txt.{ext}"))).unwrap();
        for cut in [
            1,
            3,
            7,
            12,
            20,
            100,
            1000,
            full.len() / 3,
            full.len() - 9,
            full.len() - 1,
        ] {
            let (path, r) = read_bytes_as_file(&dir, &format!("cut{cut}.txt.{ext}"), &full[..cut]);
            let err = match r {
                Err(e) => e,
                // A gzip cut in its 8-byte trailer has every line but fails its check.
                Ok(info) => {
                    assert!(info.events <= TRACE_EVENTS, "{ext} cut at {cut}");
                    stream_note(&info, compression);
                    continue;
                }
            };
            // A 1-byte file is not recognisably compressed: it is garbage or text.
            assert!(
                matches!(
                    err,
                    Error::Decompress { .. } | Error::NotATrace { .. } | Error::Empty { .. }
                ),
                "{ext} cut at {cut}: {err:?}"
            );
            message(&err, &path);
        }
    }
}

/// 16 bytes in the middle of each compressed stream flipped: the events before the damage are
/// read, the note says where the stream stopped. (gzip checks its data only at the end of the
/// stream, so what it decompressed before noticing may be garbage: it is counted as lines
/// that were not understood.)
#[test]
fn corrupted_streams_are_read_up_to_the_damage() {
    let dir = tempfile::tempdir().unwrap();
    for (ext, name) in [("gz", "gzip"), ("zst", "zstd"), ("xz", "xz")] {
        let mut data = std::fs::read(variant(&format!("trace.txt.{ext}"))).unwrap();
        let mid = data.len() / 2;
        for b in &mut data[mid..mid + 16] {
            *b ^= 0x5a;
        }
        let (_, r) = read_bytes_as_file(&dir, &format!("flipped.txt.{ext}"), &data);
        let info = r.unwrap();
        let note = stream_note(&info, name);
        // The decoder reads ahead in blocks, so the offset is where it noticed, at or after
        // the damage and within the file.
        assert!(
            note.offset >= mid as u64 && note.offset <= data.len() as u64,
            "{ext}: offset {}, damage at {mid}",
            note.offset
        );
        assert!(info.events > 0 && info.events < TRACE_EVENTS, "{ext}");
    }
}

/// Nothing decompresses: the error of old, naming the file.
#[test]
fn a_stream_damaged_from_its_start_is_an_error() {
    let mut data = std::fs::read(variant("trace.txt.zst")).unwrap();
    data[4..40].fill(0x5a);
    let dir = tempfile::tempdir().unwrap();
    let (path, r) = read_bytes_as_file(&dir, "start.txt.zst", &data);
    let err = r.unwrap_err();
    assert!(matches!(err, Error::Decompress { .. }), "{err:?}");
    message(&err, &path);
}

/// Yields `x` without end, counting what was taken.
struct EndlessX {
    taken: Arc<AtomicU64>,
}

impl Read for EndlessX {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        buf.fill(b'x');
        self.taken.fetch_add(buf.len() as u64, Ordering::Relaxed);
        Ok(buf.len())
    }
}

/// A prefix, then endless `x`.
fn endless_after(prefix: Vec<u8>, taken: Arc<AtomicU64>) -> Box<dyn Read + Send> {
    Box::new(io::Cursor::new(prefix).chain(EndlessX { taken }))
}

#[test]
fn ten_gigabyte_line_is_refused_quickly() {
    let taken = Arc::new(AtomicU64::new(0));
    let start = Instant::now();
    let input = Input::from_reader("endless", endless_after(Vec::new(), taken.clone())).unwrap();
    assert_eq!(input.format, Format::FtraceText);
    let err = read::read(input, &mut NullSink).unwrap_err();
    let elapsed = start.elapsed();
    let Error::LineTooLong {
        line,
        offset,
        limit,
        ..
    } = &err
    else {
        panic!("expected LineTooLong, got {err:?}");
    };
    assert_eq!((*line, *offset, *limit), (1, 0, MAX_LINE));
    assert_eq!(
        err.to_string(),
        format!("endless:1: line is longer than {MAX_LINE} bytes (it starts at byte 0); this is not ftrace text")
    );
    // Bounded memory: the reader stopped after a few blocks, it did not slurp the line.
    let read_bytes = taken.load(Ordering::Relaxed);
    assert!(
        read_bytes < 64 << 20,
        "read {read_bytes} bytes of an endless line before giving up"
    );
    assert!(elapsed < Duration::from_secs(10), "took {elapsed:?}");
}

#[test]
fn endless_line_after_a_valid_trace() {
    let text = trace_txt();
    let taken = Arc::new(AtomicU64::new(0));
    let input = Input::from_reader("tail", endless_after(text.clone(), taken.clone())).unwrap();
    let err = read::read(input, &mut NullSink).unwrap_err();
    let Error::LineTooLong { line, offset, .. } = &err else {
        panic!("expected LineTooLong, got {err:?}");
    };
    assert_eq!((*line, *offset), (TRACE_LINES + 1, text.len() as u64));
    assert!(
        err.to_string()
            .starts_with(&format!("tail:{}: ", TRACE_LINES + 1)),
        "{err}"
    );
    assert!(taken.load(Ordering::Relaxed) < 64 << 20);
}

#[test]
fn valid_trace_followed_by_a_3mb_line() {
    let mut text = trace_txt();
    let trace_len = text.len() as u64;
    text.extend(std::iter::repeat(b'y').take(3 << 20));
    text.push(b'\n');
    text.extend_from_slice(b"after-1 [000] ..... 1.0: x: y\n");
    let dir = tempfile::tempdir().unwrap();
    let (path, r) = read_bytes_as_file(&dir, "long-line.txt", &text);
    let err = r.unwrap_err();
    let Error::LineTooLong { line, offset, .. } = &err else {
        panic!("expected LineTooLong, got {err:?}");
    };
    assert_eq!((*line, *offset), (TRACE_LINES + 1, trace_len));
    let msg = message(&err, &path);
    assert!(
        msg.starts_with(&format!(
            "{}:{}: line is longer than",
            path.display(),
            TRACE_LINES + 1
        )),
        "{msg}"
    );
    assert!(
        msg.contains(&format!("(it starts at byte {trace_len})")),
        "{msg}"
    );
}

#[test]
fn valid_trace_followed_by_a_3mb_line_compressed() {
    // Same through a decoder: offsets are in the decompressed stream.
    let mut text = trace_txt();
    let trace_len = text.len() as u64;
    text.extend(std::iter::repeat(b'y').take(3 << 20));
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(&text).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (path, r) = read_bytes_as_file(&dir, "long-line.txt.gz", &e.finish().unwrap());
    let err = r.unwrap_err();
    let Error::LineTooLong { line, offset, .. } = &err else {
        panic!("expected LineTooLong, got {err:?}");
    };
    assert_eq!((*line, *offset), (TRACE_LINES + 1, trace_len));
    message(&err, &path);
}

#[test]
fn a_line_just_under_the_limit_is_only_unparsed() {
    let mut text = trace_txt();
    text.extend(std::iter::repeat(b'z').take(MAX_LINE - 1));
    text.push(b'\n');
    let dir = tempfile::tempdir().unwrap();
    let (_, r) = read_bytes_as_file(&dir, "long-ok.txt", &text);
    let info = r.unwrap();
    assert_eq!(info.events, TRACE_EVENTS);
    assert_eq!(info.unparsed(), 1);
    assert_eq!(info.lines.total, TRACE_LINES + 1);
}

#[test]
fn invalid_utf8_in_one_line_is_unparsed() {
    let text = trace_txt();
    // Damage the comm of line 2001, an event line well past the first 64 KB (the bytes the
    // format is sniffed from; see the next test for damage inside them).
    let mut lines: Vec<Vec<u8>> = text.split(|&b| b == b'\n').map(<[u8]>::to_vec).collect();
    let target = 2000;
    let offset: usize = lines[..target].iter().map(|l| l.len() + 1).sum();
    assert!(offset > 64 * 1024);
    assert!(std::str::from_utf8(&lines[target])
        .unwrap()
        .contains(" [00"));
    let pos = lines[target].iter().position(|&b| b != b' ').unwrap();
    lines[target][pos] = 0xff;
    lines[target][pos + 1] = 0xfe;
    let bytes = lines.join(&b'\n');
    assert_eq!(bytes.len(), text.len());

    let dir = tempfile::tempdir().unwrap();
    let (_, r) = read_bytes_as_file(&dir, "bad-utf8.txt", &bytes);
    let info = r.unwrap();
    assert_eq!(info.events, TRACE_EVENTS - 1);
    assert_eq!(info.unparsed(), 1);
    assert_eq!(info.lines.total, TRACE_LINES);
    let ex = &info.unparsed_examples[0];
    assert_eq!(ex.line, target as u64 + 1);
    assert!(ex.text.starts_with("(not UTF-8)"), "{}", ex.text);
    assert!(
        info.warnings()
            .iter()
            .any(|w| w.contains("1 lines were not understood")),
        "{:?}",
        info.warnings()
    );
}

#[test]
fn invalid_utf8_in_the_sniffed_head_is_still_read() {
    // Bad bytes in the first 64 KB, after text: the format sniffing must not reject the file
    // for one bad line (it is ftrace text with one damaged line).
    let text = trace_txt();
    let mut bytes = text.clone();
    let at = text
        .iter()
        .enumerate()
        .filter(|(_, &b)| b == b'\n')
        .nth(20)
        .unwrap()
        .0
        + 1;
    bytes[at] = 0xc3; // a lone lead byte followed by a space: invalid
    let dir = tempfile::tempdir().unwrap();
    let (path, r) = read_bytes_as_file(&dir, "bad-utf8-head.txt", &bytes);
    match r {
        Ok(info) => {
            assert_eq!(info.events, TRACE_EVENTS - 1);
            assert_eq!(info.unparsed(), 1);
        }
        Err(err) => panic!(
            "{}: one bad byte at offset {at} rejected the whole trace: {err}",
            path.display()
        ),
    }
}
