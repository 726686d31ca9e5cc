//! Walking the records of one ring-buffer page.

use super::{Endian, PageLayout};

/// The commit word's flag: the writer overwrote or dropped events before this page.
const MISSED_EVENTS: u64 = 1 << 31;
/// With [`MISSED_EVENTS`]: the number dropped is stored as a long after the page's data.
const MISSED_STORED: u64 = 1 << 30;
/// The commit word's low bits: bytes of record data on the page.
const COMMIT_MASK: u64 = (1 << 27) - 1;

const TYPE_PADDING: u32 = 29;
const TYPE_TIME_EXTEND: u32 = 30;
const TYPE_TIME_STAMP: u32 = 31;
/// Time deltas are 27 bits; extends carry the bits above.
const TS_SHIFT: u32 = 27;
/// Absolute time stamps carry 59 bits; the top bits come from the running clock.
const ABS_TS_BITS: u32 = 59;

/// What the page says about events lost before it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Missed {
    None,
    Unknown,
    Count(u64),
}

impl Missed {
    /// How many events were lost, when the page says.
    pub fn count(self) -> Option<u64> {
        match self {
            Missed::Count(n) => Some(n),
            _ => None,
        }
    }
}

/// A page that contradicts its own header (commit past the page end, a record running past
/// the data). `offset` is relative to the page start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PageError {
    pub offset: usize,
    pub reason: String,
}

/// One parsed page header over its bytes.
#[derive(Debug, Clone, Copy)]
pub struct Page<'a> {
    /// The page's base time; the first record's delta is relative to it.
    pub timestamp: u64,
    pub missed: Missed,
    data: &'a [u8],
    endian: Endian,
}

/// One event record: its time and its payload (starting with the common fields).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Record<'a> {
    pub ts: u64,
    pub data: &'a [u8],
}

impl<'a> Page<'a> {
    pub fn parse(bytes: &'a [u8], layout: &PageLayout) -> Result<Page<'a>, PageError> {
        let e = layout.endian;
        let bad = |offset, reason: String| PageError { offset, reason };
        let timestamp = e
            .uint(bytes.get(layout.timestamp_offset..).unwrap_or(&[]), 8)
            .ok_or_else(|| bad(0, format!("page of {} bytes has no header", bytes.len())))?;
        let commit = e
            .uint(
                bytes.get(layout.commit_offset..).unwrap_or(&[]),
                layout.commit_size,
            )
            .ok_or_else(|| bad(layout.commit_offset, "page header is cut".into()))?;
        let len = (commit & COMMIT_MASK) as usize;
        let data_end = layout.data_offset + len;
        if data_end > bytes.len() {
            return Err(bad(
                layout.commit_offset,
                format!(
                    "commit says {len} bytes of data but the page holds {}",
                    bytes.len().saturating_sub(layout.data_offset)
                ),
            ));
        }
        let missed = if commit & MISSED_EVENTS == 0 {
            Missed::None
        } else if commit & MISSED_STORED != 0 {
            e.uint(&bytes[data_end..], layout.commit_size)
                .map_or(Missed::Unknown, Missed::Count)
        } else {
            Missed::Unknown
        };
        Ok(Page {
            timestamp,
            missed,
            data: &bytes[layout.data_offset..data_end],
            endian: e,
        })
    }

    /// Bytes of record data on the page.
    pub fn len(&self) -> usize {
        self.data.len()
    }

    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    /// The record data (after the header, up to the commit).
    pub fn data(&self) -> &'a [u8] {
        self.data
    }

    pub fn records(self) -> impl Iterator<Item = Result<Record<'a>, PageError>> {
        let mut cursor = RecordCursor::new(&self);
        std::iter::from_fn(move || cursor.next(self.data, self.endian).transpose())
    }
}

/// The position within a page's data, kept apart from the page so that a reader can hold it
/// while the page's bytes belong to someone else (a decompression buffer, a memory map).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecordCursor {
    pos: usize,
    ts: u64,
}

impl RecordCursor {
    pub fn new(page: &Page<'_>) -> RecordCursor {
        RecordCursor {
            pos: 0,
            ts: page.timestamp,
        }
    }

    /// The next data record in `data` (the page's [`Page::data`]), skipping padding and
    /// applying time extends; `Ok(None)` at the end of the page. After an error the rest of
    /// the page is skipped. Error offsets are relative to `data`.
    pub fn next<'a>(&mut self, data: &'a [u8], e: Endian) -> Result<Option<Record<'a>>, PageError> {
        let r = self.step(data, e);
        if r.is_err() {
            self.pos = data.len();
        }
        r
    }

    fn step<'a>(&mut self, data: &'a [u8], e: Endian) -> Result<Option<Record<'a>>, PageError> {
        loop {
            let Some(header) = word(data, self.pos, e) else {
                return Ok(None);
            };
            let (type_len, delta) = match e {
                Endian::Little => (header & 0x1f, header >> 5),
                Endian::Big => (header >> TS_SHIFT, header & ((1 << TS_SHIFT) - 1)),
            };
            let at = self.pos;
            let array0 = || {
                word(data, at + 4, e).ok_or_else(|| PageError {
                    offset: at,
                    reason: format!("record header of type {type_len} is cut by the page end"),
                })
            };
            match type_len {
                TYPE_PADDING => {
                    if delta == 0 {
                        // The rest of the page is unused.
                        self.pos = data.len();
                        return Ok(None);
                    }
                    self.pos = skip(at, 4 + array0()? as usize, data.len())?;
                }
                TYPE_TIME_EXTEND => {
                    self.ts = self
                        .ts
                        .wrapping_add((u64::from(array0()?) << TS_SHIFT) + u64::from(delta));
                    self.pos = skip(at, 8, data.len())?;
                }
                TYPE_TIME_STAMP => {
                    let abs = (u64::from(array0()?) << TS_SHIFT) | u64::from(delta);
                    let high = self.ts & !((1u64 << ABS_TS_BITS) - 1);
                    self.ts = high | abs;
                    self.pos = skip(at, 8, data.len())?;
                }
                _ => {
                    let (start, len) = if type_len == 0 {
                        // Long records store their length (plus these 4 bytes) first.
                        let n = array0()? as usize;
                        (at + 8, (n.saturating_sub(4) + 3) & !3)
                    } else {
                        (at + 4, type_len as usize * 4)
                    };
                    let end = skip(start, len, data.len())?;
                    self.ts = self.ts.wrapping_add(u64::from(delta));
                    self.pos = end;
                    return Ok(Some(Record {
                        ts: self.ts,
                        data: &data[start..end],
                    }));
                }
            }
        }
    }
}

fn word(data: &[u8], at: usize, e: Endian) -> Option<u32> {
    Some(e.u32(data.get(at..at.checked_add(4)?)?.try_into().ok()?))
}

fn skip(at: usize, len: usize, end: usize) -> Result<usize, PageError> {
    at.checked_add(len)
        .filter(|&n| n <= end)
        .ok_or_else(|| PageError {
            offset: at,
            reason: format!("record of {len} bytes runs past the page's {end} bytes of data"),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Builds a little-endian page: records are (type_len, delta, payload words).
    fn page(ts: u64, commit_flags: u64, words: &[u32]) -> Vec<u8> {
        let mut b = ts.to_le_bytes().to_vec();
        let len = words.len() as u64 * 4;
        b.extend((len | commit_flags).to_le_bytes());
        for w in words {
            b.extend(w.to_le_bytes());
        }
        b.extend(7u64.to_le_bytes()); // the stored missed count, if flagged
        b.resize(4096, 0);
        b
    }

    fn hdr(type_len: u32, delta: u32) -> u32 {
        type_len | (delta << 5)
    }

    const LAYOUT: PageLayout = PageLayout {
        endian: Endian::Little,
        page_size: 4096,
        timestamp_offset: 0,
        commit_offset: 8,
        commit_size: 8,
        data_offset: 16,
    };

    #[test]
    fn deltas_extends_padding_and_long_records() {
        let words = [
            hdr(2, 100),
            0xaaaa,
            0xbbbb, // 8-byte record at +100
            hdr(TYPE_TIME_EXTEND, 5),
            1,                    // +(1<<27)+5
            hdr(TYPE_PADDING, 1), // discarded record: its length word counts itself
            8,
            0xdead,
            hdr(0, 10), // long record: length word, then 12 bytes
            16,
            1,
            2,
            3,
            hdr(TYPE_TIME_STAMP, 0), // absolute: 2<<27
            2,
            hdr(1, 3),
            0xcccc,
        ];
        let bytes = page(1_000, 0, &words);
        let p = Page::parse(&bytes, &LAYOUT).unwrap();
        assert_eq!(p.missed, Missed::None);
        let recs: Vec<_> = p.records().map(Result::unwrap).collect();
        let ts: Vec<u64> = recs.iter().map(|r| r.ts).collect();
        let t1 = 1_100;
        let t2 = t1 + (1 << 27) + 5 + 10;
        assert_eq!(ts, vec![t1, t2, (2 << 27) + 3]);
        assert_eq!(recs[0].data.len(), 8);
        assert_eq!(recs[1].data.len(), 12);
        assert_eq!(&recs[2].data[..4], &0xccccu32.to_le_bytes());
    }

    #[test]
    fn missed_event_flags() {
        let p = page(0, MISSED_EVENTS | MISSED_STORED, &[hdr(1, 1), 0]);
        assert_eq!(Page::parse(&p, &LAYOUT).unwrap().missed, Missed::Count(7));
        let p = page(0, MISSED_EVENTS, &[hdr(1, 1), 0]);
        assert_eq!(Page::parse(&p, &LAYOUT).unwrap().missed, Missed::Unknown);
    }

    #[test]
    fn a_null_padding_ends_the_page() {
        let p = page(0, 0, &[hdr(1, 1), 9, hdr(TYPE_PADDING, 0), 0, hdr(1, 1), 9]);
        assert_eq!(Page::parse(&p, &LAYOUT).unwrap().records().count(), 1);
    }

    #[test]
    fn corrupt_pages_are_errors_not_panics() {
        let mut p = page(0, 0, &[]);
        p[8..16].copy_from_slice(&5000u64.to_le_bytes());
        assert!(Page::parse(&p, &LAYOUT).is_err());
        assert!(Page::parse(&p[..10], &LAYOUT).is_err());
        // A long record claiming more bytes than the page holds.
        let p = page(0, 0, &[hdr(0, 1), 4000]);
        let r: Vec<_> = Page::parse(&p, &LAYOUT).unwrap().records().collect();
        assert_eq!(r.len(), 1);
        assert!(r[0].is_err());
        // A type-len record cut by the commit.
        let p = page(0, 0, &[hdr(5, 1)]);
        assert!(Page::parse(&p, &LAYOUT)
            .unwrap()
            .records()
            .next()
            .unwrap()
            .is_err());
    }

    #[test]
    fn big_endian_headers() {
        let mut b = 50u64.to_be_bytes().to_vec();
        b.extend(8u64.to_be_bytes());
        b.extend(((1u32 << TS_SHIFT) | 7).to_be_bytes());
        b.extend(0x01020304u32.to_be_bytes());
        b.resize(64, 0);
        let l = PageLayout {
            endian: Endian::Big,
            ..LAYOUT
        };
        let p = Page::parse(&b, &l).unwrap();
        let r: Vec<_> = p.records().map(Result::unwrap).collect();
        assert_eq!(r.len(), 1);
        assert_eq!(r[0].ts, 57);
    }
}
