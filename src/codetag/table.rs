// SPDX-License-Identifier: GPL-2.0

//! A table of `usize` entries that the allocation and free paths read in any context without a
//! lock: a directory of leaves of [`LEAF`] entries, each leaf made when an entry first needs it
//! and never freed. Code tags' side data that has no room for a pointer names its tag, or the
//! tag's memory, by a small number through one: the tag index (from index to tag, for page tags
//! in page flags: src/codetag/registry/index.rs) and per-node counting (from a block's number to
//! its slots: src/alloc_tag/node/table.rs).
//!
//! C header: [`include/linux/codetag.h`](srctree/include/linux/codetag.h)
//!
//! Its directory is its user's (the tag index's is C's, which the page hooks read inline), or
//! made with the first leaf, so that a table nothing uses costs no memory. Writers serialize
//! among themselves with their own lock; a reader loads the directory, a leaf and an entry with
//! acquire, each published with release after it was zeroed or filled.

use core::{
    ptr,
    sync::atomic::{AtomicPtr, AtomicUsize, Ordering},
};
use kernel::{alloc::flags::GFP_KERNEL, prelude::*};

/// The entries of a leaf: 4 KiB of them on 64-bit.
pub(crate) const LEAF: usize = 512;

/// A table of `dir_len * LEAF` entries, each 0 until its user sets it.
///
/// # Invariants
///
/// `dir` is null or points to `dir_len` pointers that live forever, each null or a zeroed leaf of
/// [`LEAF`] `usize` entries made by [`LeafTable::make_leaves`] and never freed; all of them are
/// accessed atomically. A non-null `dir` never changes; a null one is set once, by
/// [`LeafTable::make_leaves`].
pub(crate) struct LeafTable {
    dir: AtomicPtr<*mut usize>,
    dir_len: usize,
}

impl LeafTable {
    /// Makes a table that makes its directory of `dir_len` leaves with its first leaf.
    #[cfg_attr(not(CONFIG_ALLOCTAG_PER_NODE), allow(dead_code))]
    pub(crate) const fn new(dir_len: usize) -> Self {
        // INVARIANT: No directory yet.
        Self {
            dir: AtomicPtr::new(ptr::null_mut()),
            dir_len,
        }
    }

    /// Makes a table whose directory is `dir`, of `dir_len` leaves.
    ///
    /// # Safety
    ///
    /// `dir` must point to `dir_len` null pointers that live forever, which others only read,
    /// atomically.
    pub(crate) const unsafe fn with_dir(dir: *mut *mut usize, dir_len: usize) -> Self {
        // INVARIANT: The caller guarantees `dir`.
        Self {
            dir: AtomicPtr::new(dir),
            dir_len,
        }
    }

    /// Returns the number of entries the table can hold.
    pub(crate) const fn capacity(&self) -> usize {
        self.dir_len * LEAF
    }

    /// Returns leaf `d`, null where it is not made or out of range. Any context.
    fn leaf_ptr(&self, d: usize) -> *mut usize {
        // Acquire: pairs with the directory's publication in `make_leaves`.
        let dir = self.dir.load(Ordering::Acquire);
        if dir.is_null() || d >= self.dir_len {
            return ptr::null_mut();
        }
        // SAFETY: By the type invariant `dir` has `dir_len` pointers, accessed atomically, and
        // `d < dir_len`.
        unsafe { AtomicPtr::from_ptr(dir.add(d)) }.load(Ordering::Acquire)
    }

    /// Returns entry `i`, if its leaf is made. Any context; never sleeps, takes no lock.
    pub(crate) fn entry(&self, i: usize) -> Option<&AtomicUsize> {
        let leaf = self.leaf_ptr(i / LEAF);
        // SAFETY: A leaf that is made has `LEAF` entries, lives forever and is accessed
        // atomically (type invariant).
        (!leaf.is_null()).then(|| unsafe { AtomicUsize::from_ptr(leaf.add(i % LEAF)) })
    }

    /// Returns the number of leaves made. Any context.
    pub(crate) fn leaves(&self) -> usize {
        (0..self.dir_len)
            .filter(|&d| !self.leaf_ptr(d).is_null())
            .count()
    }

    /// Makes the directory, where it is the table's and not made yet, and the leaves that
    /// entries `first..first + len` need: `ENOSPC` past the table's end, `ENOMEM` without the
    /// memory (what was made stays, for the next call). Process context; may sleep.
    ///
    /// # Safety
    ///
    /// Calls must be serialized (the user's lock, held for writing).
    pub(crate) unsafe fn make_leaves(&self, first: usize, len: usize) -> Result {
        if first + len > self.capacity() {
            return Err(ENOSPC);
        }
        let mut dir = self.dir.load(Ordering::Relaxed);
        if dir.is_null() {
            // A zero `usize` is a null pointer: `dir_len` of them.
            dir = zeroed(self.dir_len)?.cast();
            // INVARIANT: Set once (calls are serialized), leaked: never freed. Release: the
            // zeroed directory before its address.
            self.dir.store(dir, Ordering::Release);
        }
        for d in first / LEAF..(first + len).div_ceil(LEAF) {
            // SAFETY: `d < dir_len`, as `first + len` is within the table; the directory lives
            // forever and is accessed atomically (type invariant).
            let slot = unsafe { AtomicPtr::from_ptr(dir.add(d)) };
            if slot.load(Ordering::Relaxed).is_null() {
                // INVARIANT: A zeroed leaf of `LEAF` entries, leaked: never freed. Release: the
                // zeroed leaf before its address.
                slot.store(new_leaf()?, Ordering::Release);
            }
        }
        Ok(())
    }
}

/// Returns `len` zeroed `usize`s that are never freed, or `ENOMEM`. The core's own allocation,
/// charged to this line: a directory.
fn zeroed(len: usize) -> Result<*mut usize> {
    let made = kernel::alloc_hooks!(KVec::from_elem(0usize, len, GFP_KERNEL))?;
    Ok(made.into_raw_parts().0)
}

/// Returns a zeroed leaf that is never freed, or `ENOMEM`: a line of its own, whose failure
/// the switch-on's tests inject (tests/guest/boot.sh).
fn new_leaf() -> Result<*mut usize> {
    let made = kernel::alloc_hooks!(KVec::from_elem(0usize, LEAF, GFP_KERNEL))?;
    Ok(made.into_raw_parts().0)
}
