//! `allocinfo capture` and `allocinfo live` end to end, with a plain
//! directory standing in for the kernel's debugfs directory (`--dir`).

use std::path::PathBuf;
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_allocinfo");

const LIVE: &str = "\
object age_ns=7200000000000 bytes=200 pid=41 tgid=41 comm=capwriter cpu=0 ctx=task gfp=0xcc0 kind=slab addr=0xffff888004a3c000 site=lib/alloctag/tests/modules/alloctag_test.c:199 [alloctag_test] func:hold_object
  hold_object+0x1a/0x40 [alloctag_test]
  hold_write+0x5c/0x120 [alloctag_test]
object age_ns=2000000000 bytes=200 pid=41 tgid=41 comm=capwriter cpu=1 ctx=task gfp=0xcc0 kind=slab addr=0xffff888004a3c100 site=lib/alloctag/tests/modules/alloctag_test.c:199 [alloctag_test] func:hold_object
  hold_object+0x1a/0x40 [alloctag_test]
  hold_write+0x5c/0x120 [alloctag_test]
object age_ns=1000000000 bytes=16384 pid=52 tgid=50 comm=sh cpu=1 ctx=task gfp=0xcc0 kind=pages order=2 pfn=0x4a3c site=mm/m.c:10 func:g
  g+0x10/0x20
untracked objects=3 bytes=600 dropped=0 busy=0
";

/// A directory for one test, holding `live` and an empty `capture`.
fn dir(name: &str) -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("capture-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    std::fs::write(d.join("live"), LIVE).unwrap();
    std::fs::write(d.join("capture"), "").unwrap();
    d
}

fn ok(args: &[&str]) -> String {
    let out = Command::new(BIN).args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn live_by_object_stack_and_process() {
    let d = dir("views");
    let d = d.to_str().unwrap();
    let objects = ok(&["live", "--dir", d]);
    let first = objects.lines().nth(1).unwrap();
    assert!(
        first.contains("2h00m") && first.contains("capwriter"),
        "{objects}"
    );
    assert!(objects.contains("    hold_object+0x1a/0x40 [alloctag_test]"));
    assert!(objects.contains(
        "untracked (allocated before capture started, or dropped): 3 objects, 600 bytes"
    ));
    let stacks = ok(&["live", "--dir", d, "--by", "stack"]);
    assert!(stacks.starts_with("1 objects, 16384 bytes"), "{stacks}");
    assert!(
        stacks.contains("2 objects, 400 bytes, age 2.0s/"),
        "{stacks}"
    );
    assert!(stacks.contains("processes 41:capwriter"));
    let procs = ok(&["live", "--dir", d, "--by", "process"]);
    assert!(
        procs.contains("     50 sh                       1        16384"),
        "{procs}"
    );
    assert!(
        procs.contains("     41 capwriter                2          400"),
        "{procs}"
    );
    let old = ok(&["live", "--dir", d, "--older-than", "1h", "--by", "process"]);
    assert!(
        old.contains("     41 capwriter                1          200"),
        "{old}"
    );
    assert!(!old.contains(" sh "), "{old}");
    let json: serde_json::Value =
        serde_json::from_str(&ok(&["live", "--dir", d, "--json"])).unwrap();
    assert_eq!(json["objects"].as_array().unwrap().len(), 3);
    assert_eq!(json["objects"][2]["kind"], "pages");
    assert_eq!(json["untracked"]["bytes"], 600);
}

/// Commands reach the kernel's control file only (debugfs): the writing is
/// tested in src/capture/control.rs on trusted files, the refusal of plain
/// files in tests/safety.rs. Bad values stop before either.
#[test]
fn capture_usage_errors_write_nothing() {
    let d = dir("commands");
    let ds = d.to_str().unwrap();
    for args in [
        &["capture", "--dir", ds, "add", "x.c:0"][..],
        &["capture", "--dir", ds, "limit", "0"],
        &["capture", "--dir", ds, "remove"],
    ] {
        let out = Command::new(BIN).args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert_eq!(std::fs::read_to_string(d.join("capture")).unwrap(), "");
    }
}

/// `capture list` prints the kernel's listing; `--json` one object on one
/// line (`--pretty` indents it), as every JSON of allocinfo.
#[test]
fn capture_list_as_text_and_json() {
    let d = dir("list");
    let listing = "capture limit=4096 size=4096 used=5 dropped=0 busy=0\n\
        selection 1 sites=1 unmarked=0 select=module:alloctag_test func:hold_object\n\
        site selection=1 live=5 live_bytes=2560 untracked=0 untracked_bytes=0 lib/t.c:172 [alloctag_test] func:hold_object\n";
    std::fs::write(d.join("capture"), listing).unwrap();
    let ds = d.to_str().unwrap();
    assert_eq!(ok(&["capture", "--dir", ds, "list"]), listing);
    let json = ok(&["capture", "--dir", ds, "list", "--json"]);
    assert_eq!(json.lines().count(), 1);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["pool"]["used"], 5);
    assert_eq!(
        v["selections"][0]["select"],
        "module:alloctag_test func:hold_object"
    );
    assert_eq!(v["selections"][0]["sites"][0]["live_bytes"], 2560);
    let pretty = ok(&["capture", "--dir", ds, "list", "--json", "--pretty"]);
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&pretty).unwrap(),
        v
    );
    assert!(pretty.lines().count() > 5);
}

/// `capture list` checks the file in text mode as it does with --json: a
/// file that is no capture listing is an error, not printed.
#[test]
fn capture_list_checks_the_listing_in_text_mode_too() {
    let d = dir("list-check");
    std::fs::write(d.join("capture"), "this is not a listing\n").unwrap();
    for json in [false, true] {
        let mut cmd = Command::new(BIN);
        cmd.args(["capture", "--dir", d.to_str().unwrap(), "list"]);
        if json {
            cmd.arg("--json");
        }
        let out = cmd.output().unwrap();
        assert_eq!(out.status.code(), Some(1), "json {json}: {out:?}");
        assert!(out.stdout.is_empty(), "json {json}");
        assert!(String::from_utf8_lossy(&out.stderr).contains("capture list"));
    }
}
