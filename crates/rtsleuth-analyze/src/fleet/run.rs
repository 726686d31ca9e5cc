//! Reading the traces of a set a few at a time, each to its own outcome, handed on in order.

use super::identity::{content_hash, Identity};
use rtsleuth_trace::error::{Error, Result};
use rtsleuth_trace::input::Input;
use rtsleuth_trace::read::TraceInfo;
use std::collections::BTreeMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Condvar, Mutex};

/// A trace that was read, with what the command made of it.
#[derive(Debug)]
pub struct Traced<T> {
    pub identity: Identity,
    pub result: T,
}

/// What became of one file of a set.
#[derive(Debug)]
pub enum Outcome<T> {
    Read(Traced<T>),
    /// Its content is no trace: detection refused it, or it is text without one event.
    NotATrace(String),
    /// A trace, in a format this command does not analyse (function_graph for `explain`).
    OtherCommand(String),
    /// A trace that could not be read; the set goes on without it.
    Failed(String),
}

#[derive(Debug)]
pub struct Item<T> {
    pub path: String,
    pub outcome: Outcome<T>,
}

/// Runs `analyse` on every path, `jobs` traces at a time, and hands each outcome to `each` in
/// the order of `paths`, on the calling thread, as soon as it and every earlier one are done.
/// Each reader already spreads its own parsing over the cores, so a few traces in flight are
/// enough to keep them busy between one trace's end and the next one's start; more would only
/// hold more readers' buffers at once.
///
/// Memory is bounded by the window, not by the set: a worker starts trace `i` only while fewer
/// than `2 × jobs` outcomes are waiting for `each` (a slow early trace holds the later ones
/// back instead of letting their results pile up), and an outcome is dropped once `each` has
/// had it. Nothing a single trace does, an error or a panic, stops the others; an error of
/// `each` (say, the report's pipe closed) stops the set: no further trace is started, and it is
/// returned once the traces in flight are done.
pub fn analyse_all<T, F, E>(
    paths: &[String],
    jobs: usize,
    analyse: F,
    mut each: impl FnMut(Item<T>) -> std::result::Result<(), E>,
) -> std::result::Result<(), E>
where
    T: Send,
    F: Fn(Input) -> Result<(TraceInfo, T)> + Sync,
{
    let jobs = jobs.clamp(1, paths.len().max(1));
    let window = 2 * jobs;
    let state = Mutex::new(Window {
        next: 0,
        handed: 0,
        done: BTreeMap::new(),
    });
    let changed = Condvar::new();
    let lock = || state.lock().unwrap_or_else(|e| e.into_inner());
    std::thread::scope(|s| {
        for _ in 0..jobs {
            s.spawn(|| loop {
                let i = {
                    let mut w = changed
                        .wait_while(lock(), |w| {
                            w.next < paths.len() && w.next >= w.handed + window
                        })
                        .unwrap_or_else(|e| e.into_inner());
                    if w.next >= paths.len() {
                        break;
                    }
                    w.next += 1;
                    w.next - 1
                };
                let outcome = one(&paths[i], &analyse);
                lock().done.insert(i, outcome);
                changed.notify_all();
            });
        }
        for (i, path) in paths.iter().enumerate() {
            let outcome = {
                let mut w = changed
                    .wait_while(lock(), |w| !w.done.contains_key(&i))
                    .unwrap_or_else(|e| e.into_inner());
                w.handed += 1;
                w.done.remove(&i).expect("waited for it")
            };
            changed.notify_all();
            let handed = each(Item {
                path: path.clone(),
                outcome,
            });
            if handed.is_err() {
                lock().next = paths.len();
                changed.notify_all();
                return handed;
            }
        }
        Ok(())
    })
}

/// What the workers and the consumer of [`analyse_all`] share.
struct Window<T> {
    /// The next path a worker takes.
    next: usize,
    /// How many outcomes `each` has had.
    handed: usize,
    /// Outcomes done and not yet handed, by path index.
    done: BTreeMap<usize, Outcome<T>>,
}

fn one<T, F>(path: &str, analyse: &F) -> Outcome<T>
where
    F: Fn(Input) -> Result<(TraceInfo, T)>,
{
    let read = catch_unwind(AssertUnwindSafe(|| Input::open(path).and_then(analyse)));
    let (info, result) = match read {
        Ok(Ok(done)) => done,
        Ok(Err(e)) => return classify(e),
        Err(_) => {
            return Outcome::Failed(format!(
                "{path}: the reader panicked (a bug; please report it with the file)"
            ))
        }
    };
    if info.format.is_ftrace_text() && info.events == 0 {
        return Outcome::NotATrace(format!("{path}: text without one trace event"));
    }
    let hash = match content_hash(path) {
        Ok(h) => Some(h),
        Err(_) if path == "-" => None,
        Err(e) => return Outcome::Failed(format!("{path}: hashing: {e}")),
    };
    Outcome::Read(Traced {
        identity: Identity::new(path, hash, &info),
        result,
    })
}

fn classify<T>(e: Error) -> Outcome<T> {
    match e {
        Error::NotATrace { .. } | Error::Empty { .. } => Outcome::NotATrace(e.to_string()),
        Error::WrongCommand { .. } | Error::Unsupported { .. } => {
            Outcome::OtherCommand(e.to_string())
        }
        _ => Outcome::Failed(e.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtsleuth_trace::read::{self, NullSink};

    #[test]
    fn every_file_gets_its_own_outcome_in_order() {
        let d = tempfile::tempdir().unwrap();
        let p = |s: &str| d.path().join(s).to_string_lossy().into_owned();
        let trace = "            ct-7     [001] d..2.   100.000020: sched_switch: prev_comm=ct prev_pid=7 prev_prio=19 prev_state=S ==> next_comm=swapper/1 next_pid=0 next_prio=120\n";
        std::fs::write(p("a.txt"), trace).unwrap();
        std::fs::write(p("b.json"), "{\"not\": \"a trace\"}\n").unwrap();
        std::fs::write(p("c.bin"), b"\x7fELF\x02\x01\x01\0\0").unwrap();
        std::fs::write(p("d.graph"), "# tracer: function_graph\n").unwrap();
        std::fs::write(p("e.dat"), b"\x17\x08\x44tracing6\0garbage").unwrap();
        let paths: Vec<String> = ["a.txt", "b.json", "c.bin", "d.graph", "e.dat", "f"]
            .iter()
            .map(|s| p(s))
            .collect();
        let mut items = Vec::new();
        let read = |input: Input| {
            let name = input.name.clone();
            read::read(input, &mut NullSink).map(|i| (i, name))
        };
        let keep = |item| {
            items.push(item);
            Ok::<_, ()>(())
        };
        analyse_all(&paths, 2, read, keep).unwrap();
        let kinds: Vec<&str> = items
            .iter()
            .map(|i| match &i.outcome {
                Outcome::Read(t) => {
                    assert_eq!(t.result, i.path);
                    assert_eq!(t.identity.events, 1);
                    "read"
                }
                Outcome::NotATrace(_) => "not a trace",
                Outcome::OtherCommand(_) => "other command",
                Outcome::Failed(_) => "failed",
            })
            .collect();
        assert_eq!(
            kinds,
            [
                "read",
                "not a trace",
                "not a trace",
                "other command",
                "failed",
                "failed"
            ]
        );
    }

    /// A slow first trace holds the others back: with 2 jobs, no more than 4 outcomes wait
    /// for it, and every outcome is dropped once handed on, so memory does not grow with the
    /// set while the first trace is read, nor after.
    #[test]
    fn a_slow_trace_bounds_how_far_the_others_run_ahead() {
        use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
        /// Counts the results alive at once.
        struct Alive<'a>(usize, &'a AtomicUsize);
        impl<'a> Alive<'a> {
            fn new(i: usize, now: &'a AtomicUsize, most: &AtomicUsize) -> Self {
                most.fetch_max(now.fetch_add(1, Ordering::SeqCst) + 1, Ordering::SeqCst);
                Alive(i, now)
            }
        }
        impl Drop for Alive<'_> {
            fn drop(&mut self) {
                self.1.fetch_sub(1, Ordering::SeqCst);
            }
        }
        let d = tempfile::tempdir().unwrap();
        let trace = "            ct-7     [001] d..2.   100.000020: sched_switch: prev_comm=ct prev_pid=7 prev_prio=19 prev_state=S ==> next_comm=swapper/1 next_pid=0 next_prio=120\n";
        let paths: Vec<String> = (0..40)
            .map(|i| {
                let p = d.path().join(format!("{i:02}.txt"));
                std::fs::write(&p, trace).unwrap();
                p.to_string_lossy().into_owned()
            })
            .collect();
        let (first_done, furthest) = (AtomicBool::new(false), AtomicUsize::new(0));
        let (now, most) = (AtomicUsize::new(0), AtomicUsize::new(0));
        let read = |input: Input| {
            let i: usize = input.name[input.name.len() - 6..][..2].parse().unwrap();
            if i == 0 {
                std::thread::sleep(std::time::Duration::from_millis(300));
                first_done.store(true, Ordering::SeqCst);
            } else if !first_done.load(Ordering::SeqCst) {
                furthest.fetch_max(i, Ordering::SeqCst);
            }
            let info = read::read(input, &mut NullSink)?;
            Ok((info, Alive::new(i, &now, &most)))
        };
        let mut order = Vec::new();
        let keep = |item: Item<Alive>| match item.outcome {
            Outcome::Read(t) => {
                order.push(t.result.0);
                Ok::<_, ()>(())
            }
            _ => panic!("{}", item.path),
        };
        analyse_all(&paths, 2, read, keep).unwrap();
        assert_eq!(order, (0..40).collect::<Vec<_>>());
        let furthest = furthest.load(Ordering::SeqCst);
        assert!((1..=3).contains(&furthest), "trace {furthest} started");
        // Four waiting, one being handed on.
        let most = most.load(Ordering::SeqCst);
        assert!(most <= 5, "{most} results alive at once");
        assert_eq!(now.load(Ordering::SeqCst), 0);
    }
}
