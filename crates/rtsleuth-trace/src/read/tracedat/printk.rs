//! `printk_formats`: the format strings `trace_printk` and `trace_puts` events point at.
//! The ring buffer holds only the address; the text lives here.

use rustc_hash::FxHashMap;

#[derive(Debug, Default)]
pub struct PrintkFormats {
    by_addr: FxHashMap<u64, String>,
}

impl PrintkFormats {
    /// Parses `0xffffffff81e2c6e0 : "fmt\n"` lines, undoing the C escapes the kernel printed.
    pub fn parse(text: &str) -> PrintkFormats {
        let mut by_addr = FxHashMap::default();
        for line in text.lines() {
            let Some((addr, fmt)) = line.split_once(" : ") else {
                continue;
            };
            let Ok(addr) = u64::from_str_radix(addr.trim().trim_start_matches("0x"), 16) else {
                continue;
            };
            let fmt = fmt.trim();
            let fmt = fmt.strip_prefix('"').unwrap_or(fmt);
            let fmt = fmt.strip_suffix('"').unwrap_or(fmt);
            by_addr.insert(addr, unescape(fmt));
        }
        PrintkFormats { by_addr }
    }

    pub fn get(&self, addr: u64) -> Option<&str> {
        self.by_addr.get(&addr).map(String::as_str)
    }
}

fn unescape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('"') => out.push('"'),
            Some('\\') => out.push('\\'),
            Some(other) => {
                out.push('\\');
                out.push(other);
            }
            None => out.push('\\'),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_by_address_with_escapes_undone() {
        let p = PrintkFormats::parse(
            "0xffffffffc0350030 : \"noise start %d us\\n\"\n0xffffffff82a0 : \"say \\\"hi\\\"\"\nnonsense\n",
        );
        assert_eq!(p.get(0xffffffffc0350030), Some("noise start %d us\n"));
        assert_eq!(p.get(0xffffffff82a0), Some("say \"hi\""));
        assert_eq!(p.get(1), None);
    }
}
