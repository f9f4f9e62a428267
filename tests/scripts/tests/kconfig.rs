// SPDX-License-Identifier: GPL-2.0

//! What a kernel that turns profiling on gets from alloctag's Kconfig without asking for more.
//! A distribution (Debian's 6.12 sets MEM_ALLOC_PROFILING and DEBUG_FS, and leaves the kernel's
//! FAULT_INJECTION off) gets capture and waste accounting, which only observe, and no fault
//! injector: alloctag's depends on FAULT_INJECTION, as failslab and fail_page_alloc do. A kernel
//! that asks for the fault-injection framework gets alloctag's too.
//!
//! The kernel's own Kconfig decides, as scripts/build-kernel.sh makes a configuration (tinyconfig,
//! the fragment appended, olddefconfig), on the build matrix's Debian-shaped fragment
//! (scripts/configs/debian.config), in a scratch tree: the Kconfig files, scripts/ and the
//! Makefiles of Debian's linux-source-6.12, grafted with this checkout (scripts/graft.sh). No
//! kernel is built: about a minute on the 2-core host (50 to 120 s as others build), most of it
//! unpacking the tarball and Kconfig's compiler probes.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

mod series;

use series::{TARBALL, root, series_files};

/// A tree in `dir` with what Kconfig reads and the files the series edits, grafted.
fn tree(dir: &Path) -> PathBuf {
    assert!(
        Path::new(TARBALL).exists(),
        "{TARBALL} missing: run scripts/install-deps.sh"
    );
    let mut members: Vec<String> = [
        "Makefile",
        "*Kconfig*",
        "scripts/*",
        "arch/*/Makefile*",
        "arch/*/configs/*",
        "kernel/configs/*",
        "lib/alloc_tag.c",
    ]
    .iter()
    .map(|m| format!("linux-source-6.12/{m}"))
    .collect();
    // Each but those the patterns above take already (tar names those again as not found).
    members.extend(
        series_files()
            .iter()
            .filter(|f| {
                !(f.contains("Kconfig")
                    || f.starts_with("scripts/")
                    || f.starts_with("kernel/configs/")
                    || *f == "Makefile"
                    || *f == "lib/alloc_tag.c"
                    || (f.starts_with("arch/")
                        && (f.contains("/Makefile") || f.contains("/configs/"))))
            })
            .map(|f| format!("linux-source-6.12/{f}")),
    );
    let out = Command::new("tar")
        .arg("-xJf")
        .arg(TARBALL)
        .arg("-C")
        .arg(dir)
        .arg("--wildcards")
        .args(&members)
        .output()
        .expect("tar runs");
    assert!(
        out.status.success(),
        "tar could not unpack the tree: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let tree = dir.join("linux-source-6.12");
    let out = Command::new("bash")
        .arg("scripts/graft.sh")
        .arg(&tree)
        .current_dir(root())
        .env("ALLOCTAG_BUILD_DIR", dir.join("build"))
        .output()
        .expect("bash runs");
    assert!(
        out.status.success(),
        "graft: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    tree
}

/// Runs `script` in bash, with scripts/lib.sh sourced and `$tree` and `$opts` set: the make
/// options of scripts/build-kernel.sh for a kernel named debian* (kernel_env's toolchain, with
/// GCC as kernel_compiler chooses it; its DWARFCRC tool plays no part in Kconfig).
fn kconfig(dir: &Path, tree: &Path, script: &str) {
    let out = Command::new("bash")
        .arg("-c")
        .arg(format!(
            "set -euo pipefail; . scripts/lib.sh; kernel_env
             opts=(ARCH=x86_64 CC=gcc-12 HOSTCC=gcc-12)
             for o in \"${{KMAKE_OPTS[@]}}\"; do [ \"$o\" = LLVM=-19 ] || opts+=(\"$o\"); done
             kmake() {{ make -s -C \"$tree\" O=\"$1\" \"${{opts[@]}}\" \"${{@:2}}\"; }}
             {script}"
        ))
        .current_dir(root())
        .env("ALLOCTAG_BUILD_DIR", dir.join("build"))
        .env("tree", tree)
        .env_remove("BINDGEN")
        .output()
        .expect("bash runs");
    assert!(
        out.status.success(),
        "Kconfig failed: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The value of `CONFIG_<name>` in `config`: `Some("y")`, or `None` when unset or absent.
fn value<'a>(config: &'a str, name: &str) -> Option<&'a str> {
    let key = format!("CONFIG_{name}=");
    config.lines().find_map(|l| l.strip_prefix(key.as_str()))
}

#[test]
fn a_debian_kernel_gets_capture_and_no_fault_injector() {
    let dir = tempfile::tempdir().expect("tempdir");
    let tree = tree(dir.path());
    let debian = root().join("scripts/configs/debian.config");
    let extra = dir.path().join("extra.config");
    // The same kernel asking for the fault-injection framework, and without capture.
    fs::write(
        &extra,
        "CONFIG_FAULT_INJECTION=y\n# CONFIG_ALLOCTAG_CAPTURE is not set\n",
    )
    .expect("write");
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    fs::create_dir_all(&b).expect("mkdir");
    kconfig(
        dir.path(),
        &tree,
        &format!(
            "kmake {a} tinyconfig >/dev/null
             cp {a}/.config {b}/.config
             cat {debian} >>{a}/.config
             kmake {a} olddefconfig >/dev/null 2>&1
             cat {debian} {extra} >>{b}/.config
             kmake {b} olddefconfig >/dev/null 2>&1",
            a = a.display(),
            b = b.display(),
            debian = debian.display(),
            extra = extra.display()
        ),
    );
    let config = fs::read_to_string(a.join(".config")).expect(".config");
    // Without the Rust core none of alloctag's options exists, and the rest proves nothing.
    assert_eq!(
        value(&config, "MEM_ALLOC_PROFILING_RUST"),
        Some("y"),
        "debian.config has no Rust core: is the Rust toolchain installed (scripts/install-deps.sh)?"
    );
    assert_eq!(value(&config, "DEBUG_FS"), Some("y"));
    assert!(
        config
            .lines()
            .any(|l| l == "# CONFIG_FAULT_INJECTION is not set"),
        "debian.config is no longer Debian-shaped: FAULT_INJECTION is {:?}",
        value(&config, "FAULT_INJECTION")
    );
    assert_eq!(
        value(&config, "ALLOCTAG_FAULT_INJECTION"),
        None,
        "a kernel without FAULT_INJECTION got alloctag's fault injector"
    );
    assert_eq!(value(&config, "ALLOCTAG_CAPTURE"), Some("y"));
    assert_eq!(value(&config, "ALLOCTAG_WASTE"), Some("y"));
    assert_eq!(value(&config, "ALLOCTAG_SELECTION"), Some("y"));

    let config = fs::read_to_string(b.join(".config")).expect(".config");
    assert_eq!(value(&config, "FAULT_INJECTION"), Some("y"));
    assert_eq!(
        value(&config, "ALLOCTAG_FAULT_INJECTION"),
        Some("y"),
        "a kernel with FAULT_INJECTION did not get alloctag's"
    );
    assert_eq!(value(&config, "ALLOCTAG_CAPTURE"), None);
    // Waste accounting shares capture's hooks: none without it.
    assert_eq!(value(&config, "ALLOCTAG_WASTE"), None);
    assert_eq!(value(&config, "ALLOCTAG_SELECTION"), Some("y"));
}

/// scripts/build-kernel.sh and kunit.py fail a configuration whose option does not stick: every
/// configuration of the checkout that asks for alloctag's fault injection asks for the
/// framework it depends on in the same file.
#[test]
fn every_configuration_with_fault_injection_sets_the_framework() {
    let mut files: Vec<PathBuf> = Vec::new();
    for d in ["scripts/configs", "tests/kunit"] {
        for entry in fs::read_dir(root().join(d)).expect(d) {
            files.push(entry.expect("entry").path());
        }
    }
    let mut checked = 0;
    for f in &files {
        let text = fs::read_to_string(f).expect("read");
        if text
            .lines()
            .any(|l| l == "CONFIG_ALLOCTAG_FAULT_INJECTION=y")
        {
            checked += 1;
            assert!(
                text.lines().any(|l| l == "CONFIG_FAULT_INJECTION=y"),
                "{} sets CONFIG_ALLOCTAG_FAULT_INJECTION=y without CONFIG_FAULT_INJECTION=y",
                f.display()
            );
        }
    }
    // arm64, bench-fault, the KCSAN and the test kernel's kunitconfigs.
    assert!(checked >= 4, "{checked} configurations set it");
}
