//! `allocinfo fail` end to end: listings read from plain files standing in
//! for the kernel's control file (`--control`), and usage errors.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_allocinfo");

const LISTING: &str = "\
rule 1 probability=100 interval=1 times=-1 space=0 verbose=1 pid=0 injected=2 sites=1 unarmed=0 select=module:m func:f
site rule=1 injected=2 lib/m.c:42 [m] func:f
rule 2 probability=25 interval=3 times=10 space=0 verbose=0 pid=0 injected=7 sites=1 unarmed=0 select=mm/slub.c
site rule=2 injected=7 mm/slub.c:2478 func:alloc_slab_page
rule 4 probability=100 interval=1 times=-1 space=0 verbose=1 pid=0 injected=0 sites=0 unarmed=0 select=func:kernel::alloc::f
";

/// A control file for one test, holding `text`.
fn control(name: &str, text: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let path = dir.join(format!("fail-{name}-{}", std::process::id()));
    std::fs::write(&path, text).unwrap();
    path
}

fn run(control: &Path, args: &[&str]) -> Output {
    Command::new(BIN)
        .args(["fail", "--control"])
        .arg(control)
        .args(args)
        .output()
        .unwrap()
}

fn ok(control: &Path, args: &[&str]) -> String {
    let out = run(control, args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stderr.is_empty(),
        "{args:?}: {stderr}"
    );
    String::from_utf8(out.stdout).unwrap()
}

fn fails(control: &Path, args: &[&str], code: i32) -> String {
    let out = run(control, args);
    assert_eq!(out.status.code(), Some(code), "{args:?}");
    assert!(out.stdout.is_empty());
    String::from_utf8(out.stderr).unwrap()
}

#[test]
fn list_table_and_json() {
    let file = control("list", LISTING);
    assert_eq!(
        ok(&file, &["list"]),
        "\
ID  PROB  INTERVAL  TIMES  INJECTED  SITES  SELECTION
 1  100%         1     -1         2      1  module:m func:f
                                  2           lib/m.c:42 [m] func:f
 2   25%         3     10         7      1  mm/slub.c
                                  7           mm/slub.c:2478 func:alloc_slab_page
 4  100%         1     -1         0      0  func:kernel::alloc::f
"
    );
    let json = ok(&file, &["list", "--json"]);
    assert_eq!(json.lines().count(), 1, "one document per line");
    assert_eq!(
        ok(&file, &["list", "--format", "json"]),
        json,
        "the old spelling"
    );
    let pretty = ok(&file, &["list", "--json", "--pretty"]);
    assert!(pretty.lines().count() > 10);
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&pretty).unwrap(),
        serde_json::from_str::<serde_json::Value>(&json).unwrap()
    );
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let rules = v.as_array().unwrap();
    assert_eq!(rules.len(), 3);
    assert_eq!(rules[0]["id"], 1);
    assert_eq!(rules[0]["selection"], "module:m func:f");
    assert_eq!(rules[0]["times"], -1);
    assert_eq!(
        rules[0]["sites"],
        serde_json::json!([{"injected": 2, "file": "lib/m.c", "line": 42,
                            "module": "m", "function": "f"}])
    );
    assert_eq!(rules[1]["probability"], 25);
    assert_eq!(rules[1]["sites"][0]["module"], serde_json::Value::Null);
    assert_eq!(rules[2]["function"], serde_json::Value::Null);
    assert_eq!(rules[2]["sites"], serde_json::json!([]));
    let empty = control("list-empty", "");
    assert_eq!(ok(&empty, &["list"]), "no rules armed\n");
    assert_eq!(ok(&empty, &["list", "--json"]), "[]\n");
}

#[test]
fn list_names_a_malformed_line() {
    let file = control(
        "list-bad",
        &format!("{LISTING}site rule=4 injected=x a.c:1 func:g\n"),
    );
    let err = fails(&file, &["list"], 1);
    assert_eq!(
        err,
        format!(
            "allocinfo: error: fail list: {}: line 6: invalid injected=\"x\"\n",
            file.display()
        )
    );
}

#[test]
fn bad_values_are_refused_and_nothing_is_written() {
    let file = control("bad", "");
    let cases: &[(&[&str], &str)] = &[
        (
            &["add", "f", "--probability", "101"],
            "invalid probability \"101\": expected a percentage from 0 to 100",
        ),
        (
            &["add", "f", "--interval", "0"],
            "invalid interval \"0\": expected an integer of at least 1",
        ),
        (
            &["add", "f", "--times", "-2"],
            "invalid times \"-2\": expected -1 (no limit)",
        ),
        (
            &["add", "f", "--fault-verbosity", "3"],
            "invalid fault verbosity \"3\"",
        ),
        (&["add", "f", "--space", "-1"], "invalid space \"-1\""),
        (&["add", "f", "--pid", "-5"], "invalid pid \"-5\""),
        (
            &["add", "a=b"],
            "invalid selector \"a=b\": selectors have no blanks and no '='",
        ),
        (&["add", "a b"], "invalid selector \"a b\""),
        (&["add", "lib/m.c:0"], "invalid selector \"lib/m.c:0\""),
        (&["add", "a", "b", "c", "d", "e"], "unexpected value 'e'"),
        (&["add"], "required arguments were not provided"),
        (&["remove", "0"], "invalid rule id \"0\": expected 1 to 32"),
        (&["remove", "33"], "invalid rule id \"33\""),
        (&["remove"], "<ID|SELECTOR|--all>"),
        (
            &["remove", "1", "func:f"],
            "give one id, or selectors, not both",
        ),
        (&["remove", "func:f["], "a '[' without its ']'"),
        (&["add", "func:kmalloc[a-"], "a '[' without its ']'"),
        (&["remove", "1", "--all"], "cannot be used with"),
        (&["list", "--format", "xml"], "possible values: table, json"),
    ];
    for (args, message) in cases {
        let err = fails(&file, args, 2);
        assert!(err.contains(message), "{args:?}: {err}");
    }
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "");
}

/// Commands go to the kernel's control file only (debugfs): the writing
/// itself is tested in src/fail/control.rs, on trusted plain files, and the
/// refusal of plain files and /dev/full in tests/safety.rs.
#[test]
fn missing_control_file() {
    let missing = Path::new(env!("CARGO_TARGET_TMPDIR")).join("fail-no-such-file");
    let err = fails(&missing, &["remove", "--all"], 1);
    assert!(
        err.starts_with(&format!(
            "allocinfo: error: fail remove: {}: No such file or directory",
            missing.display()
        )),
        "{err}"
    );
    assert!(!missing.exists(), "never created");
}
