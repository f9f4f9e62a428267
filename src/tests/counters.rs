// SPDX-License-Identifier: GPL-2.0

//! The allocator hooks charge the current tag: counters move at a tagged call site and come
//! back after the free, and stand still with profiling off.

use super::{alloc_pages, profiling_enabled, set_profiling, test_tag, with_tag};
use crate::{
    alloc_tag::Counters,
    kunit::{kunit_expect, kunit_suite, Test},
};
use kernel::{bindings, c_str, page::PAGE_SIZE, str::CStr};

test_tag!(PAGES_TAG, "pages_move_counters");

fn pages_move_counters(test: &Test) {
    kunit_expect!(test, profiling_enabled(), "profiling is off at boot");
    for order in [0u32, 3] {
        let base = PAGES_TAG.read();
        let bytes = (PAGE_SIZE << order) as i64;
        let page = with_tag(PAGES_TAG, || alloc_pages(order));
        kunit_expect!(test, !page.is_null());
        if page.is_null() {
            return;
        }
        let held = PAGES_TAG.read();
        kunit_expect!(
            test,
            held == Counters {
                bytes: base.bytes + bytes,
                calls: base.calls + 1
            },
            "order {order}: {base:?} -> {held:?}"
        );
        // SAFETY: `page` was allocated above with this `order` and is freed once.
        unsafe { bindings::__free_pages(page, order) };
        let freed = PAGES_TAG.read();
        kunit_expect!(
            test,
            freed == base,
            "order {order}: {base:?} -> {freed:?} after free"
        );
    }
}

/// Allocates `N` objects with `alloc` under `tag` and checks that each charges one call and the
/// same bytes, at least `min_bytes`, and that freeing them all with `free` restores the base.
fn check_objects(
    test: &Test,
    tag: &'static crate::alloc_tag::AllocTag,
    min_bytes: i64,
    alloc: impl Fn() -> *mut core::ffi::c_void,
    free: impl Fn(*mut core::ffi::c_void),
) {
    const N: usize = 4;
    let base = tag.read();
    let mut objs = [core::ptr::null_mut(); N];
    let mut charge = 0;
    for (i, obj) in objs.iter_mut().enumerate() {
        *obj = with_tag(tag, &alloc);
        kunit_expect!(test, !obj.is_null());
        let now = tag.read();
        if i == 0 {
            charge = now.bytes - base.bytes;
            kunit_expect!(
                test,
                charge >= min_bytes,
                "charged {charge} for {min_bytes}"
            );
        }
        let want = Counters {
            bytes: base.bytes + charge * (i as i64 + 1),
            calls: base.calls + i as u64 + 1,
        };
        kunit_expect!(test, now == want, "object {i}: {now:?}, expected {want:?}");
    }
    for obj in objs {
        if !obj.is_null() {
            free(obj);
        }
    }
    let freed = tag.read();
    kunit_expect!(test, freed == base, "{base:?} -> {freed:?} after free");
}

test_tag!(KMALLOC_TAG, "kmalloc_moves_counters");

fn kmalloc_moves_counters(test: &Test) {
    check_objects(
        test,
        KMALLOC_TAG,
        100,
        // SAFETY: Allocating has no precondition.
        || unsafe { bindings::__kmalloc_noprof(100, bindings::GFP_KERNEL) },
        // SAFETY: Called once per object allocated above.
        |obj| unsafe { bindings::kfree(obj) },
    );
}

/// Creates a cache of 200-byte objects named `name`, with the default arguments; null if that
/// fails, which the case reports.
fn cache_of_200(test: &Test, name: &'static CStr) -> *mut bindings::kmem_cache {
    // SAFETY: All-zero `kmem_cache_args` are the defaults; the name is static.
    let cache = unsafe {
        let mut args: bindings::kmem_cache_args = core::mem::zeroed();
        bindings::__kmem_cache_create_args(name.as_char_ptr(), 200, &mut args, 0)
    };
    kunit_expect!(test, !cache.is_null(), "no cache {name}");
    cache
}

test_tag!(CACHE_TAG, "kmem_cache_moves_counters");

fn kmem_cache_moves_counters(test: &Test) {
    let cache = cache_of_200(test, c_str!("alloctag_kunit"));
    if cache.is_null() {
        return;
    }
    check_objects(
        test,
        CACHE_TAG,
        200,
        // SAFETY: `cache` lives until destroyed below.
        || unsafe { bindings::kmem_cache_alloc_noprof(cache, bindings::GFP_KERNEL) },
        // SAFETY: Called once per object allocated above from `cache`.
        |obj| unsafe { bindings::kmem_cache_free(cache, obj) },
    );
    // SAFETY: All objects were freed.
    unsafe { bindings::kmem_cache_destroy(cache) };
}

test_tag!(SLOT_TAG_A, "slab_slot_names_its_tag");
test_tag!(SLOT_TAG_B, "slab_slot_names_its_tag");

/// Whether the slot of the slab object `obj` names `tag`.
///
/// # Safety
///
/// `obj` is a live object of a slab cache.
unsafe fn slot_names(obj: *mut core::ffi::c_void, tag: &crate::alloc_tag::AllocTag) -> bool {
    // SAFETY: `obj` is a live slab object, by the caller's guarantee.
    let ct = unsafe { bindings::alloctag_test_slab_object_tag(obj) };
    // `struct alloc_tag` starts with its `struct codetag`.
    core::ptr::eq(ct.cast::<bindings::alloc_tag>(), tag.as_raw())
}

/// Each object's slot in its slab's vector names the tag that allocated it: objects the fast
/// path hands out, charged with the slab it holds, and those of slab refills and of the bulk
/// path, whose hook finds the slab itself; two tags interleaved, some objects freed between
/// (the freelist then hands them back out of order). A slot found from the wrong slab leaves
/// the object's own slot empty or another's overwritten.
fn slab_slot_names_its_tag(test: &Test) {
    const N: usize = 240;
    const BULK: usize = 8;
    // Objects of 200 bytes (more with KASAN's metadata), a few dozen to a slab: N of them
    // take several refills.
    let cache = cache_of_200(test, c_str!("alloctag_kunit_slot"));
    if cache.is_null() {
        return;
    }
    let tag_of = |i: usize| if i % 3 == 0 { SLOT_TAG_B } else { SLOT_TAG_A };
    let (base_a, base_b) = (SLOT_TAG_A.read(), SLOT_TAG_B.read());
    let mut objs = [core::ptr::null_mut(); N];
    for i in 0..N {
        // SAFETY: `cache` lives until destroyed below.
        objs[i] = with_tag(tag_of(i), || unsafe {
            bindings::kmem_cache_alloc_noprof(cache, bindings::GFP_KERNEL)
        });
        kunit_expect!(test, !objs[i].is_null(), "object {i}");
        if i % 7 == 6 {
            let obj = core::mem::replace(&mut objs[i - 3], core::ptr::null_mut());
            if !obj.is_null() {
                // SAFETY: Allocated above from `cache`, freed once.
                unsafe { bindings::kmem_cache_free(cache, obj) };
            }
        }
    }
    let mut bulk = [core::ptr::null_mut(); BULK];
    // SAFETY: `bulk` has room for `BULK` pointers; interrupts are on.
    let got = with_tag(SLOT_TAG_B, || unsafe {
        bindings::kmem_cache_alloc_bulk_noprof(cache, bindings::GFP_KERNEL, BULK, bulk.as_mut_ptr())
    });
    kunit_expect!(test, got == BULK as _, "bulk: {got} of {BULK}");
    let (mut wrong, mut first_wrong) = (0, None);
    let (mut calls_a, mut calls_b) = (0, 0);
    for (i, &obj) in objs.iter().enumerate() {
        if obj.is_null() {
            continue;
        }
        if core::ptr::eq(tag_of(i), SLOT_TAG_A) {
            calls_a += 1;
        } else {
            calls_b += 1;
        }
        // SAFETY: Allocated from `cache` above and not freed yet (null ones were skipped).
        if !unsafe { slot_names(obj, tag_of(i)) } {
            wrong += 1;
            first_wrong.get_or_insert(i);
        }
    }
    for (i, &obj) in bulk.iter().enumerate().take(got as usize) {
        calls_b += 1;
        // SAFETY: The bulk allocation filled its first `got` entries with live objects.
        let named = unsafe { slot_names(obj, SLOT_TAG_B) };
        kunit_expect!(test, named, "bulk object {i}: its slot names another tag");
    }
    kunit_expect!(
        test,
        wrong == 0,
        "{wrong} objects' slots name another tag, the first object {first_wrong:?}"
    );
    let (held_a, held_b) = (SLOT_TAG_A.read(), SLOT_TAG_B.read());
    kunit_expect!(
        test,
        held_a.calls == base_a.calls + calls_a && held_b.calls == base_b.calls + calls_b,
        "A {base_a:?} -> {held_a:?} ({calls_a}), B {base_b:?} -> {held_b:?} ({calls_b})"
    );
    // SAFETY: Each was allocated above from `cache` and is freed once; the bulk allocation
    // filled its first `got` entries.
    unsafe {
        for obj in objs.into_iter().filter(|o| !o.is_null()) {
            bindings::kmem_cache_free(cache, obj);
        }
        bindings::kmem_cache_free_bulk(cache, got as usize, bulk.as_mut_ptr());
    }
    let (freed_a, freed_b) = (SLOT_TAG_A.read(), SLOT_TAG_B.read());
    kunit_expect!(
        test,
        freed_a == base_a && freed_b == base_b,
        "after free: A {freed_a:?}, B {freed_b:?}"
    );
    // SAFETY: All objects were freed.
    unsafe { bindings::kmem_cache_destroy(cache) };
}

test_tag!(VMALLOC_TAG, "vmalloc_moves_counters");

fn vmalloc_moves_counters(test: &Test) {
    const PAGES: usize = 4;
    let base = VMALLOC_TAG.read();
    // SAFETY: Allocating has no precondition.
    let area = with_tag(VMALLOC_TAG, || unsafe {
        bindings::vmalloc_noprof((PAGES * PAGE_SIZE) as _)
    });
    kunit_expect!(test, !area.is_null());
    let held = VMALLOC_TAG.read();
    // The pages, one call each, and the array that lists them are charged here; the
    // vm_struct is charged to mm/vmalloc.c's own tag.
    kunit_expect!(
        test,
        held.bytes >= base.bytes + (PAGES * PAGE_SIZE) as i64 && held.calls > base.calls + 3,
        "{base:?} -> {held:?}"
    );
    // SAFETY: `area` came from vmalloc and is freed once; `vfree(NULL)` is allowed.
    unsafe { bindings::vfree(area) };
    let freed = VMALLOC_TAG.read();
    kunit_expect!(test, freed == base, "{base:?} -> {freed:?} after free");
}

test_tag!(DISABLED_TAG, "disabled_profiling_freezes_counters");

fn disabled_profiling_freezes_counters(test: &Test) {
    if cfg!(CONFIG_MEM_ALLOC_PROFILING_DEBUG) {
        // Its checks warn when an object allocated while profiling was off is freed after it
        // is back on, which any task may do meanwhile: 6.12 forbids turning it off then.
        test.skip("CONFIG_MEM_ALLOC_PROFILING_DEBUG forbids turning profiling off");
        return;
    }
    let was_enabled = profiling_enabled();
    let base = DISABLED_TAG.read();
    set_profiling(false);
    // SAFETY: Allocating has no precondition.
    let obj = with_tag(DISABLED_TAG, || unsafe {
        bindings::__kmalloc_noprof(64, bindings::GFP_KERNEL)
    });
    let page = with_tag(DISABLED_TAG, || alloc_pages(0));
    let held = DISABLED_TAG.read();
    // SAFETY: Both were allocated above and are freed once; null is allowed for kfree.
    unsafe {
        bindings::kfree(obj);
        if !page.is_null() {
            bindings::__free_pages(page, 0);
        }
    }
    set_profiling(was_enabled);
    kunit_expect!(
        test,
        held == base,
        "{base:?} -> {held:?} with profiling off"
    );
    kunit_expect!(test, DISABLED_TAG.read() == base);
}

test_tag!(EMPTY_TAG, "empty_reference_freed_while_referenced");

fn empty_reference_freed_while_referenced(test: &Test) {
    if !cfg!(CONFIG_MEM_ALLOC_PROFILING_DEBUG) {
        test.skip("CODETAG_EMPTY exists only with CONFIG_MEM_ALLOC_PROFILING_DEBUG");
        return;
    }
    let page = with_tag(EMPTY_TAG, || alloc_pages(0));
    kunit_expect!(test, !page.is_null());
    if page.is_null() {
        return;
    }
    let held = EMPTY_TAG.read();
    // SAFETY: `page` was allocated above; the extra reference taken here is dropped below, and
    // the page is freed once, by whichever put drops the last reference.
    unsafe {
        // As free_reserved_page() does: the pages are no longer charged (their charge stays
        // with the test's tag).
        bindings::alloctag_test_clear_page_tag_ref(page);
        // Another user's reference, as compaction takes speculatively: __free_pages() then
        // leaves the page and reads its tag. 6.12 read CODETAG_EMPTY as a tag at address 1.
        bindings::alloctag_test_get_page(page);
        bindings::__free_pages(page, 0);
        bindings::alloctag_test_put_page(page);
    }
    kunit_expect!(
        test,
        EMPTY_TAG.read() == held,
        "{held:?} -> {:?}: an uncharged page moved the counters",
        EMPTY_TAG.read()
    );
}

test_tag!(HEAD_TAG, "tail_pages_freed_while_head_held");

/// `__free_pages()` of a non-compound block whose first page another user still holds frees the
/// other pages itself, and takes their bytes back from the tag it read before it dropped its
/// reference (with page tags in page flags, from the index it read then); the last put of the
/// first page takes back the rest and the call.
fn tail_pages_freed_while_head_held(test: &Test) {
    let order = 2;
    let base = HEAD_TAG.read();
    let page = with_tag(HEAD_TAG, || alloc_pages(order));
    kunit_expect!(test, !page.is_null());
    if page.is_null() {
        return;
    }
    // SAFETY: `page` was allocated above at `order`, not compound; the extra reference on its
    // first page is dropped below, which frees that page; `__free_pages()` frees the others.
    unsafe {
        bindings::alloctag_test_get_page(page);
        bindings::__free_pages(page, order);
    }
    let head_only = HEAD_TAG.read();
    kunit_expect!(
        test,
        head_only
            == Counters {
                bytes: base.bytes + PAGE_SIZE as i64,
                calls: base.calls + 1
            },
        "{base:?} -> {head_only:?}: the tail pages' bytes were not taken back"
    );
    // SAFETY: Drops the reference taken above, the last one: the first page is freed.
    unsafe { bindings::alloctag_test_put_page(page) };
    kunit_expect!(
        test,
        HEAD_TAG.read() == base,
        "{base:?} -> {:?} after the last put",
        HEAD_TAG.read()
    );
}

kunit_suite!(
    counters_suite,
    "alloctag_counters",
    [
        pages_move_counters,
        kmalloc_moves_counters,
        kmem_cache_moves_counters,
        slab_slot_names_its_tag,
        vmalloc_moves_counters,
        disabled_profiling_freezes_counters,
        empty_reference_freed_while_referenced,
        tail_pages_freed_while_head_held,
    ]
);
