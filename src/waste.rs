// SPDX-License-Identifier: GPL-2.0

//! Waste accounting: per call site, the bytes its callers requested against the bytes the
//! slab allocator handed out (slack), and its allocations and frees (churn).
//!
//! C header: [`lib/alloctag/include/alloctag_waste.h`](srctree/lib/alloctag/include/alloctag_waste.h)
//!
//! Root turns it on and off ([`control`]: `/sys/kernel/debug/alloctag/waste`, the boot
//! parameter `alloctag.waste=on`); `/proc/allocwaste` lists it ([`report`]). Each time it turns
//! on, a new *period* begins: the slab hooks' slow paths (src/glue_waste_slab.c) mark each object
//! they track with the period, count into its tag's counters ([`crate::alloc_tag::waste`]), and
//! take back on free only what an object of the running period added. The counters are zeroed
//! when a period begins, so the figures are those of the objects allocated since: an object
//! allocated while the accounting was off, or in an earlier period, is untracked, never
//! subtracted. Off, the figures stay as they were.
//!
//! Why zeroing cannot race with a slow path: the slow paths read the period with preemption
//! off and count only while it is not 0. Turning off stores 0, then waits for a grace period,
//! which ends only after every section with preemption off that began before it; only then may
//! the next period begin and zero the counters.

mod control;
mod report;

#[cfg(CONFIG_ALLOCTAG_KUNIT_TEST)]
pub(crate) use control::run;
pub(crate) use control::{register, start_at_boot};

use crate::{
    alloc_tag::{dynamic, waste::WANTED, ALLOC_TAGS},
    codetag::{self, Cursor},
    rwsem::{c_rwsem, RwSem},
};
use core::sync::atomic::{AtomicU32, Ordering};
use kernel::{bindings, prelude::*};

/// The periods a boot can run: the period is the high half of an object's 32-bit slot.
const MAX_PERIOD: u32 = u16::MAX as u32;

/// What turning on and off changes.
struct State {
    /// The last period begun, 0 before the first.
    period: u32,
    /// `CLOCK_BOOTTIME` when it began, in nanoseconds.
    since_ns: u64,
}

// SAFETY: `alloctag_waste_lock` is defined with `DECLARE_RWSEM()` for this alone.
static STATE: RwSem<State> = unsafe {
    c_rwsem!(
        alloctag_waste_lock,
        State {
            period: 0,
            since_ns: 0,
        },
    )
};

/// The running period, which the slow paths read: 0 while off.
fn current() -> &'static AtomicU32 {
    // SAFETY: The C variable lives forever and is only accessed atomically: with
    // `smp_load_acquire()` in C, here with atomics.
    unsafe { AtomicU32::from_ptr(&raw mut bindings::alloctag_waste_current) }
}

/// Returns whether the accounting is on.
pub(crate) fn is_on() -> bool {
    current().load(Ordering::Acquire) != 0
}

/// Returns `CLOCK_BOOTTIME` in nanoseconds.
fn now_ns() -> u64 {
    // SAFETY: Reads a clock; any context.
    unsafe { bindings::alloctag_waste_now() }
}

/// Gives every tag its counters and zeroes them. With the registry locked for writing, so that
/// a module's tags are either here or get theirs as they load ([`WANTED`]).
fn make_and_zero_counters() -> Result {
    let handle = ALLOC_TAGS.handle().ok_or(ENODEV)?;
    let registry = codetag::write();
    WANTED.store(true, Ordering::Release);
    dynamic::pool().make_waste()?;
    for tag in registry.tags(handle, Cursor::START) {
        tag.make_waste()?;
        // SAFETY: The accounting is off, and every slow path that saw it on has returned (the
        // grace period after it turned off, or it never was on).
        unsafe { tag.zero_waste() };
    }
    Ok(())
}

/// Turns the accounting on or off; nothing changes if it already is. On begins a new period,
/// with every counter zeroed: `EBUSY` once the boot has run all its periods, `ENOMEM` if the
/// counters cannot be made (the accounting stays off). Process context; may sleep.
pub(crate) fn set(on: bool) -> Result {
    let mut state = STATE.write();
    if on == is_on() {
        return Ok(());
    }
    if !on {
        current().store(0, Ordering::Release);
        crate::keys::set_waste(false);
        // Every slow path that saw the period has returned after this (see the module's docs).
        // SAFETY: Process context, no RCU read section held.
        unsafe { bindings::synchronize_rcu() };
        return Ok(());
    }
    if state.period >= MAX_PERIOD {
        pr_warn!("waste: {MAX_PERIOD} periods run since boot, the most; reboot to begin another\n");
        return Err(EBUSY);
    }
    make_and_zero_counters()?;
    state.period += 1;
    state.since_ns = now_ns();
    // The zeroed counters before the period: a slow path that reads it sees them.
    current().store(state.period, Ordering::Release);
    crate::keys::set_waste(true);
    Ok(())
}

/// Returns whether the accounting is on, `CLOCK_BOOTTIME` when it last turned on (0 if never),
/// and now.
pub(crate) fn state() -> (bool, u64, u64) {
    let state = STATE.read();
    (is_on(), state.since_ns, now_ns())
}
