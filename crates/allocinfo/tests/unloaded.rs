//! Issue 45: the tags of a module unloaded while allocations it made were
//! live (`unloaded:yes`, format 2.0) in `top`, `watch`, `diff` and `query`:
//! marked in every output, selected by `--unloaded`, summed with the other
//! instances of their call site by `--fold`. The ioctl path is compared
//! with the text on a fake kernel in `src/via.rs`.
//!
//! `tests/data/unloaded.txt`: module foo unloaded twice with live
//! allocations at drivers/foo.c:12 and loaded again, module bar unloaded
//! for good, and other tags.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

mod common;
use common::BIN;

fn data_dir() -> PathBuf {
    common::crate_data()
}

fn run(args: &[&str]) -> Output {
    common::run_in(&data_dir(), args)
}

/// Standard output of a successful run, which says nothing on standard error.
fn ok(args: &[&str]) -> String {
    let out = run(args);
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(out.status.success() && err.is_empty(), "{args:?}: {err}");
    String::from_utf8(out.stdout).unwrap()
}

/// The call-site column of a table, from its column header on.
fn sites(table: &str) -> Vec<&str> {
    let mut lines = table.lines().skip_while(|l| !l.ends_with("CALL SITE"));
    let at = lines.next().and_then(|h| h.find("CALL SITE")).unwrap();
    lines.map(|l| &l[at..]).collect()
}

const FOO: &str = "drivers/foo.c:12 [foo] func:foo_probe";
const BAR: &str = "drivers/bar.c:7 [bar] func:bar_init accurate:no";

#[test]
fn top_marks_the_unloaded_instances_and_folds_them() {
    let table = ok(&["top", "unloaded.txt", "--exact"]);
    let rows = sites(&table);
    assert_eq!(rows.len(), 7, "{table}");
    assert!(rows.contains(&FOO), "{table}");
    assert!(rows.contains(&format!("{FOO} unloaded:yes").as_str()));
    assert!(rows.contains(&format!("{BAR} unloaded:yes").as_str()));
    assert!(table.contains(" 12288      3   0.0%  drivers/foo.c:12 [foo] func:foo_probe\n"));
    assert!(
        table
            .contains("  6144      3   0.0%  drivers/foo.c:12 [foo] func:foo_probe unloaded:yes\n")
    );

    // Folded: one row for foo's call site, not marked (a part is loaded).
    let folded = ok(&["top", "unloaded.txt", "--exact", "--fold"]);
    let rows = sites(&folded);
    assert_eq!(rows.len(), 6, "{folded}");
    assert!(folded.contains(" 18432      6   0.0%  drivers/foo.c:12 [foo] func:foo_probe\n"));
    assert!(!rows.contains(&format!("{FOO} unloaded:yes").as_str()));
    assert!(rows.contains(&format!("{BAR} unloaded:yes").as_str()));

    // Only the unloaded modules' tags; folded, foo's two unloaded
    // instances are one row, marked.
    let only = ok(&["top", "unloaded.txt", "--exact", "--unloaded", "--fold"]);
    assert_eq!(
        sites(&only),
        [format!("{FOO} unloaded:yes"), format!("{BAR} unloaded:yes")],
        "{only}"
    );
    assert!(only.contains(" 6144      3 "), "{only}");
    assert_eq!(
        sites(&ok(&["top", "unloaded.txt", "--unloaded"])).len(),
        2,
        "each instance a row, before --fold"
    );
}

#[test]
fn machine_formats_say_unloaded() {
    let json: serde_json::Value =
        serde_json::from_str(&ok(&["top", "unloaded.txt", "--json", "-m", "foo"])).unwrap();
    let rows: Vec<(i64, bool)> = json["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["bytes"].as_i64().unwrap(),
                r["unloaded"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(rows, [(12288, false), (8192, false), (6144, true)]);
    let json: serde_json::Value = serde_json::from_str(&ok(&[
        "top",
        "unloaded.txt",
        "--json",
        "-m",
        "foo",
        "--fold",
    ]))
    .unwrap();
    let folded = &json["rows"][0];
    assert_eq!(
        (folded["bytes"].as_i64(), folded["sites"].as_u64()),
        (Some(18432), Some(3))
    );
    assert_eq!(folded["unloaded"], false);
    assert_eq!(folded["extra"], serde_json::json!({}));

    let csv = ok(&["top", "unloaded.txt", "--csv", "-m", "bar"]);
    assert_eq!(
        csv,
        "group,key,module,dir,file,line,function,sites,bytes,calls,share,accurate,unloaded\n\
         site,drivers/bar.c:7 [bar] func:bar_init,bar,drivers,drivers/bar.c,7,bar_init,1,512,1,0.000009,false,true\n"
    );

    // Two instances of a call site are two series, told apart by a label.
    let prom = ok(&[
        "top",
        "unloaded.txt",
        "--prometheus",
        "--function",
        "foo_probe",
    ]);
    let samples: Vec<&str> = prom
        .lines()
        .filter(|l| l.starts_with("allocinfo_bytes{"))
        .collect();
    assert_eq!(
        samples,
        [
            "allocinfo_bytes{file=\"drivers/foo.c\",line=\"12\",module=\"foo\",function=\"foo_probe\"} 12288",
            "allocinfo_bytes{file=\"drivers/foo.c\",line=\"12\",module=\"foo\",function=\"foo_probe\",unloaded=\"yes\"} 6144",
        ]
    );
}

#[test]
fn watch_and_diff_show_a_module_unloaded_with_live_allocations() {
    let frame = ok(&["watch", "--plain", "-c", "1", "unloaded.txt", "--unloaded"]);
    assert_eq!(
        sites(&frame),
        [format!("{FOO} unloaded:yes"), format!("{BAR} unloaded:yes")],
        "{frame}"
    );
    let frame = ok(&[
        "watch",
        "--plain",
        "-c",
        "1",
        "unloaded.txt",
        "--fold",
        "-m",
        "foo",
    ]);
    assert_eq!(sites(&frame), [FOO, "drivers/foo.c:40 [foo] func:foo_open"]);

    // Before: foo loaded with its allocations; after: foo unloaded, the
    // same allocations live. The call site's loaded instance is gone and
    // its unloaded instance new; folded, nothing changed.
    let dir = tempfile::tempdir().unwrap();
    let before = dir.path().join("before.txt");
    let after = dir.path().join("after.txt");
    let line = "        4096        1 drivers/foo.c:12 [foo] func:foo_probe";
    let head = "allocinfo - version: 2.0\n#     <size>  <calls> <tag info>\n";
    std::fs::write(&before, format!("{head}{line} \n")).unwrap();
    std::fs::write(&after, format!("{head}{line} unloaded:yes \n")).unwrap();
    let (b, a) = (before.to_str().unwrap(), after.to_str().unwrap());
    let diff = ok(&["diff", b, a, "--exact"]);
    assert!(diff.contains("\n +4096      +1   4096      1  new     drivers/foo.c:12 [foo] func:foo_probe unloaded:yes\n"), "{diff}");
    assert!(
        diff.contains(
            "\n -4096      -1      0      0  gone    drivers/foo.c:12 [foo] func:foo_probe\n"
        ),
        "{diff}"
    );
    let folded = ok(&["diff", b, a, "--fold"]);
    assert!(folded.contains("(no changes)"), "{folded}");
}

#[test]
fn query_selects_and_folds_as_the_kernel_lists() {
    let only = ok(&["query", "unloaded.txt", "--unloaded"]);
    assert_eq!(
        only,
        "        4096        1 drivers/foo.c:12 [foo] func:foo_probe unloaded:yes \n\
         \x20        512        1 drivers/bar.c:7 [bar] func:bar_init accurate:no unloaded:yes \n\
         \x20       2048        2 drivers/foo.c:12 [foo] func:foo_probe unloaded:yes \n"
    );
    assert_eq!(
        ok(&["query", "unloaded.txt", "--unloaded", "--via", "text"]),
        only
    );
    // Folded, in the order of each call site's first line.
    let folded = ok(&["query", "unloaded.txt", "--fold", "-m", "foo"]);
    assert_eq!(
        folded,
        "       18432        6 drivers/foo.c:12 [foo] func:foo_probe \n\
         \x20       8192        2 drivers/foo.c:40 [foo] func:foo_open \n"
    );
    let json: serde_json::Value = serde_json::from_str(&ok(&[
        "query",
        "unloaded.txt",
        "--unloaded",
        "--fold",
        "--json",
    ]))
    .unwrap();
    let tags: Vec<(i64, bool, bool)> = json["tags"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["bytes"].as_i64().unwrap(),
                t["accurate"].as_bool().unwrap(),
                t["unloaded"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(tags, [(6144, true, true), (512, false, true)]);
    // Without --fold, every line as the kernel prints it.
    assert_eq!(ok(&["query", "unloaded.txt"]).lines().count(), 8);
}

#[test]
fn unloaded_on_format_1_0_says_it_matches_nothing() {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("../allocinfo-format/tests/data");
    let out = Command::new(BIN)
        .args(["top", "linux-6.12.txt", "--unloaded"])
        .current_dir(&data)
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("(nothing matched)"));
    assert_eq!(
        String::from_utf8(out.stderr).unwrap(),
        "allocinfo: warning: --unloaded matches nothing in linux-6.12.txt: format 1.0 does not mark the tags of unloaded modules (2.0 does)\n"
    );
    // Format 2.0 marks them: nothing to say.
    ok(&["top", "unloaded.txt", "--unloaded"]);
}
