// SPDX-License-Identifier: GPL-2.0

//! The captured call sites: one slot per tag that a capture selection marked, holding the tag
//! and the selection. A tag's mark (capture's [`Field`] of its flags) is its slot number plus
//! one.
//!
//! The hooks only test the mark; the slots are for the control file and the reports, which read
//! them with the registry locked, and for unmarking: a tag's records are freed when it is
//! unmarked (deselected, or its module going), before the tag's memory can go.

use super::pool;
use crate::{
    alloc_tag::AllocTag,
    codetag::{Codetag, Field, Marker},
};
use core::{
    num::NonZeroU32,
    ptr,
    sync::atomic::{AtomicPtr, AtomicU32, Ordering},
};

/// The most captured call sites at once.
pub(crate) const MAX_SITES: usize = 1024;

/// One captured call site: a tag and the selection that marked it. Changed only with the
/// registry locked for writing.
struct Site {
    /// The selection's id; 0 for a free slot.
    id: AtomicU32,
    /// Valid while `id` is not 0: the registry unmarks a tag before its module's memory goes.
    tag: AtomicPtr<Codetag>,
}

static SITES: [Site; MAX_SITES] = [const {
    Site {
        id: AtomicU32::new(0),
        tag: AtomicPtr::new(ptr::null_mut()),
    }
}; MAX_SITES];

/// Tags that a selection matched but no slot was left for, per selection.
static UNMARKED: [AtomicU32; super::MAX_SELECTIONS] =
    [const { AtomicU32::new(0) }; super::MAX_SELECTIONS];

fn site(value: u32) -> Option<&'static Site> {
    SITES.get((value as usize).wrapping_sub(1))
}

fn mark(id: u32, tag: &Codetag) -> Option<NonZeroU32> {
    for (i, site) in SITES.iter().enumerate() {
        if site.id.load(Ordering::Relaxed) == 0 {
            site.tag
                .store(ptr::from_ref(tag).cast_mut(), Ordering::Relaxed);
            site.id.store(id, Ordering::Relaxed);
            return NonZeroU32::new(i as u32 + 1);
        }
    }
    if let Some(n) = UNMARKED.get((id as usize).wrapping_sub(1)) {
        n.fetch_add(1, Ordering::Relaxed);
    }
    None
}

fn unmark(value: u32) {
    let Some(site) = site(value) else {
        return;
    };
    // The registry cleared the mark first: no record of the tag is made from now on. Its
    // records go in `flush`, with those of every other tag of the walk.
    site.tag.store(ptr::null_mut(), Ordering::Relaxed);
    site.id.store(0, Ordering::Relaxed);
}

/// Frees the records of every tag unmarked by the walk just made, in one pass over the pool.
fn flush() {
    pool::purge_unmarked();
}

fn owner(value: u32) -> u32 {
    site(value).map_or(0, |s| s.id.load(Ordering::Relaxed))
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
    if let Some(n) = UNMARKED.get((id as usize).wrapping_sub(1)) {
        n.store(0, Ordering::Relaxed);
    }
}

/// Returns how many tags selection `id` matched with no slot left for them.
pub(crate) fn unmarked(id: u32) -> u32 {
    UNMARKED
        .get((id as usize).wrapping_sub(1))
        .map_or(0, |n| n.load(Ordering::Relaxed))
}

/// Runs `f` on each captured site, with its selection's id. Called with the registry locked, so
/// that the tags stay.
pub(crate) fn for_each(mut f: impl FnMut(u32, &AllocTag)) {
    for site in SITES.iter() {
        let id = site.id.load(Ordering::Relaxed);
        let tag = site.tag.load(Ordering::Relaxed);
        if id == 0 || tag.is_null() {
            continue;
        }
        // SAFETY: A used slot's tag is listed in the registry, which the caller holds locked:
        // the registry unmarks a module's tags, under its write lock, before they go. Capture
        // selects only allocation tags (`super::add` selects through `ALLOC_TAGS`' handle), and
        // a `struct alloc_tag` starts with its `struct codetag`, so the tag is an `AllocTag`.
        f(id, unsafe { &*tag.cast::<AllocTag>() });
    }
}
