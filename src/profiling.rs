// SPDX-License-Identifier: GPL-2.0

//! The profiling switch: `mem_alloc_profiling_key`, the `sysctl.vm.mem_profiling=` boot
//! parameter and the `vm.mem_profiling` sysctl.
//!
//! C headers: [`include/linux/alloc_tag.h`](srctree/include/linux/alloc_tag.h),
//! [`include/linux/init.h`](srctree/include/linux/init.h),
//! [`include/linux/sysctl.h`](srctree/include/linux/sysctl.h)
//!
//! Profiling is *supported* unless booted with `never`: then nothing is ever made for it and it
//! can never be turned on. Built with it off by default, the kernel boots `0`, not `never` as
//! 6.12 does: off holds next to what `never` holds, and it can be turned on. *Enabled* is the static key the
//! allocator hooks test.

use crate::alloc_tag::index::Request;
#[cfg(CONFIG_PROC_SYSCTL)]
use crate::keys::set_profiling_then as set_enabled_then;
use crate::keys::{enabled, set_profiling as set_enabled, set_supported, supported};
use core::ffi::c_int;
#[cfg(CONFIG_PROC_SYSCTL)]
use core::{mem::size_of, ptr};
use kernel::{bindings, c_str, error::to_result, prelude::*, str::CStr};

/// Whether profiling is off for good; mm/slub.c asks at boot, after the early parameters.
#[no_mangle]
pub(crate) extern "C" fn mem_alloc_profiling_permanently_disabled() -> bool {
    !supported()
}

/// A value of `sysctl.vm.mem_profiling=`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BootValue {
    /// Supported, off.
    Off,
    /// Supported, on.
    On,
    /// `never`: off for good.
    Never,
}

impl BootValue {
    /// Parses a boot value as 6.12's C does: anything starting with `never`, or anything that
    /// `kstrtobool()` takes (`1`, `y`, `Y`, `on`, `0`, `n`, `N`, `off`, and what starts with
    /// them: only the first one or two characters count). Anything else, including nothing, is
    /// `EINVAL`.
    pub(crate) fn parse(value: &CStr) -> Result<Self> {
        let bytes = value.as_bytes();
        if bytes.is_empty() {
            return Err(EINVAL);
        }
        if bytes.starts_with(b"never") {
            return Ok(Self::Never);
        }
        let mut enable = false;
        // SAFETY: `value` is NUL-terminated and `enable` is a valid `bool` to write.
        to_result(unsafe { bindings::kstrtobool(value.as_char_ptr(), &mut enable) })?;
        Ok(if enable { Self::On } else { Self::Off })
    }
}

/// Parses a whole value of `sysctl.vm.mem_profiling=`: [`BootValue::parse`]'s, and where page
/// tags go: `,compressed` (page flags, mainline's spelling since 6.13) or `,page_ext`. What
/// 6.12 takes, `1,anything` among it (`kstrtobool()` reads the first characters only), is
/// taken as 6.12 takes it; `never` has no page tags.
pub(crate) fn parse_boot_value(value: &CStr) -> Result<(BootValue, Request)> {
    let parsed = BootValue::parse(value)?;
    let bytes = value.as_bytes();
    let suffix = bytes
        .iter()
        .position(|&c| c == b',')
        .map(|comma| &bytes[comma + 1..]);
    let request = match suffix {
        _ if parsed == BootValue::Never => Request::Default,
        Some(b"compressed") => Request::PageFlags,
        Some(b"page_ext") => Request::PageExt,
        _ => Request::Default,
    };
    Ok((parsed, request))
}

/// Handles `sysctl.vm.mem_profiling=`; runs while the kernel parses the early parameters. A
/// value that [`BootValue::parse`] refuses changes nothing and is logged, with what is taken.
///
/// # Safety
///
/// `value` must be null or a NUL-terminated string.
unsafe extern "C" fn setup_boot_parameter(value: *mut u8) -> c_int {
    let parsed = if value.is_null() {
        Err(EINVAL)
    } else {
        // SAFETY: The caller passes a NUL-terminated string.
        parse_boot_value(unsafe { CStr::from_char_ptr(value) })
    };
    let (parsed, request) = match parsed {
        Ok(parsed) => parsed,
        Err(e) => {
            pr_err!(
                "sysctl.vm.mem_profiling: invalid value, expected never or a boolean \
                 (0, 1, y, n, on, off); keeping {}\n",
                if !supported() {
                    "never"
                } else if enabled() {
                    "1"
                } else {
                    "0"
                }
            );
            return e.to_errno();
        }
    };
    set_supported(parsed != BootValue::Never);
    crate::alloc_tag::index::request(request);
    if enabled() != (parsed == BootValue::On) {
        set_enabled(parsed == BootValue::On);
    }
    0
}

/// An `early_param()`: `struct obs_kernel_param` of include/linux/init.h, in the `.init.setup`
/// section that the early parameter parser walks. The kernel crate's bindings are made for
/// modules, which have no such struct.
#[repr(C)]
pub(crate) struct EarlyParam {
    name: *const u8,
    setup: unsafe extern "C" fn(*mut u8) -> c_int,
    early: c_int,
}

impl EarlyParam {
    /// An early parameter `name`, whose value `setup` parses, returning 0 or an error.
    pub(crate) const fn new(
        name: &'static CStr,
        setup: unsafe extern "C" fn(*mut u8) -> c_int,
    ) -> Self {
        Self {
            name: name.as_char_ptr(),
            setup,
            early: 1,
        }
    }
}

// SAFETY: Only the kernel's parameter parser reads it, at boot.
unsafe impl Sync for EarlyParam {}

#[used]
#[link_section = ".init.setup"]
static BOOT_PARAMETER: EarlyParam =
    EarlyParam::new(c_str!("sysctl.vm.mem_profiling"), setup_boot_parameter);

#[cfg(CONFIG_PROC_SYSCTL)]
const HANDLER: Handler = handle_sysctl;

#[cfg(CONFIG_PROC_SYSCTL)]
type Handler = unsafe extern "C" fn(
    *const bindings::ctl_table,
    c_int,
    *mut core::ffi::c_void,
    *mut usize,
    *mut bindings::loff_t,
) -> c_int;

/// The bounds of a write, as `proc_do_static_key()`'s `SYSCTL_ZERO` and `SYSCTL_ONE`.
#[cfg(CONFIG_PROC_SYSCTL)]
static BOUNDS: [c_int; 2] = [0, 1];

/// Reads as the kernel's `proc_do_static_key()`; writes as it does, but a write changes a key
/// only when it changes the value: one that it refuses (no `CAP_SYS_ADMIN`, checked first, as
/// it does), that it cannot parse (`proc_dointvec_minmax()` between 0 and 1, as it does) or
/// that keeps the value returns what it returns and touches no key. Flipping a key re-patches
/// every call site's text, with IPIs to every CPU: a refused write must not cost that.
///
/// # Safety
///
/// The arguments are those the sysctl core passes a handler.
#[cfg(CONFIG_PROC_SYSCTL)]
unsafe extern "C" fn handle_sysctl(
    table: *const bindings::ctl_table,
    write: c_int,
    buffer: *mut core::ffi::c_void,
    lenp: *mut usize,
    ppos: *mut bindings::loff_t,
) -> c_int {
    if write == 0 {
        // SAFETY: The caller passes the sysctl core's arguments, which this passes on unchanged.
        return unsafe { bindings::proc_do_static_key(table, write, buffer, lenp, ppos) };
    }
    // SAFETY: Asking for a capability of the current task has no precondition.
    if !unsafe { bindings::capable(bindings::CAP_SYS_ADMIN as c_int) } {
        return -(bindings::EPERM as c_int);
    }
    let was = enabled();
    // SAFETY: The caller passes the sysctl core's arguments.
    let (ret, value) = unsafe { parse_switch(table, write, buffer, lenp, ppos, was) };
    if ret == 0 && (value != 0) != was {
        // The first switch-on gives every tag its counters, or fails whole: no memory, and
        // profiling stays off.
        if value != 0 {
            if let Err(e) = crate::alloc_tag::counters::arm() {
                return e.to_errno();
            }
        }
        // Pages recorded by capture just before profiling went off may not have been charged;
        // the purge runs before another write can turn it back on.
        set_enabled_then(value != 0, || {
            #[cfg(CONFIG_ALLOCTAG_CAPTURE)]
            if value == 0 {
                crate::capture::purge_uncharged_pages();
            }
        });
    }
    ret
}

/// Parses a read or write of a 0-or-1 sysctl whose value is `was` as `proc_dointvec_minmax()`
/// between 0 and 1 does (under `kernel.sysctl_writes_strict`): a write that sets nothing (at
/// a non-zero position, say) leaves `was`. Returns the handler's return and the value.
///
/// # Safety
///
/// The arguments are those the sysctl core passes a handler.
#[cfg(CONFIG_PROC_SYSCTL)]
unsafe fn parse_switch(
    table: *const bindings::ctl_table,
    write: c_int,
    buffer: *mut core::ffi::c_void,
    lenp: *mut usize,
    ppos: *mut bindings::loff_t,
    was: bool,
) -> (c_int, c_int) {
    let mut value = c_int::from(was);
    let parse = bindings::ctl_table {
        procname: ptr::null(),
        data: (&raw mut value).cast(),
        maxlen: size_of::<c_int>() as c_int,
        // SAFETY: The caller passes the sysctl core's table.
        mode: unsafe { (*table).mode },
        proc_handler: None,
        poll: ptr::null_mut(),
        extra1: (&raw const BOUNDS[0]).cast_mut().cast(),
        extra2: (&raw const BOUNDS[1]).cast_mut().cast(),
    };
    // SAFETY: `parse` points to `value` and the bounds, which outlive the call; the rest are
    // the sysctl core's arguments, passed on unchanged.
    let ret = unsafe { bindings::proc_dointvec_minmax(&parse, write, buffer, lenp, ppos) };
    (ret, value)
}

/// `vm.mem_profiling_per_node` (src/alloc_tag/node.rs): reads 0 or 1; a write of the other
/// value (`CAP_SYS_ADMIN`, then parsed as `vm.mem_profiling`'s) changes it while the tags have
/// no counters yet, `EBUSY` after; a refused write changes nothing.
///
/// # Safety
///
/// The arguments are those the sysctl core passes a handler.
#[cfg(all(CONFIG_PROC_SYSCTL, CONFIG_ALLOCTAG_PER_NODE))]
unsafe extern "C" fn handle_per_node(
    table: *const bindings::ctl_table,
    write: c_int,
    buffer: *mut core::ffi::c_void,
    lenp: *mut usize,
    ppos: *mut bindings::loff_t,
) -> c_int {
    // SAFETY: Asking for a capability of the current task has no precondition.
    if write != 0 && !unsafe { bindings::capable(bindings::CAP_SYS_ADMIN as c_int) } {
        return -(bindings::EPERM as c_int);
    }
    let was = crate::alloc_tag::node::wanted();
    // SAFETY: The caller passes the sysctl core's arguments.
    let (ret, value) = unsafe { parse_switch(table, write, buffer, lenp, ppos, was) };
    if ret == 0 && write != 0 && (value != 0) != was {
        if let Err(e) = crate::alloc_tag::node::set(value != 0) {
            return e.to_errno();
        }
    }
    ret
}

/// The number of `vm` sysctls: `mem_profiling`, `mem_profiling_compressed`, and
/// `mem_profiling_per_node` where per-node counting is built.
#[cfg(CONFIG_PROC_SYSCTL)]
const SYSCTLS: usize = if cfg!(CONFIG_ALLOCTAG_PER_NODE) { 3 } else { 2 };

/// Writes `text` to `vm.mem_profiling` through its handler, as `write()` would at position 0;
/// returns what the handler returned. For tests.
#[cfg(all(CONFIG_PROC_SYSCTL, CONFIG_ALLOCTAG_KUNIT_TEST))]
pub(crate) fn write_sysctl(text: &[u8]) -> c_int {
    let mut buffer = [0u8; 32];
    let Some(dest) = buffer.get_mut(..text.len()) else {
        return -(bindings::E2BIG as c_int);
    };
    dest.copy_from_slice(text);
    let mut len = text.len();
    let mut pos: bindings::loff_t = 0;
    // SAFETY: The table is registered, and the sysctl core calls its handler with a kernel
    // buffer of `len` bytes and the file position, as here.
    unsafe {
        HANDLER(
            (&raw const SYSCTL_TABLE).cast(),
            1,
            buffer.as_mut_ptr().cast(),
            &mut len,
            &mut pos,
        )
    }
}

/// The `vm.mem_profiling` table. Its handler, [`handle_sysctl`], is 6.12's C core's
/// `proc_do_static_key()` on the profiling key: the same capability check (`CAP_SYS_ADMIN` to
/// write) and the same input rules (`proc_dointvec_minmax()` with 0 and 1 as bounds, under
/// `kernel.sysctl_writes_strict`), by construction; a change of the value turns profiling on
/// or off with the keys that follow it. Its mode is set at registration, before
/// the sysctl core sees it.
///
/// The second entry, `vm.mem_profiling_compressed`, says whether page tags are in page flags
/// (mainline's name): read-only, decided at boot, and booted `0` in force from the first
/// switch-on (0 until then). The third, where per-node counting is built,
/// `vm.mem_profiling_per_node` ([`handle_per_node`]).
#[cfg(CONFIG_PROC_SYSCTL)]
static mut SYSCTL_TABLE: [bindings::ctl_table; SYSCTLS] = [
    bindings::ctl_table {
        procname: c_str!("mem_profiling").as_char_ptr(),
        data: (&raw mut bindings::mem_alloc_profiling_key).cast(),
        maxlen: 0,
        mode: 0o644,
        proc_handler: Some(HANDLER),
        poll: ptr::null_mut(),
        extra1: ptr::null_mut(),
        extra2: ptr::null_mut(),
    },
    bindings::ctl_table {
        procname: c_str!("mem_profiling_compressed").as_char_ptr(),
        data: (&raw mut bindings::mem_profiling_compressed).cast(),
        maxlen: 0,
        mode: 0o444,
        proc_handler: Some(bindings::proc_do_static_key),
        poll: ptr::null_mut(),
        extra1: ptr::null_mut(),
        extra2: ptr::null_mut(),
    },
    #[cfg(CONFIG_ALLOCTAG_PER_NODE)]
    bindings::ctl_table {
        procname: c_str!("mem_profiling_per_node").as_char_ptr(),
        data: ptr::null_mut(),
        maxlen: 0,
        mode: 0o644,
        proc_handler: Some(handle_per_node),
        poll: ptr::null_mut(),
        extra1: ptr::null_mut(),
        extra2: ptr::null_mut(),
    },
];

/// Registers `/proc/sys/vm/mem_profiling`: 0644, or 0444 when profiling is off for good or
/// built for debugging, as in 6.12.
#[cfg(CONFIG_PROC_SYSCTL)]
pub(crate) fn register_sysctl() -> Result {
    let read_only = !supported() || cfg!(CONFIG_MEM_ALLOC_PROFILING_DEBUG);
    let table = &raw mut SYSCTL_TABLE;
    // SAFETY: Called once, from the initcall, before the table is registered: nothing else
    // accesses it yet. Afterwards the sysctl core owns it.
    unsafe {
        (*table)[0].mode = if read_only { 0o444 } else { 0o644 };
        // Per-node counting cannot change either where profiling cannot, nor with the debug
        // checks (src/alloc_tag/node.rs).
        #[cfg(CONFIG_ALLOCTAG_PER_NODE)]
        {
            (*table)[2].mode = if read_only { 0o444 } else { 0o644 };
        }
        let header =
            bindings::register_sysctl_sz(c_str!("vm").as_char_ptr(), table.cast(), SYSCTLS);
        if header.is_null() {
            return Err(ENOMEM);
        }
    }
    Ok(())
}

/// Without `/proc/sys` there is no sysctl to register, as in 6.12.
#[cfg(not(CONFIG_PROC_SYSCTL))]
pub(crate) fn register_sysctl() -> Result {
    Ok(())
}
