//! A sink that counts the events a reader hands over, shared by the tests that feed readers
//! hostile input.

use rtsleuth_core::event::Event;
use rtsleuth_core::read::{Decode, EventSink};

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
