//! An event's format file (`events/<system>/<event>/format`): its fields' offsets,
//! sizes and signedness, and its print format. This is the schema every record is decoded
//! with, so it is parsed once per event type and records are then read by offset.

use super::printf::Spec;
use std::sync::Arc;

/// How a field's bytes are to be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldKind {
    /// A number (or an array of `count` numbers of `elem` bytes when `count > 1`).
    Number { elem: usize, count: usize },
    /// A pointer or a kernel address held in an `unsigned long`.
    Pointer,
    /// A fixed `char name[N]`, NUL-padded.
    CharArray,
    /// `__data_loc`: a u32 holding (length << 16 | offset from the record start).
    DataLoc { string: bool, elem: usize },
    /// `__rel_loc`: like `__data_loc`, the offset counted from the end of this field.
    RelLoc { string: bool, elem: usize },
    /// `type name[]` of size 0 at the end of the record: everything after `offset`.
    Tail { string: bool, elem: usize },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Field {
    pub name: String,
    pub offset: usize,
    pub size: usize,
    pub signed: bool,
    pub kind: FieldKind,
    /// The conversion the print format applies to the field (`%d`, `%03d`, `%ps`, `%lx`…),
    /// which is how the kernel and trace-cmd's raw output print it.
    pub spec: Option<Spec>,
}

/// One event type as the kernel described it.
#[derive(Debug, Clone)]
pub struct EventFormat {
    pub system: String,
    pub name: Arc<str>,
    /// Fields after the `common_*` ones, in order.
    pub fields: Vec<Field>,
    pub print_fmt: String,
}

impl EventFormat {
    pub fn field(&self, name: &str) -> Option<&Field> {
        self.fields.iter().find(|f| f.name == name)
    }

    /// Parses a format file. `long_size` is the traced kernel's (4 or 8), needed to know
    /// which `unsigned long` fields hold addresses.
    pub fn parse(system: &str, text: &str, long_size: usize) -> Result<EventFormat, String> {
        let mut name = None;
        let mut fields = Vec::new();
        let mut print_fmt = String::new();
        for line in text.lines() {
            let line = line.trim();
            if let Some(v) = line.strip_prefix("name:") {
                name = Some(v.trim());
            } else if let Some(v) = line.strip_prefix("print fmt:") {
                print_fmt = v.trim().to_string();
            } else if line.starts_with("field:") {
                let f = parse_field(line, long_size)
                    .ok_or_else(|| format!("cannot read field line {line:?}"))?;
                if !f.name.starts_with("common_") {
                    fields.push(f);
                }
            }
        }
        let name = name.ok_or("format without a name: line")?;
        let mut format = EventFormat {
            system: system.to_string(),
            name: Arc::from(name),
            fields,
            print_fmt,
        };
        format.attach_specs();
        Ok(format)
    }

    /// Gives each field the conversion its print format applies to `REC->field`, which is
    /// how the kernel prints it (`%ps` names a function, `%03d` pads a CPU number).
    fn attach_specs(&mut self) {
        let fmt = quoted_part(&self.print_fmt);
        // After the opening quote and the literal comes the closing quote, then the args.
        let args = top_level_args(self.print_fmt.get(fmt.len() + 1..).unwrap_or(""));
        for (spec, arg) in conversions(fmt).into_iter().zip(args) {
            let (Some(spec), Some(name)) = (spec, arg.trim().strip_prefix("REC->")) else {
                continue;
            };
            if let Some(f) = self.fields.iter_mut().find(|f| f.name == name) {
                f.spec.get_or_insert(spec);
            }
        }
    }
}

/// The conversions of a format string in order, one per argument they take: a `*` width or
/// precision takes an argument of its own, given as `None` before its conversion.
fn conversions(fmt: &str) -> Vec<Option<Spec>> {
    let mut out = Vec::new();
    let mut rest = fmt;
    while let Some(i) = rest.find('%') {
        rest = &rest[i..];
        if rest.starts_with("%%") {
            rest = &rest[2..];
            continue;
        }
        let Some((spec, len)) = Spec::parse(rest) else {
            rest = &rest[1..];
            continue;
        };
        let stars = [spec.width, spec.precision];
        out.extend(
            stars
                .iter()
                .filter(|&&n| n == Some(usize::MAX))
                .map(|_| None),
        );
        out.push(Some(spec));
        rest = &rest[len..];
    }
    out
}

/// The arguments after the format string (`", REC->a, (REC->b ? 1 : 0)` → `REC->a`, …),
/// split at commas outside parentheses, brackets and braces.
fn top_level_args(after_fmt: &str) -> Vec<&str> {
    let rest = after_fmt.trim_start_matches('"').trim_start();
    let rest = rest.strip_prefix(',').unwrap_or(rest);
    let mut args = Vec::new();
    let (mut depth, mut start, mut quoted) = (0i32, 0, false);
    let b = rest.as_bytes();
    for (i, &c) in b.iter().enumerate() {
        match c {
            b'"' if i == 0 || b[i - 1] != b'\\' => quoted = !quoted,
            _ if quoted => {}
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => depth -= 1,
            b',' if depth == 0 => {
                args.push(&rest[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    if !rest[start..].trim().is_empty() {
        args.push(&rest[start..]);
    }
    args
}

/// The string literal at the start of a print fmt (`"…", REC->a, …`), escapes left as they are.
fn quoted_part(p: &str) -> &str {
    let Some(rest) = p.strip_prefix('"') else {
        return "";
    };
    let b = rest.as_bytes();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'\\' => i += 2,
            b'"' => return &rest[..i],
            _ => i += 1,
        }
    }
    rest
}

/// `field:unsigned char prev_comm[16]; offset:8; size:16; signed:0;` (tab-separated)
fn parse_field(line: &str, long_size: usize) -> Option<Field> {
    let mut decl = "";
    let (mut offset, mut size, mut signed) = (None, None, false);
    for part in line.split(';') {
        let part = part.trim();
        if let Some(d) = part.strip_prefix("field:") {
            decl = d.trim();
        } else if let Some(v) = part.strip_prefix("offset:") {
            offset = v.trim().parse().ok();
        } else if let Some(v) = part.strip_prefix("size:") {
            size = v.trim().parse().ok();
        } else if let Some(v) = part.strip_prefix("signed:") {
            signed = v.trim() == "1";
        }
    }
    let (offset, size): (usize, usize) = (offset?, size?);
    let (ty, name, dim) = split_decl(decl)?;
    let string = ty.contains("char") && !ty.contains('*');
    let elem = elem_size(ty, long_size);
    let kind = if let Some(rest) = ty.strip_prefix("__data_loc") {
        FieldKind::DataLoc {
            string: rest.contains("char"),
            elem: elem_size(rest.trim_end_matches("[]"), long_size),
        }
    } else if let Some(rest) = ty.strip_prefix("__rel_loc") {
        FieldKind::RelLoc {
            string: rest.contains("char"),
            elem: elem_size(rest.trim_end_matches("[]"), long_size),
        }
    } else if size == 0 {
        // `char buf[]`, or on older kernels `u32 buf` of size 0: the rest of the record.
        FieldKind::Tail { string, elem }
    } else if let Some(dim) = dim {
        match dim.parse::<usize>() {
            Ok(_) if string => FieldKind::CharArray,
            Ok(n) => FieldKind::Number {
                elem: size.checked_div(n).unwrap_or(elem),
                count: n,
            },
            // `type name[SOME_MACRO]`: only the size is known.
            Err(_) => FieldKind::Number {
                elem,
                count: size / elem.max(1),
            },
        }
    } else if ty.contains('*')
        || (ty.contains("long") && !ty.contains("long long") && size == long_size && !signed)
    {
        FieldKind::Pointer
    } else {
        FieldKind::Number {
            elem: size,
            count: 1,
        }
    };
    Some(Field {
        name: name.to_string(),
        offset,
        size,
        signed,
        kind,
        spec: None,
    })
}

/// `unsigned char prev_comm[16]` → (`unsigned char`, `prev_comm`, Some("16")).
fn split_decl(decl: &str) -> Option<(&str, &str, Option<&str>)> {
    let (head, dim) = match decl.strip_suffix(']') {
        Some(d) => {
            let open = d.rfind('[')?;
            (&d[..open], Some(&d[open + 1..]))
        }
        None => (decl, None),
    };
    let head = head.trim_end();
    let start = head
        .char_indices()
        .rev()
        .find(|&(_, c)| !(c.is_ascii_alphanumeric() || c == '_'))
        .map_or(0, |(i, c)| i + c.len_utf8());
    let name = &head[start..];
    if name.is_empty() {
        return None;
    }
    Some((head[..start].trim(), name, dim))
}

/// Size of one element of a C type as the tracepoints spell them.
fn elem_size(ty: &str, long_size: usize) -> usize {
    let ty = ty.trim();
    if ty.contains('*') {
        return long_size;
    }
    let last = ty.rsplit(' ').next().unwrap_or(ty);
    match last {
        "char" | "u8" | "s8" | "bool" | "__u8" => 1,
        "short" | "u16" | "s16" | "__u16" => 2,
        "long" if ty.contains("long long") => 8,
        "long" => long_size,
        "u64" | "s64" | "__u64" | "dma_addr_t" | "loff_t" | "sector_t" => 8,
        "size_t" | "ssize_t" => long_size,
        _ => 4,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SCHED_SWITCH: &str = "name: sched_switch
ID: 316
format:
\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;
\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;
\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;
\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;

\tfield:char prev_comm[16];\toffset:8;\tsize:16;\tsigned:0;
\tfield:pid_t prev_pid;\toffset:24;\tsize:4;\tsigned:1;
\tfield:int prev_prio;\toffset:28;\tsize:4;\tsigned:1;
\tfield:long prev_state;\toffset:32;\tsize:8;\tsigned:1;
\tfield:char next_comm[16];\toffset:40;\tsize:16;\tsigned:0;
\tfield:pid_t next_pid;\toffset:56;\tsize:4;\tsigned:1;
\tfield:int next_prio;\toffset:60;\tsize:4;\tsigned:1;

print fmt: \"prev_comm=%s prev_pid=%d prev_prio=%d prev_state=%s%s ==> next_comm=%s next_pid=%d next_prio=%d\", REC->prev_comm, REC->prev_pid, REC->prev_prio, (REC->prev_state & ((((0x00000000 | 0x00000001 | 0x00000002) + 1) << 1) - 1)) ? __print_flags(REC->prev_state & 3, \"|\", { 0x00000001, \"S\" }, { 0x00000002, \"D\" }) : \"R\", REC->prev_state & (((0x00000000 | 0x00000001 | 0x00000002) + 1) << 1) ? \"+\" : \"\", REC->next_comm, REC->next_pid, REC->next_prio
";

    #[test]
    fn a_real_format_file_gives_offsets_sizes_and_specs() {
        let f = EventFormat::parse("sched", SCHED_SWITCH, 8).unwrap();
        assert_eq!((&*f.name, f.fields.len()), ("sched_switch", 7));
        let prev = f.field("prev_comm").unwrap();
        assert_eq!(
            (prev.offset, prev.size, prev.kind),
            (8, 16, FieldKind::CharArray)
        );
        let state = f.field("prev_state").unwrap();
        assert_eq!(state.kind, FieldKind::Number { elem: 8, count: 1 });
        assert!(state.signed);
        let conv = |name| f.field(name).unwrap().spec.map(|s| s.conv);
        assert_eq!(conv("prev_pid"), Some(b'd'));
        assert_eq!(conv("next_comm"), Some(b's'));
        // prev_state is printed through an expression, so it has no conversion of its own.
        assert_eq!(state.spec, None);
    }

    #[test]
    fn declarations_of_every_shape() {
        let kind = |line: &str| parse_field(line, 8).unwrap().kind;
        assert_eq!(
            kind("field:__data_loc char[] name;\toffset:12;\tsize:4;\tsigned:0;"),
            FieldKind::DataLoc {
                string: true,
                elem: 1
            }
        );
        assert_eq!(
            kind("field:__rel_loc u32[] ids;\toffset:12;\tsize:4;\tsigned:0;"),
            FieldKind::RelLoc {
                string: false,
                elem: 4
            }
        );
        assert_eq!(
            kind("field:char buf[];\toffset:16;\tsize:0;\tsigned:1;"),
            FieldKind::Tail {
                string: true,
                elem: 1
            }
        );
        assert_eq!(
            kind("field:u32 buf[];\toffset:24;\tsize:0;\tsigned:0;"),
            FieldKind::Tail {
                string: false,
                elem: 4
            }
        );
        assert_eq!(
            kind("field:void * hrtimer;\toffset:8;\tsize:8;\tsigned:0;"),
            FieldKind::Pointer
        );
        assert_eq!(
            kind("field:unsigned long ip;\toffset:8;\tsize:8;\tsigned:0;"),
            FieldKind::Pointer
        );
        assert_eq!(
            kind("field:unsigned long args[6];\toffset:16;\tsize:48;\tsigned:0;"),
            FieldKind::Number { elem: 8, count: 6 }
        );
        assert_eq!(
            kind("field:u32 buf;\toffset:16;\tsize:0;\tsigned:0;"),
            FieldKind::Tail {
                string: false,
                elem: 4
            }
        );
        assert!(parse_field("field:;\toffset:1;", 8).is_none());
    }

    #[test]
    fn conversions_and_arguments() {
        assert_eq!(quoted_part(r#""a=%s \"q\"", REC->a"#), r#"a=%s \"q\""#);
        let c: Vec<_> = conversions("w=%*d %% f=%ps %\u{fffd} n=%.*s")
            .iter()
            .map(|s| s.map(|s| (s.conv, s.ptr_ext)))
            .collect();
        assert_eq!(
            c,
            vec![
                None,
                Some((b'd', None)),
                Some((b'p', Some(b's'))),
                None,
                Some((b's', None))
            ]
        );
        let a = top_level_args(r#"", REC->work, f(REC->x, 1), "a,b", REC->function"#);
        assert_eq!(
            a,
            vec![" REC->work", " f(REC->x, 1)", r#" "a,b""#, " REC->function"]
        );
    }
}
