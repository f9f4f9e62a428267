// SPDX-License-Identifier: GPL-2.0

//! What the tests of scripts/lib.sh's checkouts and locks share: bash with
//! lib.sh sourced in a build directory of the test's own, and a repository
//! to check out.

use std::fs;
use std::path::Path;
use std::process::{Command, Output};

pub fn root() -> &'static Path {
    // tests/scripts → the checkout.
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

/// Runs `script` in bash with scripts/lib.sh sourced and its build
/// directory in `build`, as a run that holds nothing.
pub fn lib_sh(build: &Path, script: &str) -> Output {
    Command::new("bash")
        .arg("-c")
        .arg(format!("set -euo pipefail; . scripts/lib.sh; {script}"))
        .current_dir(root())
        .env("ALLOCTAG_BUILD_DIR", build)
        .env("BINDGEN", "/bin/true")
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@localhost")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@localhost")
        .env_remove("ALLOCTAG_WORKTREES_HELD")
        .env_remove("KERNEL_TREE")
        .env_remove("KERNEL_CONFIG")
        .env_remove("WORKTREE_LOCK_WAIT")
        .output()
        .expect("bash runs")
}

/// Whether `out`'s command succeeded; prints its output when it did not.
pub fn ok(out: &Output) -> bool {
    if !out.status.success() {
        eprintln!(
            "stdout: {}\nstderr: {}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    out.status.success()
}

/// A repository in `dir`/repo with `files` (name, contents) committed and
/// tagged `base`; returns its path.
pub fn repo(dir: &Path, files: &[(&str, &str)]) -> String {
    let repo = dir.join("repo");
    fs::create_dir_all(&repo).expect("mkdir");
    for (name, contents) in files {
        let path = repo.join(name);
        fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        fs::write(path, contents).expect("write");
    }
    let r = repo.display();
    let out = lib_sh(
        dir,
        &format!("cd {r} && git init -q && git add -A && git commit -q -m base && git tag base"),
    );
    assert!(ok(&out));
    r.to_string()
}
