//! Interned names (IRQ names, timer callbacks, softirq actions, preemptirq callers), so the
//! per-CPU state of an analysis (explain's history, irq's open frames) holds small ids and allocates
//! once per distinct name.

use rustc_hash::FxHashMap as HashMap;
use std::num::NonZeroU32;

/// A name's place in [`Names`], counted from one, so that an `Option<NameId>` takes no more room
/// than the id (explain keeps several in each stretch of its history).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct NameId(NonZeroU32);

#[derive(Debug, Default)]
pub struct Names {
    ids: HashMap<Box<str>, NameId>,
    names: Vec<Box<str>>,
}

impl Names {
    pub fn intern(&mut self, name: &str) -> NameId {
        if let Some(id) = self.ids.get(name) {
            return *id;
        }
        let id = NameId(NonZeroU32::MIN.saturating_add(self.names.len() as u32));
        self.names.push(name.into());
        self.ids.insert(name.into(), id);
        id
    }

    pub fn get(&self, id: NameId) -> &str {
        &self.names[id.0.get() as usize - 1]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_id_per_distinct_name() {
        let mut n = Names::default();
        let a = n.intern("timer_callback [irq_noise]");
        let b = n.intern("hrtimer_wakeup");
        assert_ne!(a, b);
        assert_eq!(n.intern("timer_callback [irq_noise]"), a);
        assert_eq!(n.get(a), "timer_callback [irq_noise]");
        assert_eq!(n.get(b), "hrtimer_wakeup");
    }
}
