//! The static binaries of `dist/build.sh`: all three are statically linked, and the ARM ones,
//! run under qemu-user, print exactly what the x86_64 one prints on real traces of every binary
//! format (armv7 is 32-bit: the readers' offsets, lengths and maps in a 32-bit `usize`).
//!
//! They are built as `dist/build.sh` builds them (targets, C cross compilers, linkers, static
//! flags), with the `dist-check` profile: unoptimised, all three take 3 minutes here where
//! `dist`'s link-time optimisation took 7.5, and what this checks (static linking, the same
//! output on a 32-bit target) does not depend on optimisation. Even so that is minutes, so
//! this runs when `CI` is set (`.ci/run`, which also provides the cross compilers and qemu-user
//! through dist/build.sh) or `RTSLEUTH_DIST=1`; otherwise it says so and passes.

mod common;

use common::repo_root;
use std::process::Command;

/// Real traces: text, zstd text, trace.dat, and a third-party Perfetto trace.
const TRACES: [&str; 4] = [
    "tests/fixtures/recorded/fifo_above/trace.txt",
    "tests/fixtures/lab/rt/printk/trace.txt.zst",
    "tests/fixtures/recorded/wq/trace.dat",
    "../shared/fixtures/realworld/ms-perf-tools-linux-android/TestData/Perfetto/test_trace.perfetto-trace",
];

fn wanted() -> bool {
    let on = std::env::var_os("CI").is_some() || std::env::var_os("RTSLEUTH_DIST").is_some();
    if !on {
        println!(
            "skipped: building the static binaries takes minutes; set RTSLEUTH_DIST=1 (CI sets CI)"
        );
    }
    on
}

fn output(cmd: &mut Command) -> Vec<u8> {
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{cmd:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

#[test]
fn three_static_binaries_print_the_same_findings() {
    if !wanted() {
        return;
    }
    let root = repo_root();
    // A target directory of its own (the one of this test run is locked by cargo), and the
    // binaries beside it, not in dist/: unoptimised, they are not the ones to ship.
    let out = root.join("target/dist-check");
    let status = Command::new("bash")
        .arg(root.join("dist/build.sh"))
        .env("CARGO_TARGET_DIR", root.join("target/dist-build"))
        .env("DIST_PROFILE", "dist-check")
        .env("DIST_DIR", &out)
        .status()
        .unwrap();
    assert!(status.success(), "dist/build.sh failed");
    let bin = |arch: &str| out.join(arch).join("rtsleuth").display().to_string();
    for arch in ["x86_64", "aarch64", "armv7"] {
        let file =
            String::from_utf8(output(Command::new("file").arg("-b").arg(bin(arch)))).unwrap();
        assert!(
            file.contains("statically linked") || file.contains("static-pie linked"),
            "{arch}: {file}"
        );
    }
    for trace in TRACES {
        let path = root.join(trace);
        let run = |runner: &[&str]| {
            let mut c = Command::new(runner[0]);
            c.args(&runner[1..])
                .args(["explain", "--json", "--top", "3"])
                .arg(&path);
            c.current_dir(&root);
            output(&mut c)
        };
        let x86 = run(&[&bin("x86_64")]);
        assert!(
            String::from_utf8_lossy(&x86).contains("\"root_cause\""),
            "{trace}"
        );
        for (qemu, arch) in [("qemu-aarch64", "aarch64"), ("qemu-arm", "armv7")] {
            assert!(
                run(&[qemu, &bin(arch)]) == x86,
                "{arch} differs from x86_64 on {trace}"
            );
        }
        println!(
            "{trace}: x86_64, aarch64 and armv7 agree ({} bytes of JSON)",
            x86.len()
        );
    }
}
