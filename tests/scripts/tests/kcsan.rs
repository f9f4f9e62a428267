// SPDX-License-Identifier: GPL-2.0

//! scripts/lib.sh's `kcsan_drop_listed`, which leaves out of the kcsan
//! configuration's check (scripts/build-matrix.sh) the KCSAN reports that
//! are not alloctag's to answer for: those tests/kcsan/upstream.txt lists as
//! races of 6.12's own functions, and those in which no part of alloctag
//! takes part. Never a race in alloctag's functions or under its frames
//! unless listed, never a line another CPU printed inside a report (it stays,
//! on its own), never what follows a report that did not close. The
//! reports are those of the kcsan stress boots of 2026-11-27.

use std::path::Path;
use std::process::Command;

fn root() -> &'static Path {
    // tests/scripts → the checkout.
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

/// `log` through `kcsan_drop_listed` with the tree's list: (stdout, stderr).
fn drop_listed(log: &str) -> (String, String) {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("console.log");
    std::fs::write(&file, log).expect("write");
    let out = Command::new("bash")
        .arg("-c")
        .arg("set -euo pipefail; . scripts/lib.sh; kcsan_drop_listed tests/kcsan/upstream.txt \"$1\"")
        .arg("bash")
        .arg(&file)
        .current_dir(root())
        .env("ALLOCTAG_BUILD_DIR", dir.path())
        .output()
        .expect("bash runs");
    assert!(out.status.success(), "kcsan_drop_listed failed: {out:?}");
    (
        String::from_utf8(out.stdout).expect("utf-8"),
        String::from_utf8(out.stderr).expect("utf-8"),
    )
}

const RULE: &str = "==================================================================\n";

/// The timekeeper's latch, as the stress boot reported it (listed).
const LATCH: &str = "\
BUG: KCSAN: data-race in ktime_get_mono_fast_ns / timekeeping_update

write to 0xffffffff944b4c70 of 56 bytes by interrupt on cpu 0:
 timekeeping_update+0x1af/0x2a0
 timekeeping_advance+0x862/0xbb0
 update_wall_time+0x7/0x20

read to 0xffffffff944b4c90 of 8 bytes by task 1314 on cpu 3:
 ktime_get_mono_fast_ns+0xc1/0x130
 _RNvNtNtCs9LyfFC3Mr9W_8alloctag7capture6report8snapshot+0x1a9/0x520
 full_proxy_open+0x22a/0x3c0

value changed: 0x00228e3b309b718c -> 0x0022cb4430c0108c

Reported by Kernel Concurrency Sanitizer on:
CPU: 3 UID: 0 PID: 1314 Comm: cat Not tainted 6.12.117 #8
Hardware name: QEMU Standard PC (i440FX + PIIX, 1996), BIOS 0.1 11/11/2019
";

/// The race planted in alloctag_page_ext_add() (never listed).
const PLANT: &str = "\
BUG: KCSAN: data-race in alloctag_page_ext_add / alloctag_page_ext_add

write to 0xffffffff88134e90 of 8 bytes by task 248 on cpu 0:
 alloctag_page_ext_add+0x3f/0xd0
 prep_new_page+0x15/0x190

read to 0xffffffff88134e90 of 8 bytes by task 250 on cpu 1:
 alloctag_page_ext_add+0x1d/0xd0
 prep_new_page+0x15/0x190

value changed: 0x0000000000001a2b -> 0x0000000000001a2c

Reported by Kernel Concurrency Sanitizer on:
CPU: 1 UID: 0 PID: 250 Comm: alloctag-storm Not tainted 6.12.117 #6
";

#[test]
fn a_listed_report_goes_and_the_rest_stays() {
    let log = format!("before\n{RULE}{LATCH}{RULE}after\n");
    let (out, err) = drop_listed(&log);
    assert_eq!(out, format!("before\n{RULE}after\n"));
    assert_eq!(err, "kcsan: 1 listed, 0 not alloctag's, left out\n");
}

#[test]
fn a_race_in_alloctag_stays() {
    let log = format!("{RULE}{PLANT}{RULE}");
    let (out, err) = drop_listed(&log);
    assert_eq!(out, log);
    assert_eq!(err, "kcsan: 0 listed, 0 not alloctag's, left out\n");
}

#[test]
fn a_listed_title_with_alloctag_racing_stays() {
    // A list line cannot excuse a racing function of alloctag's.
    let log = LATCH.replace("ktime_get_mono_fast_ns / ", "alloctag_waste_now / ");
    let (out, _) = drop_listed(&format!("{RULE}{log}{RULE}"));
    assert!(out.contains("BUG: KCSAN: data-race in alloctag_waste_now"));
}

#[test]
fn unknown_origin_needs_every_listed_frame() {
    let entropy = "\
BUG: KCSAN: data-race in blake2s_update+0xd6/0x100

race at unknown origin, with read to 0xffff8941823d5fa0 of 8 bytes by task 2684 on cpu 0:
 blake2s_update+0xd6/0x100
 add_device_randomness+0x6f/0xa0
 release_task+0x4ad/0xbb0

value changed: 0x000000000170c5e5 -> 0x000000000173be52
";
    let (out, _) = drop_listed(&format!("{RULE}{entropy}{RULE}"));
    assert!(!out.contains("BUG: KCSAN"), "{out}");
    // The same title from another caller is not the listed race.
    let other = entropy.replace("release_task", "alloctag_reap");
    let (out, _) = drop_listed(&format!("{RULE}{other}{RULE}"));
    assert!(
        out.contains("BUG: KCSAN: data-race in blake2s_update"),
        "{out}"
    );
}

/// `report` between its rules, with `line` printed by another CPU just
/// before its line that starts with `at`.
fn with_line_inside(report: &str, at: &str, line: &str) -> String {
    let (head, tail) = report.split_at(report.find(&format!("\n{at}")).expect("the line") + 1);
    format!("{RULE}{head}{line}{tail}{RULE}")
}

#[test]
fn a_line_from_another_cpu_stays_without_the_listed_report() {
    // Another CPU's printk (or a guest program's line on the console) may
    // land between a report's lines: the line is judged on its own, so a
    // WARNING still fails the run, and the listed race still goes.
    let warning = "WARNING: CPU: 2 PID: 77 at lib/alloctag/src/glue.c:120 alloctag_x+0x1/0x2\n";
    let log = with_line_inside(LATCH, "read to", warning);
    let (out, err) = drop_listed(&log);
    assert_eq!(out, format!("{RULE}{warning}"));
    assert_eq!(err, "kcsan: 1 listed, 0 not alloctag's, left out\n");
}

#[test]
fn a_line_from_another_cpu_does_not_make_a_race_alloctag_s() {
    // The stress boot's own console lines name alloctag; the report's
    // lines decide whose race it is.
    let guest = "guest-test: ok 2 test_stress_modules\n";
    let log = with_line_inside(KERNEL_ONLY, "read to", guest);
    let (out, err) = drop_listed(&log);
    assert_eq!(out, format!("{RULE}{guest}"));
    assert!(
        err.ends_with("kcsan: 0 listed, 1 not alloctag's, left out\n"),
        "{err}"
    );
}

#[test]
fn an_interleaved_line_does_not_excuse_a_race_in_alloctag() {
    let guest = "guest-test: ok 1 test_stress_modules\n";
    let log = with_line_inside(PLANT, "read to", guest);
    let (out, _) = drop_listed(&log);
    assert_eq!(out, log);
}

#[test]
fn a_report_that_lost_lines_is_kept() {
    // printk says where it dropped lines: an alloctag frame may have been
    // one of them, so the report cannot be judged free of alloctag.
    let lost = KERNEL_ONLY.replace(
        " __mutex_lock+0x19d/0x810\n",
        "** 3 printk messages dropped **\n",
    );
    let log = format!("{RULE}{lost}{RULE}");
    let (out, err) = drop_listed(&log);
    assert_eq!(out, log);
    assert_eq!(err, "kcsan: 0 listed, 0 not alloctag's, left out\n");
    // Likewise for a listed race.
    let lost = LATCH.replace(
        " timekeeping_advance+0x862/0xbb0\n",
        "** 1 printk messages dropped **\n",
    );
    let log = format!("{RULE}{lost}{RULE}");
    assert_eq!(drop_listed(&log).0, log);
}

#[test]
fn the_lines_dump_stack_adds_belong_to_the_report() {
    // A report from a worker, with a watched bit mask: its lines, so a
    // worker of alloctag's makes the race alloctag's.
    let extra = "Workqueue: events vmstat_update\n bits changed: 0x01 with mask 0x0f\n";
    let (out, err) = drop_listed(&format!("{RULE}{KERNEL_ONLY}{extra}{RULE}"));
    assert_eq!(out, RULE);
    assert!(
        err.ends_with("kcsan: 0 listed, 1 not alloctag's, left out\n"),
        "{err}"
    );
    let ours = format!("{RULE}{KERNEL_ONLY}Workqueue: events alloctag_reap_work\n{RULE}");
    assert_eq!(drop_listed(&ours).0, ours);
}

#[test]
fn a_report_that_never_closes_keeps_what_follows() {
    let log = format!("{RULE}{LATCH}Oops: general protection fault\nKernel panic - not syncing\n");
    let (out, _) = drop_listed(&log);
    assert_eq!(out, log);
}

/// A race of 6.12's locking under the stress (osq, seen 2026-11-27), here
/// renamed so that no list line matches it.
const KERNEL_ONLY: &str = "\
BUG: KCSAN: data-race in osq_lockx / osq_wait_nextx

write (marked) to 0xffff892ebd42dcc0 of 8 bytes by task 109 on cpu 3:
 osq_lockx+0xb8/0x210
 __mutex_lock+0x19d/0x810
 pcpu_alloc_noprof+0x103/0xdb0

read to 0xffff892ebd42dcc0 of 8 bytes by task 117 on cpu 0:
 osq_wait_nextx+0x68/0xa0
 __mutex_lock+0x1fb/0x810
 pcpu_alloc_noprof+0x103/0xdb0

value changed: 0x0000000000000000 -> 0xffff892ebd5adcc0
";

#[test]
fn a_race_without_alloctag_is_named_not_kept() {
    let (out, err) = drop_listed(&format!("{RULE}{KERNEL_ONLY}{RULE}"));
    assert!(!out.contains("BUG: KCSAN"), "{out}");
    assert_eq!(
        err,
        "kcsan: not alloctag's: BUG: KCSAN: data-race in osq_lockx / osq_wait_nextx\n\
         kcsan: 0 listed, 1 not alloctag's, left out\n"
    );
}

#[test]
fn an_unlisted_race_under_alloctag_stays() {
    // The same race with alloctag's module counters as a caller.
    let log = KERNEL_ONLY.replace(
        " pcpu_alloc_noprof+0x103/0xdb0\n\nvalue",
        " pcpu_alloc_noprof+0x103/0xdb0\n _RNvNtNtCs9LyfFC3Mr9W_8alloctag9alloc_tag8counters4make+0x1/0x2\n\nvalue",
    );
    assert_ne!(log, KERNEL_ONLY);
    let (out, err) = drop_listed(&format!("{RULE}{log}{RULE}"));
    assert!(out.contains("BUG: KCSAN: data-race in osq_lockx"), "{out}");
    assert_eq!(err, "kcsan: 0 listed, 0 not alloctag's, left out\n");
}
