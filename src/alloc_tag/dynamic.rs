// SPDX-License-Identifier: GPL-2.0

//! Dynamic allocation tags: a tag for each Rust call site that allocates through the kernel
//! crate's plain APIs (`KBox::new`, `KVec::push`, `Arc::new`, ...), made on its first
//! allocation.
//!
//! C header: [`include/linux/alloc_tag.h`](srctree/include/linux/alloc_tag.h)
//!
//! The kernel crate's allocating APIs are `#[track_caller]` down to the allocator, which asks
//! [`alloctag_dynamic_tag`] for the tag of `Location::caller()`, the line of the code that called
//! the API (rust/kernel/alloc_tag.rs `charge_caller()`). A static tag in the `alloc_tags`
//! section cannot exist for such a line, since nothing was written there; so the tag is made
//! at run time, the first time the line allocates, in a [`Pool`] of tags laid out as
//! `struct alloc_tag` with their per-CPU counters in `.data..percpu`. The registry lists the
//! pool's tags after every module's ([`crate::codetag::DynamicTags`]), so `/proc/allocinfo`, its
//! ioctl and `show_mem()` see them as they see static tags.
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
//!   whose counters read zero are dropped and their slots reused; the others stay listed, with
//!   their copied names, until their counters read zero at a later unload, but are no longer
//!   found by lookup, since another module may be loaded where the `Location` was.

mod naming;

#[cfg(CONFIG_ALLOCTAG_KUNIT_TEST)]
pub(crate) use naming::NAMED_WITH_IRQS_OFF;
use naming::{copy_file, find_function};

use super::AllocTag;
use crate::codetag::DynamicTags;
use core::{
    cell::UnsafeCell,
    ffi::c_void,
    panic::Location,
    ptr,
    sync::atomic::{AtomicBool, AtomicPtr, AtomicU32, AtomicU64, AtomicU8, AtomicUsize, Ordering},
};
use kernel::{bindings, prelude::*, types::Opaque};

/// The number of dynamic tags: memory is bounded, and each takes about 300 bytes (tag, names)
/// plus 16 bytes of counters per CPU.
pub(crate) const POOL_TAGS: usize = 2048;
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

/// The names of a dynamic tag, copied from the caller and its module.
struct Names {
    file: [u8; FILE_LEN],
    function: [u8; FUNCTION_LEN],
    module: [u8; MODULE_LEN],
}

/// The state of one tag of the pool besides the tag itself.
struct Slot {
    /// [`FREE`], [`LIVE`] or [`KEPT`]; set with release after the tag and names are written.
    state: AtomicU8,
    /// The address of the `Location`, while [`LIVE`].
    key: AtomicUsize,
    /// The module the call site is in, null for vmlinux; compared at module unload only.
    module: AtomicPtr<bindings::module>,
    /// Set when the tag is made, cleared when the selections in force have marked it.
    #[cfg(CONFIG_ALLOCTAG_SELECTION)]
    unselected: AtomicBool,
    /// Written under the pool's lock while the slot is [`FREE`], read while it is not.
    names: UnsafeCell<Names>,
}

impl Slot {
    const fn new() -> Self {
        Self {
            state: AtomicU8::new(FREE),
            key: AtomicUsize::new(0),
            module: AtomicPtr::new(ptr::null_mut()),
            #[cfg(CONFIG_ALLOCTAG_SELECTION)]
            unselected: AtomicBool::new(false),
            names: UnsafeCell::new(Names {
                file: [0; FILE_LEN],
                function: [0; FUNCTION_LEN],
                module: [0; MODULE_LEN],
            }),
        }
    }
}

/// A pool of `N` dynamic tags with a lookup table of `M` entries.
///
/// # Invariants
///
/// - `counters` is the `__percpu` address of `N` zeroed `struct alloc_tag_counters` that live
///   forever and that no other tag uses; tag `i` counts into the `i`th.
/// - A slot's tag and names change only under the makers' lock while the slot is [`FREE`]; a
///   slot leaves [`FREE`] only under the makers' lock, with a release store after they are
///   written, and goes back to [`FREE`] (its state written last) only under the registry's
///   write lock, with its counters reading zero.
/// - A table entry holds [`EMPTY`], [`TOMBSTONE`] or a slot index plus one. Only makers, under
///   their lock, change an [`EMPTY`] or [`TOMBSTONE`] entry (to an index); only module unload,
///   under the registry's write lock, changes an index (to [`TOMBSTONE`]); none goes back to
///   [`EMPTY`].
pub(crate) struct Pool<const N: usize, const M: usize> {
    tags: [AllocTag; N],
    slots: [Slot; N],
    table: [AtomicU32; M],
    counters: *mut bindings::alloc_tag_counters,
    /// Slots not [`FREE`].
    used: AtomicUsize,
    /// The most slots used: `N`, less in tests that make the pool look full.
    limit: AtomicUsize,
    /// Allocations charged to a fallback tag because no tag could be made.
    overflows: AtomicU64,
    /// Changes when a tag is made or dropped (the allocinfo ioctl's content id).
    generation: AtomicU64,
    /// Whether the exhaustion was logged.
    warned: AtomicBool,
    /// The lookups' names, for messages and tests.
    name: &'static str,
}

// SAFETY: The tags' names and fields change only under the makers' lock while no reader can see the slot
// (see the invariants); everything else is atomic. `counters` is a per-CPU address.
unsafe impl<const N: usize, const M: usize> Sync for Pool<N, M> {}

/// The kernel's pool.
static POOL: Pool<POOL_TAGS, TABLE_ENTRIES> = {
    #[link_section = ".data..percpu"]
    static mut COUNTERS: [bindings::alloc_tag_counters; POOL_TAGS] =
        [bindings::alloc_tag_counters { bytes: 0, calls: 0 }; POOL_TAGS];
    // SAFETY: `COUNTERS` is a zeroed `.data..percpu` static of this pool alone.
    unsafe { Pool::new(ptr::addr_of_mut!(COUNTERS).cast(), "dynamic") }
};

/// Returns the kernel's pool.
pub(crate) fn pool() -> &'static Pool<POOL_TAGS, TABLE_ENTRIES> {
    &POOL
}

/// The makers' lock, a raw spinlock that leaves interrupts as they were; unlocked on drop.
struct LockGuard(());

impl LockGuard {
    /// Takes the lock. Task context only (a maker interrupted by another on its CPU would
    /// deadlock): `alloctag_rust_caller_tag()` asks for tags only `in_task()`.
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

impl<const N: usize, const M: usize> Pool<N, M> {
    /// Makes an empty pool.
    ///
    /// # Safety
    ///
    /// `counters` must be the `__percpu` address of `N` zeroed counters that live forever and
    /// that nothing else uses.
    pub(crate) const unsafe fn new(
        counters: *mut bindings::alloc_tag_counters,
        name: &'static str,
    ) -> Self {
        // INVARIANT: The caller guarantees `counters`; every slot is free, every entry empty.
        Self {
            tags: [const { AllocTag(Opaque::uninit()) }; N],
            slots: [const { Slot::new() }; N],
            table: [const { AtomicU32::new(EMPTY) }; M],
            counters,
            used: AtomicUsize::new(0),
            limit: AtomicUsize::new(N),
            overflows: AtomicU64::new(0),
            generation: AtomicU64::new(0),
            warned: AtomicBool::new(false),
            name,
        }
    }

    /// Returns whether `tag` is one of this pool's.
    #[cfg(CONFIG_ALLOCTAG_KUNIT_TEST)]
    pub(crate) fn owns(&self, tag: &AllocTag) -> bool {
        self.tags.as_ptr_range().contains(&ptr::from_ref(tag))
    }

    /// Makes `tag`, one of this pool's, a tag of `module`, as if its call site were in that
    /// module; for the tests of module unload.
    #[cfg(CONFIG_ALLOCTAG_KUNIT_TEST)]
    pub(crate) fn set_module(&self, tag: &AllocTag, module: *mut bindings::module) {
        if let Some(slot) = self.tags.iter().position(|t| ptr::eq(t, tag)) {
            self.slots[slot].module.store(module, Ordering::Relaxed);
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
    /// only; `N` restores it. For the tests of the fallback.
    #[cfg(CONFIG_ALLOCTAG_KUNIT_TEST)]
    pub(crate) fn set_limit(&self, limit: usize) {
        self.limit.store(limit.min(N), Ordering::Relaxed);
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
            let slot = self.slots.get(i)?;
            // The slot's key is checked in the slot: the entry may have been reused for
            // another key since it was read, but a slot's key and tag change together.
            if slot.key.load(Ordering::Acquire) == key && slot.state.load(Ordering::Acquire) == LIVE
            {
                return Some(&self.tags[i]);
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
        if made.is_none() {
            self.overflows.fetch_add(1, Ordering::Relaxed);
            if !self.warned.swap(true, Ordering::Relaxed) {
                pr_warn!(
                    "{} tags: no room for {}:{} ({} of {} tags used); its allocations and later \
                     ones without a tag go to the fallback tags\n",
                    self.name,
                    location.file(),
                    location.line(),
                    self.used(),
                    N
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
        if self.used() >= self.limit.load(Ordering::Relaxed) {
            return None;
        }
        let start = hash(key);
        let entry = (0..MAX_PROBES.min(M))
            .map(|probe| (start + probe) % M)
            .find(|&e| matches!(self.table[e].load(Ordering::Relaxed), EMPTY | TOMBSTONE))?;
        let i = self
            .slots
            .iter()
            .position(|s| s.state.load(Ordering::Relaxed) == FREE)?;
        let slot = &self.slots[i];
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
        let tag = &self.tags[i];
        // SAFETY: The slot is free: no reader looks at its tag. `counters.add(i)` is the `i`th of
        // the pool's `N` per-CPU counters; the names are NUL-terminated and stay until the slot
        // is freed.
        unsafe {
            tag.as_raw().write(bindings::alloc_tag {
                ct: bindings::codetag {
                    flags: 0,
                    lineno: location.line(),
                    modname: if module.is_null() {
                        ptr::null()
                    } else {
                        names.module.as_ptr().cast()
                    },
                    function: names.function.as_ptr().cast(),
                    filename: names.file.as_ptr().cast(),
                },
                counters: self.counters.wrapping_add(i),
            })
        };
        slot.module.store(module, Ordering::Relaxed);
        slot.key.store(key, Ordering::Relaxed);
        #[cfg(CONFIG_ALLOCTAG_SELECTION)]
        slot.unselected.store(true, Ordering::Relaxed);
        slot.state.store(LIVE, Ordering::Release);
        self.table[entry].store(i as u32 + 1, Ordering::Release);
        self.used.fetch_add(1, Ordering::Relaxed);
        self.generation.fetch_add(1, Ordering::Relaxed);
        Some(tag)
    }

    /// Drops the tags of `module`, which is going away: those whose counters read zero are
    /// freed, the others are kept (listed, but no longer found by lookup). Also frees kept tags
    /// whose counters now read zero. Called under the registry's write lock, so no reader is
    /// walking the tags and no other unload runs. Makers need no exclusion (see the module
    /// docs): they only take free slots and empty or tombstoned entries, and this only frees
    /// slots (their state last) and tombstones the entries of slots it drops.
    pub(crate) fn module_unload(&self, module: *mut bindings::module) {
        let mut changed = false;
        for (i, slot) in self.slots.iter().enumerate() {
            let state = slot.state.load(Ordering::Relaxed);
            let going =
                state == LIVE && !module.is_null() && slot.module.load(Ordering::Relaxed) == module;
            if !going && state != KEPT {
                continue;
            }
            // Why no allocator hook can reach a freed slot: the module's code, the only code
            // whose `Location`s these are, has returned for good (its exit ran), so the counters
            // only go down, and a sum of zero means that no object refers to the tag any more
            // (see `module_unload` of the static tags in src/alloc_tag.rs). A tag of vmlinux
            // is never freed.
            let zero = self.tags[i].read().is_zero();
            if going {
                self.untable(i);
                if !zero {
                    let counters = self.tags[i].read();
                    pr_warn!(
                        "{} has {} bytes in {} allocations at module unload\n",
                        self.tags[i].codetag(),
                        counters.bytes,
                        counters.calls
                    );
                    slot.module.store(ptr::null_mut(), Ordering::Relaxed);
                    slot.state.store(KEPT, Ordering::Relaxed);
                }
            }
            if zero {
                slot.key.store(0, Ordering::Relaxed);
                slot.module.store(ptr::null_mut(), Ordering::Relaxed);
                slot.state.store(FREE, Ordering::Release);
                self.used.fetch_sub(1, Ordering::Relaxed);
                changed = true;
            }
        }
        if changed {
            self.generation.fetch_add(1, Ordering::Relaxed);
            self.warned.store(false, Ordering::Relaxed);
        }
    }

    /// Replaces slot `i`'s table entry with a tombstone; at module unload.
    fn untable(&self, i: usize) {
        let key = self.slots[i].key.load(Ordering::Relaxed);
        let start = hash(key);
        for probe in 0..MAX_PROBES.min(M) {
            let e = &self.table[(start + probe) % M];
            if e.load(Ordering::Relaxed) == i as u32 + 1 {
                e.store(TOMBSTONE, Ordering::Release);
                return;
            }
        }
    }

    /// Returns whether tag `i` is listed.
    fn is_listed(&self, i: usize) -> bool {
        self.slots
            .get(i)
            .is_some_and(|s| s.state.load(Ordering::Acquire) != FREE)
    }
}

// SAFETY: `tags` is an array of `struct alloc_tag`, whose listed slots are initialised (see the
// type invariants).
unsafe impl<const N: usize, const M: usize> DynamicTags for Pool<N, M> {
    fn start(&self) -> *const u8 {
        self.tags.as_ptr().cast()
    }

    fn capacity(&self) -> usize {
        N
    }

    fn is_listed(&self, index: usize) -> bool {
        Pool::is_listed(self, index)
    }

    fn count(&self) -> usize {
        self.used()
    }

    #[cfg(CONFIG_ALLOCTAG_SELECTION)]
    fn module(&self, index: usize) -> *mut bindings::module {
        self.slots
            .get(index)
            .map_or(ptr::null_mut(), |s| s.module.load(Ordering::Relaxed))
    }

    #[cfg(CONFIG_ALLOCTAG_SELECTION)]
    fn is_selectable(&self, index: usize) -> bool {
        // Only found tags: a kept one is freed by `module_unload` without being unmarked.
        self.slots
            .get(index)
            .is_some_and(|s| s.state.load(Ordering::Acquire) == LIVE)
    }

    #[cfg(CONFIG_ALLOCTAG_SELECTION)]
    fn take_unselected(&self, index: usize) -> bool {
        self.slots
            .get(index)
            .is_some_and(|s| s.unselected.swap(false, Ordering::Relaxed))
    }

    fn generation(&self) -> u64 {
        self.generation.load(Ordering::Relaxed)
    }

    fn module_unload(&self, module: *mut bindings::module) {
        Pool::module_unload(self, module)
    }
}

/// Returns the dynamic tag of the Rust call site at `location` (a `core::panic::Location`),
/// making it on first use; null when none can be made. Called by the C glue's
/// `alloctag_rust_caller_tag()`, in task context with no tag current.
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

/// Writes the use of the kernel's pool, for debugfs.
///
/// # Safety
///
/// The pointers must be valid for writes.
#[no_mangle]
pub(crate) unsafe extern "C" fn alloctag_dynamic_stats(
    used: *mut usize,
    capacity: *mut usize,
    overflows: *mut usize,
) {
    // SAFETY: The caller guarantees the pointers.
    unsafe {
        used.write(POOL.used());
        capacity.write(POOL_TAGS);
        overflows.write(POOL.overflows() as usize);
    }
}

c_declared!(alloctag_dynamic_tag);
c_declared!(alloctag_dynamic_stats);
