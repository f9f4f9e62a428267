// SPDX-License-Identifier: GPL-2.0

//! What the tests that unpack kernel files and graft this checkout share: the
//! tarball, the checkout, and the kernel files the series edits.

use std::fs;
use std::path::Path;

pub const TARBALL: &str = "/usr/src/linux-source-6.12.tar.xz";

pub fn root() -> &'static Path {
    // tests/scripts → the checkout.
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

/// The kernel files the patch files edit, as `+++ b/` lines name them.
pub fn series_files() -> Vec<String> {
    let mut files = Vec::new();
    for entry in fs::read_dir(root().join("patches")).expect("patches/") {
        let path = entry.expect("entry").path();
        if path.extension().is_some_and(|e| e == "patch") {
            for line in fs::read_to_string(&path).expect("patch").lines() {
                if let Some(f) = line.strip_prefix("+++ b/") {
                    files.push(f.to_string());
                }
            }
        }
    }
    files.sort();
    files.dedup();
    files
}
