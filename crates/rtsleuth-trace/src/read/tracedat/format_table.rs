//! Event formats by id, each parsed the first time a record of its id is met.
//!
//! `trace-cmd extract` stores the format of every event the kernel knows (well over a
//! thousand on a distribution kernel) while a trace holds records of a few dozen; parsing them
//! all up front was a tenth of the time to read a million-event file. Only the id is read
//! when a format is stored, and its text stays where it is: copying out the 2.5 MB of a
//! distribution kernel's formats was half the page faults of a short read.

use super::event_format::EventFormat;
use std::ops::Range;
use std::sync::OnceLock;

#[derive(Default)]
pub struct FormatTable<'f> {
    long_size: usize,
    /// By event id (ids are small and dense).
    slots: Vec<Option<Slot<'f>>>,
    /// The systems' names, which [`Slot::system`] indexes: a few dozen for a thousand formats.
    systems: Vec<Box<str>>,
    /// The decompressed sections whose formats [`Text::Kept`] points into.
    sections: Vec<Vec<u8>>,
}

struct Slot<'f> {
    system: usize,
    text: Text<'f>,
    parsed: OnceLock<Result<EventFormat, String>>,
}

/// Where a format's text is, as stored: it is made text (lossily) only when parsed.
#[derive(Clone)]
pub enum Text<'f> {
    /// In the file's own bytes.
    File(&'f [u8]),
    /// In the table's decompressed section `section` ([`FormatTable::keep`]).
    Kept { section: usize, range: Range<usize> },
}

impl<'f> FormatTable<'f> {
    pub fn new(long_size: usize) -> FormatTable<'f> {
        FormatTable {
            long_size,
            ..FormatTable::default()
        }
    }

    /// Keeps a decompressed section for the formats in it, and returns its number for
    /// [`Text::Kept`].
    pub fn keep(&mut self, section: Vec<u8>) -> usize {
        self.sections.push(section);
        self.sections.len() - 1
    }

    /// Stores where one format file's text is; fails only when it has no readable `ID:` line,
    /// since records name their format by that id.
    pub fn add(&mut self, system: &str, text: Text<'f>) -> Result<(), String> {
        let id = self
            .bytes(&text)
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
        if self.systems.last().map(|s| &**s) != Some(system) {
            self.systems.push(system.into());
        }
        self.slots[i] = Some(Slot {
            system: self.systems.len() - 1,
            text,
            parsed: OnceLock::new(),
        });
        Ok(())
    }

    fn bytes<'a>(&'a self, text: &'a Text<'f>) -> &'a [u8] {
        match text {
            Text::File(bytes) => bytes,
            Text::Kept { section, range } => &self.sections[*section][range.clone()],
        }
    }

    /// The format of `id`, parsed now if it was not yet; `None` when the file has none or it
    /// does not parse (see [`FormatTable::failures`]).
    pub fn get(&self, id: u16) -> Option<&EventFormat> {
        let slot = self.slots.get(usize::from(id))?.as_ref()?;
        slot.parsed
            .get_or_init(|| {
                let text = String::from_utf8_lossy(self.bytes(&slot.text));
                EventFormat::parse(&self.systems[slot.system], &text, self.long_size)
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
                Some(Err(e)) => Some(format!(
                    "event format in system {} skipped: {e}",
                    self.systems[s.system]
                )),
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
        t.add("sched", Text::File(SWITCH.as_bytes())).unwrap();
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

    /// A format in a decompressed section the table keeps is read from there as from the file.
    #[test]
    fn a_format_in_a_kept_section_reads_as_in_the_file() {
        let mut t = FormatTable::new(8);
        let mut section = b"\x01\x00\x00\x00".to_vec();
        section.extend_from_slice(SWITCH.as_bytes());
        let range = 4..section.len();
        let kept = t.keep(section);
        t.add(
            "sched",
            Text::Kept {
                section: kept,
                range,
            },
        )
        .unwrap();
        let f = t.get(316).unwrap();
        assert_eq!(
            (&*f.name, f.system.as_str(), f.fields.len()),
            ("sched_switch", "sched", 1)
        );
    }

    #[test]
    fn unparsable_formats_are_reported_once_needed() {
        let mut t = FormatTable::new(8);
        let broken = b"name: broken\nID: 3\nformat:\n\tfield:int x;\toffset:oops;\n";
        t.add("bad", Text::File(broken)).unwrap();
        assert_eq!(t.failures().count(), 0);
        assert!(t.get(3).is_none());
        let failures: Vec<String> = t.failures().collect();
        assert_eq!(failures.len(), 1);
        assert!(failures[0].starts_with("event format in system bad skipped: "));
        assert!(t.add("x", Text::File(b"name: no_id\nformat:\n")).is_err());
    }
}
