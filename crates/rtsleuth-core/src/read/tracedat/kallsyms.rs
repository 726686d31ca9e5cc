//! The traced machine's `/proc/kallsyms`, to name the functions that events record as
//! addresses (hrtimer callbacks, work functions, the caller of a `trace_printk`).

use std::sync::OnceLock;

/// The symbol table, parsed on first use: most reads (the scheduler events) never look up
/// an address, and a distribution kernel's kallsyms is megabytes of text.
#[derive(Debug, Default)]
pub struct Symbols {
    text: Vec<u8>,
    table: OnceLock<Table>,
}

/// Symbols sorted by address. Names are kept in one string to avoid an allocation per symbol
/// (a distribution kernel has well over 100 000).
#[derive(Debug, Default)]
struct Table {
    names: String,
    /// (address, start of the name in `names`, end of the name).
    entries: Vec<(u64, u32, u32)>,
}

/// A resolved address: the symbol and how far past its start the address lies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Symbol<'a> {
    pub name: &'a str,
    pub offset: u64,
    /// Distance to the next symbol, the kernel's `/0x…` size in `%pS`.
    pub size: Option<u64>,
}

impl Symbols {
    /// Keeps the file's kallsyms text for parsing when an address is first looked up.
    pub fn new(text: Vec<u8>) -> Symbols {
        Symbols {
            text,
            table: OnceLock::new(),
        }
    }

    /// The symbol at or below `addr`.
    pub fn lookup(&self, addr: u64) -> Option<Symbol<'_>> {
        self.table().lookup(addr)
    }

    fn table(&self) -> &Table {
        self.table
            .get_or_init(|| Table::parse(&String::from_utf8_lossy(&self.text)))
    }
}

impl Table {
    /// Parses `address type name [module]` lines. Module symbols are named `name [module]`,
    /// as the kernel's `%ps` prints them. Lines that do not parse are skipped: kallsyms is
    /// a convenience, not a structure of the file.
    fn parse(text: &str) -> Table {
        let mut s = Table::default();
        for line in text.lines() {
            let mut parts = line.split_ascii_whitespace();
            let (Some(addr), Some(_ty), Some(name)) = (parts.next(), parts.next(), parts.next())
            else {
                continue;
            };
            let Ok(addr) = u64::from_str_radix(addr, 16) else {
                continue;
            };
            if addr == 0 {
                continue;
            }
            let start = s.names.len() as u32;
            s.names.push_str(name);
            if let Some(module) = parts.next() {
                s.names.push(' ');
                s.names.push_str(module);
            }
            s.entries.push((addr, start, s.names.len() as u32));
        }
        s.entries.sort_by_key(|e| e.0);
        s
    }

    fn name(&self, i: usize) -> &str {
        let (_, a, b) = self.entries[i];
        &self.names[a as usize..b as usize]
    }

    fn lookup(&self, addr: u64) -> Option<Symbol<'_>> {
        let i = self
            .entries
            .partition_point(|e| e.0 <= addr)
            .checked_sub(1)?;
        let start = self.entries[i].0;
        let size = self.entries.get(i + 1).map(|e| e.0 - start);
        Some(Symbol {
            name: self.name(i),
            offset: addr - start,
            size,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolves_exact_and_inner_addresses_and_module_symbols() {
        let s = Symbols::new(
            b"ffffffff81000000 T _stext\nffffffff81001000 t hrtimer_wakeup\nffffffffc0100000 t timer_callback\t[irq_noise]\nbad line\n0000000000000000 A fixed_percpu_data\n".to_vec(),
        );
        assert_eq!(s.table().entries.len(), 3);
        let exact = |a| s.lookup(a).filter(|s| s.offset == 0).map(|s| s.name);
        assert_eq!(exact(0xffffffff81001000), Some("hrtimer_wakeup"));
        assert_eq!(exact(0xffffffff81001001), None);
        let inner = s.lookup(0xffffffff81000010).unwrap();
        assert_eq!(
            (inner.name, inner.offset, inner.size),
            ("_stext", 0x10, Some(0x1000))
        );
        assert_eq!(
            exact(0xffffffffc0100000),
            Some("timer_callback [irq_noise]")
        );
        assert_eq!(s.lookup(0x10), None);
    }
}
