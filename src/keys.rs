// SPDX-License-Identifier: GPL-2.0

//! The static keys that choose what the allocator hooks do: the profiling key
//! (`mem_alloc_profiling_key`), the tag key (`alloctag_tag_key`, src/keys/tag.rs), on while
//! profiling is on or a fault-injection rule armed, and with capture built in
//! the capture key, on while a capture selection is in force, and the slab-plain key, on while
//! profiling is on and capture, waste accounting and per-node counting off; with waste accounting
//! built in, its key, and the page allocation hooks' key, on while capture or waste accounting is
//! (one static branch for both on every page allocation); with per-node counting built in, its
//! key and the page hooks' page-flags key, chosen once, never both on: one patched jump of the
//! page hooks names both (include/linux/alloctag_pgflags.h); and the rare paths' two keys (per-CPU
//! memory, a folio's split and migration: `alloc_tag_counting()`), on while profiling is, from
//! before it turns on to after it turns off, one per way of counting, never both on: one patched
//! jump names both.
//!
//! C header: [`include/linux/alloc_tag.h`](srctree/include/linux/alloc_tag.h)
//!
//! The keys are defined in C (src/glue.c, static_key.c, glue_capture.c, glue_waste.c and
//! glue_fault.c) and flipped by one C setter, `alloctag_static_key_set()` (src/static_key.c):
//! `DEFINE_STATIC_KEY_MAYBE()` and `static_branch_*()` are macros. Every change goes through
//! here, so that the keys stay in step:
//!
//! The slab hooks test the slab-plain key in place of the profiling key and, only when it is
//! off, the profiling key, to take their capture variants, which test the capture key
//! themselves: with nothing selected they execute one static branch, as in 6.12. So the
//! slab-plain key follows the other two, under one lock. A hook can be preempted between its
//! two tests while the keys change; the second test is of the profiling key, which capture
//! never flips, so such a hook still charges exactly when profiling is on. (Were it of the
//! capture key, a hook that found the plain key off while capture was on and the capture key
//! off after capture ended would skip a charge or an uncharge.) The sysctl, too, turns
//! profiling on and off through [`set_profiling`], and only when a write changes its value.

use kernel::bindings;

#[cfg(CONFIG_MEM_ALLOC_PROFILING_RUST)]
use core::sync::atomic::{AtomicBool, Ordering};

#[cfg(CONFIG_MEM_ALLOC_PROFILING_RUST)]
mod tag;
#[cfg(CONFIG_ALLOCTAG_FAULT_INJECTION)]
pub(crate) use tag::set_fault_armed;
#[cfg(all(CONFIG_MEM_ALLOC_PROFILING_RUST, CONFIG_ALLOCTAG_KUNIT_TEST))]
pub(crate) use tag::UPDATES as TAG_KEY_UPDATES;

/// Whether profiling can be turned on: not after a boot with `sysctl.vm.mem_profiling=never`,
/// which makes nothing for it, ever. Built with profiling off by default, the kernel boots `0`
/// (6.12 boots `never`): off holds next to what `never` holds, as what profiling needs is made
/// when it first turns on (src/alloc_tag/counters.rs, src/alloc_tag/page_ext.rs). Set by the boot
/// parameter (src/profiling.rs), read by the layers below it (the tag index, dynamic tags,
/// waste accounting): it lives here, below all of them.
#[cfg(CONFIG_MEM_ALLOC_PROFILING_RUST)]
static SUPPORTED: AtomicBool = AtomicBool::new(true);

/// Returns whether profiling can be turned on.
#[cfg(CONFIG_MEM_ALLOC_PROFILING_RUST)]
pub(crate) fn supported() -> bool {
    SUPPORTED.load(Ordering::Relaxed)
}

/// Says whether profiling can be turned on; only the boot parameter decides it, while the
/// kernel parses its early parameters.
#[cfg(CONFIG_MEM_ALLOC_PROFILING_RUST)]
pub(crate) fn set_supported(supported: bool) {
    SUPPORTED.store(supported, Ordering::Relaxed);
}

/// Returns whether the allocator hooks charge tags now.
pub(crate) fn enabled() -> bool {
    // SAFETY: Reading the static key has no precondition.
    unsafe { bindings::alloctag_profiling_enabled() }
}

/// Flips the profiling key, and the tag key with it: on before profiling, off after it;
/// may sleep.
fn set_profiling_key(enable: bool) {
    #[cfg(CONFIG_MEM_ALLOC_PROFILING_RUST)]
    tag::set_profiling(enable);
    #[cfg(not(CONFIG_MEM_ALLOC_PROFILING_RUST))]
    // SAFETY: The key is C's static key (`DEFINE_STATIC_KEY_MAYBE()`). Called in process context
    // (the sysctl handler, tests) or while the kernel parses its early parameters, as C's
    // alloc_tag.c flips the key.
    unsafe {
        bindings::alloctag_static_key_set(&raw mut bindings::mem_alloc_profiling_key.key, enable)
    }
}

/// Turns profiling on or off; may sleep.
#[cfg(not(CONFIG_ALLOCTAG_CAPTURE))]
pub(crate) fn set_profiling(enable: bool) {
    set_profiling_then(enable, || {});
}

/// Turns profiling on or off, then runs `then`; may sleep.
#[cfg(not(CONFIG_ALLOCTAG_CAPTURE))]
pub(crate) fn set_profiling_then(enable: bool, then: impl FnOnce()) {
    set_profiling_key(enable);
    then();
}

#[cfg(CONFIG_ALLOCTAG_PER_NODE)]
pub(crate) use capture::choose_node_variants;
#[cfg(all(CONFIG_ALLOCTAG_CAPTURE, CONFIG_PROC_SYSCTL))]
pub(crate) use capture::set_profiling_then;
#[cfg(CONFIG_ALLOCTAG_WASTE)]
pub(crate) use capture::set_waste;
#[cfg(all(CONFIG_ALLOCTAG_CAPTURE, CONFIG_ALLOCTAG_KUNIT_TEST))]
pub(crate) use capture::with_plain_key_off;
#[cfg(CONFIG_ALLOCTAG_CAPTURE)]
pub(crate) use capture::{set_capture, set_profiling};

/// The keys of capture.
#[cfg(CONFIG_ALLOCTAG_CAPTURE)]
mod capture {
    use super::{enabled, set_profiling_key};
    use crate::rwsem::{c_rwsem, RwSem};
    use kernel::bindings;

    /// What the keys follow, besides the profiling key: each needs the slab hooks' second
    /// variant.
    struct Keys {
        /// Capture is on.
        capture: bool,
        /// Waste accounting is on.
        waste: bool,
        /// Per-node counting is on: once, before the first count, for good.
        per_node: bool,
    }

    // SAFETY: `alloctag_keys_lock` is defined with `DECLARE_RWSEM()` for these keys alone.
    static KEYS: RwSem<Keys> = unsafe {
        c_rwsem!(
            alloctag_keys_lock,
            Keys {
                capture: false,
                waste: false,
                per_node: false,
            },
        )
    };

    fn set_capture_key(enable: bool) {
        // SAFETY: The key is C's static key (`DEFINE_STATIC_KEY_FALSE()`); process context, or
        // early boot; the key functions serialize changes.
        unsafe {
            bindings::alloctag_static_key_set(&raw mut bindings::alloctag_capture_key.key, enable)
        };
    }

    fn set_slab_plain_key(enable: bool) {
        // SAFETY: As for `set_capture_key`.
        unsafe {
            bindings::alloctag_static_key_set(
                &raw mut bindings::alloctag_slab_plain_key.key,
                enable,
            )
        };
    }

    /// The page allocation hooks' shared key (include/alloctag_waste.h).
    #[cfg(CONFIG_ALLOCTAG_WASTE)]
    fn set_page_alloc_key(enable: bool) {
        // SAFETY: As for `set_capture_key`.
        unsafe {
            bindings::alloctag_static_key_set(
                &raw mut bindings::alloctag_page_alloc_key.key,
                enable,
            )
        };
    }

    /// Sets the rare paths' keys (`alloc_tag_counting()`, include/linux/alloc_tag.h): the
    /// per-node one on while counting (`on`) with per-node counting, the per-CPU one while counting
    /// without; never both on, as one patched jump names both, so the one to turn off goes first.
    #[cfg(CONFIG_ALLOCTAG_PER_NODE)]
    fn set_count_keys(on: bool, per_node: bool) {
        // SAFETY: Both are `DEFINE_STATIC_KEY_FALSE()`s of src/glue.c, flipped only here, under
        // the keys' lock; process context or early boot; the key functions serialize changes.
        unsafe {
            let cpu = &raw mut bindings::alloctag_count_cpu_key.key;
            let node = &raw mut bindings::alloctag_count_node_key.key;
            let (other, way) = if per_node { (cpu, node) } else { (node, cpu) };
            // The other off before this way's turns on: never both on.
            bindings::alloctag_static_key_set(other, false);
            bindings::alloctag_static_key_set(way, on);
        }
    }

    /// Sets the slab-plain key and the rare paths' keys from the profiling key and `keys`, and
    /// the page allocation hooks' key from `keys`: on while capture or waste accounting is.
    fn sync(keys: &Keys) {
        set_slab_plain_key(enabled() && !keys.capture && !keys.waste && !keys.per_node);
        #[cfg(CONFIG_ALLOCTAG_PER_NODE)]
        set_count_keys(enabled(), keys.per_node);
        #[cfg(CONFIG_ALLOCTAG_WASTE)]
        set_page_alloc_key(keys.capture || keys.waste);
    }

    /// Turns profiling on or off; may sleep.
    pub(crate) fn set_profiling(enable: bool) {
        set_profiling_then(enable, || {});
    }

    /// Turns profiling on or off, then runs `then` before any other change of the keys (one
    /// that turns profiling back on waits for it); may sleep.
    pub(crate) fn set_profiling_then(enable: bool, then: impl FnOnce()) {
        let keys = KEYS.write();
        if !enable {
            // Off before profiling: the plain variants charge.
            set_slab_plain_key(false);
        }
        // The rare paths count from before the hooks charge until after they stop: a page
        // charged is split, migrated and freed with its tag.
        #[cfg(CONFIG_ALLOCTAG_PER_NODE)]
        if enable {
            set_count_keys(true, keys.per_node);
        }
        set_profiling_key(enable);
        sync(&keys);
        then();
    }

    /// Runs `f` with the slab-plain key off and capture off, or returns `None` while capture is
    /// on. That is what a slab hook sees when it found the plain key off while capture was on and
    /// tests the rest after capture ended (src/tests/capture.rs). For the tests; may sleep.
    #[cfg(CONFIG_ALLOCTAG_KUNIT_TEST)]
    pub(crate) fn with_plain_key_off<R>(f: impl FnOnce() -> R) -> Option<R> {
        let keys = KEYS.write();
        if keys.capture || keys.waste {
            return None;
        }
        set_slab_plain_key(false);
        let r = f();
        sync(&keys);
        Some(r)
    }

    /// Turns waste accounting's key on or off; may sleep. As for capture: the second variants
    /// of the slab hooks run before its key is on, and until after it is off.
    #[cfg(CONFIG_ALLOCTAG_WASTE)]
    pub(crate) fn set_waste(enable: bool) {
        let mut keys = KEYS.write();
        keys.waste = enable;
        if enable {
            sync(&keys);
        }
        // SAFETY: As for `set_capture_key`.
        unsafe {
            bindings::alloctag_static_key_set(&raw mut bindings::alloctag_waste_key.key, enable)
        };
        if !enable {
            sync(&keys);
        }
    }

    /// Chooses the hooks' variants for per-node counting, once: at the first switch-on, before
    /// the profiling key turns on (src/alloc_tag/node.rs), or at boot on kernels with the debug
    /// checks, whose tags count from boot and which refuse per-node counting
    /// (src/alloc_tag/index.rs). With `per_node`, its key on and the slab hooks' plain variants,
    /// which count per CPU alone, off, for good; without, where page tags are in page flags
    /// (`page_flags`), the page hooks' plain page-flags variant
    /// (include/linux/alloctag_pgflags.h). The page hooks' two keys are never both on, as one
    /// patched jump of theirs names both. Process context or early boot; may sleep.
    #[cfg(CONFIG_ALLOCTAG_PER_NODE)]
    pub(crate) fn choose_node_variants(per_node: bool, page_flags: bool) {
        let mut keys = KEYS.write();
        // SAFETY: As for `set_capture_key`; both are `DEFINE_STATIC_KEY_FALSE()`s of src/glue.c
        // and src/glue_pgflags.c, turned on here only, at most one of them, and never off.
        unsafe {
            if per_node {
                keys.per_node = true;
                sync(&keys);
                bindings::alloctag_static_key_set(&raw mut bindings::alloctag_node_key.key, true);
            } else if page_flags {
                bindings::alloctag_static_key_set(
                    &raw mut bindings::alloctag_pgflags_plain_key.key,
                    true,
                );
            }
        }
        // The debug checks' kernels count from boot: the rare paths' keys follow.
        sync(&keys);
    }

    /// Turns capture on or off; may sleep.
    pub(crate) fn set_capture(enable: bool) {
        let mut keys = KEYS.write();
        keys.capture = enable;
        if enable {
            // The capture variants first, then the plain ones off.
            set_capture_key(true);
            sync(&keys);
        } else {
            sync(&keys);
            set_capture_key(false);
        }
    }
}
