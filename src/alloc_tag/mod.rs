// SPDX-License-Identifier: GPL-2.0

//! Allocation tags: the per-call-site byte and call counters, the first code-tag type.
//!
//! C header: [`include/linux/alloc_tag.h`](srctree/include/linux/alloc_tag.h)

#[cfg(CONFIG_MEM_ALLOC_PROFILING_RUST)]
pub(crate) mod counters;
#[cfg(CONFIG_MEM_ALLOC_PROFILING_RUST)]
pub(crate) mod demangle;
#[cfg(CONFIG_MEM_ALLOC_PROFILING_RUST)]
pub(crate) mod dynamic;
#[cfg(all(CONFIG_MEM_ALLOC_PROFILING_RUST, CONFIG_MEM_ALLOC_PROFILING_DEBUG))]
pub(crate) mod early;
#[cfg(CONFIG_MEM_ALLOC_PROFILING_RUST)]
pub(crate) mod index;
#[cfg(CONFIG_MEM_ALLOC_PROFILING_RUST)]
pub(crate) mod leaks;
#[cfg(CONFIG_ALLOCTAG_PER_NODE)]
pub(crate) mod node;
#[cfg(CONFIG_MEM_ALLOC_PROFILING_RUST)]
pub(crate) mod page_ext;
#[cfg(CONFIG_MEM_ALLOC_PROFILING_RUST)]
pub(crate) mod percpu_vectors;
#[cfg(CONFIG_ALLOCTAG_WASTE)]
pub(crate) mod waste;

use crate::percpu;
use core::{
    ptr,
    sync::atomic::{AtomicPtr, Ordering},
};
use kernel::{bindings, types::Opaque};

/// The totals of one allocation tag over all CPUs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Counters {
    /// Bytes currently allocated at the call site. Signed, as in C: a read that races with an
    /// allocation on one CPU and its free on another may see the free first.
    pub(crate) bytes: i64,
    /// Allocations made at the call site and not yet freed.
    pub(crate) calls: u64,
}

impl Counters {
    /// Returns whether nothing allocated at the call site is live.
    #[cfg(CONFIG_MEM_ALLOC_PROFILING_RUST)]
    pub(crate) fn is_zero(&self) -> bool {
        self.bytes == 0 && self.calls == 0
    }
}

/// An allocation tag, `struct alloc_tag`: the code tag of one call site and its counters.
///
/// # Invariants
///
/// `counters` of the wrapped tag is null or a `__percpu` address of a `struct alloc_tag_counters`
/// that lives as long as the tag. It is null only for a module's tags, from the module's load
/// until it comes (src/alloc_tag/counters.rs) and for good when profiling can never be on: no
/// allocation is charged to such a tag.
#[repr(transparent)]
pub(crate) struct AllocTag(Opaque<bindings::alloc_tag>);

// SAFETY: The counters are only changed with per-CPU operations and read with volatile loads, as
// in C. The code tag's names and line do not change while the tag is reachable, and its flags,
// which other CPUs change, are only accessed atomically (`Codetag`'s invariants).
unsafe impl Sync for AllocTag {}

impl AllocTag {
    /// Makes a tag, as C's `DEFINE_ALLOC_TAG()` does; for the tests' own tags.
    ///
    /// # Safety
    ///
    /// `counters` must be null or the `__percpu` address of counters that live as long as the
    /// tag.
    #[cfg(CONFIG_ALLOCTAG_KUNIT_TEST)]
    pub(crate) const unsafe fn new(
        ct: bindings::codetag,
        counters: *mut bindings::alloc_tag_counters,
    ) -> Self {
        // INVARIANT: The caller guarantees what `counters` points to.
        Self(Opaque::new(bindings::alloc_tag {
            ct,
            counters,
            #[cfg(CONFIG_ALLOCTAG_WASTE)]
            waste: ptr::null_mut(),
        }))
    }

    /// Makes a tag without counters, as a module's are until it comes; for the tests, which
    /// give such tags counters of their own or none.
    #[cfg(all(CONFIG_ALLOCTAG_KUNIT_TEST, CONFIG_MEM_ALLOC_PROFILING_RUST))]
    pub(crate) const fn without_counters(
        module: *const u8,
        function: *const u8,
        file: *const u8,
        line: u32,
    ) -> Self {
        // SAFETY: Null counters are allowed.
        unsafe {
            Self::new(
                bindings::codetag {
                    flags: 0,
                    lineno: line,
                    modname: module.cast(),
                    function: function.cast(),
                    filename: file.cast(),
                    index: 0,
                    #[cfg(CONFIG_ALLOCTAG_PER_NODE)]
                    node_slots: 0,
                },
                ptr::null_mut(),
            )
        }
    }

    /// Views a C tag, such as one from `current->alloc_tag`, as an [`AllocTag`].
    ///
    /// # Safety
    ///
    /// `tag` must point to a `struct alloc_tag` whose counters are a `__percpu` address, valid
    /// for `'a`.
    #[cfg(CONFIG_ALLOCTAG_KUNIT_TEST)]
    pub(crate) unsafe fn from_raw<'a>(tag: *mut bindings::alloc_tag) -> &'a Self {
        // SAFETY: `AllocTag` is a transparent wrapper; the caller guarantees the rest.
        unsafe { &*tag.cast() }
    }

    /// Returns the raw pointer to the C tag.
    pub(crate) const fn as_raw(&self) -> *mut bindings::alloc_tag {
        self.0.get()
    }

    /// Returns the code tag: where the call site is.
    pub(crate) fn codetag(&self) -> &crate::codetag::Codetag {
        // SAFETY: `struct alloc_tag` starts with its `struct codetag`, which `Codetag` wraps
        // transparently; it lives as long as `self`.
        unsafe { &*self.as_raw().cast() }
    }

    /// Returns the tag's `counters` field, which readers of the tags load while
    /// src/alloc_tag/counters.rs stores it (the first switch-on): atomically on both sides. The
    /// hooks, in C, load it only while profiling is on, after it was stored: the key's flip
    /// orders them.
    pub(super) fn counters_field(&self) -> &AtomicPtr<bindings::alloc_tag_counters> {
        // SAFETY: A field of the tag, aligned as a pointer, which lives as long as `self`; every
        // Rust access to it is atomic.
        unsafe { AtomicPtr::from_ptr(&raw mut (*self.as_raw()).counters) }
    }

    /// Returns the tag's counters: null, static (C's initializer), or made by
    /// src/alloc_tag/counters.rs and cleared only once the tag is unreachable. Acquire: counters
    /// made are read zeroed.
    fn counters(&self) -> *mut bindings::alloc_tag_counters {
        self.counters_field().load(Ordering::Acquire)
    }

    /// Sums the counters of the CPUs that have run, which is the sum over all possible CPUs
    /// that C's `alloc_tag_read()` makes ([`sum_counters`]), and the per-node slots, where
    /// per-node counting put the memory of other nodes than the counting CPU's
    /// (src/alloc_tag/node.rs); zero for a tag without counters.
    pub(crate) fn read(&self) -> Counters {
        let counters = self.counters();
        if counters.is_null() {
            return Counters::default();
        }
        // SAFETY: By the type invariant `counters` is a `__percpu` address of live counters.
        #[allow(unused_mut)]
        let mut sum = unsafe { sum_counters(counters) };
        #[cfg(CONFIG_ALLOCTAG_PER_NODE)]
        self.add_slots(&mut sum);
        sum
    }
}

// The per-CPU view, for `/proc/allocinfo`'s `GET_SPLIT` (the Rust core's).
#[cfg(CONFIG_MEM_ALLOC_PROFILING_RUST)]
impl AllocTag {
    /// Returns `cpu`'s counters of this tag, as [`AllocTag::for_each_cpu`] gives them: zero for a
    /// CPU that never ran, or a tag without counters. Reads that CPU's alone.
    pub(crate) fn share(&self, cpu: usize) -> Share {
        let counters = self.counters();
        if counters.is_null() {
            return Share::default();
        }
        // SAFETY: By the type invariant `counters` is a `__percpu` address of live counters.
        match unsafe { percpu::on_counting_cpu(counters, cpu) } {
            // SAFETY: `c` is `cpu`'s instance of the live counters, read once, volatile, as in
            // `sum_counters`.
            Some(c) => unsafe { read_share(c) },
            None => Share::default(),
        }
    }

    /// Calls `f` with each CPU that has run and its counters of this tag, as they were when read:
    /// the per-CPU view, which adds up to [`AllocTag::read`]'s sum less the per-node slots (memory
    /// of another node than the counting CPU's, with per-node counting on). Each is signed: memory
    /// freed on another CPU than the one that allocated it leaves the first CPU's figures positive
    /// and the other's negative. Nothing for a tag without counters.
    pub(crate) fn for_each_cpu(&self, mut f: impl FnMut(usize, Share)) {
        let counters = self.counters();
        if counters.is_null() {
            return;
        }
        let each = |cpu, c| {
            // SAFETY: `for_each_counting_cpu_id` passes one CPU's instance of the live counters.
            f(cpu, unsafe { read_share(c) })
        };
        // SAFETY: By the type invariant `counters` is a `__percpu` address of live counters.
        unsafe { percpu::for_each_counting_cpu_id(counters, each) }
    }
}

/// Reads one CPU's instance of a tag's counters. Its CPU updates them concurrently, so each is
/// read once, volatile, as C's reader does.
///
/// # Safety
///
/// `c` must be one CPU's instance of live counters.
#[cfg(CONFIG_MEM_ALLOC_PROFILING_RUST)]
unsafe fn read_share(c: *const bindings::alloc_tag_counters) -> Share {
    // SAFETY: The caller guarantees that `c` points to live counters.
    let (bytes, calls) = unsafe {
        (
            ptr::read_volatile(&raw const (*c).bytes),
            ptr::read_volatile(&raw const (*c).calls),
        )
    };
    Share {
        bytes: bytes as i64,
        calls: calls as i64,
    }
}

/// One CPU's share of a tag's counters (C's `u64`s, read as the signed values they are).
#[cfg(CONFIG_MEM_ALLOC_PROFILING_RUST)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Share {
    /// Bytes allocated on the CPU less bytes freed on it.
    pub(crate) bytes: i64,
    /// Allocations made on the CPU less those freed on it.
    pub(crate) calls: i64,
}

/// Sums per-CPU counters over the CPUs that have run: only its own CPU adds to an instance
/// (`this_cpu_add()`), so the others' hold the zeros that `alloc_percpu()` (or the per-CPU
/// area's copy of a static tag's zeroed counters) gave them.
///
/// # Safety
///
/// `counters` must be a `__percpu` address of live counters.
unsafe fn sum_counters(counters: *const bindings::alloc_tag_counters) -> Counters {
    let mut sum = Counters::default();
    // SAFETY: The caller guarantees that `counters` is a `__percpu` address of counters.
    unsafe {
        percpu::for_each_counting_cpu(counters, |c| {
            // SAFETY: `c` is one CPU's instance of the live counters. Its CPU updates them
            // concurrently, so each is read once, volatile, as C's reader does.
            let (bytes, calls) = (
                ptr::read_volatile(&raw const (*c).bytes),
                ptr::read_volatile(&raw const (*c).calls),
            );
            sum.bytes = sum.bytes.wrapping_add(bytes as i64);
            sum.calls = sum.calls.wrapping_add(calls);
        })
    };
    sum
}

/// Defines `static $name: &AllocTag`, a tag in the `alloc_tags` section with its own per-CPU
/// counters, as C's `DEFINE_ALLOC_TAG()` does, at this file and line in `$function`. Only the
/// tests define tags of their own. With `loose, flags = F` the tag is in no `alloc_tags`
/// section, so in no registry and without an index (as a module's tags are while its
/// parameters are parsed, before the loader hands them over), its flags `F`.
#[cfg(CONFIG_ALLOCTAG_KUNIT_TEST)]
macro_rules! define_alloc_tag {
    ($name:ident, $function:literal) => {
        $crate::alloc_tag::define_alloc_tag!(
            @define $name, $function, 0, #[used] #[link_section = "alloc_tags"]
        );
    };
    ($name:ident, $function:literal, loose, flags = $flags:expr) => {
        $crate::alloc_tag::define_alloc_tag!(@define $name, $function, $flags,);
    };
    (@define $name:ident, $function:literal, $flags:expr, $(#[$attr:meta])*) => {
        static $name: &$crate::alloc_tag::AllocTag = {
            #[link_section = ".data..percpu"]
            static mut COUNTERS: kernel::bindings::alloc_tag_counters =
                kernel::bindings::alloc_tag_counters { bytes: 0, calls: 0 };

            $(#[$attr])*
            // SAFETY: `COUNTERS` is a `.data..percpu` static, so its address is `__percpu`, and
            // it lives forever.
            static TAG: $crate::alloc_tag::AllocTag = unsafe {
                $crate::alloc_tag::AllocTag::new(
                    kernel::bindings::codetag {
                        flags: $flags,
                        lineno: line!(),
                        modname: core::ptr::null(),
                        function: kernel::c_str!($function).as_char_ptr(),
                        filename: kernel::c_str!(file!()).as_char_ptr(),
                        #[cfg(CONFIG_MEM_ALLOC_PROFILING_RUST)]
                        index: 0,
                        #[cfg(CONFIG_ALLOCTAG_PER_NODE)]
                        node_slots: 0,
                    },
                    &raw mut COUNTERS,
                )
            };
            &TAG
        };
    };
}
#[cfg(CONFIG_ALLOCTAG_KUNIT_TEST)]
pub(crate) use define_alloc_tag;

/// Runs `f` with `tag` as `current->alloc_tag`, then restores the previous tag, as C's
/// `alloc_hooks()` does: allocations in `f` made with `_noprof` functions are charged to `tag`.
/// For the tests' private tags, which are not `kernel::alloc_tag::CallSiteTag`s.
#[cfg(CONFIG_ALLOCTAG_KUNIT_TEST)]
pub(crate) fn with_tag<R>(tag: &'static AllocTag, f: impl FnOnce() -> R) -> R {
    // SAFETY: `current` is valid in process context, where all callers run; only this task
    // changes its own `alloc_tag`.
    let task = unsafe { bindings::get_current() };
    // SAFETY: As above.
    let previous = unsafe { ptr::replace(&raw mut (*task).alloc_tag, tag.as_raw()) };
    let result = f();
    // SAFETY: As above.
    unsafe { (*task).alloc_tag = previous };
    result
}

#[cfg(CONFIG_MEM_ALLOC_PROFILING_RUST)]
pub(crate) use core_impl::*;

/// The allocation tags as a code-tag type, with what the kernel asks of them.
#[cfg(CONFIG_MEM_ALLOC_PROFILING_RUST)]
mod core_impl {
    use super::AllocTag;
    use crate::codetag::{self, Cursor, ModuleTags, Registration, TagIndex, TagType};
    use core::mem::MaybeUninit;
    use kernel::{bindings, c_str, str::CStr};

    /// The code-tag type of allocation tags.
    pub(crate) struct AllocTags;

    // SAFETY: `AllocTag` is `struct alloc_tag`, which starts with a `struct codetag`, and
    // `alloc_tags` is an array of them (include/asm-generic/codetag.lds.h).
    unsafe impl TagType for AllocTags {
        type Tag = AllocTag;
        const SECTION: &'static CStr = c_str!("alloc_tags");

        fn module_unload(module: ModuleTags<'_, Self>, report: bool) -> bool {
            module_unload(module, report)
        }

        /// Frees what the tags were given, every tag's, those no longer listed included: their
        /// waste counters and their counters.
        fn module_free(module: ModuleTags<'_, Self>) {
            #[cfg(CONFIG_ALLOCTAG_WASTE)]
            for tag in module.tags() {
                // SAFETY: No object is charged to the tags (`module_unload` found them unused):
                // none is tracked, and the module's memory, its tags with it, may go next.
                unsafe { tag.drop_waste() };
            }
            #[cfg(CONFIG_MODULES)]
            {
                // SAFETY: Unused (`module_unload`), unread (registry write-locked), going next;
                // only a module's coming gives tags non-static counters (tests pass none).
                unsafe { super::counters::free(module.slice()) };
            }
        }

        /// A failed load's tags lose the static counters of a module built for the C core,
        /// which are in the module's per-CPU area, about to go.
        #[cfg(CONFIG_MODULES)]
        fn module_abandoned(module: ModuleTags<'_, Self>) {
            // SAFETY: Static counters mean that the module never came (its coming takes them
            // away, src/alloc_tag/counters.rs), so none of its code ran to charge them; the
            // registry is write-locked and lists none of the tags.
            unsafe { super::counters::abandon(module.slice()) };
        }

        fn index() -> Option<&'static TagIndex> {
            Some(&super::index::INDEX)
        }

        /// Once waste accounting has turned on, each tag gets its counters as it comes; a tag
        /// that gets none is not tracked.
        #[cfg(CONFIG_ALLOCTAG_WASTE)]
        fn module_load(module: ModuleTags<'_, Self>) {
            if super::waste::wanted() {
                for tag in module.tags() {
                    if tag.make_waste().is_err() {
                        kernel::pr_warn!("{}: no waste counters: not tracked\n", tag.codetag());
                    }
                }
            }
        }

        /// A kept tag is in use while allocations charged to it live.
        fn in_use(tag: &AllocTag) -> bool {
            !tag.read().is_zero()
        }

        /// Page tags in page flags cannot name these tags: their pages go uncharged.
        fn not_indexed(module: ModuleTags<'_, Self>) {
            for tag in module.tags() {
                tag.codetag().mark_inaccurate();
            }
        }
    }

    /// The kernel's registration of allocation tags.
    pub(crate) static ALLOC_TAGS: Registration<AllocTags> = Registration::new();

    /// Returns whether the module's memory may be freed: only when none of its tags has live
    /// allocations. With `report` (the module is going), logs what they hold; the
    /// registry then keeps them listed until a later call finds them unused.
    ///
    /// Why no allocator hook can reach freed memory, in every preemption model and with no
    /// allocation here that could fail:
    /// - A module's tags live in its data and their counters in per-CPU memory made when it
    ///   came (src/alloc_tag/counters.rs), freed by `module_free` with the data. When a tag has
    ///   live allocations we return `false`: the loader then keeps the module's data (6.12),
    ///   and the registry the counters, until a later call, from the registry's reaper, returns
    ///   `true`, so a later free, or a free preempted between loading `tag->counters` and its
    ///   `this_cpu_sub`, only ever writes memory that stays.
    /// - When every tag reads zero the memory is freed. The module's code has returned for good
    ///   (its exit ran), and only its code charges its tags (`kernel::alloc_tag::with_tag` scopes
    ///   Rust's, `alloc_hooks()` C's), so its `bytes` can only go down (splitting a block adds
    ///   `calls` only, a migration moves the tag without adding): a sum read across the CPUs is
    ///   at least the true count at the end of the read, and zero `bytes` means no block is live,
    ///   so none can be split any more. The memory goes only at the reaper's second pass in a
    ///   row that reads every tag zero (`Registry::reap`), the read at unload being the first:
    ///   a free between its `bytes` and its `calls` update (`alloc_tag_sub()`, `calls` last)
    ///   then keeps a CPU's `calls` up, where one read could see zero (a split of the module's
    ///   block, racing its last free, counted on a CPU read before it). 6.12 frees at unload
    ///   on that one read. With per-node counting (src/alloc_tag/node.rs) a migration of one
    ///   of the module's movable pages moves its charge between nodes, added at the new one
    ///   first; a read of the CPUs, then the slots, can still see the subtraction without the
    ///   addition (added on the migrating CPU, subtracted from another node's slot): the second
    ///   pass in a row is what keeps such a read from freeing the tags.
    fn module_unload(module: ModuleTags<'_, AllocTags>, report: bool) -> bool {
        let mut leaks = super::leaks::Leaks::default();
        for tag in module.tags() {
            leaks.add(tag, tag.read());
            if leaks.any() && !report {
                return false;
            }
        }
        // One line for the module (src/alloc_tag/leaks.rs).
        leaks.report(module.name());
        !leaks.any()
    }

    /// Fills `tags[..count]` with the `count` tags that hold the most bytes, largest first, and
    /// returns how many it filled. From atomic context (`can_sleep` false) it gives up, returning
    /// 0, rather than wait for the registry. Called by the show_mem() report (mm/show_mem.c).
    ///
    /// # Safety
    ///
    /// `tags` must be null or valid for writes of `count` entries, which need not be
    /// initialised.
    #[no_mangle]
    pub(crate) unsafe extern "C" fn alloc_tag_top_users(
        tags: *mut bindings::codetag_bytes,
        count: usize,
        can_sleep: bool,
    ) -> usize {
        let Some(handle) = ALLOC_TAGS.handle() else {
            return 0;
        };
        if tags.is_null() || count == 0 {
            return 0;
        }
        let registry = if can_sleep {
            codetag::read()
        } else {
            match codetag::try_read() {
                Some(registry) => registry,
                None => return 0,
            }
        };
        // SAFETY: The caller passes room for `count` entries; `MaybeUninit` asks nothing of
        // their contents.
        let top = unsafe { core::slice::from_raw_parts_mut(tags.cast(), count) };
        top_users(registry.tags(handle, Cursor::START), top)
    }

    /// Prints the `count` (at most 10) tags that hold the most bytes, largest first, as 6.12's
    /// show_mem() does, with the registry read-locked throughout: an unloaded module's kept
    /// tags, with their names and counters, may go once it is unlocked. From any context: it
    /// gives up rather than wait for the registry. Called by the show_mem() report
    /// (mm/show_mem.c) in place of [`alloc_tag_top_users`].
    #[no_mangle]
    pub(crate) extern "C" fn alloc_tag_show_top_users(count: usize) {
        let Some(handle) = ALLOC_TAGS.handle() else {
            return;
        };
        let Some(registry) = codetag::try_read() else {
            return;
        };
        let mut top = [const { MaybeUninit::<bindings::codetag_bytes>::uninit() }; 10];
        let filled = top_users(
            registry.tags(handle, Cursor::START),
            &mut top[..count.min(10)],
        );
        if filled > 0 {
            kernel::pr_notice!("Memory allocations:\n");
        }
        for entry in &top[..filled] {
            // SAFETY: `top_users` initialised the first `filled` entries.
            let ct = unsafe { entry.assume_init_ref() }.ct;
            // SAFETY: `top_users` stored the `struct codetag` of tags of the registry, which
            // stays read-locked, so they and their names live; an `AllocTag` starts with it.
            let tag = unsafe { &*ct.cast::<AllocTag>() };
            let counters = tag.read();
            let mut size = [0u8; 10];
            // SAFETY: `size` is valid for writes of its length; `string_get_size()` writes a
            // NUL-terminated string that fits.
            unsafe {
                bindings::string_get_size(
                    counters.bytes.max(0) as u64,
                    1,
                    bindings::string_size_units_STRING_UNITS_2,
                    size.as_mut_ptr().cast(),
                    size.len() as i32,
                )
            };
            let nul = size.iter().position(|&c| c == 0).unwrap_or(size.len());
            let size = core::str::from_utf8(&size[..nul]).unwrap_or("?");
            // The format of 6.12's show_mem(): `alloc_tag_to_text()`'s without a buffer.
            kernel::pr_notice!("{:>12} {:>8} {}\n", size, counters.calls, tag.codetag());
        }
    }

    /// Keeps the tags with the most bytes in `top`, largest first, ties in tag order; returns
    /// how many entries it filled.
    pub(crate) fn top_users<'a>(
        tags: impl Iterator<Item = &'a AllocTag>,
        top: &mut [MaybeUninit<bindings::codetag_bytes>],
    ) -> usize {
        let mut filled = 0;
        for tag in tags {
            let bytes = tag.read().bytes;
            let i = top[..filled]
                .iter()
                // SAFETY: The first `filled` entries are initialised.
                .position(|e| bytes > unsafe { e.assume_init_ref() }.bytes)
                .unwrap_or(filled);
            if i == top.len() {
                continue;
            }
            if filled < top.len() {
                filled += 1;
            }
            top.copy_within(i..filled - 1, i + 1);
            top[i].write(bindings::codetag_bytes {
                ct: (tag.codetag() as *const codetag::Codetag).cast_mut().cast(),
                bytes,
            });
        }
        filled
    }

    c_declared!(alloc_tag_top_users);
    c_declared!(alloc_tag_show_top_users);
}
