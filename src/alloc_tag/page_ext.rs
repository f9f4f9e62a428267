// SPDX-License-Identifier: GPL-2.0

//! Page tags in page_ext: reserved at boot only where they must be, else made the first time
//! profiling turns on.
//!
//! C header: [`include/linux/page_ext.h`](srctree/include/linux/page_ext.h)
//!
//! page_ext takes 8 bytes a page for a page's tag reference, 0.2% of memory. Booted off, with
//! page tags in page_ext and memory in sections (`SPARSEMEM`), none is reserved at boot: the
//! first switch-on makes it for every online section (`page_ext_init_late()`, patch 0019),
//! all or nothing, in the writer's context, and from then on for memory onlined later. It
//! must still be reserved at boot where page_ext cannot be made later: booted on (page tags
//! count from boot), with the debug checks (no switch: the sysctl is read-only), with flat
//! memory (page_ext is one array a node, made from memblock), or where another client of
//! page_ext (page_owner, page_table_check, waste accounting's slots) needs it at boot, as
//! page_ext's entries cannot grow once made.

use core::sync::atomic::{AtomicU8, Ordering};
use kernel::{bindings, error::to_result, prelude::*};

/// Where page_ext for page tags comes from: [`State`]'s values.
static STATE: AtomicU8 = AtomicU8::new(State::None as u8);

/// Page tags' page_ext.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum State {
    /// None yet: page tags are in page flags, profiling is off for good, or page_ext is made
    /// when profiling first turns on.
    None = 0,
    /// Reserved at boot, as profiling needed it then.
    Booted = 1,
    /// Reserved at boot for another client of page_ext, as it cannot be made later.
    Shared = 2,
    /// Made when profiling first turned on.
    Made = 3,
}

/// Returns where page tags' page_ext came from.
#[cfg_attr(not(CONFIG_DEBUG_FS), allow(dead_code))]
pub(crate) fn state() -> State {
    match STATE.load(Ordering::Relaxed) {
        1 => State::Booted,
        2 => State::Shared,
        3 => State::Made,
        _ => State::None,
    }
}

/// Returns whether page tags need page_ext at all: profiling can be on, and they are not in
/// page flags, nor go there at the first switch-on.
fn wanted() -> bool {
    crate::keys::supported() && !super::index::in_page_flags()
}

/// Returns whether page tags' page_ext, if wanted, is reserved at boot whatever else needs
/// page_ext: booted on (tags count from boot, and the counters are made in `mm_core_init()`,
/// before page_ext is), with the debug checks, or without memory sections.
fn at_boot() -> bool {
    super::counters::booted_on()
        || cfg!(CONFIG_MEM_ALLOC_PROFILING_DEBUG)
        || !cfg!(CONFIG_SPARSEMEM)
}

/// page_ext's `need` callback: whether page tags' page_ext must be reserved at boot. Asked by
/// `page_ext_init()` (or `page_ext_init_flatmem()`), at boot, after `alloc_tag_sec_init()`
/// decided whether page tags go in page flags; may be asked more than once.
#[no_mangle]
pub(crate) extern "C" fn alloctag_page_ext_needed() -> bool {
    let needed = wanted() && at_boot();
    if needed {
        STATE.store(State::Booted as u8, Ordering::Relaxed);
    }
    needed
}

/// page_ext's `need_later` callback, asked only where another client needs page_ext at boot:
/// then page tags' room is reserved too, as it could not be made later.
#[no_mangle]
pub(crate) extern "C" fn alloctag_page_ext_needed_later() -> bool {
    let needed = wanted();
    if needed {
        STATE.store(State::Shared as u8, Ordering::Relaxed);
        pr_info!(
            "page_ext is needed at boot by another user: 8 bytes a page are reserved for page \
             tags too, as they could not be added later\n"
        );
    }
    needed
}

/// Makes page tags' page_ext if they need it and nothing reserved it at boot: for every
/// online section, all or nothing, and logged as at boot (`allocated N bytes of page_ext`).
/// Called by the first switch-on ([`super::counters::arm`]) before the profiling key turns on:
/// at boot when booted on, which reserves page_ext instead ([`at_boot`]), else in process
/// context, from the sysctl's write. May sleep, for as long as the memory takes to allocate
/// (memory hotplug waits meanwhile, allocations do not).
pub(crate) fn make() -> Result {
    if !wanted() || at_boot() || state() != State::None {
        return Ok(());
    }
    // SAFETY: Not booted on ([`at_boot`]): the sysctl's write, in process context after boot;
    // page_ext serializes its callers and refuses (`EBUSY`) before `page_ext_init()`.
    to_result(unsafe { bindings::alloctag_page_ext_make() })?;
    STATE.store(State::Made as u8, Ordering::Relaxed);
    Ok(())
}

c_declared!(alloctag_page_ext_needed);
c_declared!(alloctag_page_ext_needed_later);
