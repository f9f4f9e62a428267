// SPDX-License-Identifier: GPL-2.0

//! The `/proc/allocinfo` line format and the boot parameter's parser.

use crate::{
    alloc_tag::Counters,
    allocinfo::{write_line, HEADER},
    codetag::Codetag,
    kunit::{kunit_expect, kunit_suite, Test},
    profiling::BootValue,
};
use core::fmt;
use kernel::{bindings, c_str, prelude::*, types::Opaque};

/// A fixed buffer that formatted text goes into.
struct Buf {
    bytes: [u8; 256],
    len: usize,
}

impl fmt::Write for Buf {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let end = self.len + s.len();
        self.bytes
            .get_mut(self.len..end)
            .ok_or(fmt::Error)?
            .copy_from_slice(s.as_bytes());
        self.len = end;
        Ok(())
    }
}

/// Formats one line of `tag` with `counters`.
fn line(counters: Counters, tag: &Codetag) -> Buf {
    let mut buf = Buf {
        bytes: [0; 256],
        len: 0,
    };
    let _ = write_line(&mut buf, counters, tag);
    buf
}

fn tag(modname: *const u8) -> Opaque<bindings::codetag> {
    Opaque::new(bindings::codetag {
        flags: 0,
        lineno: 3191,
        modname,
        function: c_str!("pcpu_embed_first_chunk").as_char_ptr(),
        filename: c_str!("mm/percpu.c").as_char_ptr(),
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

fn header_is_6_12s(test: &Test) {
    kunit_expect!(
        test,
        HEADER == "allocinfo - version: 1.0\n#     <size>  <calls> <tag info>\n"
    );
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

kunit_suite!(
    format_suite,
    "alloctag_format",
    [
        vmlinux_line_matches_6_12,
        module_line_names_module,
        wide_and_negative_values_keep_printf_alignment,
        header_is_6_12s,
        boot_values_match_6_12,
    ]
);
