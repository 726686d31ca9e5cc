//! The DURATION column: `0.646 us`, `+ 61.770 us`, `! 12202.93 us`, `$ 3594274 us`.
//!
//! The kernel prints at most seven significant characters, so a long duration loses its
//! decimals (`33998.59`, `1000131`), and puts a marker in front of it once it passes a
//! threshold (`+` 10 us, `!` 100 us, `#` 1 ms, `*` 10 ms, `@` 100 ms, `$` 1 s). The marker adds
//! nothing the number does not say, so it is accepted and dropped.

use super::text;

/// What a duration cell holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cell {
    /// Only spaces: an entry line, or the duration column switched off.
    Blank,
    /// A duration in nanoseconds, exactly as printed.
    Ns(u64),
}

/// Parses one cell (the text between two `|`, or between `)` and `|`). `None`: not a
/// duration cell at all.
pub fn parse(cell: &str) -> Option<Cell> {
    let t = text::trim(cell);
    if t.is_empty() {
        return Some(Cell::Blank);
    }
    let t = match t.as_bytes()[0] {
        b'+' | b'!' | b'#' | b'*' | b'@' | b'$' => text::trim_start(&t[1..]),
        _ => t,
    };
    let number = text::trim_end(t.strip_suffix("us")?);
    us_to_ns(number).map(Cell::Ns)
}

/// `"12.5"` -> 12 500: whole digits, then up to three decimals (the kernel never prints more).
fn us_to_ns(number: &str) -> Option<u64> {
    let (whole, frac) = text::split_once(number, b'.').unwrap_or((number, ""));
    if frac.len() > 3 {
        return None;
    }
    let ns = text::number(whole)?.checked_mul(1000)?;
    if frac.is_empty() {
        return Some(ns);
    }
    let scale = 10u64.pow(3 - frac.len() as u32);
    Some(ns + text::number(frac)? * scale)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_marker_and_precision() {
        assert_eq!(parse("   0.646 us    "), Some(Cell::Ns(646)));
        assert_eq!(parse(" + 61.770 us   "), Some(Cell::Ns(61_770)));
        assert_eq!(parse(" ! 12202.93 us "), Some(Cell::Ns(12_202_930)));
        assert_eq!(parse(" # 1837.709 us "), Some(Cell::Ns(1_837_709)));
        assert_eq!(parse(" * 33998.59 us "), Some(Cell::Ns(33_998_590)));
        assert_eq!(parse(" @ 119760.2 us "), Some(Cell::Ns(119_760_200)));
        assert_eq!(parse(" $ 3594274 us  "), Some(Cell::Ns(3_594_274_000)));
        assert_eq!(parse("   1000131 us "), Some(Cell::Ns(1_000_131_000)));
        assert_eq!(parse("               "), Some(Cell::Blank));
    }

    #[test]
    fn not_durations() {
        for cell in [
            "sh-4802",
            "us",
            "1.2.3 us",
            "-1 us",
            "0.1234 us",
            "==========>",
            "d..1",
        ] {
            assert_eq!(parse(cell), None, "{cell}");
        }
    }
}
