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
    // SAFETY: Both are C's static keys (`DEFINE_STATIC_KEY_*()`); process context; the key
    // functions serialize changes.
    unsafe {
        let key = if initially_true {
            &raw mut bindings::alloctag_test_key_true.key
        } else {
            &raw mut bindings::alloctag_test_key_false.key
        };
        bindings::alloctag_static_key_set(key, enable)
    };
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

/// The gate of the kernel crate's allocators, out of line: a function of its own, whose extent
/// kallsyms knows, holds its jump entry.
#[cfg(CONFIG_MEM_ALLOC_PROFILING_RUST)]
#[inline(never)]
fn gate() -> bool {
    kernel::alloc_tag::tag_wanted()
}

/// Rust call sites skip the core's charged allocators exactly while the tag key is off: the gate
/// reads what the key is now (on with profiling, as here, and no fault rule armed) and, where it
/// is a patched branch, its jump entry names the tag key and no other. (The test kernels forbid
/// turning profiling off, CONFIG_MEM_ALLOC_PROFILING_DEBUG: that the gate follows the key both
/// ways is the guest's test_rw_profiling_off_freezes_*.)
#[cfg(CONFIG_MEM_ALLOC_PROFILING_RUST)]
fn allocator_gate_reads_the_tag_key(test: &Test) {
    kunit_expect!(test, gate() == crate::keys::enabled());
    #[cfg(all(
        CONFIG_JUMP_LABEL,
        CONFIG_HAVE_ARCH_JUMP_LABEL_RELATIVE,
        CONFIG_ALLOCTAG_RUST_ASM_GOTO,
        any(CONFIG_X86_64, CONFIG_ARM64)
    ))]
    {
        let start = gate as *const () as usize;
        let Some(size) = symbol_size(start) else {
            kunit_expect!(test, false, "kallsyms does not know the gate");
            return;
        };
        let key = (&raw const bindings::alloctag_tag_key) as usize;
        let (mut ours, mut others) = (0, 0);
        for (code, entry_key) in vmlinux_jump_entries() {
            if (start..start + size).contains(&code) {
                if entry_key == key {
                    ours += 1;
                } else {
                    others += 1;
                }
            }
        }
        kunit_expect!(
            test,
            ours == 1 && others == 0,
            "jump entries in the gate ({size} bytes): {ours} of the tag key, {others} of others"
        );
    }
}

/// The size of the symbol that starts at `addr`, if kallsyms has one there.
#[cfg(all(CONFIG_MEM_ALLOC_PROFILING_RUST, CONFIG_JUMP_LABEL))]
fn symbol_size(addr: usize) -> Option<usize> {
    let (mut size, mut offset) = (0, 0);
    // SAFETY: Both out-pointers are valid for writes; the lookup takes no lock that a test
    // case could hold.
    let found = unsafe { bindings::kallsyms_lookup_size_offset(addr as _, &mut size, &mut offset) };
    (found != 0 && offset == 0).then_some(size)
}

/// The code address and key of each of vmlinux's jump entries, as jump_entry_code() and
/// jump_entry_key() in include/linux/jump_label.h compute them (relative offsets; the key's two
/// low bits are flags). src/layout.rs checks bindgen's `jump_entry` against C's.
#[cfg(all(
    CONFIG_MEM_ALLOC_PROFILING_RUST,
    CONFIG_JUMP_LABEL,
    CONFIG_HAVE_ARCH_JUMP_LABEL_RELATIVE
))]
fn vmlinux_jump_entries() -> impl Iterator<Item = (usize, usize)> {
    let start = (&raw const bindings::__start___jump_table).cast::<bindings::jump_entry>();
    let stop = (&raw const bindings::__stop___jump_table).cast::<bindings::jump_entry>();
    // SAFETY: Both bound the linker's `__jump_table` section of vmlinux, an array of entries.
    let count = unsafe { stop.offset_from(start) } as usize;
    (0..count).map(move |i| {
        // SAFETY: `i` is within the section, which stays mapped; after init only
        // jump_label_init() (before any test) wrote it, so a plain read races with nothing.
        let entry = unsafe { &*start.add(i) };
        let code = (&raw const entry.code as usize).wrapping_add_signed(entry.code as isize);
        let key = (&raw const entry.key as usize).wrapping_add_signed(entry.key) & !3;
        (code, key)
    })
}

#[cfg(CONFIG_MEM_ALLOC_PROFILING_RUST)]
kunit_suite!(
    jump_label_suite,
    "alloctag_jump_label",
    [
        key_initially_true_read_inline,
        key_initially_false_read_inline,
        allocator_gate_reads_the_tag_key,
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
