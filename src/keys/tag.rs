// SPDX-License-Identifier: GPL-2.0

//! The tag key (`alloctag_tag_key`): whether C call sites make their tags current. With the
//! Rust core and without the debug checks, C's `alloc_hooks()` tests it before it saves and
//! restores `current->alloc_tag` (include/linux/alloc_tag.h), so that while nothing needs the
//! tag an allocation costs one patched-out jump at its call site, as mainline's since 6.13.
//!
//! C header: [`include/linux/alloc_tag.h`](srctree/include/linux/alloc_tag.h)
//!
//! It is on while profiling is on and while a fault-injection rule is armed (the fault hooks
//! read the tag, profiling on or off); it turns on before profiling does. An
//! allocation in flight while the key turns on may find no tag current and go uncharged, as any
//! allocation around a flip of a key.

use crate::rwsem::{c_rwsem, RwSem};
use kernel::bindings;

/// Who needs call sites to make their tags current: the hooks while profiling is on, fault
/// injection while a rule is armed. The key holds one count while any does: it starts as the
/// profiling key does, with no rule armed.
///
/// # Invariants
///
/// Outside [`set_profiling`], which alone flips the profiling key, under this lock,
/// `profiling` is the profiling key's state.
struct TagKeyUsers {
    profiling: bool,
    fault: bool,
}

// SAFETY: `alloctag_tag_key_lock` is defined with `DECLARE_RWSEM()` for this alone.
static TAG_KEY: RwSem<TagKeyUsers> = unsafe {
    c_rwsem!(
        alloctag_tag_key_lock,
        TagKeyUsers {
            profiling: cfg!(CONFIG_MEM_ALLOC_PROFILING_ENABLED_BY_DEFAULT),
            fault: false,
        },
    )
};

/// How many times the tag key's users were updated: the key work that the tests count.
#[cfg(CONFIG_ALLOCTAG_KUNIT_TEST)]
pub(crate) static UPDATES: core::sync::atomic::AtomicUsize =
    core::sync::atomic::AtomicUsize::new(0);

impl TagKeyUsers {
    /// Applies `change` to the users and flips the key when that turns its first user on or its
    /// last off; may sleep. Under the lock, so that two changes (the sysctl, a rule armed)
    /// cannot leave the key off while one of them needs it.
    fn update(&mut self, change: impl FnOnce(&mut Self)) {
        #[cfg(CONFIG_ALLOCTAG_KUNIT_TEST)]
        UPDATES.fetch_add(1, core::sync::atomic::Ordering::Relaxed);
        let before = self.profiling || self.fault;
        change(self);
        let after = self.profiling || self.fault;
        if before != after {
            // SAFETY: Process context or early boot, as the other keys are flipped.
            unsafe { bindings::alloctag_tag_key_get(after) };
        }
    }
}

/// Flips the profiling key, with the tag key on before profiling turns on and off after it
/// turns off; may sleep. The profiling key is flipped here alone, under the tag key's lock, so
/// that its users know the profiling key's state as they set it, without reading it back, and
/// two flips cannot interleave to leave the tag key off while profiling is on.
pub(super) fn set_profiling(enable: bool) {
    let mut users = TAG_KEY.write();
    if enable {
        users.update(|users| users.profiling = true);
    }
    // SAFETY: The key is C's static key (`DEFINE_STATIC_KEY_MAYBE()`). Called in process context
    // (the sysctl handler, tests) or while the kernel parses its early parameters, as C's
    // alloc_tag.c flips the key.
    unsafe {
        bindings::alloctag_static_key_set(&raw mut bindings::mem_alloc_profiling_key.key, enable)
    };
    // INVARIANT: `profiling` becomes the key's state before the lock is released.
    if !enable {
        users.update(|users| users.profiling = false);
    }
}

/// Records whether a fault-injection rule is armed: while one is, call sites make their tags
/// current, profiling on or off; may sleep.
#[cfg(CONFIG_ALLOCTAG_FAULT_INJECTION)]
pub(crate) fn set_fault_armed(armed: bool) {
    TAG_KEY.write().update(|users| users.fault = armed);
}
