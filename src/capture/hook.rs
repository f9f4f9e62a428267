// SPDX-License-Identifier: GPL-2.0

//! What the allocator hooks' slow paths (src/glue_capture.c) do to the records: make one, free
//! one, split one, move one. Each takes the pool's lock briefly and never allocates: they run
//! in every context the allocators run in, interrupts and spinlocked sections included.
//!
//! C header: [`include/linux/alloctag_capture.h`](srctree/include/linux/alloctag_capture.h)

use super::pool::{self, still_selected, Kind, Record};
use core::ffi::{c_uint, c_void};
use kernel::bindings;

/// Records the allocation described by `info`, unless its site was deselected meanwhile, or,
/// for pages, profiling is off by now, or the pool is full (counted as dropped).
///
/// Pages are recorded before they are charged (post_alloc_hook() calls the hook before
/// pgalloc_tag_add_order(), which keeps it cheap), so profiling turned off between the two
/// would leave a record for pages charged to nothing, which their free would never remove.
/// Profiling is asked again here, under the pool's lock: a record made with it on is in the
/// pool before the sysctl's write turns it off and [`purge_uncharged_pages`] looks, and that
/// purge frees each record whose pages the hook did not charge after all.
///
/// # Safety
///
/// `info` must be valid; its tag must be a live tag (the one just charged).
#[no_mangle]
pub(crate) unsafe extern "C" fn alloctag_capture_insert(
    info: *const bindings::alloctag_capture_info,
) {
    // SAFETY: The caller passes a valid `info`.
    let info = unsafe { &*info };
    let record = Record::from_info(info);
    let mut state = pool::lock();
    // SAFETY: The lock is held; the record is being made for an allocation just charged to its
    // tag, which the caller guarantees is live.
    if !unsafe { still_selected(&record) } {
        return;
    }
    if record.kind == Kind::Pages && !crate::keys::enabled() {
        return;
    }
    let Some(table) = state.table.as_mut() else {
        return;
    };
    if !table.insert(record) {
        state.dropped += 1;
    }
}

/// The page records looked at per hold of the pool's lock by [`purge_uncharged_pages`]: their
/// keys to free are kept on the stack meanwhile.
const PURGE_BATCH: usize = 64;

/// Frees every page record whose pages are not charged to its tag. Called after the sysctl
/// turned profiling off, in process context: with profiling off no hook charges or records
/// pages any more, so a record whose pages are not charged now never will be (the hook
/// recorded them, then found profiling off, [`alloctag_capture_insert`]). Pages that the hook
/// charged in the meantime, having found profiling on just before, may lose their record: they
/// are then counted as untracked, as pages allocated before capture started are.
///
/// A page freed with profiling off keeps its charge and its record, as in 6.12, where such a
/// free leaves the tag charged: the record is replaced when the page is recorded again, and
/// goes at such a purge once the page is charged to another tag (at once with page tags in
/// page flags, whose every free clears the index).
///
/// The caller holds the keys' lock from the flip on (`keys::set_profiling_then`): a write that
/// turns profiling on again waits, so no page the hook records meanwhile, to be charged just
/// after, is taken for uncharged. Memory hotplug is held off across the walk, which reads
/// `struct page`s by pfn.
pub(crate) fn purge_uncharged_pages() {
    // SAFETY: Process context (the sysctl's writer); paired with the put below.
    unsafe { bindings::alloctag_capture_mems_get() };
    purge_uncharged_pages_online();
    // SAFETY: Paired with the get above.
    unsafe { bindings::alloctag_capture_mems_put() };
}

/// [`purge_uncharged_pages`]'s walk, with memory hotplug held off.
fn purge_uncharged_pages_online() {
    let mut from = Some(0);
    while let Some(start) = from {
        let mut gone = [0usize; PURGE_BATCH];
        let mut n = 0;
        let mut state = pool::lock();
        let Some(table) = state.table.as_mut() else {
            return;
        };
        from = table.for_each_from(start, PURGE_BATCH, |r| {
            if r.kind != Kind::Pages {
                return;
            }
            // SAFETY: Any pfn may be asked about (the page is looked up online); the tag is only
            // compared.
            if !unsafe { bindings::alloctag_capture_pages_charged(r.object as _, r.tag.cast()) } {
                if let Some(key) = gone.get_mut(n) {
                    *key = r.key();
                    n += 1;
                }
            }
        });
        for &key in gone.iter().take(n) {
            table.remove(key);
        }
        drop(state);
        // SAFETY: Process context, no spinlock held (the pool's was dropped above).
        unsafe { bindings::alloctag_capture_cond_resched() };
    }
}

/// Counts an allocation that capture itself made while recording another.
#[no_mangle]
pub(crate) extern "C" fn alloctag_capture_busy_count() {
    pool::lock().busy += 1;
}

/// Frees the record of the object whose reference `r` is being cleared, if any.
#[no_mangle]
pub(crate) extern "C" fn alloctag_capture_remove(r: *const c_void) {
    if let Some(table) = pool::lock().table.as_mut() {
        table.remove(r as usize);
    }
}

/// Gives the piece of a split folio at `piece` (first page `pfn`, `bytes` long) a copy of the
/// head's record, or counts it dropped when the pool is full.
#[no_mangle]
pub(crate) extern "C" fn alloctag_capture_split_piece(
    head: *const c_void,
    piece: *const c_void,
    pfn: usize,
    bytes: usize,
    order: u8,
) {
    let mut state = pool::lock();
    let Some(table) = state.table.as_mut() else {
        return;
    };
    let Some(record) = table.get_mut(head as usize).map(|r| *r) else {
        return;
    };
    // SAFETY: The head's record is in the pool and the lock is held, so a purge of its tag has
    // not passed it: the tag stays at least until the lock is dropped.
    if !unsafe { still_selected(&record) } {
        return;
    }
    if !table.insert(record.pages_at(piece as usize, pfn, bytes, order)) {
        state.dropped += 1;
    }
}

/// Shrinks the record at `r` to what is left of it after a split.
#[no_mangle]
pub(crate) extern "C" fn alloctag_capture_resize(r: *const c_void, bytes: usize, order: u8) {
    if let Some(record) = pool::lock()
        .table
        .as_mut()
        .and_then(|t| t.get_mut(r as usize))
    {
        record.bytes = bytes;
        record.order = order;
    }
}

/// Shrinks the record at `r`, of a block of `2^order` pages, to its first page: the rest was
/// freed. A record of another order is another allocation's.
#[no_mangle]
pub(crate) extern "C" fn alloctag_capture_shrink_record(r: *const c_void, order: c_uint) {
    if let Some(record) = pool::lock()
        .table
        .as_mut()
        .and_then(|t| t.get_mut(r as usize))
        .filter(|record| record.kind == Kind::Pages && c_uint::from(record.order) == order)
    {
        record.bytes = kernel::page::PAGE_SIZE;
        record.order = 0;
    }
}

/// Moves the record at `from` to `to`, whose pages start at `pfn` (migration).
#[no_mangle]
pub(crate) extern "C" fn alloctag_capture_rekey(
    from: *const c_void,
    to: *const c_void,
    pfn: usize,
) {
    let mut state = pool::lock();
    let Some(table) = state.table.as_mut() else {
        return;
    };
    let Some(record) = table.remove(from as usize) else {
        return;
    };
    // SAFETY: The record was in the pool until now, under the lock we hold.
    if unsafe { still_selected(&record) } {
        // Cannot fail: a record was just freed.
        table.insert(record.pages_at(to as usize, pfn, record.bytes, record.order));
    }
}

c_declared!(alloctag_capture_insert);
c_declared!(alloctag_capture_busy_count);
c_declared!(alloctag_capture_remove);
c_declared!(alloctag_capture_split_piece);
c_declared!(alloctag_capture_resize);
c_declared!(alloctag_capture_shrink_record);
c_declared!(alloctag_capture_rekey);
