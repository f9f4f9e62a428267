// SPDX-License-Identifier: GPL-2.0

//! Capture selections made at boot: `alloctag.capture=SELECTION[;SELECTION...]`, each
//! `SELECTION` the selectors the control file's `add` takes, quoted on the command line when
//! there are several (`alloctag.capture="module:m func:f;module:n"`). They are put in force when
//! the capture files are made (a `device_initcall`, before user space loads any module), so that a
//! module's tags are marked as it loads: the allocations of a driver's probe at boot can be
//! captured.
//!
//! Given several times, the values count as one, joined by `;`, in the order given: a bootloader
//! that adds one to another's gets both. All of them or none: a value that does not parse, one
//! given without a value, values longer than 512 bytes together, more selections than fit, a
//! selection given twice (in one value or two), no control file (debugfs off), or lockdown (which
//! refuses the control file's writes) selects nothing, whatever the other values hold, and says
//! why in the kernel log, once. An empty value adds nothing.
//!
//! C header: [`include/linux/init.h`](srctree/include/linux/init.h)

use super::MAX_SELECTIONS;
use crate::{codetag::Selection, profiling::EarlyParam};
use core::{
    ffi::c_int,
    sync::atomic::{AtomicU8, AtomicUsize, Ordering},
};
use kernel::{
    alloc::{flags::GFP_KERNEL, KVec},
    bindings, c_str,
    prelude::*,
    str::CStr,
};

/// The longest text kept: the values together, with the `;` between them.
const MAX_TEXT: usize = 512;

/// The values, joined by `;`, copied at boot: the copy of the command line that the early parser
/// hands over is init data. Atomics, not a mutable static: the boot CPU writes them before
/// `apply()` reads.
static TEXT: [AtomicU8; MAX_TEXT] = [const { AtomicU8::new(0) }; MAX_TEXT];

/// The text's length.
static LEN: AtomicUsize = AtomicUsize::new(0);

/// Why the parameter was refused before it was parsed: the first reason seen, for good, so that
/// no later value can take a refusal back.
static REFUSED: AtomicU8 = AtomicU8::new(NOT_REFUSED);
const NOT_REFUSED: u8 = 0;
const NO_VALUE: u8 = 1;
const TOO_LONG: u8 = 2;

/// Refuses the parameter for `reason`, unless it was refused already.
fn refuse(reason: u8) -> c_int {
    // A failed exchange means an earlier reason stays: either way, it is refused.
    let _ = REFUSED.compare_exchange(NOT_REFUSED, reason, Ordering::Relaxed, Ordering::Relaxed);
    // The early parser then logs "Malformed early option" for this value.
    EINVAL.to_errno()
}

/// Parses `alloctag.capture=`: adds the value to the text for [`apply`], which logs the outcome.
///
/// # Safety
///
/// Called by the kernel's parameter parser with null or a NUL-terminated string.
unsafe extern "C" fn setup(value: *mut u8) -> c_int {
    if value.is_null() {
        return refuse(NO_VALUE);
    }
    // SAFETY: A non-null value is a NUL-terminated string, as the caller guarantees.
    let value = unsafe { CStr::from_char_ptr(value) }.as_bytes();
    if value.is_empty() || REFUSED.load(Ordering::Relaxed) != NOT_REFUSED {
        return 0;
    }
    let len = LEN.load(Ordering::Relaxed);
    // After another value, a `;` first.
    let separator: &[u8] = if len == 0 { b"" } else { b";" };
    let Some(slots) = (separator.len() + value.len())
        .checked_add(len)
        .and_then(|end| TEXT.get(len..end))
    else {
        return refuse(TOO_LONG);
    };
    for (slot, &byte) in slots.iter().zip(separator) {
        slot.store(byte, Ordering::Relaxed);
    }
    for (slot, &byte) in slots.iter().skip(separator.len()).zip(value) {
        slot.store(byte, Ordering::Relaxed);
    }
    LEN.store(len + slots.len(), Ordering::Relaxed);
    0
}

#[used]
#[link_section = ".init.setup"]
static PARAMETER: EarlyParam = EarlyParam::new(c_str!("alloctag.capture"), setup);

/// Puts the boot's selections in force, all or none, and logs the outcome. Process context,
/// once the capture files are made; `control_file` says whether the control file was.
pub(crate) fn apply(control_file: bool) {
    // One line, whichever value was refused and however many were given.
    match REFUSED.load(Ordering::Relaxed) {
        NOT_REFUSED => {}
        NO_VALUE => {
            pr_err!(
                "capture: alloctag.capture: refused (error {}); nothing selected: given without a value\n",
                EINVAL.to_errno()
            );
            return;
        }
        _ => {
            pr_err!(
                "capture: alloctag.capture: refused (error {}); nothing selected: values longer than {MAX_TEXT} bytes together\n",
                EINVAL.to_errno()
            );
            return;
        }
    }
    let len = LEN.load(Ordering::Relaxed);
    if len == 0 {
        return;
    }
    if !control_file {
        pr_err!("capture: alloctag.capture: no control file (debugfs); nothing selected\n");
        return;
    }
    match select(len) {
        Ok(n) => pr_info!("capture: alloctag.capture: {n} selections in force\n"),
        Err(e) => pr_err!(
            "capture: alloctag.capture: refused (error {}); nothing selected\n",
            e.to_errno()
        ),
    }
}

/// Parses every selection of the text's first `len` bytes, then adds them; takes back those
/// added if one is refused. Returns how many are in force.
fn select(len: usize) -> Result<usize> {
    // SAFETY: Asking lockdown has no precondition.
    kernel::error::to_result(unsafe { bindings::alloctag_capture_locked_down() })?;
    let mut text = KVec::with_capacity(len, GFP_KERNEL)?;
    for byte in &TEXT[..len] {
        text.push(byte.load(Ordering::Relaxed), GFP_KERNEL)?;
    }
    let mut selections = KVec::new();
    for part in text.split(|&c| c == b';') {
        if selections.len() == MAX_SELECTIONS {
            return Err(ENOSPC);
        }
        let words = part
            .split(|c| c.is_ascii_whitespace())
            .filter(|w| !w.is_empty());
        selections.push(Selection::parse(words)?, GFP_KERNEL)?;
    }
    let mut ids = KVec::with_capacity(selections.len(), GFP_KERNEL)?;
    let mut refused = None;
    for selection in selections {
        match super::add(selection) {
            // With the room reserved above, the push cannot fail.
            Ok((id, _)) => {
                if let Err(e) = ids.push(id, GFP_KERNEL) {
                    // Just added: it is there to remove.
                    let _ = super::remove(id);
                    refused = Some(e.into());
                    break;
                }
            }
            Err(e) => {
                refused = Some(e);
                break;
            }
        }
    }
    if let Some(e) = refused {
        for &id in ids.iter() {
            // Each was just added: it is there to remove.
            let _ = super::remove(id);
        }
        return Err(e);
    }
    Ok(ids.len())
}
