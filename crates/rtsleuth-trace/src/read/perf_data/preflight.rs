//! The structure of a perf.data file checked against its length before `linux-perf-data`
//! reads it.
//!
//! The crate trusts the sizes and counts it reads: it allocates a feature section's whole
//! declared size, reserves room for the declared number of event descriptions and ids, and
//! divides by the attribute size. A damaged or cut file would make it ask for gigabytes (an
//! abort, not an error) or divide by zero. Everything it trusts is checked here first, so that
//! bad input gets an error that names the structure and the byte.

use crate::read::tracedat::{Endian, Fault};

type Checked<T> = Result<T, Fault>;

/// The header's size in file mode (`struct perf_file_header`); pipe mode writes only 16 bytes.
const FILE_HEADER_SIZE: u64 = 104;
/// `PERF_ATTR_SIZE_VER0`: the smallest `perf_event_attr` there is.
const ATTR_SIZE_MIN: u64 = 64;
/// No kernel's attr comes near this; a bigger one is damage.
const ATTR_SIZE_MAX: u64 = 4096;
/// The `HEADER_EVENT_DESC` feature bit.
const EVENT_DESC: usize = 12;

/// A `{offset, size}` pair of the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Section {
    pub offset: u64,
    pub size: u64,
}

/// What the checks learnt that the reader uses: the byte order and where each feature is.
#[derive(Debug)]
pub struct Layout {
    pub endian: Endian,
    pub data: Section,
    /// Feature bit and section, in the file's order.
    pub features: Vec<(usize, Section)>,
}

impl Layout {
    pub fn feature(&self, bit: usize) -> Option<Section> {
        self.features
            .iter()
            .find(|(b, _)| *b == bit)
            .map(|(_, s)| *s)
    }
}

/// Why a file is refused before any record is read.
#[derive(Debug, PartialEq, Eq)]
pub enum Refusal {
    /// Written by `perf record -o -`: no sections, the metadata is in the record stream.
    PipeMode,
    Damaged(Fault),
}

impl From<Fault> for Refusal {
    fn from(f: Fault) -> Refusal {
        Refusal::Damaged(f)
    }
}

/// Checks the file's header, its sections and the event descriptions against `file`, the
/// whole file's bytes up to the end of the feature sections (`head` is at least the header).
pub fn check(file: &dyn Fn(Section) -> Option<Vec<u8>>, len: u64) -> Result<Layout, Refusal> {
    let head = file(Section {
        offset: 0,
        size: len.min(FILE_HEADER_SIZE),
    })
    .unwrap_or_default();
    let endian = match head.get(..8) {
        Some(b"PERFILE2") => Endian::Little,
        Some(b"2ELIFREP") => Endian::Big,
        _ => return Err(Fault::new(0, "no perf.data magic (PERFILE2)").into()),
    };
    let u64_at = |at: usize, what: &str| -> Checked<u64> {
        endian
            .uint(head.get(at..).unwrap_or_default(), 8)
            .ok_or_else(|| {
                Fault::new(
                    at as u64,
                    format!("the file ({len} bytes) ends inside the header, at its {what}"),
                )
            })
    };
    let header_size = u64_at(8, "size")?;
    if header_size == 16 {
        return Err(Refusal::PipeMode);
    }
    if header_size < FILE_HEADER_SIZE {
        return Err(Fault::new(
            8,
            format!("header size {header_size} (at least {FILE_HEADER_SIZE} expected)"),
        )
        .into());
    }
    let attr_size = u64_at(16, "attr size")?;
    if !(ATTR_SIZE_MIN..=ATTR_SIZE_MAX).contains(&attr_size) {
        return Err(Fault::new(
            16,
            format!("attr size {attr_size} ({ATTR_SIZE_MIN} to {ATTR_SIZE_MAX} expected)"),
        )
        .into());
    }
    let section = |at: usize, what: &str| -> Checked<Section> {
        let s = Section {
            offset: u64_at(at, what)?,
            size: u64_at(at + 8, what)?,
        };
        within(s, len, at as u64, what)?;
        Ok(s)
    };
    section(24, "attrs section")?;
    let data = section(40, "data section")?;
    section(56, "event types section")?;
    let bits: Vec<usize> = (0..4)
        .map(|i| u64_at(72 + 8 * i, "feature bits"))
        .collect::<Checked<Vec<u64>>>()?
        .iter()
        .enumerate()
        .flat_map(|(i, w)| {
            (0..64)
                .filter(move |b| w >> b & 1 == 1)
                .map(move |b| 64 * i + b)
        })
        .collect();
    if data.size == 0 && len > data.offset && bits.is_empty() {
        return Err(Fault::new(
            40,
            format!(
                "the header says the data section is empty, but {} bytes follow it: perf record did not finish writing the file (killed?)",
                len - data.offset
            ),
        )
        .into());
    }
    let table = Section {
        offset: data.offset + data.size,
        size: 16 * bits.len() as u64,
    };
    within(table, len, 40, "feature table")?;
    let table_bytes = file(table).unwrap_or_default();
    let mut features = Vec::with_capacity(bits.len());
    for (i, bit) in bits.into_iter().enumerate() {
        let at = 16 * i;
        let field = |o: usize| endian.uint(table_bytes.get(at + o..).unwrap_or_default(), 8);
        let (Some(offset), Some(size)) = (field(0), field(8)) else {
            return Err(Fault::new(table.offset + at as u64, "feature table is cut").into());
        };
        let s = Section { offset, size };
        within(s, len, table.offset + at as u64, &format!("feature {bit}"))?;
        features.push((bit, s));
    }
    let layout = Layout {
        endian,
        data,
        features,
    };
    if let Some(desc) = layout.feature(EVENT_DESC) {
        let bytes = file(desc).unwrap_or_default();
        event_descs(&bytes, desc.offset, endian)?;
    }
    Ok(layout)
}

/// Fails unless `s` lies inside a file of `len` bytes; `at` is where the section was named.
fn within(s: Section, len: u64, at: u64, what: &str) -> Checked<()> {
    match s.offset.checked_add(s.size) {
        Some(end) if end <= len => Ok(()),
        _ => Err(Fault::new(
            at,
            format!(
                "the {what} (bytes {} to {}) runs past the end of the file ({len} bytes): the file is truncated or damaged",
                s.offset,
                s.offset.saturating_add(s.size)
            ),
        )),
    }
}

/// Walks `HEADER_EVENT_DESC`: `nr`, `attr_size`, then per event the attr, `nr_ids`, a
/// length-prefixed name and the ids. Every count must fit in the section.
fn event_descs(b: &[u8], base: u64, e: Endian) -> Checked<()> {
    let mut pos = 0usize;
    let cut = |pos: usize, what: &str| {
        Fault::new(
            base + pos as u64,
            format!(
                "the event descriptions ({} bytes) end inside an event's {what}",
                b.len()
            ),
        )
    };
    let u32_at = |pos: &mut usize, what: &str| -> Checked<u64> {
        let v = e.uint(b.get(*pos..).unwrap_or_default(), 4);
        let v = v.ok_or_else(|| cut(*pos, what))?;
        *pos += 4;
        Ok(v)
    };
    let nr = u32_at(&mut pos, "count")?;
    let attr_size = u32_at(&mut pos, "attr size")?;
    if !(ATTR_SIZE_MIN..=ATTR_SIZE_MAX).contains(&attr_size) {
        return Err(Fault::new(
            base + 4,
            format!("event description attr size {attr_size}"),
        ));
    }
    for _ in 0..nr {
        pos = skip(b, pos, attr_size as usize).ok_or_else(|| cut(pos, "attr"))?;
        let ids = u32_at(&mut pos, "id count")?;
        let name = u32_at(&mut pos, "name length")?;
        pos = skip(b, pos, name as usize).ok_or_else(|| cut(pos, "name"))?;
        pos = skip(b, pos, 8 * ids as usize).ok_or_else(|| cut(pos, "ids"))?;
    }
    Ok(())
}

fn skip(b: &[u8], pos: usize, n: usize) -> Option<usize> {
    let end = pos.checked_add(n)?;
    (end <= b.len()).then_some(end)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(size: u64, attr_size: u64, data: (u64, u64), features: u64) -> Vec<u8> {
        let mut h = b"PERFILE2".to_vec();
        for v in [
            size, attr_size, 104, 0, data.0, data.1, 0, 0, features, 0, 0, 0,
        ] {
            h.extend(v.to_le_bytes());
        }
        h
    }

    fn run(bytes: &[u8]) -> Result<Layout, Refusal> {
        let get = |s: Section| {
            bytes
                .get(s.offset as usize..(s.offset + s.size) as usize)
                .map(<[u8]>::to_vec)
        };
        check(&get, bytes.len() as u64)
    }

    fn fault(r: Result<Layout, Refusal>) -> Fault {
        match r {
            Err(Refusal::Damaged(f)) => f,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_minimal_file_with_one_feature() {
        let mut f = header(104, 136, (104, 0), 1 << 3);
        f.extend(120u64.to_le_bytes());
        f.extend(4u64.to_le_bytes());
        f.extend(b"host");
        let l = run(&f).unwrap();
        assert_eq!(
            l.feature(3),
            Some(Section {
                offset: 120,
                size: 4
            })
        );
        assert_eq!(l.endian, Endian::Little);
    }

    #[test]
    fn what_the_crate_would_trust_is_refused() {
        assert_eq!(
            run(&header(16, 0, (0, 0), 0)).unwrap_err(),
            Refusal::PipeMode
        );
        let f = fault(run(&header(104, 0, (104, 0), 0)));
        assert_eq!(f.offset, 16);
        let f = fault(run(&header(104, 136, (104, 1 << 40), 0)));
        assert!(f.reason.contains("data section"), "{f:?}");
        // A feature whose section is far past the end: the crate would allocate it whole.
        let mut h = header(104, 136, (104, 0), 1 << 3);
        h.extend(120u64.to_le_bytes());
        h.extend((1u64 << 40).to_le_bytes());
        assert!(fault(run(&h)).reason.contains("feature 3"));
        assert!(fault(run(b"PERFILE2\x68"))
            .reason
            .contains("ends inside the header"));
        assert!(fault(run(b"NOTPERF!")).reason.contains("magic"));
    }

    #[test]
    fn event_descriptions_must_fit() {
        let mut d = Vec::new();
        d.extend(1_000_000u32.to_le_bytes()); // far more events than the bytes hold
        d.extend(136u32.to_le_bytes());
        d.extend([0u8; 136]);
        d.extend(1u32.to_le_bytes());
        d.extend(4u32.to_le_bytes());
        d.extend(b"abc\0");
        d.extend(7u64.to_le_bytes());
        let f = event_descs(&d, 1000, Endian::Little).unwrap_err();
        assert!(f.reason.contains("attr"), "{f:?}");
        d[..4].copy_from_slice(&1u32.to_le_bytes());
        assert!(event_descs(&d, 1000, Endian::Little).is_ok());
        d[144..148].copy_from_slice(&u32::MAX.to_le_bytes()); // the id count
        assert!(event_descs(&d, 1000, Endian::Little).is_err());
    }
}
