//! The counts `stats` keeps for every event, kept so that counting costs little per event:
//! by CPU number in a vector, by name without hashing a name it has just met.

use rtsleuth_trace::event::possible_cpu;
use rustc_hash::FxHashMap as HashMap;

/// Events per CPU, indexed by CPU number: a map entry per event was about a sixth of what
/// `stats` itself did per event (55 of some 340 instructions). No reader hands out a CPU at
/// or above `MAX_CPUS`, and one that did would not be counted here rather than size the vector.
/// `History` keeps a vector like it, but every analysis feeds that one: a count there cost
/// `latency` and `explain` 0.4 % of their instructions for `stats`' sake.
#[derive(Debug, Default)]
pub struct PerCpu(Vec<u64>);

impl PerCpu {
    #[inline]
    pub fn add(&mut self, cpu: u32) {
        match self.0.get_mut(cpu as usize) {
            Some(n) => *n += 1,
            None => self.first(cpu),
        }
    }

    #[inline(never)]
    fn first(&mut self, cpu: u32) {
        if possible_cpu(u64::from(cpu)) {
            self.0.resize(cpu as usize + 1, 0);
            self.0[cpu as usize] = 1;
        }
    }

    /// The CPUs with events, in CPU order, with their counts.
    pub fn iter(&self) -> impl Iterator<Item = (u32, u64)> + '_ {
        let counted = self.0.iter().enumerate().filter(|(_, n)| **n > 0);
        counted.map(|(cpu, n)| (cpu as u32, *n))
    }
}

/// How many names met in one call are remembered by where they lie.
const MET: usize = 64;

/// Events per name. Within one `EventSink::records` call every name is borrowed and cannot
/// change, so a name lying where one already met in that call lies, with its length, is that
/// name: it is counted without hashing or comparing its text. A trace.dat's names all lie in
/// its event formats, so nearly every event is counted so (a text trace's lie in their lines:
/// `stats` counts those by their text alone, with [`PerName::add`]). On a trace with every
/// event enabled (ext4's names are 27 bytes) hashing and comparing the names was a seventh of
/// `stats`' CPU.
#[derive(Debug)]
pub struct PerName {
    /// Each name's place in `counts`.
    slots: HashMap<String, usize>,
    counts: Vec<u64>,
    /// By address: names met in the call numbered `call`.
    met: [Met; MET],
    call: u64,
}

#[derive(Debug, Default, Clone, Copy)]
struct Met {
    at: usize,
    len: usize,
    call: u64,
    slot: usize,
}

impl Default for PerName {
    fn default() -> Self {
        PerName {
            slots: HashMap::default(),
            counts: Vec::new(),
            met: [Met::default(); MET],
            call: 0,
        }
    }
}

impl PerName {
    /// Begins a `records` call: where names of earlier calls lay says nothing any more.
    pub fn new_call(&mut self) {
        self.call += 1;
    }

    /// Counts `name`, an event's name borrowed for the whole of the current call.
    #[inline]
    pub fn add_in_call(&mut self, name: &str) {
        let (at, len) = (name.as_ptr() as usize, name.len());
        let i = ((at >> 3) ^ len) % MET;
        let m = self.met[i];
        if m.call == self.call && m.at == at && m.len == len {
            self.counts[m.slot] += 1;
            return;
        }
        let slot = self.add(name);
        self.met[i] = Met {
            at,
            len,
            call: self.call,
            slot,
        };
    }

    /// Counts `name` by its text, and returns its place.
    #[inline(always)]
    pub fn add(&mut self, name: &str) -> usize {
        let slot = match self.slots.get(name) {
            Some(&slot) => slot,
            None => {
                self.slots.insert(name.to_owned(), self.counts.len());
                self.counts.push(0);
                self.counts.len() - 1
            }
        };
        self.counts[slot] += 1;
        slot
    }

    /// Every name met, with its count.
    pub fn iter(&self) -> impl Iterator<Item = (&str, u64)> + '_ {
        (self.slots.iter()).map(|(name, &slot)| (name.as_str(), self.counts[slot]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtsleuth_trace::event::MAX_CPUS;
    use std::collections::BTreeMap;

    /// A CPU number no kernel has is not counted, and does not size the counts.
    #[test]
    fn an_impossible_cpu_is_not_counted() {
        let mut per_cpu = PerCpu::default();
        per_cpu.add(MAX_CPUS);
        per_cpu.add(u32::MAX);
        assert_eq!(per_cpu.iter().count(), 0);
        assert!(per_cpu.0.capacity() < MAX_CPUS as usize);
    }

    fn counts(names: &PerName) -> BTreeMap<&str, u64> {
        names.iter().collect()
    }

    /// Within a call, names lying in one buffer and names equal to them lying elsewhere are
    /// one name; a buffer rewritten between calls with another name at the same place is
    /// counted as that other name.
    #[test]
    fn names_count_by_their_text_across_calls() {
        let mut names = PerName::default();
        let mut buf = String::from("sched_switch");
        let elsewhere = String::from("sched_switch");
        names.new_call();
        for _ in 0..3 {
            names.add_in_call(&buf);
        }
        names.add_in_call(&elsewhere);
        names.add_in_call(&buf[..5]);
        let at = buf.as_ptr();
        buf.replace_range(.., "irq_handlers");
        assert_eq!(
            buf.as_ptr(),
            at,
            "the test wants the new name where the old one was"
        );
        names.new_call();
        names.add_in_call(&buf);
        names.add(&elsewhere);
        let want = BTreeMap::from([("irq_handlers", 1), ("sched", 1), ("sched_switch", 5)]);
        assert_eq!(counts(&names), want);
    }

    /// Names whose places collide in the memo are each counted as themselves.
    #[test]
    fn colliding_places_count_apart() {
        let text: String = (0..200).map(|i| format!("e{i:03}")).collect();
        let mut names = PerName::default();
        names.new_call();
        for round in 0..3 {
            for i in 0..200 {
                names.add_in_call(&text[4 * i..4 * i + 4]);
            }
            assert_eq!(names.iter().count(), 200, "round {round}");
        }
        assert!(names.iter().all(|(_, n)| n == 3));
    }
}
