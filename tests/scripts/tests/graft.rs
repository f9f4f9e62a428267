// SPDX-License-Identifier: GPL-2.0

//! scripts/graft.sh on the kernel files the series edits, unpacked from Debian's
//! linux-source-6.12 (which scripts/install-deps.sh installs before the test command runs these
//! tests). A re-graft must write nothing and keep every time, so that make rebuilds nothing;
//! every file must come out as the series makes it, never pristine (a re-graft once restored
//! files of the series at random: `printf | grep -q` under pipefail); a hand edit in the grafted
//! tree must stop the graft and stay.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

mod series;

use series::{TARBALL, root, series_files};

/// A tree with the pristine files the series edits, and lib/alloc_tag.c, which graft.sh looks
/// for; the pristine copies stay in `pristine`.
fn tree(dir: &Path) -> (PathBuf, PathBuf) {
    let files = series_files();
    assert!(files.len() > 20, "{} files in patches/", files.len());
    let mut members: Vec<String> = files
        .iter()
        .map(|f| format!("linux-source-6.12/{f}"))
        .collect();
    members.push("linux-source-6.12/lib/alloc_tag.c".into());
    let status = Command::new("tar")
        .arg("-xJf")
        .arg(TARBALL)
        .arg("-C")
        .arg(dir)
        .args(&members)
        .status()
        .expect("tar runs");
    assert!(status.success(), "tar could not unpack the series' files");
    let tree = dir.join("linux-source-6.12");
    let pristine = dir.join("pristine");
    let status = Command::new("cp")
        .arg("-a")
        .arg(&tree)
        .arg(&pristine)
        .status()
        .expect("cp runs");
    assert!(status.success());
    (tree, pristine)
}

fn graft(build: &Path, tree: &Path) -> Output {
    Command::new("bash")
        .arg("scripts/graft.sh")
        .arg(tree)
        .current_dir(root())
        .env("ALLOCTAG_BUILD_DIR", build)
        .output()
        .expect("bash runs")
}

fn times(tree: &Path) -> BTreeMap<String, (std::time::SystemTime, Vec<u8>)> {
    series_files()
        .into_iter()
        .map(|f| {
            let p = tree.join(&f);
            let t = fs::metadata(&p).expect(&f).modified().expect("mtime");
            (f, (t, fs::read(&p).expect("read")))
        })
        .collect()
}

#[test]
fn regraft_writes_nothing_and_never_restores_pristine_files() {
    if !Path::new(TARBALL).exists() {
        panic!("{TARBALL} missing: run scripts/install-deps.sh");
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let build = dir.path().join("build");
    let (tree, pristine) = tree(dir.path());
    let out = graft(&build, &tree);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let first = times(&tree);
    for (f, (_, content)) in &first {
        let old = fs::read(pristine.join(f)).expect("pristine");
        assert_ne!(&old, content, "{f} is pristine after the graft");
    }
    // Again and again: nothing written, no time changed, nothing pristine.
    for round in 0..8 {
        let out = graft(&build, &tree);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        assert!(
            !String::from_utf8_lossy(&out.stderr).contains("kernel files written"),
            "round {round}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(times(&tree), first, "round {round}: a file changed");
    }
}

#[test]
fn hand_edit_stops_the_graft_and_stays() {
    if !Path::new(TARBALL).exists() {
        panic!("{TARBALL} missing: run scripts/install-deps.sh");
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let build = dir.path().join("build");
    let (tree, _) = tree(dir.path());
    assert!(graft(&build, &tree).status.success());
    let file = tree.join("mm/slab_common.c");
    let mut edited = fs::read_to_string(&file).expect("read");
    edited.push_str("/* a hand edit */\n");
    fs::write(&file, &edited).expect("write");
    let out = graft(&build, &tree);
    assert!(!out.status.success(), "the graft went on over a hand edit");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("mm/slab_common.c") && err.contains("refresh-patch.sh"), "{err}");
    assert_eq!(fs::read_to_string(&file).expect("read"), edited, "the edit was lost");
}
