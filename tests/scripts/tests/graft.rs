// SPDX-License-Identifier: GPL-2.0

//! scripts/graft.sh on the kernel files the series edits, unpacked from Debian's
//! linux-source-6.12 (which scripts/install-deps.sh installs before the test command runs these
//! tests). A re-graft must write nothing and keep every time, so that make rebuilds nothing;
//! every file must come out as the series makes it, never pristine (a re-graft once restored
//! files of the series at random: `printf | grep -q` under pipefail); a hand edit in the grafted
//! tree must stop the graft and stay. And patches/files, the list of this checkout's files each
//! patch adds: every file the tree needs is in it once, and a wrong list stops the series.

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
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let first = times(&tree);
    for (f, (_, content)) in &first {
        let old = fs::read(pristine.join(f)).expect("pristine");
        assert_ne!(&old, content, "{f} is pristine after the graft");
    }
    // Again and again: nothing written, no time changed, nothing pristine.
    for round in 0..8 {
        let out = graft(&build, &tree);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
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
    assert!(
        err.contains("mm/slab_common.c") && err.contains("refresh-patch.sh"),
        "{err}"
    );
    assert_eq!(
        fs::read_to_string(&file).expect("read"),
        edited,
        "the edit was lost"
    );
}

/// patches/files as scripts/series.sh reads it in the checkout `root`, checked: (patch, place or
/// install, SRC, DEST) per file, or series.sh's error.
fn placed(root: &Path, build: &Path) -> Result<Vec<[String; 4]>, String> {
    let out = Command::new("bash")
        .arg("-c")
        .arg(". scripts/lib.sh; . scripts/series.sh; list=$(series_files) && echo \"$list\"")
        .current_dir(root)
        .env("ALLOCTAG_BUILD_DIR", build)
        .output()
        .expect("bash runs");
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).into_owned());
    }
    Ok(String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| !l.is_empty())
        .map(|l| {
            let w: Vec<&str> = l.split(' ').collect();
            assert_eq!(w.len(), 4, "series_files printed {l:?}");
            [w[0], w[1], w[2], w[3]].map(String::from)
        })
        .collect())
}

/// A file of src/, include/, tests/modules/ or tests/bench/ that no patch adds never reaches the
/// tree; one that two patches add is a list out of date.
#[test]
fn every_file_the_tree_needs_is_added_by_one_patch() {
    let build = tempfile::tempdir().expect("tempdir");
    let list = placed(root(), build.path()).expect("patches/files");
    let out = Command::new("git")
        .args(["ls-files", "src", "include", "tests/modules", "tests/bench"])
        .current_dir(root())
        .output()
        .expect("git runs");
    assert!(out.status.success());
    let files = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        files.lines().count() > 80,
        "{} files",
        files.lines().count()
    );
    for f in files.lines() {
        let by: Vec<&str> = list
            .iter()
            .filter(|[_, _, src, _]| f == src || f.starts_with(&format!("{src}/")))
            .map(|[patch, ..]| patch.as_str())
            .collect();
        assert_eq!(by.len(), 1, "{f} is added by {by:?} (patches/files)");
    }
}

/// series.sh refuses a list that names a file the checkout does not have, a patch that
/// patches/series does not, a verb it does not know, or a place twice.
#[test]
fn a_wrong_list_stops_the_series() {
    let dir = tempfile::tempdir().expect("tempdir");
    let r = dir.path().join("checkout");
    for d in ["scripts", "patches", "src"] {
        fs::create_dir_all(r.join(d)).expect("mkdir");
    }
    for f in ["scripts/lib.sh", "scripts/series.sh"] {
        fs::copy(root().join(f), r.join(f)).expect("copy");
    }
    fs::write(r.join("patches/series"), "0001-a.patch\n0002-b.patch\n").expect("write");
    for f in [
        "patches/0001-a.patch",
        "patches/0002-b.patch",
        "src/a.rs",
        "src/b.h",
    ] {
        fs::write(r.join(f), "").expect("write");
    }
    let build = dir.path().join("build");
    let with = |files: &str| {
        fs::write(r.join("patches/files"), files).expect("write");
        placed(&r, &build)
    };
    assert_eq!(
        with(
            "# a comment\n0001-a.patch\n\tplace src/a.rs\n\t# why\n\n0002-b.patch\n\tinstall src/b.h include/linux/b.h\n"
        ),
        Ok(vec![
            ["0001-a.patch", "place", "src/a.rs", "lib/alloctag/src/a.rs"].map(String::from),
            ["0002-b.patch", "install", "src/b.h", "include/linux/b.h"].map(String::from),
        ])
    );
    for (files, error) in [
        (
            "0001-a.patch\n\tplace src/c.rs\n",
            "src/c.rs is not in the checkout",
        ),
        (
            "0003-c.patch\n\tplace src/a.rs\n",
            "0003-c.patch is not in patches/series",
        ),
        (
            "0001-a.patch\n\tcopy src/a.rs\n",
            "'copy' is neither place nor install",
        ),
        ("\tplace src/a.rs\n", "a file before any patch's name"),
        (
            "0001-a.patch\n\tplace src/a.rs\n0002-b.patch\n\tplace src/b.h lib/alloctag/src/a.rs\n",
            "lib/alloctag/src/a.rs is placed twice",
        ),
    ] {
        match with(files) {
            Ok(list) => panic!("{files:?} was taken: {list:?}"),
            Err(err) => assert!(err.contains(error), "{files:?}: {err}"),
        }
    }
}
