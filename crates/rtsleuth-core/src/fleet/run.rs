//! Reading the traces of a set a few at a time, each to its own outcome.

use super::identity::{content_hash, Identity};
use crate::error::{Error, Result};
use crate::input::{Format, Input};
use crate::read::TraceInfo;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

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

/// Runs `analyse` on every path, `jobs` traces at a time, and returns the outcomes in the
/// order of `paths`. Each reader already spreads its own parsing over the cores, so a few
/// traces in flight are enough to keep them busy between one trace's end and the next one's
/// start; more would only hold more readers' buffers at once. Nothing a single trace does,
/// an error or a panic, stops the others.
pub fn analyse_all<T, F>(paths: &[String], jobs: usize, analyse: F) -> Vec<Item<T>>
where
    T: Send,
    F: Fn(Input) -> Result<(TraceInfo, T)> + Sync,
{
    let slots: Vec<Mutex<Option<Outcome<T>>>> = paths.iter().map(|_| Mutex::new(None)).collect();
    let next = AtomicUsize::new(0);
    std::thread::scope(|s| {
        for _ in 0..jobs.clamp(1, paths.len().max(1)) {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(path) = paths.get(i) else { break };
                let outcome = one(path, &analyse);
                *slots[i].lock().unwrap_or_else(|e| e.into_inner()) = Some(outcome);
            });
        }
    });
    paths
        .iter()
        .zip(slots)
        .map(|(path, slot)| Item {
            path: path.clone(),
            outcome: slot
                .into_inner()
                .unwrap_or_else(|e| e.into_inner())
                .expect("every path is taken by a worker"),
        })
        .collect()
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
    if info.format == Format::FtraceText && info.events == 0 {
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
    use crate::read::{self, NullSink};

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
        let items = analyse_all(&paths, 2, |input| {
            let name = input.name.clone();
            read::read(input, &mut NullSink).map(|i| (i, name))
        });
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
}
