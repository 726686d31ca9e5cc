//! Parsing blocks in parallel while consuming them in file order.
//!
//! Lines of a text trace can be classified independently, but what is built from them (call
//! stacks, intervals) depends on their order. So each block is parsed as its own task on the
//! thread pool, and the calling thread hands finished blocks to a sequential consumer in file
//! order, running alongside the parsers instead of taking turns with them.
//!
//! The window slides: a new block is started each time one is consumed. Parsing a fixed batch
//! and consuming it before starting the next left the parsers idle at each batch's end and the
//! consumer idle at each start; on two cores a quarter of the time went that way.
//!
//! The consumer runs on a thread of the pool ([`on_pool`]) and parses while it waits. The
//! blocks are queued first in, first out, so it takes the oldest block still queued: the one it
//! needs next, which it then reads from its own core's cache.

use super::chunks::Chunk;
use crate::error::Result;
use std::collections::BTreeMap;
use std::panic::{self, AssertUnwindSafe};
use std::sync::mpsc::{channel, Receiver, TryRecvError};

/// How many blocks are in flight at once: enough to keep every thread busy, few enough to
/// bound memory.
pub fn window() -> usize {
    rayon::current_num_threads().max(1) * 8
}

/// Runs `consume`, a caller of [`parse_in_order`], on a thread of rayon's pool (the closure
/// given to `rayon::scope` runs there), so that waiting for a block it parses one instead of
/// being one thread more than there are cores, taking turns with the parsers: on two cores,
/// text `explain` 118 → 110 ms and `latency` 89 → 84 ms. Readers that decode on threads of
/// their own gain nothing from it (Perfetto `latency` lost 2 %, 283 → 288 ms), so only the
/// text reader uses it.
pub fn on_pool<R: Send>(consume: impl FnOnce() -> R + Send) -> R {
    rayon::scope(|_| consume())
}

/// A parse task's result, or its panic to be raised again on the consuming thread.
type Outcome<R> = std::thread::Result<R>;

/// Parses the blocks `next` gives (until `None`) with `parse` on the thread pool, at most
/// [`window`] at a time, and hands the results to `absorb` in the order `next` gave them.
/// Stops at the first error `absorb` returns.
pub fn parse_in_order<R: Send>(
    mut next: impl FnMut() -> Option<Chunk>,
    parse: impl Fn(Chunk) -> R + Sync,
    mut absorb: impl FnMut(R) -> Result<()>,
) -> Result<()> {
    let window = window() as u64;
    let (done, finished) = channel::<(u64, Outcome<R>)>();
    let parse = &parse;
    rayon::in_place_scope_fifo(|scope| {
        let (mut started, mut absorbed, mut more) = (0u64, 0u64, true);
        let mut waiting = BTreeMap::new();
        loop {
            while more && started - absorbed < window {
                let Some(chunk) = next() else {
                    more = false;
                    break;
                };
                let (done, i) = (done.clone(), started);
                scope.spawn_fifo(move |_| {
                    let parsed = panic::catch_unwind(AssertUnwindSafe(|| parse(chunk)));
                    // After an earlier block failed no one reads this; it goes with the channel.
                    let _ = done.send((i, parsed));
                });
                started += 1;
            }
            if absorbed == started {
                return Ok(());
            }
            let (i, parsed) = next_finished(&finished);
            waiting.insert(i, parsed);
            while let Some(parsed) = waiting.remove(&absorbed) {
                absorb(parsed.unwrap_or_else(|p| panic::resume_unwind(p)))?;
                absorbed += 1;
            }
        }
    })
}

/// The next finished block. On a thread of the pool itself ([`on_pool`]) waiting would starve
/// the parse tasks of that thread, so it runs pending tasks while it waits; any other thread
/// simply blocks.
fn next_finished<T>(finished: &Receiver<T>) -> T {
    // The sender is held by the caller, so the channel never closes while a block is out.
    let closed = "the sender outlives the wait";
    loop {
        match finished.try_recv() {
            Ok(x) => return x,
            Err(TryRecvError::Disconnected) => unreachable!("{closed}"),
            Err(TryRecvError::Empty) => {}
        }
        match rayon::yield_now() {
            None => return finished.recv().expect(closed),
            Some(rayon::Yield::Executed) => {}
            Some(rayon::Yield::Idle) => std::thread::yield_now(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::chunks::Bytes;

    fn chunk(i: u64) -> Chunk {
        Chunk {
            data: Bytes::Owned(vec![i as u8]),
            offset: i,
            damage: None,
        }
    }

    /// Blocks finish out of order on the pool but are absorbed in the order they came, and
    /// never more than a window of them is out at once.
    #[test]
    fn absorbs_in_order_within_the_window() {
        let n = window() as u64 * 5 + 3;
        let (mut given, mut seen) = (0u64, Vec::new());
        let out = std::sync::atomic::AtomicU64::new(0);
        let result = parse_in_order(
            || (given < n).then(|| chunk(post_inc(&mut given))),
            |c| {
                let now = out.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
                assert!(now <= window() as u64, "{now} blocks out at once");
                // Later blocks finish first now and then.
                std::thread::sleep(std::time::Duration::from_micros(50 * (7 - c.offset % 7)));
                c.offset
            },
            |offset| {
                out.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
                seen.push(offset);
                Ok(())
            },
        );
        assert!(result.is_ok());
        assert_eq!(seen, (0..n).collect::<Vec<_>>());
    }

    /// An error from the consumer stops the reading: no block after it is asked for.
    #[test]
    fn an_error_stops_the_input() {
        let mut given = 0u64;
        let result = parse_in_order(
            || Some(chunk(post_inc(&mut given))),
            |c| c.offset,
            |offset| match offset {
                3 => Err(crate::error::Error::Empty { path: "x".into() }),
                _ => Ok(()),
            },
        );
        assert!(result.is_err());
        assert!(given <= 4 + window() as u64, "{given} blocks read");
    }

    /// A parse that panics raises its panic on the consuming thread instead of hanging it.
    #[test]
    fn a_panic_in_a_parse_reaches_the_caller() {
        let mut given = 0u64;
        let caught = panic::catch_unwind(AssertUnwindSafe(|| {
            parse_in_order(
                || (given < 10).then(|| chunk(post_inc(&mut given))),
                |c| assert_ne!(c.offset, 5, "block 5"),
                |_| Ok(()),
            )
        }));
        assert!(caught.is_err());
    }

    fn post_inc(n: &mut u64) -> u64 {
        *n += 1;
        *n - 1
    }
}
