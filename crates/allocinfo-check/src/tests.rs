//! Each check on fixture text: what passes, and for each way the behaviour
//! under test can break, the input that makes the check fail.

use super::*;

const LONG_FILE: &str =
    "lib/alloctag/tests/modules/alloctag_test_long_file_name_past_the_allocinfo_ioctls_63.c";
const LONG_FUNC: &str = "alloctag_test_function_with_a_name_longer_than_the_ioctls_63_bytes";
const CUT_FILE: &str = "les/alloctag_test_long_file_name_past_the_allocinfo_ioctls_63.c";
const CUT_FUNC: &str = "octag_test_function_with_a_name_longer_than_the_ioctls_63_bytes";

/// A line as the kernel prints it.
fn l(bytes: i64, calls: u64, rest: &str) -> String {
    format!("{bytes:12} {calls:8} {rest} \n")
}

fn head() -> String {
    format!("{HEADER_1_0}\n{COLUMN_HEADER}\n")
}

/// The tag lines of the fixture text, in the text's order.
fn text_lines() -> Vec<String> {
    vec![
        l(4096, 1, "mm/slub.c:2412 func:alloc_slab_page"),
        l(12288, 3, "mm/slub.c:4210 func:___kmalloc_large_node"),
        l(0, 0, "mm/page_alloc.c:4700 func:alloc_pages_exact"),
        l(-64, 1, "kernel/fork.c:300 func:dup_task_struct"),
        l(
            512,
            2,
            "lib/alloctag/tests/modules/alloctag_test.c:120 [alloctag_test] func:alloctag_test_init",
        ),
        l(
            0,
            0,
            &format!("{LONG_FILE}:7 [alloctag_test] func:{LONG_FUNC}"),
        ),
        l(8192, 2, "mm/slub.c:2412 func:alloc_slab_page"),
    ]
}

fn text() -> String {
    head() + &text_lines().concat()
}

/// The ioctl tool's dump of the fixture: the same records, names cut.
fn dump_lines() -> Vec<String> {
    let mut v = text_lines();
    v[5] = l(
        0,
        0,
        &format!("{CUT_FILE}:7 [alloctag_test] func:{CUT_FUNC}"),
    );
    v
}

fn listing(s: &str) -> Listing {
    Listing::parse(s.as_bytes()).unwrap()
}

fn f() -> Filter {
    Filter::default()
}

fn tags_ok(expected: &str, got: &str, filter: &Filter) -> Outcome {
    tags(
        &listing(expected),
        &listing(got),
        filter,
        false,
        Expect::default(),
    )
}

// --- listings ---------------------------------------------------------------

#[test]
fn listings_with_and_without_the_header() {
    let t = listing(&text());
    assert_eq!(t.version, Some(Version::V1_0));
    assert_eq!(t.lines.len(), 7);
    assert_eq!(t.lines[0].no, 3);
    let d = listing(&dump_lines().concat());
    assert_eq!((d.version, d.lines.len(), d.lines[0].no), (None, 7, 1));
    assert!(listing("").lines.is_empty());
    let marked = listing(&l(1, 1, "a.c:1 func:f accurate:no"));
    assert!(!marked.lines[0].tag.is_accurate());
    // alloctag's mark of an unloaded module's tag, after accurate:no.
    let gone = listing(
        &(l(1, 1, "a.c:1 [m] func:f unloaded:yes")
            + &l(1, 1, "a.c:1 [m] func:f accurate:no unloaded:yes")),
    );
    assert!(gone.tags().all(Tag::is_unloaded));
    assert!(!gone.lines[1].tag.is_accurate());
}

#[test]
fn listings_refuse_lines_of_another_shape() {
    for bad in [
        text() + "\n",                                              // a blank line
        text() + &l(1, 1, "a.c:1 func:f x:y"),                      // a pair other than accurate:no
        text() + &l(1, 1, "a.c:1 func:f unloaded:no"),              // or unloaded:yes
        text() + &l(1, 1, "a.c:1 func:f unloaded:yes accurate:no"), // in another order
        text() + &l(1, 1, "a.c:1 func:f unloaded:yes unloaded:yes"),
        text() + &l(1, 1, "a.c:1 f"),            // no func:
        text() + "1 1 a.c:1 func:f",             // no final newline
        "allocinfo - version: 1.0\n".to_owned(), // no column header
        "#     <size>  <calls> <tag info>\n".to_owned(),
    ] {
        assert!(Listing::parse(bad.as_bytes()).is_err(), "{bad:?}");
    }
}

#[test]
fn cut_keeps_the_last_63_characters() {
    assert_eq!(cut(LONG_FILE), CUT_FILE);
    assert_eq!(cut(LONG_FUNC), CUT_FUNC);
    assert_eq!(cut(CUT_FUNC), CUT_FUNC);
    assert_eq!(cut(&"x".repeat(63)), "x".repeat(63));
    assert_eq!(cut(&"x".repeat(64)).len(), 63);
    assert_eq!(cut(""), "");
}

// --- the stress boot: table and read ----------------------------------------

/// The stress fixture: vmlinux tags (one site twice), a pinned module and
/// a churned one.
fn stress_base() -> String {
    head()
        + &l(4096, 1, "mm/slub.c:2412 func:alloc_slab_page")
        + &l(4096, 1, "mm/slub.c:2412 func:alloc_slab_page")
        + &l(0, 0, "mm/percpu.c:1 func:pcpu_alloc")
}

fn pinned() -> String {
    l(16, 1, "h.c:10 [alloctag_holder] func:holder_init")
}

fn churned() -> String {
    l(32, 1, "t.c:20 [alloctag_test] func:alloctag_test_init")
        + &l(0, 0, "t.c:30 [alloctag_test] func:hold_kmalloc")
}

fn stress_table() -> String {
    let with_modules = stress_base() + &churned() + &pinned();
    table(Kind::Vmlinux, stress_base().as_bytes(), None).unwrap()
        + &table(
            Kind::Churned,
            with_modules.as_bytes(),
            Some("alloctag_test"),
        )
        .unwrap()
        + &table(
            Kind::Pinned,
            with_modules.as_bytes(),
            Some("alloctag_holder"),
        )
        .unwrap()
}

fn read_ok(read: &str) -> Outcome {
    check_read(read.as_bytes(), &stress_table(), false, 0)
}

#[test]
fn table_counts_each_tag_info_of_its_kind() {
    let t = table(Kind::Vmlinux, stress_base().as_bytes(), None).unwrap();
    assert_eq!(
        t,
        "V\t1\tmm/percpu.c:1 func:pcpu_alloc\nV\t2\tmm/slub.c:2412 func:alloc_slab_page\n"
    );
    let m = stress_base() + &churned();
    let t = table(Kind::Churned, m.as_bytes(), Some("alloctag_test")).unwrap();
    assert_eq!(t.lines().count(), 2);
    assert!(
        t.lines()
            .all(|x| x.starts_with("C\t1\t") && x.contains("[alloctag_test]"))
    );
    // A module with no tag in the read: nothing would be checked.
    assert!(table(Kind::Pinned, m.as_bytes(), Some("alloctag_holder")).is_err());
}

#[test]
fn read_passes_what_the_table_allows() {
    // Churned modules in or out; the pinned module and vmlinux always.
    read_ok(&(stress_base() + &churned() + &pinned())).unwrap();
    read_ok(&(stress_base() + &pinned())).unwrap();
    read_ok(&(stress_base() + &l(0, 0, "t.c:30 [alloctag_test] func:hold_kmalloc") + &pinned()))
        .unwrap();
    check_read(
        (stress_base() + &pinned()).as_bytes(),
        &stress_table(),
        true,
        0,
    )
    .unwrap();
}

#[test]
fn read_allows_kept_instances_of_churned_tags_up_to_the_bound() {
    let ok = stress_base() + &pinned();
    let twice = ok.clone() + &churned() + &churned();
    check_read(twice.as_bytes(), &stress_table(), false, 1).unwrap();
    let e = check_read(
        (twice.clone() + &churned()).as_bytes(),
        &stress_table(),
        false,
        1,
    )
    .unwrap_err();
    assert!(e.contains("module tag 3 times"), "{e}");
    // The final read: only the kept instances.
    check_read(
        (ok.clone() + &churned()).as_bytes(),
        &stress_table(),
        true,
        1,
    )
    .unwrap();
    let e = check_read(twice.as_bytes(), &stress_table(), true, 1).unwrap_err();
    assert!(e.contains("module tag 2 times"), "{e}");
}

#[test]
fn read_fails_a_vmlinux_or_pinned_tag_missing_or_doubled() {
    let base = stress_base();
    let one_slab = base.replacen(&l(4096, 1, "mm/slub.c:2412 func:alloc_slab_page"), "", 1);
    let e = read_ok(&(one_slab + &pinned())).unwrap_err();
    assert!(e.contains("V tag 1 times, not 2"), "{e}");
    let e = read_ok(&(base.clone() + &l(0, 0, "mm/percpu.c:1 func:pcpu_alloc") + &pinned()))
        .unwrap_err();
    assert!(e.contains("V tag 2 times, not 1"), "{e}");
    let e = read_ok(&base).unwrap_err();
    assert!(e.contains("P tag 0 times, not 1"), "{e}");
    let e = read_ok(&(base + &pinned() + &pinned())).unwrap_err();
    assert!(e.contains("P tag 2 times, not 1"), "{e}");
}

#[test]
fn read_takes_a_new_rust_line_of_vmlinux_once() {
    let ok = stress_base() + &pinned();
    let rust = l(
        64,
        1,
        "lib/alloctag/src/capture/report.rs:620 func:alloctag::capture::report::Control::line",
    );
    read_ok(&(ok.clone() + &rust)).unwrap();
    let e = read_ok(&(ok.clone() + &rust + &rust)).unwrap_err();
    assert!(e.contains("dynamic tag 2 times"), "{e}");
    // Not a module's Rust line, nor a C line of vmlinux.
    let e = read_ok(&(ok.clone() + &l(64, 1, "m.rs:3 [m] func:m::f"))).unwrap_err();
    assert!(e.contains("unknown tag: m.rs:3 [m] func:m::f"), "{e}");
    let e = read_ok(&(ok + &l(64, 1, "mm/x.c:3 func:f"))).unwrap_err();
    assert!(e.contains("unknown tag: mm/x.c:3 func:f"), "{e}");
}

#[test]
fn read_fails_an_unknown_tag_or_a_churned_one_too_often() {
    let ok = stress_base() + &pinned();
    let e = read_ok(&(ok.clone() + &l(1, 1, "x.c:1 func:stray"))).unwrap_err();
    assert!(e.contains("unknown tag: x.c:1 func:stray"), "{e}");
    // A churned module listed twice in one read (a module's tags repeated).
    let e = read_ok(&(ok.clone() + &churned() + &churned())).unwrap_err();
    assert!(e.contains("module tag 2 times"), "{e}");
    // Left in the final read.
    let e = check_read((ok + &churned()).as_bytes(), &stress_table(), true, 0).unwrap_err();
    assert!(e.contains("module tag 1 times"), "{e}");
}

#[test]
fn read_fails_a_line_not_as_the_kernel_prints_it() {
    let ok = stress_base() + &pinned();
    let bad_reads = [
        ok.replace(HEADER_1_0, "allocinfo - version: 2.0"),
        ok.replace(COLUMN_HEADER, "#  <size> <calls> <tag info>"),
        ok.clone() + "\n",
        ok.trim_end_matches('\n').to_owned(),
        // Spacing: the kernel's %12lli %8llu and the trailing space.
        ok.replace(
            &l(0, 0, "mm/percpu.c:1 func:pcpu_alloc"),
            "0 0 mm/percpu.c:1 func:pcpu_alloc \n",
        ),
        ok.replace(
            &l(0, 0, "mm/percpu.c:1 func:pcpu_alloc"),
            &l(0, 0, "mm/percpu.c:1 func:pcpu_alloc").replace(" \n", "\n"),
        ),
        ok.replace("[alloctag_holder]", "[alloctag-holder]"),
        ok.replace("func:holder_init", "func:holder_init accurate:no"),
        // A read cut in the middle of a line.
        ok[..ok.len() - 10].to_owned() + "\n",
    ];
    for bad in bad_reads {
        assert!(read_ok(&bad).is_err(), "passed: {bad:?}");
    }
    // Complaints are capped.
    let many = ok + &l(1, 1, "x.c:1 func:stray").repeat(9);
    let e = read_ok(&many).unwrap_err();
    assert_eq!(e.lines().count(), 1 + MAX_COMPLAINTS + 1, "{e}");
}

#[test]
fn read_refuses_a_bad_table() {
    let read = stress_base() + &pinned();
    for t in [
        "",
        "X\t1\ta.c:1 func:f\n",
        "V\tx\ta.c:1 func:f\n",
        "V\t1\n",
        "V\t1\ta.c:1 func:f\nV\t1\ta.c:1 func:f\n",
    ] {
        assert!(check_read(read.as_bytes(), t, false, 0).is_err(), "{t:?}");
    }
}

// --- reads of single tags (the holder tests) ----------------------------------

fn module(m: &str) -> Filter {
    Filter {
        module: Some(m.into()),
        ..f()
    }
}

#[test]
fn get_prints_the_one_tags_numbers() {
    let t = listing(&text());
    let mut sel = module("alloctag_test");
    sel.function = Some("alloctag_test_init".into());
    assert_eq!(get(&t, &sel).unwrap(), "512 2");
    // Two tags, or none: the values would be ambiguous or missing.
    assert!(get(&t, &module("alloctag_test")).is_err());
    assert!(get(&t, &module("alloctag_holder")).is_err());
}

#[test]
fn zero_fails_a_tag_with_bytes_or_calls_or_nothing_selected() {
    let t = listing(&text());
    let mut sel = module("alloctag_test");
    sel.function_prefix = Some("alloctag_test_function".into());
    zero(&t, &sel).unwrap();
    sel.function_prefix = Some("alloctag_test_".into());
    let e = zero(&t, &sel).unwrap_err();
    assert!(e.contains("alloctag_test_init"), "{e}");
    let calls_only = listing(&l(0, 1, "h.c:1 [alloctag_holder] func:f"));
    assert!(zero(&calls_only, &module("alloctag_holder")).is_err());
    let bytes_only = listing(&l(-8, 0, "h.c:1 [alloctag_holder] func:f"));
    assert!(zero(&bytes_only, &module("alloctag_holder")).is_err());
    assert!(zero(&t, &module("alloctag_holder")).is_err());
}

#[test]
fn unchanged_fails_moved_counters_and_tags_that_come_or_go() {
    let before = text();
    let sel = module("alloctag_test");
    // Other tags moved, and the order changed: still the same.
    let mut lines = text_lines();
    lines[0] = l(1, 1, "mm/slub.c:2412 func:alloc_slab_page");
    lines.swap(4, 5);
    unchanged(
        &listing(&before),
        &listing(&(head() + &lines.concat())),
        &sel,
    )
    .unwrap();
    let moved = before.replace(&l(512, 2, ""), &l(576, 3, "")).replace(
        &l(
            512,
            2,
            "lib/alloctag/tests/modules/alloctag_test.c:120 [alloctag_test] func:alloctag_test_init",
        ),
        &l(
            576,
            3,
            "lib/alloctag/tests/modules/alloctag_test.c:120 [alloctag_test] func:alloctag_test_init",
        ),
    );
    let e = unchanged(&listing(&before), &listing(&moved), &sel).unwrap_err();
    assert!(e.contains("576"), "{e}");
    let more = before.clone() + &l(0, 0, "t.c:9 [alloctag_test] func:new_site");
    assert!(unchanged(&listing(&before), &listing(&more), &sel).is_err());
    assert!(unchanged(&listing(&more), &listing(&before), &sel).is_err());
    assert!(unchanged(&listing(&before), &listing(&before), &module("nothing")).is_err());
}

#[test]
fn selectors_of_reads() {
    let t = listing(&text());
    let n = |f: Filter| select(&t, &f).count();
    assert_eq!(n(f()), 7);
    assert_eq!(
        n(Filter {
            any_module: true,
            ..f()
        }),
        2
    );
    assert_eq!(
        n(Filter {
            module_prefix: Some("alloctag_".into()),
            ..f()
        }),
        2
    );
    assert_eq!(
        n(Filter {
            module_prefix: Some("alloctag_h".into()),
            ..f()
        }),
        0
    );
    assert_eq!(
        n(Filter {
            nonzero: true,
            ..f()
        }),
        5
    );
    // Names as written here: the whole long name.
    assert_eq!(
        n(Filter {
            function: Some(LONG_FUNC.into()),
            ..f()
        }),
        1
    );
    let e = Expect {
        at_least: Some(2),
        exactly: None,
    };
    assert!(e.check(1, "tags").is_err() && e.check(2, "tags").is_ok());
    let e = Expect {
        at_least: None,
        exactly: Some(0),
    };
    assert!(e.check(1, "tags").is_err() && e.check(0, "tags").is_ok());
}

// --- the ioctl's output against the text -------------------------------------

#[test]
fn tags_passes_the_dump_of_the_text() {
    let out = tags_ok(&text(), &dump_lines().concat(), &f()).unwrap();
    assert_eq!(out, "7 tags");
    // The text less its header, as allocinfo_ioctl snapshot writes it.
    tags_ok(&text_lines().concat(), &dump_lines().concat(), &f()).unwrap();
    // Another counter value is no concern of the tag lists.
    let mut moved = dump_lines();
    moved[0] = l(0, 0, "mm/slub.c:2412 func:alloc_slab_page");
    tags_ok(&text(), &moved.concat(), &f()).unwrap();
}

#[test]
fn tags_fails_a_missing_extra_repeated_or_reordered_tag() {
    let d = dump_lines();
    let mut missing = d.clone();
    missing.remove(2);
    let e = tags_ok(&text(), &missing.concat(), &f()).unwrap_err();
    assert!(
        e.contains("missing: mm/page_alloc.c:4700 [] func:alloc_pages_exact"),
        "{e}"
    );
    let extra = d.concat() + &l(1, 1, "x.c:1 func:x");
    assert!(
        tags_ok(&text(), &extra, &f())
            .unwrap_err()
            .contains("extra:")
    );
    let mut swapped = d.clone();
    swapped.swap(0, 1);
    let e = tags_ok(&text(), &swapped.concat(), &f()).unwrap_err();
    assert!(e.contains("other order"), "{e}");
    let repeated = d.concat() + &d[6];
    assert!(tags_ok(&text(), &repeated, &f()).is_err());
    // An empty dump is no list of the text's tags.
    assert!(tags_ok(&text(), "", &f()).is_err());
}

#[test]
fn tags_fails_a_wrong_module_or_a_name_not_cut() {
    let d = dump_lines();
    // Built-in code reported with a module name.
    let mut v = d.clone();
    v[0] = l(4096, 1, "mm/slub.c:2412 [vmlinux] func:alloc_slab_page");
    assert!(tags_ok(&text(), &v.concat(), &f()).is_err());
    // A module's tag reported as built-in.
    let mut v = d.clone();
    v[4] = v[4].replace("[alloctag_test] ", "");
    assert!(tags_ok(&text(), &v.concat(), &f()).is_err());
    // The whole long name, or its first 63 characters, where the ioctl
    // returns the last 63.
    let mut v = d.clone();
    v[5] = l(
        0,
        0,
        &format!("{LONG_FILE}:7 [alloctag_test] func:{LONG_FUNC}"),
    );
    assert!(tags_ok(&text(), &v.concat(), &f()).is_err());
    let mut v = d.clone();
    v[5] = l(
        0,
        0,
        &format!("{CUT_FILE}:7 [alloctag_test] func:{}", &LONG_FUNC[..63]),
    );
    assert!(tags_ok(&text(), &v.concat(), &f()).is_err());
}

#[test]
fn tags_fails_when_the_text_lists_no_tag() {
    // No records, or the header alone: nothing to compare the dump with,
    // whatever the filter, the dump or the expected count.
    let slab = Filter {
        function: Some("alloc_slab_page".into()),
        ..f()
    };
    let exactly_0 = Expect {
        at_least: None,
        exactly: Some(0),
    };
    for empty in [String::new(), head()] {
        for filter in [f(), slab.clone()] {
            for both in [false, true] {
                for n in [Expect::default(), exactly_0] {
                    let e = tags(&listing(&empty), &listing(""), &filter, both, n).unwrap_err();
                    assert!(e.contains("lists no tag"), "{empty:?} {filter:?}: {e}");
                }
            }
        }
        // Against a dump with tags: still no comparison of the tag lists.
        let e = tags_ok(&empty, &dump_lines().concat(), &f()).unwrap_err();
        assert!(e.contains("lists no tag"), "{e}");
    }
    // With --both the dump is a whole listing too: empty, it has nothing
    // to mark, and the two marking no tag in common would pass.
    let none = Filter {
        function: Some("nothing".into()),
        ..f()
    };
    tags(&listing(&text()), &listing(&text()), &none, true, exactly_0).unwrap();
    for empty in [String::new(), head()] {
        let e = tags(&listing(&text()), &listing(&empty), &none, true, exactly_0).unwrap_err();
        assert!(e.contains("lists no tag"), "{e}");
    }
    // A text with tags that the filter does not select is a comparison:
    // the empty dump is right there (as in the filter tests above).
    assert_eq!(tags_ok(&text(), "", &none).unwrap(), "0 tags");
}

/// The dump lines of the fixture that `keep` selects, by index.
fn dump_of(keep: &[usize]) -> String {
    let d = dump_lines();
    keep.iter().map(|&i| d[i].clone()).collect()
}

#[test]
fn tags_filters_mean_what_mainlines_mean() {
    let t = text();
    let cases: Vec<(Filter, Vec<usize>)> = vec![
        (
            Filter {
                function: Some("alloc_slab_page".into()),
                ..f()
            },
            vec![0, 6],
        ),
        (
            Filter {
                file: Some("mm/slub.c".into()),
                ..f()
            },
            vec![0, 1, 6],
        ),
        (
            Filter {
                line: Some(2412),
                ..f()
            },
            vec![0, 6],
        ),
        (module(""), vec![0, 1, 2, 3, 6]),
        (module("alloctag_test"), vec![4, 5]),
        (
            Filter {
                module: Some("".into()),
                file: Some("mm/slub.c".into()),
                line: Some(4210),
                ..f()
            },
            vec![1],
        ),
        // Unsigned sizes: -64 is above 2^63.
        (
            Filter {
                max: Some(0),
                ..f()
            },
            vec![2, 5],
        ),
        (
            Filter {
                min: Some(4096),
                ..f()
            },
            vec![0, 1, 3, 6],
        ),
        (
            Filter {
                min: Some(1 << 63),
                ..f()
            },
            vec![3],
        ),
        (
            Filter {
                min: Some(1),
                max: Some(65536),
                ..f()
            },
            vec![0, 1, 4, 6],
        ),
        (
            Filter {
                max: Some(u64::MAX),
                ..f()
            },
            vec![0, 1, 2, 3, 4, 5, 6],
        ),
        // The text of version 1.0 marks nothing: all accurate.
        (
            Filter {
                inaccurate: Some(0),
                ..f()
            },
            vec![0, 1, 2, 3, 4, 5, 6],
        ),
        // Long names: their last 63 characters find them.
        (
            Filter {
                function: Some(CUT_FUNC.into()),
                ..f()
            },
            vec![5],
        ),
        (
            Filter {
                file: Some(CUT_FILE.into()),
                ..f()
            },
            vec![5],
        ),
    ];
    for (filter, keep) in cases {
        tags_ok(&t, &dump_of(&keep), &filter).unwrap_or_else(|e| panic!("{filter:?}: {e}"));
        // A dump that lists one more, or one less, fails.
        let more: Vec<usize> = (0..7).filter(|i| !keep.contains(i)).take(1).collect();
        if let Some(&m) = more.first() {
            let mut k = keep.clone();
            k.push(m);
            k.sort();
            assert!(
                tags_ok(&t, &dump_of(&k), &filter).is_err(),
                "{filter:?} + {m}"
            );
        }
        assert!(
            tags_ok(&t, &dump_of(&keep[1..]), &filter).is_err(),
            "{filter:?} less one"
        );
    }
}

#[test]
fn tags_fails_a_filter_that_matches_prefixes_substrings_other_case_or_32_bits() {
    let t = text();
    let slab = dump_of(&[0, 6]);
    let none = [
        Filter {
            function: Some("alloc_slab".into()),
            ..f()
        },
        Filter {
            function: Some("lloc_slab_page".into()),
            ..f()
        },
        Filter {
            function: Some("ALLOC_SLAB_PAGE".into()),
            ..f()
        },
        Filter {
            function: Some("".into()),
            ..f()
        },
        Filter {
            file: Some("mm/slub".into()),
            ..f()
        },
        Filter {
            file: Some("slub.c".into()),
            ..f()
        },
        Filter {
            line: Some((1 << 32) + 2412),
            ..f()
        },
        Filter {
            line: Some(0),
            ..f()
        },
        module("alloctag_tes"),
        module("[alloctag_test]"),
        // The whole long name, or a shorter end of it, finds nothing.
        Filter {
            function: Some(LONG_FUNC.into()),
            ..f()
        },
        Filter {
            function: Some(CUT_FUNC[1..].into()),
            ..f()
        },
        Filter {
            file: Some(LONG_FILE.into()),
            ..f()
        },
        Filter {
            file: Some(CUT_FILE[1..].into()),
            ..f()
        },
    ];
    for filter in none {
        assert_eq!(tags_ok(&t, "", &filter).unwrap(), "0 tags");
        assert!(tags_ok(&t, &slab, &filter).is_err(), "{filter:?}");
    }
}

#[test]
fn tags_of_the_accuracy_filter() {
    // The ioctl's whole dump marks the inaccurate tag; its filter lists it.
    let mut d = dump_lines();
    d[4] = d[4].replace(
        "func:alloctag_test_init ",
        "func:alloctag_test_init accurate:no ",
    );
    let all = d.concat();
    let inacc = |v| Filter {
        inaccurate: Some(v),
        ..f()
    };
    for v in [1, 2] {
        tags_ok(&all, &d[4], &inacc(v)).unwrap();
        assert!(tags_ok(&all, "", &inacc(v)).is_err());
        assert!(tags_ok(&all, &(d[3].clone() + &d[4]), &inacc(v)).is_err());
    }
    let accurate: String = [0, 1, 2, 3, 5, 6].iter().map(|&i| d[i].clone()).collect();
    tags_ok(&all, &accurate, &inacc(0)).unwrap();
    assert!(tags_ok(&all, &all, &inacc(0)).is_err());
    // --both: the text (version 2.0) marks the same tags as the dump.
    let v2 =
        |lines: &[String]| format!("allocinfo - version: 2.0\n{COLUMN_HEADER}\n") + &lines.concat();
    let mut tl = text_lines();
    tl[4] = tl[4].replace(
        "func:alloctag_test_init ",
        "func:alloctag_test_init accurate:no ",
    );
    let both =
        |a: &str, b: &str| tags(&listing(a), &listing(b), &inacc(1), true, Expect::default());
    assert_eq!(both(&v2(&tl), &all).unwrap(), "1 tags");
    assert!(both(&v2(&text_lines()), &all).is_err());
    let mut tl2 = tl.clone();
    tl2[3] = tl2[3].replace("dup_task_struct ", "dup_task_struct accurate:no ");
    assert!(both(&v2(&tl2), &all).is_err());
}

#[test]
fn tags_of_the_unloaded_filter() {
    // The ioctl's whole dump marks the unloaded module's tags; its filter
    // lists them, and only them.
    let mut d = dump_lines();
    for i in [4, 5] {
        d[i] = d[i].replacen(" \n", " unloaded:yes \n", 1);
    }
    let all = d.concat();
    let unloaded = Filter {
        unloaded: true,
        ..f()
    };
    let marked = d[4].clone() + &d[5];
    tags_ok(&all, &marked, &unloaded).unwrap();
    assert!(tags_ok(&all, &d[4], &unloaded).is_err());
    assert!(tags_ok(&all, &(d[3].clone() + &marked), &unloaded).is_err());
    assert!(
        tags_ok(&text(), &marked, &unloaded).is_err(),
        "the text of 1.0 marks none"
    );
    // --both: the text (version 2.0) marks the same tags as the dump.
    let v2 =
        |lines: &[String]| format!("allocinfo - version: 2.0\n{COLUMN_HEADER}\n") + &lines.concat();
    let mut tl = text_lines();
    for i in [4, 5] {
        tl[i] = tl[i].replacen(" \n", " unloaded:yes \n", 1);
    }
    let both =
        |a: &str, b: &str| tags(&listing(a), &listing(b), &unloaded, true, Expect::default());
    assert_eq!(both(&v2(&tl), &all).unwrap(), "2 tags");
    assert!(both(&v2(&text_lines()), &all).is_err());
    let mut tl2 = tl.clone();
    tl2[5] = text_lines()[5].clone();
    assert!(both(&v2(&tl2), &all).is_err(), "one the text does not mark");
}

#[test]
fn tags_counts_what_it_expects() {
    let d = dump_lines().concat();
    let n = |at_least, exactly| Expect { at_least, exactly };
    let check = |e| tags(&listing(&text()), &listing(&d), &f(), false, e);
    check(n(Some(7), None)).unwrap();
    check(n(None, Some(7))).unwrap();
    assert!(check(n(Some(8), None)).is_err());
    assert!(check(n(None, Some(6))).is_err());
}

/// The fixture's text read again, each tag's numbers moved if `moved` says.
fn moved_text(moved: &[usize]) -> String {
    let mut v = text_lines();
    for &i in moved {
        let t: Tag = v[i].trim_end_matches('\n').parse().unwrap();
        v[i] = l(t.bytes + 4096, t.calls + 1, &t.location().to_string());
    }
    v.concat()
}

#[test]
fn stable_tags_compares_the_tags_that_held_still() {
    let t1 = text_lines().concat();
    let min = Filter {
        min: Some(4096),
        ..f()
    };
    let st =
        |d: &str, t2: &str, f: &Filter| stable_tags(&listing(&t1), &listing(d), &listing(t2), f);
    // Tag 1 moved: in or out of the dump, no matter.
    let t2 = moved_text(&[1]);
    st(&dump_of(&[0, 3, 6]), &t2, &min).unwrap();
    st(&dump_of(&[0, 1, 3, 6]), &t2, &min).unwrap();
    // A still tag missing, an extra still tag, or the order changed.
    assert!(st(&dump_of(&[0, 6]), &t2, &min).is_err());
    assert!(st(&dump_of(&[0, 2, 3, 6]), &t2, &min).is_err());
    assert!(st(&dump_of(&[3, 0, 6]), &t2, &min).is_err());
    // A name not cut by the ioctl, in place of the cut one: the dump is
    // otherwise right.
    let mut d = dump_lines();
    d.remove(1);
    st(&d.concat(), &t2, &f()).unwrap();
    d[4] = text_lines()[5].clone();
    let e = st(&d.concat(), &t2, &f()).unwrap_err();
    assert!(e.contains(LONG_FUNC), "{e}");
    // Tags 0 and 6 share a site: when one moved, neither counts.
    let t2 = moved_text(&[0]);
    st(&dump_of(&[1, 3]), &t2, &min).unwrap();
    st(&dump_of(&[0, 1, 3, 6]), &t2, &min).unwrap();
    assert!(st(&dump_of(&[1]), &t2, &min).is_err());
    // Too busy a moment: fewer than half held still.
    let busy = moved_text(&[0, 1, 2, 3]);
    let e = st(&dump_of(&[5, 6]), &busy, &min).unwrap_err();
    assert!(e.contains("fewer than half"), "{e}");
    // The reads must list the same tags.
    assert!(st(&dump_of(&[1, 3, 6]), &dump_of(&[0, 1, 2, 3, 4, 5]), &min).is_err());
}

#[test]
fn stable_tags_fails_a_dump_record_in_neither_text() {
    let t1 = text_lines().concat();
    let t2 = moved_text(&[1]);
    let min = Filter {
        min: Some(4096),
        ..f()
    };
    let st = |d: &str, f: &Filter| stable_tags(&listing(&t1), &listing(d), &listing(&t2), f);
    let ok = dump_of(&[0, 3, 6]);
    st(&ok, &min).unwrap();
    // A site that neither read of the text lists, at the end, in the middle,
    // with bytes the filter would select, or with none.
    let stray = l(8192, 2, "mm/stray.c:1 func:stray_alloc");
    for d in [
        ok.clone() + &stray,
        dump_of(&[0]) + &stray + &dump_of(&[3, 6]),
        ok.clone() + &l(0, 0, "mm/stray.c:1 func:stray_alloc"),
    ] {
        let e = st(&d, &min).unwrap_err();
        assert!(e.contains("mm/stray.c:1 [] func:stray_alloc"), "{e}");
    }
    // A known file and function at another line, or in a module, is
    // another site.
    let e = st(
        &(ok.clone() + &l(4096, 1, "mm/slub.c:2413 func:alloc_slab_page")),
        &min,
    )
    .unwrap_err();
    assert!(e.contains("mm/slub.c:2413"), "{e}");
    let e = st(
        &(ok.clone() + &l(4096, 1, "mm/slub.c:2412 [m] func:alloc_slab_page")),
        &min,
    )
    .unwrap_err();
    assert!(e.contains("[m]"), "{e}");
    // A long name the ioctl did not cut, beside the cut one: in neither text
    // as the ioctl reports it.
    let all = dump_of(&[0, 2, 3, 4, 5, 6]);
    st(&all, &f()).unwrap();
    let uncut = all + &text_lines()[5];
    let e = st(&uncut, &f()).unwrap_err();
    assert!(e.contains(LONG_FUNC), "{e}");
}

#[test]
fn counters_checks_the_numbers_of_the_tags_that_held_still() {
    let t1 = text_lines().concat();
    let t2 = moved_text(&[1]);
    let c = |d: &str, t2: &str| counters(&listing(&t1), &listing(d), &listing(t2));
    let out = c(&dump_lines().concat(), &t2).unwrap();
    assert_eq!(out, "6 of 7 tags held still, 0 differ");
    // The moved tag may show anything.
    let mut d = dump_lines();
    d[1] = l(1, 1, "mm/slub.c:4210 func:___kmalloc_large_node");
    c(&d.concat(), &t2).unwrap();
    // A still tag with other bytes, or other calls, in the dump.
    for bad in [
        l(4097, 1, "mm/slub.c:2412 func:alloc_slab_page"),
        l(4096, 2, "mm/slub.c:2412 func:alloc_slab_page"),
    ] {
        let mut d = dump_lines();
        d[0] = bad;
        let e = c(&d.concat(), &t2).unwrap_err();
        assert!(e.contains("differ from the text"), "{e}");
    }
    // Fewer than half held still; the dump lists other tags.
    assert!(
        c(&dump_lines().concat(), &moved_text(&[0, 1, 2, 3]))
            .unwrap_err()
            .contains("fewer than half")
    );
    assert!(c(&dump_of(&[0, 1, 2, 3, 4, 5]), &t2).is_err());
    // A long name the ioctl did not cut.
    let mut d = dump_lines();
    d[5] = text_lines()[5].clone();
    assert!(c(&d.concat(), &t2).is_err());
}

#[test]
fn frozen_wants_the_text_record_for_record_and_byte_for_byte() {
    let c = |t: &str, d: &str| frozen(&listing(t), &listing(d));
    let out = c(&text_lines().concat(), &dump_lines().concat()).unwrap();
    assert_eq!(out, "7 records equal, 6 lines equal to the byte");
    // Mainline's accurate:no is no difference.
    let mut d = dump_lines();
    d[2] = d[2].replace("alloc_pages_exact ", "alloc_pages_exact accurate:no ");
    c(&text(), &d.concat()).unwrap();
    // Other numbers, another tag, or the same record spaced otherwise.
    let mut d = dump_lines();
    d[3] = l(-63, 1, "kernel/fork.c:300 func:dup_task_struct");
    assert!(c(&text(), &d.concat()).is_err());
    let mut d = dump_lines();
    d[3] = l(-64, 1, "kernel/fork.c:301 func:dup_task_struct");
    assert!(c(&text(), &d.concat()).is_err());
    let mut d = dump_lines();
    d[3] = "-64 1 kernel/fork.c:300 func:dup_task_struct \n".into();
    let e = c(&text(), &d.concat()).unwrap_err();
    assert!(e.contains("ioctl: \"-64 1 kernel"), "{e}");
    let mut d = dump_lines();
    d.pop();
    assert!(c(&text(), &d.concat()).is_err());
    // A long name the ioctl did not cut.
    let mut d = dump_lines();
    d[5] = text_lines()[5].clone();
    assert!(c(&text(), &d.concat()).is_err());
}

#[test]
fn frozen_wants_the_same_unloaded_marks_where_the_text_can_mark() {
    let c = |t: &str, d: &str| frozen(&listing(t), &listing(d));
    let mark = |lines: &mut Vec<String>, i: usize| {
        lines[i] = lines[i].replacen(" \n", " unloaded:yes \n", 1);
    };
    let v2 =
        |lines: &[String]| format!("allocinfo - version: 2.0\n{COLUMN_HEADER}\n") + &lines.concat();
    let (mut t, mut d) = (text_lines(), dump_lines());
    mark(&mut t, 4);
    mark(&mut d, 4);
    assert_eq!(
        c(&v2(&t), &d.concat()).unwrap(),
        "7 records equal, 6 lines equal to the byte"
    );
    // Format 2.0 text and the dump disagree: one marks a tag, the other not.
    assert!(
        c(&v2(&text_lines()), &d.concat())
            .unwrap_err()
            .contains("not marked unloaded in both")
    );
    assert!(c(&v2(&t), &dump_lines().concat()).is_err());
    let mut other = dump_lines();
    mark(&mut other, 3);
    assert!(c(&v2(&t), &other.concat()).is_err());
    // Format 1.0 marks none: the dump's marks are no difference.
    c(&text(), &d.concat()).unwrap();
    c(&text_lines().concat(), &d.concat()).unwrap();
    // A text without the header that marks a tag is format 2.0's.
    assert!(c(&t.concat(), &dump_lines().concat()).is_err());
    c(&t.concat(), &d.concat()).unwrap();
}

#[test]
fn frozen_fails_when_the_text_lists_no_tag() {
    // No records, or the header alone, in the text: nothing was compared,
    // whether the dump is empty too or not.
    for empty in [String::new(), head()] {
        for dump in [String::new(), head(), dump_lines().concat()] {
            let e = frozen(&listing(&empty), &listing(&dump)).unwrap_err();
            assert!(e.contains("lists no tag"), "{empty:?} {dump:?}: {e}");
        }
    }
    // A text with tags and an empty dump: a comparison, which fails.
    for dump in [String::new(), head()] {
        let e = frozen(&listing(&text()), &listing(&dump)).unwrap_err();
        assert!(e.contains("expected 7 tags, got 0"), "{e}");
    }
    // One record is enough to compare.
    let one = text_lines()[0].clone();
    assert_eq!(
        frozen(&listing(&one), &listing(&one)).unwrap(),
        "1 records equal, 1 lines equal to the byte"
    );
}

#[test]
fn long_names_lists_the_cut_and_whole_names() {
    assert_eq!(
        long_names(&listing(&text())),
        format!("{CUT_FILE} 7 {CUT_FUNC} {LONG_FILE} {LONG_FUNC}\n")
    );
    let short = text_lines()[..5].concat();
    assert_eq!(long_names(&listing(&short)), "");
    // A long function alone, or a long file alone.
    let one = l(1, 1, &format!("a.c:1 func:{LONG_FUNC}"));
    assert_eq!(
        long_names(&listing(&one)),
        format!("a.c 1 {CUT_FUNC} a.c {LONG_FUNC}\n")
    );
}

#[test]
fn pick_chooses_names_to_filter_by() {
    let t = listing(&text());
    assert_eq!(
        pick(&t, Pick::CommonestFunction).unwrap(),
        "alloc_slab_page"
    );
    assert_eq!(pick(&t, Pick::CommonestFile).unwrap(), "mm/slub.c");
    // The first function by name with one tag.
    assert_eq!(
        pick(&t, Pick::LoneFunction).unwrap(),
        "___kmalloc_large_node"
    );
    let twice = listing(&(l(1, 1, "a.c:1 func:f") + &l(1, 1, "a.c:2 func:f")));
    assert!(pick(&twice, Pick::LoneFunction).is_err());
    assert!(pick(&listing(""), Pick::CommonestFunction).is_err());
}

#[test]
fn site_and_held_size() {
    let t = listing(&text());
    assert_eq!(site(&t, "alloc_slab_page").unwrap(), "mm/slub.c:2412");
    assert_eq!(site(&t, CUT_FUNC).unwrap(), format!("{CUT_FILE}:7"));
    assert!(site(&t, "nothing").is_err());
    let t1 = listing(&text_lines().concat());
    // The last tag with bytes that held still: tag 6 moved, tag 4 did not.
    let t2 = listing(&moved_text(&[6]));
    assert_eq!(
        held_size(&t1, &t2).unwrap(),
        "512 lib/alloctag/tests/modules/alloctag_test.c:120"
    );
    let none = listing(&moved_text(&[0, 1, 4, 6]));
    assert!(held_size(&t1, &none).is_err());
}
