//! Issue 71: each call site's bytes by NUMA node from the text, as the
//! kernel prints them in format 2.0 with per-node counting on
//! (`nid0:BYTES nid1:BYTES percpu:BYTES`): `top --split node` of a saved
//! profile, with `--at`/`--min-at`, and `diff --split node` of two, in
//! every output, bytes only (the pairs have no calls). The ioctl's split is
//! tested against a fake kernel in `src/split/tests.rs`.
//!
//! `tests/data/nodes/`: a NIC driver's receive buffers growing on node 1,
//! a slab site moving 4 KiB from node 0 to node 1, a per-CPU site, and in
//! the later profile an ext4 site on node 0.

use std::process::Output;

mod common;

fn run(args: &[&str]) -> Output {
    common::run_in(&common::crate_data().join("nodes"), args)
}

fn ok(args: &[&str]) -> String {
    common::ok_in(&common::crate_data().join("nodes"), args)
}

fn json(args: &[&str]) -> serde_json::Value {
    serde_json::from_str(&ok(args)).unwrap()
}

/// The row of `function` in a JSON report.
fn row<'a>(doc: &'a serde_json::Value, function: &str) -> &'a serde_json::Value {
    doc["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["function"] == function)
        .unwrap_or_else(|| panic!("no row {function}: {doc}"))
}

#[test]
fn top_splits_a_saved_profile_by_node() {
    let doc = json(&["top", "--split", "node", "new.txt", "--json"]);
    let nic = row(&doc, "nic_rx_alloc");
    assert_eq!(nic["bytes"], 73728);
    // Node 0 and 1; per-CPU memory's share (2) is zero and left out; no calls.
    assert_eq!(
        nic["split"],
        serde_json::json!([{"node": 0, "bytes": 4096}, {"node": 1, "bytes": 69632}])
    );
    assert_eq!(
        row(&doc, "pcpu_alloc_noprof")["split"],
        serde_json::json!([{"node": 2, "bytes": 256}])
    );
    // Every row's shares add up to its bytes.
    for r in doc["rows"].as_array().unwrap() {
        let sum: i64 = r["split"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["bytes"].as_i64().unwrap())
            .sum();
        assert_eq!(sum, r["bytes"].as_i64().unwrap(), "{r}");
    }

    let table = ok(&["top", "--split", "node", "new.txt", "--exact"]);
    assert!(table.contains("  node1"), "{table}");
    let csv = ok(&["top", "--split", "node", "new.txt", "--csv"]);
    let header = csv.lines().next().unwrap();
    assert!(header.ends_with(",node,node_bytes,node_calls"), "{header}");
    let nic1 = csv
        .lines()
        .find(|l| l.contains("nic_rx_alloc") && l.ends_with(",1,69632,"))
        .unwrap_or_else(|| panic!("{csv}"));
    assert!(nic1.contains(",73728,18,"), "{nic1}");
    let prom = ok(&["top", "--split", "node", "new.txt", "--prometheus"]);
    assert!(prom.contains("node=\"1\"} 69632"), "{prom}");
    assert!(
        !prom.contains("allocinfo_split_calls"),
        "no calls series from the text: {prom}"
    );
}

#[test]
fn top_keeps_the_sites_holding_enough_on_a_node() {
    let doc = json(&[
        "top", "--split", "node", "--at", "1", "--min-at", "8K", "new.txt", "--json",
    ]);
    let mut functions: Vec<&str> = doc["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["function"].as_str().unwrap())
        .collect();
    functions.sort();
    assert_eq!(functions, ["alloc_slab_page", "nic_rx_alloc"], "{doc}");
    assert_eq!(
        doc["source"]["total"]["bytes"],
        73728 + 12288,
        "the total is of the sites kept"
    );
    let out = run(&["top", "--split", "node", "--at", "3", "new.txt"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("--at 3: no such node"),
        "{err}"
    );
}

#[test]
fn diff_says_each_nodes_change() {
    let doc = json(&["diff", "--split", "node", "old.txt", "new.txt", "--json"]);
    let nic = row(&doc, "nic_rx_alloc");
    assert_eq!(nic["delta_bytes"], 65536);
    assert_eq!(
        nic["split"],
        serde_json::json!([
            {"node": 0, "bytes": 4096, "delta_bytes": 4096},
            {"node": 1, "bytes": 69632, "delta_bytes": 61440}
        ])
    );
    // The total did not change, but 4 KiB went from node 0 to node 1:
    // diff shows the row with --all only, and its shares' changes.
    let all = json(&[
        "diff", "-a", "--split", "node", "old.txt", "new.txt", "--json",
    ]);
    let slab = row(&all, "alloc_slab_page");
    assert_eq!(slab["delta_bytes"], 0);
    assert_eq!(
        slab["split"],
        serde_json::json!([
            {"node": 0, "bytes": 4096, "delta_bytes": -4096},
            {"node": 1, "bytes": 8192, "delta_bytes": 4096}
        ])
    );
    assert_eq!(
        row(&doc, "ext4_alloc")["split"],
        serde_json::json!([{"node": 0, "bytes": 4096, "delta_bytes": 4096}])
    );
}

#[test]
fn profiles_without_node_pairs_are_refused() {
    for args in [
        &["top", "--split", "node", "../query.txt"][..],
        &["diff", "--split", "node", "old.txt", "../query.txt"][..],
    ] {
        let out = run(args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            !out.status.success()
                && err
                    .contains("query.txt: no figures per node: its lines have no nidN:BYTES pairs"),
            "{args:?}: {err}"
        );
        assert!(out.stdout.is_empty());
    }
}
