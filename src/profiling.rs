// SPDX-License-Identifier: GPL-2.0

//! The profiling switch: `mem_alloc_profiling_key`, the `sysctl.vm.mem_profiling=` boot
//! parameter and the `vm.mem_profiling` sysctl.
//!
//! C headers: [`include/linux/alloc_tag.h`](srctree/include/linux/alloc_tag.h),
//! [`include/linux/init.h`](srctree/include/linux/init.h),
//! [`include/linux/sysctl.h`](srctree/include/linux/sysctl.h)
//!
//! Profiling is *supported* unless booted with `never` (or built with it off by default and not
//! turned on at boot): then page_ext reserves no tag space and it can never be turned on.
//! *Enabled* is the static key the allocator hooks test.

use crate::profiling_key::{enabled, set_enabled};
use core::{
    ffi::{c_int, c_void},
    ptr,
    sync::atomic::{AtomicBool, Ordering},
};
use kernel::{bindings, c_str, prelude::*, str::CStr};

/// Whether profiling can be turned on; see the module documentation.
static SUPPORTED: AtomicBool = AtomicBool::new(cfg!(CONFIG_MEM_ALLOC_PROFILING_ENABLED_BY_DEFAULT));

/// Returns whether profiling can be turned on.
pub(crate) fn supported() -> bool {
    SUPPORTED.load(Ordering::Relaxed)
}

/// Whether profiling is off for good; mm/slub.c asks at boot, after the early parameters.
#[no_mangle]
pub(crate) extern "C" fn mem_alloc_profiling_permanently_disabled() -> bool {
    !supported()
}

/// Whether page_ext must keep a tag reference per page; asked once, at boot.
#[no_mangle]
pub(crate) extern "C" fn alloctag_page_ext_needed() -> bool {
    supported()
}

/// A value of `sysctl.vm.mem_profiling=`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BootValue {
    /// `0`: supported, off.
    Off,
    /// `1`: supported, on.
    On,
    /// `never`: off for good.
    Never,
}

impl BootValue {
    /// Parses a boot value: exactly `0`, `1` or `never`.
    pub(crate) fn parse(value: &[u8]) -> Option<Self> {
        match value {
            b"0" => Some(Self::Off),
            b"1" => Some(Self::On),
            b"never" => Some(Self::Never),
            _ => None,
        }
    }
}

/// Parses a value written to the sysctl: `0` or `1`, optionally followed by a newline.
pub(crate) fn parse_sysctl_value(input: &[u8]) -> Option<bool> {
    match input {
        b"0" | b"0\n" => Some(false),
        b"1" | b"1\n" => Some(true),
        _ => None,
    }
}

/// Handles `sysctl.vm.mem_profiling=`; runs while the kernel parses the early parameters.
///
/// # Safety
///
/// `value` must be null or a NUL-terminated string.
unsafe extern "C" fn setup_boot_parameter(value: *mut u8) -> c_int {
    let bytes = if value.is_null() {
        &b""[..]
    } else {
        // SAFETY: The caller passes a NUL-terminated string.
        unsafe { CStr::from_char_ptr(value) }.as_bytes()
    };
    let Some(parsed) = BootValue::parse(bytes) else {
        pr_err!(
            "alloctag: invalid sysctl.vm.mem_profiling={:?}, expected 0, 1 or never; \
             keeping the default\n",
            core::str::from_utf8(bytes).unwrap_or("(not UTF-8)")
        );
        return EINVAL.to_errno();
    };
    SUPPORTED.store(parsed != BootValue::Never, Ordering::Relaxed);
    set_enabled(parsed == BootValue::On);
    0
}

/// An `early_param()`: `struct obs_kernel_param` of include/linux/init.h, in the `.init.setup`
/// section that the early parameter parser walks. The kernel crate's bindings are made for
/// modules, which have no such struct.
#[repr(C)]
struct EarlyParam {
    name: *const u8,
    setup: unsafe extern "C" fn(*mut u8) -> c_int,
    early: c_int,
}

// SAFETY: Only the kernel's parameter parser reads it, at boot.
unsafe impl Sync for EarlyParam {}

#[used]
#[link_section = ".init.setup"]
static BOOT_PARAMETER: EarlyParam = EarlyParam {
    name: c_str!("sysctl.vm.mem_profiling").as_char_ptr(),
    setup: setup_boot_parameter,
    early: 1,
};

/// Handles reads and writes of `/proc/sys/vm/mem_profiling`.
///
/// Reading gives `0` or `1`. Writing takes exactly `0` or `1` (a trailing newline allowed), in
/// one write from offset 0; anything else is `-EINVAL` and changes nothing.
///
/// # Safety
///
/// Called by the sysctl core: `table` is our table, `buffer` holds `*lenp` bytes (the written
/// data, or room for the read), and `lenp` and `ppos` are valid.
unsafe extern "C" fn sysctl_handler(
    table: *const bindings::ctl_table,
    write: c_int,
    buffer: *mut c_void,
    lenp: *mut usize,
    ppos: *mut bindings::loff_t,
) -> c_int {
    if write == 0 {
        let mut value = c_int::from(enabled());
        let tmp = bindings::ctl_table {
            data: (&raw mut value).cast(),
            maxlen: size_of::<c_int>() as c_int,
            // SAFETY: The sysctl core passes our table.
            ..unsafe { *table }
        };
        // SAFETY: `tmp` points to `value`, which outlives the call; the rest is the caller's.
        return unsafe { bindings::proc_dointvec(&tmp, 0, buffer, lenp, ppos) };
    }
    if !supported() {
        return EPERM.to_errno();
    }
    // SAFETY: The caller guarantees that `lenp` and `ppos` are valid.
    let (len, pos) = unsafe { (*lenp, *ppos) };
    if pos != 0 {
        return EINVAL.to_errno();
    }
    // SAFETY: `buffer` holds the `len` bytes written.
    let input = unsafe { core::slice::from_raw_parts(buffer.cast::<u8>(), len) };
    let Some(enable) = parse_sysctl_value(input) else {
        return EINVAL.to_errno();
    };
    set_enabled(enable);
    // SAFETY: As above.
    unsafe { *ppos += len as bindings::loff_t };
    0
}

/// The `vm.mem_profiling` table; its mode is set at registration, before the sysctl core sees
/// it.
static mut SYSCTL_TABLE: [bindings::ctl_table; 1] = [bindings::ctl_table {
    procname: c_str!("mem_profiling").as_char_ptr(),
    data: ptr::null_mut(),
    maxlen: 0,
    mode: 0o644,
    proc_handler: Some(sysctl_handler),
    poll: ptr::null_mut(),
    extra1: ptr::null_mut(),
    extra2: ptr::null_mut(),
}];

/// Registers `/proc/sys/vm/mem_profiling`: 0644, or 0444 when profiling is off for good or
/// built for debugging.
pub(crate) fn register_sysctl() -> Result {
    let read_only = !supported() || cfg!(CONFIG_MEM_ALLOC_PROFILING_DEBUG);
    let table = &raw mut SYSCTL_TABLE;
    // SAFETY: Called once, from the initcall, before the table is registered: nothing else
    // accesses it yet. Afterwards the sysctl core owns it.
    unsafe {
        (*table)[0].mode = if read_only { 0o444 } else { 0o644 };
        let header = bindings::register_sysctl_sz(c_str!("vm").as_char_ptr(), table.cast(), 1);
        if header.is_null() {
            return Err(ENOMEM);
        }
    }
    Ok(())
}
