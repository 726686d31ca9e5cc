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
