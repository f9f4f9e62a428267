//! Golden files in the shapes Linux 6.12 (format 1.0) and newer kernels
//! (format 2.0) print, and malformed inputs with the errors they must give.

use allocinfo_format::{ParseErrorKind, Profile, Version};
use std::path::PathBuf;

fn data(name: &str) -> Vec<u8> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn linux_6_12_parses_and_prints_back_byte_for_byte() {
    let input = data("linux-6.12.txt");
    let p = Profile::parse(&input).unwrap();
    assert_eq!(p.version, Version::V1_0);
    assert_eq!(p.tags.len(), 58);
    assert_eq!(p.to_string().as_bytes(), &input[..]);

    let xfs = p
        .tags
        .iter()
        .find(|t| t.function == "xfs_buf_alloc_pages")
        .unwrap();
    assert_eq!((xfs.bytes, xfs.calls, xfs.line), (143360, 35, 411));
    assert_eq!(
        (xfs.file.as_str(), xfs.module.as_deref(), xfs.dir()),
        ("fs/xfs/xfs_buf.c", Some("xfs"), "fs/xfs")
    );
    assert_eq!(
        xfs.location().to_string(),
        "fs/xfs/xfs_buf.c:411 [xfs] func:xfs_buf_alloc_pages"
    );

    let negative = p
        .tags
        .iter()
        .find(|t| t.function == "__vmalloc_area_node")
        .unwrap();
    assert_eq!(negative.bytes, -4096);
    assert_eq!(p.tags.iter().filter(|t| t.module.is_some()).count(), 7);
    assert_eq!(
        p.tags
            .iter()
            .filter(|t| t.function == "__pte_alloc_one")
            .count(),
        2
    );

    let totals = p.totals();
    assert_eq!(totals.tags, 58);
    assert_eq!(totals.bytes, p.tags.iter().map(|t| t.bytes).sum::<i64>());
    assert_eq!(totals.calls, p.tags.iter().map(|t| t.calls).sum::<u64>());
}

#[test]
fn format_2_0_keeps_extra_pairs() {
    let input = data("linux-2.0.txt");
    let p = Profile::parse(&input).unwrap();
    assert_eq!(p.version, Version::V2_0);
    assert_eq!(p.tags.len(), 16);
    assert_eq!(p.to_string().as_bytes(), &input[..]);
    let inaccurate: Vec<_> = p
        .tags
        .iter()
        .filter(|t| !t.is_accurate())
        .map(|t| t.function.as_str())
        .collect();
    assert_eq!(
        inaccurate,
        [
            "alloc_slab_page",
            "__filemap_get_folio",
            "__mpol_dup",
            "resv_map_alloc"
        ]
    );
    let hinted = p.tags.iter().find(|t| t.extra("hint").is_some()).unwrap();
    assert_eq!(
        hinted.extra,
        [
            ("accurate".into(), "no".into()),
            ("hint".into(), "percpu".into())
        ]
    );
}

#[test]
fn later_snapshot_differs_in_the_expected_lines() {
    let old = Profile::parse(&data("linux-6.12.txt")).unwrap();
    let new = Profile::parse(&data("linux-6.12-later.txt")).unwrap();
    assert_eq!(new.tags.len(), old.tags.len());
    assert!(
        new.tags
            .iter()
            .any(|t| t.module.as_deref() == Some("sunrpc"))
    );
    assert!(!new.tags.iter().any(|t| t.module.as_deref() == Some("ttm")));
}

#[test]
fn malformed_files_name_the_line_and_reason() {
    let cases: &[(&str, usize, &str)] = &[
        (
            "no-header.txt",
            1,
            "expected the header line 'allocinfo - version: X.Y', found \"   128004096    31251 mm/page_ext.c:271 func:alloc_page_ext \"",
        ),
        (
            "bad-size.txt",
            5,
            "invalid size \"4O96\": expected a signed 64-bit integer",
        ),
        ("truncated.txt", 6, "expected FILE:LINE, found \"mm/perc\""),
        ("invalid-utf8.txt", 4, "line is not valid UTF-8"),
        (
            "version-3.txt",
            1,
            "unsupported format version 3.0 (this tool reads versions 1.x and 2.x)",
        ),
        (
            "sorted-numfmt.txt",
            1,
            "expected the header line 'allocinfo - version: X.Y', found \"#     <size>  <calls> <tag info>\"",
        ),
        (
            "trailing-garbage.txt",
            7,
            "unexpected \"garbage\" after the function name: expected KEY:VALUE",
        ),
        (
            "bad-module.txt",
            4,
            "invalid module \"[xfs\": expected [NAME]",
        ),
    ];
    for &(file, line, reason) in cases {
        let e = Profile::parse(&data(&format!("bad/{file}"))).expect_err(file);
        assert_eq!(e.line, line, "{file}: {e}");
        assert_eq!(e.kind.to_string(), reason, "{file}");
        assert_eq!(e.to_string(), format!("line {line}: {reason}"));
    }
}

#[test]
fn numfmt_output_is_rejected_on_its_first_tag_line() {
    // `numfmt` output with the header put back in front is still not allocinfo.
    let text = String::from_utf8(data("bad/sorted-numfmt.txt")).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    lines.swap(0, 1);
    let e = Profile::parse(lines.join("\n").as_bytes()).unwrap_err();
    assert_eq!(e.line, 3);
    assert!(
        matches!(e.kind, ParseErrorKind::BadBytes(ref s) if s.as_str() == "-4.0K"),
        "{e}"
    );
}
