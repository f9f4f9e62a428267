//! What the integration tests share: the built `allocinfo`, run in a data
//! directory. (Each test file is a crate of its own, using what it needs.)
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub const BIN: &str = env!("CARGO_BIN_EXE_allocinfo");

/// This crate's test data (`tests/data`).
pub fn crate_data() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data")
}

/// The golden profiles of the format crate.
pub fn format_data() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../allocinfo-format/tests/data")
}

/// Runs allocinfo with `args` in `dir`.
pub fn run_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap()
}

/// Standard output of a run in `dir` that succeeds with nothing on standard error.
pub fn ok_in(dir: &Path, args: &[&str]) -> String {
    let out = run_in(dir, args);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{args:?}: {err}");
    assert!(out.stderr.is_empty(), "{args:?}: {err}");
    String::from_utf8(out.stdout).unwrap()
}
