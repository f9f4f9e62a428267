// SPDX-License-Identifier: GPL-2.0

//! KUnit tests of alloctag.
//!
//! The counter tests make a private tag current around allocations made with the `_noprof`
//! variants, which charge `current->alloc_tag`, and check the tag's counters: only the case
//! touches them, so they move by exactly what the case does. They run against either core, C
//! or Rust; the others test the Rust core's pieces.

use core::{fmt, ptr};
use kernel::{alloc::flags::GFP_KERNEL, bindings, prelude::*};

mod callsite;
#[cfg(CONFIG_ALLOCTAG_CAPTURE)]
mod capture;
mod counters;
#[cfg(CONFIG_MEM_ALLOC_PROFILING_RUST)]
mod dynamic;
#[cfg(all(CONFIG_MEM_ALLOC_PROFILING_RUST, CONFIG_MEM_ALLOC_PROFILING_DEBUG))]
mod early;
#[cfg(CONFIG_ALLOCTAG_FAULT_INJECTION)]
mod fault;
#[cfg(CONFIG_MEM_ALLOC_PROFILING_RUST)]
mod format;
#[cfg(CONFIG_MEM_ALLOC_PROFILING_RUST)]
mod index;
mod jump_label;
#[cfg(CONFIG_ALLOCTAG_PER_NODE)]
mod node;
#[cfg(CONFIG_MEM_ALLOC_PROFILING_RUST)]
mod overlap;
#[cfg(CONFIG_MEM_ALLOC_PROFILING_RUST)]
mod query;
#[cfg(CONFIG_MEM_ALLOC_PROFILING_RUST)]
mod registry;
#[cfg(all(CONFIG_MEM_ALLOC_PROFILING_RUST, CONFIG_PROC_SYSCTL))]
mod sysctl;
#[cfg(CONFIG_ALLOCTAG_WASTE)]
mod waste;

pub(crate) use crate::alloc_tag::define_alloc_tag as test_tag;

pub(crate) use crate::alloc_tag::with_tag;

pub(crate) use crate::keys::{enabled as profiling_enabled, set_profiling};

/// Allocates `2^order` pages, as `alloc_pages_noprof()` does (inline without NUMA).
pub(crate) fn alloc_pages(order: u32) -> *mut bindings::page {
    // SAFETY: Allocating has no precondition; node 0 always exists.
    unsafe { bindings::__alloc_pages_noprof(bindings::GFP_KERNEL, order, 0, ptr::null_mut()) }
}

/// Moves `old`'s flags, owner and tag to `new`, as page migration does, under both folio locks.
///
/// # Safety
///
/// `old` and `new` are order-0 pages the caller owns, each its own folio; neither is mapped, on
/// an LRU list or in a page cache, so only their flags, owner and tag move.
#[cfg(all(CONFIG_MIGRATION, CONFIG_ALLOCTAG_CAPTURE))]
pub(crate) unsafe fn migrate_flags(new: *mut bindings::page, old: *mut bindings::page) {
    // SAFETY: As the caller guarantees; migration holds both folio locks, as here.
    unsafe {
        bindings::__folio_lock(old.cast());
        bindings::__folio_lock(new.cast());
        bindings::folio_migrate_flags(new.cast(), old.cast());
        bindings::folio_unlock(new.cast());
        bindings::folio_unlock(old.cast());
    }
}

/// Makes a registry of the test's own with `T` registered; `None` where registering failed
/// (reported).
#[cfg(CONFIG_MEM_ALLOC_PROFILING_RUST)]
pub(crate) fn registry_of<T: crate::codetag::TagType>(
    test: &crate::kunit::Test,
) -> Option<(crate::codetag::Registry, crate::codetag::Handle<T>)> {
    let mut registry = crate::codetag::Registry::new();
    let handle = registry.register::<T>();
    crate::kunit::kunit_expect!(
        test,
        handle.is_ok(),
        "registering: {:?}",
        handle.as_ref().err()
    );
    Some((registry, handle.ok()?))
}

/// Appends formatted text to a vector, failing when memory runs out.
#[cfg_attr(
    not(any(CONFIG_ALLOCTAG_FAULT_INJECTION, CONFIG_ALLOCTAG_CAPTURE)),
    allow(dead_code)
)]
pub(crate) struct LineWriter<'a>(pub(crate) &'a mut KVec<u8>);

impl fmt::Write for LineWriter<'_> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        self.0
            .extend_from_slice(s.as_bytes(), GFP_KERNEL)
            .map_err(|_| fmt::Error)
    }
}
