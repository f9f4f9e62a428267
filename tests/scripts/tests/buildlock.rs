// SPDX-License-Identifier: GPL-2.0

//! scripts/build-kernel.sh and the scripts that rewrite a source tree share
//! one build directory on a machine (CI's runs, a session's, its helpers'). A
//! build that reads a tree while check-series.sh resets and re-applies it
//! compiles some files as they were for a moment; the series' files then
//! get their old times back, so no later build redoes them. Once an arm64
//! kernel built so booted without /proc/allocinfo (its init returned
//! -EINVAL), and every run after it reused it, CI's too. So a build holds its
//! source tree (shared) and its build directory (alone), and whatever
//! rewrites a tree holds it alone.
//!
//! The tree here is a fake kernel tree whose Makefile records when `all`
//! starts and ends.

mod common;

use common::{lib_sh, ok};
use std::fs;
use std::path::Path;

/// The Makefile of a tree whose build appends "start" to `$(O)/events`,
/// touches `$(O)/started`, waits (at most a minute) for `$(O)/release`, and
/// appends "end": a test decides when a build ends, whatever the machine's
/// load. `lib/alloc_tag.c` makes it a 6.12 tree to graft.sh.
const MAKEFILE: &str = "\
tinyconfig:\n\t@: > $(O)/.config\n\
olddefconfig:\n\t@:\n\
kernelversion:\n\t@echo 6.12.0\n\
all:\n\t@echo start >> $(O)/events; touch $(O)/started; \
for i in $$(seq 600); do [ -e $(O)/release ] && break; sleep 0.1; done; \
echo end >> $(O)/events\n";

/// A build directory with a git repository, `repo` (the fake tree, tagged
/// `base`), and a checkout of it, `wt`, made by `git_worktree_reset`.
struct Fixture {
    tmp: tempfile::TempDir,
    wt: String,
    repo: String,
}

fn fixture() -> Fixture {
    let tmp = tempfile::tempdir().expect("tempdir");
    let repo = common::repo(
        tmp.path(),
        &[("Makefile", MAKEFILE), ("lib/alloc_tag.c", "")],
    );
    let wt = tmp.path().join("wt").display().to_string();
    let out = lib_sh(tmp.path(), &format!("git_worktree_reset {repo} {wt} base"));
    assert!(ok(&out));
    Fixture { tmp, wt, repo }
}

/// Shell that starts building kernel-`name` of the fake tree `tree` in the
/// background, as scripts/build-kernel.sh (its messages in
/// kernel-`name`.log), and waits until its `all` runs or fails.
fn build_started(tree: &str, name: &str, build: &Path) -> String {
    let out = build.join(format!("kernel-{name}"));
    format!(
        "mkdir -p {out}; rm -f {out}/started {out}/release; \
         KERNEL_TREE={tree} KERNEL_CONFIG=up scripts/build-kernel.sh {name} \
           >/dev/null 2>{out}.log & \
         for _ in $(seq 600); do [ -e {out}/started ] && break; sleep 0.1; done; \
         [ -e {out}/started ]; ",
        out = out.display()
    )
}

/// Shell that lets kernel-`name`'s build end.
fn release(name: &str, build: &Path) -> String {
    format!("touch {}/kernel-{name}/release; ", build.display())
}

#[test]
fn a_tree_is_not_reset_while_a_build_reads_it() {
    let Fixture { tmp, wt, repo } = fixture();
    let out = lib_sh(
        tmp.path(),
        &format!(
            "{}WORKTREE_LOCK_WAIT=1; \
             if git_worktree_reset {repo} {wt} base 2>/dev/null; then echo took; \
             else echo refused; fi; {}wait",
            build_started(&wt, "lock", tmp.path()),
            release("lock", tmp.path())
        ),
    );
    assert!(ok(&out));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "refused\n");

    // Once the build is done, the tree is free again.
    let out = lib_sh(
        tmp.path(),
        &format!("WORKTREE_LOCK_WAIT=1; git_worktree_reset {repo} {wt} base && echo took"),
    );
    assert!(ok(&out));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "took\n");
}

#[test]
fn a_tree_is_not_grafted_while_a_build_reads_it() {
    let Fixture { tmp, wt, .. } = fixture();
    let out = lib_sh(
        tmp.path(),
        &format!(
            "{}WORKTREE_LOCK_WAIT=1 scripts/graft.sh {wt} 2>&1 || true; {}wait",
            build_started(&wt, "lock", tmp.path()),
            release("lock", tmp.path())
        ),
    );
    assert!(ok(&out));
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        said.contains(&format!("error: {wt} is in use by another run")),
        "{said}"
    );
}

#[test]
fn two_builds_of_one_kernel_take_turns() {
    let Fixture { tmp, wt, .. } = fixture();
    let log = tmp.path().join("second.log");
    // The second build, started while the first builds, says it waits; the
    // first then ends, and the second builds (its release already there).
    let out = lib_sh(
        tmp.path(),
        &format!(
            "{}KERNEL_TREE={wt} KERNEL_CONFIG=up scripts/build-kernel.sh lock \
               >/dev/null 2>{log} & \
             for _ in $(seq 600); do grep -q 'waiting for' {log} && break; sleep 0.1; done; \
             grep -q 'waiting for' {log}; {}wait",
            build_started(&wt, "lock", tmp.path()),
            release("lock", tmp.path()),
            log = log.display()
        ),
    );
    assert!(ok(&out));
    let events = fs::read_to_string(tmp.path().join("kernel-lock/events")).expect("events");
    assert_eq!(events, "start\nend\nstart\nend\n");
}

#[test]
fn two_builds_read_one_tree_at_once() {
    let Fixture { tmp, wt, .. } = fixture();
    // Two kernels of one tree (the matrix's arm64 and a bisect's) need not
    // wait for each other: the second starts while the first waits to end.
    let out = lib_sh(
        tmp.path(),
        &format!(
            "{}{}{}{}wait; echo both",
            build_started(&wt, "one", tmp.path()),
            build_started(&wt, "two", tmp.path()),
            release("one", tmp.path()),
            release("two", tmp.path())
        ),
    );
    assert!(ok(&out));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "both\n");
}
