//! Kernel functions known to hold interrupts or preemption off for long, in plain words, with
//! the advice the field gives for each. A section's caller (or parent) is looked up here, so a
//! report can say "printk flushing the log to a slow console" instead of a bare symbol.

/// A known culprit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Known {
    /// What the function does when it shows up in a long section.
    pub what: &'static str,
    pub advice: &'static str,
}

const CONSOLE: Known = Known {
    what: "printk writing the kernel log to the console with interrupts off (a slow serial console takes ~87 us per character at 115200 baud)",
    advice: "lower the console loglevel (`dmesg -n 1`, `loglevel=`/`quiet`), avoid a serial console on RT systems, keep user space out of /dev/kmsg (`printk.devkmsg=off`), or use deferred printing / PREEMPT_RT's threaded (nbcon) consoles",
};

const STOP_MACHINE: Known = Known {
    what: "stop_machine: every CPU spins with interrupts off while one changes the kernel (module load, CPU hotplug, live patching, ftrace enable)",
    advice: "do not load modules, toggle CPUs or change tracers while measuring",
};

const SOFTIRQ: Known = Known {
    what: "softirq processing run with interrupts or preemption off",
    advice: "see `softirq` durations above; on PREEMPT_RT softirqs run in threads that can be prioritised",
};

const IDLE: Known = Known {
    what: "the idle loop entering or leaving a low-power state",
    advice: "limit deep idle states on latency-critical CPUs: `/dev/cpu_dma_latency` held at 0, or per state `/sys/devices/system/cpu/cpuN/cpuidle/stateM/disable`; at boot `idle=poll` or `intel_idle.max_cstate=` (x86), `cpuidle.off=1` (ARM PSCI states)",
};

/// `(name, exact)`: the function or, when not exact, a prefix of its name.
const TABLE: &[(&str, bool, Known)] = &[
    ("console_unlock", true, CONSOLE),
    ("console_flush_all", true, CONSOLE),
    ("console_emit_next_record", true, CONSOLE),
    ("vprintk_emit", true, CONSOLE),
    ("vprintk", false, CONSOLE),
    ("_printk", true, CONSOLE),
    ("printk", false, CONSOLE),
    ("serial8250", false, CONSOLE),
    ("univ8250_console_write", true, CONSOLE),
    ("uart_console_write", true, CONSOLE),
    ("multi_cpu_stop", true, STOP_MACHINE),
    ("stop_machine", false, STOP_MACHINE),
    ("__do_softirq", true, SOFTIRQ),
    ("handle_softirqs", true, SOFTIRQ),
    ("run_timer_softirq", true, SOFTIRQ),
    ("net_rx_action", true, SOFTIRQ),
    ("cpuidle_enter_state", true, IDLE),
    ("do_idle", true, IDLE),
    ("default_idle", true, IDLE),
];

/// The function name without its offset (`+0x1a4/0x2d0`) and compiler suffix (`.isra.0`).
pub fn base_name(symbol: &str) -> &str {
    let s = symbol.split('+').next().unwrap_or(symbol);
    s.split('.').next().unwrap_or(s).trim()
}

/// The known culprit among `functions` (checked in order: the caller, then its parent…).
pub fn lookup<'a>(functions: impl IntoIterator<Item = &'a str>) -> Option<(&'a str, Known)> {
    functions.into_iter().find_map(|f| {
        let name = base_name(f);
        TABLE
            .iter()
            .find(|(n, exact, _)| {
                if *exact {
                    name == *n
                } else {
                    name.starts_with(n)
                }
            })
            .map(|(_, _, k)| (f, *k))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_the_console_and_strips_offsets() {
        assert_eq!(base_name("console_unlock+0x1a4/0x2d0"), "console_unlock");
        assert_eq!(
            base_name("ttwu_do_activate.constprop.87"),
            "ttwu_do_activate"
        );
        let (f, k) = lookup(["_raw_spin_unlock_irqrestore", "console_unlock+0x1a4/0x2d0"]).unwrap();
        assert_eq!(f, "console_unlock+0x1a4/0x2d0");
        assert_eq!(k, CONSOLE);
        assert_eq!(
            lookup(["serial8250_console_write"]).map(|x| x.1),
            Some(CONSOLE)
        );
        assert_eq!(lookup(["__lock_task_sighand", "do_task_stat"]), None);
    }
}
