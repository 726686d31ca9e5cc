//! What the comment header at the top of a text trace tells: the tracer, the CPU count, how
//! many entries the ring buffer overwrote, what each flag column means, and whether `perf script`
//! printed the text.

use super::line::printed_by_perf;
use crate::event::FlagLayout;
use serde::Serialize;

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Header {
    /// `# tracer: nop` / `irqsoff` / `wakeup_rt`…
    pub tracer: Option<String>,
    /// `#P:4` in the kernel's header, `cpus=4` in `trace-cmd report`, `# nrcpus online : 4` in
    /// `perf script --header`.
    pub nr_cpus: Option<u32>,
    /// `entries-in-buffer/entries-written: 69657/223807`: the buffer kept the first number of
    /// the second; the difference was overwritten before the trace was read.
    pub entries_in_buffer: Option<u64>,
    pub entries_written: Option<u64>,
    /// `version = 6` from `trace-cmd report`.
    pub trace_cmd_version: Option<u32>,
    /// The flag columns the header announces, when it announces them.
    pub flag_layout: Option<FlagLayout>,
    /// The header announces the latency format (`cmd pid ||||| time | caller`).
    pub latency_format: bool,
    /// The `# latency: 259 us, #4/4, CPU#2 | (M:preempt ...)` line of a latency tracer.
    pub latency_line: Option<String>,
    /// The first event line is `perf script`'s: the trace went through perf's buffers, not
    /// ftrace's, and its lines carry no flags.
    pub perf_script: bool,
    /// `# perf version : 6.1.187` from `perf script --header`.
    pub perf_version: Option<String>,
}

impl Header {
    /// Entries that were written to the ring buffer but overwritten before being read.
    pub fn overwritten(&self) -> Option<u64> {
        Some(
            self.entries_written?
                .saturating_sub(self.entries_in_buffer?),
        )
    }

    /// Reads the header lines at the top of `text` (it stops at the first event line).
    pub fn scan(text: &str) -> Header {
        let mut h = Header::default();
        let mut names = Vec::new();
        for line in text.lines().take(200) {
            let l = line.trim();
            if let Some(rest) = l.strip_prefix("version =") {
                h.trace_cmd_version = rest.trim().parse().ok();
                continue;
            }
            if let Some(rest) = l.strip_prefix("cpus=") {
                h.nr_cpus = rest.trim().parse().ok();
                continue;
            }
            if l.starts_with("CPU ") && l.ends_with(" is empty") || l.is_empty() {
                continue;
            }
            let Some(c) = l.strip_prefix('#') else {
                h.perf_script = printed_by_perf(l);
                break;
            };
            let c = c.trim();
            if let Some(t) = c.strip_prefix("tracer:") {
                h.tracer = Some(t.trim().to_string());
            } else if let Some(rest) = c.strip_prefix("entries-in-buffer/entries-written:") {
                let (counts, cpus) = rest.split_once("#P:").unwrap_or((rest, ""));
                if let Some((a, b)) = counts.trim().split_once('/') {
                    h.entries_in_buffer = a.trim().parse().ok();
                    h.entries_written = b.trim().parse().ok();
                }
                if let Ok(n) = cpus.trim().parse() {
                    h.nr_cpus = Some(n);
                }
            } else if c.starts_with("latency:") {
                if let Some(p) = c.split_once("#P:") {
                    h.nr_cpus = p.1.trim_end_matches(')').trim().parse().ok();
                }
                h.latency_line = Some(c.to_string());
            } else if c.starts_with("cmd ") && c.contains("pid") {
                h.latency_format = true;
            } else if let Some(pos) = c.find("=>") {
                names.push(c[pos + 2..].trim().to_string());
            } else if let Some((key, value)) = c.split_once(" : ") {
                match key.trim_ascii_end() {
                    "perf version" => h.perf_version = Some(value.trim().to_string()),
                    "nrcpus online" => h.nr_cpus = value.trim().parse().ok(),
                    _ => {}
                }
            }
        }
        h.flag_layout = layout_from_names(&names);
        h
    }
}

/// The header draws one `_--=> name` line per flag column.
fn layout_from_names(names: &[String]) -> Option<FlagLayout> {
    let has = |n: &str| names.iter().any(|x| x.starts_with(n));
    if !has("irqs-off") {
        return None;
    }
    Some(if has("need-resched-lazy") || has("preempt-lazy-depth") {
        FlagLayout::Rt7
    } else if has("migrate-disable") {
        FlagLayout::WithMigrate5
    } else {
        FlagLayout::Classic4
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_header() {
        let h = Header::scan(
            "# tracer: nop\n#\n# entries-in-buffer/entries-written: 69657/223807   #P:2\n#\n\
             #                              _-----=> irqs-off/BH-disabled\n\
             #                             / _----=> need-resched\n\
             #                            | / _---=> hardirq/softirq\n\
             #                            || / _--=> preempt-depth\n\
             #                            ||| / _-=> migrate-disable\n\
             #                            |||| /     delay\n\
             #           TASK-PID   CPU#  |||||  TIMESTAMP  FUNCTION\n\
                       <idle>-0 [000] d.... 1.0: x: y\n# tracer: late\n",
        );
        assert_eq!(h.tracer.as_deref(), Some("nop"));
        assert_eq!(h.nr_cpus, Some(2));
        assert_eq!(h.overwritten(), Some(154150));
        assert_eq!(h.flag_layout, Some(FlagLayout::WithMigrate5));
        assert!(!h.latency_format);
    }

    #[test]
    fn trace_cmd_header() {
        let h = Header::scan("version = 6\nCPU 3 is empty\ncpus=6\n  ls-1 [002] 1.0: a: b\n");
        assert_eq!(h.trace_cmd_version, Some(6));
        assert_eq!(h.nr_cpus, Some(6));
        assert_eq!(h.flag_layout, None);
    }

    #[test]
    fn latency_tracer_header() {
        let h = Header::scan(
            "# tracer: irqsoff\n#\n# latency: 259 us, #4/4, CPU#2 | (M:preempt VP:0, KP:0, SP:0 HP:0 #P:4)\n\
             #                 / _-----=> irqs-off\n#  cmd     pid   ||||| time  |   caller\n",
        );
        assert_eq!(h.tracer.as_deref(), Some("irqsoff"));
        assert_eq!(h.nr_cpus, Some(4));
        assert!(h.latency_format);
        assert!(h.latency_line.unwrap().starts_with("latency: 259 us"));
    }

    #[test]
    fn perf_script_header() {
        let h = Header::scan(
            "# ========\n# captured on    : Wed Nov 25 10:11:32 2026\n# perf version : 6.1.187\n\
             # nrcpus online : 2\n# nrcpus avail : 4\n# ========\n#\n\
                         perf 11678 [000]  4903.235148: sched:sched_stat_runtime: comm=perf pid=11678 runtime=262842 [ns]\n",
        );
        assert!(h.perf_script);
        assert_eq!(h.perf_version.as_deref(), Some("6.1.187"));
        assert_eq!(h.nr_cpus, Some(2));
        let plain = Header::scan(
            "  swapper 0/0 [001] 1.000000001: irq:softirq_entry: vec=7 [action=SCHED]\n",
        );
        assert!(plain.perf_script);
        assert_eq!(plain.perf_version, None);
        assert!(!Header::scan("  bash-1 [000] .... 1.0: x: y\n").perf_script);
    }
}
