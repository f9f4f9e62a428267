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
//! Booted with profiling `never`, no tag gets counters: the hooks never run, and a tag without
//! counters reads zero.

use super::AllocTag;
use crate::codetag::{self, section_tags, CODETAG_FLAG_COUNTERS};
use core::{mem::size_of, ptr, sync::atomic::Ordering};
use kernel::{bindings, prelude::*};

type Raw = bindings::alloc_tag_counters;

/// The most tags one per-CPU allocation holds counters for.
pub(crate) const GROUP: usize = crate::layout::PCPU_MAX_ALLOC / size_of::<Raw>();

impl AllocTag {
    /// Returns whether [`make`] gave the tag its counters.
    fn counters_made(&self) -> bool {
        self.codetag().flags().load(Ordering::Relaxed) & CODETAG_FLAG_COUNTERS != 0
    }

    /// Returns the address of the tag's `counters` field.
    fn counters_field(&self) -> *mut *mut Raw {
        // SAFETY: A field of the tag, which lives as long as `self`.
        unsafe { &raw mut (*self.as_raw()).counters }
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
    let has_counters = |t: &AllocTag| {
        // SAFETY: The caller guarantees that nothing else accesses the field now.
        !unsafe { t.counters_field().read() }.is_null()
    };
    if tags.iter().any(has_counters) {
        for tag in tags {
            // SAFETY: As above; refused, the tags are never charged.
            unsafe { tag.counters_field().write(ptr::null_mut()) };
        }
        return Err(EINVAL);
    }
    for (g, block) in tags.chunks(GROUP).enumerate() {
        // The core's own allocation, charged to this line's static tag.
        let counters = kernel::alloc_hooks!(
            // SAFETY: Process context; the size (at most `PCPU_MIN_UNIT_SIZE`) and alignment
            // are those of `block.len()` counters.
            unsafe {
                bindings::pcpu_alloc_noprof(
                    block.len() * size_of::<Raw>(),
                    core::mem::align_of::<Raw>(),
                    false,
                    bindings::GFP_KERNEL,
                )
            }
        )
        .cast::<Raw>();
        if counters.is_null() {
            // SAFETY: The blocks before this one were made above; the caller's guarantee holds.
            unsafe { free(&tags[..g * GROUP]) };
            return Err(ENOMEM);
        }
        for (i, tag) in block.iter().enumerate() {
            // SAFETY: The caller guarantees that nothing else accesses the field now.
            // INVARIANT: Entry `i` of fresh zeroed per-CPU counters, this tag's alone, freed
            // only with the tag (`free`).
            unsafe { tag.counters_field().write(counters.wrapping_add(i)) };
            tag.codetag()
                .flags()
                .fetch_or(CODETAG_FLAG_COUNTERS, Ordering::Relaxed);
        }
    }
    Ok(())
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
        // SAFETY: The caller guarantees that nothing else accesses the fields.
        let counters = unsafe { block[0].counters_field().read() };
        for tag in block {
            // SAFETY: As above.
            unsafe { tag.counters_field().write(ptr::null_mut()) };
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
pub(crate) unsafe fn abandon(tags: &[AllocTag]) {
    for tag in tags.iter().filter(|t| !t.counters_made()) {
        // SAFETY: The caller guarantees that nothing else accesses the field.
        unsafe { tag.counters_field().write(ptr::null_mut()) };
    }
}

/// Makes the counters of `module`'s tags when it comes. Returns 0 or a negative errno, which
/// fails the load. They go with the tags: a listed module's when the reaper frees them, a
/// failed load's or an unlisted module's when it frees their orphaned section (the registry's
/// `reap`), never at once, as one sum read while a free is between its `bytes` and `calls`
/// updates can read zero.
///
/// Called by the glue's module notifier (src/glue_module.c), first of the module notifiers.
///
/// # Safety
///
/// `module` must be the module of the notification, which the loader keeps alive across it.
#[no_mangle]
pub(crate) unsafe extern "C" fn alloctag_module_counters(
    module: *mut bindings::module,
    state: usize,
) -> core::ffi::c_int {
    if !crate::keys::supported() || state != bindings::module_state_MODULE_STATE_COMING as usize {
        return 0;
    }
    // SAFETY: The caller guarantees `module`, whose memory holds its tags.
    let Some(tags) = (unsafe { section_tags::<super::AllocTags>(module) }) else {
        return 0;
    };
    // SAFETY: The module is coming: none of its code has run, and the registry does not list
    // its tags before the loader hands them over, after this.
    match unsafe { make(tags) } {
        Ok(()) => 0,
        Err(e) => {
            pr_warn!(
                "module {}: its {} allocation tags get no counters ({}): not loaded\n",
                // SAFETY: The caller guarantees `module`.
                unsafe { codetag::module_name(module) },
                tags.len(),
                if e == ENOMEM {
                    "no memory"
                } else {
                    "they have static ones: built for the C core"
                }
            );
            e.to_errno()
        }
    }
}

c_declared!(alloctag_module_counters);
