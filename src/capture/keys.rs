// SPDX-License-Identifier: GPL-2.0

//! The static keys of capture: the capture key, on while a selection is in force, and the
//! slab-plain key, on while profiling is on and capture off.
//!
//! C header: [`include/alloctag_capture.h`](srctree/lib/alloctag/include/alloctag_capture.h)
//!
//! The slab hooks test the slab-plain key in place of the profiling key and, only when it is
//! off, the capture key: with nothing selected they execute one static branch, as in 6.12. So
//! the slab-plain key follows the other two, and every change of either goes through here,
//! under one lock. The orders below keep, at every moment, "profiling on" implying "slab-plain
//! or capture on": a slab allocation is never skipped by both variants while profiling is on.
//! The sysctl flips the profiling key itself (`proc_do_static_key()`), then calls
//! [`sync_profiling`]: until then the slab hooks follow the old value, as a hook already past
//! its branch does when any key flips.

use crate::{
    profiling_key,
    rwsem::{RwSem, RwSemStorage},
};
use kernel::bindings;

extern "C" {
    /// Defined by `DECLARE_RWSEM()` in src/glue_capture.c.
    static mut alloctag_keys_lock: RwSemStorage;
}

/// What the keys follow, besides the profiling key.
struct Keys {
    /// Capture is on.
    capture: bool,
}

// SAFETY: `alloctag_keys_lock` is defined with `DECLARE_RWSEM()` for these keys alone.
static KEYS: RwSem<Keys> = unsafe {
    RwSem::new(
        (&raw mut alloctag_keys_lock).cast(),
        Keys { capture: false },
    )
};

fn set_capture_key(enable: bool) {
    // SAFETY: Process context, or early boot; the key functions serialize changes.
    unsafe { bindings::alloctag_set_capture_key(enable) };
}

/// Sets the slab-plain key from the profiling key and `keys`.
fn sync(keys: &Keys) {
    let plain = profiling_key::enabled() && !keys.capture;
    // SAFETY: As for `set_capture_key`.
    unsafe { bindings::alloctag_set_slab_plain_key(plain) };
}

/// Turns profiling on or off; may sleep.
pub(crate) fn set_profiling(enable: bool) {
    let keys = KEYS.write();
    if !enable {
        // SAFETY: As for `set_capture_key`. Off before profiling: the plain variants charge.
        unsafe { bindings::alloctag_set_slab_plain_key(false) };
    }
    profiling_key::set_key(enable);
    sync(&keys);
}

/// Follows a change of the profiling key made elsewhere (the sysctl); may sleep.
pub(crate) fn sync_profiling() {
    sync(&KEYS.write());
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
