//! The progress line of long reads: bytes parsed, their rate and events per second, drawn on
//! stderr only when stderr is a terminal (so never into a pipe, a file or a CI log), and
//! cleared when the work is done. It reads the library's process-wide counters
//! (`rtsleuth_trace::progress`), so one line covers a single trace and a whole set alike.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use rtsleuth_trace::input::Input;
use rtsleuth_trace::progress::read_so_far;
use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How often the line is redrawn.
const TICK: Duration = Duration::from_millis(100);

/// A running progress line; dropping it clears the line.
pub struct Progress {
    bar: ProgressBar,
    done: Arc<AtomicBool>,
    ticker: Option<JoinHandle<()>>,
}

/// Starts the line for reading one opened trace: with a bar when its size is what the reader
/// parses (a plain file), a running count otherwise.
pub fn for_input(input: &Input) -> Option<Progress> {
    let plain = input.file.as_ref().filter(|_| input.compression.is_none());
    start(plain.and_then(|f| f.metadata().ok()).map(|m| m.len()))
}

/// Starts the line for reading `total` bytes (unknown for compressed input and sets), or
/// returns `None` when stderr is not a terminal.
pub fn start(total: Option<u64>) -> Option<Progress> {
    if !std::io::stderr().is_terminal() {
        return None;
    }
    let (bar, template) = match total {
        Some(n) => (
            ProgressBar::new(n),
            "{bar:16} {binary_bytes}/{binary_total_bytes} {binary_bytes_per_sec} {msg}",
        ),
        None => (
            ProgressBar::no_length(),
            "{spinner} {binary_bytes} {binary_bytes_per_sec} {msg}",
        ),
    };
    bar.set_draw_target(ProgressDrawTarget::stderr());
    bar.set_style(ProgressStyle::with_template(template).expect("a valid template"));
    let done = Arc::new(AtomicBool::new(false));
    let from = read_so_far();
    let start = Instant::now();
    // Drawn once now, so that even a read shorter than a tick shows the line.
    update(&bar, from, start);
    let ticker = {
        let (bar, done) = (bar.clone(), done.clone());
        std::thread::spawn(move || {
            while !done.load(Ordering::Relaxed) {
                std::thread::sleep(TICK);
                update(&bar, from, start);
            }
        })
    };
    Some(Progress {
        bar,
        done,
        ticker: Some(ticker),
    })
}

/// Runs `f` (which writes to the terminal) with the line, if any, taken off the screen and
/// drawn again after, so that the two do not overwrite each other.
pub fn hidden<R>(progress: &Option<Progress>, f: impl FnOnce() -> R) -> R {
    match progress {
        Some(p) => p.bar.suspend(f),
        None => f(),
    }
}

/// Redraws the line with what was read since `from` (bytes, events), `start` ago.
fn update(bar: &ProgressBar, from: (u64, u64), start: Instant) {
    let (bytes, events) = read_so_far();
    let events = (events - from.1) as f64;
    let secs = start.elapsed().as_secs_f64().max(1e-3);
    bar.set_message(format!(
        "{:.2} M events {:.2} M/s",
        events / 1e6,
        events / secs / 1e6
    ));
    bar.set_position(bytes - from.0);
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.done.store(true, Ordering::Relaxed);
        if let Some(t) = self.ticker.take() {
            let _ = t.join();
        }
        self.bar.finish_and_clear();
    }
}
