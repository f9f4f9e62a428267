// SPDX-License-Identifier: GPL-2.0

//! Naming a dynamic tag: its file from the `Location`, its function from the first frame of the
//! stack that is the caller's, demangled.
//!
//! C header: [`include/linux/kallsyms.h`](srctree/include/linux/kallsyms.h)

use super::{LockGuard, FILE_LEN, FUNCTION_LEN};
#[cfg(CONFIG_ALLOCTAG_KUNIT_TEST)]
use core::sync::atomic::{AtomicBool, Ordering};
use core::{cell::UnsafeCell, ffi::c_void};
use kernel::bindings;

/// Return addresses looked at to find the function: a guessing unwinder
/// (`CONFIG_UNWINDER_GUESS`) also reports the stale text addresses left on the stack, many more
/// than the frames.
const STACK_DEPTH: usize = 256;
/// `KSYM_NAME_LEN`.
const KSYM_NAME_LEN: usize = 512;
/// The function's name where kallsyms does not find it (no `CONFIG_STACKTRACE` or
/// `CONFIG_KALLSYMS`, or no frame outside the allocation path): `func:unknown`.
const UNKNOWN_FUNCTION: &[u8] = b"unknown";

/// The buffers of [`find_function`], used under the makers' lock: static, since a stack
/// trace deep enough for guessing unwinders would take too much of the allocating task's stack.
struct Buffers {
    symbol: UnsafeCell<[u8; KSYM_NAME_LEN]>,
    entries: UnsafeCell<[usize; STACK_DEPTH]>,
}
// SAFETY: Only used under the makers' lock (`bindings::alloctag_dynamic_lock()`), which is global.
unsafe impl Sync for Buffers {}
static BUFFERS: Buffers = Buffers {
    symbol: UnsafeCell::new([0; KSYM_NAME_LEN]),
    entries: UnsafeCell::new([0; STACK_DEPTH]),
};

/// Copies `file` into `out`, NUL-terminated, keeping its end when it is too long: the file's
/// name says more than its first directories.
pub(super) fn copy_file(out: &mut [u8; FILE_LEN], file: &str) {
    let bytes = file.as_bytes();
    let skip = bytes.len().saturating_sub(FILE_LEN - 1);
    let kept = &bytes[skip..];
    out[..kept.len()].copy_from_slice(kept);
    out[kept.len()] = 0;
    // `/proc/allocinfo` shows the file as one field.
    for c in &mut out[..kept.len()] {
        if *c == b' ' || *c == 0 {
            *c = b'_';
        }
    }
}

/// Whether a tag was named with interrupts off since the tests last cleared it: making a tag
/// must leave interrupts as its caller had them.
#[cfg(CONFIG_ALLOCTAG_KUNIT_TEST)]
pub(crate) static NAMED_WITH_IRQS_OFF: AtomicBool = AtomicBool::new(false);

/// Symbols of the allocation path: the kernel crate's allocating modules (Rust v0 mangled
/// paths) and this file. The function of a call site is the first frame on the stack that is
/// none of them.
const PATH_SYMBOLS: &[&[u8]] = &[
    b"alloctag_rust_charged",
    b"alloctag_dynamic_tag",
    b"alloctag_stack",
    b"8alloctag9alloc_tag7dynamic",
    b"6kernel5alloc",
    b"6kernel9alloc_tag",
    b"6kernel4sync3arc",
    b"6kernel3str",
    b"6kernel4init",
    b"6kernel4page",
];

/// Returns whether `needle` occurs in `haystack`.
fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

/// Writes the name of the function that called the allocating API into `out`, NUL-terminated,
/// or [`UNKNOWN_FUNCTION`]. Under the makers' lock (`_lock`), which guards [`BUFFERS`].
///
/// The function is the first frame that is a Rust function (a v0 symbol: a `Location` is only
/// ever in Rust code) of `module`, the call site's module (null for vmlinux), and not on the
/// allocation path. The checks matter where the unwinder guesses (`CONFIG_UNWINDER_GUESS`
/// reports every text address left on the stack, stale ones of earlier calls included).
pub(super) fn find_function(
    _lock: &LockGuard,
    out: &mut [u8; FUNCTION_LEN],
    module: *mut bindings::module,
) {
    #[cfg(CONFIG_ALLOCTAG_KUNIT_TEST)]
    // SAFETY: Reading the interrupt state has no precondition.
    NAMED_WITH_IRQS_OFF.fetch_or(
        unsafe { bindings::alloctag_irqs_disabled() },
        Ordering::Relaxed,
    );
    // SAFETY: The makers' lock is held (`_lock`), and it guards `BUFFERS`: no other reference
    // to them exists.
    let (entries, buf) = unsafe { (&mut *BUFFERS.entries.get(), &mut *BUFFERS.symbol.get()) };
    // SAFETY: `entries` has room for `STACK_DEPTH` addresses.
    let n = unsafe { bindings::alloctag_stack(entries.as_mut_ptr(), STACK_DEPTH as u32) } as usize;
    for &addr in &entries[..n.min(STACK_DEPTH)] {
        let mut no_name = [0u8; 1];
        // SAFETY: `no_name` has room for the 1 byte given.
        let frame_module = unsafe {
            bindings::alloctag_module_of(addr as *const c_void, no_name.as_mut_ptr().cast(), 1)
        };
        if frame_module != module {
            continue;
        }
        // SAFETY: `buf` has `KSYM_NAME_LEN` bytes.
        let name = unsafe { bindings::alloctag_symbol(addr, buf.as_mut_ptr().cast()) };
        if name.is_null() {
            continue;
        }
        let len = buf.iter().position(|&c| c == 0).unwrap_or(0);
        let symbol = &buf[..len];
        if !symbol.starts_with(b"_R") || PATH_SYMBOLS.iter().any(|p| contains(symbol, p)) {
            continue;
        }
        if !crate::alloc_tag::demangle::demangle(symbol, out) {
            copy_name(out, symbol);
        }
        return;
    }
    copy_name(out, UNKNOWN_FUNCTION);
}

/// Copies `name` into `out`, NUL-terminated and cut to fit.
fn copy_name(out: &mut [u8; FUNCTION_LEN], name: &[u8]) {
    let len = name.len().min(FUNCTION_LEN - 1);
    out[..len].copy_from_slice(&name[..len]);
    out[len] = 0;
}
