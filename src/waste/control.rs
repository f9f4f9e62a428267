// SPDX-License-Identifier: GPL-2.0

//! Turning waste accounting on and off: `/sys/kernel/debug/alloctag/waste`, next to capture
//! and fail (0600; writes need `CAP_SYS_ADMIN`): writing `on` or `off` (a trailing newline is
//! fine) turns it on or off, anything else fails with `EINVAL` and changes nothing; reading
//! gives `on` or `off`. And at boot, `alloctag.waste=on` (or `off`, the default); and
//! `alloctag.waste_slots=on`, which `alloctag.waste=on` implies: slots reserved for every
//! object from boot, in page_ext for pages (8 bytes per page) and in every slab's extension
//! vector (4 bytes per object). Without them pages are untracked, and a slab object is tracked
//! only in a slab whose vector was made while the accounting was on.
//!
//! C header: [`include/linux/debugfs.h`](srctree/include/linux/debugfs.h)

use crate::{
    debugfs,
    profiling::EarlyParam,
    seq::{listing_fops, Listing, SeqWriter},
};
use core::{
    ffi::c_int,
    fmt::{self, Write},
    sync::atomic::{AtomicBool, Ordering},
};
use kernel::{c_str, prelude::*, str::CStr};

/// Parses `on` or `off`, with at most one trailing newline.
fn parse(text: &[u8]) -> Result<bool> {
    match text.strip_suffix(b"\n").unwrap_or(text) {
        b"on" => Ok(true),
        b"off" => Ok(false),
        _ => Err(EINVAL),
    }
}

/// Runs one write of the control file.
pub(crate) fn run(text: &[u8]) -> Result {
    let on = parse(text)?;
    super::set(on)?;
    pr_info!("waste: accounting {}\n", if on { "on" } else { "off" });
    if on && !alloctag_waste_slots_reserved() {
        pr_info!(
            "waste: no slots reserved at boot: slab objects are tracked in slabs made from now on, \
             pages not at all (alloctag.waste_slots=on reserves them)\n"
        );
    }
    Ok(())
}

/// The control file's text: its state.
struct State(bool);

impl Listing for State {
    fn len(&self) -> usize {
        1
    }

    fn show(&mut self, _i: usize, w: &mut SeqWriter) -> fmt::Result {
        w.write_str(if self.0 { "on\n" } else { "off\n" })
    }
}

debugfs::command_write!(write, "waste", run);

listing_fops!(
    CONTROL,
    open_control,
    State,
    Ok(State(super::is_on())),
    Some(write)
);

/// Creates `/sys/kernel/debug/alloctag/waste`, and `/proc/allocwaste`.
pub(crate) fn register() -> Result {
    debugfs::create_file(c_str!("waste"), 0o600, &CONTROL);
    super::report::register()
}

/// Whether the boot parameter asked for the accounting.
static AT_BOOT: AtomicBool = AtomicBool::new(false);

/// Whether `alloctag.waste_slots=on` asked for slots.
static SLOTS_AT_BOOT: AtomicBool = AtomicBool::new(false);

/// Parses an `on` or `off` boot parameter `name` into `flag`; a bad value is logged and changes
/// nothing.
///
/// # Safety
///
/// `value` is null or a NUL-terminated string.
unsafe fn setup_flag(value: *mut u8, flag: &AtomicBool, name: &str) -> c_int {
    if value.is_null() {
        return EINVAL.to_errno();
    }
    // SAFETY: A non-null value is a NUL-terminated string, as the caller guarantees.
    let value = unsafe { CStr::from_char_ptr(value) };
    match parse(value.as_bytes()) {
        Ok(on) => {
            flag.store(on, Ordering::Relaxed);
            0
        }
        Err(e) => {
            pr_err!("{name}: invalid value, expected on or off; keeping off\n");
            e.to_errno()
        }
    }
}

/// Parses `alloctag.waste=`.
///
/// # Safety
///
/// Called by the kernel's parameter parser with null or a NUL-terminated string.
unsafe extern "C" fn setup(value: *mut u8) -> c_int {
    // SAFETY: As the caller guarantees.
    unsafe { setup_flag(value, &AT_BOOT, "alloctag.waste") }
}

#[used]
#[link_section = ".init.setup"]
static PARAMETER: EarlyParam = EarlyParam::new(c_str!("alloctag.waste"), setup);

/// Parses `alloctag.waste_slots=`.
///
/// # Safety
///
/// Called by the kernel's parameter parser with null or a NUL-terminated string.
unsafe extern "C" fn setup_slots(value: *mut u8) -> c_int {
    // SAFETY: As the caller guarantees.
    unsafe { setup_flag(value, &SLOTS_AT_BOOT, "alloctag.waste_slots") }
}

#[used]
#[link_section = ".init.setup"]
static SLOTS_PARAMETER: EarlyParam = EarlyParam::new(c_str!("alloctag.waste_slots"), setup_slots);

/// Whether every object gets a slot for the accounting (src/glue_waste_slab.c,
/// src/glue_waste_pages.c): page_ext asks once, at boot, and each slab vector as it is made, both
/// after the early parameters.
#[no_mangle]
pub(crate) extern "C" fn alloctag_waste_slots_reserved() -> bool {
    crate::keys::supported()
        && (SLOTS_AT_BOOT.load(Ordering::Relaxed) || AT_BOOT.load(Ordering::Relaxed))
}
c_declared!(alloctag_waste_slots_reserved);

/// Turns the accounting on if the boot parameter asked for it; once the registry is up.
pub(crate) fn start_at_boot() {
    if !AT_BOOT.load(Ordering::Relaxed) {
        return;
    }
    match super::set(true) {
        Ok(()) => pr_info!("waste: accounting on (alloctag.waste=on)\n"),
        Err(e) => pr_err!("waste: alloctag.waste=on failed: {e:?}\n"),
    }
}
