// SPDX-License-Identifier: GPL-2.0

//! The record pool: a fixed number of records, allocated when capture starts, found by the
//! object's tag reference through a hash table.
//!
//! C header: [`include/alloctag_capture_info.h`](srctree/lib/alloctag/include/alloctag_capture_info.h)
//!
//! The hooks run in every context the allocators run in, so the pool never allocates once made:
//! a record beyond the limit is counted as dropped. Everything is under one raw spinlock with
//! interrupts off (src/glue_capture.c), held only to find, link or unlink records: nothing
//! allocates, frees or sleeps under it.

use crate::codetag::{Codetag, Field};
use core::cell::UnsafeCell;
use kernel::{
    alloc::{flags::GFP_KERNEL, KVVec},
    bindings,
    prelude::*,
};

/// No record: the end of a chain.
const NONE: u32 = u32::MAX;

/// The most records a pool may hold.
pub(crate) const MAX_LIMIT: usize = 1 << 20;

/// The most records looked at in one hold of the pool's lock, which keeps interrupts off: a
/// purge and a report's copy go through the pool by batches of this many.
pub(crate) const HOLD_RECORDS: usize = 1024;

/// What was allocated.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A slab object: `object` is its address.
    Slab,
    /// `2^order` pages: `object` is the first page's pfn.
    Pages,
}

/// One live object of a selected call site.
#[derive(Clone, Copy)]
pub(crate) struct Record {
    /// The object's tag reference (`union codetag_ref *`), unique while the object lives; 0 in
    /// a free record.
    key: usize,
    /// The next record of the hash chain or of the free list.
    next: u32,
    pub(crate) object: usize,
    /// Valid while the record is in the pool: a tag's records go when it is unmarked, before
    /// its module's memory can go.
    pub(crate) tag: *const Codetag,
    pub(crate) bytes: usize,
    pub(crate) time_ns: u64,
    pub(crate) pid: i32,
    pub(crate) tgid: i32,
    pub(crate) comm: [u8; 16],
    pub(crate) cpu: u32,
    pub(crate) gfp: u32,
    /// A stack depot handle; 0 for none.
    pub(crate) stack: u32,
    pub(crate) kind: Kind,
    pub(crate) order: u8,
    /// 0: task; 1: softirq; 2: hardirq.
    pub(crate) context: u8,
}

impl Record {
    const EMPTY: Self = Self {
        key: 0,
        next: NONE,
        object: 0,
        tag: core::ptr::null(),
        bytes: 0,
        time_ns: 0,
        pid: 0,
        tgid: 0,
        comm: [0; 16],
        cpu: 0,
        gfp: 0,
        stack: 0,
        kind: Kind::Slab,
        order: 0,
        context: 0,
    };

    /// Makes a record from what the hook gathered.
    pub(crate) fn from_info(info: &bindings::alloctag_capture_info) -> Self {
        Self {
            key: info.ref_ as usize,
            next: NONE,
            object: info.object,
            tag: info.tag.cast(),
            bytes: info.bytes,
            time_ns: info.time_ns,
            pid: info.pid,
            tgid: info.tgid,
            comm: info.comm,
            cpu: info.cpu,
            gfp: info.gfp,
            stack: info.stack,
            kind: if u32::from(info.kind) == bindings::ALLOCTAG_CAPTURE_PAGES {
                Kind::Pages
            } else {
                Kind::Slab
            },
            order: info.order,
            context: info.context,
        }
    }

    /// Returns the record for the pages at reference `key`, first page `pfn`, `bytes` long, of
    /// `order`, allocated as this one was: a piece of a split, or the target of a migration.
    pub(crate) fn pages_at(self, key: usize, pfn: usize, bytes: usize, order: u8) -> Self {
        Self {
            key,
            next: NONE,
            object: pfn,
            bytes,
            order,
            kind: Kind::Pages,
            ..self
        }
    }

    /// Returns the object's tag reference, the record's key.
    pub(crate) fn key(&self) -> usize {
        self.key
    }

    /// The allocating task's name, up to its NUL.
    pub(crate) fn comm(&self) -> &str {
        let len = self.comm.iter().position(|&c| c == 0).unwrap_or(16);
        core::str::from_utf8(&self.comm[..len]).unwrap_or("?")
    }
}

/// The records and the hash table over them.
///
/// # Invariants
///
/// `buckets.len()` is a power of two, `1 << (usize::BITS - shift)`; every record is either on
/// the free list (key 0) or on the chain of its key's bucket, once.
pub(crate) struct Table {
    records: KVVec<Record>,
    buckets: KVVec<u32>,
    shift: u32,
    free: u32,
    used: usize,
}

impl Table {
    /// Makes a table of `limit` free records, in process context.
    pub(crate) fn new(limit: usize) -> Result<Self> {
        if limit == 0 || limit > MAX_LIMIT {
            return Err(EINVAL);
        }
        let nbuckets = limit.next_power_of_two();
        let mut records = KVVec::with_capacity(limit, GFP_KERNEL)?;
        for i in 0..limit {
            let next = if i + 1 < limit { i as u32 + 1 } else { NONE };
            records.push(
                Record {
                    next,
                    ..Record::EMPTY
                },
                GFP_KERNEL,
            )?;
        }
        let buckets = KVVec::from_elem(NONE, nbuckets, GFP_KERNEL)?;
        // INVARIANT: `nbuckets` is a power of two; every record is on the free list.
        Ok(Self {
            records,
            buckets,
            shift: usize::BITS - nbuckets.trailing_zeros(),
            free: 0,
            used: 0,
        })
    }

    fn bucket(&self, key: usize) -> usize {
        // Fibonacci hashing; references are 8-byte aligned, so the low bits carry nothing.
        if self.shift >= usize::BITS {
            return 0;
        }
        (key >> 3).wrapping_mul(0x9E37_79B9_7F4A_7C15_u64 as usize) >> self.shift
    }

    /// Returns the index of the record of `key`.
    fn find(&self, key: usize) -> Option<usize> {
        let mut i = self.buckets[self.bucket(key)];
        while i != NONE {
            let r = &self.records[i as usize];
            if r.key == key {
                return Some(i as usize);
            }
            i = r.next;
        }
        None
    }

    /// Unlinks and frees the record of `key`; returns it.
    pub(crate) fn remove(&mut self, key: usize) -> Option<Record> {
        let b = self.bucket(key);
        let mut prev = NONE;
        let mut i = self.buckets[b];
        while i != NONE {
            let r = self.records[i as usize];
            if r.key == key {
                if prev == NONE {
                    self.buckets[b] = r.next;
                } else {
                    self.records[prev as usize].next = r.next;
                }
                self.records[i as usize] = Record {
                    next: self.free,
                    ..Record::EMPTY
                };
                self.free = i;
                self.used -= 1;
                return Some(r);
            }
            prev = i;
            i = r.next;
        }
        None
    }

    /// Adds `record`, replacing a record of the same key: the reference now belongs to this
    /// object, so the older one missed its free (made in NMI, or raced with a deselection).
    /// Returns false when the pool is full.
    pub(crate) fn insert(&mut self, record: Record) -> bool {
        if record.key == 0 {
            return false;
        }
        if let Some(i) = self.find(record.key) {
            let next = self.records[i].next;
            self.records[i] = Record { next, ..record };
            return true;
        }
        if self.free == NONE {
            return false;
        }
        let i = self.free;
        self.free = self.records[i as usize].next;
        let b = self.bucket(record.key);
        self.records[i as usize] = Record {
            next: self.buckets[b],
            ..record
        };
        self.buckets[b] = i;
        self.used += 1;
        true
    }

    /// Returns the record of `key`.
    pub(crate) fn get_mut(&mut self, key: usize) -> Option<&mut Record> {
        let i = self.find(key)?;
        Some(&mut self.records[i])
    }

    /// Runs `f` on the records among those from index `from` on, at most `budget` of them
    /// looked at; returns where to go on, or `None` when done. Leaves out the records whose
    /// tag is no longer marked: a deselection is purging them ([`purge_unmarked`]).
    pub(crate) fn for_each_from(
        &self,
        from: usize,
        budget: usize,
        f: impl FnMut(&Record),
    ) -> Option<usize> {
        let end = from.saturating_add(budget).min(self.records.len());
        self.records
            .get(from..end)
            .unwrap_or(&[])
            .iter()
            // SAFETY: The table is only reached through a `Guard`, so the pool's lock is held,
            // and each record looked at is in the pool.
            .filter(|r| r.key != 0 && unsafe { still_selected(r) })
            .for_each(f);
        (end < self.records.len()).then_some(end)
    }

    /// Frees the records for which `gone` holds among those from index `from` on, at most
    /// `budget` of them looked at; returns where to go on, or `None` when done.
    fn purge(
        &mut self,
        from: usize,
        budget: usize,
        mut gone: impl FnMut(&Record) -> bool,
    ) -> Option<usize> {
        let end = from.saturating_add(budget).min(self.records.len());
        for i in from..end {
            let r = self.records[i];
            if r.key != 0 && gone(&r) {
                self.remove(r.key);
            }
        }
        (end < self.records.len()).then_some(end)
    }

    /// Returns the records in use and the limit.
    pub(crate) fn usage(&self) -> (usize, usize) {
        (self.used, self.records.len())
    }
}

/// What the lock protects.
pub(crate) struct State {
    /// The pool, while capture is on.
    pub(crate) table: Option<Table>,
    /// Records not made since capture started: the pool was full.
    pub(crate) dropped: u64,
    /// Allocations not recorded because they came from capture itself (the stack depot).
    pub(crate) busy: u64,
    /// Changes each time a pool is put in place or taken away ([`swap`]).
    pub(crate) pool_id: u64,
}

struct Locked(UnsafeCell<State>);

// SAFETY: The state is only reached through `Guard`, which holds the lock.
unsafe impl Sync for Locked {}

static STATE: Locked = Locked(UnsafeCell::new(State {
    table: None,
    dropped: 0,
    busy: 0,
    pool_id: 0,
}));

/// The pool's lock, held.
///
/// # Invariants
///
/// The raw spinlock of src/glue_capture.c is held, with interrupts off, and `flags` is what
/// its lock returned, until drop.
pub(crate) struct Guard {
    flags: usize,
    /// When the lock was taken, for the tests' measure of the longest hold.
    #[cfg(CONFIG_ALLOCTAG_KUNIT_TEST)]
    taken_ns: u64,
}

/// For the tests: how many times the lock was taken, and its longest hold in nanoseconds.
#[cfg(CONFIG_ALLOCTAG_KUNIT_TEST)]
pub(crate) static HOLDS: core::sync::atomic::AtomicUsize = core::sync::atomic::AtomicUsize::new(0);
#[cfg(CONFIG_ALLOCTAG_KUNIT_TEST)]
pub(crate) static LONGEST_HOLD_NS: core::sync::atomic::AtomicU64 =
    core::sync::atomic::AtomicU64::new(0);

/// Takes the lock. Any context but NMI; never while holding a `Guard` (it does not nest).
pub(crate) fn lock() -> Guard {
    // SAFETY: The lock is a leaf: nothing under it takes it again.
    let flags = unsafe { bindings::alloctag_capture_lock() };
    #[cfg(CONFIG_ALLOCTAG_KUNIT_TEST)]
    HOLDS.fetch_add(1, core::sync::atomic::Ordering::Relaxed);
    // INVARIANT: The lock is held now.
    Guard {
        flags,
        // SAFETY: The fast clock may be read in any context.
        #[cfg(CONFIG_ALLOCTAG_KUNIT_TEST)]
        taken_ns: unsafe { bindings::ktime_get_mono_fast_ns() },
    }
}

impl core::ops::Deref for Guard {
    type Target = State;
    fn deref(&self) -> &State {
        // SAFETY: By the type invariant the lock is held, so no other reference exists.
        unsafe { &*STATE.0.get() }
    }
}

impl core::ops::DerefMut for Guard {
    fn deref_mut(&mut self) -> &mut State {
        // SAFETY: By the type invariant the lock is held, and `&mut self` is unique.
        unsafe { &mut *STATE.0.get() }
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        #[cfg(CONFIG_ALLOCTAG_KUNIT_TEST)]
        {
            // SAFETY: The fast clock may be read in any context.
            let held = unsafe { bindings::ktime_get_mono_fast_ns() }.saturating_sub(self.taken_ns);
            LONGEST_HOLD_NS.fetch_max(held, core::sync::atomic::Ordering::Relaxed);
        }
        // SAFETY: By the type invariant the lock is held with these flags.
        unsafe { bindings::alloctag_capture_unlock(self.flags) };
    }
}

/// Puts `table` in place, with the counts reset; returns the table it replaces, to be freed
/// outside the lock.
pub(crate) fn swap(table: Option<Table>) -> Option<Table> {
    let mut state = lock();
    state.dropped = 0;
    state.busy = 0;
    state.pool_id = state.pool_id.wrapping_add(1);
    core::mem::replace(&mut state.table, table)
}

/// Returns whether the tag of `record` is still marked for capture. A record may only be
/// inserted when this holds, tested under the pool's lock: a deselection clears the mark
/// before it purges the tag's records ([`purge_unmarked`]) under this lock, a bounded number per
/// lock hold, and the free list may hand out a slot that the purge has already passed.
/// Inserting after the mark went would keep a record the purge never sees, whose tag may then
/// go with its module.
///
/// # Safety
///
/// The caller holds the pool's lock, and the tag of `record` is alive while it is held: the
/// record is, or was until now under that lock, in the pool (a purge, which comes before the tag
/// can go, has not passed it), or it is being made for an allocation just charged to that tag.
pub(crate) unsafe fn still_selected(record: &Record) -> bool {
    // SAFETY: By the caller's guarantee the tag lives; `Codetag` wraps `struct codetag`.
    Field::CAPTURE.get(unsafe { &*record.tag }) != 0
}

/// Frees every record whose tag is no longer marked for capture, in one pass over the pool
/// with a bounded number looked at per lock hold, so that interrupts are never off for long,
/// and a chance to reschedule between holds. Called after a walk that unmarked tags, before
/// their memory can go: for a deselection outside the registry's lock, holding
/// [`crate::codetag::flushing`]; for a module going, with the registry locked for writing.
/// Process context.
///
/// What runs between two holds cannot make it miss a record or read a freed tag:
/// - an allocator hook, on any CPU or in an interrupt here, makes no record of an unmarked tag:
///   it tests the mark under this lock, after the mark was cleared (the clearing comes before
///   this purge's first hold, and each hold orders it before the next holder's test), so a
///   free slot the purge has passed gets no record of such a tag;
/// - a split or a migration copies or moves a record only when its tag is still marked
///   ([`still_selected`], under the lock);
/// - a record freed and its slot reused meanwhile is by then another tag's, tested as such;
/// - no tag of a record in the pool can go: a deselection holds
///   [`crate::codetag::flushing`], which module unload and the reaper take before they drop
///   tags, and a module going holds the registry's write lock;
/// - a new pool put in place meanwhile (capture restarted: `pool_id` changed) holds no record
///   of a tag unmarked before, since every record it gets was tested as above; the purge
///   stops there. A deselection holds capture's control lock, so only a module going sees it.
pub(crate) fn purge_unmarked() {
    let mut from = Some(0);
    let mut pool_id = None;
    while let Some(start) = from {
        let mut state = lock();
        if *pool_id.get_or_insert(state.pool_id) != state.pool_id {
            return;
        }
        from = state.table.as_mut().and_then(|t| {
            // SAFETY: The lock is held and each record looked at is in the pool.
            t.purge(start, HOLD_RECORDS, |r| !unsafe { still_selected(r) })
        });
        drop(state);
        if from.is_some() {
            #[cfg(CONFIG_ALLOCTAG_KUNIT_TEST)]
            purge_seam(start + HOLD_RECORDS);
            // SAFETY: Process context, the pool's lock dropped.
            unsafe { bindings::alloctag_capture_cond_resched() };
        }
    }
}

/// For the tests: a function run by a purge between two holds of the pool's lock, with the
/// index reached; 0 for none. A test parks the flush there to see what may run meanwhile.
#[cfg(CONFIG_ALLOCTAG_KUNIT_TEST)]
static PURGE_SEAM: core::sync::atomic::AtomicUsize = core::sync::atomic::AtomicUsize::new(0);

/// Sets the function a purge runs between two holds of the pool's lock; for the tests.
#[cfg(CONFIG_ALLOCTAG_KUNIT_TEST)]
pub(crate) fn set_purge_seam(seam: Option<fn(usize)>) {
    let seam = seam.map_or(0, |f| f as usize);
    PURGE_SEAM.store(seam, core::sync::atomic::Ordering::Release);
}

#[cfg(CONFIG_ALLOCTAG_KUNIT_TEST)]
fn purge_seam(at: usize) {
    let seam = PURGE_SEAM.load(core::sync::atomic::Ordering::Acquire);
    if seam != 0 {
        // SAFETY: Only `set_purge_seam` stores a value other than 0: a `fn(usize)`.
        let seam = unsafe { core::mem::transmute::<usize, fn(usize)>(seam) };
        seam(at);
    }
}

/// Adds a record charged to `tag` for each of `keys`, which no object's reference may be,
/// until the pool is full; returns how many it added. For the tests, which fill a pool without
/// a million allocations.
#[cfg(CONFIG_ALLOCTAG_KUNIT_TEST)]
pub(crate) fn fill(tag: &Codetag, keys: &[u64]) -> usize {
    let mut added = 0;
    for batch in keys.chunks(HOLD_RECORDS) {
        let mut state = lock();
        let Some(table) = state.table.as_mut() else {
            break;
        };
        for key in batch {
            let record = Record {
                key: core::ptr::from_ref(key) as usize,
                tag: core::ptr::from_ref(tag),
                bytes: 16,
                ..Record::EMPTY
            };
            if !table.insert(record) {
                return added;
            }
            added += 1;
        }
    }
    added
}
