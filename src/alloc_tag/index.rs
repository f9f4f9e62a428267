// SPDX-License-Identifier: GPL-2.0

//! Page tags in page flags (`sysctl.vm.mem_profiling=1,compressed`): the indices that name
//! allocation tags there.
//!
//! C header: [`include/linux/alloctag_pgflags.h`](srctree/include/linux/alloctag_pgflags.h)
//!
//! vmlinux's tags take indices 2 to 2 + its tag count, in section order, which the free path
//! turns back into tags by arithmetic on its `alloc_tags` section. Every other tag, a module's
//! or a dynamic one, is named through [`INDEX`], the code-tag library's index, which the
//! registry fills as modules load ([`super::AllocTags`]) and the dynamic pool as it grows: the
//! free path reads its table from index to tag. Every tag carries its own index, which the
//! allocation path reads.
//!
//! Whether the tags fit is decided once, at boot, before the first page is allocated and
//! before page_ext asks whether it must keep a reference per page ([`alloc_tag_sec_init`]):
//! where vmlinux's tags alone need more indices than the free page-flag bits hold, page tags
//! stay in page_ext, with a log line. A module or a chunk of dynamic tags that finds no free
//! block later is logged, and its tags are marked inaccurate: their pages are not charged.
//!
//! Page tags go in page flags where they fit unless the boot parameter asks for page_ext
//! (`,page_ext`); `,compressed` (mainline's spelling) asks for page flags, as the default does.
//! This is where alloctag differs from 6.12, which keeps them in page_ext unless asked: page
//! flags cost no memory, and a fleet should not have to change every command line for it.
//! Booted `0`, the key that moves the hooks there turns on at the first switch-on
//! ([`switch_on`]), with the profiling key: until then nothing is in page flags, and page_ext is
//! neither reserved nor made (src/alloc_tag/page_ext.rs).

use crate::codetag::{name_tags, IndexUsage, TagIndex, FIRST_INDEX};
use crate::rwsem::c_rwsem;
use core::{
    mem::size_of,
    sync::atomic::{AtomicBool, AtomicU8, Ordering},
};
use kernel::{bindings, c_str, prelude::*};

/// The index of the allocation tags outside vmlinux. Its table is the one the page hooks read
/// (include/linux/alloctag_pgflags.h).
pub(crate) static INDEX: TagIndex =
    // SAFETY: The rwsem is `DECLARE_RWSEM()`'d for this index alone; the zeroed array of null
    // pointers (an entry is a tag's address) is written only by this index and read by C with
    // `READ_ONCE()`.
    unsafe {
        TagIndex::new(
            c_rwsem!(alloctag_index_lock),
            (&raw mut bindings::alloctag_index_dir).cast(),
            bindings::ALLOCTAG_INDEX_DIR as usize,
        )
    };

// The page hooks read the table's leaves inline, with C's size of them.
const _: () = assert!(crate::codetag::TABLE_LEAF == bindings::ALLOCTAG_INDEX_LEAF as usize);

/// Where the boot parameter asks page tags to go (`sysctl.vm.mem_profiling=V[,WHERE]`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum Request {
    /// Nothing said: page flags where they fit.
    Default = 0,
    /// `,compressed`: page flags where they fit (mainline's spelling since 6.13), said in the
    /// log when they do not.
    PageFlags = 1,
    /// `,page_ext`: page_ext.
    PageExt = 2,
}

/// What the boot parameter asked for: a [`Request`].
static REQUESTED: AtomicU8 = AtomicU8::new(Request::Default as u8);

/// Page tags go in page flags at the first switch-on: booted `0`, they fit.
static PLANNED: AtomicBool = AtomicBool::new(false);

/// Records where the boot parameter asks page tags to go; decided at [`alloc_tag_sec_init`].
pub(crate) fn request(request: Request) {
    REQUESTED.store(request as u8, Ordering::Relaxed);
}

/// Returns what the boot parameter asked for.
fn requested() -> Request {
    match REQUESTED.load(Ordering::Relaxed) {
        1 => Request::PageFlags,
        2 => Request::PageExt,
        _ => Request::Default,
    }
}

/// Returns whether page tags are in page flags now.
pub(crate) fn compressed() -> bool {
    // SAFETY: Reads a static key; any context.
    unsafe { bindings::alloctag_compressed_enabled() }
}

/// Returns whether page tags are in page flags, or go there at the first switch-on.
pub(crate) fn in_page_flags() -> bool {
    compressed() || PLANNED.load(Ordering::Relaxed)
}

/// Makes the index's table for the tags indexed while off (4 KiB a leaf of 512 indices), where
/// [`alloc_tag_sec_init`] deferred it: `ENOMEM` without the memory. Called by the first
/// switch-on ([`super::counters::arm`]) before [`switch_on`]. Process context; may sleep.
pub(crate) fn make_table() -> Result {
    INDEX.make_deferred()
}

/// Moves page tags to page flags where [`alloc_tag_sec_init`] planned it for the first
/// switch-on; called by it ([`super::counters::arm`]) before the profiling key turns on, so that
/// no hook finds profiling on and page tags nowhere. Process context; may sleep.
pub(crate) fn switch_on() {
    if PLANNED.load(Ordering::Relaxed) && !compressed() {
        // SAFETY: Process context. Nothing reads page tags while profiling is off, and nothing
        // was charged in page flags: the bits it takes read zero, no tag.
        unsafe { bindings::alloctag_enable_compressed() };
        pr_info!("page tags in page flags from the first switch-on\n");
    }
}

/// Returns the address of a symbol of vmlinux, or 0.
fn vmlinux_symbol(name: &CStr) -> usize {
    // SAFETY: Null names vmlinux; `name` is NUL-terminated.
    unsafe { bindings::alloctag_find_symbol(core::ptr::null_mut(), name.as_char_ptr()) as usize }
}

/// Returns the address of vmlinux's `alloc_tags` section and how many tags it holds.
pub(super) fn vmlinux_tags() -> (usize, usize) {
    let start = vmlinux_symbol(c_str!("__start_alloc_tags"));
    let stop = vmlinux_symbol(c_str!("__stop_alloc_tags"));
    (
        start,
        stop.saturating_sub(start) / size_of::<bindings::alloc_tag>(),
    )
}

/// Returns the page-flag bits an index may take: those free, at most 16 (the table's size).
fn index_bits() -> u32 {
    // SAFETY: Reads a constant, or on test kernels a value set by an early parameter.
    let bits = unsafe { bindings::alloctag_pgflags_bits() };
    (bits.max(0) as u32).min(16)
}

/// Returns the page-flag bits that no field takes (`NR_UNUSED_PAGEFLAG_BITS`), negative where
/// last_cpupid, which it counts by its shift as mainline does, did not fit in page flags.
fn unused_bits() -> i32 {
    // SAFETY: Returns a constant.
    unsafe { bindings::alloctag_pgflags_free_bits() }
}

/// Returns the page-flag bits that `count` tags need, indices 0 and 1 being reserved.
fn bits_needed(count: usize) -> u32 {
    usize::BITS - (FIRST_INDEX + count).saturating_sub(1).leading_zeros()
}

/// Where page tags live and what their index holds, as `/sys/kernel/debug/alloctag/status`
/// says.
#[cfg_attr(not(CONFIG_DEBUG_FS), allow(dead_code))]
pub(crate) struct Placement {
    /// Whether page tags are in page flags, or go there at the first switch-on (else in
    /// page_ext).
    pub(crate) compressed: bool,
    /// Whether the boot parameter asked for page flags (`,compressed`).
    pub(crate) requested: bool,
    /// Whether the boot parameter asked for page_ext (`,page_ext`).
    pub(crate) page_ext_requested: bool,
    /// The page-flag bits the configuration leaves unused (`NR_UNUSED_PAGEFLAG_BITS`, which
    /// is negative where last_cpupid did not fit: 0 then).
    pub(crate) free_bits: u32,
    /// The bits an index may take.
    pub(crate) index_bits: u32,
    /// The bits vmlinux's tags need.
    pub(crate) needed_bits: u32,
    /// vmlinux's allocation tags.
    pub(crate) vmlinux_tags: usize,
    /// What the index of the other tags holds; all zero while page tags are in page_ext.
    pub(crate) usage: IndexUsage,
}

/// Returns where page tags live and what their index holds. Process context; may sleep.
#[cfg_attr(not(CONFIG_DEBUG_FS), allow(dead_code))]
pub(crate) fn placement() -> Placement {
    let (_, vmlinux_tags) = vmlinux_tags();
    Placement {
        compressed: in_page_flags(),
        requested: requested() == Request::PageFlags,
        page_ext_requested: requested() == Request::PageExt,
        free_bits: unused_bits().max(0) as u32,
        index_bits: index_bits(),
        needed_bits: bits_needed(vmlinux_tags),
        vmlinux_tags,
        usage: INDEX.usage(),
    }
}

/// Decides whether page tags go in page flags, as asked at boot.
///
/// # Safety
///
/// Called once, by `mm_core_init()`: on the boot CPU alone, before the page allocator hands out
/// its first page and before page_ext is set up.
#[no_mangle]
pub(crate) unsafe extern "C" fn alloc_tag_sec_init() {
    // SAFETY: Called once, by the caller's guarantee, before the first page allocation.
    unsafe { super::counters::boot_hold() };
    // Booted on (held above until the counters are made), or with the debug checks, whose
    // sysctl is read-only: page tags count from boot. Else from the first switch-on.
    let now = super::counters::booted_on() || cfg!(CONFIG_MEM_ALLOC_PROFILING_DEBUG);
    // SAFETY: As this function's.
    let _in_flags = unsafe { place_page_tags(now) };
    // The debug checks count from boot, with no first switch-on to choose the hooks' variants
    // (and the rare paths' key), and without per-node counting: now, wherever page tags went.
    #[cfg(all(CONFIG_ALLOCTAG_PER_NODE, CONFIG_MEM_ALLOC_PROFILING_DEBUG))]
    crate::keys::choose_node_variants(false, _in_flags);
}

/// Puts page tags in page flags where they fit and the boot asks it, counting from now (`now`)
/// or from the first switch-on; returns whether they count in page flags from now.
///
/// # Safety
///
/// As [`alloc_tag_sec_init`]'s.
unsafe fn place_page_tags(now: bool) -> bool {
    let request = requested();
    if request == Request::PageExt || !crate::keys::supported() {
        return false;
    }
    let size = size_of::<bindings::alloc_tag>();
    let (start, count) = vmlinux_tags();
    let bits = index_bits();
    let capacity = 1usize << bits;
    if start == 0 || bits == 0 || FIRST_INDEX + count > capacity {
        if request == Request::PageFlags {
            pr_warn!(
                "{} allocation tags cannot be named in {} free page-flag bits: page tags stay \
                 in page_ext\n",
                count,
                bits
            );
            log_page_flags(count);
        } else {
            pr_info!(
                "{} allocation tags need {} page-flag bits, {} are free: page tags in page_ext\n",
                count,
                bits_needed(count),
                bits
            );
        }
        return false;
    }
    // SAFETY: By the caller's guarantee, boot on one CPU: nothing reads these before the key
    // below is on.
    unsafe {
        bindings::alloctag_kernel_tags = start as *mut bindings::alloc_tag;
        bindings::alloctag_kernel_tags_count = count;
    }
    // SAFETY: vmlinux's section holds `count` tags of `size` bytes, which live forever; nothing
    // reads their indices before the key below is on.
    unsafe { name_tags(start as *const u8, count, size, FIRST_INDEX) };
    if !now {
        // Modules' and dynamic tags' indices take no table until the first switch-on
        // ([`make_table`]): until then no page carries an index.
        INDEX.defer();
    }
    INDEX.enable(FIRST_INDEX + count, capacity);
    if now {
        // SAFETY: By the caller's guarantee, before the first page allocation: no hook runs yet.
        unsafe { bindings::alloctag_enable_compressed() };
    } else {
        PLANNED.store(true, Ordering::Relaxed);
    }
    pr_info!(
        "page tags in page flags{}: {} bits of {} free, {} of {} indices for vmlinux's tags\n",
        if now { "" } else { " from the first switch-on" },
        bits,
        unused_bits(),
        count,
        capacity
    );
    now
}

c_declared!(alloc_tag_sec_init);

/// What takes `page->flags`' bits, as `NR_UNUSED_PAGEFLAG_BITS` counts them: each field's
/// name, its bits, and the configuration options that size it.
fn page_flags_fields() -> [(&'static str, i64, &'static str); 9] {
    use crate::layout::page_flags as f;
    let bits = |n: usize| n as i64;
    [
        ("flags", bits(f::FLAGS), ""),
        ("sections", bits(f::SECTIONS), "SPARSEMEM without VMEMMAP"),
        ("nodes", bits(f::NODES), "NODES_SHIFT"),
        ("zones", bits(f::ZONES), ""),
        (
            "last_cpupid",
            bits(f::LAST_CPUPID),
            "NUMA_BALANCING, NR_CPUS",
        ),
        (
            "kasan_tag",
            bits(f::KASAN_TAG),
            "KASAN_SW_TAGS, KASAN_HW_TAGS",
        ),
        ("lru_gen", bits(f::LRU_GEN), "LRU_GEN"),
        ("lru_refs", bits(f::LRU_REFS), "LRU_GEN"),
        ("unused", unused_bits().into(), ""),
    ]
}

/// `page->flags`' fields, `name bits` each: after `long BITS`, space-separated, for the status
/// file; comma-separated with the options that size them, for the log.
pub(crate) struct PageFlags {
    /// For the log: each field's options, in parentheses.
    pub(crate) options: bool,
}

impl core::fmt::Display for PageFlags {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        if !self.options {
            write!(f, "long {}", crate::layout::page_flags::LONG)?;
        }
        for (i, (name, bits, options)) in page_flags_fields().iter().enumerate() {
            let sep = match (i, self.options) {
                (0, true) => "",
                (_, true) => ", ",
                (_, false) => " ",
            };
            write!(f, "{sep}{name} {bits}")?;
            if self.options && !options.is_empty() {
                write!(f, " ({options})")?;
            }
        }
        Ok(())
    }
}

/// Says what would let `count` tags go in page flags: the bits they need, and what takes
/// `page->flags`' bits, each field with the configuration options that size it.
fn log_page_flags(count: usize) {
    pr_warn!(
        "they need {} bits; page->flags' {} bits hold {}\n",
        bits_needed(count),
        crate::layout::page_flags::LONG,
        PageFlags { options: true }
    );
}
