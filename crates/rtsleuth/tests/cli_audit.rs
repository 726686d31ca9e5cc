//! `rtsleuth audit` end to end: goldens on the hand-made fixture trees (whose every verdict
//! crates/rtsleuth-live/tests/audit.rs checks), the live run on this machine, and the errors.

mod common;

use common::{golden, ok, run};
use rtsleuth_live::audit::CHECK_IDS;
use serde_json::Value;

const DESKTOP: &str = "tests/fixtures/audit/desktop_untuned";
const TUNED: &str = "tests/fixtures/audit/preempt_rt_tuned";

/// Every check id, in report order (the library's fixture tests assert each one's verdict and
/// value, so a check missing from this list fails there).
const IDS: &[&str] = CHECK_IDS;

fn ids(v: &Value) -> Vec<&str> {
    v["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].as_str().unwrap())
        .collect()
}

#[test]
fn desktop_text() {
    let out = ok(&["audit", "--root", DESKTOP]);
    assert!(
        out.contains(
            "  bad      CPU frequency governor            powersave on 0-3, schedutil on 4-7\n"
        ),
        "{out}"
    );
    assert!(
        out.contains("  Verdicts       3 ok, 7 warn, 5 bad, 0 info\n"),
        "{out}"
    );
    golden("audit-desktop.txt", &out);
}

#[test]
fn desktop_json() {
    let out = ok(&["audit", "--json", "--root", DESKTOP, "--cpus", "4-7"]);
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["schema"], "rtsleuth.audit/1");
    assert_eq!(v["kernel"]["release"], "6.8.0-51-generic");
    assert_eq!(v["cpus"], serde_json::json!([4, 5, 6, 7]));
    assert_eq!(ids(&v), IDS);
    let smt = &v["checks"][3];
    assert_eq!(smt["title"], "SMT (hyper-threading)");
    assert_eq!(smt["verdict"], "warn");
    assert_eq!(smt["value"], "on (control=on)");
    assert_eq!(v["checks"][9]["fix"], Value::Null);
    assert_eq!(
        v["summary"],
        serde_json::json!({"ok": 3, "warn": 7, "bad": 5, "info": 0})
    );
    golden("audit-desktop-cpus4-7.json", &out);
}

#[test]
fn tuned_text_has_no_fix_section() {
    let out = ok(&["audit", "--root", TUNED, "--cpus", "2-3"]);
    assert!(
        out.contains("  Verdicts       15 ok, 0 warn, 0 bad, 0 info\n"),
        "{out}"
    );
    assert!(!out.contains("fix:"), "{out}");
    golden("audit-tuned-cpus2-3.txt", &out);
}

/// The live machine: the report parses, has every check, and names the running kernel.
#[test]
fn live_json_has_every_check() {
    let out = run(&["audit", "--json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["schema"], "rtsleuth.audit/1");
    assert_eq!(ids(&v), IDS);
    let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap();
    assert_eq!(v["kernel"]["release"], release.trim());
    let online: rtsleuth_live::cpus::CpuList =
        std::fs::read_to_string("/sys/devices/system/cpu/online")
            .unwrap()
            .trim()
            .parse()
            .unwrap();
    let cpus: Vec<usize> = serde_json::from_value(v["cpus"].clone()).unwrap();
    assert_eq!(cpus, online.as_slice());
    let summary: u64 = ["ok", "warn", "bad", "info"]
        .iter()
        .map(|k| v["summary"][k].as_u64().unwrap())
        .sum();
    assert_eq!(summary, IDS.len() as u64);
    for c in v["checks"].as_array().unwrap() {
        assert!(
            ["ok", "warn", "bad", "info"].contains(&c["verdict"].as_str().unwrap()),
            "{c}"
        );
        assert!(!c["value"].as_str().unwrap().is_empty(), "{c}");
    }
    // The text report of the same machine succeeds too.
    ok(&["audit"]);
}

#[test]
fn offline_or_malformed_cpus_are_errors() {
    let out = run(&["audit", "--root", DESKTOP, "--cpus", "6-9"]);
    assert!(!out.status.success());
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "rtsleuth: --cpus 6-9: CPU 8-9 not online (online: 0-7)\n"
    );
    let out = run(&["audit", "--cpus", "x"]);
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("not a CPU list"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn a_missing_root_is_all_unknown() {
    let dir = tempfile::tempdir().unwrap();
    let out = run(&["audit", "--json", "--root", dir.path().to_str().unwrap()]);
    assert!(out.status.success());
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["summary"]["info"], 15);
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "rtsleuth: warning: /sys/devices/system/cpu/online is not readable: the per-CPU checks have no CPUs to look at (pass --cpus)\n"
    );
}
