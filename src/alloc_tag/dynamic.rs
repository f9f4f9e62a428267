// SPDX-License-Identifier: GPL-2.0

//! Dynamic allocation tags: a tag for each Rust call site that allocates through the kernel
//! crate's plain APIs (`KBox::new`, `KVec::push`, `Arc::new`, ...), made on its first
//! allocation.
//!
//! C header: [`include/linux/alloc_tag.h`](srctree/include/linux/alloc_tag.h)
//!
//! The kernel crate's allocating APIs are `#[track_caller]` down to the allocator, which asks
//! [`alloctag_dynamic_tag`] for the tag of `Location::caller()`, the line of the code that called
//! the API (rust/kernel/alloc_tag.rs `caller_location()`). A static tag in the `alloc_tags`
//! section cannot exist for such a line, since nothing was written there; so the tag is made
//! at run time, the first time the line allocates, in a [`Pool`] of tags laid out as
//! `struct alloc_tag`. The registry lists the pool's tags after every module's
//! ([`crate::codetag::DynamicTags`]), so `/proc/allocinfo`, its ioctl and `show_mem()` see them
//! as they see static tags.
//! - Memory: the pool grows by chunks of [`CHUNK_TAGS`] tags, each with its own per-CPU
//!   counters, allocated in process context: the first at boot unless profiling is booted
//!   `never`, the next by a work item once the chunks made hold fewer than a quarter of a
//!   chunk free, up to [`POOL_TAGS`] tags. Chunks are never freed (a tag's address must stay
//!   valid while anything may hold it); a slot of a dropped tag is reused. A maker finding no
//!   free slot charges the allocation to the fallback tag, counted, and asks for a chunk.
//!
//! - Lookup takes no lock: an open-addressing table maps the address of the `Location` (one
//!   constant per call site) to a slot of the pool. A slot holds its key, so a reader that finds
//!   a slot checks the key in the slot itself: a table entry reused for another key can never
//!   give it the wrong tag.
//! - Making a tag never sleeps and never fails the allocation: it takes the makers' raw
//!   spinlock, which leaves interrupts as they were (preemption off), looks again (several CPUs
//!   making the same new location at once make one tag), claims a free slot, names the tag in
//!   it and publishes it. Nothing here turns interrupts off: the naming (a stack walk of up to
//!   256 entries, kallsyms, demangling) runs with interrupts as the caller had them. When the
//!   pool or the probe window is full, the allocation goes to the allocator path's fallback
//!   tag, which is counted ([`Pool::overflows`], `/sys/kernel/debug/alloctag/dynamic_tags`)
//!   and logged once.
//! - Only makers, one at a time, take a slot out of [`FREE`] or fill an empty or tombstoned
//!   table entry; only module unload, under the registry's write lock, puts a slot back to
//!   [`FREE`] or [`KEPT`] and tombstones its entry. Neither touches what the other may change,
//!   so unload needs no lock against makers.
//! - Names: the file and line come from the `Location`, the module from the address of the
//!   `Location` (which the compiler places in the caller's crate), the function from kallsyms:
//!   the first frame of the stack that is not the kernel crate's allocation path nor ours. The
//!   strings are copied into the slot (bounded), since a module's memory goes at unload.
//! - Module unload ([`Pool::module_unload`], under the registry's write lock): a module's tags
//!   are no longer found by lookup, since another module may be loaded where the `Location`
//!   was; those whose counters read zero are no longer listed, and their slots are reused at
//!   the reaper's next pass that reads them zero again (one read can see zero while a free is
//!   between its `bytes` and `calls` updates); the others stay listed, with their copied
//!   names, until two passes in a row read them zero.

mod chunk;
mod naming;
mod unload;

use chunk::Chunk;
pub(crate) use chunk::first_chunk;
#[cfg(CONFIG_ALLOCTAG_KUNIT_TEST)]
pub(crate) use naming::NAMED_WITH_IRQS_OFF;
use naming::{copy_file, find_function};

use super::AllocTag;
use crate::codetag::{DynamicTags, KeptDynamic, CODETAG_FLAG_INACCURATE};
use core::{
    cell::UnsafeCell,
    ffi::c_void,
    panic::Location,
    ptr,
    sync::atomic::{AtomicBool, AtomicPtr, AtomicU32, AtomicU64, AtomicU8, AtomicUsize, Ordering},
};
use kernel::{bindings, prelude::*};

/// The most dynamic tags: memory is bounded, and each takes about 330 bytes (tag, names) plus
/// 16 bytes of counters per possible CPU, paid a chunk at a time as they are made.
pub(crate) const POOL_TAGS: usize = 2048;
/// Tags per chunk: the pool grows by one chunk at a time.
pub(crate) const CHUNK_TAGS: usize = 64;
/// Chunks of the kernel's pool.
const POOL_CHUNKS: usize = POOL_TAGS / CHUNK_TAGS;
/// Entries of the lookup table: twice the tags, so that probe sequences stay short.
const TABLE_ENTRIES: usize = 2 * POOL_TAGS;
/// The longest probe sequence: a key is found, or a new one placed, within this many entries.
const MAX_PROBES: usize = 32;
/// Room for the file name with its NUL; a longer name keeps its end.
const FILE_LEN: usize = 96;
/// Room for the function name with its NUL.
const FUNCTION_LEN: usize = 96;
/// Room for the module name with its NUL, as `struct module`'s.
const MODULE_LEN: usize = 56;
/// A table entry that never held a key.
const EMPTY: u32 = 0;
/// A table entry whose key went away; lookups go on past it, new keys may reuse it.
const TOMBSTONE: u32 = u32::MAX;

/// A free slot.
const FREE: u8 = 0;
/// A slot with a tag that lookups find.
const LIVE: u8 = 1;
/// A slot whose module went while it still had allocations: listed, not found.
const KEPT: u8 = 2;
/// A kept slot that the last pass found unused: the next that does frees it
/// ([`Pool::module_unload`]).
const KEPT_UNUSED: u8 = 3;
/// A slot whose module went while it read unused: not listed, not found; the next pass that
/// reads it unused frees it, one that does not keeps it ([`KEPT`]).
const UNLOADED_UNUSED: u8 = 4;

/// The names of a dynamic tag, copied from the caller and its module.
struct Names {
    file: [u8; FILE_LEN],
    function: [u8; FUNCTION_LEN],
    module: [u8; MODULE_LEN],
}

/// The state of one tag of the pool besides the tag itself.
struct Slot {
    /// [`FREE`], [`LIVE`], [`KEPT`], [`KEPT_UNUSED`] or [`UNLOADED_UNUSED`]; set with release
    /// after the tag and names are written.
    state: AtomicU8,
    /// The address of the `Location`, while [`LIVE`].
    key: AtomicUsize,
    /// The module the call site is in, null for vmlinux; compared at module unload only.
    module: AtomicPtr<bindings::module>,
    /// Set when the tag is made, cleared when the selections in force have marked it.
    #[cfg(CONFIG_ALLOCTAG_SELECTION)]
    unselected: AtomicBool,
    /// Written under the makers' lock while the slot is [`FREE`], read while it is not.
    names: UnsafeCell<Names>,
}
// A free slot is all zeroes (state [`FREE`], no key, no module, no names): a chunk is made
// zeroed ([`Pool::grow`]).
const _: () = assert!(FREE == 0);

/// A pool of up to `C` chunks of dynamic tags, with a lookup table of `M` entries. Tag `i` is
/// tag `i % CHUNK_TAGS` of chunk `i / CHUNK_TAGS`.
///
/// # Invariants
///
/// - `chunks[..grown]` point to chunks, published with a release store after they are
///   initialised, and never change or go; the others are null. `grown` only grows, and only
///   under the growth lock (src/alloc_tag/dynamic/chunk.rs).
/// - A slot's tag and names change only under the makers' lock while the slot is [`FREE`]; a
///   slot leaves [`FREE`] only under the makers' lock, with a release store after they are
///   written, and goes back to [`FREE`] (its state written last) only under the registry's
///   write lock, with its counters reading zero.
/// - A table entry holds [`EMPTY`], [`TOMBSTONE`] or a slot index plus one. Only makers, under
///   their lock, change an [`EMPTY`] or [`TOMBSTONE`] entry (to an index); only module unload,
///   under the registry's write lock, changes an index (to [`TOMBSTONE`]); none goes back to
///   [`EMPTY`].
pub(crate) struct Pool<const C: usize, const M: usize> {
    chunks: [AtomicPtr<Chunk>; C],
    /// Chunks made.
    grown: AtomicUsize,
    table: [AtomicU32; M],
    /// Slots not [`FREE`].
    used: AtomicUsize,
    /// Slots [`UNLOADED_UNUSED`]: used, not listed. Changed under the registry's write lock.
    unlisted: AtomicUsize,
    /// The most slots used: all `C` chunks' unless a test makes the pool look full sooner.
    limit: AtomicUsize,
    /// Allocations charged to a fallback tag because no tag could be made.
    overflows: AtomicU64,
    /// Changes when a tag is made or dropped (the allocinfo ioctl's content id).
    generation: AtomicU64,
    /// Whether the exhaustion was logged.
    warned: AtomicBool,
    /// The lookups' names, for messages and tests.
    name: &'static str,
    /// Whether the glue's work item grows the pool (the kernel's does; the tests' grow theirs).
    grown_by_work: bool,
}

// SAFETY: The tags' names and fields change only under the makers' lock while no reader can see
// the slot (see the invariants); everything else is atomic, or a chunk's fields written before
// the chunk is published. `counters` are per-CPU addresses.
unsafe impl<const C: usize, const M: usize> Sync for Pool<C, M> {}

/// The kernel's pool.
static POOL: Pool<POOL_CHUNKS, TABLE_ENTRIES> = Pool::new("dynamic", true);

/// Returns the kernel's pool.
pub(crate) fn pool() -> &'static Pool<POOL_CHUNKS, TABLE_ENTRIES> {
    &POOL
}

/// The makers' lock, a raw spinlock that leaves interrupts as they were; unlocked on drop.
struct LockGuard(());

impl LockGuard {
    /// Takes the lock. Task context only (a maker interrupted by another on its CPU would
    /// deadlock): the glue's charged allocators ask for tags only `in_task()`.
    fn lock() -> Self {
        // SAFETY: Takes the glue's lock; released by `drop`.
        unsafe { bindings::alloctag_dynamic_lock() };
        Self(())
    }
}

impl Drop for LockGuard {
    fn drop(&mut self) {
        // SAFETY: Taken by `lock`.
        unsafe { bindings::alloctag_dynamic_unlock() };
    }
}

/// Returns the first table entry to probe for `key`.
fn hash(key: usize) -> usize {
    // Fibonacci hashing of the address, whose low bits vary little.
    (key as u64)
        .wrapping_mul(0x9e37_79b9_7f4a_7c15)
        .rotate_left(32) as usize
}

impl<const C: usize, const M: usize> Pool<C, M> {
    /// The most tags the pool holds.
    const CAPACITY: usize = C * CHUNK_TAGS;

    /// Makes an empty pool, with no chunk yet ([`Pool::grow`]); `grown_by_work` for the
    /// kernel's, which the glue's work item grows when it runs low.
    pub(crate) const fn new(name: &'static str, grown_by_work: bool) -> Self {
        // INVARIANT: No chunk, every entry empty.
        Self {
            chunks: [const { AtomicPtr::new(ptr::null_mut()) }; C],
            grown: AtomicUsize::new(0),
            table: [const { AtomicU32::new(EMPTY) }; M],
            used: AtomicUsize::new(0),
            unlisted: AtomicUsize::new(0),
            limit: AtomicUsize::new(Self::CAPACITY),
            overflows: AtomicU64::new(0),
            generation: AtomicU64::new(0),
            warned: AtomicBool::new(false),
            name,
            grown_by_work,
        }
    }

    /// Returns the chunk of tag `i`, if made.
    fn chunk(&self, i: usize) -> Option<&Chunk> {
        let chunk = self.chunks.get(i / CHUNK_TAGS)?.load(Ordering::Acquire);
        // SAFETY: A non-null chunk was published after it was initialised and never goes.
        (!chunk.is_null()).then(|| unsafe { &*chunk })
    }

    /// Returns the slot of tag `i`, if its chunk is made.
    fn slot(&self, i: usize) -> Option<&Slot> {
        self.chunk(i).map(|c| &c.slots[i % CHUNK_TAGS])
    }

    /// Returns tag `i`, if its chunk is made.
    fn tag_at(&self, i: usize) -> Option<&AllocTag> {
        self.chunk(i).map(|c| &c.tags[i % CHUNK_TAGS])
    }

    /// Returns the slots of the chunks made, with their tags' indices.
    fn slots(&self) -> impl Iterator<Item = (usize, &Slot)> {
        let made = self.grown.load(Ordering::Acquire) * CHUNK_TAGS;
        (0..made).filter_map(|i| self.slot(i).map(|s| (i, s)))
    }

    /// Returns whether `tag` is one of this pool's.
    #[cfg(CONFIG_ALLOCTAG_KUNIT_TEST)]
    pub(crate) fn owns(&self, tag: &AllocTag) -> bool {
        self.slots()
            .any(|(i, _)| self.tag_at(i).is_some_and(|t| ptr::eq(t, tag)))
    }

    /// Makes `tag`, one of this pool's, a tag of `module`, as if its call site were in that
    /// module; for the tests of module unload.
    #[cfg(CONFIG_ALLOCTAG_KUNIT_TEST)]
    pub(crate) fn set_module(&self, tag: &AllocTag, module: *mut bindings::module) {
        for (i, slot) in self.slots() {
            if self.tag_at(i).is_some_and(|t| ptr::eq(t, tag)) {
                slot.module.store(module, Ordering::Relaxed);
            }
        }
    }

    /// Returns the number of tags in use.
    pub(crate) fn used(&self) -> usize {
        self.used.load(Ordering::Relaxed)
    }

    /// Returns the number of allocations that no tag could be made for.
    pub(crate) fn overflows(&self) -> u64 {
        self.overflows.load(Ordering::Relaxed)
    }

    /// Makes the pool look full once `limit` tags are used, as if it had room for `limit` tags
    /// only; `usize::MAX` restores it. For the tests of the fallback.
    #[cfg(CONFIG_ALLOCTAG_KUNIT_TEST)]
    pub(crate) fn set_limit(&self, limit: usize) {
        self.limit
            .store(limit.min(Self::CAPACITY), Ordering::Relaxed);
        self.warned.store(false, Ordering::Relaxed);
    }

    /// Returns the tag of `key` if it has one, with no lock.
    fn lookup(&self, key: usize) -> Option<&AllocTag> {
        let start = hash(key);
        for probe in 0..MAX_PROBES.min(M) {
            let entry = self.table[(start + probe) % M].load(Ordering::Acquire);
            if entry == EMPTY {
                return None;
            }
            if entry == TOMBSTONE {
                continue;
            }
            let i = (entry - 1) as usize;
            let slot = self.slot(i)?;
            // The slot's key is checked in the slot: the entry may have been reused for
            // another key since it was read, but a slot's key and tag change together.
            if slot.key.load(Ordering::Acquire) == key && slot.state.load(Ordering::Acquire) == LIVE
            {
                return self.tag_at(i);
            }
        }
        None
    }

    /// Returns the tag of the call site at `location`, making it if it has none; `None`, after
    /// counting an overflow, when no tag can be made. Never sleeps.
    pub(crate) fn tag(&self, location: &'static Location<'static>) -> Option<&AllocTag> {
        let key = ptr::from_ref(location) as usize;
        self.lookup(key).or_else(|| self.make(key, location))
    }

    /// Makes the tag of `key`, unless another CPU made it first.
    #[cold]
    #[inline(never)]
    fn make(&self, key: usize, location: &'static Location<'static>) -> Option<&AllocTag> {
        let made = {
            let guard = LockGuard::lock();
            match self.lookup(key) {
                Some(tag) => return Some(tag),
                None => self.insert(&guard, key, location),
            }
        };
        // A selection in force (fault injection's rules) marks the new tag before its first
        // allocation, unless the registry is busy: then a work item marks it soon after.
        #[cfg(CONFIG_ALLOCTAG_SELECTION)]
        if made.is_some() && !crate::codetag::made_dynamic() {
            // SAFETY: Schedules the glue's static work item; callable in any task context.
            unsafe { bindings::alloctag_dynamic_select_later() };
        }
        let grown = self.grown.load(Ordering::Acquire);
        // Less than a quarter of a chunk free: the work item makes the next chunk.
        if self.grown_by_work && grown < C && grown * CHUNK_TAGS < self.used() + CHUNK_TAGS / 4 {
            // SAFETY: Schedules the glue's static work item; callable in any task context.
            unsafe { bindings::alloctag_dynamic_grow_later() };
        }
        if made.is_none() {
            self.overflows.fetch_add(1, Ordering::Relaxed);
            let full = grown == C || self.used() >= self.limit.load(Ordering::Relaxed);
            if full && !self.warned.swap(true, Ordering::Relaxed) {
                pr_warn!(
                    "{} tags: no room for {}:{} ({} of {} tags used); its allocations and later \
                     ones without a tag go to the fallback tags\n",
                    self.name,
                    location.file(),
                    location.line(),
                    self.used(),
                    Self::CAPACITY
                );
            }
        }
        made
    }

    /// Places `key` in the table and a free slot, under the makers' lock.
    fn insert(
        &self,
        guard: &LockGuard,
        key: usize,
        location: &'static Location<'static>,
    ) -> Option<&AllocTag> {
        let (i, entry) = self.fill(guard, key, location)?;
        self.publish(guard, i, entry)
    }

    /// Makes the tag of `location` in two steps, running `between` after the slot is filled and
    /// before it is published: where another maker's walk of the registry may fall. For tests.
    #[cfg(CONFIG_ALLOCTAG_KUNIT_TEST)]
    pub(crate) fn make_with_seam(
        &self,
        location: &'static Location<'static>,
        between: impl FnOnce(),
    ) -> Option<&AllocTag> {
        let guard = LockGuard::lock();
        let (i, entry) = self.fill(&guard, ptr::from_ref(location) as usize, location)?;
        between();
        self.publish(&guard, i, entry)
    }

    /// Claims a free slot and a table entry for `key` and fills the slot's tag and names;
    /// returns the slot's index and the entry, neither published yet.
    fn fill(
        &self,
        guard: &LockGuard,
        key: usize,
        location: &'static Location<'static>,
    ) -> Option<(usize, usize)> {
        if self.used() >= self.limit.load(Ordering::Relaxed) {
            return None;
        }
        let start = hash(key);
        let entry = (0..MAX_PROBES.min(M))
            .map(|probe| (start + probe) % M)
            .find(|&e| matches!(self.table[e].load(Ordering::Relaxed), EMPTY | TOMBSTONE))?;
        // Acquire: pairs with the release store of `FREE` by module unload, after which the
        // slot's last tag is no longer read or written.
        let (i, slot) = self
            .slots()
            .find(|(_, s)| s.state.load(Ordering::Acquire) == FREE)?;
        let chunk = self.chunk(i)?;
        // SAFETY: The slot is free and we hold the lock: nothing else reads or writes its names.
        let names = unsafe { &mut *slot.names.get() };
        copy_file(&mut names.file, location.file());
        names.module[0] = 0;
        // SAFETY: `location` lives forever; the name buffer has `MODULE_LEN` bytes.
        let module = unsafe {
            bindings::alloctag_module_of(
                ptr::from_ref(location).cast(),
                names.module.as_mut_ptr().cast(),
                MODULE_LEN,
            )
        };
        find_function(guard, &mut names.function, module);
        let tag = &chunk.tags[i % CHUNK_TAGS];
        let raw = tag.as_raw();
        // Field by field: the tag's waste counters, which waste accounting may give the chunk's
        // tags at any time (`Pool::make_waste`), stay as they are; so does its index, which the
        // code-tag library gave it with its chunk.
        // SAFETY: The slot is free: no reader looks at its tag. Its counters are the chunk's
        // `i % CHUNK_TAGS`th (`Chunk`'s invariant), reading zero (a slot is freed only then); the
        // names are NUL-terminated and stay until the slot is freed.
        unsafe {
            let index = (&raw const (*raw).ct.index).read();
            // The chunk's slots, kept with its counters.
            #[cfg(CONFIG_ALLOCTAG_PER_NODE)]
            let node_slots = (&raw const (*raw).ct.node_slots).read();
            (&raw mut (*raw).counters).write(chunk.counters.wrapping_add(i % CHUNK_TAGS));
            (&raw mut (*raw).ct).write(bindings::codetag {
                flags: if chunk.unindexed {
                    CODETAG_FLAG_INACCURATE
                } else {
                    0
                },
                lineno: location.line(),
                modname: if module.is_null() {
                    ptr::null()
                } else {
                    names.module.as_ptr().cast()
                },
                function: names.function.as_ptr().cast(),
                filename: names.file.as_ptr().cast(),
                index,
                #[cfg(CONFIG_ALLOCTAG_PER_NODE)]
                node_slots,
            })
        };
        // SAFETY: The slot was freed only once no object was charged to its last tag: none is
        // tracked, and the tag is not published yet, so no slow path writes its counters.
        #[cfg(CONFIG_ALLOCTAG_WASTE)]
        unsafe {
            tag.zero_waste()
        };
        slot.module.store(module, Ordering::Relaxed);
        slot.key.store(key, Ordering::Relaxed);
        // Set before the slot is published: a walk that finds it live finds its flag set
        // (`DynamicTags::take_unselected`, asked only of selectable tags).
        #[cfg(CONFIG_ALLOCTAG_SELECTION)]
        slot.unselected.store(true, Ordering::Relaxed);
        Some((i, entry))
    }

    /// Publishes the slot `i` that [`Pool::fill`] filled, and its table `entry`.
    fn publish(&self, _guard: &LockGuard, i: usize, entry: usize) -> Option<&AllocTag> {
        let slot = self.slot(i)?;
        slot.state.store(LIVE, Ordering::Release);
        self.table[entry].store(i as u32 + 1, Ordering::Release);
        self.used.fetch_add(1, Ordering::Relaxed);
        self.generation.fetch_add(1, Ordering::Relaxed);
        self.tag_at(i)
    }

    /// Returns whether tag `i` is listed.
    fn is_listed(&self, i: usize) -> bool {
        self.slot(i).is_some_and(|s| {
            let state = s.state.load(Ordering::Acquire);
            state != FREE && state != UNLOADED_UNUSED
        })
    }
}

// SAFETY: Every tag is a `struct alloc_tag` in a chunk that never goes, whose listed slots are
// initialised (see the type invariants).
unsafe impl<const C: usize, const M: usize> DynamicTags for Pool<C, M> {
    fn tag(&self, index: usize) -> *const u8 {
        self.tag_at(index)
            .map_or(ptr::null(), |t| ptr::from_ref(t).cast())
    }

    fn capacity(&self) -> usize {
        Self::CAPACITY
    }

    fn is_listed(&self, index: usize) -> bool {
        Pool::is_listed(self, index)
    }

    fn count(&self) -> usize {
        self.used()
            .saturating_sub(self.unlisted.load(Ordering::Relaxed))
    }

    #[cfg(CONFIG_ALLOCTAG_SELECTION)]
    fn module(&self, index: usize) -> *mut bindings::module {
        self.slot(index)
            .map_or(ptr::null_mut(), |s| s.module.load(Ordering::Relaxed))
    }

    #[cfg(CONFIG_ALLOCTAG_SELECTION)]
    fn is_selectable(&self, index: usize) -> bool {
        // Only found tags: a kept one is freed by `module_unload` without being unmarked.
        self.slot(index)
            .is_some_and(|s| s.state.load(Ordering::Acquire) == LIVE)
    }

    #[cfg(CONFIG_ALLOCTAG_SELECTION)]
    fn take_unselected(&self, index: usize) -> bool {
        self.slot(index)
            .is_some_and(|s| s.unselected.swap(false, Ordering::Relaxed))
    }

    fn generation(&self) -> u64 {
        self.generation.load(Ordering::Relaxed)
    }

    fn module_unload(&self, module: *mut bindings::module) -> KeptDynamic {
        Pool::module_unload(self, module)
    }
}

/// Returns the dynamic tag of the Rust call site at `location` (a `core::panic::Location`),
/// making it on first use; null when none can be made. Called by the C glue's charged
/// allocators (`alloctag_rust_charged_krealloc()`, ...), in task context with no tag current.
///
/// # Safety
///
/// `location` must point to a `Location` that lives forever.
#[no_mangle]
pub(crate) unsafe extern "C" fn alloctag_dynamic_tag(
    location: *const c_void,
) -> *mut bindings::alloc_tag {
    // SAFETY: The caller guarantees that `location` is a static `Location`.
    let location = unsafe { &*location.cast::<Location<'static>>() };
    POOL.tag(location).map_or(ptr::null_mut(), AllocTag::as_raw)
}

/// Has the selections in force mark the dynamic tags that were made while the registry was
/// busy. Run by the C glue's work item; may sleep.
#[cfg(CONFIG_ALLOCTAG_SELECTION)]
#[no_mangle]
pub(crate) extern "C" fn alloctag_dynamic_select_work() {
    crate::codetag::made_dynamic_wait();
}

#[cfg(CONFIG_ALLOCTAG_SELECTION)]
c_declared!(alloctag_dynamic_select_work);

/// Writes the use of the kernel's pool, for debugfs: `made` is the tags of the chunks made.
///
/// # Safety
///
/// The pointers must be valid for writes.
#[no_mangle]
pub(crate) unsafe extern "C" fn alloctag_dynamic_stats(
    used: *mut usize,
    capacity: *mut usize,
    overflows: *mut usize,
    made: *mut usize,
) {
    // SAFETY: The caller guarantees the pointers.
    unsafe {
        used.write(POOL.used());
        capacity.write(POOL_TAGS);
        overflows.write(POOL.overflows() as usize);
        made.write(POOL.grown.load(Ordering::Acquire) * CHUNK_TAGS);
    }
}

c_declared!(alloctag_dynamic_tag);
c_declared!(alloctag_dynamic_stats);
