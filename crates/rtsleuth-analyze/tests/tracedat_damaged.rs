//! trace.dat files that are cut, corrupt or lie about themselves: every read ends in an error
//! that names the file and the byte offset, or in the events that could be read plus a note
//! saying what was skipped, never in a panic.

mod counting;

use proptest::prelude::*;
use rtsleuth_trace::input::Input;
use rtsleuth_trace::read::{self, TraceInfo};
use rtsleuth_trace::Error;
use std::path::Path;
use std::sync::OnceLock;

const NAME: &str = "damaged.dat";

fn fixture(f: &str) -> Vec<u8> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures/tracedat")
        .join(f);
    std::fs::read(p).unwrap()
}

/// The v7 zstd and v6 files of the same recording, read once.
fn files() -> &'static [(&'static str, Vec<u8>)] {
    static F: OnceLock<Vec<(&str, Vec<u8>)>> = OnceLock::new();
    F.get_or_init(|| {
        vec![
            ("trace.dat", fixture("trace.dat")),
            ("v6.dat", fixture("v6.dat")),
        ]
    })
}

/// Reads `bytes` with the event counter and the analyses attached (so that every decoding
/// path runs); any panic fails the test.
fn read(bytes: Vec<u8>) -> Result<(u64, TraceInfo), Error> {
    counting::read_analysed(NAME, bytes)
}

fn malformed_at(e: &Error) -> u64 {
    match e {
        Error::Malformed { path, offset, .. } => {
            assert_eq!(path, NAME);
            *offset
        }
        other => panic!("expected a Malformed error, got {other}"),
    }
}

#[test]
fn cut_anywhere_gives_an_error_with_the_offset_or_fewer_events_and_a_note() {
    for (name, full) in files() {
        let (all, _) = read(full.clone()).unwrap();
        assert_eq!(all, 20_009, "{name}");
        let mut cuts: Vec<usize> = (0..64).collect();
        cuts.extend((1..200).map(|i| full.len() * i / 200));
        cuts.push(full.len() - 1);
        for cut in cuts {
            match read(full[..cut].to_vec()) {
                // A cut that spares every byte that is read (trailing padding) loses nothing.
                Ok((n, _)) if n == all => {}
                Ok((n, info)) => {
                    assert!(n < all, "{name} cut at {cut}: {n} events");
                    assert!(
                        info.warnings()
                            .iter()
                            .any(|w| w.contains("truncated") || w.contains("damaged")),
                        "{name} cut at {cut}: no note in {:?}",
                        info.warnings()
                    );
                }
                Err(Error::Empty { .. }) => assert_eq!(cut, 0),
                Err(Error::NotATrace { .. }) => assert!(cut < 10, "{name} cut at {cut}"),
                Err(e) => {
                    let at = malformed_at(&e);
                    let msg = e.to_string();
                    // Either the structure that was cut, or a section the header points
                    // to beyond the end.
                    assert!(
                        at <= cut as u64 || msg.contains("past the end"),
                        "{name} cut at {cut}: {e}"
                    );
                    assert!(msg.contains("truncated"), "{name} cut at {cut}: {e}");
                }
            }
        }
    }
}

#[test]
fn an_unknown_compression_is_named() {
    let mut b = fixture("trace.dat");
    let at = b.windows(5).position(|w| w == b"zstd\0").unwrap();
    b[at..at + 4].copy_from_slice(b"lzma");
    let e = read(b).unwrap_err();
    assert_eq!(malformed_at(&e), at as u64);
    assert!(e.to_string().contains("\"lzma\""), "{e}");
}

#[test]
fn the_wrong_byte_order_is_an_error_not_garbage() {
    for (name, full) in files() {
        let mut b = full.clone();
        b[12] ^= 1; // the endianness byte after the magic and "6\0"/"7\0"
        let e = read(b).unwrap_err();
        malformed_at(&e);
        assert!(!e.to_string().is_empty(), "{name}");
    }
}

/// The offset of CPU 0's first page in the v6 file (the flyrecord table follows
/// `flyrecord\0`).
fn first_page(b: &[u8]) -> usize {
    let at = b.windows(10).position(|w| w == b"flyrecord\0").unwrap() + 10;
    u64::from_le_bytes(b[at..at + 8].try_into().unwrap()) as usize
}

#[test]
fn a_corrupt_page_is_skipped_with_its_offset() {
    let mut b = fixture("v6.dat");
    let page = first_page(&b);
    b[page + 8..page + 16].copy_from_slice(&u64::MAX.to_le_bytes()[..8]);
    b[page + 8 + 3] = 0x07; // commit: a data length larger than the page, no flag bits
    let (n, info) = read(b).unwrap();
    assert!(n < 20_009 && n > 19_000, "{n}");
    let note = info
        .warnings()
        .into_iter()
        .find(|w| w.contains("CPU 0"))
        .unwrap();
    assert!(note.contains(&format!("at byte {}", page + 8)), "{note}");
}

#[test]
fn records_of_an_unknown_event_id_are_counted_and_skipped() {
    let mut b = fixture("v6.dat");
    let page = first_page(&b);
    // Find the first data record (type_len 1..=28) and give it an id no format has.
    let mut at = page + 16;
    loop {
        let w = u32::from_le_bytes(b[at..at + 4].try_into().unwrap());
        match w & 0x1f {
            1..=28 => break,
            0 => panic!("unexpected long record first"),
            _ => at += 8, // time extend / stamp
        }
    }
    b[at + 4..at + 6].copy_from_slice(&0xfff0u16.to_le_bytes());
    let (n, info) = read(b).unwrap();
    assert_eq!(n, 20_008);
    assert!(
        info.warnings()
            .iter()
            .any(|w| w.contains("1 records of event id 65520")),
        "{:?}",
        info.warnings()
    );
}

#[test]
fn garbage_after_a_valid_header_is_an_error_at_its_offset() {
    let full = fixture("v6.dat");
    let mut b = full[..18].to_vec(); // magic, version, endian, long size, page size
    b.extend((0..4000u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8));
    let e = read(b).unwrap_err();
    assert!(malformed_at(&e) >= 18, "{e}");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// Random bytes overwritten anywhere in a real file: the read ends in an error or a
    /// result, never a panic.
    #[test]
    fn random_damage_never_panics(which in 0usize..2, hits in prop::collection::vec((0.0f64..1.0, any::<u8>()), 1..16)) {
        let mut b = files()[which].1.clone();
        for (pos, byte) in hits {
            let i = ((b.len() - 1) as f64 * pos) as usize;
            b[i] = byte;
        }
        match read(b) {
            Ok(_) => {}
            Err(e) => prop_assert!(e.to_string().contains(NAME), "{}", e),
        }
    }
}

/// An analysis that panics mid-trace must not leave the decompression threads waiting for a
/// reader that is gone: the panic comes back to the caller (it used to hang instead).
#[test]
fn a_panic_in_the_sink_unwinds_instead_of_hanging() {
    struct Explodes(u64);
    impl rtsleuth_trace::read::EventSink for Explodes {
        fn event(&mut self, _: &rtsleuth_trace::event::Event<'_>) {
            self.0 += 1;
            assert!(self.0 < 100, "the sink gives up");
        }
    }
    let bytes = files()[0].1.clone(); // v7 zstd: chunks decompressed on their own threads
    let result = std::panic::catch_unwind(move || {
        let input = Input::from_reader(NAME, Box::new(std::io::Cursor::new(bytes))).unwrap();
        read::read(input, &mut Explodes(0))
    });
    assert!(result.is_err());
}

/// A zstd-compressed copy of trace.dat cut short: the decompressed part is read as a file
/// cut there (fewer events, the truncation note) and a warning names the damaged stream.
#[test]
fn a_cut_compressed_trace_dat_is_read_up_to_the_cut() {
    let full = &files()[1].1; // v6: its CPUs' pages are in order, the cut loses the last ones
    let zst = zstd::encode_all(&full[..], 3).unwrap();
    let (n, info) = read(zst[..zst.len() * 9 / 10].to_vec()).unwrap();
    assert!(n > 0 && n < 20_009, "{n}");
    let note = &info.notes[0];
    assert!(
        note.starts_with("the zstd stream is damaged at compressed byte ")
            && note.contains(": read the first ")
            && note.ends_with(" bytes of the trace.dat; the rest was not read"),
        "{note}"
    );
    assert!(
        info.warnings().iter().any(|w| w.contains("truncated")),
        "{:?}",
        info.warnings()
    );
}

/// One zstd chunk of a v7 file damaged: its CPU is read up to the chunk and the other CPUs
/// whole, with a note naming the CPU and the byte.
#[test]
fn a_damaged_compressed_chunk_loses_only_its_cpu_from_there() {
    let mut b = files()[0].1.clone();
    let (all, _) = read(b.clone()).unwrap();
    // A zstd frame in the middle of the file (magic 28 b5 2f fd).
    let mid = b.len() / 2;
    let at = mid
        + b[mid..]
            .windows(4)
            .position(|w| w == [0x28, 0xb5, 0x2f, 0xfd])
            .unwrap();
    b[at + 20..at + 60].fill(0x5a);
    let (n, info) = read(b).unwrap();
    assert!(n < all && n > all / 3, "{n} of {all}");
    assert!(
        info.warnings()
            .iter()
            .any(|w| w.contains(": CPU ")
                && w.ends_with("; its records after this chunk were not read")),
        "{:?}",
        info.warnings()
    );
}
