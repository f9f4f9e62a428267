// SPDX-License-Identifier: GPL-2.0

//! `scripts/refresh-patch.sh --write` writes patches/ from patches-work, which must have been
//! applied from patches/ as they are now: one applied from other patch files (an older
//! checkout's, or before a patch file was edited by hand) would write those back over the
//! series. Once a stale patches-work undid a patch's change and a message edited by hand, and
//! only a benchmark's figures showed it.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;
use std::process::{Command, Output};

fn root() -> &'static Path {
    // tests/scripts → the checkout.
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

/// Every file of patches/, by name.
fn patches() -> BTreeMap<String, Vec<u8>> {
    fs::read_dir(root().join("patches"))
        .expect("patches/")
        .map(|e| {
            let path = e.expect("entry").path();
            let name = path
                .file_name()
                .expect("name")
                .to_string_lossy()
                .into_owned();
            (name, fs::read(&path).expect("read"))
        })
        .collect()
}

fn write(build: &Path) -> Output {
    Command::new("bash")
        .arg("scripts/refresh-patch.sh")
        .arg("--write")
        .current_dir(root())
        .env("ALLOCTAG_BUILD_DIR", build)
        .output()
        .expect("bash runs")
}

fn assert_refused(out: &Output) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "--write succeeded: {err}");
    assert!(
        err.contains("was not applied from patches/ as they are now")
            && err.contains("refresh-patch.sh --apply"),
        "{err}"
    );
}

#[test]
fn write_refuses_a_patches_work_not_applied_from_these_patches() {
    let build = tempfile::tempdir().expect("tempdir");
    let before = patches();

    // Never applied by the script (or by one from before it kept the record).
    assert_refused(&write(build.path()));

    // Applied from other patch files.
    fs::write(
        build.path().join("patches-work.applied"),
        "0000000000000000000000000000000000000000000000000000000000000000\n",
    )
    .expect("write the record");
    assert_refused(&write(build.path()));

    assert!(patches() == before, "patches/ changed");
}
