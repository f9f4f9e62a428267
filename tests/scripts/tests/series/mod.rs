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

/// The kernel files the patch files edit, as `--- a/` lines name them: those of the pristine tree
/// (lib/alloctag/Kconfig and Kbuild, which patches add and later ones extend, are not).
pub fn series_files() -> Vec<String> {
    let mut files = Vec::new();
    let mut created = Vec::new();
    for entry in fs::read_dir(root().join("patches")).expect("patches/") {
        let path = entry.expect("entry").path();
        if path.extension().is_some_and(|e| e == "patch") {
            let text = fs::read_to_string(&path).expect("patch");
            let mut lines = text.lines().peekable();
            while let Some(line) = lines.next() {
                if let Some(f) = line.strip_prefix("--- a/") {
                    files.push(f.to_string());
                } else if line == "--- /dev/null"
                    && let Some(f) = lines.peek().and_then(|l| l.strip_prefix("+++ b/"))
                {
                    created.push(f.to_string());
                }
            }
        }
    }
    files.retain(|f| !created.contains(f));
    files.sort();
    files.dedup();
    files
}
