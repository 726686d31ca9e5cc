//! A sink that counts the events a reader hands over, shared by the tests that feed readers
//! hostile input.

use rtsleuth_core::analyze::explain::{Explain, ExplainOptions};
use rtsleuth_core::analyze::latency::{Latency, LatencyOptions};
use rtsleuth_core::event::Event;
use rtsleuth_core::input::Input;
use rtsleuth_core::read::{self, Decode, EventSink, TraceInfo};
use rtsleuth_core::Error;

/// Counts events. It asks for every event typed, so that paired with the analyses the reader
/// runs every decoding path, which the properties then exercise too.
#[derive(Default)]
pub struct Count(pub u64);

impl EventSink for Count {
    fn event(&mut self, _: &Event<'_>) {
        self.0 += 1;
    }

    fn decode(&self) -> Decode {
        Decode::Everything
    }
}

/// Reads `bytes` as the input `name` from memory with the counter and the latency and explain
/// analyses attached (so that every decoding path runs, and both documents are made): the
/// events counted and what the reader learnt. Any panic fails the calling test.
#[allow(dead_code)] // not every test file that counts events reads this way
pub fn read_analysed(name: &str, bytes: Vec<u8>) -> Result<(u64, TraceInfo), Error> {
    let input = Input::from_reader(name, Box::new(std::io::Cursor::new(bytes)))?;
    let mut sink = (
        Count::default(),
        (
            Latency::new(LatencyOptions::default()),
            Explain::new(ExplainOptions::default()),
        ),
    );
    let info = read::read(input, &mut sink)?;
    let _ = sink.1 .0.document(&info);
    let _ = sink.1 .1.document(&info);
    Ok((sink.0 .0, info))
}
