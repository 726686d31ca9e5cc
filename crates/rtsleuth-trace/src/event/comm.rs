//! Comparing task names, which the readers and the analyses do on every scheduler event.

/// Byte equality without a call into `memcmp` for names of 4 to 16 bytes (a kernel comm is at
/// most 15): two overlapping words each side.
#[inline]
pub fn same_comm(a: &str, b: &str) -> bool {
    same_bytes(a.as_bytes(), b.as_bytes())
}

/// [`same_comm`] of bytes: also the text parser's check for the short separators of the
/// scheduler events' fields.
#[inline]
pub fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    let word = |s: &[u8], at: usize| u64::from_ne_bytes(s[at..at + 8].try_into().expect("8"));
    let half = |s: &[u8], at: usize| u32::from_ne_bytes(s[at..at + 4].try_into().expect("4"));
    match n {
        8..=16 => word(a, 0) == word(b, 0) && word(a, n - 8) == word(b, n - 8),
        4..=7 => half(a, 0) == half(b, 0) && half(a, n - 4) == half(b, n - 4),
        _ => a == b,
    }
}

#[cfg(test)]
mod tests {
    use super::same_comm;

    /// Every length, with the one differing byte anywhere, compares as `==` does.
    #[test]
    fn same_comm_is_byte_equality() {
        for n in 0..=20 {
            let a: String = (0..n as u8).map(|i| char::from(b'a' + i)).collect();
            assert!(same_comm(&a, &a.clone()), "{n}");
            for at in 0..n {
                let mut b = a.clone().into_bytes();
                b[at] ^= 0x20;
                let b = String::from_utf8(b).unwrap();
                assert!(!same_comm(&a, &b), "{n} {at}");
            }
            assert!(!same_comm(&a, &a[..n.saturating_sub(1)]) || n == 0, "{n}");
        }
    }
}
