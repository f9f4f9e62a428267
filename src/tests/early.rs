// SPDX-License-Identifier: GPL-2.0

//! Pages allocated before page_ext was up carry an empty tag reference, not an unset one
//! (src/alloc_tag/early.rs): their frees must not warn "alloc_tag was not set". With page tags
//! in page flags there are no such pages. Built with the
//! debug checks only, as that module is: without them the two mean the same.

use crate::kunit::{kunit_expect, kunit_suite, Test};
use core::ptr;
use kernel::bindings;

fn early_slab_page_is_marked(test: &Test) {
    // kmalloc-8's `struct kmem_cache` comes from the kmem_cache cache, which kmem_cache_init()
    // fills before page_ext_init() on SPARSEMEM.
    // SAFETY: The kmalloc caches are made at boot, before any initcall, and never change.
    let cache = unsafe {
        bindings::kmalloc_caches[bindings::kmalloc_cache_type_KMALLOC_NORMAL as usize][3]
    };
    kunit_expect!(test, !cache.is_null());
    if cache.is_null() {
        return;
    }
    if crate::alloc_tag::index::compressed() {
        // Page tags in page flags exist from the first page on: no page is early.
        kunit_expect!(
            test,
            crate::alloc_tag::early::listed() == 0,
            "pages were listed as early with page tags in page flags"
        );
    } else if cfg!(CONFIG_SPARSEMEM) {
        kunit_expect!(
            test,
            crate::alloc_tag::early::listed() > 0,
            "no page was listed as allocated before page_ext was up"
        );
    }
    // SAFETY: `cache` is a live object in the linear map: kmalloc caches are never destroyed.
    let page = unsafe { bindings::alloctag_test_page_of(cache.cast()) };
    let mut ct = ptr::null();
    // SAFETY: `page` is the page of a live object and `ct` is writable.
    let found = unsafe { bindings::alloctag_test_page_tag(page, &mut ct) };
    kunit_expect!(test, found, "the page has no tag reference");
    kunit_expect!(
        test,
        !ct.is_null(),
        "an early slab page's tag reference is unset: its free would warn"
    );
}

kunit_suite!(
    early_suite,
    "alloctag_early_pages",
    [early_slab_page_is_marked]
);
