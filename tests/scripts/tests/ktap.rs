// SPDX-License-Identifier: GPL-2.0

//! scripts/lib.sh's `ktap_only`, between kunit.py's console and its parser
//! (scripts/kunit.sh). kunit.py parses the console as it comes: a kernel
//! message between a suite's `KTAP version 1` and its `# Subtest:` line once
//! made it report six passing suites as errors and the run as crashed (CI,
//! 2026-11-25, the boot's clocksource switch). The inputs here are that run's
//! lines.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

fn root() -> &'static Path {
    // tests/scripts → the checkout.
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

/// `input` through `ktap_only`: (stdout, stderr).
fn ktap_only(input: &str) -> (String, String) {
    let build = tempfile::tempdir().expect("tempdir");
    let mut child = Command::new("bash")
        .arg("-c")
        .arg("set -euo pipefail; . scripts/lib.sh; ktap_only")
        .current_dir(root())
        .env("ALLOCTAG_BUILD_DIR", build.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("bash runs");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(input.as_bytes())
        .expect("write");
    let out = child.wait_with_output().expect("ktap_only ends");
    assert!(out.status.success(), "ktap_only failed: {out:?}");
    (
        String::from_utf8(out.stdout).expect("utf-8"),
        String::from_utf8(out.stderr).expect("utf-8"),
    )
}

/// kunit.py's lines and the boot, before the KTAP.
const BOOT: &str = "\
[04:03:19] Configuring KUnit Kernel ...
Building with:
$ make all compile_commands.json ARCH=x86_64 --jobs=2
[04:04:02] Starting KUnit Kernel (1/1)...
Linux version 6.12.117 (root@ci) #1 SMP PREEMPT
Run /init as init process
";

/// Two passing suites, as the kernel prints them.
const TWO_SUITES: &str = "\
KTAP version 1
1..2
    KTAP version 1
    # Subtest: alloctag_format
    1..1
    ok 1 header_is_6_12s
# alloctag_format: pass:1 fail:0 skip:0 total:1
ok 1 alloctag_format
    KTAP version 1
    # Subtest: alloctag_capture
    1..1
    ok 1 kmalloc_recorded_until_kfree
# Totals: pass:1 fail:0 skip:0 total:1
ok 2 alloctag_capture
";

#[test]
fn kernel_message_inside_a_suite_header_is_dropped() {
    // The second suite's header with the clocksource switch inside it, as
    // in the CI run, and the kernel's and kunit.py's lines after the KTAP.
    let ktap = TWO_SUITES.replacen(
        "    KTAP version 1\n    # Subtest: alloctag_capture",
        "    KTAP version 1\n\
         clocksource: tsc: mask: 0xffffffffffffffff max_cycles: 0x256becde448\n\
         clocksource: Switched to clocksource tsc\n    # Subtest: alloctag_capture",
        1,
    );
    assert_ne!(ktap, TWO_SUITES);
    let input =
        format!("{BOOT}{ktap}reboot: Restarting system\n[04:04:06] Elapsed time: 47.301s total\n");
    let (out, err) = ktap_only(&input);
    assert_eq!(out, TWO_SUITES);
    // kunit.py's own lines stay visible, the boot's do not.
    assert_eq!(
        err,
        "\
[04:03:19] Configuring KUnit Kernel ...
Building with:
$ make all compile_commands.json ARCH=x86_64 --jobs=2
[04:04:02] Starting KUnit Kernel (1/1)...
"
    );
}

#[test]
fn failures_and_their_explanations_are_kept() {
    let ktap = "\
KTAP version 1
1..1
    KTAP version 1
    # Subtest: alloctag_counters
    1..2
    # tail_pages: EXPECTATION FAILED at lib/alloctag/src/tests/counters.rs:90
    Expected bytes == 0, but
        bytes == 4096 (0x1000)
    not ok 1 tail_pages_freed_while_head_held
    ok 2 disabled_profiling_freezes_counters # SKIP CONFIG_MEM_ALLOC_PROFILING_DEBUG
not ok 1 alloctag_counters
kunit executor: filter_glob did not match
";
    let input = format!(
        "{BOOT}{}",
        ktap.replacen(
            "    not ok 1",
            "workingset: timestamp_bits=62 max_order=19 bucket_order=0\n    not ok 1",
            1
        )
    );
    let (out, _) = ktap_only(&input);
    assert_eq!(out, ktap);
}

#[test]
fn printk_time_prefix_is_taken_off() {
    let input = "\
[04:04:02] Starting KUnit Kernel (1/1)...
[    0.000000] Linux version 6.12.117
[    1.201000] KTAP version 1
[    1.201001] 1..1
[    1.201002] clocksource: Switched to clocksource tsc
[    1.201003]     KTAP version 1
[    1.201004]     # Subtest: alloctag_index
[    1.201005]     1..1
[    1.201006]     ok 1 leaves_are_made_on_demand
[    1.201007] ok 1 alloctag_index
";
    let (out, _) = ktap_only(input);
    assert_eq!(
        out,
        "\
KTAP version 1
1..1
    KTAP version 1
    # Subtest: alloctag_index
    1..1
    ok 1 leaves_are_made_on_demand
ok 1 alloctag_index
"
    );
}
