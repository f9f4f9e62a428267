use allocinfo_format::Profile;
use allocinfo_report::{Filter, GroupBy, Key, Query, SortKey, Status};
use proptest::prelude::*;

fn golden(name: &str) -> Profile {
    let path = format!(
        "{}/../allocinfo-format/tests/data/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    Profile::parse(&std::fs::read(path).unwrap()).unwrap()
}

fn site(file: &str, line: u32, module: Option<&str>, function: &str) -> Key {
    Key::Site {
        file: file.into(),
        line,
        module: module.map(Into::into),
        function: function.into(),
        unloaded: false,
    }
}

#[test]
fn top_sorts_by_bytes_and_merges_identical_sites() {
    let p = golden("linux-6.12.txt");
    let r = Query {
        limit: Some(3),
        ..Query::default()
    }
    .top(&p);
    assert_eq!(
        r.matched_rows, 57,
        "58 tags, two of them the same header call site"
    );
    let keys: Vec<String> = r.rows.iter().map(|r| r.key.to_string()).collect();
    assert_eq!(
        keys,
        [
            "drivers/gpu/drm/ttm/ttm_pool.c:99 [ttm] func:ttm_pool_alloc_page",
            "mm/page_ext.c:271 func:alloc_page_ext",
            "mm/slub.c:2478 func:alloc_slab_page",
        ]
    );
    let all = Query::default().top(&p);
    let pte = all
        .rows
        .iter()
        .find(|r| r.key.function() == Some("__pte_alloc_one"))
        .unwrap();
    assert_eq!(
        (pte.sums.bytes, pte.sums.calls, pte.sums.tags),
        (1048576 + 20480, 261, 2)
    );
    assert_eq!(
        all.rows.iter().map(|r| r.sums.bytes).sum::<i64>(),
        p.totals().bytes
    );
}

#[test]
fn sort_by_calls_breaks_ties_by_bytes_then_key() {
    let p = golden("linux-6.12.txt");
    let r = Query {
        sort: SortKey::Calls,
        ..Query::default()
    }
    .top(&p);
    assert_eq!(
        r.rows[0].key,
        site("mm/page_ext.c", 271, None, "alloc_page_ext")
    );
    assert_eq!(
        r.rows[1].key,
        site("fs/kernfs/dir.c", 624, None, "__kernfs_new_node")
    );
    for w in r.rows.windows(2) {
        assert!((w[0].sums.calls, w[0].sums.bytes) >= (w[1].sums.calls, w[1].sums.bytes));
    }
}

#[test]
fn groups_by_module_dir_file_and_function() {
    let p = golden("linux-6.12.txt");
    let by = |group_by| {
        Query {
            group_by,
            ..Query::default()
        }
        .top(&p)
    };

    let modules = by(GroupBy::Module);
    let names: Vec<String> = modules.rows.iter().map(|r| r.key.to_string()).collect();
    assert_eq!(names, ["ttm", "vmlinux", "xfs", "virtio_net"]);
    assert_eq!(modules.rows[2].sums.tags, 1);
    assert_eq!(modules.rows[3].sums.bytes, 4096 + 8320 + 4096 + 4160 + 128);

    let dirs = by(GroupBy::Dir);
    let mm = dirs
        .rows
        .iter()
        .find(|r| r.key == Key::Dir("mm".into()))
        .unwrap();
    let expected: i64 = p
        .tags
        .iter()
        .filter(|t| t.dir() == "mm")
        .map(|t| t.bytes)
        .sum();
    assert_eq!(mm.sums.bytes, expected);
    assert!(dirs.rows.iter().any(|r| r.key == Key::Dir("fs/xfs".into())));

    let files = by(GroupBy::File);
    assert_eq!(
        files
            .rows
            .iter()
            .find(|r| r.key == Key::File("drivers/net/virtio_net.c".into()))
            .unwrap()
            .sums
            .tags,
        5
    );
    let functions = by(GroupBy::Function);
    assert_eq!(
        functions.rows.len(),
        p.tags
            .iter()
            .map(|t| &t.function)
            .collect::<std::collections::BTreeSet<_>>()
            .len()
    );
    for r in [&modules, &dirs, &files, &functions] {
        assert_eq!(
            r.rows.iter().map(|r| r.sums.bytes).sum::<i64>(),
            p.totals().bytes
        );
    }
}

#[test]
fn filters_select_module_file_function_and_size() {
    let p = golden("linux-6.12.txt");
    let run = |filter: Filter| {
        Query {
            filter,
            ..Query::default()
        }
        .top(&p)
    };
    let r = run(Filter {
        modules: vec![
            Filter::pattern("virtio_net").unwrap(),
            Filter::pattern("xfs").unwrap(),
        ],
        ..Filter::default()
    });
    assert_eq!(r.rows.len(), 6);
    let r = run(Filter {
        modules: vec![Filter::pattern("vmlinux").unwrap()],
        ..Filter::default()
    });
    assert!(r.rows.iter().all(|r| r.key.module().is_none()));
    assert_eq!(r.rows.len(), 57 - 7);
    let r = run(Filter {
        files: vec![Filter::pattern("fs/*").unwrap()],
        ..Filter::default()
    });
    assert!(
        r.rows
            .iter()
            .all(|r| r.key.file().unwrap().starts_with("fs/"))
    );
    assert!(
        r.rows
            .iter()
            .any(|r| r.key.file() == Some("fs/xfs/xfs_buf.c")),
        "* crosses directories"
    );
    let r = run(Filter {
        functions: vec![Filter::pattern("*kernfs*").unwrap()],
        ..Filter::default()
    });
    assert!(
        !r.rows.is_empty()
            && r.rows
                .iter()
                .all(|r| r.key.function().unwrap().contains("kernfs"))
    );
    let r = run(Filter {
        min_bytes: Some(10 << 20),
        ..Filter::default()
    });
    assert_eq!(r.rows.len(), 5);
    assert_eq!(r.total, p.totals(), "totals are of the whole profile");
    assert!(Filter::pattern("[").is_err());
}

/// The one rule: exact names or globs; files also by a path suffix that
/// starts after a `/`.
#[test]
fn one_rule_for_names() {
    let p = |s: &str| Filter::pattern(s).unwrap();
    assert!(p("mm/slub.c").matches_path("mm/slub.c"));
    assert!(p("slub.c").matches_path("mm/slub.c"));
    assert!(p("/slub.c").matches_path("mm/slub.c"));
    assert!(
        !p("ub.c").matches_path("mm/slub.c"),
        "suffixes start after a /"
    );
    assert!(!p("mm/").matches_path("mm/slub.c"));
    assert!(p("mm/*").matches_path("mm/kasan/init.c"), "* crosses /");
    assert!(p("alloc_slab_page").matches("alloc_slab_page"));
    assert!(!p("alloc_slab").matches("alloc_slab_page"), "no prefixes");
    assert!(p("alloc_slab*").matches("alloc_slab_page"));
    let f = Filter {
        modules: vec![p("xfs"), p("nope*")],
        files: vec![p("slub.c"), p("nothing.c")],
        functions: vec![p("*kernfs*"), p("no_such_fn")],
        min_bytes: None,
        unloaded: false,
    };
    let tags = golden("linux-6.12.txt").tags;
    assert_eq!(
        f.unmatched(&tags),
        vec![
            ("module", "nope*"),
            ("file", "nothing.c"),
            ("function", "no_such_fn")
        ]
    );
    let err = Filter::pattern("[").unwrap_err();
    let chain = std::iter::successors(Some(&err as &dyn std::error::Error), |e| e.source()).count();
    assert_eq!(chain, 1, "the glob's error is said once: {err}");
}

#[test]
fn diff_reports_growth_new_and_gone_sites() {
    let old = golden("linux-6.12.txt");
    let new = golden("linux-6.12-later.txt");
    let r = Query {
        sort: SortKey::DeltaBytes,
        changed_only: true,
        ..Query::default()
    }
    .diff(&old, &new);
    let summary: Vec<(String, Status, i64, i64)> = r
        .rows
        .iter()
        .map(|r| {
            let c = r.change.as_ref().unwrap();
            (
                r.key.function().unwrap().to_owned(),
                c.status,
                c.delta_bytes,
                c.delta_calls,
            )
        })
        .collect();
    assert_eq!(
        summary,
        [
            ("alloc_slab_page".into(), Status::Changed, 2097152, 512),
            ("xprt_alloc_slot".into(), Status::New, 65536, 16),
            ("__kernfs_new_node".into(), Status::Changed, 12800, 100),
            (
                "page_cache_ra_unbounded".into(),
                Status::Changed,
                -1048576,
                -256
            ),
            ("ttm_pool_alloc_page".into(), Status::Gone, -4294967296, -1),
        ]
    );
    let gone = r.rows.last().unwrap();
    assert_eq!(
        (gone.sums.bytes, gone.change.as_ref().unwrap().old_bytes),
        (0, 4294967296)
    );
    assert_eq!(r.old_total, Some(old.totals()));
    assert_eq!(
        (
            r.counts.new,
            r.counts.gone,
            r.counts.changed,
            r.counts.unchanged
        ),
        (1, 1, 3, 0)
    );
    assert_eq!(r.total, new.totals());

    let all = Query {
        sort: SortKey::DeltaBytes,
        ..Query::default()
    }
    .diff(&old, &new);
    assert_eq!(all.rows.len(), 57 + 1);
    assert_eq!(all.counts.unchanged, 53);
    assert_eq!(
        all.rows
            .iter()
            .filter(|r| r.change.as_ref().unwrap().status == Status::Unchanged)
            .count(),
        53
    );
}

#[test]
fn diff_of_a_profile_with_itself_is_empty_when_changed_only() {
    let p = golden("linux-2.0.txt");
    let r = Query {
        changed_only: true,
        ..Query::default()
    }
    .diff(&p, &p);
    assert!(r.rows.is_empty());
    let r = Query {
        group_by: GroupBy::Module,
        ..Query::default()
    }
    .diff(&p, &p);
    assert!(
        r.rows
            .iter()
            .all(|r| r.change.as_ref().unwrap().delta_bytes == 0)
    );
}

#[test]
fn inaccurate_and_extra_pairs_survive_grouping() {
    let p = golden("linux-2.0.txt");
    let r = Query {
        group_by: GroupBy::Dir,
        ..Query::default()
    }
    .top(&p);
    let mm = r
        .rows
        .iter()
        .find(|r| r.key == Key::Dir("mm".into()))
        .unwrap();
    assert!(!mm.sums.accurate);
    assert!(mm.sums.extra.contains(&("accurate".into(), "no".into())));
    assert!(mm.sums.extra.contains(&("hint".into(), "percpu".into())));
    let kernel = r
        .rows
        .iter()
        .find(|r| r.key == Key::Dir("kernel".into()))
        .unwrap();
    assert!(kernel.sums.accurate);
}

fn profile(lines: &str) -> Profile {
    Profile::parse(format!("allocinfo - version: 2.0\n#\n{lines}").as_bytes()).unwrap()
}

/// Module foo unloaded with a live allocation and loaded again, bar
/// unloaded for good, built-in code.
const UNLOADED: &str = "\
    4096 1 drivers/foo.c:12 [foo] func:foo_probe unloaded:yes \n\
    8192 2 drivers/foo.c:12 [foo] func:foo_probe \n\
    512 1 drivers/bar.c:7 [bar] func:bar_init accurate:no unloaded:yes \n\
    64 1 mm/slub.c:1 func:f \n";

#[test]
fn unloaded_instances_are_rows_of_their_own_until_folded() {
    let p = profile(UNLOADED);
    let rows = |q: Query| {
        q.top(&p)
            .rows
            .iter()
            .map(|r| {
                (
                    r.key.to_string(),
                    r.sums.bytes,
                    r.sums.calls,
                    r.sums.unloaded,
                )
            })
            .collect::<Vec<_>>()
    };
    let foo = "drivers/foo.c:12 [foo] func:foo_probe";
    let bar = "drivers/bar.c:7 [bar] func:bar_init";
    assert_eq!(
        rows(Query::default()),
        [
            (foo.into(), 8192, 2, false),
            (foo.into(), 4096, 1, true),
            (bar.into(), 512, 1, true),
            ("mm/slub.c:1 func:f".into(), 64, 1, false),
        ]
    );
    let top = Query::default().top(&p);
    assert_ne!(top.rows[0].key, top.rows[1].key, "two instances, two keys");
    assert_eq!(top.rows[1].sums.extra, [("unloaded".into(), "yes".into())]);
    // Folded: one row per call site, unloaded only if every part was.
    let fold = Query {
        fold: true,
        ..Query::default()
    };
    assert_eq!(
        rows(fold.clone()),
        [
            (foo.into(), 12288, 3, false),
            (bar.into(), 512, 1, true),
            ("mm/slub.c:1 func:f".into(), 64, 1, false),
        ]
    );
    let folded = fold.top(&p);
    assert_eq!(
        (folded.rows[0].sums.tags, folded.rows[0].key.clone()),
        (2, site("drivers/foo.c", 12, Some("foo"), "foo_probe"))
    );
    assert!(
        folded.rows[0].sums.extra.is_empty(),
        "no unloaded:yes in a row with a loaded part"
    );
    assert!(!folded.rows[1].sums.accurate);
    // The other groupings sum the instances, folded or not.
    for fold in [false, true] {
        let by_module = Query {
            group_by: GroupBy::Module,
            fold,
            ..Query::default()
        };
        let m: Vec<_> = by_module
            .top(&p)
            .rows
            .iter()
            .map(|r| (r.key.to_string(), r.sums.unloaded))
            .collect();
        assert_eq!(
            m,
            [
                ("foo".into(), false),
                ("bar".into(), true),
                ("vmlinux".into(), false)
            ]
        );
    }
    // Only the unloaded modules' tags; folded, foo's unloaded part alone.
    let only = |fold| Query {
        filter: Filter {
            unloaded: true,
            ..Filter::default()
        },
        fold,
        ..Query::default()
    };
    let want = [(foo.into(), 4096, 1, true), (bar.into(), 512, 1, true)];
    assert_eq!(rows(only(false)), want);
    assert_eq!(rows(only(true)), want);
}

#[test]
fn a_module_unloaded_between_two_profiles() {
    let old = profile("4096 1 drivers/foo.c:12 [foo] func:foo_probe \n64 1 mm/slub.c:1 func:f \n");
    let new = profile(
        "4096 1 drivers/foo.c:12 [foo] func:foo_probe unloaded:yes \n64 1 mm/slub.c:1 func:f \n",
    );
    let d = Query::default().diff(&old, &new);
    let status: Vec<_> = d
        .rows
        .iter()
        .map(|r| (r.change.as_ref().unwrap().status, r.sums.unloaded))
        .collect();
    assert_eq!(
        status,
        [
            (Status::New, true),
            (Status::Unchanged, false),
            (Status::Gone, false)
        ]
    );
    let folded = Query {
        fold: true,
        changed_only: true,
        ..Query::default()
    }
    .diff(&old, &new);
    assert!(
        folded.rows.is_empty(),
        "folded, the call site did not change"
    );
    // Freed at last: the unloaded instance is gone, and still marked.
    let freed = profile("64 1 mm/slub.c:1 func:f \n");
    let d = Query::default().diff(&new, &freed);
    let gone = d
        .rows
        .iter()
        .find(|r| r.change.as_ref().unwrap().status == Status::Gone)
        .unwrap();
    assert!(gone.sums.unloaded && gone.sums.bytes == 0);
}

#[test]
fn fold_tags_sums_the_instances_of_each_call_site() {
    let p = profile(&format!(
        "{UNLOADED}16 1 drivers/bar.c:7 [bar] func:bar_init unloaded:yes hint:x \n"
    ));
    let folded: Vec<String> = allocinfo_report::fold_tags(&p.tags)
        .iter()
        .map(|t| t.to_string())
        .collect();
    assert_eq!(
        folded,
        [
            "       12288        3 drivers/foo.c:12 [foo] func:foo_probe ",
            "         528        2 drivers/bar.c:7 [bar] func:bar_init accurate:no unloaded:yes hint:x ",
            "          64        1 mm/slub.c:1 func:f ",
        ]
    );
    let unloaded: Vec<_> = p.tags.iter().filter(|t| t.is_unloaded()).cloned().collect();
    let folded = allocinfo_report::fold_tags(&unloaded);
    assert_eq!(folded.len(), 2);
    assert!(folded.iter().all(|t| t.is_unloaded()));
    assert_eq!(allocinfo_report::fold_tags(&[]), []);
}

#[test]
fn names_parse_and_sort_keys_cycle() {
    assert_eq!("dir".parse::<GroupBy>().unwrap(), GroupBy::Dir);
    let e = "directory".parse::<GroupBy>().unwrap_err().to_string();
    assert_eq!(
        e,
        "unknown grouping \"directory\" (expected one of: site, module, dir, file, function, tree)"
    );
    assert_eq!(
        "delta-calls".parse::<SortKey>().unwrap(),
        SortKey::DeltaCalls
    );
    let mut k = SortKey::Bytes;
    let seen: Vec<_> = (0..5)
        .map(|_| {
            k = k.next();
            k
        })
        .collect();
    assert_eq!(
        seen,
        [
            SortKey::Calls,
            SortKey::DeltaBytes,
            SortKey::DeltaCalls,
            SortKey::Name,
            SortKey::Bytes
        ]
    );
}

proptest! {
    /// Grouping never loses or invents bytes, whatever the grouping.
    #[test]
    fn grouping_preserves_totals(values in proptest::collection::vec((-1000i64..1_000_000, 0u64..1000, 0usize..4, 0usize..3), 0..60)) {
        let files = ["mm/slub.c", "mm/percpu.c", "fs/xfs/xfs_buf.c", "lib/rhashtable.c"];
        let modules = [None, Some("xfs"), Some("kvm")];
        let text = values.iter().enumerate().fold(String::from("allocinfo - version: 1.0\n#\n"), |acc, (i, (b, c, f, m))| {
            let module = modules[*m].map(|m| format!(" [{m}]")).unwrap_or_default();
            acc + &format!("{b} {c} {}:{} {module} func:f{} \n", files[*f], i % 7, i % 5)
        });
        let p = Profile::parse(text.as_bytes()).unwrap();
        // The tree's rows overlap: its top-level prefixes partition the tags.
        let top = |r: &&allocinfo_report::Row| match &r.key {
            Key::Tree(prefix) => prefix.matches('/').count() == 1,
            _ => true,
        };
        for group_by in GroupBy::ALL {
            let r = Query { group_by, ..Query::default() }.top(&p);
            prop_assert_eq!(r.rows.iter().filter(top).map(|r| r.sums.bytes).sum::<i64>(), p.totals().bytes);
            prop_assert_eq!(r.rows.iter().filter(top).map(|r| r.sums.tags).sum::<usize>(), p.tags.len());
            // The diff against an empty profile is growth by everything.
            let empty = Profile { version: p.version, tags: vec![] };
            let d = Query { group_by, ..Query::default() }.diff(&empty, &p);
            prop_assert!(d.rows.iter().all(|r| r.change.as_ref().unwrap().status == allocinfo_report::Status::New));
            prop_assert_eq!(d.rows.iter().filter(top).map(|r| r.change.as_ref().unwrap().delta_bytes).sum::<i64>(), p.totals().bytes);
        }
    }
}

/// alloctop's tree view: every path prefix holds all below it.
#[test]
fn tree_totals_by_path_prefix_and_name_order() {
    let p = golden("linux-6.12.txt");
    let tree = Query {
        group_by: GroupBy::Tree,
        sort: SortKey::Name,
        ..Query::default()
    }
    .top(&p);
    let row = |k: &str| {
        tree.rows
            .iter()
            .find(|r| r.key == Key::Tree(k.into()))
            .unwrap_or_else(|| panic!("no {k}"))
            .sums
            .clone()
    };
    let under = |prefix: &str| -> i64 {
        p.tags
            .iter()
            .filter(|t| t.file.starts_with(prefix))
            .map(|t| t.bytes)
            .sum()
    };
    assert_eq!(row("fs/").bytes, under("fs/"));
    assert_eq!(row("fs/kernfs/").bytes, under("fs/kernfs/"));
    assert!(row("fs/").bytes > row("fs/kernfs/").bytes);
    assert_eq!(
        row("fs/").tags,
        p.tags.iter().filter(|t| t.file.starts_with("fs/")).count()
    );
    // Name order: a prefix comes before what is under it.
    let names: Vec<String> = tree.rows.iter().map(|r| r.key.to_string()).collect();
    let mut sorted = names.clone();
    sorted.sort();
    assert_eq!(names, sorted);
    let fs = names.iter().position(|n| n == "fs/").unwrap();
    assert!(names[fs + 1].starts_with("fs/"), "{names:?}");
    // Reversed: Z to A; and numbers smallest first.
    let rev = Query {
        group_by: GroupBy::Tree,
        sort: SortKey::Name,
        reverse: true,
        ..Query::default()
    }
    .top(&p);
    let mut back: Vec<String> = rev.rows.iter().map(|r| r.key.to_string()).collect();
    back.reverse();
    assert_eq!(back, names);
    let small_first = Query {
        reverse: true,
        ..Query::default()
    }
    .top(&p);
    let bytes: Vec<i64> = small_first.rows.iter().map(|r| r.sums.bytes).collect();
    assert!(bytes.windows(2).all(|w| w[0] <= w[1]), "{bytes:?}");
    // Sites by line as a number, not as text.
    let sites = Query {
        sort: SortKey::Name,
        ..Query::default()
    }
    .top(&p);
    assert!(sites.rows.windows(2).all(|w| w[0].key <= w[1].key));
}
