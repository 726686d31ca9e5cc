//! `write_tracedat` on a hand-made capture (pages laid out as the kernel's ring buffer lays
//! them out): the file reads back, record for record, in rtsleuth and in `trace-cmd report`;
//! bad inputs give errors that name the file.

mod tracedat_peer;

use rtsleuth_live::record::{
    write_tracedat, Capture, CpuCapture, CpuStats, EventSystem, TraceMeta,
};
use std::path::Path;

const PAGE: usize = 4096;

const HEADER_PAGE: &str = "\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n\tfield: char data;\toffset:16;\tsize:4080;\tsigned:0;\n";

const HEADER_EVENT: &str = "# compressed entry header\n\ttype_len    :    5 bits\n\ttime_delta  :   27 bits\n\tarray       :   32 bits\n\n\tpadding     : type == 29\n\ttime_extend : type == 30\n\ttime_stamp : type == 31\n\tdata max type_len  == 28\n";

/// A made-up event: the common fields and one int.
const TICK_FORMAT: &str = "name: tick\nID: 999\nformat:\n\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n\tfield:int value;\toffset:8;\tsize:4;\tsigned:1;\n\nprint fmt: \"value=%d\", REC->value\n";

fn meta(cpu_count: u32) -> TraceMeta {
    TraceMeta {
        header_event: HEADER_EVENT.into(),
        ftrace_formats: Vec::new(),
        systems: vec![EventSystem {
            name: "rtsleuth_test".into(),
            formats: vec![TICK_FORMAT.into()],
        }],
        kallsyms: b"ffffffff81000000 T _stext\n".to_vec(),
        printk_formats: Vec::new(),
        saved_cmdlines: b"1234 worker\n".to_vec(),
        trace_clock: "[local] global counter\n".into(),
        uname: "Linux test 6.18 #1 x86_64".into(),
        cpu_count,
    }
}

/// One page: base time `ts`, then `tick` records of (time delta, pid, value); when `lost` is
/// given the header flags a loss of that many events before the page, stored after the data.
fn page(ts: u64, records: &[(u32, i32, i32)], lost: Option<u64>) -> Vec<u8> {
    let mut data = Vec::new();
    for &(delta, pid, value) in records {
        // type_len 3: three 4-byte words of payload.
        data.extend((3 | (delta << 5)).to_ne_bytes());
        data.extend(999u16.to_ne_bytes());
        data.extend([0u8, 0]);
        data.extend(pid.to_ne_bytes());
        data.extend(value.to_ne_bytes());
    }
    let mut commit = data.len() as u64;
    if let Some(n) = lost {
        commit |= (1 << 31) | (1 << 30);
        data.extend(n.to_ne_bytes());
    }
    let mut p = ts.to_ne_bytes().to_vec();
    p.extend(commit.to_ne_bytes());
    p.extend(data);
    p.resize(PAGE, 0);
    p
}

fn cpu(dir: &Path, cpu: usize, pages: &[Vec<u8>], overrun: u64) -> CpuCapture {
    let spool = dir.join(format!("cpu{cpu}.raw"));
    std::fs::write(&spool, pages.concat()).unwrap();
    let stats_text = format!("entries: 0\noverrun: {overrun}\ncommit overrun: 0\nbytes: 0\ndropped events: 0\nread events: 3\n");
    CpuCapture {
        cpu,
        spool,
        pages: pages.len() as u64,
        stats: CpuStats::parse(&stats_text),
        stats_text,
    }
}

/// CPU 0: two ticks of pid 1234 (a known comm) on one page. CPU 1: one tick, then a page that
/// says 42 events were lost before it, with one more tick. CPU 2 captured nothing.
fn capture(dir: &Path) -> Capture {
    Capture {
        header_page: HEADER_PAGE.into(),
        page_size: PAGE,
        cpus: vec![
            cpu(
                dir,
                0,
                &[page(1_000_000_000, &[(0, 1234, 1), (500, 1234, 2)], None)],
                0,
            ),
            cpu(
                dir,
                1,
                &[
                    page(1_000_000_200, &[(0, 5678, 3)], None),
                    page(2_000_000_000, &[(7, 0, 4)], Some(42)),
                ],
                9,
            ),
        ],
    }
}

#[test]
fn a_synthetic_capture_reads_back_in_rtsleuth_and_trace_cmd() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("trace.dat");
    let size = write_tracedat(&out, &meta(3), &capture(dir.path())).unwrap();
    assert_eq!(size, std::fs::metadata(&out).unwrap().len());
    // Three CPUs of pages start page-aligned after the header: header + 3 pages.
    assert_eq!(size % PAGE as u64, 0);

    let (rows, info) = tracedat_peer::ours(&out);
    let row = |ts: u64, cpu: u32, pid: i32, comm: &str, value: i32| {
        (
            ts,
            cpu,
            pid,
            comm.to_string(),
            "tick".to_string(),
            format!("value={value}"),
        )
    };
    assert_eq!(
        rows,
        vec![
            row(1_000_000_000, 0, 1234, "worker", 1),
            row(1_000_000_200, 1, 5678, "<...>", 3),
            row(1_000_000_500, 0, 1234, "worker", 2),
            row(2_000_000_007, 1, 0, "<idle>", 4),
        ]
    );
    assert_eq!(info.lost_events, 42);
    assert_eq!(info.header.nr_cpus, Some(3));
    assert_eq!(info.header.trace_cmd_version, Some(6));

    let Some((peer, text)) = tracedat_peer::trace_cmd(&out) else {
        return;
    };
    let same: Vec<_> = peer
        .iter()
        .map(|r| (r.0, r.1, r.2, r.4.clone(), r.5.clone()))
        .collect();
    let mine: Vec<_> = rows
        .iter()
        .map(|r| (r.0, r.1, r.2, r.4.clone(), r.5.clone()))
        .collect();
    assert_eq!(same, mine, "{text}");
    assert!(text.contains("[42 EVENTS DROPPED]"), "{text}");
}

/// What `trace-cmd report <option>` prints for the file; `None` without trace-cmd.
fn report_option(path: &Path, option: &str) -> Option<String> {
    let Ok(o) = std::process::Command::new("trace-cmd")
        .args(["report", option, "-i"])
        .arg(path)
        .output()
    else {
        assert!(std::env::var_os("CI").is_none(), "CI must have trace-cmd");
        return None;
    };
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    Some(String::from_utf8_lossy(&o.stdout).into_owned())
}

#[test]
fn trace_cmd_reads_the_options_and_the_cpu_table() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("trace.dat");
    write_tracedat(&out, &meta(2), &capture(dir.path())).unwrap();
    let Some(uname) = report_option(&out, "--uname") else {
        return;
    };
    let version = format!("rtsleuth {}", env!("CARGO_PKG_VERSION"));
    assert_eq!(
        uname.lines().collect::<Vec<_>>(),
        ["cpus=2", "Linux test 6.18 #1 x86_64", version.as_str()]
    );
    let stat = report_option(&out, "--stat").unwrap();
    assert!(stat.contains("CPU: 1\nentries: 0\noverrun: 9\n"), "{stat}");
    // The header takes the first page; CPU 0's page follows, then CPU 1's two.
    assert!(
        stat.contains("CPU0 data recorded at offset=0x1000\n    4096 bytes in size\nCPU1 data recorded at offset=0x2000\n    8192 bytes in size"),
        "{stat}"
    );
}

#[test]
fn an_unwritable_output_is_an_error_naming_it_and_leaves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("no/such/dir/trace.dat");
    let e = write_tracedat(&out, &meta(2), &capture(dir.path())).unwrap_err();
    assert!(e.to_string().starts_with(&out.display().to_string()), "{e}");
    assert!(e.to_string().contains("No such file or directory"), "{e}");
}

#[test]
fn a_spool_that_does_not_match_the_capture_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = capture(dir.path());
    c.cpus[1].pages = 3;
    let out = dir.path().join("trace.dat");
    let e = write_tracedat(&out, &meta(2), &c).unwrap_err();
    assert!(
        e.to_string()
            .contains("cpu1.raw: 8192 bytes where the capture wrote 3 pages"),
        "{e}"
    );
    assert!(!out.exists());
    std::fs::remove_file(&c.cpus[1].spool).unwrap();
    let e = write_tracedat(&out, &meta(2), &c).unwrap_err();
    assert!(e.to_string().contains("cpu1.raw: No such file"), "{e}");
}
