//! Interned names (IRQ names, timer callbacks, softirq actions, preemptirq callers), so the
//! per-CPU state of an analysis (explain's history, irq's open frames) holds small ids and allocates
//! once per distinct name.

use rustc_hash::FxHashMap as HashMap;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct NameId(u32);

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
        let id = NameId(self.names.len() as u32);
        self.names.push(name.into());
        self.ids.insert(name.into(), id);
        id
    }

    pub fn get(&self, id: NameId) -> &str {
        &self.names[id.0 as usize]
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
