//! Reading blocks ahead on a background thread.
//!
//! Copying bytes out of the page cache (or decompressing them) is work the parser should not
//! wait for: a producer thread keeps a bounded queue of blocks filled while the parser works on
//! the previous ones. The queue bounds memory; used buffers travel back to be refilled.

use super::chunks::{Chunk, ChunkReader};
use crate::error::Result;
use std::sync::mpsc::{channel, sync_channel, Receiver, Sender};
use std::thread;

pub struct Prefetch {
    blocks: Receiver<Result<Option<Chunk>>>,
    spent: Sender<Chunk>,
}

impl Prefetch {
    /// Starts reading `reader` up to `depth` blocks ahead.
    pub fn spawn(mut reader: ChunkReader, depth: usize) -> Prefetch {
        let (tx, blocks) = sync_channel(depth.max(1));
        let (spent, returned) = channel::<Chunk>();
        thread::Builder::new()
            .name("rtsleuth-read".into())
            .spawn(move || loop {
                while let Ok(c) = returned.try_recv() {
                    reader.recycle(c);
                }
                let next = reader.next_chunk();
                let last = !matches!(next, Ok(Some(_)));
                // A closed queue means the parser stopped early (an error); stop reading.
                if tx.send(next).is_err() || last {
                    break;
                }
            })
            .expect("starting the reader thread");
        Prefetch { blocks, spent }
    }

    /// The next block, `None` at the end of the input.
    pub fn next_chunk(&mut self) -> Result<Option<Chunk>> {
        // After the last block the producer is gone, and the end stays the end.
        self.blocks.recv().unwrap_or(Ok(None))
    }

    /// Where parsed blocks' buffers go back for reuse, apart from where blocks come from.
    pub fn recycler(&self) -> Recycler {
        Recycler(self.spent.clone())
    }
}

/// Hands parsed blocks' buffers back to a [`Prefetch`]'s reader.
pub struct Recycler(Sender<Chunk>);

impl Recycler {
    pub fn recycle(&self, chunk: Chunk) {
        // The producer may have finished; the buffer is then simply freed.
        let _ = self.0.send(chunk);
    }
}
