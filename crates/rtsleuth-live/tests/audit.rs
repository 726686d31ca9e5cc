//! The audit against fixture trees (tests/fixtures/audit): every check's verdict and value on
//! a captured VM, two captured ARM guests (Debian's rt-arm64 and armmp kernels under qemu), a
//! hand-made tuned PREEMPT_RT box and a hand-made untuned desktop (whose READMEs say why each
//! verdict is what it is), and against missing and garbage files.

use rtsleuth_live::audit::{Audit, SystemView, Verdict, CHECK_IDS};
use rtsleuth_live::cpus::CpuList;
use std::path::{Path, PathBuf};
use Verdict::{Bad, Info, Ok, Warn};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures/audit")
        .join(name)
}

fn audit(root: &Path, cpus: Option<&str>) -> Audit {
    Audit::run(&SystemView::new(root), cpus.map(|c| c.parse().unwrap())).unwrap()
}

/// Asserts every check, in order: id, verdict and value.
fn expect(audit: &Audit, want: &[(&str, Verdict, &str)]) {
    let got: Vec<(&str, Verdict, &str)> = audit
        .checks
        .iter()
        .map(|c| (c.id, c.verdict, c.value.as_str()))
        .collect();
    for (g, w) in got.iter().zip(want) {
        assert_eq!(g, w);
    }
    assert_eq!(got.len(), want.len());
}

fn fix<'a>(audit: &'a Audit, id: &str) -> Option<&'a str> {
    audit.check(id).unwrap().fix.as_deref()
}

#[test]
fn this_vm() {
    let a = audit(&fixture("this_vm"), None);
    assert_eq!(a.kernel.release.as_deref(), Some("6.18.44-fc-v769"));
    assert_eq!(
        a.kernel.version.as_deref(),
        Some("#1 SMP PREEMPT_DYNAMIC @0")
    );
    assert_eq!(a.cpus.as_slice(), &[0, 1]);
    expect(
        &a,
        &[
            // From CONFIG_PREEMPT_NONE=y in the gzipped /proc/config.gz: the debugfs file was
            // not readable and the command line has no preempt=.
            ("preemption", Bad, "none (PREEMPT_DYNAMIC, boot default CONFIG_PREEMPT_NONE=y)"),
            ("cpufreq_governor", Info, "no cpufreq (fixed clock, or set by firmware or the hypervisor)"),
            ("idle_states", Info, "no idle states listed (cpuidle driver: none)"),
            ("smt", Ok, "not supported by the CPU"),
            ("isolcpus", Warn, "none (/sys/devices/system/cpu/isolated; measured CPUs 0-1 not covered)"),
            ("nohz_full", Warn, "not supported (kernel built without CONFIG_NO_HZ_FULL)"),
            ("rcu_nocbs", Warn, "none (no rcu_nocbs= or nohz_full= at boot; measured CPUs 0-1 not covered)"),
            ("rt_throttling", Warn, "950000 of 1000000 us (95%): RT tasks stop for 50000 us when they exhaust it"),
            ("irq_affinity", Bad, "19 of 19 IRQs routed to them now (24 ACPI:Ged, 25 ACPI:Ged, 26 ttyS0, 28 virtio0-config, +15 more); 19 may be routed there"),
            ("timer_slack", Ok, "50000 ns (this process)"),
            ("tracefs", Ok, "mounted at /sys/kernel/tracing"),
            ("tracers", Warn, "none of irqsoff, preemptoff, wakeup_rt, function_graph, hwlat, timerlat, osnoise"),
            ("trace_events", Ok, "all 10 present"),
            ("preemptirq_events", Warn, "absent"),
            ("clocksource", Ok, "tsc (available: tsc kvm-clock)"),
        ],
    );
    // Both CPUs are measured: isolation has to leave CPU 0 for housekeeping.
    assert_eq!(
        fix(&a, "isolcpus"),
        Some("boot with isolcpus=managed_irq,domain,1, keeping CPU 0 for housekeeping, and measure with --cpus 1")
    );
    assert_eq!(fix(&a, "smt"), None);
    assert_eq!(
        a.summary().map(|(_, n)| n),
        [5, 6, 2, 2],
        "ok, warn, bad, info"
    );
}

/// The PREEMPT_RT arm64 guest: no SMT control on ARM, the topology says each CPU is a core;
/// the generic timer's counter is the clocksource.
#[test]
fn arm64_rt_guest() {
    let a = audit(&fixture("arm64_rt_qemu"), None);
    assert_eq!(a.kernel.release.as_deref(), Some("6.12.95+deb12-rt-arm64"));
    expect(
        &a,
        &[
            ("preemption", Ok, "PREEMPT_RT (/sys/kernel/realtime = 1)"),
            ("cpufreq_governor", Info, "no cpufreq (fixed clock, or set by firmware or the hypervisor)"),
            ("idle_states", Info, "no idle states listed (cpuidle driver: none)"),
            ("smt", Ok, "none: each measured CPU is a core of its own (topology/thread_siblings_list)"),
            ("isolcpus", Warn, "none (/sys/devices/system/cpu/isolated; measured CPUs 0-1 not covered)"),
            ("nohz_full", Warn, "none (/sys/devices/system/cpu/nohz_full; measured CPUs 0-1 not covered)"),
            ("rcu_nocbs", Warn, "none (no rcu_nocbs= or nohz_full= at boot; measured CPUs 0-1 not covered)"),
            ("rt_throttling", Warn, "950000 of 1000000 us (95%): RT tasks stop for 50000 us when they exhaust it"),
            ("irq_affinity", Bad, "4 of 17 IRQs routed to them now (13 uart-pl011, 16 rtc-pl031, 18 virtio0-config, 19 virtio0-requests); 17 may be routed there"),
            ("timer_slack", Ok, "50000 ns (this process)"),
            ("tracefs", Ok, "mounted at /sys/kernel/tracing"),
            ("tracers", Warn, "wakeup_rt, function_graph, hwlat, timerlat, osnoise; missing irqsoff, preemptoff"),
            ("trace_events", Ok, "all 10 present"),
            ("preemptirq_events", Warn, "absent"),
            ("clocksource", Ok, "arch_sys_counter (available: arch_sys_counter)"),
        ],
    );
}

/// The stock armv7 guest: its fixes name the armmp packages and ARM's boot option.
#[test]
fn armv7_stock_guest() {
    let a = audit(&fixture("armv7_stock_qemu"), None);
    let preemption = a.check("preemption").unwrap();
    assert_eq!(
        (preemption.verdict, preemption.value.as_str()),
        (Bad, "none or voluntary (uname -v)")
    );
    assert_eq!(
        fix(&a, "preemption"),
        Some("boot a PREEMPT_RT kernel (Debian: linux-image-rt-armmp; Ubuntu: linux-realtime; or build with CONFIG_PREEMPT_RT=y)")
    );
    assert_eq!(a.check("smt").unwrap().verdict, Ok);
    // No cpuidle in the armmp kernel: no driver file, no states.
    assert_eq!(
        a.check("idle_states").unwrap().value,
        "no idle states listed (cpuidle driver: unknown)"
    );
}

#[test]
fn this_vm_one_cpu_measured() {
    let a = audit(&fixture("this_vm"), Some("1"));
    let irq = a.check("irq_affinity").unwrap();
    // effective_affinity_list puts IRQs 25 26 29 31 33 35 36 38 40 42 on CPU 1.
    assert_eq!(
        irq.value,
        "10 of 19 IRQs routed to them now (25 ACPI:Ged, 26 ttyS0, 29 virtio0-inflate, 31 virtio0-stats, +6 more); 19 may be routed there"
    );
    assert!(irq
        .fix
        .as_deref()
        .unwrap()
        .starts_with("for n in 24 25 26 28 29 30 31 32 33 34 35 36 37 38 39 40 41 42 43; do echo 0 > /proc/irq/$n/smp_affinity_list; done"));
    assert_eq!(
        fix(&a, "isolcpus"),
        Some("boot with isolcpus=managed_irq,domain,1")
    );
}

#[test]
fn preempt_rt_tuned_on_its_isolated_cpus() {
    let a = audit(&fixture("preempt_rt_tuned"), Some("2-3"));
    expect(
        &a,
        &[
            ("preemption", Ok, "PREEMPT_RT (/sys/kernel/realtime = 1)"),
            ("cpufreq_governor", Ok, "performance"),
            (
                "idle_states",
                Ok,
                "deepest enabled: C1 1 us (C1E, C6 disabled)",
            ),
            ("smt", Ok, "off (control=off)"),
            (
                "isolcpus",
                Ok,
                "2-3 (/sys/devices/system/cpu/isolated; covers the measured CPUs)",
            ),
            (
                "nohz_full",
                Ok,
                "2-3 (/sys/devices/system/cpu/nohz_full; covers the measured CPUs)",
            ),
            (
                "rcu_nocbs",
                Ok,
                "2-3 (rcu_nocbs=, nohz_full=; covers the measured CPUs)",
            ),
            ("rt_throttling", Ok, "off (sched_rt_runtime_us = -1)"),
            ("irq_affinity", Ok, "none of 6 IRQs may be routed to them"),
            ("timer_slack", Ok, "50000 ns (this process)"),
            ("tracefs", Ok, "mounted at /sys/kernel/tracing"),
            (
                "tracers",
                Ok,
                "all: irqsoff, preemptoff, wakeup_rt, function_graph, hwlat, timerlat, osnoise",
            ),
            ("trace_events", Ok, "all 10 present"),
            (
                "preemptirq_events",
                Ok,
                "irq_disable, irq_enable, preempt_disable, preempt_enable",
            ),
            ("clocksource", Ok, "tsc (available: tsc hpet acpi_pm)"),
        ],
    );
    assert!(a.checks.iter().all(|c| c.fix.is_none()));
}

#[test]
fn preempt_rt_tuned_on_all_cpus_flags_the_housekeeping_ones() {
    let a = audit(&fixture("preempt_rt_tuned"), None);
    assert_eq!(a.cpus.as_slice(), &[0, 1, 2, 3]);
    let row = |id: &str| {
        let c = a.check(id).unwrap();
        (c.verdict, c.value.as_str())
    };
    assert_eq!(
        row("isolcpus"),
        (
            Warn,
            "2-3 (/sys/devices/system/cpu/isolated; measured CPUs 0-1 not covered)"
        )
    );
    assert_eq!(
        row("rcu_nocbs"),
        (
            Warn,
            "2-3 (rcu_nocbs=, nohz_full=; measured CPUs 0-1 not covered)"
        )
    );
    assert_eq!(
        row("irq_affinity"),
        (Bad, "6 of 6 IRQs routed to them now (0 timer, 8 rtc0, 9 acpi, 16 ehci_hcd:usb1, i801_smbus, +2 more); 6 may be routed there")
    );
    assert_eq!(
        fix(&a, "nohz_full"),
        Some("boot with nohz_full=1-3 (needs a kernel built with CONFIG_NO_HZ_FULL=y), keeping CPU 0 for housekeeping, and measure with --cpus 1-3")
    );
    assert_eq!(a.summary().map(|(_, n)| n), [11, 3, 1, 0]);
}

#[test]
fn desktop_untuned() {
    let a = audit(&fixture("desktop_untuned"), None);
    assert_eq!(a.cpus.to_string(), "0-7");
    expect(
        &a,
        &[
            ("preemption", Bad, "voluntary (PREEMPT_DYNAMIC, /sys/kernel/debug/sched/preempt)"),
            ("cpufreq_governor", Bad, "powersave on 0-3, schedutil on 4-7"),
            ("idle_states", Bad, "deepest enabled: C6 133 us"),
            ("smt", Warn, "on (control=on)"),
            ("isolcpus", Warn, "none (/sys/devices/system/cpu/isolated; measured CPUs 0-7 not covered)"),
            ("nohz_full", Warn, "none (/sys/devices/system/cpu/nohz_full; measured CPUs 0-7 not covered)"),
            ("rcu_nocbs", Warn, "none (no rcu_nocbs= or nohz_full= at boot; measured CPUs 0-7 not covered)"),
            ("rt_throttling", Warn, "950000 of 1000000 us (95%): RT tasks stop for 50000 us when they exhaust it"),
            ("irq_affinity", Bad, "9 of 9 IRQs routed to them now (0 timer, 9 acpi, 16 i801_smbus, 127 xhci_hcd, +5 more); 9 may be routed there"),
            ("timer_slack", Ok, "50000 ns (this process)"),
            ("tracefs", Ok, "mounted at /sys/kernel/debug/tracing"),
            ("tracers", Warn, "wakeup_rt, function_graph, hwlat, timerlat, osnoise; missing irqsoff, preemptoff"),
            ("trace_events", Ok, "all 10 present"),
            ("preemptirq_events", Warn, "absent"),
            ("clocksource", Bad, "hpet (available: tsc hpet acpi_pm)"),
        ],
    );
    assert_eq!(
        fix(&a, "preemption"),
        Some("boot a PREEMPT_RT kernel (Debian: linux-image-rt-amd64 / -arm64 / -armmp; Ubuntu: linux-realtime; or build with CONFIG_PREEMPT_RT=y); until then boot with preempt=full")
    );
    assert_eq!(
        fix(&a, "cpufreq_governor"),
        Some("cpupower -c 0-7 frequency-set -g performance (or: echo performance > /sys/devices/system/cpu/cpuN/cpufreq/scaling_governor for N in 0-7)")
    );
    assert_eq!(
        fix(&a, "clocksource"),
        Some("echo tsc > /sys/devices/system/clocksource/clocksource0/current_clocksource (or boot with clocksource=tsc tsc=reliable)")
    );
    assert_eq!(
        fix(&a, "tracers"),
        Some("rebuild the kernel with CONFIG_IRQSOFF_TRACER=y CONFIG_PREEMPT_TRACER=y")
    );
}

#[test]
fn desktop_untuned_on_cpus_4_to_7() {
    let a = audit(&fixture("desktop_untuned"), Some("4-7"));
    let irq = a.check("irq_affinity").unwrap();
    // Effective: 16 on CPU 5, 135 on CPU 6; may: 9 16 127 135 140 (0-7), not 0 128 129 130.
    assert_eq!(
        irq.value,
        "2 of 9 IRQs routed to them now (16 i801_smbus, 135 iwlwifi); 5 may be routed there"
    );
    assert_eq!(
        irq.fix.as_deref(),
        Some("for n in 9 16 127 135 140; do echo 0-3 > /proc/irq/$n/smp_affinity_list; done (stop irqbalance or set IRQBALANCE_BANNED_CPULIST=4-7), and boot with irqaffinity=0-3")
    );
    assert_eq!(a.check("cpufreq_governor").unwrap().value, "schedutil");
}

#[test]
fn cpus_that_are_not_online_are_an_error() {
    let err = Audit::run(
        &SystemView::new(fixture("this_vm")),
        Some("1-3".parse().unwrap()),
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "--cpus 1-3: CPU 2-3 not online (online: 0-1)"
    );
}

#[test]
fn an_empty_tree_is_all_unknown_not_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let a = audit(dir.path(), None);
    assert!(a.cpus.is_empty());
    assert_eq!(a.kernel.release, None);
    assert_eq!(a.checks.iter().map(|c| c.id).collect::<Vec<_>>(), CHECK_IDS);
    for c in &a.checks {
        assert_eq!(c.verdict, Info, "{c:?}");
    }
    assert_eq!(
        a.check("tracefs").unwrap().value,
        "unknown (/proc/mounts not readable)"
    );
    assert_eq!(a.warnings.len(), 1);
}

/// Writes `files` (path, content) under a fresh directory.
fn tree(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (path, text) in files {
        let p = dir.path().join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    dir
}

#[test]
fn static_kernels_read_from_uname_and_config() {
    let case = |version: &str, config: Option<&str>| {
        let mut files = vec![
            ("proc/sys/kernel/osrelease", "6.1.0"),
            ("proc/sys/kernel/version", version),
        ];
        if let Some(c) = config {
            files.push(("boot/config-6.1.0", c));
        }
        let dir = tree(&files);
        let c = audit(dir.path(), None).check("preemption").unwrap().clone();
        (
            c.verdict,
            c.value,
            c.fix.is_some_and(|f| f.contains("preempt=full")),
        )
    };
    assert_eq!(
        case("#1 SMP PREEMPT Tue Jan 2", None),
        (Warn, "full (uname -v)".to_string(), false)
    );
    assert_eq!(
        case("#1 SMP Tue Jan 2", None),
        (Bad, "none or voluntary (uname -v)".to_string(), false)
    );
    assert_eq!(
        case("#1 SMP Tue Jan 2", Some("CONFIG_PREEMPT_VOLUNTARY=y\n")),
        (
            Bad,
            "voluntary (CONFIG_PREEMPT_VOLUNTARY=y)".to_string(),
            false
        )
    );
    assert_eq!(
        case("#1 SMP PREEMPT_RT Tue Jan 2", None),
        (Ok, "PREEMPT_RT (uname -v)".to_string(), false)
    );
    assert_eq!(
        case(
            "#1 SMP PREEMPT_DYNAMIC Tue",
            Some("CONFIG_PREEMPT_DYNAMIC=y\nCONFIG_PREEMPT_LAZY=y\n")
        ),
        (
            Warn,
            "lazy (PREEMPT_DYNAMIC, boot default CONFIG_PREEMPT_LAZY=y)".to_string(),
            false
        )
    );
}

#[test]
fn preempt_on_the_command_line_beats_the_config_default() {
    let dir = tree(&[
        ("proc/sys/kernel/version", "#1 SMP PREEMPT_DYNAMIC"),
        ("proc/cmdline", "quiet preempt=full"),
    ]);
    let c = audit(dir.path(), None).check("preemption").unwrap().clone();
    assert_eq!(
        (c.verdict, c.value.as_str()),
        (
            Warn,
            "full (PREEMPT_DYNAMIC, preempt=full on the command line)"
        )
    );
}

#[test]
fn raised_timer_slack_and_userspace_governor_warn() {
    let dir = tree(&[
        ("proc/self/timerslack_ns", "200000\n"),
        ("sys/devices/system/cpu/online", "0-1\n"),
        (
            "sys/devices/system/cpu/cpu0/cpufreq/scaling_governor",
            "performance\n",
        ),
        (
            "sys/devices/system/cpu/cpu1/cpufreq/scaling_governor",
            "userspace\n",
        ),
    ]);
    let a = audit(dir.path(), None);
    let row = |id: &str| {
        let c = a.check(id).unwrap();
        (c.verdict, c.value.clone())
    };
    assert_eq!(
        row("timer_slack"),
        (
            Warn,
            "200000 ns (this process; above the 50000 ns default)".into()
        )
    );
    assert_eq!(
        row("cpufreq_governor"),
        (Warn, "performance on 0, userspace on 1".into())
    );
}

#[test]
fn moderate_idle_states_warn_and_rt_runtime_equal_to_period_is_off() {
    let mut files = vec![
        ("sys/devices/system/cpu/online", "0"),
        ("proc/sys/kernel/sched_rt_runtime_us", "1000000"),
        ("proc/sys/kernel/sched_rt_period_us", "1000000"),
    ];
    let states = [
        ("sys/devices/system/cpu/cpu0/cpuidle/state0/name", "POLL"),
        ("sys/devices/system/cpu/cpu0/cpuidle/state0/latency", "0"),
        ("sys/devices/system/cpu/cpu0/cpuidle/state1/name", "C1E"),
        ("sys/devices/system/cpu/cpu0/cpuidle/state1/latency", "10"),
        ("sys/devices/system/cpu/cpu0/cpuidle/state1/disable", "0"),
    ];
    files.extend(states);
    let dir = tree(&files);
    let a = audit(dir.path(), None);
    let c = a.check("idle_states").unwrap();
    assert_eq!(
        (c.verdict, c.value.as_str()),
        (Warn, "deepest enabled: C1E 10 us")
    );
    let c = a.check("rt_throttling").unwrap();
    assert_eq!(
        (c.verdict, c.value.as_str()),
        (Ok, "off (runtime 1000000 us >= period 1000000 us)")
    );
    // One online CPU: there is nothing to isolate it from, so no fix to offer.
    assert_eq!(fix(&a, "isolcpus"), None);
}

/// Every file of every fixture tree replaced by each kind of garbage: the audit still runs
/// every check, without panicking or failing.
#[test]
fn garbage_files_do_not_panic() {
    let garbage: [&[u8]; 6] = [
        b"",
        b"\xff\xfe\x00\x01 binary\n",
        b"-1",
        b"99999999999999999999999999 (x) ((",
        b"0-99999\n\n\n",
        b"a:b:c\n1: 2 3\n:\n",
    ];
    for name in ["this_vm", "preempt_rt_tuned", "desktop_untuned"] {
        for junk in garbage {
            let dir = tempfile::tempdir().unwrap();
            copy_as(&fixture(name), dir.path(), junk);
            for cpus in [None, Some("0")] {
                match Audit::run(
                    &SystemView::new(dir.path()),
                    cpus.map(|c| c.parse::<CpuList>().unwrap()),
                ) {
                    Result::Ok(a) => {
                        assert_eq!(a.checks.len(), CHECK_IDS.len());
                        a.document();
                    }
                    // A garbage online list that parses as no CPUs leaves --cpus 0 offline.
                    Err(e) => assert_eq!(
                        (cpus, e.to_string()),
                        (
                            Some("0"),
                            "--cpus 0: CPU 0 not online (online: )".to_string()
                        )
                    ),
                }
            }
        }
    }
}

/// Copies the directory structure of `from` to `to`, every file holding `content`.
fn copy_as(from: &Path, to: &Path, content: &[u8]) {
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            std::fs::create_dir_all(&target).unwrap();
            copy_as(&entry.path(), &target, content);
        } else if entry.file_name() != "README.md" {
            std::fs::write(&target, content).unwrap();
        }
    }
}
