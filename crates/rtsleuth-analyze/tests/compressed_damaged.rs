//! Compressed text traces (gzip, zstd, xz copies of a real recording) with damage: a cut or
//! overwritten bytes anywhere must end in an error naming the file (nothing decompressed) or
//! in the lines before the damage plus a warning; never a panic, never events lost silently.

mod counting;

use proptest::prelude::*;
use rtsleuth_trace::read::{ftrace_text, NullSink, TraceInfo};
use rtsleuth_trace::Error;
use std::path::Path;
use std::sync::OnceLock;

const NAME: &str = "damaged.txt";
const EXTS: [&str; 3] = ["gz", "zst", "xz"];

fn variant(name: &str) -> Vec<u8> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/recorded/variants");
    std::fs::read(dir.join(name)).unwrap()
}

/// The plain text and its three compressed copies.
fn files() -> &'static (Vec<u8>, Vec<Vec<u8>>) {
    static F: OnceLock<(Vec<u8>, Vec<Vec<u8>>)> = OnceLock::new();
    F.get_or_init(|| {
        let compressed = EXTS.iter().map(|e| variant(&format!("trace.txt.{e}")));
        (variant("trace.txt"), compressed.collect())
    })
}

/// Reads `bytes` with every analysis attached; any panic fails.
fn read_bytes(bytes: Vec<u8>) -> Result<(u64, TraceInfo), Error> {
    counting::read_analysed(NAME, bytes)
}

/// The events of the first `bytes` bytes of the plain text, read as a plain trace.
fn events_of_prefix(bytes: u64) -> u64 {
    let text = files().0[..bytes as usize].to_vec();
    ftrace_text::read_bytes("prefix", text, 1 << 16, &mut NullSink).map_or(0, |info| info.events)
}

fn all_events() -> u64 {
    events_of_prefix(files().0.len() as u64)
}

/// A note about the damaged stream, if there is one.
fn damage_note(info: &TraceInfo) -> Option<&String> {
    info.notes
        .iter()
        .find(|n| n.contains(" stream is damaged at compressed byte "))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, ..ProptestConfig::default() })]

    /// Cut anywhere: exactly the events of the whole lines decompressed before the cut (as
    /// many as the plain text's prefix of the size the warning names), or an error naming the
    /// file when the cut leaves nothing to decompress.
    #[test]
    fn a_cut(which in 0usize..3, pos in 0.0f64..1.0) {
        let full = &files().1[which];
        let cut = (full.len() as f64 * pos) as usize;
        match read_bytes(full[..cut].to_vec()) {
            Ok((n, info)) => {
                let note = damage_note(&info);
                prop_assert!(note.is_some(), "{} cut at {}: no warning", EXTS[which], cut);
                prop_assert_eq!(n, events_of_prefix(info.bytes), "{}", note.unwrap());
            }
            Err(e) => prop_assert!(e.to_string().contains(NAME), "{}", e),
        }
    }

    /// Up to 32 bytes overwritten anywhere: never more events than the trace has (the part
    /// decompressed before the decoder notices may be garbage, counted as lines not
    /// understood), and never fewer without a warning.
    #[test]
    fn an_overwritten_span(which in 0usize..3, pos in 0.0f64..1.0, junk in prop::collection::vec(any::<u8>(), 1..32)) {
        let mut b = files().1[which].clone();
        let at = ((b.len() - junk.len()) as f64 * pos) as usize;
        b[at..at + junk.len()].copy_from_slice(&junk);
        match read_bytes(b) {
            Ok((n, info)) => {
                prop_assert!(n <= all_events() + junk.len() as u64, "{} events", n);
                if n < all_events() {
                    prop_assert!(!info.warnings().is_empty(), "{} events, no warning", n);
                }
            }
            Err(e) => prop_assert!(e.to_string().contains(NAME), "{}", e),
        }
    }
}
