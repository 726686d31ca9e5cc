//! Parsing blocks in parallel while consuming them in file order.
//!
//! Lines of a text trace can be classified independently, but what is built from them (call
//! stacks, intervals) depends on their order. So each block of a batch is parsed as its own
//! task on the thread pool, and the calling thread hands finished blocks to a sequential
//! consumer in file order, running alongside the parsers instead of taking turns with them.

use super::chunks::Chunk;
use crate::error::Result;
use std::sync::mpsc::{channel, Receiver, TryRecvError};

/// How many blocks are in flight at once: enough to keep every thread busy, few enough to
/// bound memory.
pub fn window() -> usize {
    rayon::current_num_threads().max(1) * 8
}

/// Parses every block of `batch` with `parse` on the thread pool and hands the results to
/// `absorb` in file order. Stops at the first error `absorb` returns.
pub fn parse_in_order<'a, T: Send>(
    batch: &'a [Chunk],
    parse: impl Fn(&'a Chunk) -> T + Sync,
    mut absorb: impl FnMut(&'a Chunk, T) -> Result<()>,
) -> Result<()> {
    let (done, finished) = channel();
    let parse = &parse;
    rayon::in_place_scope(|scope| {
        for (i, chunk) in batch.iter().enumerate() {
            let done = done.clone();
            scope.spawn(move |_| {
                // The receiver is gone only when an earlier block failed; nothing to do then.
                let _ = done.send((i, parse(chunk)));
            });
        }
        drop(done);
        let mut waiting = std::collections::BTreeMap::new();
        let mut next = 0;
        while let Some((i, parsed)) = next_finished(&finished) {
            waiting.insert(i, parsed);
            while let Some(parsed) = waiting.remove(&next) {
                absorb(&batch[next], parsed)?;
                next += 1;
            }
        }
        Ok(())
    })
}

/// The next finished block, `None` when all are done. On a thread of the pool itself (a caller
/// inside `ThreadPool::install`) waiting would starve the parse tasks of that thread, so it
/// runs pending tasks while it waits; any other thread simply blocks.
fn next_finished<T>(finished: &Receiver<T>) -> Option<T> {
    loop {
        match finished.try_recv() {
            Ok(x) => return Some(x),
            Err(TryRecvError::Disconnected) => return None,
            Err(TryRecvError::Empty) => {}
        }
        match rayon::yield_now() {
            None => return finished.recv().ok(),
            Some(rayon::Yield::Executed) => {}
            Some(rayon::Yield::Idle) => std::thread::yield_now(),
        }
    }
}
