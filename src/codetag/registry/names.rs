// SPDX-License-Identifier: GPL-2.0

//! The names that a module's tags keep once the module is gone: its own name, and copies of the
//! file, function and module names that its listed tags point to, which were in the module's
//! read-only data.
//!
//! C header: [`include/linux/codetag.h`](srctree/include/linux/codetag.h)

use super::super::Codetag;
use core::{mem::size_of, ptr};
use kernel::{alloc::flags::GFP_KERNEL, bindings, c_str, prelude::*, str::CStr};

/// `MODULE_NAME_LEN` (include/linux/module.h), which bindgen does not see; a longer name
/// would be cut, never overrun.
const MODULE_NAME_LEN: usize = 64 - size_of::<usize>();

/// What a dropped tag's names become: it is no longer listed, and its strings went.
const GONE: &CStr = c_str!("(gone)");

/// Returns a name for `module` in messages.
///
/// # Safety
///
/// `module` must be null or point to a module that lives for `'a`.
pub(crate) unsafe fn name<'a>(module: *mut bindings::module) -> &'a CStr {
    if module.is_null() {
        return c_str!("(built-in)");
    }
    // SAFETY: The caller guarantees that `module` lives for `'a`; its name is a NUL-terminated
    // array.
    unsafe { CStr::from_char_ptr((*module).name.as_ptr()) }
}

/// A module's name, copied.
#[derive(Clone, Copy)]
pub(super) struct ModuleName([u8; MODULE_NAME_LEN]);

impl ModuleName {
    /// The name of the module `module` (null for vmlinux).
    ///
    /// # Safety
    ///
    /// `module` must be null or point to a module alive across the call.
    pub(super) unsafe fn of(module: *mut bindings::module) -> Self {
        let mut copy = [0u8; MODULE_NAME_LEN];
        // SAFETY: The caller guarantees `module`.
        let from = unsafe { name(module) }.as_bytes();
        let len = from.len().min(MODULE_NAME_LEN - 1);
        copy[..len].copy_from_slice(&from[..len]);
        Self(copy)
    }

    /// Returns the name.
    pub(super) fn as_cstr(&self) -> &CStr {
        let nul = self
            .0
            .iter()
            .position(|&c| c == 0)
            .unwrap_or(MODULE_NAME_LEN - 1);
        CStr::from_bytes_with_nul(&self.0[..=nul]).unwrap_or(GONE)
    }
}

/// A block of names copied from an unloaded module's tags, which those tags point to.
///
/// # Invariants
///
/// Null, or a `KVec<u8>`'s buffer of capacity `cap`, taken apart.
#[derive(Clone, Copy)]
pub(super) struct Names {
    ptr: *mut u8,
    cap: usize,
}

impl Names {
    /// No block.
    pub(super) const NONE: Self = Self {
        ptr: ptr::null_mut(),
        cap: 0,
    };

    /// Returns the bytes the block takes.
    #[cfg(any(CONFIG_DEBUG_FS, CONFIG_ALLOCTAG_KUNIT_TEST))]
    pub(super) fn len(&self) -> usize {
        self.cap
    }

    /// Copies the names of `tags` that are listed (not dropped) into one block and points the
    /// tags at the copies; points dropped tags at a static name. If the block cannot be
    /// allocated, changes nothing.
    ///
    /// # Safety
    ///
    /// The registry must be locked for writing, and the tags' module going (see [`Codetag`]'s
    /// invariant: then no reader of their names runs).
    pub(super) unsafe fn copy<'a>(tags: impl Iterator<Item = &'a Codetag> + Clone) -> Result<Self> {
        // One copy of a name that the tag before had too: a file's tags share its name, a
        // function's tags its name, and all a module's.
        let mut len = 0usize;
        let mut last = [ptr::null(); 3];
        for ct in tags.clone().filter(|ct| !ct.dropped()) {
            for (i, name) in ct.names().into_iter().enumerate() {
                if let Some(name) = name {
                    if name.as_char_ptr() != last[i] {
                        len = len.checked_add(name.len_with_nul()).ok_or(ENOMEM)?;
                        last[i] = name.as_char_ptr();
                    }
                }
            }
        }
        if len == 0 {
            // Nothing to copy (a module unloaded unused: every tag dropped); the dropped tags'
            // names would point into the module, which goes.
            for ct in tags.filter(|ct| ct.dropped()) {
                // SAFETY: The caller guarantees the lock; `GONE` is static.
                unsafe { ct.rehome([Some(GONE.as_char_ptr().cast()); 3]) };
            }
            return Ok(Self::NONE);
        }
        let mut block = KVec::<u8>::with_capacity(len, GFP_KERNEL)?;
        // Filled within its capacity, so its buffer stays where it is.
        let base = block.as_ptr();
        let mut last = [(ptr::null(), ptr::null()); 3];
        for ct in tags {
            if ct.dropped() {
                // SAFETY: The caller guarantees the lock; `GONE` is static.
                unsafe { ct.rehome([Some(GONE.as_char_ptr().cast()); 3]) };
                continue;
            }
            let mut to = [None; 3];
            for (i, name) in ct.names().into_iter().enumerate() {
                let Some(name) = name else { continue };
                if name.as_char_ptr() != last[i].0 {
                    let at = block.len();
                    if block.len() + name.len_with_nul() > len
                        || block
                            .extend_from_slice(name.as_bytes_with_nul(), GFP_KERNEL)
                            .is_err()
                    {
                        // Never within the capacity counted above. Tags may already point
                        // into the block: it stays, for good.
                        core::mem::forget(block);
                        return Err(ENOMEM);
                    }
                    last[i] = (name.as_char_ptr(), base.wrapping_add(at));
                }
                to[i] = Some(last[i].1);
            }
            // SAFETY: The caller guarantees the lock; the copies are NUL-terminated and live
            // until the range goes with its tags.
            unsafe { ct.rehome(to) };
        }
        let (ptr, _, cap) = block.into_raw_parts();
        // INVARIANT: A `KVec<u8>`'s buffer.
        Ok(Self { ptr, cap })
    }

    /// Frees the block.
    ///
    /// # Safety
    ///
    /// No tag that points into it may be read any more.
    pub(super) unsafe fn free(self) {
        if !self.ptr.is_null() {
            // SAFETY: By the invariant, a `KVec<u8>`'s buffer of capacity `cap`; its length
            // does not matter for bytes.
            drop(unsafe { KVec::from_raw_parts(self.ptr, 0, self.cap) });
        }
    }
}
