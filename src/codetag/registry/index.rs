// SPDX-License-Identifier: GPL-2.0

//! Small indices for code tags, for side data that has no room for a pointer (page tags in
//! page flags: include/linux/alloctag_pgflags.h).
//!
//! C header: [`include/linux/codetag.h`](srctree/include/linux/codetag.h)
//!
//! Index 0 names no tag and 1 the empty marker (`CODETAG_EMPTY`); a tag type's user reserves
//! the indices below [`TagIndex::enable`]'s `first` for tags it turns into indices itself
//! (vmlinux's, by arithmetic on its section). Above them each *segment*, an array of tags
//! (a module's section, a chunk of dynamic tags), gets a block of consecutive indices while it
//! is added, the first free block that fits. A segment whose tags may still be named by an
//! index somewhere (a module that unloads with live allocations keeps its tags) is simply not
//! removed, and keeps its block.
//!
//! The lookups run in every context an allocation or a free runs in. From index to tag they
//! read a table with no lock: a directory, which the user provides, of leaves of [`LEAF`]
//! entries, each the address of the tag of its index or 0. Leaves are made as blocks need them
//! and never freed; an entry is set before its segment is published and cleared when the
//! segment goes, when nothing names its tags any more. From tag to index they read an immutable
//! snapshot of the segments under `rcu_read_lock()`. A change makes a new snapshot, publishes
//! it and frees the old one after `synchronize_rcu()`, in process context, under the index's
//! own lock: changes are rare (module load and unload, a chunk of dynamic tags made).

use crate::rwsem::{RwSem, RwSemStorage};
use core::{
    ptr,
    sync::atomic::{AtomicPtr, AtomicU32, AtomicUsize, Ordering},
};
use kernel::{alloc::flags::GFP_KERNEL, bindings, prelude::*};

/// The first index of a tag: 1 is the empty marker's.
pub(crate) const FIRST: usize = 2;

/// The entries of a leaf of the table from index to tag.
pub(crate) const LEAF: usize = 512;

/// An array of `len` tags of `tag_size` bytes at `start`, named by the indices from `base`.
#[derive(Clone, Copy)]
struct Segment {
    start: usize,
    len: usize,
    tag_size: usize,
    base: usize,
}

impl Segment {
    /// Returns the index of the tag at `addr`, if it is one of this segment's.
    fn index_of(&self, addr: usize) -> Option<usize> {
        let off = addr.checked_sub(self.start)?;
        let i = off.checked_div(self.tag_size)?;
        (i < self.len && off.checked_rem(self.tag_size) == Some(0)).then_some(self.base + i)
    }

    /// Returns what a lookup that found `result` here reports.
    fn found(&self, result: usize, generation: u32) -> Found {
        Found {
            result,
            start: self.start,
            bytes: self.len * self.tag_size,
            base: self.base,
            generation,
        }
    }
}

/// A segment a lookup found, and the generation it was found under: what a cache of the
/// lookup keeps, valid while [`TagIndex::generation`] is unchanged.
#[derive(Clone, Copy)]
pub(crate) struct Found {
    /// The index the lookup asked for.
    pub(crate) result: usize,
    /// The segment's first tag.
    pub(crate) start: usize,
    /// Its size in bytes.
    pub(crate) bytes: usize,
    /// The index of its first tag.
    pub(crate) base: usize,
    /// The generation.
    pub(crate) generation: u32,
}

/// The segments, sorted by address and by index.
struct Snapshot {
    by_addr: KVec<Segment>,
    by_base: KVec<Segment>,
}

impl Snapshot {
    /// Returns the last segment of `v` whose `key` is at most `x` (`v` sorted by `key`).
    fn floor(v: &[Segment], x: usize, key: fn(&Segment) -> usize) -> Option<&Segment> {
        let n = v.partition_point(|s| key(s) <= x);
        n.checked_sub(1).and_then(|i| v.get(i))
    }
}

/// What the index's lock guards: its bounds.
struct Bounds {
    /// The first index a segment may take; 0 while the index is off.
    first: usize,
    /// One past the last index.
    capacity: usize,
}

/// Indices for the tags of one tag type.
///
/// # Invariants
///
/// `snapshot` is null or points to a `Snapshot` made by [`TagIndex::publish`] that is freed
/// only after it was replaced and an RCU grace period passed. It changes only under `lock`.
/// `generation` points to a `u32` that lives forever and is only accessed atomically; it
/// changes when a segment is removed, after the snapshot without it is published and before
/// the grace period. `dir` points to `dir_len` pointers that live forever, each null or a leaf
/// of [`LEAF`] `usize` entries made by [`TagIndex::make_leaves`] and never freed; others only read
/// them, atomically. Entry `i` of leaf `d` is the address of the tag of index
/// `d * LEAF + i` while its segment is published, 0 otherwise; both change only under `lock`.
pub(crate) struct TagIndex {
    snapshot: AtomicPtr<Snapshot>,
    generation: *mut u32,
    dir: *mut *mut usize,
    dir_len: usize,
    /// Segments added: for messages and tests.
    segments: AtomicUsize,
    lock: RwSem<Bounds>,
}

// SAFETY: The snapshot is immutable once published and freed only after a grace period; the
// bounds are guarded by the lock; the generation and the table are only accessed atomically.
unsafe impl Sync for TagIndex {}

impl TagIndex {
    /// Makes an index that is off, guarded by `sem`, counting its removals in `generation`,
    /// with its table from index to tag in the `dir_len` leaves of `dir`.
    ///
    /// # Safety
    ///
    /// `sem` must point to a `struct rw_semaphore` defined with `DECLARE_RWSEM()` that nothing
    /// else uses; `generation` to a `u32` that lives forever, which others only read, and
    /// atomically; `dir` to `dir_len` null pointers that live forever, which others only read,
    /// atomically.
    pub(crate) const unsafe fn new(
        sem: *mut RwSemStorage,
        generation: *mut u32,
        dir: *mut *mut usize,
        dir_len: usize,
    ) -> Self {
        // INVARIANT: No snapshot, no leaves; the caller guarantees `generation` and `dir`.
        Self {
            snapshot: AtomicPtr::new(ptr::null_mut()),
            generation,
            dir,
            dir_len,
            segments: AtomicUsize::new(0),
            // SAFETY: The caller guarantees `sem`.
            lock: unsafe {
                RwSem::new(
                    sem.cast(),
                    Bounds {
                        first: 0,
                        capacity: 0,
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
        bounds.capacity = capacity.min(self.dir_len * LEAF);
    }

    /// Returns leaf `d` of the table, null where it is not made or out of range. Any context.
    fn leaf_ptr(&self, d: usize) -> *mut usize {
        if d >= self.dir_len {
            return ptr::null_mut();
        }
        // SAFETY: By the type invariant `dir` has `dir_len` pointers, accessed atomically.
        unsafe { AtomicPtr::from_ptr(self.dir.add(d)) }.load(Ordering::Acquire)
    }

    /// Returns the entry of `idx` in the table, if its leaf is made. Any context.
    fn entry(&self, idx: usize) -> Option<&AtomicUsize> {
        let leaf = self.leaf_ptr(idx / LEAF);
        // SAFETY: A leaf that is made has `LEAF` entries, lives forever and is accessed
        // atomically (type invariant).
        (!leaf.is_null()).then(|| unsafe { AtomicUsize::from_ptr(leaf.add(idx % LEAF)) })
    }

    /// Makes the leaves that the indices `base..base + len` need. Called with the lock held for
    /// writing; process context.
    fn make_leaves(&self, base: usize, len: usize) -> Result {
        for d in base / LEAF..(base + len).div_ceil(LEAF) {
            if d >= self.dir_len {
                return Err(ENOSPC);
            }
            if !self.leaf_ptr(d).is_null() {
                continue;
            }
            // The core's own allocations are charged to their own lines.
            let leaf = kernel::alloc_hooks!(KVec::from_elem(0usize, LEAF, GFP_KERNEL))?;
            let (p, _, _) = leaf.into_raw_parts();
            // INVARIANT: A zeroed leaf of `LEAF` entries, leaked: never freed.
            // SAFETY: `d < dir_len`, checked above; the directory is accessed atomically.
            unsafe { AtomicPtr::from_ptr(self.dir.add(d)) }.store(p, Ordering::Release);
        }
        Ok(())
    }

    /// Sets the table's entries of `seg`'s indices to its tags, or to 0. Called with the lock
    /// held for writing, its leaves made.
    fn fill(&self, seg: &Segment, set: bool) {
        for i in 0..seg.len {
            if let Some(e) = self.entry(seg.base + i) {
                // INVARIANT: Under the lock; the tag of index `base + i` or 0.
                e.store(
                    if set { seg.start + i * seg.tag_size } else { 0 },
                    Ordering::Release,
                );
            }
        }
    }

    /// Returns the address of the tag of index `idx`, or 0 where no published segment has it.
    /// Any context; never sleeps, takes no lock. (The page hooks read the table inline, in C.)
    #[cfg_attr(not(CONFIG_ALLOCTAG_KUNIT_TEST), allow(dead_code))]
    pub(crate) fn tag_at(&self, idx: usize) -> usize {
        self.entry(idx).map_or(0, |e| e.load(Ordering::Acquire))
    }

    /// Returns the number of segments.
    #[cfg_attr(not(CONFIG_ALLOCTAG_KUNIT_TEST), allow(dead_code))]
    pub(crate) fn segments(&self) -> usize {
        self.segments.load(Ordering::Relaxed)
    }

    /// Gives the `len` tags of `tag_size` bytes at `start` a block of indices, and returns its
    /// first. `ENOSPC` where no free block fits, `ENODEV` while the index is off. Process
    /// context; may sleep.
    ///
    /// The tags must stay where they are until [`TagIndex::remove`] is called for `start`.
    pub(crate) fn add(&self, start: *const u8, len: usize, tag_size: usize) -> Result<usize> {
        let bounds = self.lock.write();
        if bounds.first == 0 {
            return Err(ENODEV);
        }
        // SAFETY: Under the lock: the snapshot is not freed while it is held.
        let old = unsafe { self.snapshot.load(Ordering::Acquire).as_ref() };
        let mut base = bounds.first;
        for s in old.map_or(&[][..], |o| &o.by_base[..]) {
            if s.base >= base + len {
                break;
            }
            base = base.max(s.base + s.len);
        }
        if len == 0 || base + len > bounds.capacity {
            return Err(ENOSPC);
        }
        let seg = Segment {
            start: start as usize,
            len,
            tag_size,
            base,
        };
        self.make_leaves(base, len)?;
        // Before the segment is published: a page can hold one of its indices only after.
        self.fill(&seg, true);
        if let Err(e) = self.publish(old, Some(seg), None) {
            self.fill(&seg, false);
            return Err(e);
        }
        self.segments.fetch_add(1, Ordering::Relaxed);
        drop(bounds);
        Ok(base)
    }

    /// Takes back the indices of the segment at `start`, whose tags no index names any more.
    /// Process context; may sleep.
    pub(crate) fn remove(&self, start: *const u8) {
        let _bounds = self.lock.write();
        // SAFETY: Under the lock: the snapshot is not freed while it is held.
        let old = unsafe { self.snapshot.load(Ordering::Acquire).as_ref() };
        let Some(seg) = old.and_then(|o| o.by_addr.iter().find(|s| s.start == start as usize))
        else {
            return;
        };
        let seg = *seg;
        if self.publish(old, None, Some(start as usize)).is_ok() {
            // No page names these tags any more (the caller's guarantee): their entries go.
            self.fill(&seg, false);
            self.segments.fetch_sub(1, Ordering::Relaxed);
        }
    }

    /// Publishes `old`'s segments plus `add`, minus the one at `drop_start`, then frees `old`
    /// after a grace period. Called with the lock held for writing.
    fn publish(
        &self,
        old: Option<&Snapshot>,
        add: Option<Segment>,
        drop_start: Option<usize>,
    ) -> Result {
        let n = old.map_or(0, |o| o.by_addr.len()) + 1;
        // The old lists are sorted: each new one is built in order, `add` merged in where it
        // goes. (No slice sort: its panic paths are not noreturn to 6.12's objtool.)
        let merged = |old: &[Segment], key: fn(&Segment) -> usize| -> Result<KVec<Segment>> {
            // The core's own allocations are charged to their own lines (`alloc_hooks!`): a
            // dynamic tag's chunk may be what is being added.
            let mut v = kernel::alloc_hooks!(KVec::<Segment>::with_capacity(n, GFP_KERNEL))?;
            let mut pending = add;
            for s in old.iter().filter(|s| Some(s.start) != drop_start) {
                if let Some(seg) = pending.filter(|seg| key(seg) < key(s)) {
                    v.push(seg, GFP_KERNEL)?;
                    pending = None;
                }
                v.push(*s, GFP_KERNEL)?;
            }
            if let Some(seg) = pending {
                v.push(seg, GFP_KERNEL)?;
            }
            Ok(v)
        };
        let by_addr = merged(old.map_or(&[][..], |o| &o.by_addr[..]), |s| s.start)?;
        let by_base = merged(old.map_or(&[][..], |o| &o.by_base[..]), |s| s.base)?;
        let new = kernel::alloc_hooks!(KBox::new(Snapshot { by_addr, by_base }, GFP_KERNEL))?;
        // INVARIANT: The new snapshot is published whole; the old one is freed after a grace
        // period, under the lock.
        let prev = self.snapshot.swap(KBox::into_raw(new), Ordering::AcqRel);
        if drop_start.is_some() {
            // INVARIANT: After the snapshot without the segment, before the grace period.
            self.generation().fetch_add(1, Ordering::Release);
        }
        if !prev.is_null() {
            // SAFETY: Process context, no RCU read section held.
            unsafe { bindings::synchronize_rcu() };
            // SAFETY: `prev` was made by `KBox::into_raw` here, and no reader sees it any more.
            drop(unsafe { KBox::from_raw(prev) });
        }
        Ok(())
    }

    /// Runs `f` on the current snapshot, in an RCU read section. Any context but NMI.
    fn with_snapshot<R>(&self, f: impl FnOnce(&Snapshot) -> Option<R>) -> Option<R> {
        // SAFETY: Callable in any context but NMI.
        unsafe { bindings::alloctag_rcu_read_lock() };
        let snap = self.snapshot.load(Ordering::Acquire);
        // SAFETY: A published snapshot is freed only after a grace period, and this is in a read
        // section.
        let r = unsafe { snap.as_ref() }.and_then(f);
        // SAFETY: Ends the read section begun above.
        unsafe { bindings::alloctag_rcu_read_unlock() };
        r
    }

    /// Returns the generation: it changes when a segment is removed.
    pub(crate) fn generation(&self) -> &AtomicU32 {
        // SAFETY: By the type invariant `generation` lives forever and is accessed atomically.
        unsafe { AtomicU32::from_ptr(self.generation) }
    }

    /// Returns the index of the tag at `addr` and its segment, if a segment holds it. Any
    /// context but NMI; never sleeps. The generation is loaded first: a segment found under a
    /// generation is in every snapshot published before it changes.
    pub(crate) fn find_tag(&self, addr: usize) -> Option<Found> {
        let generation = self.generation().load(Ordering::Acquire);
        self.with_snapshot(|s| {
            let seg = Snapshot::floor(&s.by_addr, addr, |g| g.start)?;
            seg.index_of(addr)
                .map(|result| seg.found(result, generation))
        })
    }
}
