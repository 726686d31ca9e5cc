//! Records an already configured tracefs buffer for a while into a trace.dat and prints what
//! the capture counted, for bench/record.sh (the `record` command is the tool's real entry
//! point; this one changes nothing but `tracing_on`, which the script saves and restores).
//!
//! Usage: capture TRACE_DIR SECONDS OUT.dat

use rtsleuth_live::cpus::CpuList;
use rtsleuth_live::record::{write_tracedat, RawCapture, TraceMeta};
use rtsleuth_live::signals::Interrupt;
use std::path::Path;
use std::time::{Duration, Instant};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let [_, dir, secs, out] = args.as_slice() else {
        return Err("usage: capture TRACE_DIR SECONDS OUT.dat".into());
    };
    let (dir, out) = (Path::new(dir), Path::new(out));
    let interrupt = Interrupt::catch()?;
    let spool = tempfile::tempdir_in(out.parent().unwrap_or(Path::new(".")))?;
    let tracing_on = dir.join("tracing_on");
    let capture = RawCapture::start(dir, &CpuList::online()?, spool.path())?;
    let t0 = Instant::now();
    std::fs::write(&tracing_on, "1")?;
    capture.wait(
        Some(Duration::from_secs_f64(secs.parse()?)),
        &interrupt.flag(),
    );
    std::fs::write(&tracing_on, "0")?;
    let traced = t0.elapsed().as_secs_f64();
    let capture = capture.finish()?;
    let t1 = Instant::now();
    let meta = TraceMeta::gather(Path::new("/sys/kernel/tracing"), dir)?;
    let size = write_tracedat(out, &meta, &capture)?;
    let written = t1.elapsed().as_secs_f64();
    let events = capture.read_events();
    let mb = capture.bytes() as f64 / 1e6;
    println!("traced_s={traced:.3} events={events} events_per_s={:.0} pages_mb={mb:.1} mb_per_s={:.1} lost={} write_s={written:.3} file_bytes={size}",
        events as f64 / traced, mb / traced, capture.lost_events());
    for c in &capture.cpus {
        println!(
            "cpu{} pages={} read_events={} overrun={} dropped={} commit_overrun={}",
            c.cpu,
            c.pages,
            c.stats.read_events,
            c.stats.overrun,
            c.stats.dropped_events,
            c.stats.commit_overrun,
        );
    }
    Ok(())
}
