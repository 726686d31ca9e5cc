//! The options list: typed `(id, size, data)` entries carrying the clock, the machine's uname,
//! per-CPU ring-buffer statistics, timestamp corrections and, in version 7, where every other
//! section and each instance's trace data are.

use super::bytes::{Cursor, Parsed};
use rustc_hash::FxHashMap;

/// Option ids as trace-cmd numbers them (the same in versions 6 and 7).
pub mod id {
    pub const DONE: u16 = 0;
    pub const DATE: u16 = 1;
    pub const CPUSTAT: u16 = 2;
    pub const BUFFER: u16 = 3;
    pub const TRACECLOCK: u16 = 4;
    pub const UNAME: u16 = 5;
    pub const OFFSET: u16 = 7;
    pub const CPUCOUNT: u16 = 8;
    pub const VERSION: u16 = 9;
    pub const TSC2NSEC: u16 = 14;
    pub const HEADER_INFO: u16 = 16;
    pub const FTRACE_EVENTS: u16 = 17;
    pub const EVENT_FORMATS: u16 = 18;
    pub const KALLSYMS: u16 = 19;
    pub const PRINTK: u16 = 20;
    pub const CMDLINES: u16 = 21;
    pub const BUFFER_TEXT: u16 = 22;
}

/// Where one CPU's pages are in the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CpuData {
    pub cpu: u32,
    pub offset: u64,
    /// Bytes in the file (compressed size when the file is compressed).
    pub size: u64,
}

/// One trace instance's data: the top instance is named "".
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Buffer {
    pub name: String,
    pub clock: Option<String>,
    pub cpus: Vec<CpuData>,
}

/// `x86-tsc` timestamps converted to nanoseconds: `(ts * mult) >> shift`, plus `offset`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tsc2Nsec {
    pub mult: u32,
    pub shift: u32,
    pub offset: u64,
}

impl Tsc2Nsec {
    /// The nanoseconds of TSC value `raw` (in 128 bits: `raw * mult` overflows 64).
    pub fn to_ns(self, raw: u64) -> u64 {
        ((u128::from(raw) * u128::from(self.mult)) >> self.shift) as u64 + self.offset
    }
}

#[derive(Debug, Default)]
pub struct Options {
    /// Version 7: every instance; version 6: the extra instances only (the top one's CPU
    /// table follows the options).
    pub buffers: Vec<Buffer>,
    /// Version 7: a latency-format text section (`BUFFER_TEXT`).
    pub text_buffer: Option<u64>,
    pub clock: Option<String>,
    pub uname: Option<String>,
    pub version: Option<String>,
    pub cpu_count: Option<u32>,
    /// Each CPU's `per_cpu/cpuN/stats` at extraction.
    pub cpu_stats: Vec<String>,
    /// Nanoseconds trace-cmd adds to every timestamp (`OFFSET`).
    pub ts_offset: i64,
    pub tsc2nsec: Option<Tsc2Nsec>,
    /// Version 7: section offsets by option id (`HEADER_INFO` … `CMDLINES`).
    pub sections: FxHashMap<u16, u64>,
    /// Ids rtsleuth does not use (hooks, guests, time shifts…), for a note.
    pub skipped: Vec<u16>,
}

impl Options {
    /// Reads options until `DONE`. In version 7 `DONE` carries the offset of the next options
    /// section (0 for none), which is returned; in version 6 it is a bare id.
    pub fn read(&mut self, c: &mut Cursor<'_>, version: u32) -> Parsed<Option<u64>> {
        loop {
            let id = c.u16("option id")?;
            if id == id::DONE && version < 7 {
                return Ok(None);
            }
            let size = c.u32("option size")? as usize;
            let mut data = c.sub(size, "option data")?;
            if id == id::DONE {
                let next = data.u64("next options offset")?;
                return Ok((next != 0).then_some(next));
            }
            self.apply(id, &mut data, version)?;
        }
    }

    fn apply(&mut self, option: u16, d: &mut Cursor<'_>, version: u32) -> Parsed<()> {
        let text = |d: &mut Cursor<'_>| -> Parsed<String> {
            let b = d.bytes(d.remaining(), "option text")?;
            let b = b.split(|&x| x == 0).next().unwrap_or(b);
            Ok(String::from_utf8_lossy(b).trim_end().to_string())
        };
        match option {
            id::DATE => {} // only `trace-cmd report --date` uses it
            id::CPUSTAT => self.cpu_stats.push(text(d)?),
            id::TRACECLOCK => self.clock = selected_clock(&text(d)?),
            id::UNAME => self.uname = Some(text(d)?),
            id::VERSION => self.version = Some(text(d)?),
            id::CPUCOUNT => self.cpu_count = Some(d.u32("cpu count")?),
            id::OFFSET => {
                let t = text(d)?;
                self.ts_offset = t
                    .trim()
                    .parse()
                    .map_err(|_| d.fault(format!("OFFSET option {t:?} is not a number")))?;
            }
            id::TSC2NSEC => {
                self.tsc2nsec = Some(Tsc2Nsec {
                    mult: d.u32("tsc2nsec mult")?,
                    shift: d.u32("tsc2nsec shift")?,
                    offset: d.u64("tsc2nsec offset")?,
                })
            }
            id::BUFFER if version >= 7 => self.buffers.push(buffer_v7(d)?),
            id::BUFFER => {
                // Version 6 instances: an offset to their CPU table (not read: only the top
                // instance is), then the name.
                d.u64("instance offset")?;
                let name = d.cstr("instance name")?.into_owned();
                self.buffers.push(Buffer {
                    name,
                    clock: None,
                    cpus: Vec::new(),
                });
            }
            id::BUFFER_TEXT => self.text_buffer = Some(d.u64("latency section offset")?),
            id::HEADER_INFO..=id::CMDLINES => {
                self.sections.insert(option, d.u64("section offset")?);
            }
            other => self.skipped.push(other),
        }
        Ok(())
    }

    /// Events lost per CPU as the stats options recorded them (`overrun` plus `dropped
    /// events`), in CPU order.
    pub fn lost_per_cpu(&self) -> Vec<(u32, u64)> {
        self.cpu_stat_fields(|field| {
            field("overrun:").unwrap_or(0) + field("dropped events:").unwrap_or(0)
        })
    }

    /// The CPUs whose oldest events the buffer overwrote (`overrun`, in overwrite mode): their
    /// recorded history begins late ([`crate::validity`]).
    pub fn overrun_cpus(&self) -> Vec<u32> {
        let overruns = self.cpu_stat_fields(|field| field("overrun:").unwrap_or(0));
        overruns
            .into_iter()
            .filter(|&(_, n)| n > 0)
            .map(|(cpu, _)| cpu)
            .collect()
    }

    /// One number per CPU stats option, from its `key: value` lines.
    fn cpu_stat_fields(
        &self,
        value: impl Fn(&dyn Fn(&str) -> Option<u64>) -> u64,
    ) -> Vec<(u32, u64)> {
        self.cpu_stats
            .iter()
            .filter_map(|s| {
                let field = |k: &str| {
                    s.lines()
                        .find_map(|l| l.strip_prefix(k))
                        .and_then(|v| v.trim().parse::<u64>().ok())
                };
                let cpu = u32::try_from(field("CPU:")?).ok()?;
                Some((cpu, value(&field)))
            })
            .collect()
    }
}

/// `BUFFER` in version 7: section offset, name, clock, page size, then each CPU's data.
fn buffer_v7(d: &mut Cursor<'_>) -> Parsed<Buffer> {
    d.u64("buffer section offset")?;
    let name = d.cstr("buffer name")?.into_owned();
    let clock = d.cstr("buffer clock")?.into_owned();
    d.u32("buffer page size")?;
    let n = d.u32("buffer cpu count")?;
    let mut cpus = Vec::with_capacity(n.min(4096) as usize);
    for _ in 0..n {
        cpus.push(CpuData {
            cpu: d.u32("cpu id")?,
            offset: d.u64("cpu data offset")?,
            size: d.u64("cpu data size")?,
        });
    }
    Ok(Buffer {
        name,
        clock: Some(clock).filter(|c| !c.is_empty()),
        cpus,
    })
}

/// `[local] global counter` → `local`.
fn selected_clock(s: &str) -> Option<String> {
    let a = s.find('[')?;
    let b = s[a..].find(']')? + a;
    Some(s[a + 1..b].to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ring_buffer::Endian;

    fn opt(id: u16, data: &[u8]) -> Vec<u8> {
        let mut b = id.to_le_bytes().to_vec();
        b.extend((data.len() as u32).to_le_bytes());
        b.extend(data);
        b
    }

    /// A 2.5 GHz TSC: 0.4 ns per cycle, as `mult / 2^shift` with shift 24: mult =
    /// floor(0.4 * 16777216) = 6710886. 2.5e9 cycles (one second) are then
    /// 2.5e9 * 6710886 / 16777216 = 999999940.4 ns, floored: 999999940; plus the offset.
    #[test]
    fn tsc2nsec_scales_shifts_and_offsets() {
        let t = Tsc2Nsec {
            mult: 6_710_886,
            shift: 24,
            offset: 0,
        };
        assert_eq!(t.to_ns(2_500_000_000), 999_999_940);
        let t = Tsc2Nsec { offset: 60, ..t };
        assert_eq!(t.to_ns(2_500_000_000), 1_000_000_000);
        // 2^62 cycles, whose product with mult does not fit in 64 bits: 6710886 * 2^(62-24)
        // = 6710886 * 274877906944 = 1844674297419792384, plus 60.
        assert_eq!(t.to_ns(1 << 62), 1_844_674_297_419_792_444);
    }

    #[test]
    fn v6_list_ends_with_a_bare_done() {
        let mut b = opt(id::TRACECLOCK, b"[local] global counter\n\0");
        b.extend(opt(
            id::CPUSTAT,
            b"CPU: 1\nentries: 0\noverrun: 12\ndropped events: 3\n\0",
        ));
        b.extend(opt(id::CPUSTAT, b"CPU: 0\nentries: 9\noverrun: 0\n\0"));
        b.extend(opt(id::OFFSET, b"-1500\0"));
        b.extend(opt(99, b"whatever"));
        b.extend([0, 0]);
        let mut o = Options::default();
        let next = o.read(&mut Cursor::new(&b, 0, Endian::Little), 6).unwrap();
        assert_eq!(next, None);
        assert_eq!(o.clock.as_deref(), Some("local"));
        assert_eq!(o.lost_per_cpu(), vec![(1, 15), (0, 0)]);
        // Only CPU1 overwrote its oldest events: only its history begins late.
        assert_eq!(o.overrun_cpus(), vec![1]);
        assert_eq!((o.ts_offset, o.skipped.clone()), (-1500, vec![99]));
    }

    #[test]
    fn v7_done_points_at_the_next_section_and_buffers_list_cpus() {
        let mut buf = 1000u64.to_le_bytes().to_vec();
        buf.extend(b"\0local\0");
        buf.extend(4096u32.to_le_bytes());
        buf.extend(1u32.to_le_bytes());
        buf.extend(3u32.to_le_bytes());
        buf.extend(8192u64.to_le_bytes());
        buf.extend(100u64.to_le_bytes());
        let mut b = opt(id::BUFFER, &buf);
        b.extend(opt(id::KALLSYMS, &77u64.to_le_bytes()));
        b.extend(opt(id::DONE, &555u64.to_le_bytes()));
        let mut o = Options::default();
        let next = o.read(&mut Cursor::new(&b, 0, Endian::Little), 7).unwrap();
        assert_eq!(next, Some(555));
        assert_eq!(o.buffers[0].clock.as_deref(), Some("local"));
        assert_eq!(
            o.buffers[0].cpus,
            vec![CpuData {
                cpu: 3,
                offset: 8192,
                size: 100
            }]
        );
        assert_eq!(o.sections[&id::KALLSYMS], 77);
        // Cut inside an option: an error, not a panic.
        assert!(Options::default()
            .read(&mut Cursor::new(&b[..20], 0, Endian::Little), 7)
            .is_err());
    }
}
