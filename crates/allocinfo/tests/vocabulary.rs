//! One vocabulary (issue 26, items 8 to 11): flags that mean one thing
//! everywhere, one rule for names, usage errors with status 2 and the
//! subcommand's usage, and error messages about the value given.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_allocinfo");

fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../allocinfo-format/tests/data")
}

fn run<S: AsRef<OsStr>>(args: &[S]) -> Output {
    Command::new(BIN)
        .args(args)
        .current_dir(data_dir())
        .output()
        .unwrap()
}

fn ok(args: &[&str]) -> (String, String) {
    let out = run(args);
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(out.status.success(), "{args:?}: {err}");
    (String::from_utf8(out.stdout).unwrap(), err)
}

fn usage_error(args: &[&str]) -> String {
    let out = run(args);
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert!(out.stdout.is_empty(), "{args:?}");
    err
}

#[test]
fn positional_files_as_diff_takes_them() {
    let (by_option, _) = ok(&["top", "-f", "linux-6.12.txt"]);
    let (positional, _) = ok(&["top", "linux-6.12.txt"]);
    assert_eq!(positional, by_option);
    assert!(positional.starts_with("linux-6.12.txt (format 1.0)"));
    let (q, _) = ok(&["query", "linux-6.12.txt", "--module", "xfs"]);
    assert_eq!(
        q,
        ok(&["query", "-f", "linux-6.12.txt", "--module", "xfs"]).0
    );
    let dir =
        Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("vocab-snap-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let copy = dir.join("copy.txt");
    let (written, _) = ok(&["snapshot", "linux-6.12.txt", "-o", copy.to_str().unwrap()]);
    assert_eq!(written.trim_end(), copy.to_str().unwrap());
    assert_eq!(
        std::fs::read(&copy).unwrap(),
        std::fs::read(data_dir().join("linux-6.12.txt")).unwrap()
    );
    let err = usage_error(&["top", "-f", "linux-6.12.txt", "linux-6.12-later.txt"]);
    assert!(err.contains("cannot be used with"), "{err}");
}

#[test]
fn flags_mean_one_thing() {
    // -F is grep's fixed strings, not ours: --function has no short form.
    let err = usage_error(&["top", "linux-6.12.txt", "-F", "kmalloc"]);
    assert!(err.contains("unexpected argument '-F'"), "{err}");
    let err = usage_error(&["query", "linux-6.12.txt", "-F", "kmalloc"]);
    assert!(err.contains("unexpected argument '-F'"), "{err}");
    // -n is the number of rows everywhere; watch says so for seconds.
    let err = usage_error(&["watch", "linux-6.12.txt", "-n", "0.5"]);
    assert!(
        err.contains("-n is the number of rows") && err.contains("-i/--interval or -d"),
        "{err}"
    );
    // -d is the delay, as in top and slabtop.
    let (frames, _) = ok(&["watch", "--plain", "-c", "1", "-d", "0.1", "linux-6.12.txt"]);
    assert!(frames.starts_with("allocinfo watch: frame 1"), "{frames}");
    // JSON is one document per line, unless --pretty.
    let (json, _) = ok(&["top", "linux-6.12.txt", "--json"]);
    assert_eq!(json.lines().count(), 1);
    let (pretty, _) = ok(&["top", "linux-6.12.txt", "--json", "--pretty"]);
    assert!(pretty.lines().count() > 10);
    let parse = |s: &str| serde_json::from_str::<serde_json::Value>(s).unwrap();
    assert_eq!(parse(&pretty), parse(&json));
    let (q, _) = ok(&["query", "linux-6.12.txt", "--json"]);
    assert_eq!(q.lines().count(), 1);
    let (qp, _) = ok(&["query", "linux-6.12.txt", "--json", "--pretty"]);
    assert_eq!(parse(&qp), parse(&q));
    let err = usage_error(&["top", "linux-6.12.txt", "--pretty"]);
    assert!(err.contains("--json"), "{err}");
    // fail add's fault-injection verbosity is not -v/--verbose.
    let err = usage_error(&[
        "fail",
        "--control",
        "/nonexistent/fail",
        "add",
        "f",
        "--verbose",
        "0",
    ]);
    assert!(err.contains("unexpected argument '--verbose'"), "{err}");
}

#[test]
fn live_json_is_one_line_and_by_has_a_short_form() {
    let dir =
        Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("vocab-live-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("live"),
        "object age_ns=1000 bytes=64 pid=1 tgid=1 comm=a cpu=0 ctx=task gfp=0xcc0 kind=slab addr=0x1 site=a.c:1 func:f\n  f+0x1/0x2\n\
         untracked objects=0 bytes=0 dropped=0 busy=0\n",
    )
    .unwrap();
    let d = dir.to_str().unwrap();
    let (json, _) = ok(&["live", "--dir", d, "--json"]);
    assert_eq!(json.lines().count(), 1, "{json}");
    let (pretty, _) = ok(&["live", "--dir", d, "--json", "--pretty"]);
    assert!(pretty.lines().count() > 1);
    assert_eq!(
        ok(&["live", "--dir", d, "-b", "process"]).0,
        ok(&["live", "--dir", d, "--by", "process"]).0
    );
}

#[test]
fn patterns_that_match_nothing_are_said() {
    let (out, err) = ok(&[
        "top",
        "linux-6.12.txt",
        "--function",
        "no_such_*",
        "--path",
        "slub.c",
    ]);
    assert!(out.contains("(nothing matched)"), "{out}");
    assert_eq!(
        err,
        "allocinfo: warning: function pattern 'no_such_*' matches nothing in linux-6.12.txt\n"
    );
    let (_, err) = ok(&["top", "linux-6.12.txt", "--path", "slub.c", "-m", "vmlinux"]);
    assert_eq!(err, "", "both match");
    let (_, err) = ok(&["treemap", "linux-6.12.txt", "-o", "-", "--module", "nomod"]);
    assert!(
        err.contains("module pattern 'nomod' matches nothing"),
        "{err}"
    );
    let (_, err) = ok(&[
        "watch",
        "--plain",
        "-c",
        "1",
        "linux-6.12.txt",
        "-p",
        "nope.c",
    ]);
    assert_eq!(
        err,
        "allocinfo: warning: file pattern 'nope.c' matches nothing in linux-6.12.txt\n"
    );
    let (_, err) = ok(&[
        "diff",
        "linux-6.12.txt",
        "linux-6.12-later.txt",
        "--function",
        "zz*",
    ]);
    assert!(
        err.contains("function pattern 'zz*' matches nothing in either profile"),
        "{err}"
    );
}

#[test]
fn error_messages_name_the_value_and_the_stream() {
    let err = usage_error(&["top", "linux-6.12.txt", "--min-size", "-1"]);
    assert!(
        err.contains("invalid size \"-1\": sizes are not negative"),
        "{err}"
    );
    let err = usage_error(&["top", "linux-6.12.txt", "--min-size", "8E"]);
    assert!(
        err.contains("invalid size \"8E\": larger than the largest size"),
        "{err}"
    );
    let err = usage_error(&["query", "linux-6.12.txt", "--max-size", "-4K"]);
    assert!(err.contains("sizes are not negative"), "{err}");
    // A glob error, once.
    let err = usage_error(&["top", "linux-6.12.txt", "--function", "a[b"]);
    assert_eq!(err.matches("invalid pattern").count(), 1, "{err}");
    assert_eq!(err.matches("Pattern syntax error").count(), 1, "{err}");
    // A write error names standard output.
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .unwrap();
    let out = Command::new(BIN)
        .args(["top", "linux-6.12.txt"])
        .current_dir(data_dir())
        .stdout(full)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8(out.stderr).unwrap(),
        "allocinfo: error: writing standard output: No space left on device (os error 28)\n"
    );
    // The same for the debugfs listings (plain files here: reading is harmless).
    let dir =
        Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("vocab-full-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("fail"), "rule 1 probability=100 interval=1 times=-1 space=0 verbose=1 pid=0 injected=2 sites=0 unarmed=0 select=func:f\n").unwrap();
    std::fs::write(
        dir.join("capture"),
        "capture limit=1 size=1 used=0 dropped=0 busy=0\n",
    )
    .unwrap();
    let d = dir.to_str().unwrap().to_owned();
    let control = dir.join("fail").to_str().unwrap().to_owned();
    for args in [
        vec!["fail", "--control", control.as_str(), "list"],
        vec!["capture", "--dir", d.as_str(), "list", "--json"],
        vec![
            "metrics",
            "linux-6.12.txt",
            "--control",
            control.as_str(),
            "--dir",
            d.as_str(),
        ],
    ] {
        let full = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap();
        let out = Command::new(BIN)
            .args(&args)
            .current_dir(data_dir())
            .stdout(full)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        assert_eq!(
            String::from_utf8(out.stderr).unwrap(),
            "allocinfo: error: writing standard output: No space left on device (os error 28)\n",
            "{args:?}"
        );
    }
    // A path that is not UTF-8 is shown lossily, not as "?".
    let name = OsStr::from_bytes(b"bad-\xff.txt");
    let dir =
        Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("vocab-utf8-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, "allocinfo - version: 1.0\n#\n12ab 1 a.c:1 func:f\n").unwrap();
    let out = run(&[OsStr::new("top"), path.as_os_str()]);
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(err.contains("bad-\u{fffd}.txt: line 3"), "{err}");
    assert!(!err.contains("?:"), "{err}");
}

#[test]
fn completions_and_manual_page() {
    let (bash, _) = ok(&["completions", "bash"]);
    assert!(
        bash.contains("_allocinfo()") && bash.contains("--min-size"),
        "bash"
    );
    let (zsh, _) = ok(&["completions", "zsh"]);
    assert!(zsh.starts_with("#compdef allocinfo"));
    let (fish, _) = ok(&["completions", "fish"]);
    assert!(fish.contains("complete -c allocinfo"));
    let (man, _) = ok(&["man"]);
    assert!(man.contains(".TH allocinfo 1"), "{man}");
    assert!(man.contains("snapshot") && man.contains("treemap"));
    for (cmd, example) in [
        ("top", "allocinfo top -b module -n 10"),
        (
            "diff",
            "allocinfo diff /var/tmp/allocinfo-*.txt /proc/allocinfo",
        ),
        ("watch", "s cycles the sort, r reverses it"),
        (
            "watch",
            "procps watch's -n SECONDS is -i or -d SECONDS here",
        ),
        (
            "metrics",
            "allocinfo metrics -o /var/lib/node_exporter/textfile_collector/allocinfo.prom",
        ),
    ] {
        let (help, _) = ok(&[cmd, "--help"]);
        assert!(help.contains(example), "{cmd}: {help}");
    }
    let (help, _) = ok(&["--help"]);
    for example in [
        "allocinfo top -b module",
        "allocinfo snapshot -o /var/tmp",
        "allocinfo diff /var/tmp/allocinfo-*.txt /proc/allocinfo",
        "--prometheus",
        "Exit status: 0 success, 1 error, 2 usage error.",
    ] {
        assert!(help.contains(example), "{example}:\n{help}");
    }
}

/// Item 12: alloctop's tree view, sort by name and ascending order.
#[test]
fn tree_view_name_sort_and_reverse() {
    let (tree, _) = ok(&[
        "top",
        "linux-6.12.txt",
        "-b",
        "tree",
        "-s",
        "name",
        "-n",
        "0",
    ]);
    assert!(
        tree.lines().nth(1).unwrap().ends_with("PATH PREFIX"),
        "{tree}"
    );
    let names: Vec<&str> = tree
        .lines()
        .skip(2)
        .map(|l| l.rsplit("  ").next().unwrap())
        .collect();
    let fs = names.iter().position(|n| *n == "fs/").expect("fs/");
    assert!(names[fs + 1].starts_with("fs/"), "{names:?}");
    let (rev, _) = ok(&[
        "top",
        "linux-6.12.txt",
        "-b",
        "tree",
        "-s",
        "name",
        "-r",
        "-n",
        "0",
    ]);
    let mut back: Vec<&str> = rev
        .lines()
        .skip(2)
        .map(|l| l.rsplit("  ").next().unwrap())
        .collect();
    back.reverse();
    assert_eq!(back, names);
    let (json, _) = ok(&["top", "linux-6.12.txt", "-b", "tree", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["group_by"], "tree");
}
