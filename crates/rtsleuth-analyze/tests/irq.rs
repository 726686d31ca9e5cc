//! `rtsleuth irq` on traces with known answers: the hand-written preemptirq fixture
//! (tests/fixtures/irq/synthetic, README there), the recorded traces of this kernel
//! (tests/fixtures/recorded: real irq, irq_vectors, softirq and timer events), and a latency
//! tracer's output from the kernel documentation.

#[path = "../../rtsleuth-trace/tests/shared_fixtures/mod.rs"]
mod shared_fixtures;

use rtsleuth_analyze::irq::{Irq, IrqOptions};
use rtsleuth_trace::input::Input;
use rtsleuth_trace::read::latency_tracer;
use serde_json::Value;
use std::path::Path;

fn irq_json(rel: &str, opts: IrqOptions) -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(rel);
    let mut irq = Irq::new(opts);
    let input = Input::open(path.to_str().unwrap()).unwrap();
    let (info, section) = latency_tracer::read(input, &mut irq).unwrap();
    irq.document(&info, section.as_ref()).json
}

fn us(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

/// The printk / console_unlock pattern and the nested preempt-off section, exactly.
#[test]
fn synthetic_printk_console() {
    let j = irq_json(
        "tests/fixtures/irq/synthetic/printk_console.txt",
        IrqOptions::default(),
    );
    assert_eq!(j["schema"], "rtsleuth.irq/1");
    let off = j["irqs_off"].as_array().unwrap();
    assert_eq!(off.len(), 2);
    assert_eq!(
        (off[0]["cpu"].as_u64(), us(&off[0]["us"])),
        (Some(1), 11000.0)
    );
    assert_eq!(off[0]["caller"], "console_unlock+0x1a4/0x2d0");
    assert_eq!(off[0]["parent"], "vprintk_emit+0x140/0x330");
    assert_eq!(off[0]["end_caller"], "console_unlock+0x230/0x2d0");
    assert_eq!(off[0]["task"]["comm"], "rsyslogd");
    assert_eq!(off[0]["known"]["function"], "console_unlock+0x1a4/0x2d0");
    assert!(off[0]["known"]["advice"]
        .as_str()
        .unwrap()
        .contains("serial console"));
    assert_eq!(
        (us(&off[1]["us"]), &off[1]["task"]["pid"]),
        (20.0, &Value::from(40))
    );
    assert_eq!(off[1]["known"], Value::Null);
    let p = j["preempt_off"].as_array().unwrap();
    assert_eq!(
        (us(&p[0]["us"]), &p[0]["caller"]),
        (11200.0, &Value::from("vprintk_emit+0x12c/0x330"))
    );
    assert_eq!(p[0]["known"]["function"], "vprintk_emit+0x12c/0x330");
    // The nested section counts once, from the outer disable to the outer enable.
    assert_eq!(
        (us(&p[1]["us"]), &p[1]["caller"]),
        (400.0, &Value::from("_raw_spin_lock+0x10/0x40"))
    );
    assert_eq!(p[1]["end_caller"], "_raw_spin_unlock+0x10/0x30");
    assert_eq!(j["preempt_off_distribution"]["count"], 2);
    let late = &j["irqs_off_inferred"];
    assert_eq!(late["late"], 1);
    let w = &late["worst"][0];
    assert_eq!((us(&w["late_us"]), us(&w["due_ts"])), (10704.0, 1000.0005));
    assert_eq!(
        (us(&w["irq_ts"]), &w["kind"]),
        (1000.011202, &Value::from("irqs_off"))
    );
    assert_eq!(
        w["task"],
        serde_json::json!({"comm": "rsyslogd", "pid": 812})
    );
    let one = |field: &str, max: f64| {
        let s = &j[field][0];
        assert_eq!(
            (s["count"].as_u64(), us(&s["max_us"])),
            (Some(1), max),
            "{field}"
        );
    };
    one("hardirqs", 30.0);
    one("vectors", 10.0);
    one("softirqs", 100.0);
    one("hrtimers", 6.0);
    assert_eq!(j["hardirqs"][0]["name"], "eth0");
    assert_eq!(j["softirqs"][0]["action"], "NET_RX");
    // --cpu 0 keeps only CPU 0's sections and interrupts.
    let j0 = irq_json(
        "tests/fixtures/irq/synthetic/printk_console.txt",
        IrqOptions {
            cpu: Some(0),
            ..IrqOptions::default()
        },
    );
    assert_eq!(j0["irqs_off"].as_array().unwrap().len(), 1);
    assert_eq!(j0["vectors"].as_array().unwrap().len(), 0);
    assert_eq!(j0["irqs_off_inferred"]["late"], 0);
}

/// fifo_below: the timer interrupt the VM delivered 663 us late to idle CPU 0. By hand from
/// the trace: `hrtimer_start: hrtimer=00000000c0cd7fe3 ... expires=629845788023` (629.883189),
/// `629.884786: local_timer_entry`, `629.884788: hrtimer_expire_entry: hrtimer=00000000c0cd7fe3
/// function=hrtimer_wakeup now=629846451477`: 629846451477 − 629845788023 = 663454 ns, due
/// 629.884788 − 663.454 us = 629.884124546, interrupting `<idle>-0`.
#[test]
fn recorded_fifo_below_late_timer() {
    let j = irq_json(
        "tests/fixtures/recorded/fifo_below/trace.txt",
        IrqOptions::default(),
    );
    let w = &j["irqs_off_inferred"]["worst"][0];
    assert_eq!((w["cpu"].as_u64(), us(&w["late_us"])), (Some(0), 663.454));
    assert_eq!(
        (us(&w["due_ts"]), us(&w["irq_ts"])),
        (629.884124546, 629.884786)
    );
    assert_eq!(w["task"], serde_json::json!({"comm": "<idle>", "pid": 0}));
    assert_eq!(
        (&w["kind"], &w["timer"]),
        (&Value::from("black_hole"), &Value::from("hrtimer_wakeup"))
    );
    // No preemptirq events on this kernel.
    assert_eq!(j["irqs_off"], serde_json::json!([]));
    assert_eq!(j["latency_tracer"], Value::Null);
}

/// softirq: the tick's TIMER softirq ran 5974.160481 → .160859 (`softirq_entry: vec=1
/// [action=TIMER]` / `softirq_exit`), 378 us, interrupting stress-ng-sockm-13660 on CPU 0.
/// Every source's count, total and max equal `tests/fixtures/irq/independent_irq.py`'s
/// (stdlib-only, pairs entry/exit per CPU), committed as `recorded_softirq.expected.json`.
#[test]
fn recorded_softirq_timer() {
    let j = irq_json(
        "tests/fixtures/recorded/softirq/trace.txt",
        IrqOptions::default(),
    );
    let timer = j["softirqs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["action"] == "TIMER")
        .unwrap();
    assert_eq!(
        (us(&timer["max_us"]), us(&timer["max_at_ts"])),
        (378.0, 5974.160481)
    );
    assert_eq!(timer["max_cpu"], 0);
    assert_eq!(timer["max_task"]["pid"], 13660);
    assert_matches_reference(&j, "recorded_softirq.expected.json");
}

/// Every source's count, total and max in `j` equal those of a reference made by
/// `tests/fixtures/irq/independent_irq.py` (the file named, in that folder).
fn assert_matches_reference(j: &Value, reference: &str) {
    let want: Value = serde_json::from_str(
        &std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../../tests/fixtures/irq")
                .join(reference),
        )
        .unwrap(),
    )
    .unwrap();
    let mut compared = 0;
    for (field, key) in [
        ("softirqs", "vec"),
        ("hardirqs", "irq"),
        ("vectors", "name"),
        ("hrtimers", "function"),
    ] {
        for w in want[field].as_array().into_iter().flatten() {
            let g = j[field]
                .as_array()
                .unwrap()
                .iter()
                .find(|g| g[key] == w["key"])
                .unwrap_or_else(|| panic!("{field} {} missing", w["key"]));
            assert_eq!(g["count"], w["count"], "{field} {}", w["key"]);
            assert_eq!(
                us(&g["total_us"]),
                us(&w["total_us"]),
                "{field} {}",
                w["key"]
            );
            assert_eq!(us(&g["max_us"]), us(&w["max_us"]), "{field} {}", w["key"]);
            compared += 1;
        }
        let listed = j[field].as_array().map_or(0, Vec::len);
        assert_eq!(
            listed,
            want[field].as_array().map_or(0, Vec::len),
            "{field}"
        );
    }
    assert!(compared > 0, "{reference} lists no source");
}

/// Other people's traces (../shared/fixtures/realworld, tracecompass-incubator): an x86
/// desktop with the radeon IRQ (28: .336630 -> .336653 and .337335 -> .337352, 23 + 17 us)
/// and tick_sched_timer callbacks, and an Android phone's RCU and TIMER softirqs; every
/// source equals the independent reference.
#[test]
fn realworld_traces_match_the_independent_reference() {
    let dir = "tracecompass-incubator/tracetypes/org.eclipse.tracecompass.incubator.ftrace.core.tests/res";
    for (trace, reference) in [
        (
            "trace-critical-path",
            "realworld_critical_path.expected.json",
        ),
        (
            "trace-android-sched-irq",
            "realworld_android_sched_irq.expected.json",
        ),
    ] {
        let Some(path) = shared_fixtures::realworld(&format!("{dir}/{trace}")) else {
            return;
        };
        let j = irq_json(path.to_str().unwrap(), IrqOptions::default());
        assert_matches_reference(&j, reference);
        if trace == "trace-critical-path" {
            let radeon = &j["hardirqs"][0];
            assert_eq!(
                (
                    &radeon["name"],
                    us(&radeon["max_us"]),
                    us(&radeon["max_at_ts"])
                ),
                (&Value::from("radeon"), 23.0, 26186.33663)
            );
        }
    }
}

/// The latency tracer's section from ftrace.rst (see tests/latency_tracer.rs for the reader):
/// `# latency: 259 us, #4/4, CPU#2`, `ps-6143`, 10 stack frames.
#[test]
fn latency_tracer_section() {
    let Some(path) =
        shared_fixtures::realworld("kernel-doc-ftrace/extracted/ftrace.rst.L0904.irqsoff.txt")
    else {
        return;
    };
    let j = irq_json(path.to_str().unwrap(), IrqOptions::default());
    let s = &j["latency_tracer"];
    assert_eq!((us(&s["latency_us"]), s["cpu"].as_u64()), (259.0, Some(2)));
    assert_eq!(s["task"], serde_json::json!({"comm": "ps", "pid": 6143}));
    assert_eq!(
        (&s["started_at"], &s["ended_at"]),
        (
            &Value::from("__lock_task_sighand"),
            &Value::from("_raw_spin_unlock_irqrestore")
        )
    );
    assert_eq!(s["stack"].as_array().unwrap().len(), 10);
    assert_eq!(us(&s["longest_steps"][0]["us"]), 259.0);
}
