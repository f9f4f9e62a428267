// SPDX-License-Identifier: GPL-2.0

//! The README's commands as the test command runs them: scripts/lib.sh's
//! `readme_command`, which reads a command from the README as it prints it,
//! and scripts/check-readme.sh's check of the demo's console. The demo once
//! printed every section and still failed (its verdict line never reached the
//! host), and nothing ran it: these checks are what now would notice.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output};

fn root() -> &'static Path {
    // tests/scripts → the checkout.
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

fn bash(build: &Path, script: &str) -> Output {
    Command::new("bash")
        .arg("-c")
        .arg(script)
        .current_dir(root())
        .env("ALLOCTAG_BUILD_DIR", build)
        .output()
        .expect("bash runs")
}

fn readme_command(word: &str) -> Output {
    let build = tempfile::tempdir().expect("tempdir");
    bash(
        build.path(),
        &format!("set -euo pipefail; . scripts/lib.sh; readme_command '{word}'"),
    )
}

#[test]
fn readme_command_reads_the_commands_the_readme_prints() {
    for (word, want) in [
        ("scripts/demo.sh", "scripts/demo.sh"),
        ("scripts/test.sh", "scripts/test.sh"),
        ("scripts/package.sh", "scripts/package.sh NAME"),
        ("scripts/export-patches.sh", "scripts/export-patches.sh OUTDIR"),
        ("git am", "git am -3 OUTDIR/*.patch"),
    ] {
        let out = readme_command(word);
        assert!(out.status.success(), "{word}: {}", String::from_utf8_lossy(&out.stderr));
        // The comment after the command is not part of it.
        assert_eq!(String::from_utf8_lossy(&out.stdout).trim_end(), want);
        // What the README names exists and runs.
        let script = want.split_whitespace().next().unwrap();
        if script.starts_with("scripts/") {
            let meta = std::fs::metadata(root().join(script)).expect(script);
            use std::os::unix::fs::PermissionsExt;
            assert!(meta.permissions().mode() & 0o111 != 0, "{script} is not executable");
        }
    }
}

#[test]
fn readme_command_fails_for_a_command_the_readme_lacks() {
    let out = readme_command("scripts/no-such-command.sh");
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("gives no command"));
}

/// scripts/check-readme.sh --demo-console on `console`: (exit ok, output).
fn demo_console(console: &str) -> (bool, String) {
    let build = tempfile::tempdir().expect("tempdir");
    let mut log = tempfile::NamedTempFile::new().expect("temp file");
    log.write_all(console.as_bytes()).expect("write");
    let out = bash(
        build.path(),
        &format!("scripts/check-readme.sh --demo-console {}", log.path().display()),
    );
    (out.status.success(), String::from_utf8_lossy(&out.stdout).into_owned())
}

/// A console with every section of scripts/guest/demo.sh, each with a line,
/// except those whose index is in `empty`.
fn console_with_sections(empty: &[usize]) -> String {
    let script = std::fs::read_to_string(root().join("scripts/guest/demo.sh")).expect("demo.sh");
    let n = script.lines().filter(|l| l.trim_start().starts_with("section \"")).count();
    assert!(n > 10, "scripts/guest/demo.sh has {n} sections");
    let mut c = String::from("[    0.000000] Linux version 6.12\nalloctag-guest: running demo\n");
    for i in 0..n {
        c += &format!("\n### section {i}\n");
        if !empty.contains(&i) {
            c += &format!("output of section {i}\n");
        }
    }
    c + "alloctag-guest: done rc=0\n"
}

#[test]
fn demo_console_with_every_section_passes() {
    let (ok, out) = demo_console(&console_with_sections(&[]));
    assert!(ok, "{out}");
}

#[test]
fn demo_console_with_an_empty_section_fails() {
    // The last section is followed only by the verdict line, which is not
    // output of its own.
    let n = console_with_sections(&[]).matches("### ").count();
    for empty in [3, n - 1] {
        let (ok, out) = demo_console(&console_with_sections(&[empty]));
        assert!(!ok);
        assert!(out.contains(&format!("section \"section {empty}\" printed nothing")), "{out}");
    }
}

#[test]
fn demo_console_missing_a_section_fails() {
    let full = console_with_sections(&[]);
    let cut = full.replace("\n### section 5\noutput of section 5\n", "\n");
    let (ok, out) = demo_console(&cut);
    assert!(!ok);
    assert!(out.contains("sections shown, scripts/guest/demo.sh has"), "{out}");
}

#[test]
fn demo_console_with_a_shell_error_or_a_failed_claim_fails() {
    for bad in [
        "sh: allocinfo: not found",
        "cat: can't open '/proc/allocwaste': No such file or directory",
        "DEMO FAILED: the counters changed after ls -R / with profiling off",
    ] {
        let c = console_with_sections(&[]).replace("output of section 2\n", &format!("{bad}\n"));
        let (ok, out) = demo_console(&c);
        assert!(!ok, "{bad}");
        assert!(out.contains(bad), "{out}");
    }
}
