//! Decompressing one CPU's chunks on a thread of its own, a group of chunks ahead of the
//! merge, so that decompression overlaps with decoding. Buffers travel back to the thread to
//! be refilled, so memory stays at a few groups per CPU.

use super::bytes::{Cursor, Fault, Parsed};
use super::codec::{Codec, Inflater};
use crate::input::release::Behind;
use std::sync::mpsc::{self, Receiver, SyncSender};
use std::thread::Scope;

/// How many groups of decompressed chunks may wait for the reader.
const AHEAD: usize = 1;

/// Chunks are handed over in groups of about this many decompressed bytes. Each hand-over
/// wakes the decompressing thread, which is always ahead: one chunk (trace-cmd's are about
/// 40 KB) at a time, the wake-ups and the switches they cause cost the reader of a 2-core
/// machine more than the decompression did.
const GROUP_BYTES: usize = 128 << 10;

/// How many spent buffers may wait to be refilled: about the chunks of the groups in flight.
const SPENT: usize = 8;

type Group = Vec<Parsed<Vec<u8>>>;

pub struct ChunkFeed {
    groups: Receiver<Group>,
    /// The chunks of the group being read.
    group: std::vec::IntoIter<Parsed<Vec<u8>>>,
    spent: SyncSender<Vec<u8>>,
}

impl ChunkFeed {
    /// Starts decompressing the `count` chunks at `file`. A thread that cannot be started (a
    /// damaged CPU table can list thousands of CPUs) is a fault of this CPU's data, not a panic.
    /// `behind` releases the pages of the region `file` reads, when that is a mapping of the
    /// file, as the chunks are read.
    pub fn spawn<'scope, 'f: 'scope>(
        scope: &'scope Scope<'scope, '_>,
        codec: Codec,
        mut file: Cursor<'f>,
        count: u32,
        mut behind: Option<Behind<'f>>,
    ) -> Parsed<ChunkFeed> {
        let (tx, groups) = mpsc::sync_channel::<Group>(AHEAD);
        let (spent, recycled) = mpsc::sync_channel::<Vec<u8>>(SPENT);
        let at = file.offset();
        let started = std::thread::Builder::new().spawn_scoped(scope, move || {
            let mut inflater = Inflater::new(codec);
            let (mut group, mut bytes) = (Group::new(), 0);
            for left in (0..count).rev() {
                if let Some(behind) = &mut behind {
                    behind.passed_all_but(file.remaining());
                }
                let mut out = recycled.try_recv().unwrap_or_default();
                let res = inflater.block_into(&mut file, "trace data chunk", &mut out);
                let failed = res.is_err();
                bytes += out.len();
                group.push(res.map(|()| out));
                if failed || left == 0 || bytes >= GROUP_BYTES {
                    // A closed channel means the reader stopped early.
                    if tx.send(std::mem::take(&mut group)).is_err() || failed {
                        return;
                    }
                    bytes = 0;
                }
            }
        });
        match started {
            Ok(_) => Ok(ChunkFeed {
                groups,
                group: Group::new().into_iter(),
                spent,
            }),
            Err(e) => Err(Fault::new(
                at,
                format!("no thread could be started to decompress this CPU's data: {e}"),
            )),
        }
    }

    /// The next chunk, handing back the buffer of the previous one; `None` after the last.
    pub fn next(&mut self, spent: Vec<u8>) -> Option<Parsed<Vec<u8>>> {
        if spent.capacity() > 0 {
            let _ = self.spent.try_send(spent);
        }
        if let Some(chunk) = self.group.next() {
            return Some(chunk);
        }
        self.group = self.groups.recv().ok()?.into_iter();
        self.group.next()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::read::tracedat::bytes::Endian;

    /// Framed zstd blocks (`u32` packed size, `u32` size, data), block `k` being `sizes[k]`
    /// bytes of `k`; `damaged` has its data overwritten.
    fn framed(sizes: &[usize], damaged: Option<usize>) -> Vec<u8> {
        let mut out = Vec::new();
        for (k, &n) in sizes.iter().enumerate() {
            let mut packed = zstd::encode_all(&vec![k as u8; n][..], 3).unwrap();
            if damaged == Some(k) {
                packed.fill(0x5a);
            }
            out.extend((packed.len() as u32).to_le_bytes());
            out.extend((n as u32).to_le_bytes());
            out.extend(packed);
        }
        out
    }

    /// Every chunk the feed gives, until it ends.
    fn feed_all(file: &[u8], count: u32) -> Vec<Parsed<Vec<u8>>> {
        std::thread::scope(|s| {
            let cursor = Cursor::new(file, 0, Endian::Little);
            let mut feed = ChunkFeed::spawn(s, Codec::Zstd, cursor, count, None).unwrap();
            let (mut got, mut spent) = (Vec::new(), Vec::new());
            while let Some(chunk) = feed.next(spent) {
                spent = chunk.clone().unwrap_or_default();
                got.push(chunk);
            }
            got
        })
    }

    /// Chunks of many sizes, so that groups close after one chunk or several, come out whole
    /// and in order; a damaged one ends the feed after the chunks before it.
    #[test]
    fn chunks_come_in_order_up_to_a_damaged_one() {
        let sizes: Vec<usize> = (0..40).map(|k| 1_000 + k * 7_919 % 90_000).collect();
        let got = feed_all(&framed(&sizes, None), 40);
        let expected: Vec<Parsed<Vec<u8>>> = (0..40).map(|k| Ok(vec![k as u8; sizes[k]])).collect();
        assert_eq!(got, expected);
        let got = feed_all(&framed(&sizes, Some(25)), 40);
        assert_eq!(got.len(), 26);
        assert_eq!(got[..25], expected[..25]);
        assert!(
            got[25]
                .as_ref()
                .is_err_and(|f| f.reason.contains("corrupt")),
            "{:?}",
            got[25]
        );
        assert!(feed_all(&[], 0).is_empty());
    }
}
