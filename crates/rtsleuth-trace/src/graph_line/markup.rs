//! Hand-drawn markup in pasted function_graph excerpts, and where the call text starts
//! despite it.
//!
//! Latency reports on mailing lists paste graph output and draw on it: an arrow (`+---->`)
//! pointing at the call that matters, a bar (`|`) tying a stretch of calls to a note, a note
//! (`additional part`, `(~7.5us)`) in the blank indentation between the duration's `|` and
//! the call. Writers draw over the blanks, in overwrite mode, so that the picture still lines
//! up: the call text keeps its column, and the column is what gives a call its depth. So the
//! markup is skipped, not removed, and the depth is read from the column where the call text
//! starts, exactly as for a clean line. Counting from the start of the body (the text after
//! the separator) keeps the count independent of what was written in front of the separator.
//!
//! The rule, for the body:
//!
//! - The call text starts at the first *token* that is `}` (an exit) or a function name
//!   directly followed by its `(` (`name(`, or a module's `name [module](`); a name is a run
//!   of symbol characters `A-Z a-z 0-9 _ . $`, as the kernel's symbols are.
//! - Everything before it must be markup, token by token: blanks; drawing characters
//!   `| + - < > * = ^`; parenthesised notes `( ... )` holding no other parenthesis; plain
//!   words, runs of anything else but `( ) { } ;`. A word is text, not a call, because no
//!   `(` follows it directly: a note must leave a blank before a parenthesis.
//! - Anything else (`{`, `;` or `)` in the gutter, a `(` never closed) means the line is not
//!   understood, rather than a guess.
//!
//! A clean line is the degenerate case: blanks, then the call text, nothing marked. A body of
//! markup alone, with at least one drawing character (a bar carried on between two calls, an
//! arrow and its note), is a drawing line; so is a `/* ... */` comment a bar was drawn through,
//! since a comment carries no call either way. Markup after the call text is not recognised.

/// What the body of a line holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Gutter<'a> {
    /// A call text after blanks and possibly markup.
    Call(Body<'a>),
    /// A `/* ... */` comment after blanks only.
    Comment,
    /// Markup only, with at least one drawing character, or such markup before a comment.
    Drawing,
    /// Neither: damaged, or text that is not markup.
    Neither,
}

/// Where the call text of a body starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Body<'a> {
    /// Characters from the start of the body to the call text: its indentation.
    pub column: usize,
    /// The call text, trailing blanks trimmed.
    pub text: &'a str,
    /// The function it starts with; `None` when it starts with `}` (an exit).
    pub name: Option<&'a str>,
    /// Whether anything other than blanks came before it.
    pub marked: bool,
}

/// The characters arrows and bars are drawn with.
fn drawing(b: u8) -> bool {
    matches!(b, b'|' | b'+' | b'-' | b'<' | b'>' | b'*' | b'=' | b'^')
}

/// Only a space is a blank: how wide a tab was drawn is unknowable, so a tab makes a word.
fn blank(b: u8) -> bool {
    b == b' '
}

/// The characters of a kernel symbol.
fn symbol(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'$')
}

/// How many symbol characters `s` starts with.
fn symbol_run(s: &str) -> usize {
    s.bytes().take_while(|&b| symbol(b)).count()
}

/// The function name `s` starts with, when its `(` follows directly: `name(`, or
/// `name [module](`. The kernel prints a module's function with its module in brackets, the
/// one name with a space before its `(`; the bracket stays in the name, as the timer events
/// print it, so that the two reports name the function alike.
fn call_name(s: &str) -> Option<&str> {
    let name = symbol_run(s);
    if name == 0 {
        return None;
    }
    let rest = &s[name..];
    if rest.starts_with('(') {
        return Some(&s[..name]);
    }
    let m = rest.strip_prefix(" [")?;
    let module = symbol_run(m);
    (module > 0 && m[module..].starts_with("](")).then(|| &s[..name + 2 + module + 1])
}

/// Splits the body of a line (the text after the separator) into markup and call text.
pub fn split(body: &str) -> Gutter<'_> {
    let bytes = body.as_bytes();
    let mut i = super::text::leading_spaces(body);
    let mut marked = false;
    let mut drawn = false;
    while i < bytes.len() {
        let b = bytes[i];
        if body[i..].starts_with("/*") {
            return match (marked, drawn) {
                (false, _) => Gutter::Comment,
                (true, true) => Gutter::Drawing,
                (true, false) => Gutter::Neither,
            };
        }
        let name = call_name(&body[i..]);
        if b == b'}' || name.is_some() {
            let column = if marked { body[..i].chars().count() } else { i };
            return Gutter::Call(Body {
                column,
                text: super::text::trim_end(&body[i..]),
                name,
                marked,
            });
        }
        if blank(b) {
            i += 1;
            continue;
        }
        marked = true;
        if drawing(b) {
            drawn = true;
            i += 1;
        } else if b == b'(' {
            match body[i + 1..].bytes().position(|c| c == b'(' || c == b')') {
                Some(n) if bytes[i + 1 + n] == b')' => i += n + 2,
                _ => return Gutter::Neither,
            }
        } else if matches!(b, b')' | b'{' | b';') {
            return Gutter::Neither;
        } else {
            i += body[i..]
                .bytes()
                .take_while(|&c| !blank(c) && !drawing(c) && !b"(){};".contains(&c))
                .count();
        }
    }
    if drawn {
        Gutter::Drawing
    } else {
        Gutter::Neither
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The column and text of the call in `body`, and whether it was marked.
    fn call(body: &str) -> (usize, &str, bool) {
        match split(body) {
            Gutter::Call(b) => (b.column, b.text, b.marked),
            other => panic!("{body:?} is {other:?}"),
        }
    }

    #[test]
    fn clean_bodies_are_unmarked() {
        assert_eq!(call("    do_sys_open() {"), (4, "do_sys_open() {", false));
        assert_eq!(
            call("  __x64_sys_nanosleep();  "),
            (2, "__x64_sys_nanosleep();", false)
        );
        assert_eq!(call("      foo.isra.0();"), (6, "foo.isra.0();", false));
        assert_eq!(
            call("  } /* hrtimer_interrupt */"),
            (2, "} /* hrtimer_interrupt */", false)
        );
        assert_eq!(
            call("  hardirq_fire [rtsleuth_noise]() {"),
            (2, "hardirq_fire [rtsleuth_noise]() {", false)
        );
        for (body, name) in [
            (
                "  hardirq_fire [rtsleuth_noise]() {",
                Some("hardirq_fire [rtsleuth_noise]"),
            ),
            ("  +-->foo.isra.0();", Some("foo.isra.0")),
            ("  do_open(dfd=0xffffff9c) {", Some("do_open")),
            ("  } /* f */", None),
        ] {
            match split(body) {
                Gutter::Call(b) => assert_eq!(b.name, name, "{body:?}"),
                other => panic!("{body:?} is {other:?}"),
            }
        }
        assert_eq!(
            call("  do_open(dfd=0xffffff9c, name=0xffff88810a5b8000) {").0,
            2
        );
    }

    /// An arrow drawn into the indentation, glued to the call or to an exit.
    #[test]
    fn arrows() {
        assert_eq!(
            call("              +---->ktime_get();"),
            (20, "ktime_get();", true)
        );
        assert_eq!(call("              +---->}"), (20, "}", true));
        assert_eq!(
            call("  <==== slow   tick_sched_timer() {"),
            (15, "tick_sched_timer() {", true)
        );
        assert_eq!(call("  *** ^^ foo();").1, "foo();");
    }

    /// Bars down the indentation, and words written next to them.
    #[test]
    fn bars_and_words() {
        assert_eq!(
            call("  | additional part      preempt_count_sub();"),
            (25, "preempt_count_sub();", true)
        );
        assert_eq!(
            call("  |   |     hrtimer_forward();"),
            (12, "hrtimer_forward();", true)
        );
        assert_eq!(call("  |  } /* f */"), (5, "} /* f */", true));
    }

    /// A parenthesised note, which may hold blanks and non-ASCII text; the column counts
    /// characters, as the writer saw them lined up.
    #[test]
    fn notes() {
        assert_eq!(
            call("   (~7.5us)   |       _raw_spin_lock() {"),
            (22, "_raw_spin_lock() {", true)
        );
        assert_eq!(call(" (7.5 µs) |   f();"), (14, "f();", true));
        // A word glued to its note's parenthesis would be a call: `slow(7us)` is read as one,
        // and the rest of the line does not end like a call (the caller rejects it).
        assert_eq!(call("  slow(7us) f();").1, "slow(7us) f();");
    }

    #[test]
    fn drawings_alone() {
        for body in [
            "              |",
            "   +---------+",
            "     ^--- the extra part",
            "  |     /* sched_wakeup: comm=a pid=2 prio=9 target_cpu=000 */",
        ] {
            assert_eq!(split(body), Gutter::Drawing, "{body:?}");
        }
        assert_eq!(split("      /* { x; } */"), Gutter::Comment);
    }

    /// Text that is neither markup nor a call: the line stays not understood.
    #[test]
    fn neither() {
        for body in [
            "",
            "        _spin_lo",
            "  (~7.5us   f();",
            "  ((x)) f();",
            "  x ; f();",
            "  x) f();",
            "  f [a b]() {",
            "  f [m]x() {",
            "  foo:bar();",
            "  (note)",
            "  note /* x */",
            "\tf();",
        ] {
            assert_eq!(split(body), Gutter::Neither, "{body:?}");
        }
    }
}
