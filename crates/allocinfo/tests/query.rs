//! `allocinfo query` on the text path (the host has no kernel with the
//! ioctl: the ioctl path is tested on a fake kernel in `src/via.rs` and
//! `allocinfo-ioctl`, and in the guest), and `top -v`.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

mod common;
use common::BIN;

fn data_dir() -> PathBuf {
    common::crate_data()
}

fn run(args: &[&str]) -> Output {
    common::run_in(&data_dir(), args)
}

/// Standard output and standard error of a successful run.
fn ok(args: &[&str]) -> (String, String) {
    let out = run(args);
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(out.status.success(), "{args:?}: {stderr}");
    (String::from_utf8(out.stdout).unwrap(), stderr)
}

/// Compares with tests/data/expected/NAME; UPDATE_GOLDEN=1 rewrites it.
fn golden(name: &str, actual: &str) {
    let path = data_dir().join("expected").join(name);
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::write(&path, actual).unwrap();
    }
    let expected =
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert_eq!(actual, expected, "output differs from {}", path.display());
}

const LONG_FILE: &str = "drivers/net/ethernet/mellanox/mlx5/core/steering/hws/mlx5hws_action.c";
const LONG_FUNCTION: &str =
    "alloctag_rust_sample::RustSample::allocate::<kernel::alloc::allocator::Kmalloc>";

#[test]
fn golden_query_outputs() {
    let cases: &[(&str, &[&str])] = &[
        ("query-all.txt", &[]),
        ("query-module.txt", &["--module", "xfs"]),
        (
            "query-builtin-sizes.txt",
            &["-m", "vmlinux", "--min-size", "4K", "--max-size", "1M"],
        ),
        ("query-long-filename.txt", &["--path", LONG_FILE]),
        ("query-long-function.txt", &["--function", LONG_FUNCTION]),
        (
            "query-filename-line.txt",
            &["--filename", "mm/slub.c", "--line", "2478"],
        ),
        ("query-inaccurate.json", &["--inaccurate", "--json"]),
        (
            "query-module.json",
            &["--json", "-m", "alloctag_rust_sample"],
        ),
    ];
    for (name, extra) in cases {
        let mut args = vec!["query", "-f", "query.txt"];
        args.extend_from_slice(extra);
        let (out, err) = ok(&args);
        assert_eq!(err, "", "{args:?}");
        golden(name, &out);
        // --via text: the same.
        args.extend_from_slice(&["--via", "text"]);
        assert_eq!(ok(&args).0, out, "{args:?}");
    }
}

#[test]
fn query_semantics_on_the_text() {
    let (all, _) = ok(&["query", "-f", "query.txt"]);
    let lines: Vec<&str> = all.lines().collect();
    assert_eq!(lines.len(), 16, "every tag, in the file's order");
    assert!(lines.iter().all(|l| l.ends_with(' ')), "the kernel's lines");
    // Names keep their last 63 bytes; pairs other than accurate:no go.
    assert!(all.contains(
        " s/net/ethernet/mellanox/mlx5/core/steering/hws/mlx5hws_action.c:1702 [mlx5_core] "
    ));
    assert!(all.contains("mm/hugetlb.c:1101 func:resv_map_alloc accurate:no \n"));
    assert!(!all.contains("hint:"));
    // One rule for names: exactly or by glob, files also by a path suffix
    // after a `/`; no prefixes. A pattern matching nothing says so.
    for (flag, value) in [
        ("--function", "alloc_slab"),
        ("--path", "ub.c"),
        ("--module", "xf"),
    ] {
        let (out, err) = ok(&["query", "-f", "query.txt", flag, value]);
        assert_eq!(out, "", "{flag} {value}");
        assert_eq!(
            err,
            "allocinfo: warning: the name patterns and filters match no tag in query.txt\n"
        );
    }
    let q = |args: &[&str]| {
        let mut v = vec!["query", "-f", "query.txt"];
        v.extend_from_slice(args);
        ok(&v).0
    };
    let slab = q(&["--function", "alloc_slab_page"]);
    assert_eq!(slab.lines().count(), 2);
    assert_eq!(q(&["--function", "alloc_slab*"]), slab);
    assert_eq!(q(&["--function", "alloc_slab_pag?"]), slab);
    let slub = q(&["--path", "mm/slub.c"]);
    assert!(!slub.is_empty());
    assert_eq!(q(&["--path", "slub.c"]), slub);
    assert_eq!(q(&["--filename", "slub.c"]), slub, "the old spelling");
    assert_eq!(
        q(&["--path", "mm/*"]).matches("mm/slub.c").count(),
        slub.lines().count()
    );
    assert_eq!(q(&["--module", "x*"]), q(&["--module", "xfs"]));
    // The trimmed name matches as the whole name does.
    let (by_tail, _) = ok(&[
        "query",
        "-f",
        "query.txt",
        "--path",
        &LONG_FILE[LONG_FILE.len() - 63..],
    ]);
    assert_eq!(by_tail.lines().count(), 2);
    let v: serde_json::Value =
        serde_json::from_str(&ok(&["query", "-f", "query.txt", "--json", "-l", "99999"]).0)
            .unwrap();
    assert_eq!(v["schema"], "allocinfo-query/1");
    assert_eq!(v["tags"].as_array().unwrap().len(), 0);
}

#[test]
fn query_reads_standard_input_and_says_which_path() {
    let mut child = Command::new(BIN)
        .args(["query", "-f", "-", "-v", "--module", "xfs"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let input = std::fs::read(data_dir().join("query.txt")).unwrap();
    child.stdin.take().unwrap().write_all(&input).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    assert_eq!(out.stdout.split(|&b| b == b'\n').count(), 3 + 1);
    assert_eq!(
        String::from_utf8(out.stderr).unwrap(),
        "allocinfo: query: via text of <stdin>: 3 matching tags; not /proc/allocinfo\n"
    );
    let (_, err) = ok(&[
        "query",
        "-f",
        "query.txt",
        "-v",
        "--via",
        "text",
        "-l",
        "88",
    ]);
    assert_eq!(
        err,
        "allocinfo: query: via text of query.txt: 1 matching tag; --via text\n"
    );
}

#[test]
fn query_usage_errors() {
    let out = run(&["query", "-f", "query.txt", "--via", "ioctl"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("--via ioctl reads /proc/allocinfo only, not query.txt"),
        "{err}"
    );
    let out = run(&["query", "-f", "query.txt", "--min-size=-4K"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("invalid size \"-4K\""));
    // The kernel refuses min > max (EINVAL): so does the text path.
    let out = run(&[
        "query",
        "-f",
        "query.txt",
        "--min-size",
        "2K",
        "--max-size",
        "1K",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--min-size is above --max-size"));
    let out = run(&["query", "-f", "query.txt", "--via", "sometimes"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn top_verbose_says_which_path() {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("../allocinfo-format/tests/data");
    let out = Command::new(BIN)
        .args(["top", "-v", "-f", "linux-6.12.txt"])
        .current_dir(&data)
        .output()
        .unwrap();
    assert!(out.status.success());
    assert_eq!(
        String::from_utf8(out.stderr).unwrap(),
        "allocinfo: top: via text of linux-6.12.txt: 58 tags; not /proc/allocinfo\n"
    );
    let expected = std::fs::read(data_dir().join("expected/top.txt")).unwrap();
    assert_eq!(out.stdout, expected, "-v changes standard error only");
    let out = Command::new(BIN)
        .args(["top", "--via", "ioctl", "-f", "linux-6.12.txt"])
        .current_dir(&data)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}
