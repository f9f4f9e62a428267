use super::*;
use allocinfo_format::status::*;
use serde_json::Value;

const DEBIAN: &str = "\
page_tags: page_ext
compressed_requested: yes
free_bits: 2
index_bits: 2
needed_bits: 12
vmlinux_tags: 3700
indices_used: 0
indices_capacity: 0
tags_without_index: 0
page_flags: long 64 flags 24 sections 0 nodes 10 zones 2 last_cpupid 21 kasan_tag 0 lru_gen 3 lru_refs 2 unused 2
";

fn layout(text: &str) -> Layout {
    parse_layout((1, text)).unwrap()
}

fn settings(fix: &Fix) -> Vec<String> {
    fix.iter().map(|c| c.kconfig.join(" and ")).collect()
}

#[test]
fn debian_needs_numa_balancing_off() {
    let s = Status::parse(DEBIAN).unwrap();
    assert_eq!(s.fit(), Fit::Short(10));
    assert!(s.inconsistencies().is_empty());
    let Fixes::Alone(list) = fixes(&s.page_flags, 10) else {
        panic!("NUMA_BALANCING=n alone frees 21 bits")
    };
    // NODES_SHIFT=1 frees only 9, NR_CPUS=64 7, LRU_GEN=n 5; NUMA=n
    // frees nodes and last_cpupid.
    let names: Vec<String> = list.iter().map(|f| f[0].to_string()).collect();
    assert_eq!(
        names,
        [
            "NUMA_BALANCING=n (last_cpupid: 21 bits)",
            "NUMA=n (nodes, last_cpupid: 31 bits; NUMA_BALANCING goes with it)"
        ]
    );
    assert_eq!(list[0][0].bits, 21);
}

#[test]
fn without_numa_balancing_combinations_are_minimal() {
    let l = layout(
        "long 64 flags 24 sections 0 nodes 10 zones 2 last_cpupid 0 kasan_tag 0 lru_gen 3 lru_refs 2 unused 23",
    );
    // 11 short: NODES_SHIFT frees 9 at most (and needs MAXSMP=n, which
    // forces 10), NUMA=n 10, LRU_GEN 5: LRU_GEN with either, and
    // NODES_SHIFT only as much as LRU_GEN leaves; never NODES_SHIFT with NUMA=n.
    let Fixes::Together(list) = fixes(&l, 11) else {
        panic!()
    };
    let names: Vec<Vec<String>> = list.iter().map(settings).collect();
    assert_eq!(
        names,
        [
            vec!["LRU_GEN=n", "MAXSMP=n and NODES_SHIFT=4"],
            vec!["LRU_GEN=n", "NUMA=n"]
        ]
    );
    assert_eq!(list[0].iter().map(|c| c.bits).collect::<Vec<_>>(), [5, 6]);
    // No NR_CPUS note: without NUMA_BALANCING, NR_CPUS takes no bits.
    assert_eq!(
        list[0][1].to_string(),
        "MAXSMP=n and NODES_SHIFT=4 (nodes: 6 of 10 bits)"
    );
    assert_eq!(list[1][1].to_string(), "NUMA=n (nodes: 10 bits)");
    // 10 short: NUMA=n alone.
    let Fixes::Alone(list) = fixes(&l, 10) else {
        panic!()
    };
    let names: Vec<Vec<String>> = list.iter().map(settings).collect();
    assert_eq!(names, [vec!["NUMA=n"]]);
    // 4 short: LRU_GEN=n, NODES_SHIFT=6 or NUMA=n alone.
    let Fixes::Alone(list) = fixes(&l, 4) else {
        panic!()
    };
    let names: Vec<Vec<String>> = list.iter().map(settings).collect();
    assert_eq!(
        names,
        [
            vec!["LRU_GEN=n"],
            vec!["MAXSMP=n and NODES_SHIFT=6"],
            vec!["NUMA=n"]
        ]
    );
    // 16 short: not even LRU_GEN=n and NUMA=n, the most (NODES_SHIFT's
    // bits are NUMA=n's: they do not add up).
    let Fixes::NotEnough(all) = fixes(&l, 16) else {
        panic!()
    };
    let names: Vec<String> = all.iter().map(|c| c.kconfig.join(" and ")).collect();
    assert_eq!(names, ["LRU_GEN=n", "NUMA=n"]);
    assert_eq!(all.iter().map(|c| c.bits).sum::<u32>(), 15);
}

/// A MAXSMP kernel with NUMA_BALANCING, LRU_GEN=n and 32 page flags:
/// last_cpupid's 21 bits do not fit, and NR_UNUSED_PAGEFLAG_BITS is -1.
const MAXSMP: &str = "\
page_tags: page_ext
compressed_requested: yes
free_bits: 0
index_bits: 0
needed_bits: 12
vmlinux_tags: 3700
indices_used: 0
indices_capacity: 0
tags_without_index: 0
page_flags: long 64 flags 32 sections 0 nodes 10 zones 2 last_cpupid 21 kasan_tag 0 lru_gen 0 lru_refs 0 unused -1
";

#[test]
fn a_negative_unused_is_bits_owed() {
    let s = Status::parse(MAXSMP).unwrap();
    assert_eq!(s.page_flags.get("unused"), -1);
    // The fields add up to long, and free_bits is unused at least 0.
    assert!(s.inconsistencies().is_empty(), "{:?}", s.inconsistencies());
    // 12 needed of -1: 13, not 12 - free_bits.
    assert_eq!(s.fit(), Fit::Short(13));
    let out = text(&s);
    assert_eq!(
        out.lines().nth(1).unwrap(),
        "why: vmlinux's 3700 allocation tags need an index of 12 bits, and this \
             configuration leaves -1 bits of page->flags free (last_cpupid's 21 bits do not \
             fit there, yet NR_UNUSED_PAGEFLAG_BITS counts them): 13 more bits needed"
    );
    assert!(out.ends_with("lru_refs 0, unused -1\n"), "{out}");
    let v = json(&s);
    assert_eq!(v["page_flags"]["unused"], -1);
    assert_eq!(v["free_bits"], 0);
    assert_eq!(v["bits_short"], 13);
    // The advice closes the 13: NR_CPUS (7 at most) and NODES_SHIFT (9)
    // do not alone.
    let Fixes::Alone(list) = fixes(&s.page_flags, 13) else {
        panic!()
    };
    let names: Vec<Vec<String>> = list.iter().map(settings).collect();
    assert_eq!(names, [vec!["NUMA_BALANCING=n"], vec!["NUMA=n"]]);
    assert!(list.iter().all(|f| f[0].bits >= 13));
}

#[test]
fn a_shortfall_of_more_than_the_free_bits_needs_more_changes() {
    // 12 bits needed, unused -4: 16 short, not 12 (needed_bits -
    // free_bits), which only NUMA_BALANCING=n and NUMA=n free alone.
    let s = Status::parse(
        &MAXSMP
            .replace("flags 32", "flags 35")
            .replace("unused -1", "unused -4"),
    )
    .unwrap();
    assert!(s.inconsistencies().is_empty(), "{:?}", s.inconsistencies());
    assert_eq!(s.fit(), Fit::Short(16));
    let Fixes::Alone(list) = fixes(&s.page_flags, 16) else {
        panic!()
    };
    let names: Vec<Vec<String>> = list.iter().map(settings).collect();
    assert_eq!(names, [vec!["NUMA_BALANCING=n"], vec!["NUMA=n"]]);
    // 9 short: NODES_SHIFT=1 alone (MAXSMP=n, which also lets NR_CPUS shrink).
    let Fixes::Alone(list) = fixes(&s.page_flags, 9) else {
        panic!()
    };
    assert_eq!(
        list[1][0].to_string(),
        "MAXSMP=n and NODES_SHIFT=1 (nodes: 9 of 10 bits; MAXSMP=n also lets NR_CPUS shrink)"
    );
}

#[test]
fn a_smaller_nr_cpus_frees_last_cpupid_bits() {
    // MAXSMP's NR_CPUS=8192: last_cpupid 8 + 13.
    let l = layout(
        "long 64 flags 24 sections 0 nodes 0 zones 2 last_cpupid 21 kasan_tag 0 lru_gen 3 lru_refs 2 unused 12",
    );
    let Fixes::Alone(list) = fixes(&l, 4) else {
        panic!()
    };
    let names: Vec<String> = list.iter().map(|f| f[0].to_string()).collect();
    // No NUMA=n: without nodes in page flags it frees what NUMA_BALANCING=n does.
    assert_eq!(
        names,
        [
            "NUMA_BALANCING=n (last_cpupid: 21 bits)",
            "LRU_GEN=n (lru_gen, lru_refs: 5 bits)",
            "MAXSMP=n and NR_CPUS=512 (last_cpupid: 4 of 21 bits)"
        ]
    );
    // Down to 64 CPUs, and no further.
    let Fixes::Alone(list) = fixes(&l, 7) else {
        panic!()
    };
    assert_eq!(
        list[1][0].to_string(),
        "MAXSMP=n and NR_CPUS=64 (last_cpupid: 7 of 21 bits; 64 CPUs, the fewest suggested)"
    );
    let Fixes::Alone(list) = fixes(&l, 8) else {
        panic!()
    };
    assert_eq!(settings(&list[0]), ["NUMA_BALANCING=n"]);
    assert_eq!(list.len(), 1);
    // NR_CPUS=512 (last_cpupid 17) needs no MAXSMP=n; 64 CPUs or fewer free nothing.
    let l = layout(
        "long 64 flags 24 sections 0 nodes 0 zones 2 last_cpupid 17 kasan_tag 0 lru_gen 3 lru_refs 2 unused 16",
    );
    let Fixes::Alone(list) = fixes(&l, 2) else {
        panic!()
    };
    assert_eq!(
        list[2][0].to_string(),
        "NR_CPUS=128 (last_cpupid: 2 of 17 bits)"
    );
    let l = layout(
        "long 64 flags 24 sections 0 nodes 0 zones 2 last_cpupid 14 kasan_tag 0 lru_gen 3 lru_refs 2 unused 19",
    );
    let Fixes::Alone(list) = fixes(&l, 1) else {
        panic!()
    };
    assert!(
        list.iter().all(|f| !f[0].kconfig[0].starts_with("NR_CPUS")),
        "{list:?}"
    );
}

#[test]
fn changes_of_one_field_are_not_added_up() {
    // Debian's: last_cpupid is NUMA_BALANCING=n's, NR_CPUS' and NUMA=n's,
    // nodes NODES_SHIFT's and NUMA=n's.
    let l = Status::parse(DEBIAN).unwrap().page_flags;
    let Fixes::Together(list) = fixes(&l, 32) else {
        panic!()
    };
    let names: Vec<Vec<String>> = list.iter().map(settings).collect();
    assert_eq!(
        names,
        [
            vec!["LRU_GEN=n", "NUMA=n"],
            vec![
                "NUMA_BALANCING=n",
                "LRU_GEN=n",
                "MAXSMP=n and NODES_SHIFT=4"
            ],
        ]
    );
    // NODES_SHIFT frees what the others leave: 32 - 21 - 5.
    assert_eq!(list[1][2].bits, 6);
    // 37 short: the most is 36, LRU_GEN=n with NUMA=n, not 21 + 7 + 9 + 31 + 5.
    let Fixes::NotEnough(all) = fixes(&l, 37) else {
        panic!()
    };
    let names: Vec<String> = all.iter().map(|c| c.kconfig.join(" and ")).collect();
    assert_eq!(names, ["LRU_GEN=n", "NUMA=n"]);
    assert_eq!(all.iter().map(|c| c.bits).sum::<u32>(), 36);
}

#[test]
fn a_negative_unused_that_does_not_add_up_is_warned_about() {
    let bad = |from: &str, to: &str| {
        Status::parse(&MAXSMP.replace(from, to))
            .unwrap()
            .inconsistencies()
    };
    assert_eq!(
        bad("free_bits: 0", "free_bits: 1"),
        ["free_bits is 1 but page_flags' unused is -1, which leaves 0"]
    );
    // Below 0 by more than last_cpupid's bits: the fields do not add up either.
    assert_eq!(
        bad("unused -1", "unused -22")[1],
        "page_flags' unused is -22, but only last_cpupid (21 bits), counted where it does \
             not fit, can take it below 0, and not by more than its bits"
    );
    // A free_bits above unused: short by needed_bits - unused all the same.
    let s = Status::parse(&MAXSMP.replace("free_bits: 0", "free_bits: 3")).unwrap();
    assert_eq!(s.fit(), Fit::Short(13));
}

#[test]
fn combinations_leave_out_sets_with_a_spare_part() {
    // sections 8, kasan 4, lru 5, last_cpupid 3: 9 short.
    let l = layout(
        "long 64 flags 24 sections 8 nodes 0 zones 2 last_cpupid 3 kasan_tag 4 lru_gen 3 lru_refs 2 unused 18",
    );
    let Fixes::Together(list) = fixes(&l, 9) else {
        panic!()
    };
    let names: Vec<Vec<String>> = list.iter().map(settings).collect();
    assert_eq!(
        names,
        [
            vec!["NUMA_BALANCING=n", "SPARSEMEM_VMEMMAP=y"],
            vec!["LRU_GEN=n", "KASAN_SW_TAGS=n and KASAN_HW_TAGS=n"],
            vec!["LRU_GEN=n", "SPARSEMEM_VMEMMAP=y"],
            vec!["KASAN_SW_TAGS=n and KASAN_HW_TAGS=n", "SPARSEMEM_VMEMMAP=y"],
        ]
    );
}

/// DEBIAN with `key`'s value replaced.
fn debian_with(edits: &[(&str, &str)]) -> Status {
    let text: String = DEBIAN
        .lines()
        .map(|l| {
            let key = l.split_once(':').unwrap().0;
            match edits.iter().find(|(k, _)| *k == key) {
                Some((k, v)) => format!("{k}: {v}\n"),
                None => format!("{l}\n"),
            }
        })
        .collect();
    Status::parse(&text).unwrap()
}

#[test]
fn an_index_lowered_below_the_free_bits_is_no_kconfig_matter() {
    // The test kernel's pgflags-fallback boot: 4 bits granted of 41.
    let s = debian_with(&[
        ("free_bits", "41"),
        ("index_bits", "4"),
        ("needed_bits", "11"),
        ("vmlinux_tags", "1049"),
        (
            "page_flags",
            "long 64 flags 21 sections 0 nodes 0 zones 2 last_cpupid 0 kasan_tag 0 lru_gen 0 lru_refs 0 unused 41",
        ),
    ]);
    assert!(s.inconsistencies().is_empty());
    let out = text(&s);
    assert_eq!(
        out.lines().nth(1).unwrap(),
        "why: vmlinux's 1049 allocation tags need an index of 11 bits, and the index was \
             limited to 4 bits (below the 41 free: a test parameter lowered it)"
    );
    assert!(!out.contains("Kconfig"), "{out}");
    assert_eq!(json(&s)["fits"], true);
}

#[test]
fn more_than_sixteen_bits_fit_no_layout() {
    let s = debian_with(&[("needed_bits", "17"), ("vmlinux_tags", "70000")]);
    assert_eq!(s.fit(), Fit::TooMany);
    let out = text(&s);
    assert!(
        out.contains(
            "why: vmlinux's 70000 allocation tags need an index of 17 bits, more than \
                 the 16 an index may have: no page->flags layout holds them\n"
        ),
        "{out}"
    );
    assert!(!out.contains("NUMA_BALANCING"), "{out}");
    let v = json(&s);
    assert_eq!(v["bits_short"], Value::Null);
    assert_eq!(v["fits"], false);
}

#[test]
fn a_fallback_the_figures_do_not_explain_points_at_the_log() {
    let s = debian_with(&[
        ("free_bits", "14"),
        ("index_bits", "14"),
        ("needed_bits", "11"),
    ]);
    assert!(text(&s).contains("why: not said:"), "{}", text(&s));
}

#[test]
fn no_field_to_shrink() {
    let s = debian_with(&[(
        "page_flags",
        "long 64 flags 60 sections 0 nodes 0 zones 2 last_cpupid 0 kasan_tag 0 lru_gen 0 lru_refs 0 unused 2",
    )]);
    let out = text(&s);
    assert!(
        out.contains("no Kconfig change this tool knows frees page->flags bits here"),
        "{out}"
    );
}

#[test]
fn sections_and_kasan_tags_are_suggested() {
    let l = layout(
        "long 64 flags 24 sections 12 nodes 0 zones 2 last_cpupid 0 kasan_tag 8 lru_gen 0 lru_refs 0 unused 18",
    );
    let Fixes::Alone(list) = fixes(&l, 8) else {
        panic!()
    };
    let names: Vec<String> = list.iter().map(|f| f[0].to_string()).collect();
    assert_eq!(
        names,
        [
            "KASAN_SW_TAGS=n and KASAN_HW_TAGS=n (kasan_tag: 8 bits)",
            "SPARSEMEM_VMEMMAP=y (sections: 12 bits)"
        ]
    );
}

#[test]
fn counters_line_read_and_said() {
    // An older kernel has no such line: nothing said, null in JSON.
    let old = Status::parse(DEBIAN).unwrap();
    assert_eq!(old.counters, None);
    assert!(!text(&old).contains("counters:"));
    assert_eq!(json(&old)["counters"], Value::Null);

    let none = Status::parse(&format!("{DEBIAN}counters: none\n")).unwrap();
    assert_eq!(none.counters, Some(Counters::None));
    assert!(text(&none).contains("counters: none (profiling never on since boot"));
    assert_eq!(json(&none)["counters"]["made_at_us"], Value::Null);

    let made = Status::parse(&format!("{DEBIAN}counters: made at 12.034567 s\n")).unwrap();
    assert_eq!(made.counters, Some(Counters::MadeAt { micros: 12_034_567 }));
    assert!(text(&made).contains("counters: made 12.034567 s after boot"));
    assert_eq!(json(&made)["counters"]["made_at_us"], 12_034_567);

    for bad in [
        "made at 12 s",
        "made at 1.5 s",
        "made at x.000000 s",
        "some",
        "made at 1.000000",
    ] {
        let err = Status::parse(&format!("{DEBIAN}counters: {bad}\n")).unwrap_err();
        assert!(err.contains("invalid counters"), "{bad}: {err}");
    }
}

#[test]
fn page_ext_line_read_and_said() {
    // An older kernel has no such line: nothing said, null in JSON.
    let old = Status::parse(DEBIAN).unwrap();
    assert_eq!(old.page_ext, None);
    assert!(!text(&old).contains("page_ext for page tags"));
    assert_eq!(json(&old)["page_ext"], Value::Null);

    for (line, want, said, name) in [
        (
            "none",
            PageExt::None,
            "none (page tags in page flags",
            "none",
        ),
        (
            "reserved at boot",
            PageExt::ReservedAtBoot,
            "reserved at boot, 8 bytes a page",
            "reserved_at_boot",
        ),
        (
            "reserved at boot for another user",
            PageExt::ReservedForAnotherUser,
            "another user needed page_ext at boot",
            "reserved_for_another_user",
        ),
        (
            "made at the first switch-on",
            PageExt::MadeAtSwitchOn,
            "made at the first switch-on, 8 bytes a page",
            "made_at_switch_on",
        ),
    ] {
        let s = Status::parse(&format!("{DEBIAN}page_ext: {line}\n")).unwrap();
        assert_eq!(s.page_ext, Some(want));
        assert!(text(&s).contains(said), "{line}: {}", text(&s));
        assert_eq!(json(&s)["page_ext"], name);
    }
    for bad in ["made", "reserved", "None", ""] {
        let err = Status::parse(&format!("{DEBIAN}page_ext: {bad}\n")).unwrap_err();
        assert!(err.contains("invalid page_ext"), "{bad}: {err}");
    }
}

#[test]
fn page_ext_requested_read_and_said() {
    // Page tags in page_ext, ,compressed not given: an older kernel (no
    // line) keeps them there by default; a newer one because ,page_ext asked
    // for it, or because they do not fit.
    let base = DEBIAN.replace("compressed_requested: yes", "compressed_requested: no");
    let fits = base
        .replace("free_bits: 2", "free_bits: 12")
        .replace("index_bits: 2", "index_bits: 12")
        .replace("unused 2", "unused 12")
        .replace("nodes 10", "nodes 0");
    let old = Status::parse(&fits).unwrap();
    assert_eq!(old.page_ext_requested, None);
    assert!(text(&old).starts_with("page tags: in page_ext (the default)\n"), "{}", text(&old));
    assert_eq!(json(&old)["page_ext_requested"], Value::Null);

    let asked = Status::parse(&format!("{fits}page_ext_requested: yes\n")).unwrap();
    assert_eq!(asked.page_ext_requested, Some(true));
    let t = text(&asked);
    assert!(
        t.starts_with("page tags: in page_ext, as sysctl.vm.mem_profiling=V,page_ext asked\n")
            && t.contains("without ,page_ext they would fit in page flags"),
        "{t}"
    );
    assert_eq!(json(&asked)["page_ext_requested"], true);

    let short = Status::parse(&format!("{base}page_ext_requested: no\n")).unwrap();
    assert_eq!(short.page_ext_requested, Some(false));
    let t = text(&short);
    assert!(
        t.starts_with("page tags: in page_ext, as they do not fit in page flags\nwhy: "),
        "{t}"
    );
    assert_eq!(json(&short)["page_ext_requested"], false);

    for bad in ["maybe", "", "Yes"] {
        let err = Status::parse(&format!("{fits}page_ext_requested: {bad}\n")).unwrap_err();
        assert!(err.contains("invalid page_ext_requested"), "{bad}: {err}");
    }
}
