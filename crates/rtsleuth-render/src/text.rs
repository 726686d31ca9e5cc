use crate::Exporter;
use rtsleuth_analyze::document::{Align, Block, Document, Table};
use std::io;

/// The readable report printed by default.
pub struct TextExporter;

impl Exporter for TextExporter {
    fn export(&self, doc: &Document, out: &mut dyn io::Write) -> io::Result<()> {
        for (i, block) in doc.blocks.iter().enumerate() {
            if i > 0 {
                writeln!(out)?;
            }
            write_block(out, block)?;
        }
        for w in &doc.warnings {
            writeln!(out, "warning: {w}")?;
        }
        Ok(())
    }
}

/// One block as the text report prints it (blocks are separated by an empty line).
pub fn write_block(out: &mut dyn io::Write, block: &Block) -> io::Result<()> {
    match block {
        Block::Pairs(title, pairs) => {
            heading(out, title)?;
            let width = pairs.iter().map(|(k, _)| k.len()).max().unwrap_or(0);
            for (k, v) in pairs {
                writeln!(out, "  {k:<width$}  {v}")?;
            }
        }
        Block::Table(t) => table(out, t)?,
        Block::Lines(title, lines) => {
            heading(out, title)?;
            for l in lines {
                writeln!(out, "  {l}")?;
            }
        }
    }
    Ok(())
}

fn heading(out: &mut dyn io::Write, title: &str) -> io::Result<()> {
    if !title.is_empty() {
        writeln!(out, "{title}")?;
    }
    Ok(())
}

fn table(out: &mut dyn io::Write, t: &Table) -> io::Result<()> {
    heading(out, &t.title)?;
    let mut widths: Vec<usize> = t.columns.iter().map(|(n, _)| n.chars().count()).collect();
    for row in &t.rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let line = |cells: &mut dyn Iterator<Item = (&String, (usize, Align))>| {
        let parts: Vec<String> = cells
            .map(|(c, (w, a))| match a {
                Align::Left => format!("{c:<w$}"),
                Align::Right => format!("{c:>w$}"),
            })
            .collect();
        format!("  {}", parts.join("  ")).trim_end().to_string()
    };
    let aligns = || {
        widths
            .iter()
            .copied()
            .zip(t.columns.iter().map(|(_, a)| *a))
    };
    let names: Vec<String> = t.columns.iter().map(|(n, _)| n.clone()).collect();
    writeln!(out, "{}", line(&mut names.iter().zip(aligns())))?;
    let rule: Vec<String> = widths.iter().map(|w| "-".repeat(*w)).collect();
    writeln!(out, "  {}", rule.join("  "))?;
    for row in &t.rows {
        writeln!(out, "{}", line(&mut row.iter().zip(aligns())))?;
    }
    if t.rows.is_empty() {
        writeln!(out, "  (none)")?;
    }
    Ok(())
}
