// SPDX-License-Identifier: GPL-2.0

//! Static keys tested inline.
//!
//! C header: [`include/linux/jump_label.h`](srctree/include/linux/jump_label.h)
//!
//! 6.12's kernel crate has no static branch (mainline added `static_branch_unlikely!` in 6.13),
//! and `static_branch_*()` are C macros, so a Rust path that must cost nothing while a key is off
//! emits the jump-label entry itself: a 5-byte (x86_64) or 4-byte (arm64) no-op, and a
//! `struct jump_entry` in `__jump_table` that tells the kernel where to patch in a jump when the
//! key's state changes, as `arch_static_branch()` in `arch/*/include/asm/jump_label.h` does.
//! The module loader registers the entries of module code as it does C's.
//!
//! Where no such entry can be emitted (another architecture, or `CONFIG_JUMP_LABEL=n`),
//! [`static_branch_maybe!`] reads the key's count through an out-of-line C function instead.

/// Returns whether the static key `$key` is enabled, as C's `static_branch_maybe()` does.
///
/// `$key` is the path of a `struct static_key_true` or `struct static_key_false` that C defines
/// with `DEFINE_STATIC_KEY_MAYBE($init, ...)`; `$init` (a `bool` constant) must be its initial
/// state, `true` for `static_key_true`. `$key_ty` names that type, so that a wrong `$init`
/// fails the build.
///
/// The entry carries `$init` as its branch bit, so that a no-op is right for the key's initial
/// state in both cases: the kernel patches a jump in exactly while the key's state differs from
/// `$init` (`jump_label_type()` is `enabled ^ branch`), and the code then jumps to the label
/// that reports "not `$init`". This is how C's `static_branch_likely()` (on a `true` key) and
/// `static_branch_unlikely()` (on a `false` key) lay out their code: the no-op leads to the
/// path the key starts on.
#[macro_export]
macro_rules! static_branch_maybe {
    ($init:expr, $key:path, $key_ty:ty) => {{
        // Fails to compile when `$key_ty` is not `$key`'s type.
        // SAFETY: Only the address is taken; nothing is read. (Older compilers ask `unsafe` for
        // the address of an extern static, newer ones do not.)
        #[allow(unused_unsafe)]
        let _: *const $key_ty = unsafe { ::core::ptr::addr_of!($key) };
        const _: () = assert!(
            ::core::mem::size_of::<$key_ty>()
                == ::core::mem::size_of::<$crate::bindings::static_key>()
        );
        $crate::arch_static_branch!($init, $key) != $init
    }};
}
pub use static_branch_maybe;

/// Returns whether the code at the entry jumps: `true` exactly while the key's state is not
/// `$init`.
#[cfg(all(CONFIG_JUMP_LABEL, CONFIG_ALLOCTAG_RUST_ASM_GOTO, CONFIG_X86_64))]
#[doc(hidden)]
#[macro_export]
macro_rules! arch_static_branch {
    ($init:expr, $key:path) => {'jl: {
        // The entry is a `struct jump_entry` with relative offsets, 8-byte aligned (x86_64's
        // `JUMP_TABLE_ENTRY`); `BYTES_NOP5` is what `__jump_label_patch()` expects while the
        // key is in its initial state.
        // SAFETY: The entry names this instruction, the label and the static key; the asm
        // touches no register, memory or flag.
        unsafe {
            ::core::arch::asm!(
                "1: .byte 0x0f, 0x1f, 0x44, 0x00, 0x00",
                ".pushsection __jump_table, \"aw\"",
                ".balign 8",
                ".long 1b - .",
                ".long {l_yes} - .",
                ".quad {key} + {branch} - .",
                ".popsection",
                key = sym $key,
                branch = const $init as u8,
                l_yes = label { break 'jl true; },
                options(att_syntax, nostack, preserves_flags),
            );
        }
        false
    }};
}

/// As for x86_64.
#[cfg(all(CONFIG_JUMP_LABEL, CONFIG_ALLOCTAG_RUST_ASM_GOTO, CONFIG_ARM64))]
#[doc(hidden)]
#[macro_export]
macro_rules! arch_static_branch {
    ($init:expr, $key:path) => {'jl: {
        // As on x86_64, with arm64's `JUMP_TABLE_ENTRY` and the `nop` that
        // `aarch64_insn_gen_nop()` patches back in.
        // SAFETY: As on x86_64.
        unsafe {
            ::core::arch::asm!(
                "1: nop",
                ".pushsection __jump_table, \"aw\"",
                ".align 3",
                ".long 1b - ., {l_yes} - .",
                ".quad {key} + {branch} - .",
                ".popsection",
                key = sym $key,
                branch = const $init as u8,
                l_yes = label { break 'jl true; },
                options(nostack, preserves_flags),
            );
        }
        false
    }};
}

/// No jump-label entry here (no jump labels, another architecture, or a rustc before 1.87,
/// whose `asm!` has no stable label operand): reads the key's state.
#[cfg(not(all(
    CONFIG_JUMP_LABEL,
    CONFIG_ALLOCTAG_RUST_ASM_GOTO,
    any(CONFIG_X86_64, CONFIG_ARM64)
)))]
#[doc(hidden)]
#[macro_export]
macro_rules! arch_static_branch {
    ($init:expr, $key:path) => {{
        let key: *mut $crate::bindings::static_key = ::core::ptr::addr_of_mut!($key).cast();
        // SAFETY: `$key` is a `struct static_key_{true,false}`, whose first field is its
        // `struct static_key`, whose first field is the `atomic_t` count that C's
        // `static_key_count()` reads atomically; the key is static.
        let count = unsafe {
            ::core::sync::atomic::AtomicI32::from_ptr(::core::ptr::addr_of_mut!(
                (*key).enabled.counter
            ))
        };
        (count.load(::core::sync::atomic::Ordering::Relaxed) > 0) != $init
    }};
}
pub use arch_static_branch;
