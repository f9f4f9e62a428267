// SPDX-License-Identifier: GPL-2.0

//! The `/proc/allocinfo` line format and the boot parameter's parser.

use crate::{
    alloc_tag::{index::Request, leaks::Leaks, AllocTag, Counters, Share},
    allocinfo::{parse_version, put_header, put_line, set_version, version_2, Out},
    codetag::{Codetag, CODETAG_FLAG_INACCURATE},
    kunit::{kunit_expect, kunit_suite, Test},
    profiling::{parse_boot_value, BootValue},
};
use core::sync::atomic::Ordering;
use kernel::{bindings, c_str, fmt, prelude::*, str::CString, types::Opaque};

/// A line formatted into a fixed buffer.
struct Buf {
    bytes: [u8; 256],
    len: usize,
}

/// Formats one line of `tag` with `counters`, in version 2.0 when `v2`.
fn line_in(counters: Counters, tag: &Codetag, v2: bool) -> Buf {
    line_nodes(counters, tag, v2, &[])
}

/// Formats one line of `tag` with `counters` and the node shares `nodes`.
fn line_nodes(counters: Counters, tag: &Codetag, v2: bool, nodes: &[Share]) -> Buf {
    let mut buf = Buf {
        bytes: [0; 256],
        len: 0,
    };
    let mut out = Out::new(&mut buf.bytes);
    if put_line(&mut out, counters, tag, v2, nodes).is_some() {
        buf.len = out.len();
    }
    buf
}

/// Formats one line of `tag` with `counters`, in version 1.0.
fn line(counters: Counters, tag: &Codetag) -> Buf {
    line_in(counters, tag, false)
}

fn tag(modname: *const u8) -> Opaque<bindings::codetag> {
    Opaque::new(bindings::codetag {
        flags: 0,
        lineno: 3191,
        modname,
        function: c_str!("pcpu_embed_first_chunk").as_char_ptr(),
        filename: c_str!("mm/percpu.c").as_char_ptr(),
        index: 0,
        #[cfg(CONFIG_ALLOCTAG_PER_NODE)]
        node_slots: 0,
    })
}

/// Views a `struct codetag` as a [`Codetag`].
fn view(raw: &Opaque<bindings::codetag>) -> &Codetag {
    // SAFETY: `Codetag` is a transparent wrapper of `Opaque<bindings::codetag>`.
    unsafe { &*(raw as *const Opaque<bindings::codetag>).cast::<Codetag>() }
}

/// Expects the line of a tag at `mm/percpu.c:3191` in `modname` with `counters` to be `want`.
fn expect_line(test: &Test, modname: *const u8, counters: Counters, want: &[u8]) {
    let raw = tag(modname);
    let got = line(counters, view(&raw));
    let got = &got.bytes[..got.len];
    kunit_expect!(test, got == want, "{:?}", core::str::from_utf8(got));
}

fn vmlinux_line_matches_6_12(test: &Test) {
    let want = b"        4096        1 mm/percpu.c:3191 func:pcpu_embed_first_chunk \n";
    expect_line(
        test,
        core::ptr::null(),
        Counters {
            bytes: 4096,
            calls: 1,
        },
        want,
    );
}

fn module_line_names_module(test: &Test) {
    let want = b"      143360       35 mm/percpu.c:3191 [xfs] func:pcpu_embed_first_chunk \n";
    let counters = Counters {
        bytes: 143360,
        calls: 35,
    };
    expect_line(test, c_str!("xfs").as_char_ptr(), counters, want);
}

fn wide_and_negative_values_keep_printf_alignment(test: &Test) {
    let want = b"          -8 123456789 mm/percpu.c:3191 func:pcpu_embed_first_chunk \n";
    let counters = Counters {
        bytes: -8,
        calls: 123456789,
    };
    expect_line(test, core::ptr::null(), counters, want);
    let want = b"4398046511104        0 mm/percpu.c:3191 func:pcpu_embed_first_chunk \n";
    let counters = Counters {
        bytes: 1 << 42,
        calls: 0,
    };
    expect_line(test, core::ptr::null(), counters, want);
}

/// The header written with the counters made at `since_ns`, or none.
fn header_in(since_ns: Option<u64>) -> Buf {
    let mut buf = Buf {
        bytes: [0; 256],
        len: 0,
    };
    let mut out = Out::new(&mut buf.bytes);
    if put_header(&mut out, since_ns).is_some() {
        buf.len = out.len();
    }
    buf
}

/// The header that `/proc/allocinfo` shows is 6.12's (lib/alloc_tag.c
/// `print_allocinfo_header()`), and mainline's 2.0 once `allocinfo.version=2.0` is in force,
/// its column line ending with since when the counters count.
fn header_is_6_12s(test: &Test) {
    let was_2 = version_2();
    kunit_expect!(test, set_version(c_str!("1.0")).is_ok());
    for since in [None, Some(12_345_678_901)] {
        let h = header_in(since);
        kunit_expect!(
            test,
            h.bytes[..h.len] == *b"allocinfo - version: 1.0\n#     <size>  <calls> <tag info>\n",
            "1.0: {:?}",
            core::str::from_utf8(&h.bytes[..h.len])
        );
    }
    kunit_expect!(test, set_version(c_str!("2.0")).is_ok());
    let cases: [(Option<u64>, &[u8]); 4] = [
        (None, b"none"),
        (Some(0), b"0.000000"),
        (Some(12_345_678_901), b"12.345678"),
        (Some(u64::MAX), b"18446744073.709551"),
    ];
    for (since, want) in cases {
        let h = header_in(since);
        let mut expected = KVec::new();
        let ok = expected
            .extend_from_slice(
                b"allocinfo - version: 2.0\n#     <size>  <calls> <tag info> counters_since:",
                GFP_KERNEL,
            )
            .and_then(|()| expected.extend_from_slice(want, GFP_KERNEL))
            .and_then(|()| expected.push(b'\n', GFP_KERNEL));
        kunit_expect!(test, ok.is_ok());
        kunit_expect!(
            test,
            h.bytes[..h.len] == expected[..],
            "2.0: {:?}",
            core::str::from_utf8(&h.bytes[..h.len])
        );
    }
    // A buffer too small for the whole header: None, and seq_file retries with a larger one.
    let mut small = [0u8; 60];
    let mut out = Out::new(&mut small);
    kunit_expect!(test, put_header(&mut out, Some(1)).is_none());
    let _ = set_version(if was_2 { c_str!("2.0") } else { c_str!("1.0") });
}

/// `%12lli` and `%8llu` at the extremes of their types.
fn extreme_values_print_as_printf(test: &Test) {
    let want = b"-9223372036854775808 18446744073709551615 mm/percpu.c:3191 func:pcpu_embed_first_chunk \n";
    let counters = Counters {
        bytes: i64::MIN,
        calls: u64::MAX,
    };
    expect_line(test, core::ptr::null(), counters, want);
    let want = b"           0        0 mm/percpu.c:3191 func:pcpu_embed_first_chunk \n";
    expect_line(test, core::ptr::null(), Counters::default(), want);
}

/// Version 2.0 adds ` accurate:no` to an inaccurate tag only, and ` unloaded:yes` to an
/// unloaded module's; 1.0 never does.
fn version_2_marks_inaccurate_and_unloaded_tags(test: &Test) {
    const LINE: &[u8] = b"          64        1 mm/percpu.c:3191 [xfs] func:pcpu_embed_first_chunk";
    let raw = tag(c_str!("xfs").as_char_ptr());
    let counters = Counters {
        bytes: 64,
        calls: 1,
    };
    // The line in version 2.0 (`v2`) or 1.0 is `LINE`, then `pairs`, then " \n".
    let expect = |v2: bool, pairs: &[u8]| {
        let got = line_in(counters, view(&raw), v2);
        let got = &got.bytes[..got.len];
        let want_len = LINE.len() + pairs.len() + 2;
        kunit_expect!(
            test,
            got.len() == want_len
                && got.starts_with(LINE)
                && &got[LINE.len()..want_len - 2] == pairs
                && got.ends_with(b" \n"),
            "{} (2.0: {v2}): {:?}",
            core::str::from_utf8(pairs).unwrap_or("?"),
            core::str::from_utf8(got)
        );
    };
    expect(true, b"");
    view(&raw)
        .flags()
        .fetch_or(CODETAG_FLAG_INACCURATE, Ordering::Relaxed);
    expect(true, b" accurate:no");
    expect(false, b"");
    // An unloaded module's tag: alloctag's pair after mainline's, in 2.0 only.
    view(&raw).mark_unloaded();
    expect(true, b" accurate:no unloaded:yes");
    expect(false, b"");
}

/// Version 2.0 ends a line with the bytes of every node share, `nidN:BYTES` from node 0 and
/// `percpu:BYTES` for the last, negative as the total prints them; 1.0 never does.
fn version_2_prints_node_shares(test: &Test) {
    const LINE: &[u8] = b"        4224        3 mm/percpu.c:3191 func:pcpu_embed_first_chunk";
    let raw = tag(core::ptr::null());
    let counters = Counters {
        bytes: 4224,
        calls: 3,
    };
    let share = |bytes, calls| Share { bytes, calls };
    // Node 0 empty, node 1 a page, node 2 a call of 0 bytes, node 3 a free of 8 bytes counted
    // there, per-CPU memory 136 bytes (the last slot).
    let nodes = [
        share(0, 0),
        share(4096, 1),
        share(0, 1),
        share(-8, 0),
        share(136, 1),
    ];
    let cases: [(bool, &[Share], &[u8]); 5] = [
        (true, &nodes, b" nid0:0 nid1:4096 nid2:0 nid3:-8 percpu:136"),
        (false, &nodes, b""),
        (true, &[], b""),
        (true, &nodes[..1], b" percpu:0"),
        (true, &[share(0, 0), share(64, 1)], b" nid0:0 percpu:64"),
    ];
    for (v2, shares, pairs) in cases {
        let got = line_nodes(counters, view(&raw), v2, shares);
        let got = &got.bytes[..got.len];
        let want_len = LINE.len() + pairs.len() + 2;
        kunit_expect!(
            test,
            got.len() == want_len
                && got.starts_with(LINE)
                && &got[LINE.len()..want_len - 2] == pairs,
            "{:?}",
            core::str::from_utf8(got)
        );
    }
}

/// A line that does not fit reports it, so that seq_file retries with a larger buffer.
fn line_that_does_not_fit_fails(test: &Test) {
    let raw = tag(core::ptr::null());
    let full = line(Counters::default(), view(&raw));
    for room in [0, 1, 12, full.len - 1] {
        let mut bytes = [0u8; 256];
        let mut out = Out::new(&mut bytes[..room]);
        let fitted = put_line(&mut out, Counters::default(), view(&raw), false, &[]);
        kunit_expect!(test, fitted.is_none(), "{room} bytes");
    }
    let mut bytes = [0u8; 256];
    let mut out = Out::new(&mut bytes[..full.len]);
    kunit_expect!(
        test,
        put_line(&mut out, Counters::default(), view(&raw), false, &[]).is_some()
    );
}

/// `allocinfo.version=` takes 1.0 and 2.0 (or 1 and 2) and nothing else.
fn version_values(test: &Test) {
    for (value, want) in [
        (c_str!("1"), false),
        (c_str!("1.0"), false),
        (c_str!("2"), true),
        (c_str!("2.0"), true),
    ] {
        kunit_expect!(test, parse_version(value) == Ok(want), "{value:?}");
    }
    for bad in [
        c_str!(""),
        c_str!("3"),
        c_str!("2.1"),
        c_str!("v2"),
        c_str!(" 2"),
    ] {
        kunit_expect!(test, parse_version(bad) == Err(EINVAL), "{bad:?}");
    }
}

/// The boot parameter takes what 6.12's C takes: `never` as a prefix, else `kstrtobool()`.
fn boot_values_match_6_12(test: &Test) {
    for (value, want) in [
        (c_str!("0"), BootValue::Off),
        (c_str!("1"), BootValue::On),
        (c_str!("never"), BootValue::Never),
        (c_str!("neverever"), BootValue::Never),
        (c_str!("y"), BootValue::On),
        (c_str!("Y"), BootValue::On),
        (c_str!("yes"), BootValue::On),
        (c_str!("on"), BootValue::On),
        (c_str!("ON"), BootValue::On),
        (c_str!("n"), BootValue::Off),
        (c_str!("no"), BootValue::Off),
        (c_str!("off"), BootValue::Off),
        (c_str!("01"), BootValue::Off),
        (c_str!("1 "), BootValue::On),
        // Only "never" itself is never: kstrtobool() reads "nev" as "n".
        (c_str!("nev"), BootValue::Off),
    ] {
        let got = BootValue::parse(value);
        kunit_expect!(test, got == Ok(want), "{value:?} gave {got:?}");
    }
    for bad in [
        c_str!(""),
        c_str!("2"),
        c_str!("-1"),
        c_str!("o"),
        c_str!("ox"),
        c_str!("junk"),
        c_str!(" 1"),
    ] {
        let got = BootValue::parse(bad);
        kunit_expect!(test, got == Err(EINVAL), "{bad:?} gave {got:?}");
    }
}

/// `,compressed` asks for page tags in page flags, as mainline spells it, `,page_ext` for
/// page_ext; what 6.12 takes with another suffix is still taken as 6.12 takes it, asking for
/// nothing; `never` is never.
fn boot_values_with_compressed(test: &Test) {
    use Request::{Default, PageExt, PageFlags};
    for (value, want) in [
        (c_str!("1,compressed"), Ok((BootValue::On, PageFlags))),
        (c_str!("0,compressed"), Ok((BootValue::Off, PageFlags))),
        (c_str!("on,compressed"), Ok((BootValue::On, PageFlags))),
        (c_str!("1,page_ext"), Ok((BootValue::On, PageExt))),
        (c_str!("0,page_ext"), Ok((BootValue::Off, PageExt))),
        (c_str!("1"), Ok((BootValue::On, Default))),
        (c_str!("1,junk"), Ok((BootValue::On, Default))),
        (c_str!("1,compressedx"), Ok((BootValue::On, Default))),
        (c_str!("1,page_extx"), Ok((BootValue::On, Default))),
        (c_str!("1,,compressed"), Ok((BootValue::On, Default))),
        (c_str!("never,compressed"), Ok((BootValue::Never, Default))),
        (c_str!("never,page_ext"), Ok((BootValue::Never, Default))),
        (c_str!("junk,compressed"), Err(EINVAL)),
        (c_str!(",compressed"), Err(EINVAL)),
    ] {
        let got = parse_boot_value(value);
        kunit_expect!(test, got == want, "{value:?} gave {got:?}");
    }
}

/// A tag at `f.c:LINE` of module `m`, without counters: the report is given its counters.
const fn leak_tag(line: u32) -> AllocTag {
    AllocTag::without_counters(
        c_str!("m").as_char_ptr().cast(),
        c_str!("f").as_char_ptr().cast(),
        c_str!("f.c").as_char_ptr().cast(),
        line,
    )
}

/// The unload's one line for a module: its totals, its sites counted, the three that hold the
/// most bytes largest first (ties in the order they came); sites that hold nothing are not
/// counted.
fn unload_line_names_largest_sites_first(test: &Test) {
    static TAGS: [AllocTag; 6] = [
        leak_tag(1),
        leak_tag(2),
        leak_tag(3),
        leak_tag(4),
        leak_tag(5),
        leak_tag(6),
    ];
    let one = |bytes| Counters {
        bytes,
        calls: if bytes == 0 { 0 } else { 1 },
    };
    let mut leaks = Leaks::default();
    for (tag, bytes) in TAGS.iter().zip([10, 50, 30, 0, 40, 30]) {
        leaks.add(tag, one(bytes));
    }
    let got = CString::try_from_fmt(fmt!("{}", leaks.line(c_str!("m"))));
    let want: &[u8] =
        b"module m has 160 bytes in 5 allocations at module unload, at 5 call sites, \
        listed until freed; the 3 largest: f.c:2 [m] func:f has 50 bytes in 1 allocations; \
        f.c:5 [m] func:f has 40 bytes in 1 allocations; \
        f.c:3 [m] func:f has 30 bytes in 1 allocations";
    kunit_expect!(
        test,
        got.as_ref().is_ok_and(|g| g.as_bytes() == want),
        "{:?}",
        got.as_ref().map(|g| g.to_str())
    );
    let mut single = Leaks::default();
    single.add(&TAGS[3], one(0));
    kunit_expect!(test, !single.any(), "a site at zero is no leak");
    single.add(&TAGS[0], Counters { bytes: 8, calls: 2 });
    let got = CString::try_from_fmt(fmt!("{}", single.line(c_str!("m"))));
    let want: &[u8] = b"module m has 8 bytes in 2 allocations at module unload, at 1 call site, \
        listed until freed: f.c:1 [m] func:f has 8 bytes in 2 allocations";
    kunit_expect!(test, got.as_ref().is_ok_and(|g| g.as_bytes() == want));
}

kunit_suite!(
    format_suite,
    "alloctag_format",
    [
        vmlinux_line_matches_6_12,
        module_line_names_module,
        wide_and_negative_values_keep_printf_alignment,
        header_is_6_12s,
        extreme_values_print_as_printf,
        version_2_marks_inaccurate_and_unloaded_tags,
        version_2_prints_node_shares,
        line_that_does_not_fit_fails,
        version_values,
        boot_values_match_6_12,
        boot_values_with_compressed,
        unload_line_names_largest_sites_first,
    ]
);
