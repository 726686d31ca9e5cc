//! Byte-level helpers for the hot path of line classification.
//!
//! The graph is ASCII, so looking at bytes (with `memchr` for searches) is several times
//! cheaper than `str`'s char-decoding trims and pattern searches. Each helper still answers
//! exactly what its `str` counterpart would on any UTF-8 input: where a non-ASCII character
//! sits at the edge, it defers to the `str` method.

/// The ASCII characters `char::is_whitespace` accepts (it also accepts vertical tab).
fn ascii_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\x0B' | b'\x0C' | b'\r')
}

/// How many spaces `s` starts with. The graph's indentation runs to dozens of spaces, so
/// they are counted eight at a time.
pub fn leading_spaces(s: &str) -> usize {
    const SPACES: u64 = u64::from_ne_bytes([b' '; 8]);
    let mut n = 0;
    for word in s.as_bytes().chunks_exact(8) {
        let diff = u64::from_le_bytes(word.try_into().expect("8 bytes")) ^ SPACES;
        if diff != 0 {
            return n + diff.trailing_zeros() as usize / 8;
        }
        n += 8;
    }
    n + s.as_bytes()[n..].iter().take_while(|&&b| b == b' ').count()
}

/// `s.trim_start()`.
pub fn trim_start(s: &str) -> &str {
    let n = s.bytes().take_while(|&b| ascii_space(b)).count();
    let t = &s[n..];
    if t.as_bytes().first().is_some_and(|&b| b >= 0x80) {
        t.trim_start()
    } else {
        t
    }
}

/// `s.trim_end()`.
pub fn trim_end(s: &str) -> &str {
    let n = s.bytes().rev().take_while(|&b| ascii_space(b)).count();
    let t = &s[..s.len() - n];
    if t.as_bytes().last().is_some_and(|&b| b >= 0x80) {
        t.trim_end()
    } else {
        t
    }
}

/// `s.trim()`.
pub fn trim(s: &str) -> &str {
    trim_end(trim_start(s))
}

/// `s.contains(char::is_whitespace)`.
pub fn has_space(s: &str) -> bool {
    match s.bytes().position(|b| ascii_space(b) || b >= 0x80) {
        None => false,
        Some(i) if ascii_space(s.as_bytes()[i]) => true,
        Some(i) => s[i..].contains(char::is_whitespace),
    }
}

/// `s.find(c)` for an ASCII `c`. The cells searched are a few bytes long, where a plain loop
/// beats `memchr`'s setup.
pub fn find(s: &str, c: u8) -> Option<usize> {
    s.bytes().position(|b| b == c)
}

/// `s` as a decimal number when it is only ASCII digits (at least one) and fits: what
/// `s.parse::<u64>()` accepts, less a leading `+`, which no graph column prints.
pub fn number(s: &str) -> Option<u64> {
    if s.is_empty() {
        return None;
    }
    // Nineteen digits cannot overflow: no need to check each step.
    if s.len() <= 19 {
        return s.bytes().try_fold(0u64, |n, b| {
            let d = b.wrapping_sub(b'0');
            (d < 10).then(|| n * 10 + u64::from(d))
        });
    }
    s.bytes().try_fold(0u64, |n, b| {
        let d = b.wrapping_sub(b'0');
        (d < 10).then_some(())?;
        n.checked_mul(10)?.checked_add(u64::from(d))
    })
}

/// `s.split_once(c)` for an ASCII `c`.
pub fn split_once(s: &str, c: u8) -> Option<(&str, &str)> {
    find(s, c).map(|i| (&s[..i], &s[i + 1..]))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The helpers agree with `str` on ASCII and Unicode whitespace at either edge.
    #[test]
    fn same_answers_as_str() {
        for s in [
            "",
            "   ",
            " \x0B a b \t",
            "\u{a0} x\u{2003}",
            "x \u{3000}",
            "\u{85}",
            "é ",
            " 0.646 us ",
        ] {
            assert_eq!(trim_start(s), s.trim_start(), "{s:?}");
            assert_eq!(trim_end(s), s.trim_end(), "{s:?}");
            assert_eq!(trim(s), s.trim(), "{s:?}");
            assert_eq!(has_space(s), s.contains(char::is_whitespace), "{s:?}");
            assert_eq!(find(s, b'.'), s.find('.'), "{s:?}");
            assert_eq!(leading_spaces(s), s.len() - s.trim_start_matches(' ').len());
        }
        for s in [
            "0",
            "18446744073709551615",
            "18446744073709551616",
            "",
            "1a",
            "-1",
        ] {
            assert_eq!(number(s), s.parse::<u64>().ok(), "{s:?}");
        }
        assert_eq!(split_once("a.b.c", b'.'), Some(("a", "b.c")));
        for n in 0..20 {
            let s = format!("{}x{}", " ".repeat(n), " ".repeat(9));
            assert_eq!(leading_spaces(&s), n);
            assert_eq!(leading_spaces(&" ".repeat(n)), n);
        }
    }
}
