//! Decompressing one CPU's chunks on a thread of its own, a couple of chunks ahead of the
//! merge, so that decompression overlaps with decoding. Buffers travel back to the thread to
//! be refilled, so memory stays at a few chunks per CPU.

use super::bytes::{Cursor, Fault, Parsed};
use super::codec::{Codec, Inflater};
use crate::input::release::Behind;
use std::sync::mpsc::{self, Receiver, SyncSender};
use std::thread::Scope;

/// How many decompressed chunks may wait for the reader.
const AHEAD: usize = 2;

pub struct ChunkFeed {
    chunks: Receiver<Parsed<Vec<u8>>>,
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
        let (tx, chunks) = mpsc::sync_channel(AHEAD);
        let (spent, recycled) = mpsc::sync_channel::<Vec<u8>>(AHEAD + 1);
        let at = file.offset();
        let started = std::thread::Builder::new().spawn_scoped(scope, move || {
            let mut inflater = Inflater::new(codec);
            for _ in 0..count {
                if let Some(behind) = &mut behind {
                    behind.passed_all_but(file.remaining());
                }
                let mut out = recycled.try_recv().unwrap_or_default();
                let res = inflater.block_into(&mut file, "trace data chunk", &mut out);
                let failed = res.is_err();
                // A closed channel means the reader stopped early.
                if tx.send(res.map(|()| out)).is_err() || failed {
                    return;
                }
            }
        });
        match started {
            Ok(_) => Ok(ChunkFeed { chunks, spent }),
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
        self.chunks.recv().ok()
    }
}
