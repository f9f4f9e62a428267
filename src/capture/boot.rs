// SPDX-License-Identifier: GPL-2.0

//! Capture selections made at boot: `alloctag.capture=SELECTION[;SELECTION...]`, each
//! `SELECTION` the selectors the control file's `add` takes, quoted on the command line when
//! there are several (`alloctag.capture="module:m func:f;module:n"`). They are put in force when
//! the capture files are made (a `device_initcall`, before user space loads any module), so that a
//! module's tags are marked as it loads: the allocations of a driver's probe at boot can be
//! captured. All of them or none: a
//! value that does not parse, one of more than 512 bytes, more selections than fit, no control
//! file (debugfs off), or lockdown (which refuses the control file's writes) selects nothing, and
//! says why in the kernel log; so does the parameter given without a value, even after one with.
//! An empty value selects nothing.
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

/// The longest value kept.
const MAX_TEXT: usize = 512;

/// The value, copied at boot: the copy of the command line that the early parser hands over is
/// init data. Atomics, not a mutable static: the boot CPU writes them before `apply()` reads.
static TEXT: [AtomicU8; MAX_TEXT] = [const { AtomicU8::new(0) }; MAX_TEXT];

/// The value's length; `REFUSED` for a value that was refused.
static LEN: AtomicUsize = AtomicUsize::new(0);
const REFUSED: usize = usize::MAX;

/// Parses `alloctag.capture=`: keeps the value for [`apply`].
///
/// # Safety
///
/// Called by the kernel's parameter parser with null or a NUL-terminated string.
unsafe extern "C" fn setup(value: *mut u8) -> c_int {
    if value.is_null() {
        pr_err!("alloctag.capture: no value; nothing will be selected\n");
        LEN.store(REFUSED, Ordering::Relaxed);
        return EINVAL.to_errno();
    }
    // SAFETY: A non-null value is a NUL-terminated string, as the caller guarantees.
    let value = unsafe { CStr::from_char_ptr(value) }.as_bytes();
    if value.len() > MAX_TEXT {
        pr_err!("alloctag.capture: longer than {MAX_TEXT} bytes; nothing will be selected\n");
        LEN.store(REFUSED, Ordering::Relaxed);
        return EINVAL.to_errno();
    }
    for (slot, &byte) in TEXT.iter().zip(value) {
        slot.store(byte, Ordering::Relaxed);
    }
    LEN.store(value.len(), Ordering::Relaxed);
    0
}

#[used]
#[link_section = ".init.setup"]
static PARAMETER: EarlyParam = EarlyParam::new(c_str!("alloctag.capture"), setup);

/// Puts the boot's selections in force, all or none, and logs the outcome. Process context,
/// once the capture files are made; `control_file` says whether the control file was.
pub(crate) fn apply(control_file: bool) {
    let len = LEN.load(Ordering::Relaxed);
    if len == 0 || len == REFUSED {
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

/// Parses every selection of the value's first `len` bytes, then adds them; takes back those
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
