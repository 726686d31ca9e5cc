//! An event's payload as text, so that events from trace.dat are the same events as from the
//! kernel's text: the ftrace-internal events (`print`, `bprint`, `bputs`, `function`) as the
//! kernel prints them, every other event as `trace-cmd report -R` prints it, `name=value` for
//! each field with the conversion its print format uses.

use super::bprint::{self, Args};
use super::event_format::{EventFormat, Field, FieldKind};
use super::fields;
use super::kallsyms::Symbols;
use super::printf::{self, Arg};
use super::printk::PrintkFormats;
use crate::ring_buffer::Endian;
use std::fmt::Write;

/// What rendering needs besides the record.
pub struct Context<'m> {
    pub endian: Endian,
    pub long_size: usize,
    pub symbols: &'m Symbols<'m>,
    pub printk: &'m PrintkFormats,
}

/// Writes the payload of one record of `format` into `out`.
pub fn payload(out: &mut String, format: &EventFormat, data: &[u8], cx: &Context<'_>) {
    if format.system == "ftrace" && kernel_style(out, format, data, cx).is_some() {
        return;
    }
    for (i, f) in format.fields.iter().enumerate() {
        if i > 0 {
            out.push(' ');
        }
        if format.system == "preemptirq" && text_offset(out, f, data, cx).is_some() {
            continue;
        }
        out.push_str(&f.name);
        out.push('=');
        value(out, f, data, cx);
    }
}

/// `preemptirq` events record their callers as 32-bit offsets from `_stext` (`caller_offs`)
/// and print them as `caller=%pS` of `_stext` plus the offset: written here the same way, so
/// that the events read as they do from the kernel's text. `None` when the field is not such
/// an offset or the file's kallsyms has no `_stext`.
fn text_offset(out: &mut String, f: &Field, data: &[u8], cx: &Context<'_>) -> Option<()> {
    let name = f.name.strip_suffix("_offs")?;
    let stext = cx.symbols.stext()?;
    let offs = cx.endian.int(data.get(f.offset..)?, f.size)?;
    let addr = stext.wrapping_add(offs as u64);
    out.push_str(name);
    out.push('=');
    printf::write_pointer(out, addr, Some(b'S'), cx.symbols);
    Some(())
}

/// `print` → `ip: text`, `bputs`/`bprint` → `ip: formatted text`, `function` →
/// `func <-parent`. `None` when the record lacks what the event should have.
fn kernel_style(
    out: &mut String,
    format: &EventFormat,
    data: &[u8],
    cx: &Context<'_>,
) -> Option<()> {
    let e = cx.endian;
    let addr = |name: &str| fields::uint(format.field(name)?, data, e);
    // Every field is read before anything is written: a record without one prints as fields.
    let sym = |out: &mut String, a: u64| printf::write_pointer(out, a, Some(b's'), cx.symbols);
    let ip = |out: &mut String, a: u64| {
        sym(out, a);
        out.push_str(": ");
    };
    match &*format.name {
        "print" => {
            let buf = fields::bytes(format.field("buf")?, data, e)?;
            ip(out, addr("ip")?);
            push_text(out, buf);
        }
        "bputs" => {
            let s = addr("str")?;
            ip(out, addr("ip")?);
            match cx.printk.get(s) {
                Some(text) => out.push_str(text),
                None => {
                    let _ = write!(out, "0x{s:x}");
                }
            }
        }
        "bprint" => {
            let fmt = addr("fmt")?;
            let buf = fields::bytes(format.field("buf")?, data, e)?;
            ip(out, addr("ip")?);
            match cx.printk.get(fmt) {
                Some(f) => {
                    let args = Args {
                        buf,
                        endian: e,
                        long_size: cx.long_size,
                    };
                    bprint::format(out, f, &args, cx.symbols);
                }
                None => {
                    let _ = write!(out, "(format 0x{fmt:x} not in the printk formats)");
                }
            }
        }
        "function" => {
            let (at, parent) = (addr("ip")?, addr("parent_ip")?);
            sym(out, at);
            out.push_str(" <-");
            sym(out, parent);
        }
        _ => return None,
    }
    Some(())
}

fn push_text(out: &mut String, b: &[u8]) {
    match fields::c_str(b) {
        Ok(s) => out.push_str(s),
        Err(raw) => out.push_str(&String::from_utf8_lossy(raw)),
    }
}

/// One field's value, as trace-cmd's raw output prints it.
fn value(out: &mut String, f: &Field, data: &[u8], cx: &Context<'_>) {
    let e = cx.endian;
    if fields::is_text(f) {
        if let Some(b) = fields::bytes(f, data, e) {
            push_text(out, b);
        }
        return;
    }
    match f.kind {
        FieldKind::Number { count: 1, .. } | FieldKind::Pointer => {
            let Some(v) = fields::uint(f, data, e) else {
                out.push('?');
                return;
            };
            match f.spec {
                // A `const char *` printed with %s points at a string the kernel registered in
                // the printk formats (`__tracepoint_string`: ARM's IPI kinds in ipi_entry).
                Some(s) if s.conv == b's' => match cx.printk.get(v) {
                    Some(text) => out.push_str(text),
                    None => {
                        let _ = write!(out, "0x{v:x}");
                    }
                },
                Some(s) => s.write(out, Arg::Int(v), f.size, cx.symbols),
                None if f.kind == FieldKind::Pointer => {
                    let _ = write!(out, "0x{v:x}");
                }
                None if f.signed => {
                    let shift = 64 - 8 * f.size.clamp(1, 8) as u32;
                    let _ = write!(out, "{}", ((v << shift) as i64) >> shift);
                }
                None => {
                    let _ = write!(out, "{v}");
                }
            }
        }
        _ => {
            // Arrays: their bytes in hex, as trace-cmd prints them.
            out.push_str("ARRAY[");
            if let Some(b) = fields::bytes(f, data, e) {
                for (i, byte) in b.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    let _ = write!(out, "{byte:02x}");
                }
            }
            out.push(']');
        }
    }
}
