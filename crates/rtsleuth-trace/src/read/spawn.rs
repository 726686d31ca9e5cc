//! Starting a reader's helper thread with a value it will own, without losing the value when
//! no thread can start (a process at its thread limit): the reader then does the work itself.

use std::sync::mpsc::sync_channel;
use std::thread::{Builder, Scope, ScopedJoinHandle};

/// Runs `work(value)` on a new scoped thread; `Err(value)` when the thread cannot be started.
/// The value goes to the thread only once it runs, so that it stays here if not.
pub fn spawn_with<'scope, V, T>(
    scope: &'scope Scope<'scope, '_>,
    value: V,
    work: impl FnOnce(V) -> T + Send + 'scope,
) -> Result<ScopedJoinHandle<'scope, T>, V>
where
    V: Send + 'scope,
    T: Send + 'scope,
{
    let (give, take) = sync_channel::<V>(1);
    let started = Builder::new().spawn_scoped(scope, move || {
        work(take.recv().expect("sent once the thread has started"))
    });
    match started {
        Ok(thread) => {
            // The thread is waiting for it; should it be gone, joining it says why.
            let _ = give.send(value);
            Ok(thread)
        }
        Err(_) => Err(value),
    }
}

#[cfg(test)]
mod tests {
    use super::spawn_with;

    #[test]
    fn the_thread_gets_the_value() {
        std::thread::scope(|scope| {
            let thread = spawn_with(scope, vec![1, 2, 3], |v| v.iter().sum::<i32>());
            assert_eq!(thread.ok().map(|t| t.join().unwrap()), Some(6));
        });
    }
}
