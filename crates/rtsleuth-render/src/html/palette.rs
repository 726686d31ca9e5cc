//! One fixed colour per root-cause class, the same in every chart and legend of every report,
//! so that a reader who has learnt "vermilion is a hard IRQ" can read any report at a glance.
//! The colours are the Okabe–Ito palette (distinguishable with the common colour-vision
//! deficiencies) plus greys; README.md documents the table.

use plotters::style::RGBColor;
use rtsleuth_analyze::explain::Cause;

/// The colour of a class.
pub fn colour(cause: Cause) -> RGBColor {
    match cause {
        Cause::Hardirq => RGBColor(0xD5, 0x5E, 0x00),
        Cause::IrqsOff => RGBColor(0xCC, 0x79, 0xA7),
        Cause::Softirq => RGBColor(0xE6, 0x9F, 0x00),
        Cause::HigherPriority => RGBColor(0x00, 0x72, 0xB2),
        Cause::PreemptOff => RGBColor(0x56, 0xB4, 0xE9),
        Cause::FairShare => RGBColor(0x00, 0x9E, 0x73),
        Cause::BlackHole => RGBColor(0x00, 0x00, 0x00),
        Cause::KernelPath => RGBColor(0xA0, 0xA0, 0xA0),
        Cause::Unknown => RGBColor(0xF0, 0xE4, 0x42),
        Cause::WakerRun => RGBColor(0xD8, 0xD8, 0xD8),
    }
}

/// The colour of a JSON `kind`; a name this version does not know is drawn as `unknown`.
pub fn kind_colour(kind: &str) -> RGBColor {
    colour(Cause::from_name(kind).unwrap_or(Cause::Unknown))
}

/// CSS notation of a colour, for legends drawn in HTML.
pub fn css(c: RGBColor) -> String {
    format!("#{:02x}{:02x}{:02x}", c.0, c.1, c.2)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two classes sharing a colour would make every chart ambiguous.
    #[test]
    fn every_class_has_its_own_colour() {
        let mut seen: Vec<String> = Cause::ALL.iter().map(|c| css(colour(*c))).collect();
        seen.sort();
        seen.dedup();
        assert_eq!(seen.len(), Cause::ALL.len());
        assert_eq!(css(kind_colour("hardirq")), "#d55e00");
        assert_eq!(kind_colour("no_such_kind"), colour(Cause::Unknown));
    }

    /// README.md's colour table is this palette.
    #[test]
    fn the_readme_documents_every_colour() {
        let readme =
            std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../README.md"))
                .unwrap();
        for c in Cause::ALL {
            let row = format!("| `{}` |", c.as_str());
            let line = readme
                .lines()
                .find(|l| l.starts_with(&row) && l.contains('#'))
                .unwrap_or_else(|| panic!("no colour row for {}", c.as_str()));
            assert!(line.contains(&format!("`{}`", css(colour(c)))), "{line}");
        }
    }
}
