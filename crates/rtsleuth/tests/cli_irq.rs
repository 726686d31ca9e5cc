//! `rtsleuth irq` end to end: golden text and JSON on the hand-written preemptirq fixture
//! (tests/fixtures/irq/synthetic/README.md has the answers), the recorded fifo_below trace's
//! late timer interrupt, a latency tracer's output, and errors.

mod common;

use common::{golden, ok, run};
use serde_json::Value;

const SYNTHETIC: &str = "tests/fixtures/irq/synthetic/printk_console.txt";
const FIFO_BELOW: &str = "tests/fixtures/recorded/fifo_below/trace.txt";

#[test]
fn irq_text() {
    let out = ok(&["irq", SYNTHETIC]);
    assert!(
        out.contains("    1  11000  1000.000200  console_unlock+0x1a4/0x2d0"),
        "{out}"
    );
    assert!(
        out.contains("console_unlock, vprintk_emit: printk writing the kernel log"),
        "{out}"
    );
    golden("irq.txt", &out);
}

#[test]
fn irq_json() {
    let out = ok(&["irq", "--json", SYNTHETIC]);
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["schema"], "rtsleuth.irq/1");
    assert_eq!(v["trace"]["events"], 22);
    assert_eq!(v["irqs_off"][0]["us"], 11000.0);
    assert_eq!(v["irqs_off"][0]["cpu"], 1);
    assert_eq!(v["irqs_off"][0]["caller"], "console_unlock+0x1a4/0x2d0");
    assert_eq!(v["irqs_off"][0]["parent"], "vprintk_emit+0x140/0x330");
    assert_eq!(v["preempt_off"][1]["us"], 400.0);
    assert_eq!(v["irqs_off_inferred"]["worst"][0]["late_us"], 10704.0);
    golden("irq.json", &out);
}

#[test]
fn irq_recorded_late_timer_and_options() {
    let out = ok(&["irq", "--cpu", "0", "--top", "3", FIFO_BELOW]);
    // The VM delivered cyclictest's timer interrupt 663.454 us late to idle CPU 0.
    assert!(
        out.contains(
            "    0  663.454  629.884124546  629.884786  hrtimer_wakeup  <idle>-0  black_hole"
        ),
        "{out}"
    );
    golden("irq-fifo_below-cpu0.txt", &out);
    let v: Value =
        serde_json::from_str(&ok(&["irq", "--json", "--late-us", "600", FIFO_BELOW])).unwrap();
    assert_eq!(v["irqs_off_inferred"]["late"], 1);
    assert_eq!(v["irqs_off_inferred"]["threshold_us"], 600.0);
    assert_eq!(v["options"]["late_us"], 600.0);
}

#[test]
fn irq_latency_tracer_output() {
    let rel =
        "../shared/fixtures/realworld/kernel-doc-ftrace/extracted/ftrace.rst.L0904.irqsoff.txt";
    if !common::repo_root().join(rel).is_file() {
        assert!(
            std::env::var_os("CI").is_none(),
            "{rel} not found and CI is set"
        );
        println!("skipped: {rel} not found");
        return;
    }
    let out = ok(&["irq", rel]);
    assert!(out.contains("Latency       259 us on CPU2"), "{out}");
    assert!(out.contains("Started at    __lock_task_sighand"), "{out}");
    assert!(out.contains("  => system_call_fastpath"), "{out}");
    // The other commands still read it as a text trace.
    assert!(ok(&["stats", rel]).contains("Events        4"));
}

#[test]
fn irq_errors() {
    let out = run(&["irq", "tests/fixtures/irq/no-such-trace.txt"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with("rtsleuth: tests/fixtures/irq/no-such-trace.txt: "),
        "{err}"
    );
    let out = run(&["irq", "--late-us", "soon", SYNTHETIC]);
    assert!(!out.status.success());
}
