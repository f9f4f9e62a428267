// SPDX-License-Identifier: GPL-2.0

//! The `vm.mem_profiling` sysctl's handler: a write that 6.12's `proc_do_static_key()` refuses
//! (no `CAP_SYS_ADMIN`), cannot parse, or that keeps the value, returns what it returns and
//! changes no key: flipping a key patches every call site's text, with IPIs to every CPU.

use crate::{
    keys::{enabled, TAG_KEY_UPDATES},
    kunit::{kunit_expect, kunit_suite, Test},
    profiling::write_sysctl,
};
use core::{ffi::c_int, sync::atomic::Ordering};
use kernel::bindings;

fn errno(e: u32) -> c_int {
    -(e as c_int)
}

/// Writes that change nothing do no key work: their result is 6.12's, the value stays, and
/// the tag key's users are never touched.
fn refused_writes_touch_no_key(test: &Test) {
    let on = enabled();
    let same: &[u8] = if on { b"1\n" } else { b"0\n" };
    let other: &[u8] = if on { b"0" } else { b"1" };
    let updates = TAG_KEY_UPDATES.load(Ordering::Relaxed);
    let cases: [(&[u8], c_int); 6] = [
        (b"2", errno(bindings::EINVAL)),
        (b"-1", errno(bindings::EINVAL)),
        (b"x", errno(bindings::EINVAL)),
        (b"1x", errno(bindings::EINVAL)),
        (b"", 0),
        (same, 0),
    ];
    for (text, want) in cases {
        let got = write_sysctl(text);
        kunit_expect!(
            test,
            got == want,
            "writing {text:?}: {got}, 6.12 gives {want}"
        );
        kunit_expect!(test, enabled() == on, "writing {text:?} changed the value");
    }
    // SAFETY: Restored below.
    let old = unsafe { bindings::alloctag_test_drop_cap_sys_admin() };
    kunit_expect!(
        test,
        !old.is_null(),
        "no credentials to drop the capability from"
    );
    if !old.is_null() {
        let got = write_sysctl(other);
        // SAFETY: `old` is what dropping the capability returned.
        unsafe { bindings::alloctag_test_restore_creds(old) };
        kunit_expect!(
            test,
            got == errno(bindings::EPERM),
            "writing {other:?} without CAP_SYS_ADMIN: {got}"
        );
        kunit_expect!(test, enabled() == on, "a refused write changed the value");
    }
    let work = TAG_KEY_UPDATES.load(Ordering::Relaxed) - updates;
    kunit_expect!(
        test,
        work == 0,
        "{work} updates of the tag key for writes that change nothing"
    );
}

kunit_suite!(
    sysctl_suite,
    "alloctag_sysctl",
    [refused_writes_touch_no_key]
);
