//! The text report's blocks as HTML: the tables of `latency`, `irq` and `wq` are shown exactly
//! as those commands print them, from the same [`Block`]s, so the page cannot disagree with
//! the terminal.

use maud::{html, Markup};
use rtsleuth_analyze::document::{Align, Block, Table};

/// A table; with `limit`, only its first rows and a line saying how many were left out and
/// which command prints them all (the page must stay small on a trace with many tasks).
pub fn table(t: &Table, limit: Option<(usize, &str)>) -> Markup {
    let shown = limit.map_or(t.rows.len(), |(n, _)| n.min(t.rows.len()));
    let align = |a: &Align| match a {
        Align::Left => "l",
        Align::Right => "r",
    };
    html! {
        @if !t.title.is_empty() { h3 { (t.title) } }
        table {
            thead { tr { @for (name, a) in &t.columns { th class=(align(a)) { (name) } } } }
            tbody {
                @for row in &t.rows[..shown] {
                    tr { @for (cell, (_, a)) in row.iter().zip(&t.columns) { td class=(align(a)) { (cell) } } }
                }
            }
        }
        @if let Some((_, command)) = limit.filter(|_| shown < t.rows.len()) {
            p.note { (t.rows.len() - shown) " more rows: " code { (command) } " prints them all." }
        }
    }
}

/// Any block, whole.
pub fn block(b: &Block) -> Markup {
    match b {
        Block::Table(t) => table(t, None),
        Block::Pairs(title, pairs) => html! {
            @if !title.is_empty() { h3 { (title) } }
            table.pairs { tbody { @for (k, v) in pairs { tr { th.l { (k) } td.l { (v) } } } } }
        },
        Block::Lines(title, lines) => html! {
            @if !title.is_empty() { h3 { (title) } }
            pre { @for l in lines { (l) "\n" } }
        },
    }
}
