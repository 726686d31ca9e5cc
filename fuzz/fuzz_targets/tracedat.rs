//! Fuzzes the trace.dat reader with the analyses attached: whatever the bytes, reading must
//! return a `TraceInfo` or an `Error` naming the input, never panic. Seed the corpus with the
//! files in tests/fixtures/tracedat (small ones reach the page decoding fastest).

#![no_main]

use libfuzzer_sys::fuzz_target;
use rtsleuth_analyze::explain::{Explain, ExplainOptions};
use rtsleuth_analyze::stats::Stats;
use rtsleuth_trace::input::Input;
use rtsleuth_trace::read;

const NAME: &str = "fuzz-input.dat";

fuzz_target!(|data: &[u8]| {
    let Ok(input) = Input::from_reader(NAME, Box::new(std::io::Cursor::new(data.to_vec()))) else {
        return;
    };
    let mut sink = (Stats::new(), Explain::new(ExplainOptions::default()));
    match read::read(input, &mut sink) {
        Ok(info) => {
            let _ = sink.0.document(&info);
            let _ = sink.1.document(&info);
        }
        Err(e) => assert!(e.to_string().contains(NAME), "error without the input name: {e}"),
    }
});
