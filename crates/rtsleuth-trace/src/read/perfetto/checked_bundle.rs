//! `FtraceEventBundle` decoded with a record of the field numbers Perfetto does not define.
//!
//! `prost` skips unknown fields without a word, which is right for the many fields the reader
//! does not need, but inside a bundle it hides damage: one changed bit in the key of an
//! `event` entry turns it into, say, field 13, and that event vanishes while the bundle still
//! decodes. A bundle holds only the fields listed in [`PERFETTO_FIELDS`], so any other number
//! is either damage or a Perfetto newer than this list; both are worth a warning, and neither
//! is a reason to drop the bundle's other events.

use super::messages::{bundle_field, FtraceEventBundle};
use prost::bytes::{Buf, BufMut};
use prost::encoding::{DecodeContext, WireType};
use prost::{DecodeError, Message};

/// Every field number of `FtraceEventBundle` in Perfetto's
/// `protos/perfetto/trace/ftrace/ftrace_event_bundle.proto` (2026), read or not.
const PERFETTO_FIELDS: [u32; 12] = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 512];

/// The most events one bundle is decoded with. Perfetto writes a bundle per CPU per read of
/// its ring buffer, in packets of tens of kilobytes (the largest in the realworld fixtures is
/// 34 KB, about 2,000 events); a packet may be 64 MB, and decoded whole its 2-byte events
/// would take 60 times that in memory. Events past the cap are skipped, counted.
pub const MAX_BUNDLE_EVENTS: usize = 1 << 16;

#[derive(Debug, Clone, PartialEq, Default)]
pub struct CheckedBundle {
    pub bundle: FtraceEventBundle,
    /// The first field number met that Perfetto does not define, if any.
    pub undefined_field: Option<u32>,
    /// Events past [`MAX_BUNDLE_EVENTS`], skipped undecoded.
    pub over_cap: u64,
}

impl From<FtraceEventBundle> for CheckedBundle {
    fn from(bundle: FtraceEventBundle) -> Self {
        CheckedBundle {
            bundle,
            undefined_field: None,
            over_cap: 0,
        }
    }
}

impl Message for CheckedBundle {
    fn encode_raw(&self, buf: &mut impl BufMut) {
        self.bundle.encode_raw(buf)
    }

    fn merge_field(
        &mut self,
        tag: u32,
        wire_type: WireType,
        buf: &mut impl Buf,
        ctx: DecodeContext,
    ) -> Result<(), DecodeError> {
        if !PERFETTO_FIELDS.contains(&tag) {
            self.undefined_field.get_or_insert(tag);
        }
        if tag == bundle_field::EVENT && self.bundle.event.len() >= MAX_BUNDLE_EVENTS {
            self.over_cap += 1;
            return prost::encoding::skip_field(wire_type, tag, buf, ctx);
        }
        self.bundle.merge_field(tag, wire_type, buf, ctx)
    }

    fn encoded_len(&self) -> usize {
        self.bundle.encoded_len()
    }

    fn clear(&mut self) {
        *self = CheckedBundle::default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::read::perfetto::messages::FtraceEvent;

    #[test]
    fn an_event_whose_key_lost_its_field_number_is_reported() {
        let bundle = FtraceEventBundle {
            cpu: Some(3),
            event: vec![FtraceEvent::default(), FtraceEvent::default()],
            ..FtraceEventBundle::default()
        };
        let mut bytes = bundle.encode_to_vec();
        let clean = CheckedBundle::decode(&bytes[..]).unwrap();
        assert_eq!(clean, CheckedBundle::from(bundle));
        // cpu (0x08 0x03), then the first event's key 0x12 (field 2, length-delimited):
        // flipping bits makes it 0x6a, field 13 with the same wire type.
        assert_eq!(bytes[2], 0x12);
        bytes[2] ^= 120;
        let damaged = CheckedBundle::decode(&bytes[..]).unwrap();
        assert_eq!(damaged.undefined_field, Some(13));
        assert_eq!(damaged.bundle.event.len(), 1);
        assert_eq!(damaged.bundle.cpu, Some(3));
    }

    /// A bundle of more events than any Perfetto writes keeps the first MAX_BUNDLE_EVENTS.
    #[test]
    fn events_past_the_cap_are_counted_not_decoded() {
        let bundle = FtraceEventBundle {
            cpu: Some(0),
            event: vec![FtraceEvent::default(); MAX_BUNDLE_EVENTS + 3],
            ..FtraceEventBundle::default()
        };
        let checked = CheckedBundle::decode(&bundle.encode_to_vec()[..]).unwrap();
        assert_eq!(checked.bundle.event.len(), MAX_BUNDLE_EVENTS);
        assert_eq!(checked.over_cap, 3);
        assert_eq!(checked.undefined_field, None);
    }
}
