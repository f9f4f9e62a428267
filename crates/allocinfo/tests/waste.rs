//! The kernel's waste accounting end to end: `allocinfo waste` on fixture
//! files of /proc/allocwaste (tests/data/waste/), `waste on|off` against a
//! directory standing in for debugfs, the allocations per second of `diff`
//! and `watch`, `snapshot`'s copy of the figures and `treemap --color slack`.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

mod common;
use common::{BIN, ok_in, run_in};

fn waste_dir() -> PathBuf {
    common::crate_data().join("waste")
}

fn profiles() -> PathBuf {
    common::format_data()
}

/// A fresh directory for one test.
fn scratch(name: &str) -> PathBuf {
    let dir =
        Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("waste-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn ok(args: &[&str]) -> String {
    ok_in(&waste_dir(), args)
}

/// A run in `dir` that fails with status 1.
fn failure_in(dir: &Path, args: &[&str]) -> Output {
    let out = run_in(dir, args);
    assert_eq!(out.status.code(), Some(1), "{args:?}");
    out
}

/// Standard error of a run that fails with status 1 and prints nothing.
fn fails(args: &[&str]) -> String {
    let out = failure_in(&waste_dir(), args);
    assert!(out.stdout.is_empty(), "{args:?}");
    String::from_utf8(out.stderr).unwrap()
}

fn json(args: &[&str]) -> Value {
    let mut argv = args.to_vec();
    argv.push("--json");
    let text = ok(&argv);
    assert_eq!(text.lines().count(), 1, "one line: {text}");
    serde_json::from_str(&text).unwrap()
}

/// The `site func` of each site of a JSON document, in order.
fn order(v: &Value) -> Vec<String> {
    v["sites"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            format!(
                "{} {}",
                s["site"].as_str().unwrap(),
                s["function"].as_str().unwrap()
            )
        })
        .collect()
}

#[test]
fn waste_table_sorted_by_slack_with_totals() {
    let out = ok(&["waste", "allocwaste.txt"]);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines[0],
        "allocwaste.txt (format 1.0): accounting on for 1m00s, 7 call sites"
    );
    assert_eq!(
        lines[1],
        "  SLACK  RATIO    BYTES  REQUESTED  ALLOCS   FREES  UNTRACKED  CALL SITE"
    );
    assert_eq!(
        lines[2],
        "7.0 MiB  12.7%   55 MiB     48 MiB    4887       0     10 MiB  mm/slub.c:2478 func:alloc_slab_page"
    );
    assert!(
        lines[4].ends_with(
            "  280 B  21.9%  1.3 KiB     1000 B      10       0        0 B  lib/alloctag/tests/alloctag_test.c:120 [alloctag_test] func:hold_object"
        ),
        "{}",
        lines[4]
    );
    assert!(
        lines[7].ends_with("mm/util.c:22 func:kstrdup accurate:no"),
        "extras are kept: {}",
        lines[7]
    );
    assert_eq!(lines.len(), 10, "7 rows, no '-n' line: {out}");
    assert_eq!(
        lines[9],
        "total: 58 MiB allocated, 51 MiB requested, 7.2 MiB slack (12.4% of the bytes), 11 MiB untracked"
    );
    let exact = ok(&["waste", "allocwaste.txt", "--exact", "-n", "1"]);
    assert!(
        exact.contains("7340032  12.7%  57671680   50331648"),
        "{exact}"
    );
    assert!(
        exact.contains("total: 60614064 allocated, 53090072 requested, 7523992 slack (12.4% of the bytes), 10485888 untracked"),
        "{exact}"
    );
}

#[test]
fn waste_sort_keys_and_ties() {
    let slack = order(&json(&["waste", "allocwaste.txt"]));
    assert_eq!(
        slack,
        [
            "mm/slub.c:2478 alloc_slab_page",
            "fs/kernfs/dir.c:624 __kernfs_new_node",
            "lib/alloctag/tests/alloctag_test.c:120 hold_object",
            // 56 bytes each: by call site.
            "mm/mempolicy.c:2589 __mpol_dup",
            "mm/percpu.c:3191 pcpu_embed_first_chunk",
            "mm/util.c:22 kstrdup",
            "mm/memcontrol.c:3515 mem_cgroup_alloc",
        ]
    );
    assert_eq!(
        slack,
        order(&json(&["waste", "allocwaste.txt", "--sort", "slack"]))
    );
    assert_eq!(
        order(&json(&["waste", "allocwaste.txt", "-s", "ratio"])),
        [
            "mm/mempolicy.c:2589 __mpol_dup",
            "mm/util.c:22 kstrdup",
            "lib/alloctag/tests/alloctag_test.c:120 hold_object",
            "mm/slub.c:2478 alloc_slab_page",
            "fs/kernfs/dir.c:624 __kernfs_new_node",
            "mm/percpu.c:3191 pcpu_embed_first_chunk",
            "mm/memcontrol.c:3515 mem_cgroup_alloc",
        ]
    );
    assert_eq!(
        order(&json(&["waste", "allocwaste.txt", "--sort", "allocs"])),
        [
            "fs/kernfs/dir.c:624 __kernfs_new_node",
            "mm/util.c:22 kstrdup",
            "mm/slub.c:2478 alloc_slab_page",
            "mm/mempolicy.c:2589 __mpol_dup",
            "lib/alloctag/tests/alloctag_test.c:120 hold_object",
            "mm/percpu.c:3191 pcpu_embed_first_chunk",
            "mm/memcontrol.c:3515 mem_cgroup_alloc",
        ]
    );
    assert_eq!(
        order(&json(&["waste", "allocwaste.txt", "--sort", "frees"])),
        [
            "fs/kernfs/dir.c:624 __kernfs_new_node",
            "mm/util.c:22 kstrdup",
            "mm/mempolicy.c:2589 __mpol_dup",
            // No frees: by call site.
            "lib/alloctag/tests/alloctag_test.c:120 hold_object",
            "mm/memcontrol.c:3515 mem_cgroup_alloc",
            "mm/percpu.c:3191 pcpu_embed_first_chunk",
            "mm/slub.c:2478 alloc_slab_page",
        ]
    );
    let table = ok(&["waste", "allocwaste.txt", "-s", "allocs", "-n", "1"]);
    assert!(
        table
            .lines()
            .nth(2)
            .unwrap()
            .ends_with("fs/kernfs/dir.c:624 func:__kernfs_new_node"),
        "{table}"
    );
}

#[test]
fn waste_limit() {
    let two = ok(&["waste", "allocwaste.txt", "-n", "2"]);
    let lines: Vec<&str> = two.lines().collect();
    assert_eq!(lines.len(), 6, "{two}");
    assert_eq!(lines[4], "(2 of 7 rows; -n 0 shows all)");
    assert!(
        lines[5].starts_with("total: 58 MiB allocated"),
        "totals of all sites"
    );
    assert!(!ok(&["waste", "allocwaste.txt", "-n", "0"]).contains("rows;"));
    assert_eq!(
        json(&["waste", "allocwaste.txt"])["sites"]
            .as_array()
            .unwrap()
            .len(),
        7
    );
    let one = json(&["waste", "allocwaste.txt", "-n", "1"]);
    assert_eq!(one["sites"].as_array().unwrap().len(), 1);
    assert_eq!(one["totals"]["sites"], 7);
    assert_eq!(one["totals"]["slack"], 7523992);
    // The table shows 20 by default, as top does.
    let dir = scratch("limit");
    let mut text =
        String::from("allocwaste - version: 1.0\n# state: on since_ns: 0 now_ns: 1\n# columns\n");
    for i in 0..25 {
        text.push_str(&format!("{} 0 {} 1 0 0 a.c:{i} func:f\n", 100 + i, 100 + i));
    }
    std::fs::write(dir.join("w.txt"), text).unwrap();
    let out = ok_in(&dir, &["waste", "w.txt"]);
    assert!(out.contains("(20 of 25 rows; -n 0 shows all)"), "{out}");
    let err = String::from_utf8(run_in(&dir, &["waste", "w.txt", "-n", "1.5"]).stderr).unwrap();
    assert!(err.contains("-n is the number of rows"), "{err}");
}

#[test]
fn waste_json_shape() {
    let args = [
        "waste",
        "allocwaste.txt",
        "--meminfo",
        "meminfo.txt",
        "-n",
        "3",
    ];
    let v = json(&args);
    assert_eq!(v["version"], "1.0");
    assert_eq!(v["state"], "on");
    assert_eq!(v["since_ns"], 5_000_000_000u64);
    assert_eq!(v["now_ns"], 65_000_000_000u64);
    let first = &v["sites"][0];
    let keys: Vec<&str> = first
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    let mut want = [
        "site",
        "function",
        "module",
        "bytes",
        "requested",
        "slack",
        "ratio",
        "allocs",
        "frees",
        "untracked",
        "accurate",
        "extra",
    ];
    want.sort();
    assert_eq!(keys, want);
    assert_eq!(v["schema"], "allocinfo-waste/1");
    assert_eq!(first["site"], "mm/slub.c:2478");
    assert_eq!(first["function"], "alloc_slab_page");
    assert_eq!(first["module"], Value::Null, "built-in code");
    assert_eq!(first["bytes"], 57671680);
    assert_eq!(first["requested"], 50331648);
    assert_eq!(first["slack"], 7340032);
    assert_eq!(first["ratio"], 0.127273);
    assert_eq!(first["allocs"], 4887);
    assert_eq!(first["frees"], 0);
    assert_eq!(first["untracked"], 10485760);
    assert_eq!(v["sites"][2]["module"], "alloctag_test");
    let t = &v["totals"];
    assert_eq!(t["bytes"], 60614064);
    assert_eq!(t["requested"], 53090072);
    assert_eq!(t["slack"], 7523992);
    assert_eq!(t["untracked"], 10485888);
    assert_eq!(t["allocs"], 325178);
    assert_eq!(t["frees"], 297328);
    assert_eq!(t["ratio"], 0.124129);
    assert_eq!(t["slab_bytes"], 536870912);
    assert_eq!(t["slab_share"], 0.014015);
    let pretty = ok(&[&args[..], &["--json", "--pretty"]].concat());
    assert!(pretty.lines().count() > 20);
    assert_eq!(serde_json::from_str::<Value>(&pretty).unwrap(), v);
    // Without meminfo (a file, not /proc/allocwaste): no share of Slab.
    let v = json(&["waste", "allocwaste.txt"]);
    assert_eq!(v["totals"]["slab_bytes"], Value::Null);
    assert_eq!(v["totals"]["slab_share"], Value::Null);
}

#[test]
fn waste_share_of_meminfo_slab() {
    let out = ok(&["waste", "allocwaste.txt", "--meminfo", "meminfo.txt"]);
    assert_eq!(
        out.lines().last().unwrap(),
        "slack: 1.4% of Slab: in meminfo (512 MiB)"
    );
    assert!(!ok(&["waste", "allocwaste.txt"]).contains("Slab:"));
    let err = fails(&["waste", "allocwaste.txt", "--meminfo", "nonexistent"]);
    assert!(err.contains("reading nonexistent"), "{err}");
    let err = fails(&["waste", "allocwaste.txt", "--meminfo", "allocwaste.txt"]);
    assert!(err.contains("no valid 'Slab:' line"), "{err}");
}

#[test]
fn waste_off_is_said_on_stderr() {
    let out = run_in(&waste_dir(), &["waste", "allocwaste-off.txt"]);
    assert!(out.status.success());
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("waste accounting is off: the figures are frozen"),
        "{err}"
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.starts_with("allocwaste-off.txt (format 1.0): accounting off"),
        "{text}"
    );
    let out = run_in(&waste_dir(), &["waste", "allocwaste-off.txt", "--json"]);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["state"], "off");
    assert!(!out.stderr.is_empty());
    // On: nothing on stderr (ok_in checks).
    ok(&["waste", "allocwaste.txt"]);
}

#[test]
fn waste_errors_name_the_file_and_line() {
    let err = fails(&["waste", "version-2.txt"]);
    assert_eq!(
        err,
        "allocinfo: error: version-2.txt: line 1: unsupported allocwaste format version 2.0 (this tool reads versions 1.x)\n"
    );
    let err = fails(&["waste", "bad-line.txt"]);
    assert_eq!(
        err,
        "allocinfo: error: bad-line.txt: line 5: invalid allocs \"9021x\": expected an unsigned 64-bit integer\n"
    );
    let err = fails(&["waste", "-f", "meminfo.txt"]);
    assert!(
        err.contains("meminfo.txt: line 1: expected the header line 'allocwaste"),
        "{err}"
    );
    let err = fails(&["waste", "missing.txt"]);
    assert!(err.contains("reading missing.txt: No such file"), "{err}");
    // A profile is not waste figures.
    let profile = profiles().join("linux-6.12.txt");
    let err = fails(&["waste", profile.to_str().unwrap()]);
    assert!(err.contains("line 1: expected the header line"), "{err}");
}

#[test]
fn waste_reads_standard_input() {
    let text = std::fs::read(waste_dir().join("allocwaste.txt")).unwrap();
    let mut child = Command::new(BIN)
        .args(["waste", "-", "--json"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child.stdin.take().unwrap().write_all(&text).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["totals"]["sites"], 7);
}

#[test]
fn waste_on_off_against_a_directory() {
    let dir = scratch("control");
    let ds = dir.to_str().unwrap();
    let err = String::from_utf8(run_in(&dir, &["waste", "on", "--dir", ds]).stderr).unwrap();
    assert_eq!(
        err,
        format!("allocinfo: error: this kernel has no waste accounting ({ds}/waste missing)\n")
    );
    let gone = format!("{ds}/debug");
    let out = failure_in(&dir, &["waste", "off", "--dir", &gone]);
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("no waste accounting")
            && err.contains("mount -t debugfs none /sys/kernel/debug"),
        "{err}"
    );
    // A plain file is not the kernel's: refused, untouched (the writing
    // itself is tested in src/waste.rs on a trusted file).
    std::fs::write(dir.join("waste"), "precious\n").unwrap();
    let out = failure_in(&dir, &["waste", "on", "--dir", ds]);
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("not on debugfs"), "{err}");
    assert_eq!(
        std::fs::read_to_string(dir.join("waste")).unwrap(),
        "precious\n"
    );
    // Only on and off.
    let out = run_in(&dir, &["waste", "maybe", "--dir", ds]);
    assert_eq!(out.status.code(), Some(2), "--dir belongs to on and off");
}

/// A directory with two snapshots of a profile and, when `waste`, their
/// waste figures named as `snapshot` names them.
fn snapshots(name: &str, old_waste: bool, new_waste: bool) -> PathBuf {
    let dir = scratch(name);
    for (n, later, waste) in [(1, "", old_waste), (2, "-later", new_waste)] {
        std::fs::copy(
            profiles().join(format!("linux-6.12{later}.txt")),
            dir.join(format!("allocinfo-{n}.txt")),
        )
        .unwrap();
        if waste {
            std::fs::copy(
                waste_dir().join(format!("allocwaste{later}.txt")),
                dir.join(format!("allocwaste-{n}.txt")),
            )
            .unwrap();
        }
    }
    dir
}

/// `diff allocinfo-1.txt allocinfo-2.txt` in a directory of [`snapshots`],
/// with `extra` arguments: its standard output.
fn diff_in(dir: &Path, extra: &[&str]) -> String {
    ok_in(
        dir,
        &[&["diff", "allocinfo-1.txt", "allocinfo-2.txt"], extra].concat(),
    )
}

#[test]
fn diff_shows_allocations_per_second() {
    let dir = snapshots("diff-rates", true, true);
    let out = diff_in(&dir, &[]);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines[3],
        "  +BYTES  +CALLS  ALLOCS/S    BYTES  CALLS  STATUS  CALL SITE"
    );
    // 2 seconds apart: 512, 16 and 100 allocations.
    assert_eq!(
        lines[4],
        "+2.0 MiB    +512     256.0   57 MiB   5399          mm/slub.c:2478 func:alloc_slab_page"
    );
    assert!(lines[5].contains("     8.0 ") && lines[5].ends_with("func:xprt_alloc_slot"));
    assert!(lines[6].contains("    50.0 ") && lines[6].ends_with("func:__kernfs_new_node"));
    // No waste figures for the site: no rate.
    assert!(
        lines[7].contains("        - ") && lines[7].contains("readahead"),
        "{}",
        lines[7]
    );
    let by_module = diff_in(&dir, &["-b", "module"]);
    assert!(
        by_module.contains("    1306.0  231 MiB  90924     51          vmlinux"),
        "{by_module}"
    );
    let v: Value = serde_json::from_str(&diff_in(&dir, &["--json"])).unwrap();
    assert_eq!(v["rows"][0]["allocs_per_sec"], 256.0);
    assert_eq!(v["rows"][3]["allocs_per_sec"], Value::Null);
    // CSV is as without the figures.
    let csv = diff_in(&dir, &["--csv"]);
    let plain = snapshots("diff-rates-csv", false, false);
    assert_eq!(csv, diff_in(&plain, &["--csv"]));
}

#[test]
fn diff_without_waste_figures_is_unchanged() {
    let plain = snapshots("diff-plain", false, false);
    let args = ["diff", "allocinfo-1.txt", "allocinfo-2.txt"];
    let without = diff_in(&plain, &[]);
    assert!(!without.contains("ALLOCS/S"));
    let json = diff_in(&plain, &["--json"]);
    assert!(!json.contains("allocs_per_sec"));
    // The golden output of tests/cli.rs, from the same profiles.
    let golden = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/expected/diff.txt"),
    )
    .unwrap();
    assert_eq!(
        without
            .replace("allocinfo-1.txt", "linux-6.12.txt")
            .replace("allocinfo-2.txt", "linux-6.12-later.txt"),
        golden
    );
    // Figures for one side only: the same output, and a note why.
    let one = snapshots("diff-one", true, false);
    let out = run_in(&one, &args);
    assert!(out.status.success());
    assert_eq!(String::from_utf8(out.stdout).unwrap(), without);
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("no allocation rates: waste figures next to allocinfo-1.txt but none next to allocinfo-2.txt"),
        "{err}"
    );
}

/// The arguments of `watch` showing one plain frame, then `args`.
fn watch_once<'a>(args: &[&'a str]) -> Vec<&'a str> {
    [&["watch", "--plain", "-c", "1"], args].concat()
}

#[test]
fn watch_shows_allocations_per_second_column_only_with_figures() {
    let dir = snapshots("watch", true, false);
    let frame = |d: &Path, extra: &[&str]| {
        let out = ok_in(
            d,
            &watch_once(&[&["-n", "3", "allocinfo-1.txt"], extra].concat()),
        );
        // Without the title, which has the time.
        out.lines().skip(1).collect::<Vec<_>>().join("\n")
    };
    let with = frame(&dir, &[]);
    assert!(with.contains("+BYTES  +CALLS  ALLOCS/S"), "{with}");
    // One read: no rate yet.
    assert!(
        with.lines().nth(3).unwrap().contains("         - "),
        "{with}"
    );
    let plain = snapshots("watch-plain", false, false);
    let without = frame(&plain, &[]);
    assert!(!without.contains("ALLOCS/S"), "{without}");
    // --waste names the figures; a missing file is refused, as treemap's
    // --color slack refuses one (the figures beside the profile may be
    // missing: no column).
    let w = waste_dir().join("allocwaste.txt");
    assert_eq!(frame(&plain, &["--waste", w.to_str().unwrap()]), with);
    let err = failure_in(
        &dir,
        &[
            "watch",
            "--plain",
            "-c",
            "1",
            "allocinfo-1.txt",
            "--waste",
            "nonexistent",
        ],
    );
    assert!(String::from_utf8_lossy(&err.stderr).contains("--waste nonexistent: no such file"));
    let bad = waste_dir().join("bad-line.txt");
    let out = failure_in(
        &plain,
        &watch_once(&["allocinfo-1.txt", "--waste", bad.to_str().unwrap()]),
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("line 5"));
}

/// A stand-in for /proc in `dir`: `allocinfo`, a profile of the test data,
/// and `allocwaste`, waste figures of tests/data/waste, when given.
fn stand_in(dir: &Path, profile: &str, waste: Option<&str>) {
    std::fs::copy(profiles().join(profile), dir.join("allocinfo")).unwrap();
    if let Some(waste) = waste {
        std::fs::copy(waste_dir().join(waste), dir.join("allocwaste")).unwrap();
    }
}

#[test]
fn snapshot_saves_the_waste_figures_next_to_the_profile() {
    // A stand-in for /proc: allocinfo and allocwaste side by side.
    let src = scratch("snapshot-src");
    stand_in(&src, "linux-6.12.txt", Some("allocwaste.txt"));
    let out = scratch("snapshot-out");
    let from = src.join("allocinfo");
    let first = ok_in(&out, &["snapshot", from.to_str().unwrap(), "-o", "."]);
    let first = out.join(first.trim());
    let name = first.file_name().unwrap().to_str().unwrap().to_owned();
    assert!(
        name.starts_with("allocinfo-") && name.ends_with(".txt"),
        "{name}"
    );
    let copy = out.join(name.replace("allocinfo-", "allocwaste-"));
    assert_eq!(
        std::fs::read(&copy).unwrap(),
        std::fs::read(src.join("allocwaste")).unwrap(),
        "byte for byte"
    );
    // Two in the same second: both pairs keep their names apart.
    stand_in(&src, "linux-6.12-later.txt", Some("allocwaste-later.txt"));
    let second = ok_in(&out, &["snapshot", from.to_str().unwrap(), "-o", "."]);
    let second = out.join(second.trim());
    assert_ne!(first, second);
    let diff = ok_in(
        &out,
        &["diff", first.to_str().unwrap(), second.to_str().unwrap()],
    );
    assert!(
        diff.contains("256.0"),
        "the rates of the saved figures: {diff}"
    );
    // A file name as -o: NAME.allocwaste next to it.
    ok_in(
        &out,
        &["snapshot", from.to_str().unwrap(), "-o", "before.txt"],
    );
    assert!(out.join("before.txt.allocwaste").exists());
    // Without figures, one file, as before.
    let bare = scratch("snapshot-bare");
    stand_in(&bare, "linux-6.12.txt", None);
    let only = scratch("snapshot-only");
    ok_in(
        &only,
        &["snapshot", bare.join("allocinfo").to_str().unwrap()],
    );
    assert_eq!(std::fs::read_dir(&only).unwrap().count(), 1);
    // Bad figures: the profile is saved, the figures are warned about.
    let badsrc = scratch("snapshot-bad");
    stand_in(&badsrc, "linux-6.12.txt", Some("bad-line.txt"));
    let badout = scratch("snapshot-badout");
    let out = run_in(
        &badout,
        &["snapshot", badsrc.join("allocinfo").to_str().unwrap()],
    );
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("warning: waste figures"));
    assert_eq!(std::fs::read_dir(&badout).unwrap().count(), 1);
}

#[test]
fn treemap_colours_call_sites_by_slack() {
    let dir = scratch("treemap");
    let profile = profiles().join("linux-6.12.txt");
    let waste = waste_dir().join("allocwaste.txt");
    // The treemap of the profile on standard output, then other arguments.
    let treemap = ["treemap", profile.to_str().unwrap(), "-o", "-"];
    let waste = ["--waste", waste.to_str().unwrap()];
    let slack = ["--color", "slack"];
    let svg = ok_in(&dir, &[&treemap[..], &slack, &waste].concat());
    // One rectangle with its tooltip, which spans lines.
    let rect = |title: &str| -> String {
        let at = svg.find(&format!("<title>{title}")).unwrap();
        let start = svg[..at].rfind("<rect").unwrap();
        let end = at + svg[at..].find("</rect>").unwrap();
        svg[start..end].to_owned()
    };
    // alloc_slab_page: 12.7% slack, hue 120 * (1 - 0.127) = 105.
    let slub = rect("mm/slub.c:2478 func:alloc_slab_page");
    assert!(slub.contains(r#"fill="hsl(105,70%,60%)""#), "{slub}");
    assert!(slub.contains("slack: 12.7% of the bytes"), "{slub}");
    // __mpol_dup: 50%, yellow.
    let mpol = rect("mm/mempolicy.c:2589 func:__mpol_dup");
    assert!(mpol.contains(r#"fill="hsl(60,70%,60%)""#), "{mpol}");
    let no_figures = rect("mm/page_ext.c:271 func:alloc_page_ext");
    assert!(
        no_figures.contains(r#"fill="hsl(0,0%,78%)""#),
        "{no_figures}"
    );
    assert!(no_figures.contains("slack: no waste figures"));
    let plain = ok_in(&dir, &treemap);
    assert!(!plain.contains("slack:"));
    assert_eq!(
        plain,
        ok_in(&dir, &[&treemap[..], &waste].concat()),
        "--waste alone changes nothing"
    );
    let out = failure_in(&dir, &[&treemap[..], &slack].concat());
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("--color slack") && err.contains("linux-6.12.txt.allocwaste"),
        "{err}"
    );
}

#[test]
fn completions_and_manual_page_know_waste() {
    let bash = ok(&["completions", "bash"]);
    assert!(
        bash.contains("allocinfo__subcmd__waste__subcmd__on"),
        "waste on"
    );
    assert!(bash.contains("--meminfo"));
    let man = ok(&["man"]);
    assert!(man.contains("waste"), "{man}");
    let help = ok(&["waste", "--help"]);
    assert!(
        help.contains("slack") && help.contains("allocinfo waste on"),
        "{help}"
    );
}

/// A site's figures are u64: 2^64 - 1 bytes is 16 EiB (numfmt --to=iec:
/// 16E), not clamped to 8 EiB; sums past 64 bits are refused, as `top`
/// refuses them; a huge `Slab:` is shown as it is.
#[test]
fn waste_sizes_are_u64_and_sums_past_64_bits_are_refused() {
    let dir = scratch("u64");
    let header = "allocwaste - version: 1.0\n# state: on since_ns: 5000000000 now_ns: 65000000000\n\
        #      <bytes>  <requested>      <slack>     <allocs>      <frees>  <untracked> <tag info>\n";
    let max = u64::MAX;
    let one = format!("{header}{max} 0 {max} 1 0 0 mm/a.c:1 func:a\n");
    std::fs::write(dir.join("one.txt"), &one).unwrap();
    let text = ok_in(&dir, &["waste", "one.txt"]);
    assert!(text.contains("16 EiB"), "{text}");
    assert!(!text.contains("8.0 EiB"), "{text}");
    let two = format!("{one}{max} 0 {max} 1 0 0 mm/b.c:2 func:b\n");
    std::fs::write(dir.join("two.txt"), &two).unwrap();
    let err = String::from_utf8(failure_in(&dir, &["waste", "two.txt"]).stderr).unwrap();
    assert!(err.contains("past 64 bits"), "{err}");
    // A Slab: of 2^54 kB is 16 EiB too.
    std::fs::write(dir.join("meminfo"), "Slab:       18014398509481983 kB\n").unwrap();
    let text = ok_in(&dir, &["waste", "one.txt", "--meminfo", "meminfo"]);
    assert!(!text.contains("8.0 EiB"), "{text}");
    assert!(text.contains("16 EiB"), "{text}");
}

/// `Slab:` without its unit is not a meminfo line: refused, not read as bytes.
#[test]
fn meminfo_slab_without_a_unit_is_refused() {
    let dir = scratch("slab-unit");
    std::fs::write(dir.join("meminfo"), "Slab:  5\n").unwrap();
    let waste = waste_dir().join("allocwaste.txt");
    let out = failure_in(
        &dir,
        &["waste", waste.to_str().unwrap(), "--meminfo", "meminfo"],
    );
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("Slab:"), "{err}");
}

/// `waste` speaks top's vocabulary: -r, -s bytes|name, the -m/-p/--function
/// filters, --csv and --prometheus, and JSON with a schema, `accurate` and
/// the extra pairs.
#[test]
fn waste_has_the_options_and_outputs_of_top() {
    let names = |args: &[&str]| order(&json(&[&["waste", "allocwaste.txt"], args].concat()));
    let by_bytes = names(&["-s", "bytes"]);
    assert!(by_bytes[0].starts_with("mm/slub.c:2478"), "{by_bytes:?}");
    let mut reversed = names(&["-s", "bytes", "-r"]);
    reversed.reverse();
    assert_eq!(reversed, by_bytes);
    let by_name = names(&["-s", "name"]);
    let mut sorted = by_name.clone();
    sorted.sort();
    assert_eq!(by_name, sorted);
    assert_eq!(names(&["-p", "slub.c"]).len(), 1);
    assert_eq!(names(&["--function", "kstrdup"]).len(), 1);
    assert_eq!(names(&["-m", "alloctag_test"]).len(), 1);
    let v = json(&["waste", "allocwaste.txt"]);
    assert_eq!(v["schema"], "allocinfo-waste/1");
    let kstrdup = v["sites"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["function"] == "kstrdup")
        .unwrap();
    assert_eq!(kstrdup["accurate"], false);
    assert!(kstrdup["extra"].is_object(), "{kstrdup}");
    let csv = ok(&["waste", "allocwaste.txt", "--csv"]);
    let mut reader = csv::Reader::from_reader(csv.as_bytes());
    let header = reader.headers().unwrap().clone();
    assert!(header.iter().any(|h| h == "slack") && header.iter().any(|h| h == "accurate"));
    assert_eq!(reader.records().count(), 7, "{csv}");
    let prom = ok(&["waste", "allocwaste.txt", "--prometheus"]);
    assert!(
        prom.contains("# TYPE allocinfo_waste_slack_bytes gauge"),
        "{prom}"
    );
    assert!(
        prom.contains("allocinfo_waste_slack_bytes{file=\"mm/slub.c\",line=\"2478\",module=\"vmlinux\",function=\"alloc_slab_page\"} 7340032"),
        "{prom}"
    );
    assert!(
        prom.contains("# TYPE allocinfo_waste_allocs_total counter"),
        "{prom}"
    );
}
