//! Task names with blanks and colons in the real-world traces (../shared/fixtures/realworld):
//! `BT Service Call`, `AsyncTask #1`, `shell srvc 4581`, `rs:main Q:Reg`, `POSIX timer 0`…
//!
//! The lines that hold one are found here with a regular expression of the printed layout, not
//! with rtsleuth's parser: the task column is everything before the `-PID` that precedes the
//! optional `(TGID)` and the `[CPU]` column, and a payload's `comm=` / `prev_comm=` /
//! `next_comm=` / `child_comm=` value runs to the ` pid=` key the kernel prints after it.
//! Every such line must come out of the reader as an event with that task, pid, CPU and
//! timestamp, and its typed decoding must carry the same names.

mod shared_fixtures;

use regex::Regex;
use rtsleuth_trace::event::{Event, EventKind};
use rtsleuth_trace::input::Input;
use rtsleuth_trace::read::{self, EventSink};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// One event as the reader gave it, with the names its typed decoding carries.
#[derive(Debug)]
struct Got {
    comm: String,
    payload: String,
    /// `(field, name)` of the typed decoding's task names.
    names: Vec<(&'static str, String)>,
}

/// Events by `(timestamp ns, cpu, pid, event name)`.
#[derive(Default)]
struct Collect(HashMap<(u64, u32, i32, String), Vec<Got>>);

impl EventSink for Collect {
    fn event(&mut self, e: &Event<'_>) {
        let names = match e.kind {
            EventKind::SchedSwitch {
                prev_comm,
                next_comm,
                ..
            } => vec![("prev_comm", prev_comm), ("next_comm", next_comm)],
            EventKind::SchedWaking { comm, .. }
            | EventKind::SchedWakeup { comm, .. }
            | EventKind::SchedWakeupNew { comm, .. }
            | EventKind::SchedMigrateTask { comm, .. }
            | EventKind::SchedProcessExit { comm, .. } => vec![("comm", comm)],
            EventKind::SchedProcessFork {
                parent_comm,
                child_comm,
                ..
            } => vec![("comm", parent_comm), ("child_comm", child_comm)],
            _ => vec![],
        };
        self.0
            .entry((e.ts, e.cpu, e.pid, e.name.to_string()))
            .or_default()
            .push(Got {
                comm: e.comm.to_string(),
                payload: e.payload.to_string(),
                names: names.into_iter().map(|(k, v)| (k, v.to_string())).collect(),
            });
    }
}

/// A line with a spaced name, as the regular expressions read it.
#[derive(Debug)]
struct Expected {
    line: usize,
    comm: String,
    pid: i32,
    cpu: u32,
    ts: u64,
    name: String,
    /// `(key, value)` of the payload's task names.
    names: Vec<(String, String)>,
    /// A name holds a blank, not only a colon.
    blank: bool,
}

/// `secs.frac` as nanoseconds.
fn ns(ts: &str) -> u64 {
    let (s, f) = ts.split_once('.').unwrap();
    let f = format!("{f:0<9}");
    s.parse::<u64>().unwrap() * 1_000_000_000 + f[..9].parse::<u64>().unwrap()
}

fn spaced(name: &str) -> bool {
    name.contains(' ') || name.contains(':')
}

/// The lines of `text` whose task column or payload task names hold a blank or a colon.
fn expected(text: &str) -> Vec<Expected> {
    let line_re = Regex::new(
        r"^\s*(?P<comm>.+?)-(?P<pid>\d+)\s+(?:\(\s*[-\d]+\)\s+)?\[(?P<cpu>\d+)\]\s+(?:\S+\s+)?(?P<ts>\d+\.\d+):\s+(?P<name>\w+):\s*(?P<payload>.*)$",
    )
    .unwrap();
    let comm_re = Regex::new(
        r"(?:^|\s)(?P<key>(?:prev_|next_|child_)?comm)=(?P<v>.*?)\s+(?:prev_|next_|child_)?pid=",
    )
    .unwrap();
    let mut out = Vec::new();
    for (i, l) in text.lines().enumerate() {
        let Some(m) = line_re.captures(l) else {
            continue;
        };
        let names: Vec<(String, String)> = comm_re
            .captures_iter(&m["payload"])
            .map(|c| (c["key"].to_string(), c["v"].trim().to_string()))
            .collect();
        let comm = m["comm"].trim().to_string();
        if !spaced(&comm) && !names.iter().any(|(_, v)| spaced(v)) {
            continue;
        }
        let blank = comm.contains(' ') || names.iter().any(|(_, v)| v.contains(' '));
        out.push(Expected {
            blank,
            line: i + 1,
            comm,
            pid: m["pid"].parse().unwrap(),
            cpu: m["cpu"].parse().unwrap(),
            ts: ns(&m["ts"]),
            name: m["name"].to_string(),
            names,
        });
    }
    out
}

/// Every file under `dir`, depth first.
fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            walk(&p, out);
        } else {
            out.push(p);
        }
    }
}

#[test]
fn every_realworld_line_with_a_spaced_name_reads_with_it() {
    let Some(root) = shared_fixtures::realworld("") else {
        return;
    };
    let mut files = Vec::new();
    walk(&root, &mut files);
    let mut checked = HashMap::new();
    for path in files {
        let name = path.to_str().unwrap();
        // The collection's notes quote lines of its traces; they are not traces.
        if name.ends_with(".md") {
            continue;
        }
        let Ok(input) = Input::open(name) else {
            continue;
        };
        if !input.format.is_ftrace_text() {
            continue;
        }
        let text = String::from_utf8_lossy(&std::fs::read(&path).unwrap()).into_owned();
        let want = expected(&text);
        if want.is_empty() {
            continue;
        }
        let mut got = Collect::default();
        read::read(input, &mut got).unwrap_or_else(|e| panic!("{e}"));
        for w in &want {
            let at = format!("{}:{}", path.display(), w.line);
            let key = (w.ts, w.cpu, w.pid, w.name.clone());
            let events = got
                .0
                .get(&key)
                .unwrap_or_else(|| panic!("{at}: no event read for {w:?}"));
            let e = events
                .iter()
                .find(|e| e.comm == w.comm)
                .unwrap_or_else(|| panic!("{at}: task {:?} read as {events:?}", w.comm));
            for (key, value) in &w.names {
                match e.names.iter().find(|(k, _)| k == key) {
                    Some((_, v)) => assert_eq!(v, value, "{at}: {key}"),
                    // An event rtsleuth does not type (sched_stat_runtime…) keeps its text.
                    None => assert!(
                        e.payload.contains(&format!("{key}={value} ")),
                        "{at}: {key}={value} not in {:?}",
                        e.payload
                    ),
                }
            }
        }
        let blanks = want.iter().filter(|w| w.blank).count();
        checked.insert(
            path.strip_prefix(&root).unwrap().display().to_string(),
            (want.len(), blanks),
        );
    }
    // The lines checked per file, (with a colon or a blank, with a blank), as the expressions
    // above count them (not rtsleuth).
    let mut counts: Vec<_> = checked.into_iter().collect();
    counts.sort();
    for (file, (n, b)) in &counts {
        println!("{file}: {n} lines, {b} with a blank");
    }
    let with_blank: Vec<_> = counts.iter().filter(|(_, (_, b))| *b > 0).collect();
    let blanks: usize = with_blank.iter().map(|(_, (_, b))| b).sum();
    assert!(
        with_blank.len() >= 4 && blanks >= 100,
        "too few names with blanks found: {counts:?}"
    );
}
