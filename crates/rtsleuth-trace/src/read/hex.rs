//! Hex numbers as the kernel prints them: the addresses of kallsyms and the pointers in event
//! payloads. Both are read by the hundred thousand, where `u64::from_str_radix` was a visible
//! part of the cost.

/// The value of each byte as a hex digit, [`NOT_HEX`] for the other bytes.
const DIGITS: [u8; 256] = {
    let mut t = [NOT_HEX; 256];
    let mut c = 0;
    while c < 256 {
        if let Some(v) = (c as u8 as char).to_digit(16) {
            t[c] = v as u8;
        }
        c += 1;
    }
    t
};

const NOT_HEX: u8 = 0xff;

/// The value of the hex digits `s` starts with, at most 16 of them (which cannot overflow),
/// and how many there were.
pub fn leading(s: &[u8]) -> (u64, usize) {
    // A 64-bit kernel prints its addresses and pointers with all 16 digits.
    if let Some(n) = s.first_chunk::<16>().and_then(sixteen) {
        return (n, 16);
    }
    leading_bytewise(s)
}

/// [`leading`] a byte at a time.
fn leading_bytewise(s: &[u8]) -> (u64, usize) {
    let mut n = 0u64;
    for (count, &c) in s.iter().take(16).enumerate() {
        let d = DIGITS[usize::from(c)];
        if d == NOT_HEX {
            return (n, count);
        }
        n = n << 4 | u64::from(d);
    }
    (n, s.len().min(16))
}

/// Sixteen hex digits, eight at a time in a word; `None` if any byte is not one.
#[inline]
pub fn sixteen(s: &[u8; 16]) -> Option<u64> {
    let (high, low) = s.split_at(8);
    Some((eight(high)? << 32) | eight(low)?)
}

const LANES: u64 = 0x0101_0101_0101_0101;

/// Eight hex digits (`s` is 8 bytes) read as one word: every byte checked to be a digit or a
/// letter a-f in either case, then each turned into its value and the eight values packed.
fn eight(s: &[u8]) -> Option<u64> {
    let x = u64::from_le_bytes(s.try_into().ok()?);
    let high = LANES * 0x80;
    // Bytes below 0x80 only, so adding below 0x80 to each cannot carry into the next byte.
    if x & high != 0 {
        return None;
    }
    // At least `lo` and below `hi`: the sum of the byte and 0x80 - bound has its high bit set
    // exactly when the byte is at least the bound.
    let from = |lo: u8, hi: u8, v: u64| {
        let at_least = |b: u8| v + LANES * u64::from(0x80 - b);
        at_least(lo) & !at_least(hi) & high
    };
    let digit = from(b'0', b'9' + 1, x);
    let letter = from(b'a', b'f' + 1, x | (LANES * 0x20));
    if digit | letter != high {
        return None;
    }
    // A letter has bit 6 set and its low nibble is its value less 9.
    let values = (x & (LANES * 0x0f)) + 9 * ((x >> 6) & LANES);
    // The first digit is the lowest byte: the most significant nibble.
    let v = values.swap_bytes();
    let v = (v | v >> 4) & 0x00ff_00ff_00ff_00ff;
    let v = (v | v >> 8) & 0x0000_ffff_0000_ffff;
    Some((v | v >> 16) & 0xffff_ffff)
}

/// The hex number `s`, accepting what `u64::from_str_radix(s, 16)` accepts (one leading `+`,
/// leading zeros beyond 16 digits); `None` when that refuses it.
pub fn u64_digits(s: &[u8]) -> Option<u64> {
    let digits = s.strip_prefix(b"+").unwrap_or(s);
    if digits.is_empty() {
        return None;
    }
    if digits.len() > 16 {
        return digits.iter().try_fold(0u64, |n, &c| {
            let d = Some(DIGITS[usize::from(c)]).filter(|&d| d != NOT_HEX)?;
            n.checked_mul(16)?.checked_add(u64::from(d))
        });
    }
    let (n, count) = leading(digits);
    (count == digits.len()).then_some(n)
}

#[cfg(test)]
mod tests {
    use super::{leading, u64_digits};

    /// Every shape agrees with the standard library's reading.
    #[test]
    fn reads_as_from_str_radix_does() {
        let cases = [
            "",
            "+",
            "-",
            "-1",
            "+ff",
            "++ff",
            "0",
            "00",
            "ffffffff81000000",
            "FFFFFFFF81000000",
            "ffffffffffffffff",
            "10000000000000000",
            "000000000000000000000ff",
            "0x10",
            "fg",
            " ff",
            "ff ",
            "é",
            "deadbeef",
            "7fffffffffffffff",
            "ffffffff8100000g",
            "0123456789abcdef",
            "g123456789abcdef0",
            "\u{ff}",
        ];
        for s in cases {
            let want = u64::from_str_radix(s, 16).ok();
            assert_eq!(u64_digits(s.as_bytes()), want, "{s:?}");
        }
    }

    /// Sixteen bytes read as a word agree with reading them a byte at a time, whatever byte
    /// is at whatever place: every byte value at each of the 16 places of three numbers.
    #[test]
    fn a_word_reads_as_bytes_do() {
        for base in [
            *b"ffffffff81000000",
            *b"0123456789abcdef",
            *b"ABCDEF9876543210",
        ] {
            for at in 0..16 {
                for byte in 0..=255u8 {
                    let mut s = base;
                    s[at] = byte;
                    assert_eq!(
                        leading(&s),
                        super::leading_bytewise(&s),
                        "{:?}",
                        String::from_utf8_lossy(&s)
                    );
                }
            }
        }
    }

    /// A prefix stops at the first byte that is not a digit, or after 16 digits.
    #[test]
    fn leading_digits_stop_at_the_first_other_byte() {
        assert_eq!(leading(b""), (0, 0));
        assert_eq!(
            leading(b"ffffffff81000000 T _stext"),
            (0xffffffff81000000, 16)
        );
        assert_eq!(leading(b"81000000 t x"), (0x81000000, 8));
        assert_eq!(leading(b"1ffffffffffffffff"), (0x1fffffffffffffff, 16));
        assert_eq!(leading(b"x1"), (0, 0));
        assert_eq!(leading(b"Ab"), (0xab, 2));
    }
}
