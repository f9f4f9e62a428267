// SPDX-License-Identifier: GPL-2.0

//! `/proc/allocwaste` (0400), version 1.0 (Documentation/mm/alloctag-waste.rst): a header, the
//! state, a column comment, then one line per call site, in `/proc/allocinfo`'s order:
//!
//! ```text
//! allocwaste - version: 1.0
//! # state: on since_ns: 5000000000 now_ns: 65000000000
//! #      <bytes>  <requested>      <slack>     <allocs>      <frees>  <untracked> <tag info>
//!         1280         1000          280           10            0            0 lib/m.c:42 [m] func:f
//! ```
//!
//! `bytes`, `requested` and `slack` are live, of the objects tracked in the period that runs
//! (or ran last); `allocs` and `frees` are counted in it; `untracked` is what
//! `/proc/allocinfo` counts for the site beyond the tracked bytes.
//!
//! C header: [`include/linux/proc_fs.h`](srctree/include/linux/proc_fs.h)
//!
//! The text is made when the file is opened, with the registry read-locked, and shown a line
//! at a time, so that one read sees one moment of every site.

use crate::{
    alloc_tag::{waste::Figures, ALLOC_TAGS},
    codetag::{self, Cursor},
    seq::{Items, Lines, SeqOps},
};
use core::ffi::c_int;
use kernel::{bindings, c_str, prelude::*};

/// The header line.
const HEADER: &str = "allocwaste - version: 1.0";

/// Makes the text.
fn make() -> Result<Lines> {
    let handle = ALLOC_TAGS.handle().ok_or(ENODEV)?;
    let (on, since_ns, now_ns) = super::state();
    let mut out = Lines::new();
    out.line(format_args!("{HEADER}"))?;
    out.line(format_args!(
        "# state: {} since_ns: {since_ns} now_ns: {now_ns}",
        if on { "on" } else { "off" }
    ))?;
    out.line(format_args!(
        "#{:>12} {:>12} {:>12} {:>12} {:>12} {:>12} <tag info>",
        "<bytes>", "<requested>", "<slack>", "<allocs>", "<frees>", "<untracked>"
    ))?;
    let registry = codetag::read();
    for tag in registry.tags(handle, Cursor::START) {
        let w = tag.read_waste().unwrap_or(Figures::default());
        // A read races with the hooks: the sums are clamped where they cannot be negative.
        let bytes = w.bytes.max(0);
        let requested = w.requested.clamp(0, bytes);
        let untracked = tag.read().bytes.saturating_sub(bytes).max(0);
        let ct = tag.codetag();
        out.line(format_args!(
            "{bytes:>13} {requested:>12} {:>12} {:>12} {:>12} {untracked:>12} {ct}{}",
            bytes - requested,
            w.allocs,
            w.frees,
            if ct.accurate() { "" } else { " accurate:no" }
        ))?;
    }
    Ok(out)
}

static SEQ_OPS: bindings::seq_operations = SeqOps::<Items<Lines>>::OPS;

/// `open` of `/proc/allocwaste`.
///
/// # Safety
///
/// Called by procfs with a valid inode and file.
unsafe extern "C" fn open(_inode: *mut bindings::inode, file: *mut bindings::file) -> c_int {
    // SAFETY: `file` is being opened with `PROC_OPS`, whose release is `Items<Lines>`'s.
    unsafe { SeqOps::open(file, &SEQ_OPS, make().map(Items::new)) }
}

static PROC_OPS: bindings::proc_ops = bindings::proc_ops {
    proc_open: Some(open),
    proc_read_iter: Some(bindings::seq_read_iter),
    proc_lseek: Some(bindings::seq_lseek),
    proc_release: Some(SeqOps::<Items<Lines>>::release),
    // SAFETY: All-zero is a valid `proc_ops`: no flags and no other callbacks.
    ..unsafe { core::mem::zeroed() }
};

/// Creates `/proc/allocwaste`, mode 0400.
pub(crate) fn register() -> Result {
    crate::seq::proc_create(c_str!("allocwaste"), 0o400, &PROC_OPS)
}
