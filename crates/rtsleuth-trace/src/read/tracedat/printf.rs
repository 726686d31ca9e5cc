//! C printf conversions, for the two places trace.dat needs them: `trace_printk` records
//! (whose arguments are stored in binary next to a pointer to the format) and the raw field
//! rendering, which prints each field with the conversion its print format uses.

use super::kallsyms::{Symbol, Symbols};
use std::fmt::Write;

/// The length modifier, which decides how many bytes an integer argument has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Length {
    Char,
    Short,
    Int,
    Long,
    LongLong,
    Size,
}

/// One parsed `%…` conversion.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Spec {
    pub left: bool,
    pub zero: bool,
    pub alt: bool,
    pub plus: bool,
    pub space: bool,
    /// `None`, a number, or `Some(usize::MAX)` for `*` (taken from an argument).
    pub width: Option<usize>,
    pub precision: Option<usize>,
    pub length: Length,
    pub conv: u8,
    /// The letter after `%p` (`s`, `S`, `f`, `F`…), which asks for a symbol.
    pub ptr_ext: Option<u8>,
}

/// What a conversion is given.
#[derive(Debug, Clone, Copy)]
pub enum Arg<'a> {
    /// An integer's raw bits, already of the right width.
    Int(u64),
    Str(&'a str),
}

impl Spec {
    /// Parses the conversion at the start of `s` (which starts with `%`); returns it and its
    /// length in bytes.
    pub fn parse(s: &str) -> Option<(Spec, usize)> {
        let b = s.as_bytes();
        let mut i = 1;
        let mut spec = Spec {
            left: false,
            zero: false,
            alt: false,
            plus: false,
            space: false,
            width: None,
            precision: None,
            length: Length::Int,
            conv: 0,
            ptr_ext: None,
        };
        while let Some(&c) = b.get(i) {
            match c {
                b'-' => spec.left = true,
                b'0' => spec.zero = true,
                b'#' => spec.alt = true,
                b'+' => spec.plus = true,
                b' ' => spec.space = true,
                _ => break,
            }
            i += 1;
        }
        let number = |i: &mut usize| -> Option<usize> {
            if b.get(*i) == Some(&b'*') {
                *i += 1;
                return Some(usize::MAX);
            }
            let start = *i;
            while b.get(*i).is_some_and(u8::is_ascii_digit) {
                *i += 1;
            }
            s[start..*i].parse().ok()
        };
        spec.width = number(&mut i);
        if b.get(i) == Some(&b'.') {
            i += 1;
            spec.precision = Some(number(&mut i).unwrap_or(0));
        }
        spec.length = match (b.get(i), b.get(i + 1)) {
            (Some(b'h'), Some(b'h')) => Length::Char,
            (Some(b'h'), _) => Length::Short,
            (Some(b'l'), Some(b'l')) | (Some(b'L'), _) => Length::LongLong,
            (Some(b'l'), _) => Length::Long,
            (Some(b'z' | b'j' | b't'), _) => Length::Size,
            _ => Length::Int,
        };
        i += match spec.length {
            Length::Char => 2,
            Length::LongLong if b[i] == b'l' => 2,
            Length::Int => 0,
            _ => 1,
        };
        spec.conv = *b.get(i).filter(|c| c.is_ascii_alphabetic())?;
        i += 1;
        if spec.conv == b'p' {
            if let Some(&e) = b.get(i).filter(|e| e.is_ascii_alphabetic()) {
                spec.ptr_ext = Some(e);
                i += 1;
                // Extensions such as %pI4 or %pS carry a trailing letter or digit.
                while b.get(i).is_some_and(|c| c.is_ascii_digit()) {
                    i += 1;
                }
            }
        }
        Some((spec, i))
    }

    /// Bytes an integer argument of this conversion has in a binary printf buffer.
    pub fn arg_size(&self, long_size: usize) -> usize {
        match (self.conv, self.length) {
            (b'p', _) => long_size,
            (b'c', _) => 1,
            (_, Length::Char) => 1,
            (_, Length::Short) => 2,
            (_, Length::Int) => 4,
            (_, Length::Long | Length::Size) => long_size,
            (_, Length::LongLong) => 8,
        }
    }

    /// Writes `arg` as this conversion would. `size` is the integer's width in bytes. Without
    /// a width (nearly every field of a trace's formats) straight into `out`: a string made
    /// per field and copied in was most of what printing an `hrtimer_start` cost.
    pub fn write(&self, out: &mut String, arg: Arg<'_>, size: usize, symbols: &Symbols) {
        if self.pad_width() == 0 {
            return self.body(out, arg, size, symbols);
        }
        let mut body = String::new();
        self.body(&mut body, arg, size, symbols);
        self.pad(out, &body);
    }

    /// The conversion of `arg`, unpadded.
    fn body(&self, out: &mut String, arg: Arg<'_>, size: usize, symbols: &Symbols) {
        let _ = match (self.conv, arg) {
            (_, Arg::Str(s)) => {
                match self.precision {
                    Some(p) => out.extend(s.chars().take(p)),
                    None => out.push_str(s),
                }
                Ok(())
            }
            (b'd' | b'i', Arg::Int(v)) => {
                let v = sign_extend(v, size);
                let sign = if v < 0 {
                    "-"
                } else if self.plus {
                    "+"
                } else if self.space {
                    " "
                } else {
                    ""
                };
                write!(out, "{sign}{}", v.unsigned_abs())
            }
            (b'u', Arg::Int(v)) => write!(out, "{}", truncate(v, size)),
            (b'x', Arg::Int(v)) => {
                let v = truncate(v, size);
                write!(out, "{}{:x}", self.prefix("0x", v), v)
            }
            (b'X', Arg::Int(v)) => {
                let v = truncate(v, size);
                write!(out, "{}{:X}", self.prefix("0X", v), v)
            }
            (b'o', Arg::Int(v)) => {
                let v = truncate(v, size);
                write!(out, "{}{:o}", self.prefix("0", v), v)
            }
            (b'c', Arg::Int(v)) => {
                out.push(char::from(v as u8));
                Ok(())
            }
            (b'p', Arg::Int(v)) => {
                write_pointer(out, v, self.ptr_ext, symbols);
                Ok(())
            }
            (_, Arg::Int(v)) => write!(out, "{v}"),
        };
    }

    /// The `#` flag's prefix, which a zero goes without.
    fn prefix(&self, prefix: &'static str, v: u64) -> &'static str {
        match self.alt && v != 0 {
            true => prefix,
            false => "",
        }
    }

    /// The width to pad to: 0 without one, or for a `*` no argument has replaced.
    fn pad_width(&self) -> usize {
        self.width.filter(|&w| w != usize::MAX).unwrap_or(0)
    }

    fn pad(&self, out: &mut String, body: &str) {
        let fill = self.pad_width().saturating_sub(body.chars().count());
        if fill == 0 {
            out.push_str(body);
        } else if self.left {
            out.push_str(body);
            out.extend((0..fill).map(|_| ' '));
        } else if self.zero && self.conv != b's' {
            // Zeros go after a sign or 0x prefix.
            let mut split = usize::from(body.starts_with(['-', '+', ' ']));
            if body[split..].starts_with("0x") || body[split..].starts_with("0X") {
                split += 2;
            }
            out.push_str(&body[..split]);
            out.extend((0..fill).map(|_| '0'));
            out.push_str(&body[split..]);
        } else {
            out.extend((0..fill).map(|_| ' '));
            out.push_str(body);
        }
    }
}

fn truncate(v: u64, size: usize) -> u64 {
    if size >= 8 {
        v
    } else {
        v & ((1u64 << (8 * size)) - 1)
    }
}

fn sign_extend(v: u64, size: usize) -> i64 {
    let shift = 64 - 8 * size.clamp(1, 8) as u32;
    ((v << shift) as i64) >> shift
}

/// Writes at the end of `out` what `%p` prints: the address; `%ps`/`%pf` the symbol,
/// `%pS`/`%pF` the symbol with its offset, as the kernel does when it prints the same field.
pub fn write_pointer(out: &mut String, v: u64, ext: Option<u8>, symbols: &Symbols) {
    let sym = match ext {
        Some(b's' | b'f' | b'S' | b'F' | b'B') => symbols.lookup(v),
        _ => None,
    };
    let _ = match (sym, ext) {
        (Some(s), Some(b's' | b'f')) if bare(&s) => {
            out.push_str(&s.name);
            with_module(out, s.module.as_deref());
            Ok(())
        }
        (Some(s), Some(b'S' | b'F' | b'B')) if s.inside() => {
            let r = write!(
                out,
                "{}+0x{:x}/0x{:x}",
                s.name,
                s.offset,
                s.size.unwrap_or(0)
            );
            with_module(out, s.module.as_deref());
            r
        }
        _ => write!(out, "0x{v:x}"),
    };
}

/// The symbol `%ps` and `%pf` print `v` as: the one it starts or lies inside; `None` when they
/// print the number.
pub fn bare_symbol<'s>(v: u64, symbols: &'s Symbols) -> Option<Symbol<'s>> {
    symbols.lookup(v).filter(bare)
}

/// Whether `%ps` prints the symbol rather than the number.
fn bare(s: &Symbol<'_>) -> bool {
    s.offset == 0 || s.inside()
}

/// A module's symbol is `name [module]`, as the kernel prints it; the offset goes before the
/// module.
fn with_module(out: &mut String, module: Option<&str>) {
    if let Some(module) = module {
        out.push(' ');
        out.push_str(module);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fmt(spec: &str, arg: Arg<'_>, size: usize) -> String {
        let (s, n) = Spec::parse(spec).unwrap();
        assert_eq!(n, spec.len(), "{spec}");
        let mut out = String::new();
        s.write(
            &mut out,
            arg,
            size,
            &Symbols::new(
                b"ffffffff81000000 t hrtimer_wakeup\nffffffff81000100 t next\n\
                  ffffffffc0000000 t noise_worker_start\t[noise]\nffffffffc00000b0 t end\n",
            ),
        );
        out
    }

    #[test]
    fn integers_strings_and_pointers() {
        assert_eq!(fmt("%03d", Arg::Int(1), 4), "001");
        assert_eq!(fmt("%d", Arg::Int(u64::from(u32::MAX)), 4), "-1");
        assert_eq!(fmt("%u", Arg::Int(u64::from(u32::MAX)), 4), "4294967295");
        assert_eq!(fmt("%lld", Arg::Int(u64::MAX), 8), "-1");
        assert_eq!(fmt("%#x", Arg::Int(255), 4), "0xff");
        assert_eq!(fmt("%08lx", Arg::Int(255), 8), "000000ff");
        assert_eq!(fmt("%-5d", Arg::Int(7), 4), "7    ");
        assert_eq!(fmt("%5s", Arg::Str("ab"), 0), "   ab");
        assert_eq!(fmt("%.2s", Arg::Str("abc"), 0), "ab");
        assert_eq!(fmt("%hhu", Arg::Int(0x1ff), 1), "255");
        assert_eq!(
            fmt("%ps", Arg::Int(0xffffffff81000000), 8),
            "hrtimer_wakeup"
        );
        assert_eq!(
            fmt("%pS", Arg::Int(0xffffffff81000010), 8),
            "hrtimer_wakeup+0x10/0x100"
        );
        // The kernel prints a module's name after the offset.
        assert_eq!(
            fmt("%pS", Arg::Int(0xffffffffc000008b), 8),
            "noise_worker_start+0x8b/0xb0 [noise]"
        );
        assert_eq!(
            fmt("%p", Arg::Int(0xffff888000001000), 8),
            "0xffff888000001000"
        );
        assert_eq!(fmt("%ps", Arg::Int(0x10), 8), "0x10");
    }

    /// Without a width a conversion is written straight after what the text holds; with
    /// one it is padded as a whole, prefix and sign included.
    #[test]
    fn flags_prefixes_and_appending() {
        assert_eq!(fmt("%#x", Arg::Int(0), 4), "0");
        assert_eq!(fmt("%#X", Arg::Int(255), 4), "0XFF");
        assert_eq!(fmt("%#o", Arg::Int(8), 4), "010");
        assert_eq!(fmt("%#08x", Arg::Int(255), 4), "0x0000ff");
        assert_eq!(fmt("%+d", Arg::Int(5), 4), "+5");
        assert_eq!(fmt("% d", Arg::Int(5), 4), " 5");
        assert_eq!(fmt("%+05d", Arg::Int(u64::MAX), 8), "-0001");
        assert_eq!(fmt("%c", Arg::Int(0x41), 1), "A");
        assert_eq!(
            fmt("%ps", Arg::Int(0xffffffffc0000000), 8),
            "noise_worker_start [noise]"
        );
        let symbols = Symbols::new(b"ffffffff81000000 t hrtimer_wakeup\n");
        let mut out = String::from("function=");
        for spec in ["%ps", "% d", "%llu"] {
            let (s, _) = Spec::parse(spec).unwrap();
            s.write(&mut out, Arg::Int(0xffffffff81000000), 8, &symbols);
            out.push(' ');
        }
        assert_eq!(
            out,
            "function=hrtimer_wakeup -2130706432 18446744071578845184 "
        );
    }

    #[test]
    fn arg_sizes_follow_length_modifiers() {
        let size = |s: &str| Spec::parse(s).unwrap().0.arg_size(8);
        assert_eq!(
            (
                size("%d"),
                size("%ld"),
                size("%llu"),
                size("%hd"),
                size("%hhx")
            ),
            (4, 8, 8, 2, 1)
        );
        assert_eq!(
            (size("%p"), size("%pS"), size("%zu"), size("%c")),
            (8, 8, 8, 1)
        );
        assert_eq!(Spec::parse("%*d").unwrap().0.width, Some(usize::MAX));
        assert!(Spec::parse("%").is_none());
        assert!(Spec::parse("%\u{fffd}").is_none());
    }
}
