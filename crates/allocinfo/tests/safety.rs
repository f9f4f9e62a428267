//! No wrong answers and no damage: filters that are honoured, control files
//! that are refused unless they are the kernel's, totals that are checked
//! and inputs that are bounded.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

mod common;
use common::BIN;

fn data_dir() -> PathBuf {
    common::format_data()
}

/// A fresh directory for one test.
fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("safety-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn run(args: &[&str]) -> Output {
    common::run_in(&data_dir(), args)
}

fn ok(args: &[&str]) -> String {
    let out = run(args);
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn fails(args: &[&str], code: i32) -> String {
    let out = run(args);
    assert_eq!(
        out.status.code(),
        Some(code),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.stdout.is_empty(), "{args:?}");
    String::from_utf8(out.stderr).unwrap()
}

/// Item 1: `treemap --min-size` drops the call sites below the bound.
#[test]
fn treemap_honours_min_size() {
    let svg = |extra: &[&str]| {
        let mut args = vec!["treemap", "-f", "linux-6.12.txt", "-o", "-"];
        args.extend_from_slice(extra);
        ok(&args)
    };
    let all = svg(&[]);
    let big = svg(&["--min-size", "500K"]);
    assert_ne!(all, big, "--min-size 500K changed nothing");
    // Every call site of the profile that is below 500 KiB is gone, and
    // every one above stays.
    let profile = std::fs::read_to_string(data_dir().join("linux-6.12.txt")).unwrap();
    let tags: Vec<(i64, String)> = profile
        .lines()
        .skip(2)
        .map(|line| {
            let words: Vec<&str> = line.split_whitespace().collect();
            (words[0].parse().unwrap(), words[2..].join(" "))
        })
        .collect();
    let mut small = 0;
    let mut large = 0;
    for (bytes, site) in &tags {
        // A site listed twice (the fixture has one) is one name for two sizes.
        if *bytes <= 0 || tags.iter().filter(|(_, s)| s == site).count() > 1 {
            continue;
        }
        if *bytes < 500 * 1024 {
            small += 1;
            assert!(!big.contains(&format!(">{site}")), "{site} is below 500K");
        } else {
            large += 1;
            assert!(big.contains(site.as_str()), "{site} is above 500K");
        }
    }
    assert!(small > 0 && large > 0, "the fixture has both kinds");
}

/// A plain file holding `text`, to be given as a control file.
fn precious(dir: &Path, name: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, "precious data line\n").unwrap();
    path
}

/// Item 2: `fail --control` and `capture --dir` refuse what is not the
/// kernel's control file, and leave it as it was.
#[test]
fn control_files_elsewhere_than_debugfs_are_refused() {
    let dir = scratch("control");
    let p = precious(&dir, "p.txt");
    let ps = p.to_str().unwrap();
    for args in [
        &["fail", "--control", ps, "remove", "7"][..],
        &["fail", "--control", ps, "remove", "--all"],
        &["fail", "--control", ps, "add", "func:f"],
    ] {
        let err = fails(args, 1);
        assert!(
            err.contains("not alloctag's control file") && err.contains("not on debugfs"),
            "{args:?}: {err}"
        );
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "precious data line\n");
    }
    // A capture directory that is not debugfs: its capture file is kept.
    let c = precious(&dir, "capture");
    let ds = dir.to_str().unwrap();
    for args in [
        &["capture", "--dir", ds, "add", "func:f"][..],
        &["capture", "--dir", ds, "remove", "--all"],
        &["capture", "--dir", ds, "limit", "64"],
    ] {
        let err = fails(args, 1);
        assert!(err.contains("not on debugfs"), "{args:?}: {err}");
        assert_eq!(std::fs::read_to_string(&c).unwrap(), "precious data line\n");
    }
    // Nothing is opened for writing before the check: a FIFO without a
    // reader would block the open.
    let fifo = dir.join("fail");
    assert!(
        Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let err = fails(
        &["fail", "--control", fifo.to_str().unwrap(), "remove", "1"],
        1,
    );
    assert!(err.contains("not on debugfs"), "{err}");
    // /dev/full's ENOSPC is not the kernel saying that the rules are full.
    let err = fails(&["fail", "--control", "/dev/full", "add", "x"], 1);
    assert!(err.contains("not on debugfs"), "{err}");
    assert!(!err.contains("rules are in use"), "{err}");
}

/// Item 3: `live --by stack|process` with sums beyond 64 bits is an error
/// naming the input, not a wrapped figure.
#[test]
fn live_sums_that_overflow_are_errors() {
    let dir = scratch("live-overflow");
    let huge = u64::MAX / 2 + 1;
    let live = format!(
        "object age_ns=1 bytes={huge} pid=1 tgid=1 comm=a cpu=0 ctx=task gfp=0xcc0 kind=slab addr=0x1 site=a.c:1 func:f\n  f+0x1/0x2\n\
         object age_ns=2 bytes={huge} pid=1 tgid=1 comm=a cpu=0 ctx=task gfp=0xcc0 kind=slab addr=0x2 site=a.c:1 func:f\n  f+0x1/0x2\n\
         untracked objects=0 bytes=0 dropped=0 busy=0\n"
    );
    std::fs::write(dir.join("live"), live).unwrap();
    let ds = dir.to_str().unwrap();
    for by in ["stack", "process"] {
        let err = fails(&["live", "--dir", ds, "--by", by], 1);
        assert!(
            err.contains(&dir.join("live").display().to_string()) && err.contains("overflow"),
            "{by}: {err}"
        );
    }
}

/// Item 3: a profile whose bytes add up beyond 8 EiB is refused by name,
/// not shown with saturated totals and shares beyond 100%.
#[test]
fn profile_totals_that_overflow_are_errors() {
    let dir = scratch("top-overflow");
    let path = dir.join("huge.txt");
    let big = i64::MAX / 2 + 1;
    std::fs::write(
        &path,
        format!(
            "allocinfo - version: 1.0\n#     <size>  <calls> <tag info>\n\
             {big} 1 a.c:1 func:f\n{big} 1 b.c:1 func:g\n"
        ),
    )
    .unwrap();
    let ps = path.to_str().unwrap();
    for args in [
        &["top", "-f", ps][..],
        &["top", "-f", ps, "--json"],
        &["diff", ps, ps],
    ] {
        let err = fails(args, 1);
        assert!(
            err.contains("huge.txt") && err.contains("overflow"),
            "{args:?}: {err}"
        );
    }
    // Huge but representable: the shares add up to 100%.
    let fine = big - 1;
    std::fs::write(
        &path,
        format!(
            "allocinfo - version: 1.0\n#     <size>  <calls> <tag info>\n\
             {fine} 1 a.c:1 func:f\n{fine} 1 b.c:1 func:g\n"
        ),
    )
    .unwrap();
    let json: serde_json::Value = serde_json::from_str(&ok(&["top", "-f", ps, "--json"])).unwrap();
    let shares: f64 = json["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["share"].as_f64().unwrap())
        .sum();
    assert!((shares - 1.0).abs() < 1e-9, "{json}");
}

/// Item 4: an endless input is refused after a bound, quickly: endless
/// text (yes(1) on standard input) at 256 MiB, NULs (/dev/zero, for the
/// profile and for a control file's listing) at once.
#[test]
fn endless_input_is_bounded() {
    let mut yes = Guard(
        Command::new("yes")
            .arg("allocinfo - version: 1.0")
            .stdout(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let out = Command::new(BIN)
        .args(["top", "-"])
        .stdin(yes.0.stdout.take().unwrap())
        .output()
        .unwrap();
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert_eq!(
        err,
        "allocinfo: error: reading standard input: larger than 256 MiB, which no allocation profile is\n"
    );
    drop(yes);
    let err = fails(&["fail", "--control", "/dev/zero", "list"], 1);
    assert!(
        err.contains("/dev/zero: not text (a NUL byte at offset 0)"),
        "{err}"
    );
    let mut child = Command::new(BIN)
        .args(["top", "-f", "/dev/zero"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if Instant::now() > deadline {
            child.kill().unwrap();
            child.wait().unwrap();
            panic!("allocinfo top -f /dev/zero still reading after 60 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut err = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
    assert_eq!(status.code(), Some(1), "{err}");
    assert_eq!(
        err,
        "allocinfo: error: reading /dev/zero: not text (a NUL byte at offset 0), so not an allocation profile\n"
    );
}

/// Kills and reaps a child when dropped.
struct Guard(std::process::Child);

impl Drop for Guard {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}
