// SPDX-License-Identifier: GPL-2.0

//! KUnit tests of alloctag.
//!
//! The counter tests make a private tag current around allocations made with the `_noprof`
//! variants, which charge `current->alloc_tag`, and check the tag's counters: only the case
//! touches them, so they move by exactly what the case does. They run against either core, C
//! or Rust; the others test the Rust core's pieces.

use crate::alloc_tag::AllocTag;
use core::ptr;
use kernel::bindings;

mod counters;
#[cfg(CONFIG_MEM_ALLOC_PROFILING_RUST)]
mod format;
#[cfg(CONFIG_MEM_ALLOC_PROFILING_RUST)]
mod registry;

/// Defines a private allocation tag in the `alloc_tags` section, with its own per-CPU counters,
/// as C's `DEFINE_ALLOC_TAG()` does.
macro_rules! test_tag {
    ($name:ident, $function:literal) => {
        static $name: &$crate::alloc_tag::AllocTag = {
            #[link_section = ".data..percpu"]
            static mut COUNTERS: kernel::bindings::alloc_tag_counters =
                kernel::bindings::alloc_tag_counters { bytes: 0, calls: 0 };

            #[used]
            #[link_section = "alloc_tags"]
            // SAFETY: `COUNTERS` is a `.data..percpu` static, so its address is `__percpu`, and
            // it lives forever.
            static TAG: $crate::alloc_tag::AllocTag = unsafe {
                $crate::alloc_tag::AllocTag::new(
                    kernel::bindings::codetag {
                        flags: 0,
                        lineno: line!(),
                        modname: core::ptr::null(),
                        function: kernel::c_str!($function).as_char_ptr(),
                        filename: kernel::c_str!(file!()).as_char_ptr(),
                    },
                    &raw mut COUNTERS,
                )
            };
            &TAG
        };
    };
}
pub(crate) use test_tag;

/// Runs `f` with `tag` as `current->alloc_tag`, then restores the previous tag.
pub(crate) fn with_tag<R>(tag: &'static AllocTag, f: impl FnOnce() -> R) -> R {
    // SAFETY: `current` is valid in process context, where KUnit runs cases; only this task
    // changes its own `alloc_tag`.
    let task = unsafe { bindings::get_current() };
    // SAFETY: As above.
    let previous = unsafe { ptr::replace(&raw mut (*task).alloc_tag, tag.as_raw()) };
    let result = f();
    // SAFETY: As above.
    unsafe { (*task).alloc_tag = previous };
    result
}

/// Returns whether the allocator hooks are charging tags now.
pub(crate) fn profiling_enabled() -> bool {
    // SAFETY: The key is a static; its count is an `atomic_t`, read once as
    // `static_key_count()` does.
    unsafe {
        ptr::read_volatile(&raw const bindings::mem_alloc_profiling_key.key.enabled.counter) > 0
    }
}

/// Turns the allocator hooks on or off, through the static key as either core's sysctl does.
pub(crate) fn set_profiling(enable: bool) {
    let key = &raw mut bindings::mem_alloc_profiling_key.key;
    // SAFETY: `key` is the static key; these functions serialize changes themselves.
    unsafe {
        if enable {
            bindings::static_key_enable(key)
        } else {
            bindings::static_key_disable(key)
        }
    }
}
