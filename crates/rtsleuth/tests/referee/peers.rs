//! The peer decoders: each trace is read only through what its own tools print. ftrace text
//! is read as printed (decompressed with the zstd crate, or `xz`/`gzip` for those suffixes);
//! trace.dat through `trace-cmd report`; Perfetto through Perfetto's Python classes
//! (`perfetto_lines.py`); perf.data through `perf script`.

use super::raw::{Event, Trace};
use super::text;
use std::path::Path;
use std::process::Command;

/// The format of a trace file, told from its first bytes (as a user would with `file`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Peer {
    Text,
    TraceDat,
    Perfetto,
    PerfData,
}

impl Peer {
    pub fn name(self) -> &'static str {
        match self {
            Peer::Text => "text",
            Peer::TraceDat => "trace-cmd report",
            Peer::Perfetto => "perfetto python",
            Peer::PerfData => "perf script",
        }
    }
}

/// The decompressed bytes of a file (zstd, xz, gzip by suffix).
pub fn bytes(path: &Path) -> Result<Vec<u8>, String> {
    let raw = std::fs::read(path).map_err(|e| e.to_string())?;
    let name = path.to_string_lossy();
    if name.ends_with(".zst") {
        return zstd::decode_all(&raw[..]).map_err(|e| e.to_string());
    }
    for (suffix, tool) in [(".xz", "xz"), (".gz", "gzip")] {
        if name.ends_with(suffix) {
            let out = Command::new(tool)
                .arg("-dc")
                .arg(path)
                .output()
                .map_err(|e| e.to_string())?;
            return Ok(out.stdout);
        }
    }
    Ok(raw)
}

/// Which peer reads this content.
pub fn peer_of(data: &[u8]) -> Peer {
    if data.starts_with(b"\x17\x08\x44tracing") {
        Peer::TraceDat
    } else if data.starts_with(b"PERFILE2") {
        Peer::PerfData
    } else if data.first() == Some(&0x0a) && !data.is_ascii() {
        Peer::Perfetto
    } else {
        Peer::Text
    }
}

/// Reads a trace through its peer. A compressed binary file is written out decompressed
/// first, since the peers' tools read plain files.
pub fn read(path: &Path) -> Result<(Peer, Trace), String> {
    let data = bytes(path)?;
    let peer = peer_of(&data);
    if peer == Peer::Text {
        let text = String::from_utf8_lossy(&data);
        return Ok((peer, text::parse(&text)));
    }
    let tmp;
    let plain: &Path =
        if data.len() as u64 == std::fs::metadata(path).map_err(|e| e.to_string())?.len() {
            path
        } else {
            tmp = tempfile::NamedTempFile::new().map_err(|e| e.to_string())?;
            std::fs::write(tmp.path(), &data).map_err(|e| e.to_string())?;
            tmp.path()
        };
    let trace = match peer {
        Peer::TraceDat => trace_dat(plain)?,
        Peer::PerfData => perf_data(plain)?,
        Peer::Perfetto => perfetto(plain)?,
        Peer::Text => unreachable!(),
    };
    Ok((peer, trace))
}

fn run(cmd: &mut Command) -> Result<String, String> {
    let out = cmd.output().map_err(|e| format!("{cmd:?}: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "{cmd:?}: {}",
            String::from_utf8_lossy(&out.stderr)
                .lines()
                .last()
                .unwrap_or("")
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// `trace-cmd report -N -l -t`: no plugins (the kernel's own print formats, as in tracefs),
/// flags and full-precision timestamps; `--stat` for the per-CPU overruns (V1).
fn trace_dat(path: &Path) -> Result<Trace, String> {
    let text = run(Command::new("trace-cmd")
        .args(["report", "-N", "-l", "-t"])
        .arg(path))?;
    let mut t = text::parse(&text);
    let stat = run(Command::new("trace-cmd")
        .args(["report", "--stat"])
        .arg(path))?;
    t.overwritten |= stat.lines().any(|l| {
        l.strip_prefix("overrun:")
            .and_then(|n| n.trim().parse::<u64>().ok())
            .is_some_and(|n| n > 0)
    });
    Ok(t)
}

/// `perf script -F comm,tid,cpu,time,event,trace --ns --show-lost-events`: perf prints no
/// flags, so every flag-based rule has no evidence on these traces.
fn perf_data(path: &Path) -> Result<Trace, String> {
    let text = run(Command::new("perf")
        .args([
            "script",
            "-F",
            "comm,tid,cpu,time,event,trace",
            "--ns",
            "--show-lost-events",
            "-i",
        ])
        .arg(path))?;
    Ok(text::parse(&text))
}

/// `perfetto_lines.py` (format documented there).
fn perfetto(path: &Path) -> Result<Trace, String> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/referee/perfetto_lines.py");
    let text = run(Command::new("python3").arg(script).arg(path))?;
    // A ring buffer by default, each CPU's data arriving on its own: overwritten (V1).
    let mut t = Trace {
        overwritten: true,
        ..Trace::default()
    };
    for line in text.lines() {
        let cols: Vec<&str> = line.splitn(7, '\t').collect();
        match cols.as_slice() {
            ["L", cpu, ts] => {
                if let (Ok(c), Ok(ts)) = (cpu.parse(), ts.parse()) {
                    t.lost.push((c, ts));
                }
            }
            ["E", ts, cpu, pid, flags, name, fields] => {
                let (Ok(ts), Ok(cpu), Ok(pid)) = (ts.parse(), cpu.parse(), pid.parse()) else {
                    return Err(format!("bad line from perfetto_lines.py: {line}"));
                };
                t.events.push(Event {
                    ts,
                    cpu,
                    pid,
                    flags: (*flags != "-").then(|| flags.to_string()),
                    name: name.to_string(),
                    fields: fields.to_string(),
                });
            }
            _ => {}
        }
    }
    t.finish();
    Ok(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A compact_sched bundle made with Perfetto's own classes: switches at 1000 ns (to pid
    /// 100, prio 120) and 1500 ns (to 200), a waking of 300 at 1200 ns. By hand: the first
    /// switch's previous task is unknown (pid -1, no prio), the waking runs in pid 100, the
    /// second switch leaves pid 100 at prio 120; timestamps are delta-coded (1000, +500).
    #[test]
    fn perfetto_compact_sched_has_an_unknown_first_task() {
        if !crate::common::peers_ready(&[crate::PERFETTO_PYTHON], crate::PEERS_INSTALL) {
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("compact.pftrace");
        let make = format!(
            r#"
from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb
t = pb.Trace(); p = t.packet.add(); p.trusted_packet_sequence_id = 1
b = p.ftrace_events; b.cpu = 0; c = b.compact_sched
c.intern_table.extend(["a", "b", "w"])
c.switch_timestamp.extend([1000, 500]); c.switch_prev_state.extend([0, 1])
c.switch_next_pid.extend([100, 200]); c.switch_next_prio.extend([120, 120])
c.switch_next_comm_index.extend([0, 1])
c.waking_timestamp.extend([1200]); c.waking_pid.extend([300]); c.waking_target_cpu.extend([1])
c.waking_prio.extend([110]); c.waking_comm_index.extend([2])
open("{}", "wb").write(t.SerializeToString())
"#,
            file.display()
        );
        let ok = Command::new("python3")
            .args(["-c", &make])
            .status()
            .unwrap()
            .success();
        assert!(ok, "python3 with the perfetto package is needed");
        let t = perfetto(&file).unwrap();
        let e = &t.events;
        assert_eq!(e.len(), 3);
        assert_eq!(
            (
                e[0].ts,
                e[0].pid,
                e[0].num("prev_pid"),
                e[0].num("prev_prio")
            ),
            (1000, -1, Some(-1), None)
        );
        assert_eq!(
            (e[1].ts, e[1].pid, e[1].name.as_str(), e[1].num("pid")),
            (1200, 100, "sched_waking", Some(300))
        );
        assert_eq!(
            (
                e[2].ts,
                e[2].num("prev_pid"),
                e[2].num("prev_prio"),
                e[2].field("prev_state")
            ),
            (1500, Some(100), Some(120), Some("S"))
        );
    }
}
