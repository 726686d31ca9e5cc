//! Kernel function names interned per writer sequence. With `FtraceConfig.symbolize_ksyms`
//! Perfetto replaces the function fields of ftrace events (`hrtimer_start.function`,
//! `workqueue_execute_start.function`…) by an index into a table it writes in the same
//! sequence, so the symbol the kernel would print can be recovered; without it the fields are
//! addresses, which no table holds.

use super::messages::InternedData;
use rustc_hash::FxHashMap as HashMap;
use std::sync::Arc;

/// Names are shared with the events that name them: an hrtimer's callback is named in every
/// one of its events, and a copy each was an allocation per timer event.
#[derive(Default)]
pub struct Symbols {
    tables: HashMap<u32, HashMap<u64, Arc<str>>>,
}

impl Symbols {
    /// Takes what a packet of sequence `seq` says about its tables: `cleared` starts them
    /// afresh, `interned` adds entries.
    pub fn packet(&mut self, seq: u32, cleared: bool, interned: Option<&InternedData>) {
        if cleared {
            self.tables.remove(&seq);
        }
        let Some(interned) = interned.filter(|i| !i.kernel_symbols.is_empty()) else {
            return;
        };
        let table = self.tables.entry(seq).or_default();
        for s in &interned.kernel_symbols {
            if let (Some(iid), Some(name)) = (s.iid, &s.str) {
                table.insert(iid, String::from_utf8_lossy(name).into());
            }
        }
    }

    pub fn name(&self, seq: u32, id: u64) -> Option<&Arc<str>> {
        self.tables.get(&seq)?.get(&id)
    }
}
