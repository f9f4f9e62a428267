//! `allocinfo status` end to end, on fixture copies of the kernel's
//! `/sys/kernel/debug/alloctag/status` (tests/data/status/): page tags in
//! page flags, the fallback to page_ext and what would free bits, page
//! flags not asked for, an index that was full, a later kernel's keys,
//! a negative `unused` (last_cpupid counted where it does not fit), the
//! memory of modules' tags and the unloaded modules kept (lines an older
//! kernel does not have), malformed files and a missing one.

use serde_json::Value;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

mod common;
use common::BIN;

/// The kernel's file.
const STATUS: &str = "/sys/kernel/debug/alloctag/status";

fn status_dir() -> PathBuf {
    common::crate_data().join("status")
}

/// A fresh directory for one test.
fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("status-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

use common::{ok_in, run_in};

fn ok(args: &[&str]) -> String {
    ok_in(&status_dir(), args)
}

/// Standard error of a run in `dir` that fails with `code` and prints nothing.
fn fails_in(dir: &Path, args: &[&str], code: i32) -> String {
    let out = run_in(dir, args);
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(code), "{args:?}: {err}");
    assert!(out.stdout.is_empty(), "{args:?}");
    err
}

fn json(file: &str) -> Value {
    let text = ok(&["status", file, "--json"]);
    assert_eq!(text.lines().count(), 1, "one line: {text}");
    serde_json::from_str(&text).unwrap()
}

/// The fixture `name` with `f` applied to its lines, written into `dir` as `out`.
fn edited(dir: &Path, name: &str, out: &str, f: impl Fn(&str) -> Option<String>) -> String {
    let text = std::fs::read_to_string(status_dir().join(name)).unwrap();
    let edited: String = text.lines().filter_map(&f).map(|l| l + "\n").collect();
    std::fs::write(dir.join(out), edited).unwrap();
    out.to_owned()
}

/// The fixture with `key`'s value replaced by `value`.
fn with_value(dir: &Path, name: &str, key: &str, value: &str) -> String {
    let prefix = format!("{key}:");
    edited(dir, name, "edited.txt", |l| {
        Some(if l.starts_with(&prefix) {
            format!("{key}: {value}")
        } else {
            l.to_owned()
        })
    })
}

const PAGE_FLAGS_TEXT: &str = "\
page tags: in page flags (14 free bits, index of 14 bits: 1210 of 16384 indices used, 980 by vmlinux)
page->flags (64 bits): flags 24, sections 0, nodes 6, zones 2, last_cpupid 13, kasan_tag 0, lru_gen 3, lru_refs 2, unused 14
";

#[test]
fn page_tags_in_page_flags() {
    assert_eq!(ok(&["status", "page-flags.txt"]), PAGE_FLAGS_TEXT);
    assert_eq!(ok(&["status", "-f", "page-flags.txt"]), PAGE_FLAGS_TEXT);
    assert_eq!(ok(&["status", "--file", "page-flags.txt"]), PAGE_FLAGS_TEXT);
    let v = json("page-flags.txt");
    assert_eq!(v["schema"], "allocinfo-status/1");
    assert_eq!(v["page_tags"], "page_flags");
    assert_eq!(v["compressed_requested"], true);
    assert_eq!(v["free_bits"], 14);
    assert_eq!(v["index_bits"], 14);
    assert_eq!(v["needed_bits"], 11);
    assert_eq!(v["vmlinux_tags"], 980);
    assert_eq!(v["indices_used"], 1210);
    assert_eq!(v["indices_capacity"], 16384);
    assert_eq!(v["tags_without_index"], 0);
    assert_eq!(v["page_flags"]["long"], 64);
    assert_eq!(v["page_flags"]["last_cpupid"], 13);
    assert_eq!(v["fits"], true);
    assert_eq!(v["bits_short"], 0);
    assert_eq!(v["fixes"], serde_json::json!([]));
    let pretty = ok(&["status", "page-flags.txt", "--json", "--pretty"]);
    assert!(pretty.lines().count() > 10, "{pretty}");
    assert_eq!(serde_json::from_str::<Value>(&pretty).unwrap(), v);
}

#[test]
fn debian_falls_back_to_page_ext_and_numa_balancing_would_free_the_bits() {
    assert_eq!(
        ok(&["status", "debian.txt"]),
        "\
page tags: in page_ext, although sysctl.vm.mem_profiling=1,compressed asked for page flags
why: vmlinux's 3700 allocation tags need an index of 12 bits, and this configuration leaves 2 bits of page->flags free: 10 more bits needed
Kconfig changes that free enough bits alone:
  NUMA_BALANCING=n (last_cpupid: 21 bits)
  NUMA=n (nodes, last_cpupid: 31 bits; NUMA_BALANCING goes with it)
page->flags (64 bits): flags 24, sections 0, nodes 10, zones 2, last_cpupid 21, kasan_tag 0, lru_gen 3, lru_refs 2, unused 2
"
    );
    let v = json("debian.txt");
    assert_eq!(v["page_tags"], "page_ext");
    assert_eq!(v["fits"], false);
    assert_eq!(v["bits_short"], 10);
    // NUMA_BALANCING=n or NUMA=n alone; NODES_SHIFT=1 (9 bits), NR_CPUS=64
    // (7) and LRU_GEN=n (5) do not.
    assert_eq!(
        v["fixes"],
        serde_json::json!([
            {"bits": 21, "changes": [
                {"kconfig": ["NUMA_BALANCING=n"], "fields": ["last_cpupid"], "bits": 21}
            ]},
            {"bits": 31, "changes": [
                {"kconfig": ["NUMA=n"], "fields": ["nodes", "last_cpupid"], "bits": 31}
            ]}
        ])
    );
}

/// last_cpupid (MAXSMP's 21 bits) does not fit in page flags, yet
/// `NR_UNUSED_PAGEFLAG_BITS` counts it: `unused -1`, `free_bits` 0, and 13
/// bits short of the 12 needed.
const NEGATIVE_UNUSED_TEXT: &str = "\
page tags: in page_ext, although sysctl.vm.mem_profiling=1,compressed asked for page flags
why: vmlinux's 3700 allocation tags need an index of 12 bits, and this configuration leaves -1 bits of page->flags free (last_cpupid's 21 bits do not fit there, yet NR_UNUSED_PAGEFLAG_BITS counts them): 13 more bits needed
Kconfig changes that free enough bits alone:
  NUMA_BALANCING=n (last_cpupid: 21 bits)
  NUMA=n (nodes, last_cpupid: 31 bits; NUMA_BALANCING goes with it)
page->flags (64 bits): flags 32, sections 0, nodes 10, zones 2, last_cpupid 21, kasan_tag 0, lru_gen 0, lru_refs 0, unused -1
";

#[test]
fn a_negative_unused_is_read_and_counted_against_the_index() {
    // ok() also makes sure nothing is warned about: the fields add up to
    // long, and free_bits is unused at least 0.
    assert_eq!(ok(&["status", "negative-unused.txt"]), NEGATIVE_UNUSED_TEXT);
    let v = json("negative-unused.txt");
    assert_eq!(v["free_bits"], 0);
    assert_eq!(v["page_flags"]["unused"], -1);
    assert_eq!(v["page_flags"]["last_cpupid"], 21);
    assert_eq!(v["fits"], false);
    assert_eq!(v["bits_short"], 13);
    let fixes = v["fixes"].as_array().unwrap();
    assert_eq!(fixes.len(), 2);
    assert!(
        fixes.iter().all(|f| f["bits"].as_u64().unwrap() >= 13),
        "{v}"
    );
    // 13 bits needed: 14 short, not 13 - free_bits.
    let dir = scratch("negative-unused");
    let file = with_value(&dir, "negative-unused.txt", "needed_bits", "13");
    let out = ok_in(&dir, &["status", &file]);
    assert!(out.contains(": 14 more bits needed\n"), "{out}");
    // A free_bits that is not unused at least 0 is warned about.
    let file = with_value(&dir, "negative-unused.txt", "free_bits", "1");
    let out = run_in(&dir, &["status", &file]);
    assert!(out.status.success());
    assert_eq!(
        String::from_utf8(out.stderr).unwrap(),
        "allocinfo: warning: edited.txt: free_bits is 1 but page_flags' unused is -1, \
         which leaves 0\n"
    );
}

#[test]
fn without_numa_balancing_changes_are_combined() {
    // Debian's layout with NUMA_BALANCING=n's bits counted elsewhere:
    // NODES_SHIFT and LRU_GEN together, NODES_SHIFT only as far as needed.
    // A nodes field of 10 is MAXSMP's, which NODES_SHIFT=N needs off.
    let dir = scratch("combined");
    let layout = |flags: u32, unused: u32| {
        move |l: &str| {
            Some(match l.split_once(':') {
                Some(("free_bits", _)) => format!("free_bits: {unused}"),
                Some(("index_bits", _)) => format!("index_bits: {unused}"),
                Some(("page_flags", _)) => format!(
                    "page_flags: long 64 flags {flags} sections 0 nodes 10 zones 2 \
                     last_cpupid 0 kasan_tag 0 lru_gen 3 lru_refs 2 unused {unused}"
                ),
                _ => l.to_owned(),
            })
        }
    };
    // 10 bits short: NUMA=n alone.
    let file = edited(&dir, "debian.txt", "ten.txt", layout(45, 2));
    let out = ok_in(&dir, &["status", &file]);
    assert!(
        out.contains("Kconfig changes that free enough bits alone:\n  NUMA=n (nodes: 10 bits)\n"),
        "{out}"
    );
    // 11 bits short: LRU_GEN=n with a smaller NODES_SHIFT or with NUMA=n.
    let file = edited(&dir, "debian.txt", "eleven.txt", layout(46, 1));
    let out = ok_in(&dir, &["status", &file]);
    assert!(
        out.contains(
            "no Kconfig change frees 11 bits alone; together:\n  \
             LRU_GEN=n (lru_gen, lru_refs: 5 bits) + MAXSMP=n and NODES_SHIFT=4 (nodes: 6 of 10 bits)\n  \
             LRU_GEN=n (lru_gen, lru_refs: 5 bits) + NUMA=n (nodes: 10 bits)\n"
        ),
        "{out}"
    );
    // 16 bits short: not even LRU_GEN=n and NUMA=n, the most (a smaller
    // NODES_SHIFT frees nodes' bits too: it adds nothing to NUMA=n).
    let f = layout(47, 0);
    let file = edited(&dir, "debian.txt", "short.txt", |l| {
        match l.split_once(':') {
            Some(("needed_bits", _)) => Some("needed_bits: 16".to_owned()),
            _ => f(l),
        }
    });
    let out = ok_in(&dir, &["status", &file]);
    assert!(
        out.contains(
            "even these together, the changes that free the most, free only 15 of the 16: \
             LRU_GEN=n (lru_gen, lru_refs: 5 bits) + NUMA=n (nodes: 10 bits)\n"
        ),
        "{out}"
    );
    let v: Value = serde_json::from_str(&ok_in(&dir, &["status", &file, "--json"])).unwrap();
    assert_eq!(v["bits_short"], 16);
    assert_eq!(v["fixes"], serde_json::json!([]));
}

#[test]
fn not_requested_says_whether_compressed_would_fit() {
    assert_eq!(
        ok(&["status", "not-requested.txt"]),
        "\
page tags: in page_ext (the default)
with sysctl.vm.mem_profiling=1,compressed they would fit in page flags: vmlinux's 980 allocation tags need an index of 11 bits, and this configuration leaves 14 bits of page->flags free
page->flags (64 bits): flags 24, sections 0, nodes 6, zones 2, last_cpupid 13, kasan_tag 0, lru_gen 3, lru_refs 2, unused 14
"
    );
    assert_eq!(json("not-requested.txt")["fits"], true);
    // Debian's layout, not asked for: it would not fit, and what would free bits.
    let dir = scratch("not-requested");
    let file = with_value(&dir, "debian.txt", "compressed_requested", "no");
    let out = ok_in(&dir, &["status", &file]);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], "page tags: in page_ext (the default)");
    assert_eq!(
        lines[1],
        "with sysctl.vm.mem_profiling=1,compressed they would not fit in page flags: \
         vmlinux's 3700 allocation tags need an index of 12 bits, and this configuration \
         leaves 2 bits of page->flags free: 10 more bits needed"
    );
    assert_eq!(lines[3], "  NUMA_BALANCING=n (last_cpupid: 21 bits)");
}

#[test]
fn tags_without_index_are_said() {
    let out = ok(&["status", "index-full.txt"]);
    assert_eq!(
        out.lines().nth(1).unwrap(),
        "index full: 37 module or dynamic tags got no index; their pages are not counted \
         (accurate:no in /proc/allocinfo format 2.0)"
    );
    assert_eq!(json("index-full.txt")["tags_without_index"], 37);
    let dir = scratch("one-without");
    let file = with_value(&dir, "index-full.txt", "tags_without_index", "1");
    let out = ok_in(&dir, &["status", &file]);
    assert!(
        out.contains("index full: 1 module or dynamic tag got no index; its pages"),
        "{out}"
    );
    // None: no such line.
    assert!(!ok(&["status", "page-flags.txt"]).contains("index full"));
}

#[test]
fn a_later_kernels_keys_and_fields_are_taken_in_stride() {
    // later-kernel.txt: page-flags.txt with two more keys and one more field.
    let out = ok(&["status", "later-kernel.txt"]);
    assert_eq!(
        out,
        PAGE_FLAGS_TEXT.replace("unused 14\n", "unused 14, new_field 0\n")
    );
    let v = json("later-kernel.txt");
    assert_eq!(v["page_flags"]["new_field"], 0);
    assert!(v.get("index_leaves").is_none(), "{v}");
    // The order of the lines does not matter either.
    let dir = scratch("order");
    let mut lines: Vec<String> = std::fs::read_to_string(status_dir().join("page-flags.txt"))
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect();
    lines.reverse();
    std::fs::write(dir.join("reversed.txt"), lines.join("\n") + "\n").unwrap();
    assert_eq!(ok_in(&dir, &["status", "reversed.txt"]), PAGE_FLAGS_TEXT);
}

/// modules.txt: page-flags.txt with a kernel's last two lines, the memory
/// that holds modules' tags and the unloaded modules whose tags are kept.
const MODULES_TEXT: &str = "\
module tags: 12880 bytes in 1 chunk (64 KiB mapped)
unloaded modules: 1 kept with live allocations (120 bytes of names); list them with allocinfo --unloaded
";

#[test]
fn module_tags_and_unloaded_modules_are_said() {
    assert_eq!(
        ok(&["status", "modules.txt"]),
        format!("{PAGE_FLAGS_TEXT}{MODULES_TEXT}")
    );
    let v = json("modules.txt");
    assert_eq!(
        v["module_tags"],
        serde_json::json!({"chunks": 1, "mapped": 65536, "used": 12880})
    );
    assert_eq!(
        v["unloaded_modules"],
        serde_json::json!({"count": 1, "names": 120})
    );
    // The rest is page-flags.txt's.
    let mut rest = v.clone();
    let rest = rest.as_object_mut().unwrap();
    rest.remove("module_tags");
    rest.remove("unloaded_modules");
    let mut old = json("page-flags.txt");
    let old = old.as_object_mut().unwrap();
    old.remove("module_tags");
    old.remove("unloaded_modules");
    assert_eq!(rest, old);
    // More chunks and modules, and none kept.
    let dir = scratch("modules");
    let file = edited(&dir, "modules.txt", "more.txt", |l| {
        Some(match l.split_once(':') {
            Some(("module_tags", _)) => "module_tags: chunks 3 mapped 196608 used 1".to_owned(),
            Some(("unloaded_modules", _)) => "unloaded_modules: 2 names 1".to_owned(),
            _ => l.to_owned(),
        })
    });
    let out = ok_in(&dir, &["status", &file]);
    assert!(
        out.ends_with(
            "module tags: 1 byte in 3 chunks (192 KiB mapped)
\
             unloaded modules: 2 kept with live allocations (1 byte of names); \
             list them with allocinfo --unloaded\n"
        ),
        "{out}"
    );
    let file = with_value(&dir, "modules.txt", "unloaded_modules", "0 names 0");
    let out = ok_in(&dir, &["status", &file]);
    assert!(out.ends_with("\nunloaded modules: none kept\n"), "{out}");
    let v: Value = serde_json::from_str(&ok_in(&dir, &["status", &file, "--json"])).unwrap();
    assert_eq!(
        v["unloaded_modules"],
        serde_json::json!({"count": 0, "names": 0})
    );
    // No module tags at all: no chunk.
    let file = with_value(
        &dir,
        "modules.txt",
        "module_tags",
        "chunks 0 mapped 0 used 0",
    );
    let out = ok_in(&dir, &["status", &file]);
    assert!(
        out.contains("\nmodule tags: none (no chunks mapped)\n"),
        "{out}"
    );
    // Either line alone.
    let file = edited(&dir, "modules.txt", "one.txt", |l| {
        (!l.starts_with("unloaded_modules:")).then(|| l.to_owned())
    });
    let out = ok_in(&dir, &["status", &file]);
    assert!(
        out.ends_with("unused 14\nmodule tags: 12880 bytes in 1 chunk (64 KiB mapped)\n"),
        "{out}"
    );
    let v: Value = serde_json::from_str(&ok_in(&dir, &["status", &file, "--json"])).unwrap();
    assert_eq!(v["module_tags"]["used"], 12880);
    assert_eq!(v.get("unloaded_modules"), Some(&Value::Null));
}

#[test]
fn an_older_kernel_without_module_lines_is_not_reported() {
    // page-flags.txt has neither line: the output is what it was, and the
    // JSON says null.
    let out = ok(&["status", "page-flags.txt"]);
    assert_eq!(out, PAGE_FLAGS_TEXT);
    assert!(!out.contains("module"), "{out}");
    let v = json("page-flags.txt");
    assert_eq!(v.get("module_tags"), Some(&Value::Null), "{v}");
    assert_eq!(v.get("unloaded_modules"), Some(&Value::Null), "{v}");
    let pretty = ok(&["status", "page-flags.txt", "--json", "--pretty"]);
    assert!(pretty.contains("\"module_tags\": null"), "{pretty}");
}

#[test]
fn malformed_module_lines_are_refused_naming_the_key() {
    let dir = scratch("module-garbage");
    let cases = [
        (
            "module_tags",
            "chunks 1 mapped 65536",
            "line 11: invalid module_tags \"chunks 1 mapped 65536\": \
             expected chunks N mapped BYTES used BYTES",
        ),
        (
            "module_tags",
            "chunks 1 mapped 65536 used 12880 more 1",
            "line 11: invalid module_tags \"chunks 1 mapped 65536 used 12880 more 1\": \
             expected chunks N mapped BYTES used BYTES",
        ),
        (
            "module_tags",
            "chunks one mapped 65536 used 12880",
            "line 11: invalid module_tags \"chunks one mapped 65536 used 12880\": \
             expected chunks N mapped BYTES used BYTES",
        ),
        (
            "module_tags",
            "mapped 65536 chunks 1 used 12880",
            "line 11: invalid module_tags \"mapped 65536 chunks 1 used 12880\": \
             expected chunks N mapped BYTES used BYTES",
        ),
        (
            "module_tags",
            "chunks 1 mapped -1 used 12880",
            "line 11: invalid module_tags \"chunks 1 mapped -1 used 12880\": \
             expected chunks N mapped BYTES used BYTES",
        ),
        (
            "module_tags",
            "",
            "line 11: invalid module_tags \"\": expected chunks N mapped BYTES used BYTES",
        ),
        (
            "unloaded_modules",
            "1 names",
            "line 12: invalid unloaded_modules \"1 names\": expected N names BYTES",
        ),
        (
            "unloaded_modules",
            "1 bytes 120",
            "line 12: invalid unloaded_modules \"1 bytes 120\": expected N names BYTES",
        ),
        (
            "unloaded_modules",
            "1",
            "line 12: invalid unloaded_modules \"1\": expected N names BYTES",
        ),
    ];
    for (key, value, expected) in cases {
        let file = with_value(&dir, "modules.txt", key, value);
        let err = fails_in(&dir, &["status", &file], 1);
        assert_eq!(
            err,
            format!("allocinfo: error: edited.txt: {expected}\n"),
            "{key}: {value}"
        );
    }
    // Given twice.
    let text = std::fs::read_to_string(status_dir().join("modules.txt")).unwrap();
    std::fs::write(
        dir.join("twice.txt"),
        format!("{text}module_tags: chunks 1 mapped 65536 used 12880\n"),
    )
    .unwrap();
    let err = fails_in(&dir, &["status", "twice.txt"], 1);
    assert!(
        err.contains("line 13: module_tags given twice (first on line 11)"),
        "{err}"
    );
}

#[test]
fn a_missing_key_is_named() {
    let dir = scratch("missing-key");
    for key in [
        "page_tags",
        "compressed_requested",
        "free_bits",
        "index_bits",
        "needed_bits",
        "vmlinux_tags",
        "indices_used",
        "indices_capacity",
        "tags_without_index",
        "page_flags",
    ] {
        let prefix = format!("{key}:");
        let file = edited(&dir, "page-flags.txt", "missing.txt", |l| {
            (!l.starts_with(&prefix)).then(|| l.to_owned())
        });
        let err = fails_in(&dir, &["status", &file], 1);
        assert_eq!(
            err,
            format!("allocinfo: error: missing.txt: missing key '{key}' (no '{key}:' line)\n")
        );
    }
    // A field of page_flags.
    let file = with_value(
        &dir,
        "page-flags.txt",
        "page_flags",
        "long 64 flags 24 sections 0 zones 2 last_cpupid 13 kasan_tag 0 lru_gen 3 lru_refs 2 unused 20",
    );
    let err = fails_in(&dir, &["status", &file], 1);
    assert!(
        err.starts_with(
            "allocinfo: error: edited.txt: line 10: invalid page_flags: no nodes field"
        ),
        "{err}"
    );
    // An empty file misses the first.
    std::fs::write(dir.join("empty.txt"), "").unwrap();
    let err = fails_in(&dir, &["status", "empty.txt"], 1);
    assert!(err.contains("missing key 'page_tags'"), "{err}");
}

#[test]
fn garbage_values_are_refused_naming_the_line() {
    let dir = scratch("garbage");
    let cases = [
        (
            "page_tags",
            "pagefags",
            "line 1: invalid page_tags \"pagefags\": expected page_flags or page_ext",
        ),
        (
            "compressed_requested",
            "1",
            "line 2: invalid compressed_requested \"1\": expected yes or no",
        ),
        (
            "free_bits",
            "-3",
            "line 3: invalid free_bits \"-3\": expected a number of bits from 0 to 64",
        ),
        (
            "index_bits",
            "65",
            "line 4: invalid index_bits \"65\": expected a number of bits from 0 to 64",
        ),
        (
            "needed_bits",
            "",
            "line 5: invalid needed_bits \"\": expected a number of bits from 0 to 64",
        ),
        (
            "vmlinux_tags",
            "980x",
            "line 6: invalid vmlinux_tags \"980x\": expected an unsigned 64-bit integer",
        ),
        (
            "indices_used",
            "18446744073709551616",
            "line 7: invalid indices_used \"18446744073709551616\": expected an unsigned 64-bit integer",
        ),
        (
            "indices_capacity",
            "0x4000",
            "line 8: invalid indices_capacity \"0x4000\": expected an unsigned 64-bit integer",
        ),
        (
            "tags_without_index",
            "many",
            "line 9: invalid tags_without_index \"many\": expected an unsigned 64-bit integer",
        ),
        (
            "page_flags",
            "long 64 flags",
            "line 10: invalid page_flags: \"flags\" has no width",
        ),
        (
            "page_flags",
            "long 64 flags x24",
            "line 10: invalid page_flags: flags \"x24\": expected a number of bits from 0 to 64",
        ),
        (
            "page_flags",
            "long 64 long 64",
            "line 10: invalid page_flags: long given twice",
        ),
        // Only unused may be negative, and not beyond a long.
        (
            "page_flags",
            "long 64 flags -1",
            "line 10: invalid page_flags: flags \"-1\": expected a number of bits from 0 to 64",
        ),
        (
            "page_flags",
            "long 64 unused -65",
            "line 10: invalid page_flags: unused \"-65\": expected a number of bits from -64 to 64",
        ),
    ];
    for (key, value, expected) in cases {
        let file = with_value(&dir, "page-flags.txt", key, value);
        let err = fails_in(&dir, &["status", &file], 1);
        assert_eq!(
            err,
            format!("allocinfo: error: edited.txt: {expected}\n"),
            "{key}: {value}"
        );
    }
    // A line that is no `key: value`, a key given twice, and no text at all.
    let text = std::fs::read_to_string(status_dir().join("page-flags.txt")).unwrap();
    std::fs::write(dir.join("noise.txt"), format!("{text}garbage\n")).unwrap();
    let err = fails_in(&dir, &["status", "noise.txt"], 1);
    assert_eq!(
        err,
        "allocinfo: error: noise.txt: line 11: expected 'key: value', not \"garbage\"\n"
    );
    std::fs::write(dir.join("twice.txt"), format!("{text}free_bits: 14\n")).unwrap();
    let err = fails_in(&dir, &["status", "twice.txt"], 1);
    assert!(
        err.contains("line 11: free_bits given twice (first on line 3)"),
        "{err}"
    );
    let err = fails_in(&dir, &["status", "-f", "/dev/zero"], 1);
    assert!(err.contains("not text (a NUL byte at offset 0)"), "{err}");
    // A profile is not a status file.
    let profile = common::format_data().join("linux-6.12.txt");
    let err = fails_in(&dir, &["status", profile.to_str().unwrap()], 1);
    assert!(err.contains("line 2: expected 'key: value'"), "{err}");
}

/// The figures are checked against each other: what does not add up is
/// said on standard error, and the output is printed all the same.
#[test]
fn figures_that_do_not_add_up_are_warned_about() {
    let dir = scratch("sums");
    // The fields add up to 51 of 64 bits.
    let file = with_value(
        &dir,
        "page-flags.txt",
        "page_flags",
        "long 64 flags 24 sections 0 nodes 6 zones 2 last_cpupid 0 kasan_tag 0 lru_gen 3 lru_refs 2 unused 14",
    );
    let out = run_in(&dir, &["status", &file]);
    assert!(out.status.success());
    assert_eq!(
        String::from_utf8(out.stderr).unwrap(),
        "allocinfo: warning: edited.txt: page_flags' fields add up to 51 bits, not long's 64\n"
    );
    assert!(
        String::from_utf8(out.stdout)
            .unwrap()
            .starts_with("page tags: in page flags")
    );
    let file = with_value(&dir, "page-flags.txt", "free_bits", "13");
    let out = run_in(&dir, &["status", &file]);
    assert_eq!(
        String::from_utf8(out.stderr).unwrap(),
        "allocinfo: warning: edited.txt: free_bits is 13 but page_flags' unused is 14\n"
    );
}

#[test]
fn a_missing_file_is_explained() {
    let dir = scratch("missing");
    // A file named by hand: its error alone.
    let err = fails_in(&dir, &["status", "-f", "nonexistent.txt"], 1);
    assert_eq!(
        err,
        "allocinfo: error: reading nonexistent.txt: No such file or directory (os error 2)\n"
    );
    // The kernel's, on a machine without it (debugfs not mounted or
    // booted off, not root, or no alloctag): the path and why; never
    // lockdown, which neither keeps debugfs from making the file nor this
    // read-only file from opening.
    if std::fs::read(STATUS).is_ok() {
        ok_in(&dir, &["status"]);
        return;
    }
    let err = fails_in(&dir, &["status"], 1);
    assert!(
        err.starts_with(&format!("allocinfo: error: reading {STATUS}: ")),
        "{err}"
    );
    assert!(
        [
            "mount -t debugfs",
            "debugfs=",
            "CONFIG_MEM_ALLOC_PROFILING_RUST",
            "root",
        ]
        .iter()
        .any(|r| err.contains(r)),
        "{err}"
    );
    assert!(!err.contains("lockdown"), "{err}");
    // An empty /sys/kernel/debug (sysfs's directory) is debugfs not mounted.
    let empty = std::fs::read_dir("/sys/kernel/debug").is_ok_and(|mut d| d.next().is_none());
    if empty {
        assert!(err.contains("debugfs is not mounted"), "{err}");
    }
}

#[test]
fn reads_standard_input() {
    let text = std::fs::read(status_dir().join("debian.txt")).unwrap();
    let mut child = Command::new(BIN)
        .args(["status", "-", "--json"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(&text).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{out:?}");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["bits_short"], 10);
}

#[test]
fn usage_help_manual_and_completions_know_status() {
    let dir = status_dir();
    let err = fails_in(&dir, &["status", "page-flags.txt", "--pretty"], 2);
    assert!(err.contains("--json"), "{err}");
    let err = fails_in(&dir, &["status", "page-flags.txt", "-f", "debian.txt"], 2);
    assert!(err.contains("cannot be used with"), "{err}");
    let help = ok(&["--help"]);
    assert!(help.contains("allocinfo status"), "{help}");
    let help = ok(&["status", "--help"]);
    assert!(
        help.contains("/sys/kernel/debug/alloctag/status")
            && help.contains("allocinfo status --json"),
        "{help}"
    );
    let man = ok(&["man", "status"]);
    assert!(man.contains(".TH allocinfo-status 1"), "{man}");
    assert!(man.contains(".SH EXAMPLES"), "{man}");
    let bash = ok(&["completions", "bash"]);
    assert!(bash.contains("allocinfo__subcmd__status"), "status");
}

/// Every key of the JSON document is in Documentation/allocinfo-tool.rst.
#[test]
fn json_keys_are_documented() {
    let doc = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../Documentation/allocinfo-tool.rst"),
    )
    .unwrap();
    assert!(doc.contains("allocinfo-status/1"));
    let v = json("debian.txt");
    for key in v.as_object().unwrap().keys() {
        assert!(
            doc.contains(&format!("\"{key}\"")),
            "{key} is not documented"
        );
    }
    for key in v["fixes"][0]["changes"][0].as_object().unwrap().keys() {
        assert!(
            doc.contains(&format!("\"{key}\"")),
            "{key} is not documented"
        );
    }
    let v = json("modules.txt");
    for object in ["module_tags", "unloaded_modules"] {
        assert!(doc.contains(&format!("\"{object}\"")), "{object}");
        for key in v[object].as_object().unwrap().keys() {
            assert!(
                doc.contains(&format!("\"{key}\"")),
                "{object}'s {key} is not documented"
            );
        }
    }
}
