// SPDX-License-Identifier: GPL-2.0

//! The kernel crate's inline static branch (rust/kernel/jump_label.rs): for a key of each
//! initial state it reads the key's state as the kernel patches it on and off, and the
//! profiling gate of Rust call sites reads what the profiling key is.

use crate::kunit::{kunit_expect, kunit_suite, Test};
use kernel::bindings;

/// Reads the test key that starts in state `initially_true`, inline.
fn read(initially_true: bool) -> bool {
    if initially_true {
        kernel::static_branch_maybe!(
            true,
            bindings::alloctag_test_key_true,
            bindings::static_key_true
        )
    } else {
        kernel::static_branch_maybe!(
            false,
            bindings::alloctag_test_key_false,
            bindings::static_key_false
        )
    }
}

fn set(initially_true: bool, enable: bool) {
    // SAFETY: Process context; the key functions serialize changes.
    unsafe { bindings::alloctag_test_key_set(initially_true, enable) };
}

/// Flips the key away from its initial state and back, reading it inline after each change.
fn follows_the_key(test: &Test, initially_true: bool) {
    kunit_expect!(
        test,
        read(initially_true) == initially_true,
        "initial state"
    );
    set(initially_true, !initially_true);
    kunit_expect!(test, read(initially_true) != initially_true, "flipped");
    set(initially_true, initially_true);
    kunit_expect!(test, read(initially_true) == initially_true, "flipped back");
    // Twice, so that a patch applied only on the first change shows.
    set(initially_true, !initially_true);
    kunit_expect!(
        test,
        read(initially_true) != initially_true,
        "flipped again"
    );
    set(initially_true, initially_true);
    kunit_expect!(test, read(initially_true) == initially_true, "back again");
}

fn key_initially_true_read_inline(test: &Test) {
    follows_the_key(test, true);
}

fn key_initially_false_read_inline(test: &Test) {
    follows_the_key(test, false);
}

/// Rust call sites skip the tag lookup exactly while the profiling key is off.
#[cfg(CONFIG_MEM_ALLOC_PROFILING_RUST)]
fn profiling_gate_reads_the_profiling_key(test: &Test) {
    kunit_expect!(
        test,
        kernel::alloc_tag::profiling_enabled() == crate::keys::enabled()
    );
}

#[cfg(CONFIG_MEM_ALLOC_PROFILING_RUST)]
kunit_suite!(
    jump_label_suite,
    "alloctag_jump_label",
    [
        key_initially_true_read_inline,
        key_initially_false_read_inline,
        profiling_gate_reads_the_profiling_key,
    ]
);

#[cfg(not(CONFIG_MEM_ALLOC_PROFILING_RUST))]
kunit_suite!(
    jump_label_suite,
    "alloctag_jump_label",
    [
        key_initially_true_read_inline,
        key_initially_false_read_inline
    ]
);
