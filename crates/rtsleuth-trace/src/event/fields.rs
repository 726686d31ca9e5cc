//! Splitting an event payload into `key=value` fields.
//!
//! Values may contain spaces (`prev_comm=Web Content prev_pid=2711`) and `=` signs, so a field
//! boundary is a space followed by an identifier and `=`, not simply a space.

/// The fields of one payload, found lazily.
#[derive(Debug, Clone, Copy)]
pub struct Fields<'a> {
    payload: &'a str,
}

impl<'a> Fields<'a> {
    pub fn new(payload: &'a str) -> Self {
        Fields { payload }
    }

    /// The value of the first field named `key`, trimmed.
    pub fn get(&self, key: &str) -> Option<&'a str> {
        self.iter().find(|(k, _)| *k == key).map(|(_, v)| v)
    }

    /// `get` parsed as a number (decimal, or hex with `0x`).
    pub fn get_u64(&self, key: &str) -> Option<u64> {
        parse_u64(self.get(key)?)
    }

    pub fn get_i64(&self, key: &str) -> Option<i64> {
        let v = self.get(key)?;
        match v.strip_prefix('-') {
            Some(rest) => parse_u64(rest).map(|n| -(n as i64)),
            None => parse_u64(v).map(|n| n as i64),
        }
    }

    pub fn iter(&self) -> FieldIter<'a> {
        FieldIter::new(self.payload)
    }
}

/// Parses a decimal or `0x` hexadecimal number.
pub(crate) fn parse_u64(s: &str) -> Option<u64> {
    let s = s.trim_ascii();
    match s.strip_prefix("0x") {
        Some(h) => u64::from_str_radix(h, 16).ok(),
        None => s.parse().ok(),
    }
}

/// Iterator over `(key, value)` pairs; text before the first `key=` is skipped.
#[derive(Debug, Clone)]
pub struct FieldIter<'a> {
    text: &'a str,
    /// Start and `=` position of the next key, found while ending the previous value.
    next: Option<(usize, usize)>,
}

impl<'a> FieldIter<'a> {
    fn new(text: &'a str) -> Self {
        FieldIter {
            text,
            next: next_key(text.as_bytes(), 0),
        }
    }
}

impl<'a> Iterator for FieldIter<'a> {
    type Item = (&'a str, &'a str);

    fn next(&mut self) -> Option<Self::Item> {
        let (key_start, eq) = self.next?;
        let bytes = self.text.as_bytes();
        self.next = next_key(bytes, eq + 1);
        let value_end = self.next.map_or(bytes.len(), |(k, _)| k);
        let key = &self.text[key_start..eq];
        Some((key, self.text[eq + 1..value_end].trim_ascii()))
    }
}

/// Finds the next `key=` at or after `from` whose key starts the payload or follows a space.
/// Returns the key's start and the position of its `=`.
fn next_key(bytes: &[u8], from: usize) -> Option<(usize, usize)> {
    let mut search = from;
    while let Some(rel) = memchr::memchr(b'=', &bytes[search..]) {
        let eq = search + rel;
        let mut start = eq;
        while start > from && is_key_byte(bytes[start - 1]) {
            start -= 1;
        }
        let at_boundary = start == 0 || bytes[start - 1] == b' ' || bytes[start - 1] == b'\t';
        if start < eq && at_boundary && !bytes[start].is_ascii_digit() {
            return Some((start, eq));
        }
        search = eq + 1;
    }
    None
}

fn is_key_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_with_spaces_and_equals() {
        let f = Fields::new("prev_comm=Web Content prev_pid=2711 prev_prio=120   prev_state=R ==> next_comm=a=b next_pid=3");
        let all: Vec<_> = f.iter().collect();
        assert_eq!(
            all,
            vec![
                ("prev_comm", "Web Content"),
                ("prev_pid", "2711"),
                ("prev_prio", "120"),
                ("prev_state", "R ==>"),
                ("next_comm", "a=b"),
                ("next_pid", "3")
            ]
        );
    }

    #[test]
    fn numbers() {
        let f = Fields::new("hrtimer=0xffff8881 now=123 expires=-5");
        assert_eq!(f.get_u64("hrtimer"), Some(0xffff8881));
        assert_eq!(f.get_u64("now"), Some(123));
        assert_eq!(f.get_i64("expires"), Some(-5));
        assert_eq!(f.get("missing"), None);
    }

    #[test]
    fn leading_text_is_skipped() {
        let f = Fields::new("[FAILED TO PARSE] cpumask=ARRAY[0f, 00] freq=0x82208");
        assert_eq!(f.get("cpumask"), Some("ARRAY[0f, 00]"));
        assert_eq!(f.get_u64("freq"), Some(0x82208));
    }
}
