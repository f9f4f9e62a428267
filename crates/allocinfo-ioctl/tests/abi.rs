//! The Rust structures and numbers against `include/uapi/linux/alloc_tag.h`:
//! the values the C header gives on x86-64 (and every 64-bit Linux ABI),
//! written down; and, where a C compiler is present, the header itself.

use allocinfo_ioctl::abi::*;
use std::mem::{align_of, offset_of, size_of};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Every size, alignment and offset, as `NAME VALUE` lines in the order the
/// C program below prints them.
fn rust_layout() -> Vec<(String, u64)> {
    macro_rules! layout {
        ($v:ident, $c:literal, $t:ty, [$($f:ident),*]) => {
            $v.push((concat!("sizeof ", $c).to_owned(), size_of::<$t>() as u64));
            $v.push((concat!("alignof ", $c).to_owned(), align_of::<$t>() as u64));
            $($v.push((
                concat!("offsetof ", $c, ".", stringify!($f)).to_owned(),
                offset_of!($t, $f) as u64,
            ));)*
        };
    }
    let mut v = Vec::new();
    layout!(v, "allocinfo_content_id", AllocinfoContentId, [id]);
    layout!(
        v,
        "allocinfo_tag",
        AllocinfoTag,
        [modname, function, filename, lineno]
    );
    layout!(
        v,
        "allocinfo_counter",
        AllocinfoCounter,
        [bytes, calls, accurate, unloaded, pad]
    );
    layout!(v, "allocinfo_tag_data", AllocinfoTagData, [tag, counter]);
    layout!(
        v,
        "allocinfo_filter",
        AllocinfoFilter,
        [mask, fields, min_size, max_size, inaccurate]
    );
    layout!(v, "allocinfo_get_at", AllocinfoGetAt, [pos, filter, data]);
    layout!(
        v,
        "allocinfo_split_entry",
        AllocinfoSplitEntry,
        [bytes, calls]
    );
    layout!(
        v,
        "allocinfo_get_split",
        AllocinfoGetSplit,
        [pos, filter, by, flags, at, nr, min_at, entries, data]
    );
    v
}

fn rust_numbers() -> Vec<(String, u64)> {
    [
        ("ALLOCINFO_STR_SIZE", ALLOCINFO_STR_SIZE as u64),
        (
            "ALLOCINFO_FILTER_MASK_MODNAME",
            ALLOCINFO_FILTER_MASK_MODNAME,
        ),
        (
            "ALLOCINFO_FILTER_MASK_FUNCTION",
            ALLOCINFO_FILTER_MASK_FUNCTION,
        ),
        (
            "ALLOCINFO_FILTER_MASK_FILENAME",
            ALLOCINFO_FILTER_MASK_FILENAME,
        ),
        ("ALLOCINFO_FILTER_MASK_LINENO", ALLOCINFO_FILTER_MASK_LINENO),
        (
            "ALLOCINFO_FILTER_MASK_INACCURATE",
            ALLOCINFO_FILTER_MASK_INACCURATE,
        ),
        (
            "ALLOCINFO_FILTER_MASK_MIN_SIZE",
            ALLOCINFO_FILTER_MASK_MIN_SIZE,
        ),
        (
            "ALLOCINFO_FILTER_MASK_MAX_SIZE",
            ALLOCINFO_FILTER_MASK_MAX_SIZE,
        ),
        (
            "ALLOCINFO_FILTER_MASK_UNLOADED",
            ALLOCINFO_FILTER_MASK_UNLOADED,
        ),
        ("__ALLOCINFO_FILTER_LAST", __ALLOCINFO_FILTER_LAST.into()),
        ("ALLOCINFO_FILTER_MASKS", ALLOCINFO_FILTER_MASKS),
        ("ALLOCINFO_IOC_BASE", ALLOCINFO_IOC_BASE.into()),
        ("ALLOCINFO_IOC_CONTENT_ID", number(ALLOCINFO_IOC_CONTENT_ID)),
        ("ALLOCINFO_IOC_GET_AT", number(ALLOCINFO_IOC_GET_AT)),
        ("ALLOCINFO_IOC_GET_NEXT", number(ALLOCINFO_IOC_GET_NEXT)),
        ("ALLOCINFO_IOC_GET_SPLIT", number(ALLOCINFO_IOC_GET_SPLIT)),
        ("ALLOCINFO_SPLIT_CPU", ALLOCINFO_SPLIT_CPU.into()),
        ("ALLOCINFO_SPLIT_NODE", ALLOCINFO_SPLIT_NODE.into()),
        ("__ALLOCINFO_SPLIT_LAST", __ALLOCINFO_SPLIT_LAST.into()),
        ("ALLOCINFO_SPLIT_NEXT", ALLOCINFO_SPLIT_NEXT.into()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v))
    .collect()
}

/// An ioctl number: `unsigned long` in glibc, `int` in musl; 32 bits of it.
fn number(request: Request) -> u64 {
    u64::from(request as u32)
}

fn value(list: &[(String, u64)], name: &str) -> u64 {
    list.iter()
        .find(|(k, _)| k == name)
        .unwrap_or_else(|| panic!("no {name}"))
        .1
}

#[test]
fn layout_matches_the_header_as_written_down() {
    #[rustfmt::skip]
    let expected: &[(&str, u64)] = &[
        ("sizeof allocinfo_content_id", 8), ("alignof allocinfo_content_id", 8),
        ("offsetof allocinfo_content_id.id", 0),
        ("sizeof allocinfo_tag", 200), ("alignof allocinfo_tag", 8),
        ("offsetof allocinfo_tag.modname", 0), ("offsetof allocinfo_tag.function", 64),
        ("offsetof allocinfo_tag.filename", 128), ("offsetof allocinfo_tag.lineno", 192),
        ("sizeof allocinfo_counter", 24), ("alignof allocinfo_counter", 8),
        ("offsetof allocinfo_counter.bytes", 0), ("offsetof allocinfo_counter.calls", 8),
        ("offsetof allocinfo_counter.accurate", 16),
        ("offsetof allocinfo_counter.unloaded", 17),
        ("offsetof allocinfo_counter.pad", 18),
        ("sizeof allocinfo_tag_data", 224), ("alignof allocinfo_tag_data", 8),
        ("offsetof allocinfo_tag_data.tag", 0), ("offsetof allocinfo_tag_data.counter", 200),
        ("sizeof allocinfo_filter", 232), ("alignof allocinfo_filter", 8),
        ("offsetof allocinfo_filter.mask", 0), ("offsetof allocinfo_filter.fields", 8),
        ("offsetof allocinfo_filter.min_size", 208), ("offsetof allocinfo_filter.max_size", 216),
        ("offsetof allocinfo_filter.inaccurate", 224),
        ("sizeof allocinfo_get_at", 464), ("alignof allocinfo_get_at", 8),
        ("offsetof allocinfo_get_at.pos", 0), ("offsetof allocinfo_get_at.filter", 8),
        ("offsetof allocinfo_get_at.data", 240),
        ("sizeof allocinfo_split_entry", 16), ("alignof allocinfo_split_entry", 8),
        ("offsetof allocinfo_split_entry.bytes", 0), ("offsetof allocinfo_split_entry.calls", 8),
        ("sizeof allocinfo_get_split", 496), ("alignof allocinfo_get_split", 8),
        ("offsetof allocinfo_get_split.pos", 0), ("offsetof allocinfo_get_split.filter", 8),
        ("offsetof allocinfo_get_split.by", 240), ("offsetof allocinfo_get_split.flags", 244),
        ("offsetof allocinfo_get_split.at", 248), ("offsetof allocinfo_get_split.nr", 252),
        ("offsetof allocinfo_get_split.min_at", 256),
        ("offsetof allocinfo_get_split.entries", 264),
        ("offsetof allocinfo_get_split.data", 272),
    ];
    let actual = rust_layout();
    assert_eq!(actual.len(), expected.len());
    for (name, want) in expected {
        assert_eq!(value(&actual, name), *want, "{name}");
    }
    assert_eq!(AllocinfoTagData::SIZE, 224);
}

#[test]
fn numbers_match_the_header_as_written_down() {
    // _IOR(0xA6, 0, 8), _IOWR(0xA6, 1, 464), _IOR(0xA6, 2, 224): direction
    // in bits 30-31 (read 2, write 1), size in 16-29, type 8-15, number 0-7.
    assert_eq!(number(ALLOCINFO_IOC_CONTENT_ID), 0x8008_A600);
    assert_eq!(number(ALLOCINFO_IOC_GET_AT), 0xC1D0_A601);
    assert_eq!(number(ALLOCINFO_IOC_GET_NEXT), 0x80E0_A602);
    assert_eq!(number(ALLOCINFO_IOC_GET_SPLIT), 0xC1F0_A603);
    let ioc = |dir: u64, nr: u64, size: usize| dir << 30 | (size as u64) << 16 | 0xA6 << 8 | nr;
    assert_eq!(
        number(ALLOCINFO_IOC_CONTENT_ID),
        ioc(2, 0, size_of::<AllocinfoContentId>())
    );
    assert_eq!(
        number(ALLOCINFO_IOC_GET_AT),
        ioc(3, 1, size_of::<AllocinfoGetAt>())
    );
    assert_eq!(
        number(ALLOCINFO_IOC_GET_NEXT),
        ioc(2, 2, size_of::<AllocinfoTagData>())
    );
    assert_eq!(
        number(ALLOCINFO_IOC_GET_SPLIT),
        ioc(3, 3, size_of::<AllocinfoGetSplit>())
    );
    assert_eq!(
        [
            ALLOCINFO_FILTER_MASK_MODNAME,
            ALLOCINFO_FILTER_MASK_FUNCTION,
            ALLOCINFO_FILTER_MASK_FILENAME,
            ALLOCINFO_FILTER_MASK_LINENO,
            ALLOCINFO_FILTER_MASK_INACCURATE,
            ALLOCINFO_FILTER_MASK_MIN_SIZE,
            ALLOCINFO_FILTER_MASK_MAX_SIZE,
            ALLOCINFO_FILTER_MASK_UNLOADED,
            ALLOCINFO_FILTER_MASKS,
        ],
        [1, 2, 4, 8, 16, 32, 64, 128, 255]
    );
    assert_eq!(__ALLOCINFO_FILTER_LAST, ALLOCINFO_FILTER_UNLOADED);
}

fn header() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../include/uapi/linux/alloc_tag.h")
}

/// A C program that prints what `rust_layout` and `rust_numbers` hold.
fn c_program() -> String {
    let mut c = String::from(
        "#include <stdio.h>\n#include <stddef.h>\n#include <linux/alloc_tag.h>\n\
         #define L(name, value) printf(\"%s %llu\\n\", name, (unsigned long long)(value))\n\
         int main(void)\n{\n",
    );
    for (name, _) in rust_layout() {
        let mut words = name.split(' ');
        let (op, what) = (words.next().unwrap(), words.next().unwrap());
        let expr = match what.split_once('.') {
            Some((ty, field)) => format!("offsetof(struct {ty}, {field})"),
            None if op == "sizeof" => format!("sizeof(struct {what})"),
            None => format!("_Alignof(struct {what})"),
        };
        c += &format!("\tL(\"{name}\", {expr});\n");
    }
    for (name, _) in rust_numbers() {
        c += &format!("\tL(\"{name}\", {name});\n");
    }
    c + "\treturn 0;\n}\n"
}

#[test]
fn layout_and_numbers_match_the_c_header() {
    let header = header();
    assert!(
        header.exists(),
        "{} is missing: it is the ABI's definition",
        header.display()
    );
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("abi-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("abi.c"), c_program()).unwrap();
    let include = header.parent().unwrap().parent().unwrap();
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".to_owned());
    let out = match Command::new(&cc)
        .arg("-std=c11")
        .arg("-I")
        .arg(include)
        .arg("-o")
        .arg(dir.join("abi"))
        .arg(dir.join("abi.c"))
        .output()
    {
        Ok(out) => out,
        // A missing compiler is a failure, not a pass: the check did not run.
        Err(e) => panic!(
            "running {cc} to compile {} against the Rust layout: {e} \
             (install a C compiler, or set CC)",
            header.display()
        ),
    };
    let stderr = String::from_utf8_lossy(&out.stderr);
    // Without the UAPI headers (linux-libc-dev) the compile fails: so does
    // the test, which cannot have checked anything.
    assert!(out.status.success(), "{cc} failed:\n{stderr}");
    let run = Command::new(dir.join("abi")).output().unwrap();
    assert!(run.status.success());
    let c: Vec<(String, u64)> = String::from_utf8(run.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            let (k, v) = l.rsplit_once(' ').unwrap();
            (k.to_owned(), v.parse().unwrap())
        })
        .collect();
    let rust: Vec<_> = rust_layout().into_iter().chain(rust_numbers()).collect();
    assert_eq!(c.len(), rust.len());
    for ((cn, cv), (rn, rv)) in c.iter().zip(&rust) {
        assert_eq!(cn, rn);
        assert_eq!(cv, rv, "{cn}: C says {cv}, Rust {rv}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
