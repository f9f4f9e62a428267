//! `--split` against the fake kernel (`allocinfo_ioctl::fake`): its shares
//! in every format, their changes in `watch`, and the errors.

use super::*;
use crate::cli::{Cli, Cmd};
use allocinfo_ioctl::abi::AllocinfoSplitEntry;
use allocinfo_ioctl::fake::FakeKernel;
use allocinfo_output::{Command, Format, Meta, TableOptions};
use allocinfo_report::SortKey;
use clap::Parser;
use std::cell::RefCell;
use std::path::PathBuf;
use std::rc::Rc;

fn data() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../allocinfo-format/tests/data/linux-6.12.txt")
}

fn kernel() -> FakeKernel {
    FakeKernel::new(&crate::input::load(&data()).unwrap().profile.tags)
}

const CPU: SplitSpec = SplitSpec {
    by: ALLOCINFO_SPLIT_CPU,
    at: None,
};

fn query(by: GroupBy) -> Query {
    Query {
        filter: Default::default(),
        group_by: by,
        sort: SortKey::Bytes,
        limit: Some(3),
        changed_only: false,
        reverse: false,
        fold: false,
    }
}

fn meta(command: Command) -> Meta {
    let source = allocinfo_output::Source {
        path: via::PROC.into(),
        version: allocinfo_format::Version { major: 1, minor: 0 },
    };
    Meta {
        command,
        source: source.clone(),
        old_source: (command != Command::Top).then_some(source),
    }
}

fn render(format: Format, report: &allocinfo_report::Report, splits: &Splits, m: &Meta) -> String {
    let mut out = Vec::new();
    let opts = TableOptions::default();
    allocinfo_output::write_split(&mut out, format, report, m, &opts, None, Some(splits)).unwrap();
    String::from_utf8(out).unwrap()
}

/// `top --split cpu`: each site's shares that are not zero, in each format.
#[test]
fn top_split_prints_the_shares_in_every_format() {
    let (loaded, tagged, walks) = read(&mut kernel(), &data(), &CPU).unwrap();
    assert_eq!(walks, 1);
    let mut q = query(GroupBy::Site);
    q.limit = Some(5);
    let report = q.top(&loaded.profile);
    let splits = splits(SplitBy::Cpu, &q, &tagged);
    let m = meta(Command::Top);

    // Each row's shares that are not zero under it, in its columns; a
    // negative share too.
    let table = render(Format::Table, &report, &splits, &m);
    let want = "\
/proc/allocinfo (format 1.0): 4.3 GiB in 90931 calls at 58 call sites
  BYTES  CALLS  SHARE  CALL SITE
4.0 GiB      1  94.7%  drivers/gpu/drm/ttm/ttm_pool.c:99 [ttm] func:ttm_pool_alloc_page
4.0 GiB      1           cpu1
123 MiB  31251   2.8%  mm/page_ext.c:271 func:alloc_page_ext
123 MiB  31250           cpu0
4.0 KiB      1           cpu1
 55 MiB   4887   1.3%  mm/slub.c:2478 func:alloc_slab_page
 55 MiB   4886           cpu1
 12 KiB      1           cpu2
 16 MiB   3844   0.3%  mm/readahead.c:247 func:page_cache_ra_unbounded
4.0 KiB      1           cpu0
 16 MiB   3843           cpu3
 14 MiB   3520   0.3%  mm/mm_init.c:2434 func:alloc_large_system_hash
  -64 B     -1           cpu0
 14 MiB   3520           cpu2
4.1 KiB      1           cpu3
(5 of 57 rows; -n 0 shows all)
";
    assert_eq!(table, want);

    let json: serde_json::Value =
        serde_json::from_str(&render(Format::Json, &report, &splits, &m)).unwrap();
    assert_eq!(
        json["rows"][1]["split"],
        serde_json::json!([
            {"cpu": 0, "bytes": 128000000, "calls": 31250},
            {"cpu": 1, "bytes": 4096, "calls": 1}
        ])
    );
    assert_eq!(json["rows"][4]["split"][0]["bytes"], -64);

    let csv = render(Format::Csv, &report, &splits, &m);
    let rows: Vec<&str> = csv.lines().collect();
    assert!(
        rows[0].ends_with(",unloaded,cpu,cpu_bytes,cpu_calls"),
        "{csv}"
    );
    assert!(rows[1].ends_with(",true,false,1,4294967296,1"), "{csv}");
    assert!(rows[2].ends_with(",true,false,0,128000000,31250"), "{csv}");
    assert!(rows[3].ends_with(",true,false,1,4096,1"), "{csv}");
    assert_eq!(rows.len(), 1 + 1 + 2 + 2 + 2 + 3);

    let prom = render(Format::Prometheus, &report, &splits, &m);
    assert!(
        prom.contains("# TYPE allocinfo_split_bytes gauge"),
        "{prom}"
    );
    assert!(prom.contains(
        "allocinfo_split_bytes{file=\"mm/page_ext.c\",line=\"271\",module=\"\",function=\"alloc_page_ext\",cpu=\"1\"} 4096"
    ), "{prom}");
    assert!(prom.contains(
        "allocinfo_split_calls{file=\"mm/mm_init.c\",line=\"2434\",module=\"\",function=\"alloc_large_system_hash\",cpu=\"0\"} -1"
    ), "{prom}");
}

/// Rows of modules (or any grouping) sum their call sites' shares; the
/// shares add up to the row's figures.
#[test]
fn grouped_rows_sum_the_shares() {
    let (loaded, tagged, _) = read(&mut kernel(), &data(), &CPU).unwrap();
    for by in [GroupBy::Module, GroupBy::File, GroupBy::Tree] {
        let mut q = query(by);
        q.limit = None;
        let report = q.top(&loaded.profile);
        let d = dense(&q, &tagged);
        for row in &report.rows {
            let bytes: i64 = d[&row.key].iter().map(|s| s[0]).sum();
            assert_eq!(bytes, row.sums.bytes, "{by:?} {}", row.key);
        }
    }
}

/// `--at 1 --min-at 4096`: the kernel walks only the sites holding that
/// much on CPU 1.
#[test]
fn at_a_cpu_keeps_the_sites_holding_enough_there() {
    let spec = SplitSpec {
        at: Some((1, 4096)),
        ..CPU
    };
    let (loaded, tagged, _) = read(&mut kernel(), &data(), &spec).unwrap();
    assert!(!tagged.is_empty());
    assert!(tagged.iter().all(|(_, s)| s[1][0] >= 4096));
    let (all, _, _) = read(&mut kernel(), &data(), &CPU).unwrap();
    assert!(loaded.profile.tags.len() < all.profile.tags.len());
    // The fake kernel has 4 CPUs.
    let past = SplitSpec {
        at: Some((4, 1)),
        ..CPU
    };
    let e = read(&mut kernel(), &data(), &past).unwrap_err();
    assert!(
        format!("{e:#}").ends_with(": --at 4: no such CPU (EINVAL)"),
        "{e:#}"
    );
}

/// A `Device` the test keeps a hand on while `watch` reads it.
struct Shared(Rc<RefCell<FakeKernel>>);

impl Device for Shared {
    fn content_id(&mut self) -> std::io::Result<u64> {
        self.0.borrow_mut().content_id()
    }
    fn get_at(&mut self, r: &mut allocinfo_ioctl::abi::AllocinfoGetAt) -> std::io::Result<()> {
        self.0.borrow_mut().get_at(r)
    }
    fn get_next(&mut self, d: &mut allocinfo_ioctl::abi::AllocinfoTagData) -> std::io::Result<()> {
        self.0.borrow_mut().get_next(d)
    }
    fn get_split(
        &mut self,
        r: &mut allocinfo_ioctl::abi::AllocinfoGetSplit,
        e: &mut [AllocinfoSplitEntry],
    ) -> std::io::Result<()> {
        self.0.borrow_mut().get_split(r, e)
    }
}

/// `watch --split cpu`: the change of each share between two reads.
#[test]
fn watch_split_compares_share_by_share() {
    let k = Rc::new(RefCell::new(kernel()));
    let mut reader = SplitReader::new(Box::new(Shared(Rc::clone(&k))), SplitBy::Cpu, CPU);
    let first = reader.advance(&data(), None).unwrap();
    let q = query(GroupBy::Site);
    let s = reader.changes(&q);
    assert!(s.changes);
    // The first frame: nothing changed.
    let key = q.key(&first.profile.tags[0]);
    assert!(s.get(&key).iter().all(|s| s.delta == Some([0, 0])));
    // 8 KiB more on CPU 3, 4 KiB freed on CPU 0 of alloc_page_ext.
    {
        let mut k = k.borrow_mut();
        k.tags[0].counter.bytes += 4096;
        k.tags[0].counter.calls += 1;
        let shares = [[128000000 - 4096, 31249], [4096, 1], [0, 0], [8192, 1]];
        k.shares.insert(
            0,
            shares
                .map(|[bytes, calls]| AllocinfoSplitEntry { bytes, calls })
                .to_vec(),
        );
    }
    let second = reader.advance(&data(), None).unwrap();
    let report = q.diff(&first.profile, &second.profile);
    let s = reader.changes(&q);
    let d: Vec<_> = s
        .get(&key)
        .iter()
        .map(|s| (s.index, s.delta.unwrap()))
        .collect();
    assert_eq!(d, [(0, [-4096, -1]), (1, [0, 0]), (3, [8192, 1])]);
    let m = meta(Command::Watch);
    let table = render(Format::Table, &report, &s, &m);
    let rows: Vec<&str> = table.lines().skip(3).take(6).collect();
    assert_eq!(
        rows,
        [
            "     0 B       0  4.0 GiB      1          drivers/gpu/drm/ttm/ttm_pool.c:99 [ttm] func:ttm_pool_alloc_page",
            "     0 B       0  4.0 GiB      1            cpu1",
            "+4.0 KiB      +1  123 MiB  31252          mm/page_ext.c:271 func:alloc_page_ext",
            "-4.0 KiB      -1  123 MiB  31249            cpu0",
            "     0 B       0  4.0 KiB      1            cpu1",
            "+8.0 KiB      +1  8.0 KiB      1            cpu3",
        ]
    );
    let json: serde_json::Value =
        serde_json::from_str(&render(Format::Json, &report, &s, &m)).unwrap();
    assert_eq!(
        json["rows"][1]["split"][2],
        serde_json::json!({"cpu": 3, "bytes": 8192, "calls": 1, "delta_bytes": 8192, "delta_calls": 1})
    );
    let csv = render(Format::Csv, &report, &s, &m);
    assert!(
        csv.lines()
            .next()
            .unwrap()
            .ends_with(",cpu_delta_bytes,cpu_delta_calls")
    );
    assert!(
        csv.lines()
            .any(|l| l.ends_with(",0,127995904,31249,-4096,-1")),
        "{csv}"
    );
    let prom = render(Format::Prometheus, &report, &s, &m);
    assert!(
        prom.contains("function=\"alloc_page_ext\",cpu=\"0\"} -4096"),
        "{prom}"
    );
}

/// By node: today's kernels do not count per node, and say so.
#[test]
fn by_node_says_the_kernel_does_not_count_per_node_yet() {
    let node = SplitSpec {
        by: ALLOCINFO_SPLIT_NODE,
        at: None,
    };
    let e = read(&mut kernel(), &data(), &node).unwrap_err();
    assert!(
        format!("{e:#}")
            .contains("this kernel does not count allocations per node: per-node counting is off"),
        "{e:#}"
    );
    let mut k = kernel();
    k.cpus = 0;
    let e = read(&mut k, &data(), &CPU).unwrap_err();
    assert!(
        format!("{e:#}").contains("no ALLOCINFO_IOC_GET_SPLIT"),
        "{e:#}"
    );
}

fn usage_error(args: &[&str]) -> String {
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => return e.to_string(),
    };
    let r = match cli.command {
        Cmd::Top(a) => a.validate(),
        Cmd::Diff(a) => a.validate(),
        Cmd::Watch(a) => a.validate(),
        _ => unreachable!(),
    };
    let e = r.unwrap_err();
    assert!(e.downcast_ref::<crate::messages::Usage>().is_some(), "{e}");
    e.to_string()
}

#[test]
fn split_usage_errors() {
    let e = usage_error(&["allocinfo", "top", "--at", "1"]);
    assert!(
        e.starts_with("--at selects by the figures of one CPU or node"),
        "{e}"
    );
    let e = usage_error(&["allocinfo", "watch", "--min-at", "4K"]);
    assert!(e.starts_with("--min-at selects"), "{e}");
    let e = usage_error(&["allocinfo", "top", "--split", "cpu", "--min-at", "4K"]);
    assert!(e.starts_with("--min-at needs --at"), "{e}");
    let e = usage_error(&["allocinfo", "top", "--split", "cpu", "--at", "-1"]);
    assert!(
        e.contains("invalid CPU or node -1: CPUs and nodes are numbered from 0"),
        "{e}"
    );
    let e = usage_error(&["allocinfo", "top", "--split", "cpu", "snapshot.txt"]);
    assert!(
        e.contains("profiles saved as text have none (not snapshot.txt)"),
        "{e}"
    );
    let e = usage_error(&["allocinfo", "top", "--split", "cpu", "--via", "text"]);
    assert!(
        e.contains("per CPU through the ioctl: not with --via text"),
        "{e}"
    );
    // watch reads the kernel's shares each frame: not from a file's pairs.
    let e = usage_error(&["allocinfo", "watch", "--split", "node", "snapshot.txt"]);
    assert!(
        e.contains("profiles saved as text have none (not snapshot.txt)"),
        "{e}"
    );
    let e = usage_error(&[
        "allocinfo",
        "diff",
        "--split",
        "node",
        "--at",
        "1",
        "a.txt",
        "b.txt",
    ]);
    assert!(e.starts_with("--at selects call sites by one read"), "{e}");
    let e = usage_error(&["allocinfo", "diff", "--split", "cpu", "a.txt", "b.txt"]);
    assert!(e.contains("use watch --split cpu"), "{e}");
    let e = usage_error(&["allocinfo", "diff", "--at", "0", "a.txt", "b.txt"]);
    assert!(e.starts_with("--at selects"), "{e}");
}
