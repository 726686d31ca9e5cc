//! What the reader skipped as damaged, kept as counts and the first place of each kind, so a
//! trace with a million bad bytes costs a few words of memory and two lines of notes.
//!
//! Three kinds are told apart because they mean different things to the user: a packet skipped
//! whole lost exactly its own events; a stretch skipped to find the packets again
//! ([`super::packets`]) may have held any number of packets; a field Perfetto does not define
//! inside a bundle ([`super::checked_bundle`]) may have been one event, the rest of the bundle
//! was read.

use std::fmt::Display;

#[derive(Default)]
pub struct Skips {
    /// Packets whose framing was sound but whose content did not decode or contradicted
    /// itself.
    packets: Tally,
    /// Stretches of bytes passed over to reach the next plausible packet.
    spans: Tally,
    span_bytes: u64,
    /// Bundles holding a field number Perfetto does not define (the reason is the number).
    fields: Tally,
    /// Where the last stretch that ran to the end of the file began.
    to_end: Option<u64>,
}

#[derive(Default)]
struct Tally {
    count: u64,
    /// The byte offset and reason of the first.
    first: Option<(u64, String)>,
}

impl Tally {
    fn add(&mut self, offset: u64, reason: impl Display) {
        self.count += 1;
        if self.first.is_none() {
            self.first = Some((offset, reason.to_string()));
        }
    }
}

impl Skips {
    /// The packet at `offset` was skipped whole.
    pub fn packet(&mut self, offset: u64, reason: impl Display) {
        self.packets.add(offset, reason);
    }

    /// `len` bytes from `offset` on were skipped; `resumed`: a packet was found after them.
    pub fn span(&mut self, offset: u64, len: u64, reason: impl Display, resumed: bool) {
        self.spans.add(offset, reason);
        self.span_bytes += len;
        if !resumed {
            self.to_end = Some(offset);
        }
    }

    /// The bundle in the packet at `offset` held the undefined field `field`.
    pub fn undefined_field(&mut self, offset: u64, field: u32) {
        self.fields.add(offset, field);
    }

    /// The earliest damage: where and why.
    pub fn first(&self) -> Option<(u64, &str)> {
        [&self.packets.first, &self.spans.first]
            .into_iter()
            .flatten()
            .min_by_key(|(offset, _)| *offset)
            .map(|(offset, reason)| (*offset, reason.as_str()))
    }

    pub fn notes(&self, notes: &mut Vec<String>) {
        if let Some((at, reason)) = &self.packets.first {
            let n = self.packets.count;
            let (s, was) = if n == 1 { ("", "was") } else { ("s", "were") };
            notes.push(format!(
                "{n} TracePacket{s} from byte {at} on could not be decoded and {was} skipped (first: {reason}); the other packets were read"
            ));
        }
        if let Some((at, reason)) = &self.spans.first {
            let n = self.spans.count;
            let s = if n == 1 { "" } else { "s" };
            let end = self
                .to_end
                .map(|e| format!("; from byte {e} to the end no packet decodes"))
                .unwrap_or_default();
            notes.push(format!(
                "the packet framing is damaged in {n} place{s} from byte {at} on: {} bytes were skipped to reach the next packet that decodes (first: {reason}){end}",
                self.span_bytes
            ));
        }
        if let Some((at, field)) = &self.fields.first {
            let n = self.fields.count;
            let (s, holds) = if n == 1 { ("", "holds") } else { ("s", "hold") };
            notes.push(format!(
                "{n} FtraceEventBundle{s} from byte {at} on {holds} a field Perfetto does not define (first: field {field}), which was skipped: damage (a changed key may have hidden an event) or a Perfetto newer than rtsleuth; their other events were read"
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn notes(s: &Skips) -> Vec<String> {
        let mut n = Vec::new();
        s.notes(&mut n);
        n
    }

    #[test]
    fn nothing_skipped_says_nothing() {
        assert!(notes(&Skips::default()).is_empty());
        assert_eq!(Skips::default().first(), None);
    }

    #[test]
    fn counts_and_the_first_of_each_kind() {
        let mut s = Skips::default();
        s.packet(500, "bad A");
        s.span(100, 7, "bad key", true);
        s.packet(900, "bad B");
        s.span(2000, 30, "bad varint", false);
        s.undefined_field(700, 13);
        s.undefined_field(800, 99);
        assert_eq!(s.first(), Some((100, "bad key")));
        assert_eq!(
            notes(&s),
            [
                "2 TracePackets from byte 500 on could not be decoded and were skipped (first: bad A); the other packets were read",
                "the packet framing is damaged in 2 places from byte 100 on: 37 bytes were skipped to reach the next packet that decodes (first: bad key); from byte 2000 to the end no packet decodes",
                "2 FtraceEventBundles from byte 700 on hold a field Perfetto does not define (first: field 13), which was skipped: damage (a changed key may have hidden an event) or a Perfetto newer than rtsleuth; their other events were read",
            ]
        );
    }

    #[test]
    fn one_packet_is_singular() {
        let mut s = Skips::default();
        s.packet(42, "why");
        assert_eq!(
            notes(&s),
            ["1 TracePacket from byte 42 on could not be decoded and was skipped (first: why); the other packets were read"]
        );
    }
}
