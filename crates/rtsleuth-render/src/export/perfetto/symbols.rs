//! Kernel function names interned for the ftrace sequence, as Perfetto does with
//! `symbolize_ksyms`: each name is written once, in the first packet after it is first used,
//! and events carry its index. That packet always precedes the bundle of the event, because
//! the event is still buffered when the name is interned.

use rtsleuth_trace::read::perfetto::messages::{InternedData, InternedString};
use std::collections::HashMap;

#[derive(Default)]
pub struct Symbols {
    ids: HashMap<String, u64>,
    /// Entries not yet written.
    new: Vec<InternedString>,
}

impl Symbols {
    /// The index of `name` (interning ids start at 1: 0 means "none" to Perfetto).
    pub fn intern(&mut self, name: &str) -> u64 {
        if let Some(&id) = self.ids.get(name) {
            return id;
        }
        let id = self.ids.len() as u64 + 1;
        self.ids.insert(name.to_string(), id);
        self.new.push(InternedString {
            iid: Some(id),
            str: Some(name.as_bytes().to_vec()),
        });
        id
    }

    /// The entries to write with the next packet of the sequence, if any.
    pub fn take_new(&mut self) -> Option<InternedData> {
        (!self.new.is_empty()).then(|| InternedData {
            kernel_symbols: std::mem::take(&mut self.new),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_name_is_written_once() {
        let mut s = Symbols::default();
        assert_eq!(s.intern("hrtimer_wakeup"), 1);
        assert_eq!(s.intern("tick_sched_timer"), 2);
        assert_eq!(s.intern("hrtimer_wakeup"), 1);
        let data = s.take_new().unwrap();
        assert_eq!(data.kernel_symbols.len(), 2);
        assert_eq!(data.kernel_symbols[1].iid, Some(2));
        assert_eq!(s.take_new(), None);
        assert_eq!(s.intern("hrtimer_wakeup"), 1);
        assert_eq!(s.take_new(), None);
    }
}
