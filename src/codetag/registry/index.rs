// SPDX-License-Identifier: GPL-2.0

//! Small indices for code tags, for side data that has no room for a pointer (page tags in
//! page flags: include/linux/alloctag_pgflags.h).
//!
//! C header: [`include/linux/codetag.h`](srctree/include/linux/codetag.h)
//!
//! Index 0 names no tag and 1 the empty marker (`CODETAG_EMPTY`); a tag type's user reserves
//! the indices below [`TagIndex::enable`]'s `first` for tags it turns into indices itself
//! (vmlinux's, by arithmetic on its section, named with [`name_tags`]). Above them each
//! *segment*, an array of tags (a module's section, a chunk of dynamic tags), gets a block of
//! consecutive indices while it is added, the first free block that fits. A segment whose tags
//! may still be named by an index somewhere (a module that unloads with live allocations keeps
//! its tags) is simply not removed, and keeps its block.
//!
//! Both lookups run in every context an allocation or a free runs in, and take no lock. From
//! tag to index: each tag carries its index (`struct codetag`'s `index`), 0 while it has none.
//! From index to tag: a [`LeafTable`] whose directory the user provides, each entry the address
//! of the tag of its index or 0. A segment's entries are set before its tags' indices, and its tags' indices
//! cleared before its entries, so that whatever an index was copied to names a tag in the table
//! (the caller removes a segment only when nothing names its tags any more). Changes are rare
//! (module load and unload, a chunk of dynamic tags made) and take the index's own lock.
//!
//! A user that reads no index until a moment of its choosing may defer the table
//! ([`TagIndex::defer`]): segments then take indices, and their tags carry them, with no leaf
//! made nor entry set until [`TagIndex::make_deferred`], which the user calls before anything
//! may copy an index (page tags in page flags, booted off: the first switch-on).

use crate::codetag::LeafTable;
use crate::rwsem::RwSem;
use core::sync::atomic::{AtomicU32, Ordering};
use kernel::{alloc::flags::GFP_KERNEL, bindings, prelude::*};

/// The first index of a tag: 1 is the empty marker's.
pub(crate) const FIRST: usize = 2;

/// An array of `len` tags of `tag_size` bytes at `start`, named by the indices from `base`.
#[derive(Clone, Copy)]
struct Segment {
    start: usize,
    len: usize,
    tag_size: usize,
    base: usize,
}

/// Sets the index of each of the `len` tags of `tag_size` bytes at `start` to `base` plus its
/// place, or to 0 where `base` is 0. Any context; the tags' other fields are left alone.
///
/// # Safety
///
/// `start` must point to `len` tags of `tag_size` bytes, each beginning with a `struct codetag`,
/// that live across the call; their indices are accessed atomically only.
pub(crate) unsafe fn name_tags(start: *const u8, len: usize, tag_size: usize, base: usize) {
    for i in 0..len {
        // SAFETY: By the caller's guarantee tag `i` begins with a `struct codetag`, live.
        let ct = unsafe { start.add(i * tag_size) }
            .cast_mut()
            .cast::<bindings::codetag>();
        let idx = if base == 0 { 0 } else { base + i };
        // SAFETY: An aligned `unsigned int` of a live tag, accessed atomically only.
        let index = unsafe { AtomicU32::from_ptr(&raw mut (*ct).index) };
        // An index fits: `TagIndex::add` gives out at most the table's, fewer than 2^32.
        index.store(idx as u32, Ordering::Release);
    }
}

/// Removes element `i` of `v`, keeping the others' order (the kernel's `KVec` has no `remove`).
fn remove_at(v: &mut KVec<Segment>, i: usize) {
    let len = v.len();
    if i >= len {
        return;
    }
    if let Some(tail) = v.get_mut(i..) {
        tail.rotate_left(1);
    }
    // SAFETY: `i < len`, so `len - 1 < len`, and `Segment` is `Copy`: dropping nothing is
    // right.
    unsafe { v.set_len(len - 1) };
}

/// What the index's lock guards.
struct Bounds {
    /// The first index a segment may take; 0 while the index is off.
    first: usize,
    /// One past the last index.
    capacity: usize,
    /// The segments, sorted by their first index.
    segments: KVec<Segment>,
    /// The arrays of tags that got no indices (no free block, or no memory for the table),
    /// until they are removed: a module's, as it unloads.
    refused: KVec<Segment>,
    /// Segments take indices but the table's leaves are not made, nor its entries set, until
    /// [`TagIndex::make_deferred`]: nothing reads indices from pages yet.
    deferred: bool,
}

/// What an index holds, for `/sys/kernel/debug/alloctag/status`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(
    not(any(CONFIG_DEBUG_FS, CONFIG_ALLOCTAG_KUNIT_TEST)),
    allow(dead_code)
)]
pub(crate) struct Usage {
    /// Indices taken: those below the first a segment may take, and the segments'.
    pub(crate) used: usize,
    /// Indices the index may give, reserved ones included; 0 while it is off.
    pub(crate) capacity: usize,
    /// Tags present that got no indices, whose pages are not charged.
    pub(crate) refused: usize,
    /// The table's leaves made, of 4 KiB each (on 64-bit).
    pub(crate) leaves: usize,
}

/// Indices for the tags of one tag type.
///
/// # Invariants
///
/// Entry `i` of `table` is the address of the tag of index `i` while its segment is in
/// `segments` and the index is not deferred, 0 otherwise; a segment's tags have their indices
/// while it is there, set after its entries and cleared before them (while deferred, set without
/// entries: no page holds an index then). All of these, and the table's leaves, change only
/// under `lock`.
pub(crate) struct TagIndex {
    table: LeafTable,
    lock: RwSem<Bounds>,
}

impl TagIndex {
    /// Makes an index that is off, guarded by `sem`, with its table from index to tag in the
    /// `dir_len` leaves of `dir`.
    ///
    /// # Safety
    ///
    /// `sem` must point to a `struct rw_semaphore` defined with `DECLARE_RWSEM()` that nothing
    /// else uses; `dir` to `dir_len` null pointers that live forever, which others only read,
    /// atomically.
    pub(crate) const unsafe fn new(
        sem: *mut bindings::rw_semaphore,
        dir: *mut *mut usize,
        dir_len: usize,
    ) -> Self {
        // INVARIANT: No segments, no leaves.
        Self {
            // SAFETY: The caller guarantees `dir`.
            table: unsafe { LeafTable::with_dir(dir, dir_len) },
            // SAFETY: The caller guarantees `sem`.
            lock: unsafe {
                RwSem::new(
                    sem,
                    Bounds {
                        first: 0,
                        capacity: 0,
                        segments: KVec::new(),
                        refused: KVec::new(),
                        deferred: false,
                    },
                )
            },
        }
    }

    /// Turns the index on: segments take indices from `first` up to `capacity`, at most what
    /// the table holds. Process context.
    pub(crate) fn enable(&self, first: usize, capacity: usize) {
        let mut bounds = self.lock.write();
        bounds.first = first.max(FIRST);
        bounds.capacity = capacity.min(self.table.capacity());
    }

    /// Defers the table's memory until [`TagIndex::make_deferred`]: segments added until then
    /// take their indices, and the tags carry them, but no leaf is made nor entry set. For an
    /// index that nothing reads until a moment of its user's choosing (page tags in page flags
    /// from the first switch-on). Process context, or boot before anything is added.
    pub(crate) fn defer(&self) {
        self.lock.write().deferred = true;
    }

    /// Makes the leaves of the segments added while deferred and sets their entries; from then
    /// on segments get theirs as they are added. `ENOMEM` leaves it deferred, no entry set: the
    /// leaves made stay, for the next call. Process context; may sleep.
    pub(crate) fn make_deferred(&self) -> Result {
        let mut bounds = self.lock.write();
        if !bounds.deferred {
            return Ok(());
        }
        for seg in bounds.segments.iter() {
            self.make_leaves(seg.base, seg.len)?;
        }
        for seg in bounds.segments.iter() {
            self.fill(seg, true);
        }
        bounds.deferred = false;
        Ok(())
    }

    /// Makes the leaves that the indices `base..base + len` need. Called with the lock held for
    /// writing; process context.
    fn make_leaves(&self, base: usize, len: usize) -> Result {
        // SAFETY: Calls are serialized by the lock, held for writing.
        unsafe { self.table.make_leaves(base, len) }
    }

    /// Sets the table's entries of `seg`'s indices to its tags, or to 0. Called with the lock
    /// held for writing, its leaves made.
    fn fill(&self, seg: &Segment, set: bool) {
        for i in 0..seg.len {
            if let Some(e) = self.table.entry(seg.base + i) {
                // INVARIANT: Under the lock; the tag of index `base + i` or 0.
                e.store(
                    if set { seg.start + i * seg.tag_size } else { 0 },
                    Ordering::Release,
                );
            }
        }
    }

    /// Returns the address of the tag of index `idx`, or 0 where no segment has it. Any
    /// context; never sleeps, takes no lock. (The page hooks read the table inline, in C.)
    #[cfg_attr(not(CONFIG_ALLOCTAG_KUNIT_TEST), allow(dead_code))]
    pub(crate) fn tag_at(&self, idx: usize) -> usize {
        self.table
            .entry(idx)
            .map_or(0, |e| e.load(Ordering::Acquire))
    }

    /// Returns the number of segments. Process context; may sleep.
    #[cfg_attr(not(CONFIG_ALLOCTAG_KUNIT_TEST), allow(dead_code))]
    pub(crate) fn segments(&self) -> usize {
        self.lock.read().segments.len()
    }

    /// Returns what the index holds. Process context; may sleep.
    #[cfg_attr(
        not(any(CONFIG_DEBUG_FS, CONFIG_ALLOCTAG_KUNIT_TEST)),
        allow(dead_code)
    )]
    pub(crate) fn usage(&self) -> Usage {
        let bounds = self.lock.read();
        let refused = bounds.refused.iter().map(|s| s.len).sum();
        if bounds.first == 0 {
            return Usage {
                refused,
                ..Usage::default()
            };
        }
        Usage {
            used: bounds.segments.iter().map(|s| s.len).sum::<usize>() + bounds.first,
            capacity: bounds.capacity,
            refused,
            // Counted where they are: a failed call may have made some.
            leaves: self.table.leaves(),
        }
    }

    /// Gives the `len` tags of `tag_size` bytes at `start` a block of indices, sets each tag's
    /// index, and returns the block's first. `ENOSPC` where no free block fits, `ENODEV` while
    /// the index is off. Process context; may sleep.
    ///
    /// # Safety
    ///
    /// `start` must point to `len` tags of `tag_size` bytes, each beginning with a
    /// `struct codetag` whose index is accessed atomically only, that stay where they are until
    /// [`TagIndex::remove`] is called for `start`.
    pub(crate) unsafe fn add(
        &self,
        start: *const u8,
        len: usize,
        tag_size: usize,
    ) -> Result<usize> {
        let mut bounds = self.lock.write();
        if bounds.first == 0 {
            return Err(ENODEV);
        }
        let mut base = bounds.first;
        let mut at = bounds.segments.len();
        for (i, s) in bounds.segments.iter().enumerate() {
            if s.base >= base + len {
                at = i;
                break;
            }
            base = base.max(s.base + s.len);
        }
        let seg = Segment {
            start: start as usize,
            len,
            tag_size,
            base,
        };
        let placed = if len == 0 || base + len > bounds.capacity {
            Err(ENOSPC)
        } else {
            // The core's own allocations are charged to their own lines (`alloc_hooks!`): a
            // chunk of dynamic tags may be what is being added.
            let made = if bounds.deferred {
                Ok(())
            } else {
                self.make_leaves(base, len)
            };
            made.and_then(|()| {
                kernel::alloc_hooks!(bounds.segments.push(seg, GFP_KERNEL)).map_err(Error::from)
            })
        };
        if let Err(e) = placed {
            // Counted while they are there; without the memory to count them, they are not.
            let _ = kernel::alloc_hooks!(bounds.refused.push(seg, GFP_KERNEL));
            return Err(e);
        }
        if let Some(tail) = bounds.segments.get_mut(at..) {
            tail.rotate_right(1);
        }
        // INVARIANT: The entries first, then the tags' indices: a page can hold an index only
        // once a tag has it, and then the table names the tag. Deferred, no entry is set (a
        // failed `make_deferred` may have made leaves), and no page holds an index yet.
        if !bounds.deferred {
            self.fill(&seg, true);
        }
        // SAFETY: The caller guarantees the tags.
        unsafe { name_tags(start, len, tag_size, base) };
        Ok(base)
    }

    /// Takes back the indices of the segment at `start`, whose tags nothing names by index any
    /// more, and clears the tags' indices; forgets tags at `start` that got none. Process
    /// context; may sleep.
    ///
    /// # Safety
    ///
    /// The segment's tags, if it was added, must still be where [`TagIndex::add`] found them.
    pub(crate) unsafe fn remove(&self, start: *const u8) {
        let mut bounds = self.lock.write();
        if let Some(i) = bounds
            .refused
            .iter()
            .position(|s| s.start == start as usize)
        {
            remove_at(&mut bounds.refused, i);
        }
        let Some((i, seg)) = bounds
            .segments
            .iter()
            .enumerate()
            .find(|(_, s)| s.start == start as usize)
            .map(|(i, s)| (i, *s))
        else {
            return;
        };
        // INVARIANT: The tags' indices first, then the entries.
        // SAFETY: The caller guarantees the tags, as `add` was given them.
        unsafe { name_tags(start, seg.len, seg.tag_size, 0) };
        self.fill(&seg, false);
        remove_at(&mut bounds.segments, i);
    }
}
