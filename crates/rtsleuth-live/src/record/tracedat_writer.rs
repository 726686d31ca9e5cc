//! Writes a version 6 trace.dat (trace-cmd's `trace-cmd.dat.v6(5)`), uncompressed.
//!
//! Version 6 rather than 7: every trace-cmd since 2.x, kernelshark and the Python and Rust
//! readers in the wild read it, its layout is a fixed sequence with no section table to get
//! wrong, and without compression version 7 would only add indirection.
//!
//! The layout: the file header (magic, version, byte order, user-space long size, page size),
//! the page and record header schemas, the ftrace formats, every other system's formats,
//! kallsyms, printk formats, saved comms, the CPU count, an options list (clock, uname,
//! version, CPU count, each CPU's ring-buffer statistics), then `flyrecord` and a table of
//! each CPU's page offset and size. The pages follow, each CPU's at a page-aligned offset as
//! readers that mmap them require, copied from the spool files by the kernel
//! (`copy_file_range`) so the trace never passes through memory.

use super::capture::Capture;
use super::dat_out::DatOut;
use super::trace_meta::TraceMeta;
use crate::LiveError;
use rtsleuth_trace::read::tracedat::{option_id as option, MAGIC};
use std::fs::File;
use std::io::BufWriter;
use std::path::Path;

/// Writes `capture` with `meta` to `out` and returns the file's size. A file left half
/// written by an error is removed.
pub fn write_tracedat(out: &Path, meta: &TraceMeta, capture: &Capture) -> Result<u64, LiveError> {
    let sizes = spool_sizes(capture)?;
    let file = File::create(out).map_err(|e| LiveError::file(out, e))?;
    let written = write(file, out, meta, capture, &sizes);
    if written.is_err() {
        let _ = std::fs::remove_file(out);
    }
    written
}

/// Each CPU's spool size, checked against the pages the reader counted: a spool that changed
/// since would make the table lie about where the next CPU's pages start.
fn spool_sizes(capture: &Capture) -> Result<Vec<u64>, LiveError> {
    capture
        .cpus
        .iter()
        .map(|c| {
            let len = std::fs::metadata(&c.spool)
                .map_err(|e| LiveError::file(&c.spool, e))?
                .len();
            let want = c.bytes(capture.page_size);
            if len != want {
                return Err(LiveError::Invalid(format!(
                    "{}: {len} bytes where the capture wrote {} pages ({want} bytes)",
                    c.spool.display(),
                    c.pages
                )));
            }
            Ok(len)
        })
        .collect()
}

fn write(
    file: File,
    path: &Path,
    meta: &TraceMeta,
    capture: &Capture,
    sizes: &[u64],
) -> Result<u64, LiveError> {
    let page = capture.page_size as u64;
    let cpus = capture
        .cpus
        .iter()
        .map(|c| c.cpu as u32 + 1)
        .max()
        .unwrap_or(0)
        .max(meta.cpu_count);
    let mut o = DatOut::new(BufWriter::new(file), path);
    o.bytes(MAGIC)?;
    o.bytes(b"6\0")?;
    let long_size = std::mem::size_of::<libc::c_long>() as u8;
    o.bytes(&[u8::from(cfg!(target_endian = "big")), long_size])?;
    o.u32(capture.page_size as u32)?;
    o.bytes(b"header_page\0")?;
    o.sized64(&capture.header_page)?;
    o.bytes(b"header_event\0")?;
    o.sized64(&meta.header_event)?;
    o.u32(meta.ftrace_formats.len() as u32)?;
    for f in &meta.ftrace_formats {
        o.sized64(f)?;
    }
    o.u32(meta.systems.len() as u32)?;
    for s in &meta.systems {
        o.bytes(s.name.as_bytes())?;
        o.bytes(b"\0")?;
        o.u32(s.formats.len() as u32)?;
        for f in &s.formats {
            o.sized64(f)?;
        }
    }
    o.sized32("/proc/kallsyms", &meta.kallsyms)?;
    o.sized32("printk_formats", &meta.printk_formats)?;
    o.sized64(&meta.saved_cmdlines)?;
    o.u32(cpus)?;
    o.bytes(b"options  \0")?;
    options(&mut o, meta, capture, cpus)?;
    o.bytes(b"flyrecord\0")?;
    // The table, then the pages from the next page boundary, CPU by CPU.
    let mut at = (o.pos() + 16 * u64::from(cpus)).next_multiple_of(page);
    for cpu in 0..cpus {
        let size = capture
            .cpus
            .iter()
            .position(|c| c.cpu as u32 == cpu)
            .map_or(0, |i| sizes[i]);
        o.u64(at)?;
        o.u64(size)?;
        at += size;
    }
    o.pad_to(page)?;
    let header = o.pos();
    let mut file = o
        .into_inner()?
        .into_inner()
        .map_err(|e| LiveError::file(path, e.into_error()))?;
    for c in &capture.cpus {
        let mut spool = File::open(&c.spool).map_err(|e| LiveError::file(&c.spool, e))?;
        std::io::copy(&mut spool, &mut file).map_err(|e| LiveError::file(path, e))?;
    }
    Ok(header + sizes.iter().sum::<u64>())
}

fn options<W: std::io::Write>(
    o: &mut DatOut<W>,
    meta: &TraceMeta,
    capture: &Capture,
    cpus: u32,
) -> Result<(), LiveError> {
    let mut put = |id: u16, data: &[u8]| -> Result<(), LiveError> {
        o.u16(id)?;
        o.u32(data.len() as u32)?;
        o.bytes(data)
    };
    put(option::TRACECLOCK, &nul_ended(&meta.trace_clock))?;
    put(option::UNAME, &nul_ended(&meta.uname))?;
    let version = format!("rtsleuth {}", env!("CARGO_PKG_VERSION"));
    put(option::VERSION, &nul_ended(&version))?;
    put(option::CPUCOUNT, &cpus.to_ne_bytes())?;
    for c in &capture.cpus {
        let stats = format!("CPU: {}\n{}", c.cpu, c.stats_text);
        put(option::CPUSTAT, &nul_ended(&stats))?;
    }
    o.u16(option::DONE)
}

fn nul_ended(s: &str) -> Vec<u8> {
    let mut b = s.as_bytes().to_vec();
    b.push(0);
    b
}
