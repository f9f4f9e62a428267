// SPDX-License-Identifier: GPL-2.0

//! scripts/lib.sh's `git_worktree_reset`, which makes the patch series'
//! checkouts of the pristine tree. Those checkouts live in the build
//! directory that every run on a machine reuses (CI's too), so a run that was
//! stopped halfway (a timeout, a killed session) must not leave the next one
//! a checkout it cannot use: a stale `index.lock` once failed CI's series and
//! arm64 configurations with "Unable to create .../index.lock: File exists".

mod common;

use common::{lib_sh, ok};

/// A temporary directory with a repository, `repo`, and the path of a
/// checkout of it, `wt`, that the test makes.
struct Fixture {
    tmp: tempfile::TempDir,
    repo: String,
    wt: String,
}

fn fixture() -> Fixture {
    let tmp = tempfile::tempdir().expect("tempdir");
    let repo = common::repo(tmp.path(), &[("f", "base\n")]);
    let wt = tmp.path().join("wt").display().to_string();
    Fixture { tmp, repo, wt }
}

#[test]
fn worktree_reset_recovers_from_an_interrupted_run() {
    let Fixture { tmp, repo, wt } = fixture();

    // A first run makes the checkout and changes it; then it is stopped
    // with git's lock files and a half-applied git am left behind.
    let out = lib_sh(
        tmp.path(),
        &format!(
            "git_worktree_reset {repo} {wt} base && echo changed >{wt}/f && \
             echo junk >{wt}/extra && gd=$(git -C {wt} rev-parse --absolute-git-dir) && \
             : >\"$gd/index.lock\" && : >\"$gd/HEAD.lock\" && mkdir \"$gd/rebase-apply\""
        ),
    );
    assert!(ok(&out));

    // The next run gets the checkout at base with nothing else in it.
    let out = lib_sh(
        tmp.path(),
        &format!(
            "git_worktree_reset {repo} {wt} base && cat {wt}/f && ls -A {wt} && \
             git -C {wt} status --porcelain && \
             ls \"$(git -C {wt} rev-parse --absolute-git-dir)\" | grep -c '\\.lock$' || true"
        ),
    );
    assert!(ok(&out));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "base\n.git\nf\n0\n");
}

#[test]
fn worktree_reset_waits_for_a_live_run() {
    let Fixture { tmp, repo, wt } = fixture();
    assert!(ok(&lib_sh(
        tmp.path(),
        &format!("git_worktree_reset {repo} {wt} base")
    )));

    // While another run holds the checkout (here: a shell that has reset it
    // and is still using it), a second one does not take it from under it.
    let out = lib_sh(
        tmp.path(),
        &format!(
            "WORKTREE_LOCK_WAIT=1; \
             ( git_worktree_reset {repo} {wt} base; echo held; sleep 5 ) | {{ read -r _; \
               if git_worktree_reset {repo} {wt} base 2>/dev/null; then echo took; \
               else echo refused; fi; }}"
        ),
    );
    assert!(ok(&out));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "refused\n");
}

#[test]
fn worktree_reset_nested_in_a_holder_does_not_wait() {
    let Fixture { tmp, repo, wt } = fixture();

    // check-series.sh holds the checkout and runs export-patches.sh, which
    // resets the same checkout: a child of the holder goes on.
    let out = lib_sh(
        tmp.path(),
        &format!(
            "export WORKTREE_LOCK_WAIT=1; git_worktree_reset {repo} {wt} base && \
             bash -c 'set -e; . scripts/lib.sh; git_worktree_reset {repo} {wt} base; echo nested'"
        ),
    );
    assert!(ok(&out));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "nested\n");
}
