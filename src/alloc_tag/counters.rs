// SPDX-License-Identifier: GPL-2.0

//! The counters of a module's allocation tags, made when the module comes and freed with its
//! tags.
//!
//! C headers: [`include/linux/alloc_tag.h`](srctree/include/linux/alloc_tag.h),
//! [`include/linux/module.h`](srctree/include/linux/module.h)
//!
//! 6.12's `DEFINE_ALLOC_TAG()` gives each module tag a static per-CPU variable: 16 bytes a tag
//! in the module's per-CPU area, which comes out of the fixed module reserve (64 KiB with
//! profiling), so a distribution's modules exhaust it and a module of more than 2,048 tags
//! cannot load at all; and a module unloaded with live allocations had to keep that area.
//! With the Rust core a module's tags have no counters until the module comes
//! (`MODULE_STATE_COMING`, our notifier first): then they get them here, from the per-CPU
//! allocator, in blocks of at most [`GROUP`] tags (its largest allocation), before the loader
//! parses the module's parameters, the first time its code may run. They go with the tags
//! ([`free`], from the tag type's `module_free`), when the registry's reaper frees those: a
//! listed module's, or the orphaned section of a load that failed or of a module the registry
//! could not list.
//!
//! No tag gets counters before profiling first turns on ([`arm`]): a kernel booted `0` or
//! `never` holds none. Without the debug checks vmlinux's tags have no static counters either
//! (include/linux/alloc_tag.h): the first switch-on makes them, in blocks, for vmlinux and for
//! every module already there, all or none, in the writer's context; from then on a module gets
//! them as it comes, and they stay when profiling turns off again (a later free must find its
//! counters). Booted `1`, the profiling key waits, off, from before the first page allocation
//! until per-CPU memory can be allocated (`alloc_tag_counters_init()`, after
//! `vmalloc_init()`); allocations before carry no tag, as those made while off. With the debug
//! checks vmlinux's tags keep static counters, and module tags get theirs at load unless
//! booted `never`, as before. A tag without counters reads zero.

use super::AllocTag;
use crate::codetag::CODETAG_FLAG_COUNTERS;
#[cfg(CONFIG_MODULES)]
use crate::codetag::{self, section_tags};
use crate::rwsem::{c_rwsem, RwSem};
use core::{
    mem::size_of,
    ptr,
    sync::atomic::{AtomicBool, AtomicU64, Ordering},
};
use kernel::{bindings, prelude::*};

type Raw = bindings::alloc_tag_counters;

/// The most tags one per-CPU allocation holds counters for.
pub(crate) const GROUP: usize = crate::layout::PCPU_MAX_ALLOC / size_of::<Raw>();

impl AllocTag {
    /// Returns whether [`make`] gave the tag its counters.
    fn counters_made(&self) -> bool {
        self.codetag().flags().load(Ordering::Relaxed) & CODETAG_FLAG_COUNTERS != 0
    }
}

/// Gives each of `tags` zeroed counters, in blocks of [`GROUP`]: the first tag of each block
/// holds the block's address. All or none: on failure none has counters. Refuses tags that
/// have counters already (`EINVAL`), static ones (a module built for the C core), and leaves
/// them without: their module's load fails before any of its code runs, and its per-CPU area,
/// where those counters are, may go before the loader gives up the tags, whose checks would
/// then read freed memory; [`free`] must never free them either. Process context; may sleep.
///
/// # Safety
///
/// Nothing may read or write the tags' `counters` field until this returns: no code charges
/// them, no reader lists them. Refused, no code may charge them ever.
pub(crate) unsafe fn make(tags: &[AllocTag]) -> Result {
    if tags.iter().any(has_counters) {
        for tag in tags {
            // Refused, the tags are never charged.
            tag.counters_field()
                .store(ptr::null_mut(), Ordering::Relaxed);
        }
        return Err(EINVAL);
    }
    for (g, block) in tags.chunks(GROUP).enumerate() {
        // The core's own allocation, charged to this line's static tag. Quiet: a failure is the
        // caller's ENOMEM (a switch-on's write, a load), not a stack dump a user can cause.
        let counters = kernel::alloc_hooks!(
            // SAFETY: Process context; the size (at most `PCPU_MIN_UNIT_SIZE`) and alignment
            // are those of `block.len()` counters.
            unsafe {
                bindings::pcpu_alloc_noprof(
                    block.len() * size_of::<Raw>(),
                    core::mem::align_of::<Raw>(),
                    false,
                    bindings::GFP_KERNEL | bindings::__GFP_NOWARN,
                )
            }
        )
        .cast::<Raw>();
        if counters.is_null() {
            // SAFETY: The blocks before this one were made above; the caller's guarantee holds.
            unsafe { free(&tags[..g * GROUP]) };
            return Err(ENOMEM);
        }
        // Per-node slots with the counters, where per-node counting is on.
        #[cfg(CONFIG_ALLOCTAG_PER_NODE)]
        // SAFETY: As the caller guarantees, nothing reads the tags' fields yet.
        if let Err(e) = unsafe { super::node::make_block(block) } {
            // SAFETY: This block's counters, which no tag refers to yet, and the blocks before
            // it, made above; the caller's guarantee holds.
            unsafe {
                bindings::free_percpu(counters.cast());
                free(&tags[..g * GROUP]);
            }
            return Err(e);
        }
        for (i, tag) in block.iter().enumerate() {
            // INVARIANT: Entry `i` of fresh zeroed per-CPU counters, this tag's alone, freed
            // only with the tag (`free`). Release: a reader that loads it reads them zeroed.
            tag.counters_field()
                .store(counters.wrapping_add(i), Ordering::Release);
            tag.codetag()
                .flags()
                .fetch_or(CODETAG_FLAG_COUNTERS, Ordering::Relaxed);
        }
    }
    Ok(())
}

/// Returns whether a tag has counters, made or static.
fn has_counters(tag: &AllocTag) -> bool {
    !tag.counters_field().load(Ordering::Relaxed).is_null()
}

/// Frees the counters [`make`] gave `tags` (all of a module's, or a prefix of whole blocks), and
/// leaves them without; leaves counters it did not make (static ones) as they are.
///
/// # Safety
///
/// No allocation may be charged to any of `tags` any more, and nothing may read or write their
/// counters meanwhile: the tags' memory is about to go, or was never handed over.
pub(crate) unsafe fn free(tags: &[AllocTag]) {
    // Booted without profiling, `make` never ran: nothing here is ours.
    if !crate::keys::supported() {
        return;
    }
    for block in tags.chunks(GROUP) {
        if !block[0].counters_made() {
            continue;
        }
        let counters = block[0].counters_field().load(Ordering::Relaxed);
        #[cfg(CONFIG_ALLOCTAG_PER_NODE)]
        // SAFETY: As the caller guarantees, nothing counts on or reads the tags any more.
        unsafe {
            super::node::free_block(block)
        };
        for tag in block {
            tag.counters_field()
                .store(ptr::null_mut(), Ordering::Relaxed);
            tag.codetag()
                .flags()
                .fetch_and(!CODETAG_FLAG_COUNTERS, Ordering::Relaxed);
        }
        if !counters.is_null() {
            // SAFETY: The block's allocation, made by `make`, which no tag refers to any more.
            unsafe { bindings::free_percpu(counters.cast()) };
        }
    }
}

/// Leaves the tags of a module whose load failed without the counters [`make`] did not give
/// them: static ones (a module built for the C core whose load failed before it came), in the
/// module's per-CPU area, which goes next while the tags stay until the registry's reaper
/// frees them.
///
/// # Safety
///
/// No allocation may be charged to any of `tags` (none of their module's code ran), and nothing
/// may read or write their counters meanwhile.
#[cfg_attr(not(CONFIG_MODULES), allow(dead_code))]
pub(crate) unsafe fn abandon(tags: &[AllocTag]) {
    for tag in tags.iter().filter(|t| !t.counters_made()) {
        tag.counters_field()
            .store(ptr::null_mut(), Ordering::Relaxed);
    }
}

/// Runs `f` while the tags have no counters yet, with modules, the first switch-on and the
/// dynamic tags' growers held off; `EBUSY` once they have (per-node counting is decided before
/// the first count), once the dynamic tags' first chunk has its counters and slots, which a
/// failed switch-on keeps for the next, or once a module's tags got theirs while unarmed
/// ([`Coming::made`]).
#[cfg(CONFIG_ALLOCTAG_PER_NODE)]
pub(super) fn while_unarmed(f: impl FnOnce()) -> Result {
    let coming = ARM.write();
    if armed() || coming.made || !super::dynamic::pool().while_empty(f) {
        return Err(EBUSY);
    }
    Ok(())
}

/// Modules that came while no tag got counters and have not gone since, for [`arm`] to give
/// their tags counters: whether the registry lists them yet (it does only after their
/// parameters are parsed, which may run their code) or could not. Each with its tags, found
/// when it came: a live module's symbol table keeps only what `CONFIG_KALLSYMS_ALL` keeps, which
/// may not name its tags' section any more.
struct Coming {
    modules: KVec<Listed>,
    /// A module's tags got counters while unarmed, not listed for want of memory: with slots as
    /// per-node counting was then, which fixes it from then on. For good: that module is not
    /// listed, so its going cannot be told from another's (nothing charged its tags while
    /// unarmed, but they stay in the registry, slots and all, until it goes).
    #[cfg_attr(not(CONFIG_ALLOCTAG_PER_NODE), allow(dead_code))]
    made: bool,
}

/// A module of [`Coming`]: its address and its tags'.
///
/// # Invariants
///
/// `tags..tags + len` are the module's tags, which live while it is listed: the loader keeps a
/// module from its coming to its going notification, and the going notification takes it off
/// the list first, under [`ARM`]'s lock.
#[cfg_attr(not(CONFIG_MODULES), allow(dead_code))]
#[derive(Clone, Copy)]
struct Listed {
    module: usize,
    tags: *const AllocTag,
    len: usize,
}

// SAFETY: An address and the tags it names, which `ARM`'s lock guards.
unsafe impl Send for Listed {}
// SAFETY: As above; shared references only read the addresses.
unsafe impl Sync for Listed {}

/// Serializes [`arm`] with modules coming and going.
// SAFETY: `alloctag_counters_lock` is defined with `DECLARE_RWSEM()` (src/glue.c) for this alone.
static ARM: RwSem<Coming> = unsafe {
    c_rwsem!(
        alloctag_counters_lock,
        Coming {
            modules: KVec::new(),
            made: false,
        }
    )
};

/// Tags get counters: profiling was on once ([`arm`]). Set under [`ARM`]'s lock.
static ARMED: AtomicBool = AtomicBool::new(false);

/// When [`arm`] gave the tags counters, in nanoseconds of the log's clock; meaningful once
/// [`ARMED`].
static ARMED_AT: AtomicU64 = AtomicU64::new(0);

/// Returns when the tags got counters, in nanoseconds of boot time as the log's timestamps count
/// it (0 with the debug checks, whose vmlinux tags have static counters), or `None` while none
/// has. (`/proc/allocinfo`'s 2.0 header and the status file say it.)
pub(crate) fn armed_at() -> Option<u64> {
    armed().then(|| ARMED_AT.load(Ordering::Relaxed))
}

/// Returns whether tags get counters. With the debug checks, whose vmlinux tags have static
/// counters, whenever profiling can be on, as before.
pub(crate) fn armed() -> bool {
    if cfg!(CONFIG_MEM_ALLOC_PROFILING_DEBUG) {
        crate::keys::supported()
    } else {
        ARMED.load(Ordering::Acquire)
    }
}

/// Returns vmlinux's tags; empty where its section cannot be found.
fn vmlinux() -> &'static [AllocTag] {
    let (start, count) = super::index::vmlinux_tags();
    if start == 0 {
        return &[];
    }
    // SAFETY: vmlinux's `alloc_tags` section holds `count` `struct alloc_tag`s, which live
    // forever; `AllocTag` wraps one transparently.
    unsafe { core::slice::from_raw_parts(start as *const AllocTag, count) }
}

/// Gives every tag its counters, once, the first time profiling turns on: vmlinux's and every
/// module's loaded since boot ([`Coming`]), and the dynamic tags' first chunk with theirs. All or none: on failure
/// (`ENOMEM`) no tag has counters it did not have. Tags that have counters keep them. Process
/// context (or early boot, on one CPU); may sleep; holds the registry's lock for writing
/// meanwhile, so that no reader reads counters that a failure frees. Nothing charges a tag
/// before it returns: the profiling key is off until the caller turns it on.
pub(crate) fn arm() -> Result {
    if armed() {
        return Ok(());
    }
    let mut coming = ARM.write();
    if ARMED.load(Ordering::Relaxed) {
        return Ok(());
    }
    let mut made = 0usize;
    let registry = crate::codetag::write();
    // `'static`: vmlinux's tags, and listed modules' while `ARM`'s lock is held (below).
    let mut done: KVec<&'static [AllocTag]> = KVec::new();
    // Each run of tags without counters: static ones (the debug checks' vmlinux, the KUnit
    // suites' own tags) stay as they are, and so do those made already.
    let mut give = |tags: &'static [AllocTag]| -> Result {
        for run in tags.split(has_counters).filter(|run| !run.is_empty()) {
            done.reserve(1, GFP_KERNEL)?;
            // SAFETY: The profiling key is off, so nothing charges the tags; readers of the
            // tags wait for the registry's lock, held for writing; a module coming waits for
            // `ARM`'s.
            unsafe { make(run) }?;
            // Room reserved above: this cannot fail.
            done.push(run, GFP_KERNEL)?;
            made += run.len();
        }
        Ok(())
    };
    let mut result = give(vmlinux());
    for listed in coming.modules.iter() {
        // SAFETY: By `Listed`'s invariant the module's tags live while it is listed, which it is
        // while `ARM`'s lock is held: across every use here (`done` goes before the lock).
        let tags = unsafe { core::slice::from_raw_parts(listed.tags, listed.len) };
        result = result.and_then(|()| give(tags));
    }
    // The dynamic tags' first chunk, with its counters: booted off, none was made. Kept if
    // page_ext fails below (chunks are never freed); the next switch-on uses it.
    result = result.and_then(|()| super::dynamic::first_chunk());
    // The per-CPU chunks' tag vectors, all or none; kept too (the allocator's chunks made
    // from now on get theirs as they are made), to be used by the next switch-on.
    result = result.and_then(|()| super::percpu_vectors::make());
    // The index's table for the modules and dynamic tags indexed while off; kept too.
    result = result.and_then(|()| super::index::make_table());
    // Page tags' storage last: the counters made can still be freed if it fails, page_ext
    // made cannot be taken back but by itself (all or nothing).
    result = result.and_then(|()| super::page_ext::make());
    if let Err(e) = result {
        for tags in done.iter() {
            // SAFETY: Made above; nothing charged them, nor read them but under the registry's
            // lock, which is still held.
            unsafe { free(tags) };
        }
        return Err(e);
    }
    drop(done);
    drop(registry);
    // Outside the registry's lock: a static key takes the CPU hotplug lock.
    super::index::switch_on();
    // Every tag has its slots: per-node counting can start with the first count.
    #[cfg(CONFIG_ALLOCTAG_PER_NODE)]
    super::node::switch_on();
    // SAFETY: The fast timekeeper reads `local_clock()` until timekeeping starts, after
    // `mm_core_init()`, then the boot clock: any time, any context.
    let now = unsafe { bindings::ktime_get_boot_fast_ns() };
    ARMED_AT.store(now, Ordering::Relaxed);
    // Every CPU that sees the profiling key on sees the counters: static keys patch text with
    // IPIs, which order that, but without `CONFIG_JUMP_LABEL` a key is an atomic the hooks read
    // relaxed. Once a boot. (Without SMP the one CPU orders its own accesses, and the function
    // is an inline that bindgen does not see.)
    #[cfg(CONFIG_SMP)]
    // SAFETY: Process context, or early boot with one CPU up.
    unsafe {
        bindings::kick_all_cpus_sync()
    };
    ARMED.store(true, Ordering::Release);
    // Once a boot: what profiling costs from now on, on or off.
    pr_info!(
        "counters made for {} allocation tags: {} bytes per possible CPU\n",
        made,
        made * size_of::<Raw>()
    );
    let vectors = super::percpu_vectors::made();
    if vectors > 0 {
        pr_info!(
            "tag vectors made for {} per-CPU chunks made while off\n",
            vectors
        );
    }
    // SAFETY: Empties the list of addresses, which need no drop: every listed module's tags
    // have counters now.
    unsafe { coming.modules.set_len(0) };
    Ok(())
}

/// Gives `module`'s tags counters when it comes, once tags get counters ([`armed`]); before,
/// lists it until it goes, for [`arm`]. Returns 0 or a negative errno, which
/// fails the load. Counters go with the tags: a listed module's when the reaper frees them, a
/// failed load's or an unlisted module's when it frees their orphaned section (the registry's
/// `reap`), never at once, as one sum read while a free is between its `bytes` and `calls`
/// updates can read zero.
///
/// Called by the glue's module notifier (src/glue_module.c), first of the module notifiers.
///
/// # Safety
///
/// `module` must be the module of the notification, which the loader keeps alive across it.
#[cfg(CONFIG_MODULES)]
#[no_mangle]
pub(crate) unsafe extern "C" fn alloctag_module_counters(
    module: *mut bindings::module,
    state: usize,
) -> core::ffi::c_int {
    if !crate::keys::supported() {
        return 0;
    }
    if state == bindings::module_state_MODULE_STATE_GOING as usize {
        // By address alone: a going module's symbols may no longer name its tags.
        let mut coming = ARM.write();
        let list = coming.modules.as_mut_slice();
        if let Some(i) = list.iter().position(|l| l.module == module as usize) {
            let last = list.len() - 1;
            list.swap(i, last);
            // SAFETY: Drops the last entry, plain addresses, which need no drop.
            unsafe { coming.modules.set_len(last) };
        }
        return 0;
    }
    if state != bindings::module_state_MODULE_STATE_COMING as usize {
        return 0;
    }
    // SAFETY: The caller guarantees `module`, whose memory holds its tags; coming, its whole
    // symbol table is there.
    let Some(tags) = (unsafe { section_tags::<super::AllocTags>(module) }) else {
        return 0;
    };
    let mut coming = ARM.write();
    let refused = tags.iter().any(has_counters);
    // INVARIANT: The module's own tags, listed until its going notification.
    let listed = Listed {
        module: module as usize,
        tags: tags.as_ptr(),
        len: tags.len(),
    };
    // Unarmed: listed for `arm`; where the list cannot grow, counters now, as armed. The
    // core's own allocation, charged to this line's static tag.
    if !refused && !armed() && kernel::alloc_hooks!(coming.modules.push(listed, GFP_KERNEL)).is_ok()
    {
        return 0;
    }
    // SAFETY: The module is coming: none of its code has run, and the registry does not list
    // its tags before the loader hands them over, after this.
    match unsafe { make(tags) } {
        Ok(()) => {
            // (Made, so not refused: make() refuses tags with static counters.)
            coming.made |= !armed();
            0
        }
        Err(e) => {
            pr_warn!(
                "module {}: its {} allocation tags get no counters ({}): not loaded\n",
                // SAFETY: The caller guarantees `module`.
                unsafe { codetag::module_name(module) },
                tags.len(),
                if e == ENOMEM {
                    "no memory"
                } else if e == ENOSPC {
                    "per-node counting's table is full"
                } else {
                    "they have static ones: built for the C core"
                }
            );
            e.to_errno()
        }
    }
}

/// Boot with profiling on, without the debug checks: whether [`alloctag_counters_boot`] turns
/// it on once vmlinux's tags have counters.
static BOOT_ON: AtomicBool = AtomicBool::new(false);

/// Returns whether profiling was booted on (without the debug checks).
pub(super) fn booted_on() -> bool {
    BOOT_ON.load(Ordering::Relaxed)
}

/// Holds profiling off from before the first page allocation until vmlinux's tags have
/// counters: booted on, without the debug checks, whose tags have none yet.
///
/// # Safety
///
/// Called once, by `alloc_tag_sec_init()`, on the boot CPU before the page allocator hands out
/// its first page.
pub(super) unsafe fn boot_hold() {
    if cfg!(CONFIG_MEM_ALLOC_PROFILING_DEBUG) || !crate::keys::enabled() {
        return;
    }
    BOOT_ON.store(true, Ordering::Relaxed);
    crate::keys::set_profiling(false);
}

/// Gives vmlinux's tags their counters and turns profiling on, where it was booted on; called by
/// `mm_core_init()` once per-CPU memory can be allocated (after `vmalloc_init()`), on the boot
/// CPU. Without the memory, profiling stays off, and can be turned on later.
#[no_mangle]
pub(crate) extern "C" fn alloctag_counters_boot() {
    if !BOOT_ON.load(Ordering::Relaxed) {
        return;
    }
    match arm() {
        Ok(()) => crate::keys::set_profiling(true),
        Err(e) => pr_err!(
            "the allocation tags get no counters (error {}): profiling stays off\n",
            e.to_errno()
        ),
    }
}

c_declared!(alloctag_counters_boot);
#[cfg(CONFIG_MODULES)]
c_declared!(alloctag_module_counters);
