//! `GET_SPLIT` walks against the fake kernel: every tag with its shares,
//! the CPU condition, the errors a CLI must tell apart.

use allocinfo_format::Profile;
use allocinfo_ioctl::abi::{
    ALLOCINFO_SPLIT_CPU, ALLOCINFO_SPLIT_NEXT, ALLOCINFO_SPLIT_NODE, AllocinfoFilter,
    AllocinfoGetSplit, AllocinfoSplitEntry,
};
use allocinfo_ioctl::fake::FakeKernel;
use allocinfo_ioctl::{Device, Error, SplitSpec, walk, walk_split};
use std::path::Path;

fn kernel() -> FakeKernel {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../allocinfo-format/tests/data/linux-6.12.txt");
    let profile = Profile::parse(&std::fs::read(path).unwrap()).unwrap();
    FakeKernel::new(&profile.tags)
}

const CPU: SplitSpec = SplitSpec {
    by: ALLOCINFO_SPLIT_CPU,
    at: None,
};

#[test]
fn split_walks_give_every_tag_with_shares_that_add_up() {
    let mut k = kernel();
    let plain = walk(&mut k, &AllocinfoFilter::NONE, 4).unwrap();
    let split = walk_split(&mut k, &AllocinfoFilter::NONE, &CPU, 4).unwrap();
    assert_eq!((split.width, split.attempts), (4, 1));
    let tags: Vec<_> = split.tags.iter().map(|t| t.data).collect();
    assert_eq!(tags, plain.tags);
    for t in &split.tags {
        assert_eq!(t.shares.len(), 4);
        let bytes: i64 = t.shares.iter().map(|s| s.bytes).sum();
        let calls: i64 = t.shares.iter().map(|s| s.calls).sum();
        assert_eq!(
            (bytes, calls),
            (t.data.counter.bytes as i64, t.data.counter.calls as i64)
        );
    }
    assert!(
        split
            .tags
            .iter()
            .any(|t| t.shares.iter().any(|s| s.bytes < 0))
    );
    // Modules loading during the walk: walked again.
    let mut k = kernel();
    k.module_loads_at = vec![2];
    let again = walk_split(&mut k, &AllocinfoFilter::NONE, &CPU, 4).unwrap();
    assert_eq!(again.attempts, 2);
    assert!(again.tags == split.tags);
}

#[test]
fn split_walks_at_a_cpu_keep_the_tags_holding_enough_there() {
    let mut k = kernel();
    let all = walk_split(&mut k, &AllocinfoFilter::NONE, &CPU, 4).unwrap();
    let spec = SplitSpec {
        at: Some((1, 4096)),
        ..CPU
    };
    let some = walk_split(&mut k, &AllocinfoFilter::NONE, &spec, 4).unwrap();
    let want: Vec<_> = all
        .tags
        .iter()
        .filter(|t| t.shares[1].bytes >= 4096)
        .cloned()
        .collect();
    assert!(!want.is_empty() && want.len() < all.tags.len());
    assert_eq!(some.tags, want);
}

#[test]
fn split_errors_say_what_the_kernel_cannot_do() {
    let mut k = kernel();
    let node = SplitSpec {
        by: ALLOCINFO_SPLIT_NODE,
        at: None,
    };
    let e = walk_split(&mut k, &AllocinfoFilter::NONE, &node, 4).unwrap_err();
    assert!(matches!(e, Error::SplitNotCounted("node")), "{e:?}");
    assert_eq!(
        e.to_string(),
        "this kernel does not count allocations per node: per-node counting is off \
         (alloctag.per_node=on at boot, or 1 in /proc/sys/vm/mem_profiling_per_node before \
         profiling first turns on) (EOPNOTSUPP)"
    );
    let beyond = SplitSpec {
        at: Some((4, 0)),
        ..CPU
    };
    let e = walk_split(&mut k, &AllocinfoFilter::NONE, &beyond, 4).unwrap_err();
    assert!(
        matches!(&e, Error::Request { error, .. } if error.raw_os_error() == Some(libc::EINVAL)),
        "{e:?}"
    );
    // Interrupted requests are repeated.
    k.interrupt_once = true;
    assert!(walk_split(&mut k, &AllocinfoFilter::NONE, &CPU, 4).is_ok());
    // A mainline kernel: GET_AT works, GET_SPLIT is ENOTTY.
    k.cpus = 0;
    let e = walk_split(&mut k, &AllocinfoFilter::NONE, &CPU, 4).unwrap_err();
    assert!(matches!(e, Error::NoSplit), "{e:?}");
}

#[test]
fn get_split_asks_for_room_and_refuses_too_little() {
    let mut k = kernel();
    let mut req = AllocinfoGetSplit::new(0, AllocinfoFilter::NONE, ALLOCINFO_SPLIT_CPU, -1, 0, 0);
    k.get_split(&mut req, &mut []).unwrap();
    assert_eq!(req.nr, 4);
    let mut room = [AllocinfoSplitEntry::default(); 3];
    req.nr = 3;
    let e = k.get_split(&mut req, &mut room).unwrap_err();
    assert_eq!(e.raw_os_error(), Some(libc::EINVAL));
    // NEXT before any split was set; unknown flags.
    let mut k = kernel();
    let mut room = [AllocinfoSplitEntry::default(); 4];
    let mut req = AllocinfoGetSplit::new(0, AllocinfoFilter::NONE, ALLOCINFO_SPLIT_CPU, -1, 0, 4);
    req.flags = ALLOCINFO_SPLIT_NEXT;
    let e = k.get_split(&mut req, &mut room).unwrap_err();
    assert_eq!(e.raw_os_error(), Some(libc::EINVAL));
    req.flags = 2;
    let e = k.get_split(&mut req, &mut room).unwrap_err();
    assert_eq!(e.raw_os_error(), Some(libc::EINVAL));
}
