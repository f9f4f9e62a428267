// SPDX-License-Identifier: GPL-2.0

//! The filters of the allocinfo ioctl, as mainline's `matches_filter()` evaluates them.
//!
//! C header: [`include/uapi/linux/alloc_tag.h`](srctree/include/uapi/linux/alloc_tag.h)
//!
//! Names are compared as the ioctl reports them: trimmed to their last
//! `ALLOCINFO_STR_SIZE - 1` bytes, exactly (no prefix or pattern match). Built-in tags have
//! no module and match only an empty module name. Sizes are an inclusive range of unsigned
//! bytes. The cheap tests run first and the per-CPU counters are summed only for a tag that
//! passed them and needs a size test.

use crate::{
    alloc_tag::{AllocTag, Counters},
    codetag::Codetag,
};
use kernel::{bindings, prelude::*};

/// `ALLOCINFO_STR_SIZE`: names and filter strings, with their NUL.
pub(crate) const STR_SIZE: usize = 64;

/// `ALLOCINFO_FILTER_MASK_MODNAME` and the others, as the header numbers them.
pub(crate) const MASK_MODNAME: u64 = 1 << 0;
pub(crate) const MASK_FUNCTION: u64 = 1 << 1;
pub(crate) const MASK_FILENAME: u64 = 1 << 2;
pub(crate) const MASK_LINENO: u64 = 1 << 3;
pub(crate) const MASK_INACCURATE: u64 = 1 << 4;
pub(crate) const MASK_MIN_SIZE: u64 = 1 << 5;
pub(crate) const MASK_MAX_SIZE: u64 = 1 << 6;
/// alloctag's: only the tags of unloaded modules, kept for their live allocations.
pub(crate) const MASK_UNLOADED: u64 = 1 << 7;
/// `ALLOCINFO_FILTER_MASKS`: every known bit.
pub(crate) const MASKS: u64 = (1 << 8) - 1;

/// Returns the last `STR_SIZE - 1` bytes of `name`, as mainline's `allocinfo_str()`.
pub(crate) fn trimmed(name: &[u8]) -> &[u8] {
    &name[name.len().saturating_sub(STR_SIZE - 1)..]
}

/// Copies `name`, trimmed, into `dest` and pads it with NULs, as `strscpy_pad()` does.
pub(crate) fn copy_name(dest: &mut [u8; STR_SIZE], name: &[u8]) {
    let name = trimmed(name);
    for (i, d) in dest.iter_mut().enumerate() {
        *d = name.get(i).copied().unwrap_or(0);
    }
}

/// Returns the length of the NUL-terminated `field`, at most `STR_SIZE`.
fn field_len(field: &[u8; STR_SIZE]) -> usize {
    field.iter().position(|&c| c == 0).unwrap_or(STR_SIZE)
}

/// Returns whether `name`, trimmed, equals `field[..len]`, the filter string without its NUL:
/// `strncmp(allocinfo_str(name), field, STR_SIZE) == 0`.
fn name_matches(name: &[u8], field: &[u8; STR_SIZE], len: usize) -> bool {
    let name = trimmed(name);
    name.len() == len && field.get(..len) == Some(name)
}

/// Returns whether a tag's name matches the filter string `field[..len]`. A string shorter
/// than a trimmed name can only equal an untrimmed name: `is` compares it in place, without
/// measuring the name first; otherwise the name, from `name`, is trimmed and compared.
fn text_matches<'a>(
    field: &[u8; STR_SIZE],
    len: usize,
    is: impl FnOnce(&[u8]) -> bool,
    name: impl FnOnce() -> &'a [u8],
) -> bool {
    match field.get(..len) {
        Some(text) if len < STR_SIZE - 1 => is(text),
        _ => name_matches(name(), field, len),
    }
}

/// A filter of the ioctl, checked.
///
/// # Invariants
///
/// `raw.mask` has no unknown bit, and `min_size <= max_size` when both are used.
pub(crate) struct Filter {
    raw: bindings::allocinfo_filter,
    /// The lengths of the module, function and file strings, measured once.
    lens: [usize; 3],
}

impl Filter {
    /// A filter that every tag matches.
    pub(crate) fn all() -> Self {
        // INVARIANT: No bit is set.
        Self {
            // SAFETY: All-zero is a valid `allocinfo_filter`: integers and byte arrays.
            raw: unsafe { core::mem::zeroed() },
            lens: [0; 3],
        }
    }

    /// Checks a filter from user space: `EINVAL` for an unknown mask bit or a minimum size
    /// above the maximum, as mainline.
    pub(crate) fn new(raw: &bindings::allocinfo_filter) -> Result<Self> {
        let both = MASK_MIN_SIZE | MASK_MAX_SIZE;
        if raw.mask & !MASKS != 0 || raw.mask & both == both && raw.min_size > raw.max_size {
            return Err(EINVAL);
        }
        let f = &raw.fields;
        // INVARIANT: Checked above.
        Ok(Self {
            raw: *raw,
            lens: [
                field_len(&f.modname),
                field_len(&f.function),
                field_len(&f.filename),
            ],
        })
    }

    /// Returns whether the tag matches the filter. `counters` holds the tag's counters once
    /// they were summed (only for a size test), so that the caller need not sum them again.
    pub(crate) fn matches(&self, tag: &AllocTag, counters: &mut Option<Counters>) -> bool {
        let (mask, f) = (self.raw.mask, &self.raw);
        if mask == 0 {
            return true;
        }
        let ct: &Codetag = tag.codetag();
        if mask & MASK_MODNAME != 0 {
            let matched = match ct.modname() {
                Some(module) => name_matches(module.as_bytes(), &f.fields.modname, self.lens[0]),
                None => f.fields.modname[0] == 0,
            };
            if !matched {
                return false;
            }
        }
        if mask & MASK_FUNCTION != 0
            && !text_matches(
                &f.fields.function,
                self.lens[1],
                |t| ct.function_is(t),
                || ct.function().as_bytes(),
            )
        {
            return false;
        }
        if mask & MASK_FILENAME != 0
            && !text_matches(
                &f.fields.filename,
                self.lens[2],
                |t| ct.filename_is(t),
                || ct.filename().as_bytes(),
            )
        {
            return false;
        }
        if mask & MASK_LINENO != 0 && u64::from(ct.lineno()) != f.fields.lineno {
            return false;
        }
        if mask & MASK_INACCURATE != 0 && ct.accurate() == (f.inaccurate != 0) {
            return false;
        }
        if mask & MASK_UNLOADED != 0 && !ct.unloaded() {
            return false;
        }
        if mask & (MASK_MIN_SIZE | MASK_MAX_SIZE) != 0 {
            // Mainline compares the sum as the unsigned `u64` it is in C.
            let bytes = counters.get_or_insert_with(|| tag.read()).bytes as u64;
            if mask & MASK_MIN_SIZE != 0 && bytes < f.min_size
                || mask & MASK_MAX_SIZE != 0 && bytes > f.max_size
            {
                return false;
            }
        }
        true
    }
}
