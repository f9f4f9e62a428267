//! Issue 72: `allocinfo pprof`'s profiles read by the reader nobody here
//! wrote, Go's `go tool pprof` (Debian's golang-go, which
//! scripts/install-deps.sh installs): every profile it writes parses, with
//! the text's totals, call sites and stacks.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

mod common;

/// Runs `go tool pprof ARGS`, which must succeed; its standard output.
fn go_pprof(args: &[&str]) -> String {
    let out = Command::new("go")
        .args(["tool", "pprof"])
        .args(args)
        .output()
        .expect("go tool pprof: not installed (scripts/install-deps.sh installs golang-go)");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "go tool pprof {args:?}: {err}");
    String::from_utf8(out.stdout).unwrap()
}

/// A sample as `-raw` prints it: its values, its stack (location ids, the
/// leaf first) and its labels' line(s).
#[derive(Debug, Default)]
struct Sample {
    objects: i64,
    bytes: i64,
    stack: Vec<u64>,
    labels: String,
}

/// `go tool pprof -raw`'s samples, and each location's `file:line` and
/// function.
fn raw(profile: &Path) -> (Vec<Sample>, BTreeMap<u64, (String, String)>) {
    let text = go_pprof(&["-raw", profile.to_str().unwrap()]);
    let mut samples: Vec<Sample> = Vec::new();
    let mut locations = BTreeMap::new();
    let mut section = "";
    for line in text.lines() {
        match line.trim() {
            "Samples:" | "Locations" | "Mappings" => {
                section = line.trim();
                continue;
            }
            _ => {}
        }
        if section == "Samples:" {
            if let Some((values, stack)) = line.split_once(": ") {
                let v: Vec<i64> = values
                    .split_whitespace()
                    .filter_map(|x| x.parse().ok())
                    .collect();
                if v.len() == 2 {
                    samples.push(Sample {
                        objects: v[0],
                        bytes: v[1],
                        stack: stack
                            .split_whitespace()
                            .map(|x| x.parse().unwrap())
                            .collect(),
                        labels: String::new(),
                    });
                    continue;
                }
            }
            if let Some(s) = samples.last_mut() {
                s.labels.push_str(line.trim());
                s.labels.push(' ');
            }
        } else if section == "Locations" {
            // "  7: 0x0 M=3 FUNCTION FILE:LINE s=0..."
            let words: Vec<&str> = line.split_whitespace().collect();
            let id = words[0].trim_end_matches(':').parse().unwrap();
            let s = words.iter().position(|w| w.starts_with("s=")).unwrap();
            locations.insert(id, (words[s - 1].to_owned(), words[3].to_owned()));
        }
    }
    (samples, locations)
}

fn write_profile(args: &[&str], name: &str) -> PathBuf {
    let out = std::env::temp_dir().join(format!("allocinfo-pprof-{}-{name}", std::process::id()));
    let mut all: Vec<&str> = args.to_vec();
    all.extend(["-o", out.to_str().unwrap()]);
    common::ok_in(&common::crate_data(), &all);
    out
}

/// The sums of `(calls, bytes)` over a profile's lines, and its sites'
/// `file:line`s that hold anything.
fn text_totals(path: &Path) -> ((i64, i64), Vec<String>) {
    let text = std::fs::read_to_string(path).unwrap();
    let mut sums = (0, 0);
    let mut sites = Vec::new();
    for line in text.lines().skip(2) {
        let w: Vec<&str> = line.split_whitespace().collect();
        let (bytes, calls): (i64, i64) = (w[0].parse().unwrap(), w[1].parse().unwrap());
        sums.0 += calls;
        sums.1 += bytes;
        if bytes != 0 || calls != 0 {
            sites.push(w[2].to_owned());
        }
    }
    sites.sort();
    (sums, sites)
}

#[test]
fn go_pprof_reads_the_call_sites_with_the_texts_totals() {
    let path = write_profile(&["pprof", "query.txt"], "sites.pb.gz");
    let (samples, locations) = raw(&path);
    let ((calls, bytes), sites) = text_totals(&common::crate_data().join("query.txt"));
    assert_eq!(samples.iter().map(|s| s.objects).sum::<i64>(), calls);
    assert_eq!(samples.iter().map(|s| s.bytes).sum::<i64>(), bytes);
    // One location per sample, each a call site of the text.
    let mut got: Vec<String> = samples
        .iter()
        .map(|s| {
            assert_eq!(s.stack.len(), 1, "{s:?}");
            locations[&s.stack[0]].0.clone()
        })
        .collect();
    got.sort();
    assert_eq!(got, sites);
    // Labels: the module, and the kernel's inaccuracy mark.
    assert!(samples.iter().any(|s| s.labels.contains("module:[xfs]")));
    assert!(samples.iter().any(|s| s.labels.contains("accurate:[no]")));
    let top = go_pprof(&["-top", "-sample_index=inuse_space", path.to_str().unwrap()]);
    assert!(
        top.contains("Type: inuse_space") && top.contains("alloc_slab_page"),
        "{top}"
    );
    let objects = go_pprof(&[
        "-top",
        "-sample_index=inuse_objects",
        path.to_str().unwrap(),
    ]);
    assert!(objects.contains("Type: inuse_objects"), "{objects}");
    std::fs::remove_file(path).unwrap();
}

#[test]
fn go_pprof_reads_a_delta_with_each_sites_change() {
    // new.txt since old.txt: the NIC's site grew by 16 allocations of
    // 64 KiB, ext4's is new; the others did not change and are no sample.
    let path = write_profile(
        &["pprof", "nodes/new.txt", "--since", "nodes/old.txt"],
        "delta.pb.gz",
    );
    let (samples, locations) = raw(&path);
    let mut got: Vec<(String, i64, i64)> = samples
        .iter()
        .map(|s| (locations[&s.stack[0]].1.clone(), s.objects, s.bytes))
        .collect();
    got.sort();
    assert_eq!(
        got,
        [
            ("ext4_alloc".into(), 1, 4096),
            ("nic_rx_alloc".into(), 16, 65536)
        ]
    );
    // And back: a site only in the base falls by all it held.
    let back = write_profile(
        &["pprof", "nodes/old.txt", "--since", "nodes/new.txt"],
        "back.pb.gz",
    );
    let (samples, _) = raw(&back);
    assert_eq!(
        samples
            .iter()
            .map(|s| (s.objects, s.bytes))
            .fold((0, 0), |a, s| (a.0 + s.0, a.1 + s.1)),
        (-17, -69632)
    );
    for p in [path, back] {
        std::fs::remove_file(p).unwrap();
    }
}

#[test]
fn go_pprof_reads_the_live_objects_with_their_stacks() {
    let live = common::format_data().join("debugfs/live.txt");
    let path = write_profile(&["pprof", "--live", live.to_str().unwrap()], "live.pb.gz");
    let (samples, locations) = raw(&path);
    // Three groups (cat's slab object at f, sh's page at f, cat's at g)
    // and the untracked remainder: the report's objects and bytes.
    assert_eq!(samples.len(), 4, "{samples:?}");
    assert_eq!(samples.iter().map(|s| s.objects).sum::<i64>(), 3 + 2);
    assert_eq!(
        samples.iter().map(|s| s.bytes).sum::<i64>(),
        256 + 4096 + 256 + 512
    );
    let stacks: Vec<Vec<String>> = samples
        .iter()
        .map(|s| s.stack.iter().map(|id| locations[id].1.clone()).collect())
        .collect();
    assert!(
        stacks.contains(&vec!["f".to_owned(), "do_one_initcall".to_owned()]),
        "{stacks:?}"
    );
    assert!(stacks.contains(&vec!["g".to_owned()]), "{stacks:?}");
    let sh = samples
        .iter()
        .find(|s| s.labels.contains("comm:[sh]"))
        .unwrap();
    assert!(
        sh.labels.contains("pid:[8]") && sh.labels.contains("kind:[pages]"),
        "{sh:?}"
    );
    assert_eq!(
        locations[&sh.stack[0]].0, "lib/m.c:42",
        "the leaf is the call site's line"
    );
    let traces = go_pprof(&["-traces", path.to_str().unwrap()]);
    assert!(
        traces.contains("do_one_initcall") && traces.contains("[untracked]"),
        "{traces}"
    );
    std::fs::remove_file(path).unwrap();
}

#[test]
fn pprof_refuses_a_profile_with_live() {
    let out = common::run_in(
        &common::crate_data(),
        &["pprof", "query.txt", "--live", "-o", "-"],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--live reads capture's report"));
}

/// contrib/pprof's unit runs `allocinfo pprof -o FILE` and pushes that file
/// to Pyroscope's ingest API in pprof's format.
#[test]
fn contrib_unit_writes_and_pushes_the_profile() {
    let contrib = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../contrib/pprof");
    let service = std::fs::read_to_string(contrib.join("allocinfo-pprof.service")).unwrap();
    let timer = std::fs::read_to_string(contrib.join("allocinfo-pprof.timer")).unwrap();
    let exec = service
        .lines()
        .find_map(|l| l.strip_prefix("ExecStart="))
        .expect("ExecStart");
    let words: Vec<&str> = exec.split_whitespace().collect();
    assert!(
        words[0].ends_with("/allocinfo") && words[1..3] == ["pprof", "-o"],
        "{exec}"
    );
    let file = words[3];
    assert!(file.ends_with(".pb.gz"), "{exec}");
    // The push, as systemd hands it to the shell (%% is %, $$ is $).
    let post: String = service
        .split("ExecStartPost=")
        .nth(1)
        .expect("ExecStartPost")
        .lines()
        .take_while(|l| !l.starts_with("Nice="))
        .collect::<Vec<_>>()
        .join("\n")
        .replace("%%", "%")
        .replace("$$", "$");
    assert!(post.contains(&format!("-F profile=@{file}")), "{post}");
    assert!(
        post.contains("/ingest?name=kernel.alloc%7Bhost%3D%H%7D&from=$now&until=$now&format=pprof"),
        "{post}"
    );
    assert!(timer.contains("OnUnitActiveSec=") && timer.contains("WantedBy=timers.target"));
    let out = common::run_in(&common::crate_data(), &[words[1], "--help"]);
    assert!(out.status.success());
}

/// `--split node` of a saved profile in format 2.0 with node pairs: each
/// site's bytes by node, labelled `node` (`memory: percpu` for per-CPU
/// memory's), and its calls in one sample without a node; both totals the
/// text's, and `-tagfocus=node=1` selects node 1's bytes.
#[test]
fn go_pprof_reads_the_node_shares_of_the_text() {
    let path = write_profile(
        &["pprof", "--split", "node", "nodes/new.txt"],
        "nodes.pb.gz",
    );
    let (samples, _) = raw(&path);
    assert_eq!(
        samples.iter().map(|s| s.objects).sum::<i64>(),
        18 + 3 + 4 + 1
    );
    assert_eq!(
        samples.iter().map(|s| s.bytes).sum::<i64>(),
        73728 + 12288 + 256 + 4096
    );
    let on = |label: &str| -> i64 {
        samples
            .iter()
            .filter(|s| s.labels.contains(label))
            .map(|s| s.bytes)
            .sum()
    };
    assert_eq!(on("node:[1 node]"), 69632 + 8192);
    assert_eq!(on("node:[0 node]"), 4096 + 4096 + 4096);
    assert_eq!(on("memory:[percpu]"), 256);
    let top = go_pprof(&["-top", "-tagfocus=node=1", path.to_str().unwrap()]);
    assert!(
        top.contains("nic_rx_alloc") && !top.contains("ext4_alloc"),
        "{top}"
    );
    std::fs::remove_file(path).unwrap();
    let out = common::run_in(
        &common::crate_data(),
        &["pprof", "--split", "cpu", "query.txt", "-o", "-"],
    );
    assert_eq!(out.status.code(), Some(2), "no figures per CPU in the text");
    let out = common::run_in(
        &common::crate_data(),
        &[
            "pprof",
            "--split",
            "node",
            "nodes/new.txt",
            "--since",
            "nodes/old.txt",
            "-o",
            "-",
        ],
    );
    assert_eq!(out.status.code(), Some(2));
}
