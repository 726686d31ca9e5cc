//! Event formats by id, each parsed the first time a record of its id is met.
//!
//! `trace-cmd extract` stores the format of every event the kernel knows (well over a
//! thousand on a distribution kernel) while a trace holds records of a few dozen; parsing them
//! all up front was a tenth of the time to read a million-event file. Only the id is read
//! when a format is stored.

use super::event_format::EventFormat;
use std::sync::OnceLock;

#[derive(Default)]
pub struct FormatTable {
    long_size: usize,
    /// By event id (ids are small and dense).
    slots: Vec<Option<Slot>>,
}

struct Slot {
    system: Box<str>,
    /// As stored: it is made text (lossily) only when parsed.
    text: Box<[u8]>,
    parsed: OnceLock<Result<EventFormat, String>>,
}

impl FormatTable {
    pub fn new(long_size: usize) -> FormatTable {
        FormatTable {
            long_size,
            slots: Vec::new(),
        }
    }

    /// Stores one format file's text; fails only when it has no readable `ID:` line, since
    /// records name their format by that id.
    pub fn add(&mut self, system: &str, text: &[u8]) -> Result<(), String> {
        let id = text
            .split(|&b| b == b'\n')
            .find_map(|l| l.trim_ascii().strip_prefix(b"ID:"))
            .and_then(|v| {
                std::str::from_utf8(v.trim_ascii())
                    .ok()?
                    .parse::<u16>()
                    .ok()
            })
            .ok_or("format without a readable ID: line")?;
        let i = usize::from(id);
        if self.slots.len() <= i {
            self.slots.resize_with(i + 1, || None);
        }
        self.slots[i] = Some(Slot {
            system: system.into(),
            text: text.into(),
            parsed: OnceLock::new(),
        });
        Ok(())
    }

    /// The format of `id`, parsed now if it was not yet; `None` when the file has none or it
    /// does not parse (see [`FormatTable::failures`]).
    pub fn get(&self, id: u16) -> Option<&EventFormat> {
        let slot = self.slots.get(usize::from(id))?.as_ref()?;
        slot.parsed
            .get_or_init(|| {
                let text = String::from_utf8_lossy(&slot.text);
                EventFormat::parse(&slot.system, &text, self.long_size)
            })
            .as_ref()
            .ok()
    }

    /// Why formats that were needed did not parse, one line each.
    pub fn failures(&self) -> impl Iterator<Item = String> + '_ {
        self.slots
            .iter()
            .flatten()
            .filter_map(|s| match s.parsed.get() {
                Some(Err(e)) => Some(format!("event format in system {} skipped: {e}", s.system)),
                _ => None,
            })
    }

    /// How many ids the table has room for (the highest id plus one).
    pub fn id_bound(&self) -> usize {
        self.slots.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SWITCH: &str = "name: sched_switch\nID: 316\nformat:\n\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\tfield:int next_pid;\toffset:8;\tsize:4;\tsigned:1;\n\nprint fmt: \"next_pid=%d\", REC->next_pid\n";

    #[test]
    fn a_format_is_parsed_when_first_asked_for() {
        let mut t = FormatTable::new(8);
        t.add("sched", SWITCH.as_bytes()).unwrap();
        assert_eq!(t.id_bound(), 317);
        assert!(t.slots[316].as_ref().unwrap().parsed.get().is_none());
        let f = t.get(316).unwrap();
        assert_eq!(
            (&*f.name, f.system.as_str(), f.fields.len()),
            ("sched_switch", "sched", 1)
        );
        assert!(t.get(315).is_none());
        assert!(t.get(9999).is_none());
    }

    #[test]
    fn unparsable_formats_are_reported_once_needed() {
        let mut t = FormatTable::new(8);
        t.add(
            "bad",
            b"name: broken\nID: 3\nformat:\n\tfield:int x;\toffset:oops;\n",
        )
        .unwrap();
        assert_eq!(t.failures().count(), 0);
        assert!(t.get(3).is_none());
        let failures: Vec<String> = t.failures().collect();
        assert_eq!(failures.len(), 1);
        assert!(failures[0].starts_with("event format in system bad skipped: "));
        assert!(t.add("x", b"name: no_id\nformat:\n").is_err());
    }
}
