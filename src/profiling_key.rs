// SPDX-License-Identifier: GPL-2.0

//! The profiling switch, `mem_alloc_profiling_key`, which the allocator hooks test inline.
//!
//! C header: [`include/linux/alloc_tag.h`](srctree/include/linux/alloc_tag.h)
//!
//! The key is defined and flipped in C (src/static_key.c): `DEFINE_STATIC_KEY_MAYBE()` and
//! `static_branch_*()` are macros. With capture built in, the slab hooks test a key derived
//! from this one and capture's (src/capture/keys.rs), which every change goes through.

use kernel::bindings;

/// Returns whether the allocator hooks charge tags now.
pub(crate) fn enabled() -> bool {
    // SAFETY: Reading the static key has no precondition.
    unsafe { bindings::alloctag_profiling_enabled() }
}

/// Flips the key alone; may sleep.
pub(crate) fn set_key(enable: bool) {
    // SAFETY: Called in process context (the sysctl handler, tests) or while the kernel parses
    // its early parameters, as C's alloc_tag.c flips the key.
    unsafe { bindings::alloctag_set_profiling(enable) }
}

/// Turns the allocator hooks on or off; may sleep.
pub(crate) fn set_enabled(enable: bool) {
    #[cfg(CONFIG_ALLOCTAG_CAPTURE)]
    crate::capture::keys::set_profiling(enable);
    #[cfg(not(CONFIG_ALLOCTAG_CAPTURE))]
    set_key(enable);
}
