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

/// The Makefile of a tree that builds in two seconds, appending "start" and
/// "end" to `$(O)/events`.
const MAKEFILE: &str = "\
tinyconfig:\n\t@: > $(O)/.config\n\
olddefconfig:\n\t@:\n\
kernelversion:\n\t@echo 6.12.0\n\
all:\n\t@echo start >> $(O)/events; touch $(O)/started; sleep 2; echo end >> $(O)/events\n";

/// A build directory with a git repository, `repo` (the fake tree, tagged
/// `base`), and a checkout of it, `wt`, made by `git_worktree_reset`.
struct Fixture {
    tmp: tempfile::TempDir,
    wt: String,
    repo: String,
}

fn fixture() -> Fixture {
    let tmp = tempfile::tempdir().expect("tempdir");
    let repo = common::repo(tmp.path(), &[("Makefile", MAKEFILE)]);
    let wt = tmp.path().join("wt").display().to_string();
    let out = lib_sh(tmp.path(), &format!("git_worktree_reset {repo} {wt} base"));
    assert!(ok(&out));
    Fixture { tmp, wt, repo }
}

/// Shell that builds kernel-`name` of the fake tree `tree` in the
/// background, as scripts/build-kernel.sh, and waits until its `all` runs.
fn build_started(tree: &str, name: &str, build: &Path) -> String {
    let started = build.join(format!("kernel-{name}/started"));
    format!(
        "rm -f {started}; \
         KERNEL_TREE={tree} KERNEL_CONFIG=up scripts/build-kernel.sh {name} >/dev/null 2>&1 & \
         for _ in $(seq 100); do [ -e {started} ] && break; sleep 0.1; done; \
         [ -e {started} ]; ",
        started = started.display()
    )
}

#[test]
fn a_tree_is_not_reset_while_a_build_reads_it() {
    let Fixture { tmp, wt, repo } = fixture();
    let out = lib_sh(
        tmp.path(),
        &format!(
            "{}WORKTREE_LOCK_WAIT=1; \
             if git_worktree_reset {repo} {wt} base 2>/dev/null; then echo took; \
             else echo refused; fi; wait",
            build_started(&wt, "lock", tmp.path())
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
fn the_grafted_tree_is_not_grafted_while_a_build_reads_it() {
    let Fixture { tmp, wt, .. } = fixture();
    // graft.sh and prepare-tree.sh take the tree with tree_lock -x.
    let out = lib_sh(
        tmp.path(),
        &format!(
            "{}WORKTREE_LOCK_WAIT=1; \
             if (tree_lock -x {wt}) 2>/dev/null; then echo took; else echo refused; fi; wait",
            build_started(&wt, "lock", tmp.path())
        ),
    );
    assert!(ok(&out));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "refused\n");

    let out = lib_sh(
        tmp.path(),
        &format!("WORKTREE_LOCK_WAIT=1; tree_lock -x {wt} && echo took"),
    );
    assert!(ok(&out));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "took\n");
}

#[test]
fn two_builds_of_one_kernel_take_turns() {
    let Fixture { tmp, wt, .. } = fixture();
    let out = lib_sh(
        tmp.path(),
        &format!(
            "{}KERNEL_TREE={wt} KERNEL_CONFIG=up scripts/build-kernel.sh lock >/dev/null 2>&1; \
             wait",
            build_started(&wt, "lock", tmp.path())
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
    // wait for each other: the second starts while the first builds.
    let out = lib_sh(
        tmp.path(),
        &format!(
            "{}{}cat {}; wait",
            build_started(&wt, "one", tmp.path()),
            build_started(&wt, "two", tmp.path()),
            tmp.path().join("kernel-one/events").display()
        ),
    );
    assert!(ok(&out));
    // The first had not ended when the second started.
    assert_eq!(String::from_utf8_lossy(&out.stdout), "start\n");
}
