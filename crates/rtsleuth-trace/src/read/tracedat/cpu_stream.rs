//! One CPU's records in time order, read page by page from the file (or from decompressed
//! chunks, one chunk in memory at a time).

use super::bytes::{Cursor, Fault, Parsed};
use super::chunk_feed::ChunkFeed;
use super::codec::Codec;
use super::options::CpuData;
use crate::input::release::Behind;
use crate::ring_buffer::{Missed, Page, PageLayout, RecordCursor};
use std::ops::{Deref, Range};
use std::sync::Arc;

/// The record data of one page: in a mapped file, or in a decompressed chunk shared with the
/// batches of records still being decoded from it (from byte `at` on).
#[derive(Clone)]
pub enum Buf<'f> {
    File(&'f [u8]),
    Chunk { chunk: Arc<Vec<u8>>, at: usize },
}

impl Deref for Buf<'_> {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            Buf::File(b) => b,
            Buf::Chunk { chunk, at } => chunk.get(*at..).unwrap_or_default(),
        }
    }
}

/// Where the pages come from.
enum Source<'f> {
    /// Uncompressed: the CPU's region of the file, whose pages behind the reader are released
    /// when it is a mapping of the file.
    Raw {
        region: &'f [u8],
        behind: Option<Behind<'f>>,
    },
    /// Compressed chunks, decompressed ahead by a feed; `buf` holds the current one.
    Chunks { feed: ChunkFeed, buf: Arc<Vec<u8>> },
}

impl<'f> Source<'f> {
    fn raw(region: &'f [u8], behind: Option<Behind<'f>>) -> Source<'f> {
        Source::Raw { region, behind }
    }

    /// The pages at hand: the CPU's whole region, or the current chunk.
    fn bytes(&self) -> &[u8] {
        match self {
            Source::Raw { region, .. } => region,
            Source::Chunks { buf, .. } => buf,
        }
    }

    /// Releases the mapped pages well before `offset`: the records of batches still being
    /// decoded lie within [`KEEP`] of it, and even a page released too early only reads again
    /// from the page cache.
    fn release_before(&mut self, offset: usize) {
        if let Source::Raw {
            behind: Some(behind),
            ..
        } = self
        {
            behind.passed(offset.saturating_sub(KEEP));
        }
    }
}

/// How far behind the reader mapped pages are released, and in steps of how much.
const KEEP: usize = 2 << 20;
const RELEASE_STEP: usize = 2 << 20;

/// A record ready to be handed out: its time and where its bytes are in its page's record
/// data (a page is far smaller than 4 GiB).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pending {
    pub ts: u64,
    pub start: u32,
    pub len: u32,
}

pub struct CpuStream<'f> {
    pub cpu: u32,
    source: Source<'f>,
    layout: PageLayout,
    /// File offset of the region, for messages.
    base: u64,
    /// Counts the pages this stream has entered, so that a batch can tell a new page from
    /// the one it already holds.
    pub generation: u64,
    /// Start of the next page in the current buffer.
    next_page: usize,
    /// The current page's record data in the buffer, and the position in it.
    page: Option<(Range<usize>, RecordCursor)>,
    /// A page with the "events lost before me" flag was entered and its loss not yet reported.
    pub lost: Option<Missed>,
    pub faults: Vec<Fault>,
}

impl<'f> CpuStream<'f> {
    /// The stream of `data`'s records in `file`; `mapped` says that `file` maps the file, so
    /// that pages the stream has passed can be released.
    pub fn new<'scope>(
        scope: &'scope std::thread::Scope<'scope, '_>,
        (file, mapped): (&'f [u8], bool),
        data: CpuData,
        codec: Codec,
        layout: PageLayout,
        e: crate::ring_buffer::Endian,
    ) -> Parsed<CpuStream<'f>>
    where
        'f: 'scope,
    {
        let start = usize::try_from(data.offset).unwrap_or(usize::MAX);
        // The size trace-cmd records for compressed data leaves out the chunk count before it.
        let count_word = if codec == Codec::None || data.size == 0 {
            0
        } else {
            4
        };
        let end = start
            .saturating_add(usize::try_from(data.size).unwrap_or(usize::MAX))
            .saturating_add(count_word);
        // A file cut inside a CPU's data still has that CPU's pages before the cut.
        let cut = (end > file.len()).then(|| {
            Fault::new(
                data.offset,
                format!(
                    "CPU {}'s data ({} bytes) runs past the end of the file ({} bytes): the file is truncated; its records before the end were read",
                    data.cpu,
                    data.size,
                    file.len()
                ),
            )
        });
        let region = &file[start.min(file.len())..end.min(file.len())];
        // SAFETY: the caller says `file` is a mapping of the file when `mapped` is set.
        let behind = mapped.then(|| unsafe { Behind::new(region, RELEASE_STEP) });
        let source = match codec {
            Codec::None => Source::raw(region, behind),
            _ if region.is_empty() => Source::raw(region, behind),
            _ => {
                let mut c = Cursor::new(region, data.offset, e);
                let count = c.u32("chunk count")?;
                Source::Chunks {
                    feed: ChunkFeed::spawn(scope, codec, c, count, behind)?,
                    buf: Arc::default(),
                }
            }
        };
        Ok(CpuStream {
            cpu: data.cpu,
            source,
            layout,
            base: data.offset,
            generation: 0,
            next_page: 0,
            page: None,
            lost: None,
            faults: cut.into_iter().collect(),
        })
    }

    /// The record data of the current page, which pending records index, to be held while
    /// they are decoded.
    pub fn shared_buf(&self) -> Buf<'f> {
        let data = self.page.as_ref().map_or(0..0, |(range, _)| range.clone());
        match &self.source {
            Source::Raw { region, .. } => Buf::File(region.get(data).unwrap_or_default()),
            Source::Chunks { buf, .. } => Buf::Chunk {
                chunk: Arc::clone(buf),
                at: data.start,
            },
        }
    }

    /// The next record, or `None` when the CPU has no more. Corrupt pages are recorded in
    /// `faults` and skipped: one bad page should not hide the rest of the trace. The cursor is
    /// advanced where it lies: copied out and back, it stalled the merge on store forwarding.
    #[inline]
    pub fn next(&mut self) -> Option<Pending> {
        loop {
            if let Some((range, cursor)) = &mut self.page {
                let data = &self.source.bytes()[range.clone()];
                match cursor.next(data, self.layout.endian) {
                    Ok(Some(r)) => {
                        let start = r.data.as_ptr() as usize - data.as_ptr() as usize;
                        return Some(Pending {
                            ts: r.ts,
                            start: start as u32,
                            len: r.data.len() as u32,
                        });
                    }
                    Ok(None) => self.page = None,
                    Err(e) => {
                        let at = range.start + e.offset;
                        self.page = None;
                        self.fault(at, e.reason);
                    }
                }
            }
            self.enter_next_page()?;
        }
    }

    /// Moves to the next page that parses, keeping the range of its record data; `None` when
    /// there is none. Kept out of line, so that [`CpuStream::next`], which runs for every
    /// record, stays small enough to be inlined into the merge.
    #[inline(never)]
    fn enter_next_page(&mut self) -> Option<()> {
        loop {
            let size = self.layout.page_size;
            if self.next_page + self.layout.data_offset > self.source.bytes().len()
                && !self.refill()
            {
                return None;
            }
            let start = self.next_page;
            let end = (start + size).min(self.source.bytes().len());
            self.next_page = start + size;
            self.source.release_before(start);
            crate::progress::add_bytes((end - start) as u64);
            let parsed = Page::parse(&self.source.bytes()[start..end], &self.layout)
                .map(|page| (page.missed, page.data().len(), RecordCursor::new(&page)));
            match parsed {
                Ok((missed, len, cursor)) => {
                    if missed != Missed::None {
                        self.lost = Some(missed);
                    }
                    let data = start + self.layout.data_offset;
                    self.page = Some((data..data + len, cursor));
                    self.generation += 1;
                    return Some(());
                }
                Err(e) => self.fault(start + e.offset, e.reason),
            }
        }
    }

    /// Decompresses the next chunk; false when there is none left.
    fn refill(&mut self) -> bool {
        let Source::Chunks { feed, buf } = &mut self.source else {
            return false;
        };
        // The spent buffer goes back to the feed unless a batch still holds it.
        let spent = Arc::try_unwrap(std::mem::take(buf)).unwrap_or_default();
        match feed.next(spent) {
            Some(Ok(b)) => {
                *buf = Arc::new(b);
                self.next_page = 0;
                true
            }
            Some(Err(f)) => {
                let reason = format!(
                    "CPU {}: {}; its records after this chunk were not read",
                    self.cpu, f.reason
                );
                self.faults.push(Fault::new(f.offset, reason));
                false
            }
            None => false,
        }
    }

    #[cold]
    fn fault(&mut self, at: usize, reason: String) {
        let offset = match self.source {
            Source::Raw { .. } => self.base + at as u64,
            // Inside decompressed chunks only the CPU's data offset is known.
            Source::Chunks { .. } => self.base,
        };
        self.faults
            .push(Fault::new(offset, format!("CPU {}: {reason}", self.cpu)));
    }
}
