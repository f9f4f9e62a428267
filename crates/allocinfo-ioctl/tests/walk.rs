//! Walks against the fake kernel (`allocinfo_ioctl::fake`), which
//! implements the ioctls as the header describes them, apart from
//! `TagFilter::matches`: the ioctl path and the text path must give the same
//! tags. And one real ioctl, on a
//! regular file, which the host kernel answers with ENOTTY.

use allocinfo_format::{Profile, Tag};
use allocinfo_ioctl::abi::AllocinfoFilter;
use allocinfo_ioctl::fake::FakeKernel;
use allocinfo_ioctl::{Error, ProcFile, TagFilter, as_reported, decode, walk};
use std::path::Path;

fn profile(name: &str) -> Profile {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../allocinfo-format/tests/data")
        .join(name);
    Profile::parse(&std::fs::read(path).unwrap()).unwrap()
}

/// A profile with the shapes that matter: modules, accurate:no, unloaded
/// modules (one reloaded: its call site twice), names of 63 bytes and
/// longer, negative bytes, a tag twice.
fn tags() -> Vec<Tag> {
    let mut tags = profile("linux-2.0.txt").tags;
    tags.extend(profile("linux-6.12.txt").tags);
    let unloaded = "allocinfo - version: 2.0\n#\n\
         4096 1 drivers/foo.c:12 [foo] func:foo_probe unloaded:yes \n\
         8192 2 drivers/foo.c:12 [foo] func:foo_probe \n\
         512 1 drivers/bar.c:7 [bar] func:bar_init accurate:no unloaded:yes \n";
    tags.extend(Profile::parse(unloaded.as_bytes()).unwrap().tags);
    let long_fn = format!("alloctag_rust_sample::{}::allocate", "Inner".repeat(12));
    let long_file = format!("drivers/{}/x.c", "deep/".repeat(14));
    let extra = format!(
        "allocinfo - version: 2.0\n#\n\
         64 1 {long_file}:10 [alloctag_rust_sample] func:{long_fn} \n\
         128 2 a/{long_file}:10 [alloctag_rust_sample] func:x{long_fn} accurate:no \n\
         -4096 1 mm/slub.c:1 func:{} \n",
        "f".repeat(63)
    );
    tags.extend(Profile::parse(extra.as_bytes()).unwrap().tags);
    tags
}

/// Filters from the tags' own values, and edges of the sizes.
fn filters(tags: &[Tag]) -> Vec<TagFilter> {
    let d = TagFilter::default;
    let mut v = vec![d()];
    for t in tags {
        v.push(TagFilter {
            module: Some(t.module.clone().unwrap_or_default()),
            ..d()
        });
        v.push(TagFilter {
            function: Some(t.function.clone()),
            ..d()
        });
        v.push(TagFilter {
            file: Some(t.file.clone()),
            line: Some(t.line.into()),
            ..d()
        });
        v.push(TagFilter {
            min_size: Some(t.bytes as u64),
            ..d()
        });
        v.push(TagFilter {
            max_size: Some(t.bytes as u64),
            accurate: Some(t.is_accurate()),
            ..d()
        });
        v.push(TagFilter {
            function: Some(t.function.clone()),
            unloaded: true,
            ..d()
        });
    }
    v.push(TagFilter {
        unloaded: true,
        ..d()
    });
    v.push(TagFilter {
        accurate: Some(false),
        ..d()
    });
    v.push(TagFilter {
        module: Some("no_such_module".into()),
        ..d()
    });
    v.push(TagFilter {
        min_size: Some(4096),
        max_size: Some(1 << 20),
        ..d()
    });
    v
}

#[test]
fn walks_give_what_filtering_the_text_gives() {
    let tags = tags();
    let mut kernel = FakeKernel::new(&tags);
    let mut nonempty = 0;
    for f in filters(&tags) {
        let w = walk(&mut kernel, &f.to_abi(), 4).unwrap();
        assert_eq!((w.attempts, w.content_id), (1, 7));
        let got: Vec<Tag> = w.tags.iter().map(|d| decode(d).unwrap()).collect();
        let want: Vec<Tag> = tags
            .iter()
            .filter(|t| f.matches(t))
            .map(as_reported)
            .collect();
        assert_eq!(got, want, "{f:?}");
        nonempty += usize::from(!got.is_empty());
    }
    assert!(nonempty > 100);
    // The unloaded modules' tags, by the filter bit alone.
    let unloaded = TagFilter {
        unloaded: true,
        ..Default::default()
    };
    let w = walk(&mut kernel, &unloaded.to_abi(), 1).unwrap();
    let got: Vec<String> = w
        .tags
        .iter()
        .map(|d| decode(d).unwrap().location().to_string())
        .collect();
    assert_eq!(
        got,
        [
            "drivers/foo.c:12 [foo] func:foo_probe",
            "drivers/bar.c:7 [bar] func:bar_init"
        ]
    );
    assert!(w.tags.iter().all(|d| d.counter.unloaded == 1));
    // No filter: every tag, in order, names trimmed.
    let all = walk(&mut kernel, &AllocinfoFilter::NONE, 1).unwrap();
    assert_eq!(all.tags.len(), tags.len());
    let long = decode(&all.tags[tags.len() - 3]).unwrap();
    assert_eq!(long.function.len(), 63);
    assert!(long.function.ends_with("Inner::allocate"));
}

#[test]
fn walks_again_when_modules_load_during_one() {
    let tags = tags();
    let mut kernel = FakeKernel::new(&tags);
    kernel.module_loads_at = vec![5];
    let w = walk(&mut kernel, &AllocinfoFilter::NONE, 4).unwrap();
    assert_eq!((w.attempts, w.content_id, w.tags.len()), (2, 8, tags.len()));

    let mut kernel = FakeKernel::new(&tags);
    kernel.module_loads_at = (1..1000).map(|i| i * 10).collect();
    let e = walk(&mut kernel, &AllocinfoFilter::NONE, 3).unwrap_err();
    assert!(matches!(e, Error::Unstable(3)), "{e}");
    assert_eq!(
        e.to_string(),
        "the profile changed during each of 3 walks (modules loading or unloading)"
    );
}

#[test]
fn enoent_ends_walks_eintr_repeats_enotty_is_unsupported() {
    let mut kernel = FakeKernel::new(&[]);
    kernel.interrupt_once = true;
    let w = walk(&mut kernel, &AllocinfoFilter::NONE, 1).unwrap();
    assert!(w.tags.is_empty());
    // A filter the kernel refuses is an error, not an empty answer.
    let bad = TagFilter {
        min_size: Some(2),
        max_size: Some(1),
        ..Default::default()
    };
    let e = walk(&mut kernel, &bad.to_abi(), 1).unwrap_err();
    assert_eq!(
        e.to_string(),
        "ALLOCINFO_IOC_GET_AT: Invalid argument (os error 22)"
    );
    kernel.enotty = true;
    let e = walk(&mut kernel, &AllocinfoFilter::NONE, 1).unwrap_err();
    assert!(matches!(e, Error::Unsupported));
    assert_eq!(
        e.to_string(),
        "the kernel has no /proc/allocinfo ioctl (ENOTTY)"
    );
}

/// The host kernel has no such ioctl on a regular file: ENOTTY, as a
/// kernel without the interface answers on /proc/allocinfo.
#[test]
fn a_real_ioctl_on_a_regular_file_is_unsupported() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml");
    let mut file = ProcFile::open(&path).unwrap();
    let e = walk(&mut file, &AllocinfoFilter::NONE, 1).unwrap_err();
    assert!(matches!(e, Error::Unsupported), "{e:?}");
    let e = ProcFile::open(Path::new("/nonexistent/allocinfo")).unwrap_err();
    assert!(
        e.to_string()
            .starts_with("opening /nonexistent/allocinfo: No such file"),
        "{e}"
    );
}
