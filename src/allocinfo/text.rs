// SPDX-License-Identifier: GPL-2.0

//! The text of `/proc/allocinfo`: its header and one line per tag.
//!
//! C header: [`include/linux/seq_file.h`](srctree/include/linux/seq_file.h)
//!
//! Version 1.0 is 6.12's format, byte for byte: two header lines, then one line per tag,
//! `%12lli %8llu file:line [module] func:name \n`. Version 2.0 is mainline's: the same, with
//! ` accurate:no` after the function of a tag whose counts are known to be incomplete, and
//! alloctag's ` unloaded:yes` after that for a tag whose module was unloaded while its
//! allocations lived (mainline stops listing such tags, so it has no pair of its own for them;
//! a pair mainline might add for the same meaning would have to be named after it). 1.0 is
//! the default, so that parsers written for 6.12 keep working; `allocinfo.version=2.0` on the
//! kernel command line opts in to 2.0.
//!
//! With per-node counting on (src/alloc_tag/node.rs), 2.0's lines end with the bytes of each
//! node id, ` nid0:BYTES nid1:BYTES …` up to `nr_node_ids - 1`, then ` percpu:BYTES` for
//! per-CPU memory, whose units are on every node: every line the same pairs, so that a reader
//! knows the node ids from any line, and made from the same read as the line's total, so that
//! they add up to it exactly.
//!
//! Lines are made without `core::fmt`: numbers with a small decimal writer, names copied as
//! whole byte slices ([`Out`]). (`core::fmt` through the kernel's `CStr` wrote one character at a time,
//! which made reading the file twice as slow as the C core's `seq_buf_printf()`.)

use super::out::Out;
use crate::{
    alloc_tag::{Counters, Share},
    codetag::Codetag,
};
use core::sync::atomic::{AtomicBool, Ordering};
use kernel::{prelude::*, str::CStr};

/// The header of version 1.0 (6.12).
pub(crate) const HEADER_V1: &[u8] = b"allocinfo - version: 1.0\n#     <size>  <calls> <tag info>\n";
/// The header of version 2.0 (mainline's), without the end of its column line.
const HEADER_V2: &[u8] = b"allocinfo - version: 2.0\n#     <size>  <calls> <tag info>";

/// Whether the file is in version 2.0; set once, at boot.
static VERSION_2: AtomicBool = AtomicBool::new(false);

/// Returns whether `/proc/allocinfo` is in version 2.0.
pub(crate) fn version_2() -> bool {
    VERSION_2.load(Ordering::Relaxed)
}

/// Parses the value of `allocinfo.version=`: `1.0` (or `1`) or `2.0` (or `2`).
pub(crate) fn parse_version(value: &CStr) -> Result<bool> {
    match value.as_bytes() {
        b"1" | b"1.0" => Ok(false),
        b"2" | b"2.0" => Ok(true),
        _ => Err(EINVAL),
    }
}

/// Sets the version from the boot parameter's value; a bad value changes nothing.
pub(crate) fn set_version(value: &CStr) -> Result {
    match parse_version(value) {
        Ok(v2) => {
            VERSION_2.store(v2, Ordering::Relaxed);
            Ok(())
        }
        Err(e) => {
            pr_err!(
                "allocinfo.version: invalid value, expected 1.0 or 2.0; keeping {}\n",
                if version_2() { "2.0" } else { "1.0" }
            );
            Err(e)
        }
    }
}

/// Writes the header of the version in force; `None` when it does not fit in `out`.
///
/// 2.0's column line ends with since when the counters count, ` counters_since:S.UUUUUU` in
/// seconds of boot time (as the log's timestamps and `allocinfo status`'s `counters: made at`),
/// or ` counters_since:none` while no tag has counters: profiling turned on first then, and
/// allocations made before (or while it was off since) carry no tag. On the column line, not a
/// line of its own, so that readers that skip two lines, or any line starting with `#`, read
/// it as before. 1.0 stays 6.12's, byte for byte.
pub(crate) fn put_header(out: &mut Out<'_>, since_ns: Option<u64>) -> Option<()> {
    if !version_2() {
        return out.put(HEADER_V1);
    }
    out.put(HEADER_V2)?;
    out.put(b" counters_since:")?;
    match since_ns {
        Some(ns) => {
            out.put_number(false, ns / 1_000_000_000, 0)?;
            out.put(b".")?;
            // Microseconds, six digits, as the log's timestamps.
            let us = ns % 1_000_000_000 / 1000;
            for p in [100_000, 10_000, 1000, 100, 10, 1] {
                out.put(&[b'0' + (us / p % 10) as u8])?;
            }
        }
        None => out.put(b"none")?,
    }
    out.put(b"\n")
}

/// Writes the line of `tag` with `counters`, as 6.12 (or, with `accuracy`, mainline's version
/// 2.0) prints it, and in 2.0 the bytes of the node shares in `nodes` (node 0 up, and last
/// per-CPU memory's; empty for none); `None` when it does not fit in `out`.
pub(crate) fn put_line(
    out: &mut Out<'_>,
    counters: Counters,
    tag: &Codetag,
    accuracy: bool,
    nodes: &[Share],
) -> Option<()> {
    out.put_number(counters.bytes < 0, counters.bytes.unsigned_abs(), 12)?;
    out.put(b" ")?;
    out.put_number(false, counters.calls, 8)?;
    out.put(b" ")?;
    out.put(tag.filename().as_bytes())?;
    out.put(b":")?;
    out.put_number(false, tag.lineno().into(), 0)?;
    out.put(b" ")?;
    if let Some(module) = tag.modname() {
        out.put(b"[")?;
        out.put(module.as_bytes())?;
        out.put(b"] ")?;
    }
    out.put(b"func:")?;
    out.put(tag.function().as_bytes())?;
    if accuracy && !tag.accurate() {
        out.put(b" accurate:no")?;
    }
    if accuracy && tag.unloaded() {
        out.put(b" unloaded:yes")?;
    }
    if accuracy {
        let last = nodes.len().saturating_sub(1);
        for (i, share) in nodes.iter().enumerate() {
            if i == last {
                out.put(b" percpu:")?;
            } else {
                out.put(b" nid")?;
                out.put_number(false, i as u64, 0)?;
                out.put(b":")?;
            }
            out.put_number(share.bytes < 0, share.bytes.unsigned_abs(), 0)?;
        }
    }
    out.put(b" \n")
}
