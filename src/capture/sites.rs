// SPDX-License-Identifier: GPL-2.0

//! The captured call sites: the code-tag library's table of the tags that capture selections
//! marked ([`Sites`]), owned by selection id. A tag's mark (capture's [`Field`] of its flags)
//! is its slot number plus one.
//!
//! The hooks only test the mark; the slots are for the control file and the reports, which read
//! them with the registry locked, and for unmarking: a tag's records are freed when it is
//! unmarked (deselected, or its module going), before the tag's memory can go ([`flush`]).

use super::pool;
use crate::{
    alloc_tag::AllocTag,
    codetag::{Codetag, Field, Marker, Registry, Reuse, Sites},
};
use core::num::NonZeroU32;

/// The most captured call sites at once.
pub(crate) const MAX_SITES: usize = 1024;

static SITES: Sites<MAX_SITES, { super::MAX_SELECTIONS }> = Sites::new(Reuse::AtOnce);

fn mark(id: u32, tag: &Codetag) -> Option<NonZeroU32> {
    SITES.mark(id, tag)
}

fn unmark(value: u32) {
    // The registry cleared the mark first: no record of the tag is made from now on. Its
    // records go in `flush`, with those of every other tag of the walk.
    SITES.unmark(value);
}

/// Frees the records of every tag unmarked by the walk just made, in one pass over the pool.
fn flush() {
    pool::purge_unmarked();
}

fn owner(value: u32) -> u32 {
    SITES.owner(value)
}

/// Capture as a user of selections.
pub(crate) static MARKER: Marker = Marker {
    field: Field::CAPTURE,
    mark,
    unmark,
    flush,
    owner,
};

const _: () = assert!(MAX_SITES <= Field::CAPTURE.max() as usize);

/// Resets the count of tags left unmarked for selection `id`.
pub(crate) fn reset_unmarked(id: u32) {
    SITES.reset_unmarked(id);
}

/// Returns how many tags selection `id` matched with no slot left for them.
pub(crate) fn unmarked(id: u32) -> u32 {
    SITES.unmarked(id)
}

/// Runs `f` on each captured site, with its selection's id.
pub(crate) fn for_each<'r>(registry: &'r Registry, mut f: impl FnMut(u32, &'r AllocTag)) {
    SITES.for_each(registry, |_, id, tag| {
        // SAFETY: Capture selects only allocation tags (`super::add` selects through
        // `ALLOC_TAGS`' handle), and a `struct alloc_tag` starts with its `struct codetag`.
        f(id, unsafe { &*core::ptr::from_ref(tag).cast::<AllocTag>() });
    });
}
