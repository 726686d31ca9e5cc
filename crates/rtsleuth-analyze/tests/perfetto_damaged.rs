//! Real Perfetto traces with damage: one bad packet is not a bad trace. A flipped byte, an
//! overwritten span or a cut anywhere must end in a clean error naming the file or in the
//! events of every packet the damage did not touch, with a warning that counts what was
//! skipped; never in a panic.
//!
//! The bound on what damage may cost is taken from the file itself: this test walks the
//! `Trace` framing on its own (a few lines of wire format, no code shared with the reader) and
//! counts the `FtraceEvent`s of each packet, which is at least the events the reader takes from
//! it.
//!
//! When the shared folder is absent the tests print `skipped: ...` and pass, unless `CI` is set.

mod counting;
#[path = "../../rtsleuth-trace/tests/shared_fixtures/mod.rs"]
mod shared_fixtures;

use proptest::prelude::*;
use rtsleuth_trace::read::TraceInfo;
use rtsleuth_trace::Error;
use std::ops::Range;
use std::sync::OnceLock;

const NAME: &str = "damaged.pftrace";

/// A trace file, its packets and what an undamaged read gives.
struct Fixture {
    bytes: Vec<u8>,
    packets: Vec<Packet>,
    events: u64,
}

/// One frame of the `Trace` stream.
struct Packet {
    /// The whole frame: key, length, payload.
    frame: Range<usize>,
    payload: Range<usize>,
    /// `FtraceEvent`s in its bundle: an upper bound on the events read from it.
    entries: u64,
}

fn varint(b: &[u8], at: &mut usize) -> u64 {
    let mut v = 0;
    for i in 0..10 {
        let byte = b[*at];
        *at += 1;
        v |= u64::from(byte & 0x7f) << (7 * i);
        if byte & 0x80 == 0 {
            break;
        }
    }
    v
}

/// The (field, payload range) of every length-delimited field of the message in `r`.
fn messages(b: &[u8], r: Range<usize>) -> Vec<(u64, Range<usize>)> {
    let mut out = Vec::new();
    let mut at = r.start;
    while at < r.end {
        let key = varint(b, &mut at);
        match key & 7 {
            0 => {
                varint(b, &mut at);
            }
            1 => at += 8,
            5 => at += 4,
            2 => {
                let len = varint(b, &mut at) as usize;
                out.push((key >> 3, at..at + len));
                at += len;
            }
            w => panic!("wire type {w} in an undamaged trace"),
        }
    }
    out
}

fn packets(b: &[u8]) -> Vec<Packet> {
    messages(b, 0..b.len())
        .into_iter()
        .map(|(field, payload)| {
            assert_eq!(field, 1);
            let entries = messages(b, payload.clone())
                .into_iter()
                .filter(|(f, _)| *f == 1) // ftrace_events
                .flat_map(|(_, bundle)| messages(b, bundle))
                .filter(|(f, _)| *f == 2) // event
                .count() as u64;
            // The key is one byte; the length is the varint before the payload.
            let mut start = payload.start - 1;
            while b[start - 1] & 0x80 != 0 {
                start -= 1;
            }
            Packet {
                frame: start - 1..payload.end,
                payload,
                entries,
            }
        })
        .collect()
}

fn fixture(name: &str) -> Option<&'static Fixture> {
    static F: OnceLock<Vec<(String, Fixture)>> = OnceLock::new();
    let all = F.get_or_init(|| {
        let dir = "ms-perf-tools-linux-android/TestData/Perfetto";
        let Some(dir) = shared_fixtures::realworld(dir) else {
            return Vec::new();
        };
        [
            "perfetto_android12_cpuschedstack.pftrace",
            "test_trace.perfetto-trace",
        ]
        .into_iter()
        .map(|n| {
            let bytes = std::fs::read(dir.join(n)).unwrap();
            let (events, info) = read_bytes(bytes.clone()).unwrap();
            assert!(info.notes.is_empty(), "{n}: {:?}", info.notes);
            let packets = packets(&bytes);
            let f = Fixture {
                bytes,
                packets,
                events,
            };
            (n.to_string(), f)
        })
        .collect()
    });
    all.iter().find(|(n, _)| n == name).map(|(_, f)| f)
}

/// Reads `bytes` with every analysis attached (stats prints every warning); any panic fails.
fn read_bytes(bytes: Vec<u8>) -> Result<(u64, TraceInfo), Error> {
    let (events, info, docs) = counting::read_documents(NAME, bytes)?;
    assert_eq!(
        docs[0]["warnings"].as_array().unwrap().len(),
        info.warnings().len()
    );
    Ok((events, info))
}

/// The note that counts packets skipped whole.
fn skipped_packets(info: &TraceInfo) -> Option<&String> {
    info.notes
        .iter()
        .find(|n| n.contains("could not be decoded and"))
}

/// The packet with the most events among the 100 around the middle byte of the file.
fn middle_packet(f: &Fixture) -> &Packet {
    let half = f
        .packets
        .iter()
        .position(|p| p.frame.contains(&(f.bytes.len() / 2)))
        .unwrap();
    f.packets[half - 50..half + 50]
        .iter()
        .max_by_key(|p| p.entries)
        .unwrap()
}

/// One packet in the middle of a real trace has its payload overwritten with 0xff: exactly
/// its own events are lost (the same events as with the packet cut out of the file), and the
/// warning counts one skipped packet at its offset.
#[test]
fn one_overwritten_packet_loses_its_own_events_only() {
    let name = "perfetto_android12_cpuschedstack.pftrace";
    let Some(f) = fixture(name) else { return };
    let p = middle_packet(f);
    let mut damaged = f.bytes.clone();
    damaged[p.payload.clone()].fill(0xff);
    let mut without = f.bytes.clone();
    without.drain(p.frame.clone());
    let (n, info) = read_bytes(damaged).unwrap();
    let (n_without, _) = read_bytes(without).unwrap();
    println!(
        "{name}: packet at byte {} ({} bytes, {} events) overwritten: clean {}, damaged {n}",
        p.frame.start,
        p.frame.len(),
        p.entries,
        f.events
    );
    assert_eq!(n, n_without);
    assert_eq!(n, f.events - p.entries);
    assert_eq!(
        skipped_packets(&info).unwrap(),
        &format!(
            "1 TracePacket from byte {} on could not be decoded and was skipped (first: TracePacket: failed to decode Protobuf message: invalid varint); the other packets were read",
            p.frame.start
        )
    );
    assert_eq!(info.notes.len(), 1, "{:?}", info.notes);
}

/// The same packet's length made too long by 100 bytes: it swallows the start of the next
/// packet, which the reader must find again inside it.
#[test]
fn a_corrupt_length_loses_only_its_own_packet() {
    let Some(f) = fixture("perfetto_android12_cpuschedstack.pftrace") else {
        return;
    };
    let p = middle_packet(f);
    let len = (p.payload.len() + 100) as u64;
    let mut damaged = f.bytes[..p.frame.start + 1].to_vec();
    let mut v = len;
    while v >= 0x80 {
        damaged.push(v as u8 | 0x80);
        v >>= 7;
    }
    damaged.push(v as u8);
    assert_eq!(damaged.len(), p.payload.start, "the length keeps its size");
    damaged.extend_from_slice(&f.bytes[p.payload.start..]);
    let (n, info) = read_bytes(damaged).unwrap();
    assert_eq!(n, f.events - p.entries);
    assert!(
        info.notes[0].starts_with(&format!(
            "the packet framing is damaged in 1 place from byte {} on: {} bytes were skipped",
            p.frame.start,
            p.frame.len()
        )),
        "{:?}",
        info.notes
    );
}

#[test]
fn a_file_of_only_damaged_packets_is_refused() {
    let Some(f) = fixture("test_trace.perfetto-trace") else {
        return;
    };
    // Each payload keeps its first byte, a field key, so that the file is still recognised
    // as Perfetto.
    let mut b = f.bytes[..f.packets[39].frame.end].to_vec();
    for p in &f.packets[..40] {
        b[p.payload.start + 1..p.payload.end].fill(0xff);
    }
    match read_bytes(b) {
        Err(Error::Malformed { path, reason, .. }) => {
            assert_eq!(path, NAME);
            assert!(reason.starts_with("no TracePacket decodes"), "{reason}");
        }
        other => panic!("expected Malformed, got {:?}", other.map(|r| r.0)),
    }
}

/// Which packets the bytes in `r` belong to (frames overlapping it).
fn touched(f: &Fixture, r: &Range<usize>) -> u64 {
    f.packets
        .iter()
        .filter(|p| p.frame.start < r.end && r.start < p.frame.end)
        .map(|p| p.entries)
        .sum()
}

/// What every damaged read must give: an error naming the file, or at least the events of
/// the packets the damage did not touch and, when events are missing, a warning. The one
/// loss no reader can see is a cut exactly between two packets: what is left is a whole,
/// shorter trace.
fn check(f: &Fixture, bytes: Vec<u8>, hit: Range<usize>) -> Result<(), TestCaseError> {
    let cut_between_packets = hit == (bytes.len()..f.bytes.len())
        && f.packets.iter().any(|p| p.frame.start == bytes.len());
    match read_bytes(bytes) {
        Ok((n, info)) => {
            let floor = f.events - touched(f, &hit);
            prop_assert!(n >= floor, "{} events, at least {} expected", n, floor);
            if n < f.events && !cut_between_packets {
                prop_assert!(!info.notes.is_empty(), "{} events and no warning", n);
            }
        }
        Err(e) => prop_assert!(e.to_string().contains(NAME), "{}", e),
    }
    Ok(())
}

/// Inputs the properties below once found losing an event without a word, kept as fixed cases.
/// The flip turns the key of one `event` entry of a bundle (`0x12`, field 2) into `0x6a`,
/// field 13, which Perfetto does not define: the bundle still decodes, one event short.
#[test]
fn an_event_key_turned_into_an_undefined_field_is_reported() {
    let Some(f) = fixture("test_trace.perfetto-trace") else {
        return;
    };
    let mut b = f.bytes.clone();
    let at = ((b.len() - 1) as f64 * 0.045830902170989486) as usize;
    assert_eq!(b[at], 0x12);
    b[at] ^= 120;
    let (n, info) = read_bytes(b.clone()).unwrap();
    assert_eq!(n, f.events - 1);
    let packet = f.packets.iter().find(|p| p.frame.contains(&at)).unwrap();
    assert_eq!(
        info.notes,
        [format!(
            "1 FtraceEventBundle from byte {} on holds a field Perfetto does not define (first: field 13), which was skipped: damage (a changed key may have hidden an event) or a Perfetto newer than rtsleuth; their other events were read",
            packet.frame.start
        )]
    );
    check(f, b, at..at + 1).unwrap();
}

/// The same key turned into field 11 (`generic_event_descriptors`), a field Perfetto defines
/// and the reader does not use: the reader declares it anyway, so the event's varint fields
/// fail its wire types and the packet is skipped with a warning instead of vanishing.
#[test]
fn an_event_key_turned_into_an_unused_field_skips_its_packet() {
    let Some(f) = fixture("test_trace.perfetto-trace") else {
        return;
    };
    let mut b = f.bytes.clone();
    let at = ((b.len() - 1) as f64 * 0.6564788567879949) as usize;
    assert_eq!(b[at], 0x12);
    b[at] ^= 72;
    let (n, info) = read_bytes(b.clone()).unwrap();
    let packet = f.packets.iter().find(|p| p.frame.contains(&at)).unwrap();
    assert_eq!(n, f.events - packet.entries);
    assert!(
        skipped_packets(&info).unwrap().starts_with(&format!(
            "1 TracePacket from byte {} on",
            packet.frame.start
        )),
        "{:?}",
        info.notes
    );
    check(f, b, at..at + 1).unwrap();
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// One byte changed anywhere.
    #[test]
    fn a_flipped_byte(pos in 0.0f64..1.0, xor in 1u8..=255) {
        let Some(f) = fixture("test_trace.perfetto-trace") else { return Ok(()) };
        let mut b = f.bytes.clone();
        let at = ((b.len() - 1) as f64 * pos) as usize;
        b[at] ^= xor;
        check(f, b, at..at + 1)?;
    }

    /// Up to 64 bytes overwritten with random bytes.
    #[test]
    fn an_overwritten_span(pos in 0.0f64..1.0, junk in prop::collection::vec(any::<u8>(), 1..64)) {
        let Some(f) = fixture("test_trace.perfetto-trace") else { return Ok(()) };
        let mut b = f.bytes.clone();
        let at = ((b.len() - junk.len()) as f64 * pos) as usize;
        b[at..at + junk.len()].copy_from_slice(&junk);
        check(f, b, at..at + junk.len())?;
    }

    /// The file cut anywhere: everything before the cut packet is read.
    #[test]
    fn a_cut(pos in 0.0f64..1.0) {
        let Some(f) = fixture("test_trace.perfetto-trace") else { return Ok(()) };
        let cut = (f.bytes.len() as f64 * pos) as usize;
        let b = f.bytes[..cut].to_vec();
        check(f, b, cut..f.bytes.len())?;
    }
}

/// A gzipped trace cut in the middle of its compressed stream: the packets before the damage
/// are read (the same as reading that much of the plain trace), and a warning says where the
/// gzip stream stopped; cut before any packet, it is an error.
#[test]
fn a_cut_compressed_trace_is_read_up_to_the_damage() {
    use std::io::Write;
    let Some(f) = fixture("perfetto_android12_cpuschedstack.pftrace") else {
        return;
    };
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(&f.bytes).unwrap();
    let gz = gz.finish().unwrap();
    let cut = gz.len() * 3 / 5;
    let (n, info) = read_bytes(gz[..cut].to_vec()).unwrap();
    let (n_plain, _) = read_bytes(f.bytes[..info.bytes as usize].to_vec()).unwrap();
    println!(
        "gzip cut at {cut} of {} bytes: {n} of {} events, {} bytes of trace",
        gz.len(),
        f.events,
        info.bytes
    );
    assert_eq!(n, n_plain);
    assert!(n > 0 && n < f.events, "{n}");
    let note = info
        .notes
        .iter()
        .find(|n| n.starts_with("the gzip stream is damaged at compressed byte"))
        .unwrap_or_else(|| panic!("{:?}", info.notes));
    assert!(
        note.contains(&format!("read the first {} bytes of the trace", info.bytes)),
        "{note}"
    );
    assert!(matches!(
        read_bytes(gz[..20].to_vec()),
        Err(Error::Decompress { .. })
    ));
}
