// SPDX-License-Identifier: GPL-2.0

//! Pages allocated before page_ext exists: their tag references are marked empty once it does.
//!
//! C header: [`include/linux/pgalloc_tag.h`](srctree/include/linux/pgalloc_tag.h)
//!
//! On SPARSEMEM, `mm_core_init()` calls `page_ext_init()` after `kmem_cache_init()` and
//! `vmalloc_init()` (and, with deferred struct pages, only from `page_alloc_init_late()`), so
//! the first slab pages, page tables and early vmalloc areas are allocated while no page has a
//! tag reference: `pgalloc_tag_add_order()` finds none and charges nothing. page_ext then comes up
//! zeroed, and when such a page is freed `alloc_tag_sub()` finds its reference unset: with
//! `CONFIG_MEM_ALLOC_PROFILING_DEBUG` it warns "alloc_tag was not set" (KASAN's quarantine
//! frees early slab pages that empty). 6.12's C core has the same gap; a later upstream patch
//! (mm tree, 2026) closes it by recording such pages too.
//!
//! `pgalloc_tag_add_order()` hands such pages to [`alloctag_early_page`], which lists them; when
//! page_ext is up, its init callback calls [`alloctag_early_pages_done`], which marks each
//! listed page's reference `CODETAG_EMPTY`: "not charged, do not uncharge". Only the debug
//! checks tell an unset reference from an empty one, so all this exists only with them.
//! - The list is a fixed array: the hook runs in every context and may not allocate. Pages
//!   past its end are counted and reported, and keep the old warning.
//! - A page is marked only if its reference is still unset (a compare-and-exchange): a listed
//!   page freed meanwhile and allocated again after page_ext came up has a real tag, and keeps
//!   it.
//! - A lister preempted or interrupted between the check of [`DONE`] and the store of its page,
//!   or running on another CPU, may store the page after the drain passed its slot. Both sides
//!   write, then read what the other writes, all sequentially consistent: the lister claims its
//!   slot and stores its page, then reads [`DONE`]; the drain sets [`DONE`], then reads the
//!   claimed count and the slots. So the drain sees the page, or the lister sees [`DONE`] and
//!   marks the page itself (or both: the second mark finds the reference already empty). After
//!   [`DONE`], a page without a reference is one that page_ext does not cover; none is listed.

use core::sync::atomic::{AtomicBool, AtomicPtr, AtomicUsize, Ordering};
use kernel::{bindings, prelude::*};

/// Slots of the list. x86_64's test kernel lists 82 pages (the boot log says how many); the
/// array is 32 KiB of a debug kernel's `.bss`.
const SLOTS: usize = 4096;

/// The listed pages; null where no page was stored yet.
static PAGES: [AtomicPtr<bindings::page>; SLOTS] =
    [const { AtomicPtr::new(core::ptr::null_mut()) }; SLOTS];
/// Slots claimed, including those past the end of [`PAGES`].
static CLAIMED: AtomicUsize = AtomicUsize::new(0);
/// page_ext is up: nothing is listed any more.
static DONE: AtomicBool = AtomicBool::new(false);

/// Marks `page`'s tag reference empty if it is unset.
///
/// # Safety
///
/// `page` is a page the page allocator handed out, since page_ext came up or before.
unsafe fn mark(page: *mut bindings::page) {
    // SAFETY: The `struct page` of a page the allocator handed out stays valid: the page may be
    // freed and reused, but the memory map of boot memory is never freed.
    unsafe { bindings::alloctag_page_ref_mark_empty(page) };
}

/// How many pages were listed (some perhaps past the end of the list).
#[cfg(CONFIG_ALLOCTAG_KUNIT_TEST)]
pub(crate) fn listed() -> usize {
    CLAIMED.load(Ordering::Relaxed)
}

/// Lists a page that `pgalloc_tag_add_order()` found no tag reference for.
///
/// # Safety
///
/// `page` is a page the page allocator is handing out.
#[no_mangle]
pub(crate) unsafe extern "C" fn alloctag_early_page(page: *mut bindings::page) {
    if DONE.load(Ordering::Acquire) {
        return;
    }
    let slot = CLAIMED.fetch_add(1, Ordering::SeqCst);
    let Some(entry) = PAGES.get(slot) else {
        return;
    };
    entry.store(page, Ordering::SeqCst);
    if DONE.load(Ordering::SeqCst) {
        // The drain may have passed this slot: mark it here.
        // SAFETY: The caller's `page` is being handed out.
        unsafe { mark(page) };
    }
}

/// Marks every listed page, once page_ext is up; called by page_ext's init callback.
#[no_mangle]
pub(crate) extern "C" fn alloctag_early_pages_done() {
    DONE.store(true, Ordering::SeqCst);
    let claimed = CLAIMED.load(Ordering::SeqCst);
    for entry in PAGES.iter().take(claimed) {
        let page = entry.load(Ordering::SeqCst);
        if !page.is_null() {
            // SAFETY: Only `alloctag_early_page()` stores pages here, those its callers hand out.
            unsafe { mark(page) };
        }
    }
    if claimed > SLOTS {
        pr_warn!(
            "{} pages allocated before page_ext was up, {} not marked: their frees may warn\n",
            claimed,
            claimed - SLOTS
        );
    } else {
        pr_info!("{claimed} pages allocated before page_ext was up marked untagged\n");
    }
}

c_declared!(alloctag_early_page);
c_declared!(alloctag_early_pages_done);
