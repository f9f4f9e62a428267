// SPDX-License-Identifier: GPL-2.0

//! Capture, the second level: the live objects of chosen call sites, with the process, CPU,
//! time, flags and stack of their allocation.
//!
//! C header: [`include/linux/alloctag_capture.h`](srctree/include/linux/alloctag_capture.h)
//!
//! Root chooses call sites with the code-tag library's selections ([`crate::codetag::Selection`])
//! through `/sys/kernel/debug/alloctag/capture`. While a selection is in force a static key turns
//! the hooks on (include/linux/alloctag_capture.h, grafted into the allocation-tag hooks), and each
//! object allocated at a marked site gets a record in a pool of bounded size, keyed by the object's
//! tag reference, until the object is freed ([`hook`], [`pool`]). The pool is allocated when the
//! first selection is made and freed, with every record, when the last one ends; deselecting a
//! site, or its module going, frees its records. The reports ([`report`]) list the records oldest
//! first, by stack and by process, and what the sites' counters hold beyond them: objects allocated
//! before capture started.

mod boot;
mod control;
mod hook;
mod pool;
mod report;
mod site_table;
mod sites;
pub(crate) mod sort;

pub(crate) use boot::apply as apply_boot_selections;
pub(crate) use control::register;
pub(crate) use hook::purge_uncharged_pages;
#[cfg(CONFIG_ALLOCTAG_KUNIT_TEST)]
pub(crate) use pool::{fill, set_purge_seam, HOLDS, HOLD_RECORDS, LONGEST_HOLD_NS, MAX_LIMIT};

use crate::{
    alloc_tag::ALLOC_TAGS,
    codetag::{self, Matched, Selection},
    rwsem::{c_rwsem, RwSem},
};
use core::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use kernel::{bindings, prelude::*};

/// The most capture selections in force at once.
pub(crate) const MAX_SELECTIONS: usize = 32;

/// The records a pool holds unless root sets another limit.
const DEFAULT_LIMIT: usize = 4096;

/// Which selection ids are in force; changed under [`CONTROL`].
static IN_USE: [AtomicBool; MAX_SELECTIONS] = [const { AtomicBool::new(false) }; MAX_SELECTIONS];

/// Serializes the control operations. Starting and stopping capture (a pool of up to a million
/// records, the stack depot's set-up, static-key flips) and a deselection's purge of the pool
/// happen under it, outside the registry's lock: module load, `/proc/allocinfo` and show_mem()
/// never wait for them (module unload waits for a purge: [`codetag::flushing`]). Taken
/// before the registry, never after.
// SAFETY: `alloctag_capture_control_lock` is defined with `DECLARE_RWSEM()` for this alone.
static CONTROL: RwSem<()> = unsafe { c_rwsem!(alloctag_capture_control_lock, ()) };

/// The size of the next pool.
static LIMIT: AtomicUsize = AtomicUsize::new(DEFAULT_LIMIT);

/// Returns the ids of the selections in force. Exact under [`CONTROL`]; with the registry
/// locked, an id may be listed whose selection is not (yet, or any more) in the registry.
fn ids() -> impl Iterator<Item = u32> {
    (1..=MAX_SELECTIONS as u32).filter(|&id| IN_USE[id as usize - 1].load(Ordering::Relaxed))
}

/// Turns capture on: a pool of the current limit, then the hooks.
fn start() -> Result {
    let table = pool::Table::new(LIMIT.load(Ordering::Relaxed))?;
    // SAFETY: Process context.
    kernel::error::to_result(unsafe { bindings::alloctag_capture_init() })?;
    drop(pool::swap(Some(table)));
    crate::keys::set_capture(true);
    Ok(())
}

/// Turns capture off: the hooks, then the pool with every record, freed outside the lock.
fn stop() {
    crate::keys::set_capture(false);
    drop(pool::swap(None));
}

/// Puts `selection` in force and returns its id and what it matched. Starts capture with the
/// first selection. Refuses a selection already in force (`EEXIST`) and a full table
/// (`ENOSPC`), changing nothing.
pub(crate) fn add(selection: Selection) -> Result<(u32, Matched)> {
    let handle = ALLOC_TAGS.handle().ok_or(ENODEV)?;
    let _control = CONTROL.write();
    if codetag::read().in_force(&sites::MARKER, &selection) {
        return Err(EEXIST);
    }
    let index = IN_USE
        .iter()
        .position(|u| !u.load(Ordering::Relaxed))
        .ok_or(ENOSPC)?;
    let id = index as u32 + 1;
    let first = ids().next().is_none();
    if first {
        start()?;
    }
    sites::reset_unmarked(id);
    let selected = codetag::write().select(handle, &sites::MARKER, id, selection);
    match selected {
        Ok(matched) => {
            IN_USE[index].store(true, Ordering::Relaxed);
            Ok((id, matched))
        }
        Err(e) => {
            if first {
                stop();
            }
            Err(e)
        }
    }
}

/// Ends selection `id`: its sites' records are freed, and with the last selection the pool.
/// `ENOENT` if no such selection is in force.
pub(crate) fn remove(id: u32) -> Result {
    end(id, false)
}

/// Ends selection `id` as [`remove`] did before its purge ran outside the registry's lock:
/// with the registry locked for writing throughout; for the tests, which measure that hold
/// beside the new one in one boot.
#[cfg(CONFIG_ALLOCTAG_KUNIT_TEST)]
pub(crate) fn remove_under_lock(id: u32) -> Result {
    end(id, true)
}

/// Ends selection `id`, its purge outside the registry's lock unless `under_lock`.
fn end(id: u32, under_lock: bool) -> Result {
    let _control = CONTROL.write();
    let index = (id as usize).checked_sub(1).ok_or(ENOENT)?;
    if !IN_USE.get(index).ok_or(ENOENT)?.load(Ordering::Relaxed) {
        return Err(ENOENT);
    }
    {
        // The records of the sites unmarked go in steps outside the registry's lock, which
        // `/proc/allocinfo` and module loads take meanwhile (what else may run between the
        // steps: `pool::purge_unmarked`). `flushing` keeps every tag in place until the
        // hand-over: module unload and the reaper wait for it. The control lock keeps out a
        // new selection of the same sites and a pool restart; a module loaded meanwhile gets
        // marks from the selections still in force only, and a dynamic tag marked meanwhile
        // is not handed over again.
        let _flushing = codetag::flushing();
        if under_lock {
            with_registry(|registry| registry.deselect(&sites::MARKER, id));
        } else if let Some(taken) = with_registry(|registry| registry.take_back(&sites::MARKER, id))
        {
            if taken.unmarked {
                (sites::MARKER.flush)();
            }
            // SAFETY: `taken` comes from the kernel's registry, and `flushing` is held since
            // before it was taken.
            with_registry(|registry| unsafe { registry.hand_over(&sites::MARKER, taken) });
        }
    }
    IN_USE[index].store(false, Ordering::Relaxed);
    if ids().next().is_none() {
        stop();
    }
    Ok(())
}

/// For the tests: the longest hold of the registry's write lock by [`remove`], in nanoseconds.
#[cfg(CONFIG_ALLOCTAG_KUNIT_TEST)]
pub(crate) static LONGEST_WRITE_NS: core::sync::atomic::AtomicU64 =
    core::sync::atomic::AtomicU64::new(0);

/// Runs `f` with the registry locked for writing; the tests measure the hold.
fn with_registry<R>(f: impl FnOnce(&mut codetag::Registry) -> R) -> R {
    let mut registry = codetag::write();
    // SAFETY: The fast clock may be read in any context.
    #[cfg(CONFIG_ALLOCTAG_KUNIT_TEST)]
    let taken = unsafe { bindings::ktime_get_mono_fast_ns() };
    let result = f(&mut registry);
    #[cfg(CONFIG_ALLOCTAG_KUNIT_TEST)]
    {
        // SAFETY: As above.
        let held = unsafe { bindings::ktime_get_mono_fast_ns() }.saturating_sub(taken);
        LONGEST_WRITE_NS.fetch_max(held, Ordering::Relaxed);
    }
    drop(registry);
    result
}

/// Ends every selection and frees every record.
pub(crate) fn clear() {
    for id in 1..=MAX_SELECTIONS as u32 {
        let _ = remove(id);
    }
}

/// Sets the size of the pool, in records. The pool is made when capture starts, so the limit
/// changes only while nothing is selected (`EBUSY`); 1 to [`pool::MAX_LIMIT`] (`EINVAL`).
pub(crate) fn set_limit(limit: usize) -> Result {
    let _control = CONTROL.write();
    if limit == 0 || limit > pool::MAX_LIMIT {
        return Err(EINVAL);
    }
    if ids().next().is_some() {
        return Err(EBUSY);
    }
    LIMIT.store(limit, Ordering::Relaxed);
    Ok(())
}

/// Returns the pool's size for the next start.
pub(crate) fn limit() -> usize {
    LIMIT.load(Ordering::Relaxed)
}

/// Returns the records in use, the pool's size (0 while off), the records dropped because the
/// pool was full, and the allocations capture made itself, not recorded.
pub(crate) fn stats() -> (usize, usize, u64, u64) {
    let state = pool::lock();
    let (used, size) = state.table.as_ref().map_or((0, 0), |t| t.usage());
    (used, size, state.dropped, state.busy)
}

#[cfg(CONFIG_ALLOCTAG_KUNIT_TEST)]
pub(crate) use {
    control::run,
    hook::{alloctag_capture_rekey as rekey, alloctag_capture_split_piece as split_piece},
    pool::{Kind, Record},
    report::{write as write_report, View},
};

/// Returns the records of `tag`, oldest first; for the tests.
#[cfg(CONFIG_ALLOCTAG_KUNIT_TEST)]
pub(crate) fn records_of(tag: &crate::codetag::Codetag) -> Result<kernel::alloc::KVVec<Record>> {
    let registry = codetag::read();
    let all = report::snapshot(&registry)?;
    let mut mine = kernel::alloc::KVVec::new();
    for r in all.iter().filter(|r| core::ptr::eq(r.tag, tag)) {
        mine.push(*r, GFP_KERNEL)?;
    }
    sort::sort_by_key(&mut mine, |r| r.time_ns);
    Ok(mine)
}

/// Returns the objects and bytes that `tag`'s counters hold beyond its records; for the tests.
#[cfg(CONFIG_ALLOCTAG_KUNIT_TEST)]
pub(crate) fn untracked_of(tag: &crate::alloc_tag::AllocTag) -> Result<(u64, i64)> {
    let registry = codetag::read();
    let all = report::snapshot(&registry)?;
    Ok(report::untracked(tag, &all))
}
