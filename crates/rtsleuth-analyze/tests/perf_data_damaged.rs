//! perf.data files that are cut, corrupt or not what they claim: every read ends in an error
//! that names the file (and for a damaged structure the byte), or in the events that could be
//! read plus a note, never in a panic and never in an allocation the file's sizes dictate.

mod counting;

use counting::Count;
use proptest::prelude::*;
use rtsleuth_trace::input::Input;
use rtsleuth_trace::read::{self, TraceInfo};
use rtsleuth_trace::Error;
use std::io::Write;
use std::path::Path;
use std::sync::OnceLock;

const NAME: &str = "damaged.perf.data";

/// The zstd-compressed and the plain recording (the smaller ones), read once.
fn files() -> &'static [(&'static str, Vec<u8>)] {
    static F: OnceLock<Vec<(&str, Vec<u8>)>> = OnceLock::new();
    F.get_or_init(|| {
        let read = |d: &str| {
            std::fs::read(
                Path::new(env!("CARGO_MANIFEST_DIR"))
                    .join("../../tests/fixtures/recorded")
                    .join(d)
                    .join("perf.data"),
            )
            .unwrap()
        };
        vec![
            ("zstd", read("perf_data_zstd")),
            ("lost", read("perf_data_lost")),
        ]
    })
}

/// Reads `bytes` from memory (the path of compressed or piped input) with the analyses
/// attached, so that every decoding path runs; any panic fails the test.
fn read(bytes: Vec<u8>) -> Result<(u64, TraceInfo), Error> {
    counting::read_analysed(NAME, bytes)
}

fn malformed(e: &Error) -> (u64, String) {
    match e {
        Error::Malformed { path, offset, .. } => {
            assert_eq!(path, NAME);
            (*offset, e.to_string())
        }
        other => panic!("expected a Malformed error, got {other}"),
    }
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().unwrap())
}

#[test]
fn read_from_memory_as_from_the_file() {
    for (name, full) in files() {
        let (n, info) = read(full.clone()).unwrap();
        let want = if *name == "zstd" { 17_957 } else { 9_991 };
        assert_eq!(n, want, "{name}");
        assert_eq!(info.bytes, full.len() as u64);
    }
}

/// perf writes the metadata (the tracepoint formats among it) after the records, so a cut
/// file has none to decode its samples with: an error that says truncated and where.
#[test]
fn a_cut_file_is_an_error_that_says_truncated() {
    for (name, full) in files() {
        let mut cuts: Vec<usize> = (1..120).collect();
        cuts.extend((1..100).map(|i| full.len() * i / 100));
        cuts.push(full.len() - 1);
        for cut in cuts {
            let e = read(full[..cut].to_vec()).unwrap_err();
            let msg = e.to_string();
            assert!(msg.starts_with(NAME), "{name} cut at {cut}: {msg}");
            match e {
                // Too short to be recognised as anything.
                Error::NotATrace { .. } => assert!(cut < 8, "{name} cut at {cut}: {msg}"),
                e => {
                    let (at, msg) = malformed(&e);
                    assert!(at <= cut as u64, "{name} cut at {cut}: {msg}");
                    assert!(
                        msg.contains("truncated") || msg.contains("ends inside the header"),
                        "{name} cut at {cut}: {msg}"
                    );
                }
            }
        }
    }
}

#[test]
fn empty_wrong_magic_and_garbage() {
    assert!(matches!(read(Vec::new()), Err(Error::Empty { .. })));
    let mut b = files()[0].1.clone();
    b[7] = b'3'; // PERFILE3
    let e = read(b).unwrap_err();
    assert!(matches!(e, Error::NotATrace { .. }), "{e}");
    assert!(e.to_string().starts_with(NAME), "{e}");
    let mut g = b"PERFILE2".to_vec();
    g.extend((0..4000u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8));
    let (at, msg) = malformed(&read(g).unwrap_err());
    assert!(at < 104, "{msg}");
}

/// `perf record -o -` writes a 16-byte header and keeps its metadata in the record stream.
#[test]
fn pipe_mode_is_refused_with_the_way_out() {
    let mut b = b"PERFILE2".to_vec();
    b.extend(16u64.to_le_bytes());
    b.extend([0u8; 64]);
    let e = read(b).unwrap_err();
    assert!(matches!(e, Error::Unsupported { .. }), "{e}");
    let msg = e.to_string();
    assert!(
        msg.contains("pipe mode") && msg.contains("perf inject"),
        "{msg}"
    );
}

/// A recording without tracepoints has no HEADER_TRACING_DATA: its samples cannot be events.
#[test]
fn no_tracepoint_formats_is_not_a_trace() {
    let mut b = files()[1].1.clone();
    // Drop feature 1 (TRACING_DATA): its bit, and its entry, the first of the feature table.
    let features = u64_at(&b, 72);
    assert_eq!(features & 0b11, 0b10, "TRACING_DATA is the first feature");
    b[72..80].copy_from_slice(&(features & !0b10).to_le_bytes());
    let table = (u64_at(&b, 40) + u64_at(&b, 48)) as usize;
    let end = table + 16 * features.count_ones() as usize;
    // The entries after it move up; padding keeps every section where it was.
    let entry: Vec<u8> = b.drain(table..table + 16).collect();
    b.splice(end - 16..end - 16, entry.iter().map(|_| 0));
    let e = read(b).unwrap_err();
    assert!(matches!(e, Error::NotATrace { .. }), "{e}");
    assert!(e.to_string().contains("HEADER_TRACING_DATA"), "{e}");
}

/// A feature section that claims a terabyte: the crate would allocate it whole.
#[test]
fn a_section_past_the_end_is_named_before_the_crate_allocates_it() {
    let mut b = files()[1].1.clone();
    let table = (u64_at(&b, 40) + u64_at(&b, 48)) as usize;
    b[table + 8..table + 16].copy_from_slice(&(1u64 << 40).to_le_bytes());
    let (at, msg) = malformed(&read(b).unwrap_err());
    assert_eq!(at, table as u64, "{msg}");
    assert!(
        msg.contains("feature 1") && msg.contains("past the end"),
        "{msg}"
    );
}

/// The data section damaged in the middle (a record header whose size is below the header's
/// own): the records before the damage, and a note.
#[test]
fn damage_inside_the_records_keeps_what_came_before() {
    let mut b = files()[1].1.clone();
    let data = u64_at(&b, 40) as usize;
    let size = u64_at(&b, 48) as usize;
    // Walk the records to one in the middle and zero its size.
    let mut at = data;
    while at < data + size / 2 {
        at += u16::from_le_bytes(b[at + 6..at + 8].try_into().unwrap()) as usize;
    }
    b[at + 6..at + 8].copy_from_slice(&0u16.to_le_bytes());
    let (n, info) = read(b).unwrap();
    assert!(n > 1000 && n < 9_991, "{n}");
    assert!(
        info.warnings().iter().any(|w| w.contains("damaged")),
        "{:?}",
        info.warnings()
    );
}

/// A plain file on disk is read in place, the same as from memory.
#[test]
fn the_file_and_memory_paths_agree() {
    let mut f = tempfile::NamedTempFile::new().unwrap();
    f.write_all(&files()[1].1).unwrap();
    let mut count = Count::default();
    let info = read::read(Input::open(f.path().to_str().unwrap()).unwrap(), &mut count).unwrap();
    assert_eq!(
        (count.0, info.events, info.lost_events),
        (9_991, 9_991, 977)
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// Random bytes overwritten anywhere in a real file, optionally cut too: an error naming
    /// the file, or a result; never a panic or an abort.
    #[test]
    fn random_damage_never_panics(
        which in 0usize..2,
        hits in prop::collection::vec((0.0f64..1.0, any::<u8>()), 1..16),
        cut in prop::option::of(0.0f64..1.0),
    ) {
        let mut b = files()[which].1.clone();
        for (pos, byte) in hits {
            let i = ((b.len() - 1) as f64 * pos) as usize;
            b[i] = byte;
        }
        if let Some(c) = cut {
            b.truncate((b.len() as f64 * c) as usize);
        }
        match read(b) {
            Ok(_) => {}
            Err(e) => prop_assert!(e.to_string().contains(NAME), "{}", e),
        }
    }

    /// Damage aimed at the header and the feature table, where the sizes live.
    #[test]
    fn damage_to_the_sizes_never_panics(
        which in 0usize..2,
        hits in prop::collection::vec((0usize..104, any::<u8>()), 1..4),
        table_hits in prop::collection::vec((0usize..400, any::<u8>()), 0..4),
    ) {
        let mut b = files()[which].1.clone();
        let table = (u64_at(&b, 40) + u64_at(&b, 48)) as usize;
        for (i, byte) in hits {
            b[i] = byte;
        }
        for (i, byte) in table_hits {
            if let Some(x) = b.get_mut(table + i) {
                *x = byte;
            }
        }
        match read(b) {
            Ok(_) => {}
            Err(e) => prop_assert!(e.to_string().contains(NAME), "{}", e),
        }
    }
}
