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
//! The file is walked as `/proc/allocinfo` is, by a [`Reader`] that holds the registry
//! read-locked only within one `read()`, each line written straight into seq_file's buffer. So
//! one open holds a few hundred bytes and seq_file's buffer, all charged to the opener's memory
//! cgroup, whatever the number of tags; each line is one moment of its site, as in
//! `/proc/allocinfo`. (It used to make the whole text at open: about 280 bytes per tag per open
//! file, which held opens could pile up outside any cgroup.)

use crate::{
    alloc_tag::{waste::Figures, AllocTag, AllocTags, ALLOC_TAGS},
    codetag::Reader,
    seq::{SeqOps, SeqState, SeqWriter},
};
use core::{ffi::c_int, fmt::Write};
use kernel::{bindings, c_str, prelude::*};

/// The header line.
const HEADER: &str = "allocwaste - version: 1.0";

/// The state of one open `/proc/allocwaste`: position 0 is the header, position `n` the line
/// of the tag at position `n - 1` of the registry's listing.
struct FileState {
    /// Where `read()` stands among the tags.
    tags: Reader<AllocTags>,
    /// At the header, the accounting's state for it (on, since, now), read by `start` before
    /// the registry is locked: [`super::set`] takes its lock, then the registry's.
    header: Option<(bool, u64, u64)>,
}

impl FileState {
    /// Moves to the line at `pos`, with the registry locked. Returns whether there is one.
    fn seek(&mut self, pos: i64) -> bool {
        if pos == 0 {
            return self.header.is_some();
        }
        self.header = None;
        self.tags.seek(pos - 1)
    }

    /// Writes the three header lines.
    fn show_header(
        w: &mut SeqWriter,
        (on, since_ns, now_ns): (bool, u64, u64),
    ) -> core::fmt::Result {
        writeln!(w, "{HEADER}")?;
        writeln!(
            w,
            "# state: {} since_ns: {since_ns} now_ns: {now_ns}",
            if on { "on" } else { "off" }
        )?;
        writeln!(
            w,
            "#{:>12} {:>12} {:>12} {:>12} {:>12} {:>12} <tag info>",
            "<bytes>", "<requested>", "<slack>", "<allocs>", "<frees>", "<untracked>"
        )
    }

    /// Writes the line of `tag`.
    fn show_tag(w: &mut SeqWriter, tag: &AllocTag) -> core::fmt::Result {
        let f = tag.read_waste().unwrap_or(Figures::default());
        // A read races with the hooks: the sums are clamped where they cannot be negative.
        let bytes = f.bytes.max(0);
        let requested = f.requested.clamp(0, bytes);
        let untracked = tag.read().bytes.saturating_sub(bytes).max(0);
        let ct = tag.codetag();
        writeln!(
            w,
            "{bytes:>13} {requested:>12} {:>12} {:>12} {:>12} {untracked:>12} {ct}{}",
            bytes - requested,
            f.allocs,
            f.frees,
            if ct.accurate() { "" } else { " accurate:no" }
        )
    }
}

impl SeqState for FileState {
    /// At position 0, reads the accounting's state; then locks the registry until `stop` and
    /// moves to the line at `pos`.
    fn start(&mut self, pos: i64) -> bool {
        if pos == 0 {
            self.header = Some(super::state());
        }
        self.tags.lock();
        self.seek(pos)
    }

    fn next(&mut self, pos: i64) -> bool {
        self.seek(pos)
    }

    /// Unlocks the registry. seq_file calls it after every `start`.
    fn stop(&mut self) {
        self.tags.unlock();
    }

    /// Writes the line at the position. One that does not fit marks seq_file's buffer
    /// overflowed (`seq_write()`), and seq_file shows it again with a larger buffer.
    fn show(&mut self, w: &mut SeqWriter) {
        let _ = match (self.header, self.tags.tag()) {
            (Some(state), _) => Self::show_header(w, state),
            (None, Some(tag)) => Self::show_tag(w, tag),
            (None, None) => Ok(()),
        };
    }
}

static SEQ_OPS: bindings::seq_operations = SeqOps::<FileState>::OPS;

/// `open` of `/proc/allocwaste`: a seq_file with a fresh [`FileState`].
///
/// # Safety
///
/// Called by procfs with a valid inode and file.
unsafe extern "C" fn open(_inode: *mut bindings::inode, file: *mut bindings::file) -> c_int {
    let state = FileState {
        tags: Reader::new(&ALLOC_TAGS),
        header: None,
    };
    // SAFETY: `file` is being opened with `PROC_OPS`, whose release is `FileState`'s.
    unsafe { SeqOps::open(file, &SEQ_OPS, Ok(state)) }
}

static PROC_OPS: bindings::proc_ops = bindings::proc_ops {
    proc_open: Some(open),
    proc_read_iter: Some(bindings::seq_read_iter),
    proc_lseek: Some(bindings::seq_lseek),
    proc_release: Some(SeqOps::<FileState>::release),
    // SAFETY: All-zero is a valid `proc_ops`: no flags and no other callbacks.
    ..unsafe { core::mem::zeroed() }
};

/// Creates `/proc/allocwaste`, mode 0400.
pub(crate) fn register() -> Result {
    crate::seq::proc_create(c_str!("allocwaste"), 0o400, &PROC_OPS)
}
