// SPDX-License-Identifier: GPL-2.0

//! Waste accounting: exact requested and handed-out bytes, allocations and frees per call site,
//! for kmalloc(), krealloc() in place and moving, a cache whose objects are smaller than their
//! slots, vmalloc() of a size that is no multiple of the page, pages (whole, exact, a large
//! kmalloc(), split, migrated) and Rust vectors; objects allocated while it was off, or in an
//! earlier period, are never taken back; slots come with slab vectors made while it is on, or
//! with every vector when reserved at boot; bad control input changes nothing.
//!
//! The cases whose objects come from the busy kmalloc() caches need every slab vector to have
//! slots, so they run booted with `alloctag.waste_slots=on` (scripts/test.sh's second KUnit
//! run) and skip without it; pages likewise.

use super::{alloc_pages, dynamic::find_dynamic_in, overlap::Overlap, test_tag, with_tag};
use crate::{
    alloc_tag::{waste::Figures, AllocTag},
    kunit::{kunit_expect, kunit_suite, Test},
    waste,
};
use core::{
    ffi::c_void,
    ptr,
    sync::atomic::{AtomicBool, AtomicUsize, Ordering},
};
use kernel::{
    alloc::{KVec, VVec},
    bindings,
    prelude::*,
    str::CStr,
};

/// Turns the accounting on or off; reports a failure.
fn turn(test: &Test, on: bool) {
    let done = waste::set(on);
    kunit_expect!(test, done.is_ok(), "turning {on}: {:?}", done.err());
}

/// The figures of `tag`; a tag without counters reads as a failure and zeros.
fn figures(test: &Test, tag: &AllocTag) -> Figures {
    let w = tag.read_waste();
    kunit_expect!(test, w.is_some(), "{} has no waste counters", tag.codetag());
    w.unwrap_or_default()
}

/// Expects `tag`'s figures once everything it tracked is freed: `frees` frees, nothing live.
fn expect_released(test: &Test, tag: &AllocTag, frees: u64) {
    let w = figures(test, tag);
    kunit_expect!(
        test,
        w.frees == frees && w.bytes == 0 && w.requested == 0,
        "{w:?}"
    );
}

/// kmalloc() of `size` bytes charged to `tag`.
fn kmalloc(tag: &'static AllocTag, size: usize) -> *mut c_void {
    // SAFETY: Allocating has no precondition.
    with_tag(tag, || unsafe {
        bindings::__kmalloc_noprof(size, bindings::GFP_KERNEL)
    })
}

/// Frees what [`kmalloc`] or krealloc() returned.
///
/// # Safety
///
/// `p` is null or came from kmalloc() or krealloc(), and is not used afterwards.
unsafe fn kfree(p: *mut c_void) {
    // SAFETY: As the caller guarantees.
    unsafe { bindings::kfree(p) };
}

/// Whether every slab vector has slots (booted with `alloctag.waste_slots=on`); skips the case
/// if not: its objects may come from slabs made before the accounting turned on.
fn slab_slots(test: &Test) -> bool {
    // SAFETY: No precondition.
    let reserved = unsafe { bindings::alloctag_waste_slots_reserved() };
    if !reserved {
        test.skip("slabs made while off have no slots: booted without alloctag.waste_slots=on");
    }
    reserved
}

test_tag!(KMALLOC_TAG, "alloctag_waste_kmalloc");

/// kmalloc(100) x 10 from kmalloc-128: requested 1000, bytes what /proc/allocinfo counts (ten
/// slots: 1280 without debug metadata), then back to zero with ten frees.
fn kmalloc_slack_exact(test: &Test) {
    if !slab_slots(test) {
        return;
    }
    turn(test, true);
    let mut objs = [ptr::null_mut::<c_void>(); 10];
    for o in objs.iter_mut() {
        *o = kmalloc(KMALLOC_TAG, 100);
        kunit_expect!(test, !o.is_null());
    }
    let w = figures(test, KMALLOC_TAG);
    let charged = KMALLOC_TAG.read().bytes;
    kunit_expect!(test, w.allocs == 10 && w.frees == 0, "{w:?}");
    kunit_expect!(test, w.requested == 1000, "{w:?}");
    kunit_expect!(test, w.bytes == charged, "{w:?}, allocinfo {charged}");
    // Each a slot of kmalloc-128: 128 bytes, more with debug metadata.
    let slot = w.bytes / 10;
    kunit_expect!(test, w.bytes == 10 * slot && slot >= 128, "{w:?}");
    // Without debug metadata, the figures exactly.
    if slot == 128 {
        kunit_expect!(
            test,
            w.bytes == 1280 && w.bytes - w.requested == 280,
            "{w:?}"
        );
    }
    for &o in objs.iter() {
        // SAFETY: `o` came from kmalloc() or krealloc() above, and is freed once.
        unsafe { kfree(o) };
    }
    let w = figures(test, KMALLOC_TAG);
    kunit_expect!(test, w.allocs == 10 && w.frees == 10, "{w:?}");
    kunit_expect!(test, w.bytes == 0 && w.requested == 0, "{w:?}");
    turn(test, false);
}

test_tag!(REALLOC_TAG, "alloctag_waste_krealloc");

/// krealloc() in place changes the request only; moving is a free and an allocation.
fn krealloc_in_place_and_moving(test: &Test) {
    if !slab_slots(test) {
        return;
    }
    turn(test, true);
    let obj = kmalloc(REALLOC_TAG, 100);
    // SAFETY: `obj` came from kmalloc; 120 bytes fit its 128.
    let same = with_tag(REALLOC_TAG, || unsafe {
        bindings::krealloc_noprof(obj, 120, bindings::GFP_KERNEL)
    });
    kunit_expect!(
        test,
        same == obj,
        "growing within the slot moved the object"
    );
    let w = figures(test, REALLOC_TAG);
    kunit_expect!(
        test,
        w.allocs == 1 && w.frees == 0 && w.requested == 120,
        "{w:?}"
    );
    // SAFETY: `same` came from krealloc; 3000 bytes do not fit.
    let moved = with_tag(REALLOC_TAG, || unsafe {
        bindings::krealloc_noprof(same, 3000, bindings::GFP_KERNEL)
    });
    kunit_expect!(test, !moved.is_null() && moved != same, "not moved");
    let w = figures(test, REALLOC_TAG);
    kunit_expect!(test, w.allocs == 2 && w.frees == 1, "{w:?}");
    kunit_expect!(test, w.requested == 3000, "{w:?}");
    kunit_expect!(test, w.bytes == REALLOC_TAG.read().bytes, "{w:?}");
    // SAFETY: `moved` came from kmalloc() or krealloc() above, and is freed once.
    unsafe { kfree(moved) };
    let w = figures(test, REALLOC_TAG);
    kunit_expect!(
        test,
        w.bytes == 0 && w.requested == 0 && w.frees == 2,
        "{w:?}"
    );
    turn(test, false);
}

/// A constructor, which keeps the test's cache from being merged with another.
extern "C" fn no_merge(_object: *mut c_void) {}

/// A cache of `size`-byte objects aligned to `align` (0: the default) that no other cache is
/// merged with; null if it was not made.
fn test_cache(name: &'static CStr, size: u32, align: u32) -> *mut bindings::kmem_cache {
    // SAFETY: All-zero is a valid `kmem_cache_args`.
    let mut args: bindings::kmem_cache_args = unsafe { core::mem::zeroed() };
    args.ctor = Some(no_merge);
    args.align = align;
    // SAFETY: The name is static; `args` is valid for the call.
    unsafe { bindings::__kmem_cache_create_args(name.as_char_ptr(), size, &mut args, 0) }
}

/// An object of `cache` charged to `tag`.
///
/// # Safety
///
/// `cache` is a live cache.
unsafe fn cache_alloc(tag: &'static AllocTag, cache: *mut bindings::kmem_cache) -> *mut c_void {
    // SAFETY: As the caller guarantees.
    with_tag(tag, || unsafe {
        bindings::kmem_cache_alloc_noprof(cache, bindings::GFP_KERNEL)
    })
}

test_tag!(CACHE_TAG, "alloctag_waste_cache");

/// A cache of 20-byte objects aligned to 64: requested is the object size, bytes the slot.
fn cache_object_below_slot(test: &Test) {
    let cache = test_cache(kernel::c_str!("alloctag_waste"), 20, 64);
    kunit_expect!(test, !cache.is_null(), "no cache");
    if cache.is_null() {
        return;
    }
    turn(test, true);
    let mut objs = [ptr::null_mut::<c_void>(); 3];
    for o in objs.iter_mut() {
        // SAFETY: `cache` is live.
        *o = unsafe { cache_alloc(CACHE_TAG, cache) };
    }
    let w = figures(test, CACHE_TAG);
    // What /proc/allocinfo charges: the slot, metadata included.
    let slot = CACHE_TAG.read().bytes / 3;
    kunit_expect!(test, slot >= 64, "slot {slot}");
    kunit_expect!(test, w.allocs == 3 && w.requested == 60, "{w:?}");
    kunit_expect!(test, w.bytes == 3 * slot, "{w:?}, slot {slot}");
    // SAFETY: The objects came from `cache`, each freed once.
    unsafe { bindings::kmem_cache_free_bulk(cache, 3, objs.as_mut_ptr()) };
    expect_released(test, CACHE_TAG, 3);
    turn(test, false);
    // SAFETY: Every object of `cache` is freed.
    unsafe { bindings::kmem_cache_destroy(cache) };
}

test_tag!(OFF_TAG, "alloctag_waste_off");

/// An object allocated while off, or in an earlier period, is untracked: its free takes
/// nothing back, and the figures never go negative.
fn untracked_objects_never_subtracted(test: &Test) {
    if !slab_slots(test) {
        return;
    }
    turn(test, false);
    let before = kmalloc(OFF_TAG, 100);
    turn(test, true);
    let during = kmalloc(OFF_TAG, 50);
    let w = figures(test, OFF_TAG);
    kunit_expect!(test, w.allocs == 1 && w.requested == 50, "{w:?}");
    // The untracked remainder: what allocinfo counts beyond the tracked bytes, one slot.
    let untracked = OFF_TAG.read().bytes - w.bytes;
    kunit_expect!(
        test,
        untracked > 0 && untracked >= w.bytes,
        "{w:?}, {untracked}"
    );
    // SAFETY: `before` came from kmalloc() or krealloc() above, and is freed once.
    unsafe { kfree(before) };
    let after = figures(test, OFF_TAG);
    kunit_expect!(test, after == w, "{w:?} -> {after:?}");
    // A new period: `during` was tracked in the last one.
    turn(test, false);
    turn(test, true);
    let w = figures(test, OFF_TAG);
    kunit_expect!(test, w == Figures::default(), "not zeroed: {w:?}");
    // SAFETY: `during` came from kmalloc() or krealloc() above, and is freed once.
    unsafe { kfree(during) };
    let w = figures(test, OFF_TAG);
    kunit_expect!(test, w == Figures::default(), "{w:?}");
    turn(test, false);
}

/// Off, the figures stay as they were; nothing more is counted.
fn off_keeps_the_figures(test: &Test) {
    if !slab_slots(test) {
        return;
    }
    turn(test, true);
    let obj = kmalloc(OFF_TAG, 100);
    turn(test, false);
    let w = figures(test, OFF_TAG);
    kunit_expect!(test, w.allocs == 1 && w.requested == 100, "{w:?}");
    let other = kmalloc(OFF_TAG, 100);
    // SAFETY: `obj` came from kmalloc() or krealloc() above, and is freed once.
    unsafe { kfree(obj) };
    // SAFETY: `other` came from kmalloc() or krealloc() above, and is freed once.
    unsafe { kfree(other) };
    kunit_expect!(test, figures(test, OFF_TAG) == w);
}

test_tag!(OLD_SLAB_TAG, "alloctag_waste_old_slab");
test_tag!(NEW_SLAB_TAG, "alloctag_waste_new_slab");

/// Slots come with a slab's vector. A slab whose vector was made while the accounting was off
/// has none: an object allocated in it while on is untracked, unless booted with slots
/// reserved. A slab whose vector was made while on keeps them: off, its objects are untracked;
/// on again, tracked. The task stays on one CPU, so that each allocation from a cache takes the
/// slab the one before it did (the caches are the test's own, of some 40 objects a slab).
fn slabs_made_while_on_get_slots(test: &Test) {
    // SAFETY: No precondition.
    let reserved = unsafe { bindings::alloctag_waste_slots_reserved() };
    turn(test, false);
    let old = test_cache(kernel::c_str!("alloctag_waste_old"), 100, 0);
    let new = test_cache(kernel::c_str!("alloctag_waste_new"), 100, 0);
    kunit_expect!(test, !old.is_null() && !new.is_null(), "no cache");
    if !old.is_null() && !new.is_null() {
        // SAFETY: Undone below; the task may sleep meanwhile.
        unsafe { bindings::migrate_disable() };
        // SAFETY: `old` is live. Its slab's vector is made now, while off.
        let before = unsafe { cache_alloc(OLD_SLAB_TAG, old) };
        turn(test, true);
        // SAFETY: `old` is live. The same slab.
        let during = unsafe { cache_alloc(OLD_SLAB_TAG, old) };
        let w = figures(test, OLD_SLAB_TAG);
        let tracked = Figures {
            allocs: 1,
            bytes: OLD_SLAB_TAG.read().bytes / 2,
            requested: 100,
            ..Figures::default()
        };
        let expected = if reserved {
            tracked
        } else {
            Figures::default()
        };
        kunit_expect!(test, w == expected, "{w:?}, slots reserved: {reserved}");
        // SAFETY: `new` is live. Its slab's vector is made now, while on.
        let first = unsafe { cache_alloc(NEW_SLAB_TAG, new) };
        let w = figures(test, NEW_SLAB_TAG);
        kunit_expect!(test, w.allocs == 1 && w.requested == 100, "{w:?}");
        turn(test, false);
        // SAFETY: `new` is live. The same slab, while off.
        let off = unsafe { cache_alloc(NEW_SLAB_TAG, new) };
        turn(test, true);
        // SAFETY: `new` is live. The same slab, whose slots stayed.
        let again = unsafe { cache_alloc(NEW_SLAB_TAG, new) };
        let w = figures(test, NEW_SLAB_TAG);
        let slot = NEW_SLAB_TAG.read().bytes / 3;
        kunit_expect!(
            test,
            w.allocs == 1 && w.requested == 100 && w.bytes == slot,
            "{w:?}, slot {slot}"
        );
        // SAFETY: Paired with the migrate_disable() above.
        unsafe { bindings::migrate_enable() };
        for (cache, mut objs) in [
            (old, [before, during, ptr::null_mut()]),
            (new, [first, off, again]),
        ] {
            for o in objs.iter_mut().filter(|o| !o.is_null()) {
                // SAFETY: `*o` came from `cache`, and is freed once.
                unsafe { bindings::kmem_cache_free(cache, *o) };
                *o = ptr::null_mut();
            }
        }
        // Of the objects of this period, only `again`: `during` (tracked with slots reserved)
        // and `first` were of the last one.
        expect_released(test, NEW_SLAB_TAG, 1);
        let w = figures(test, OLD_SLAB_TAG);
        kunit_expect!(test, w == Figures::default(), "{w:?}");
    }
    turn(test, false);
    for cache in [old, new].into_iter().filter(|c| !c.is_null()) {
        // SAFETY: Every object of `cache` is freed.
        unsafe { bindings::kmem_cache_destroy(cache) };
    }
}

test_tag!(FLAGS_TAG, "alloctag_waste_flags");

/// A slab whose vector has slots looks to every other reader of its pages as a slab without:
/// the mark says so where only slab code reads (`slab->obj_exts`), and no page flag changes.
/// Page flags alias: `PG_owner_priv_1` is also `PG_swapcache`, `PG_checked`, `PG_foreign` and
/// more, which code outside the slab allocator tests on pages kmalloc() gave it (xen-netback
/// on an skb's head), and `/proc/kpageflags` shows.
fn slots_leave_page_flags_alone(test: &Test) {
    // SAFETY: No precondition.
    let reserved = unsafe { bindings::alloctag_waste_slots_reserved() };
    let plain = test_cache(kernel::c_str!("alloctag_waste_plain"), 100, 0);
    let slotted = test_cache(kernel::c_str!("alloctag_waste_slotted"), 100, 0);
    kunit_expect!(test, !plain.is_null() && !slotted.is_null(), "no cache");
    if plain.is_null() || slotted.is_null() {
        return;
    }
    turn(test, false);
    // SAFETY: `plain` is live. Its slab's vector is made now, while off: no slots, unless
    // reserved at boot.
    let without = unsafe { cache_alloc(FLAGS_TAG, plain) };
    turn(test, true);
    // SAFETY: `slotted` is live. Its slab's vector is made now, while on: with slots.
    let with = unsafe { cache_alloc(FLAGS_TAG, slotted) };
    let w = figures(test, FLAGS_TAG);
    kunit_expect!(
        test,
        w.allocs == 1 && w.requested == 100,
        "the object is not tracked, its slab has no slots: {w:?}"
    );
    if !without.is_null() && !with.is_null() {
        // SAFETY: Both are live slab objects.
        let (owner_priv, flags, flags_without) = unsafe {
            (
                bindings::alloctag_test_page_owner_priv_1(with),
                bindings::alloctag_test_page_flags(with),
                bindings::alloctag_test_page_flags(without),
            )
        };
        kunit_expect!(
            test,
            !owner_priv,
            "PG_owner_priv_1 (PageForeign, PageChecked, PageSwapCache) set on a slab with slots"
        );
        kunit_expect!(
            test,
            flags == flags_without,
            "page flags {flags:#x} with slots, {flags_without:#x} without (slots reserved: \
             {reserved})"
        );
    }
    for (cache, obj) in [(plain, without), (slotted, with)] {
        if !obj.is_null() {
            // SAFETY: `obj` came from `cache`, and is freed once.
            unsafe { bindings::kmem_cache_free(cache, obj) };
        }
    }
    turn(test, false);
    for cache in [plain, slotted] {
        // SAFETY: Every object of `cache` is freed.
        unsafe { bindings::kmem_cache_destroy(cache) };
    }
}

/// The dynamic tag of line `line` of this file.
fn dynamic_tag(test: &Test, line: u32) -> Option<&'static AllocTag> {
    let tag = find_dynamic_in(b"src/tests/waste.rs", line);
    kunit_expect!(test, tag.is_some(), "no dynamic tag at line {line}");
    tag
}

/// A Rust `KVec` made with room for 100 bytes, then grown past it by a push: the push's line
/// reallocates (kmalloc-128 to a larger cache: a move), so the first line's object is freed
/// and the push's line holds the new one, with the vector's new capacity requested.
#[inline(never)]
fn rust_kvec_growth(test: &Test) {
    if !slab_slots(test) {
        return;
    }
    turn(test, true);
    let made_line = line!() + 1;
    let v = KVec::<u8>::with_capacity(100, GFP_KERNEL);
    kunit_expect!(test, v.is_ok());
    let Ok(mut v) = v else { return };
    let Some(made) = dynamic_tag(test, made_line) else {
        return;
    };
    let w = figures(test, made);
    kunit_expect!(test, w.allocs == 1 && w.requested == 100, "{w:?}");
    kunit_expect!(test, w.bytes == made.read().bytes, "{w:?}");
    let mut push_line = 0;
    for i in 0..101u8 {
        push_line = line!() + 1;
        kunit_expect!(test, v.push(i, GFP_KERNEL).is_ok());
    }
    let cap = i64::try_from(v.capacity()).unwrap_or(0);
    expect_released(test, made, 1);
    if let Some(pushed) = dynamic_tag(test, push_line) {
        let w = figures(test, pushed);
        kunit_expect!(test, w.allocs == 1 && w.frees == 0, "{w:?}");
        kunit_expect!(
            test,
            w.requested == cap && cap >= 101,
            "{w:?}, capacity {cap}"
        );
        kunit_expect!(test, w.bytes == pushed.read().bytes, "{w:?}");
        drop(v);
        expect_released(test, pushed, 1);
    }
    turn(test, false);
}

test_tag!(VMALLOC_TAG, "alloctag_waste_vmalloc");

/// vmalloc() of `size` bytes charged to [`VMALLOC_TAG`].
fn vmalloc(size: usize) -> *mut c_void {
    // SAFETY: Allocating has no precondition.
    with_tag(VMALLOC_TAG, || unsafe { bindings::vmalloc_noprof(size) })
}

/// vrealloc() of `p` to `size` bytes charged to [`VMALLOC_TAG`].
///
/// # Safety
///
/// `p` is null or came from vmalloc() or vrealloc(); it is not used afterwards unless it is
/// what this returns.
unsafe fn vrealloc(p: *mut c_void, size: usize) -> *mut c_void {
    // SAFETY: As the caller guarantees.
    with_tag(VMALLOC_TAG, || unsafe {
        bindings::vrealloc_noprof(p, size, bindings::GFP_KERNEL)
    })
}

/// Frees what [`vmalloc`] or [`vrealloc`] returned.
///
/// # Safety
///
/// `p` is null or came from vmalloc() or vrealloc(), and is not used afterwards.
unsafe fn vfree(p: *mut c_void) {
    // SAFETY: As the caller guarantees.
    unsafe { bindings::vfree(p) };
}

/// The bytes of `pages` pages.
fn pages(pages: usize) -> i64 {
    (pages * bindings::PAGE_SIZE) as i64
}

/// The checks of [`vmalloc_non_page_multiple`] after each step: `areas` live areas requesting
/// `requested` bytes, the last of `pages_mapped` pages; each area also has its pages array, a
/// slab object of the caller's of a pointer per page.
fn expect_areas(test: &Test, w: &Figures, requested: i64, pages_mapped: usize, step: &str) {
    let array = (pages_mapped * core::mem::size_of::<*mut c_void>()) as i64;
    let charged = VMALLOC_TAG.read().bytes;
    kunit_expect!(test, w.requested == requested + array, "{step}: {w:?}");
    kunit_expect!(
        test,
        w.bytes == charged,
        "{step}: {w:?}, allocinfo {charged}"
    );
    // The pages mapped, and the array's slot, more with debug metadata.
    let slot = w.bytes - pages(pages_mapped);
    kunit_expect!(
        test,
        slot >= array && slot < 2 * array + 64,
        "{step}: slot {slot}"
    );
}

/// vmalloc(5000) maps two pages: requested 5000, bytes 8192, one allocation (plus its pages
/// array's); vrealloc() within the pages changes the request only; beyond them it moves: a new
/// area and a free; vfree() takes back exactly what was added.
fn vmalloc_non_page_multiple(test: &Test) {
    if !slab_slots(test) {
        return;
    }
    turn(test, true);
    let p = vmalloc(5000);
    kunit_expect!(test, !p.is_null(), "no area");
    if p.is_null() {
        turn(test, false);
        return;
    }
    let w = figures(test, VMALLOC_TAG);
    kunit_expect!(test, w.allocs == 2 && w.frees == 0, "{w:?}");
    expect_areas(test, &w, 5000, 2, "vmalloc");
    // SAFETY: `p` came from vmalloc() or vrealloc() above; only the result is used after.
    let same = unsafe { vrealloc(p, 7000) };
    kunit_expect!(test, same == p, "growing within the pages moved the area");
    let w = figures(test, VMALLOC_TAG);
    kunit_expect!(test, w.allocs == 2 && w.frees == 0, "{w:?}");
    expect_areas(test, &w, 7000, 2, "vrealloc in place");
    // SAFETY: `same` came from vmalloc() or vrealloc() above; only the result is used after.
    let moved = unsafe { vrealloc(same, 9000) };
    kunit_expect!(test, !moved.is_null() && moved != same, "not moved");
    let w = figures(test, VMALLOC_TAG);
    kunit_expect!(test, w.allocs == 4 && w.frees == 2, "{w:?}");
    expect_areas(test, &w, 9000, 3, "vrealloc moving");
    // SAFETY: `moved` came from vmalloc() or vrealloc() above, and is freed once.
    unsafe { vfree(moved) };
    let w = figures(test, VMALLOC_TAG);
    kunit_expect!(test, w.allocs == 4 && w.frees == 4, "{w:?}");
    kunit_expect!(test, w.bytes == 0 && w.requested == 0, "{w:?}");
    turn(test, false);
}

/// An area allocated while off is untracked: neither its in-place vrealloc() nor its vfree()
/// changes the figures.
fn vmalloc_from_off_untracked(test: &Test) {
    turn(test, false);
    let p = vmalloc(3000);
    turn(test, true);
    let before = figures(test, VMALLOC_TAG);
    kunit_expect!(test, before == Figures::default(), "{before:?}");
    // SAFETY: `p` came from vmalloc() or vrealloc() above; only the result is used after.
    let same = unsafe { vrealloc(p, 4000) };
    kunit_expect!(test, same == p, "moved");
    // SAFETY: `same` came from vmalloc() or vrealloc() above, and is freed once.
    unsafe { vfree(same) };
    let after = figures(test, VMALLOC_TAG);
    kunit_expect!(test, after == before, "{before:?} -> {after:?}");
    turn(test, false);
}

/// The bytes an area of `size` bytes adds to its site's request: `size`, and its array of a
/// page pointer per page.
fn area_request(size: usize) -> i64 {
    let page = bindings::PAGE_SIZE;
    (size + size.div_ceil(page) * core::mem::size_of::<*mut c_void>()) as i64
}

/// A Rust `VVec` made with room for 5000 bytes (two pages), then grown past its pages by a
/// push: vrealloc() moves it, so the first line's area is freed and the push's line holds the
/// new one, with the vector's new capacity requested.
#[inline(never)]
fn rust_vvec_growth(test: &Test) {
    if !slab_slots(test) {
        return;
    }
    turn(test, true);
    let made_line = line!() + 1;
    let v = VVec::<u8>::with_capacity(5000, GFP_KERNEL);
    kunit_expect!(test, v.is_ok());
    let Ok(mut v) = v else { return };
    let Some(made) = dynamic_tag(test, made_line) else {
        return;
    };
    let w = figures(test, made);
    kunit_expect!(
        test,
        w.allocs == 2 && w.requested == area_request(5000),
        "{w:?}"
    );
    kunit_expect!(test, w.bytes == made.read().bytes, "{w:?}");
    kunit_expect!(test, v.extend_with(5000, 0, GFP_KERNEL).is_ok());
    let push_line = line!() + 1;
    kunit_expect!(test, v.push(1, GFP_KERNEL).is_ok());
    let cap = v.capacity();
    expect_released(test, made, 2);
    if let Some(pushed) = dynamic_tag(test, push_line) {
        let w = figures(test, pushed);
        kunit_expect!(test, w.allocs == 2 && w.frees == 0, "{w:?}");
        kunit_expect!(
            test,
            w.requested == area_request(cap) && cap > 8192,
            "{w:?}, capacity {cap}"
        );
        kunit_expect!(test, w.bytes == pushed.read().bytes, "{w:?}");
        drop(v);
        expect_released(test, pushed, 2);
    }
    turn(test, false);
}

test_tag!(PAGES_TAG, "alloctag_waste_pages");

/// Whether pages have slots (booted with `alloctag.waste_slots=on`); skips the case if not.
fn page_slots(test: &Test) -> bool {
    // SAFETY: No precondition.
    let on = unsafe { bindings::alloctag_waste_pages_on() };
    if !on {
        test.skip("pages have no slots: booted without alloctag.waste_slots=on");
    }
    on
}

/// `f` charged to [`PAGES_TAG`]; then the figures and what /proc/allocinfo charges it.
fn pages_step<R>(test: &Test, f: impl FnOnce() -> R) -> (R, Figures, i64) {
    let r = with_tag(PAGES_TAG, f);
    (r, figures(test, PAGES_TAG), PAGES_TAG.read().bytes)
}

/// Pages: an order-2 allocation asks for all it gets; alloc_pages_exact() for less, on its
/// last page, each page kept an allocation of its own and the tail freed; a kmalloc() above
/// 8 KiB and its krealloc() in place; all back to zero when freed, and an allocation made while
/// off is never taken back.
fn pages_exact_figures(test: &Test) {
    if !page_slots(test) {
        return;
    }
    let page = bindings::PAGE_SIZE as i64;
    turn(test, false);
    let before = with_tag(PAGES_TAG, || alloc_pages(0));
    turn(test, true);
    let (p, w, charged) = pages_step(test, || alloc_pages(2));
    kunit_expect!(test, !p.is_null(), "no pages");
    kunit_expect!(test, w.allocs == 1 && w.bytes == 4 * page, "{w:?}");
    kunit_expect!(test, w.requested == w.bytes, "{w:?}");
    kunit_expect!(
        test,
        charged == w.bytes + page,
        "{w:?}, allocinfo {charged}"
    );
    // SAFETY: Freed once each, with their orders.
    unsafe {
        bindings::__free_pages(p, 2);
        bindings::__free_pages(before, 0);
    }
    expect_released(test, PAGES_TAG, 1);

    // 9000 bytes: order 2, three pages kept (three allocations once split), one freed.
    // SAFETY: Allocating has no precondition.
    let (e, w, charged) = pages_step(test, || unsafe {
        bindings::alloc_pages_exact_noprof(9000, bindings::GFP_KERNEL)
    });
    kunit_expect!(test, !e.is_null(), "no exact pages");
    kunit_expect!(test, w.allocs == 1 + 4 && w.frees == 1 + 1, "{w:?}");
    kunit_expect!(test, w.bytes == 3 * page && w.requested == 9000, "{w:?}");
    kunit_expect!(test, charged == w.bytes, "{w:?}, allocinfo {charged}");
    // SAFETY: `e` came from alloc_pages_exact() for 9000 bytes.
    unsafe { bindings::free_pages_exact(e, 9000) };
    expect_released(test, PAGES_TAG, 5);

    // A kmalloc() above 8 KiB is pages: 20000 bytes of an order-3 folio, then 30000 in place.
    // SAFETY: Allocating has no precondition.
    let (k, w, _) = pages_step(test, || unsafe {
        bindings::__kmalloc_noprof(20000, bindings::GFP_KERNEL)
    });
    kunit_expect!(test, !k.is_null(), "no large kmalloc");
    kunit_expect!(
        test,
        w.allocs == 6 && w.bytes == 8 * page && w.requested == 20000,
        "{w:?}"
    );
    // SAFETY: `k` came from kmalloc; 30000 bytes fit its 32 KiB.
    let (same, w, _) = pages_step(test, || unsafe {
        bindings::krealloc_noprof(k, 30000, bindings::GFP_KERNEL)
    });
    kunit_expect!(test, same == k, "moved");
    kunit_expect!(test, w.bytes == 8 * page && w.requested == 30000, "{w:?}");
    // SAFETY: `same` came from kmalloc() or krealloc() above, and is freed once.
    unsafe { kfree(same) };
    expect_released(test, PAGES_TAG, 6);
    turn(test, false);
}

/// `__free_pages()` of an order-2 block whose first page someone else holds frees the other
/// three at once: the allocation is one page from then on, and the last put frees it.
fn pages_tail_freed_while_head_held(test: &Test) {
    if !page_slots(test) {
        return;
    }
    let page = bindings::PAGE_SIZE as i64;
    turn(test, true);
    let p = with_tag(PAGES_TAG, || alloc_pages(2));
    kunit_expect!(test, !p.is_null(), "no pages");
    if p.is_null() {
        turn(test, false);
        return;
    }
    // SAFETY: `p` was allocated above at order 2, not compound; the extra reference on its
    // first page is dropped below, which frees that page; `__free_pages()` frees the others.
    unsafe {
        bindings::alloctag_test_get_page(p);
        bindings::__free_pages(p, 2);
    }
    let w = figures(test, PAGES_TAG);
    kunit_expect!(test, w.allocs == 1 && w.frees == 0, "{w:?}");
    kunit_expect!(test, w.bytes == page && w.requested == page, "{w:?}");
    kunit_expect!(
        test,
        PAGES_TAG.read().bytes == page,
        "{:?}",
        PAGES_TAG.read()
    );
    // SAFETY: Drops the reference taken above, the last one: the first page is freed.
    unsafe { bindings::alloctag_test_put_page(p) };
    expect_released(test, PAGES_TAG, 1);
    turn(test, false);
}

test_tag!(MIGRATE_TAG, "alloctag_waste_migrate");
test_tag!(TARGET_TAG, "alloctag_waste_target");

/// Migration moves the charge of a page to its target: the slot moves with it, the target's
/// own allocation is taken back, and the old page's free takes nothing.
#[cfg(CONFIG_MIGRATION)]
fn migration_moves_the_slot(test: &Test) {
    if !page_slots(test) {
        return;
    }
    let page = bindings::PAGE_SIZE as i64;
    turn(test, true);
    let old = with_tag(MIGRATE_TAG, || alloc_pages(0));
    let new = with_tag(TARGET_TAG, || alloc_pages(0));
    kunit_expect!(test, !old.is_null() && !new.is_null(), "no pages");
    if old.is_null() || new.is_null() {
        for p in [old, new].into_iter().filter(|p| !p.is_null()) {
            // SAFETY: An order-0 page from above.
            unsafe { bindings::__free_pages(p, 0) };
        }
        turn(test, false);
        return;
    }
    // SAFETY: Both are order-0 pages this case owns, each its own folio, neither mapped, on an
    // LRU list or in a page cache.
    unsafe { super::migrate_flags(new, old) };
    let target = figures(test, TARGET_TAG);
    kunit_expect!(
        test,
        target.allocs == 1 && target.frees == 1 && target.bytes == 0,
        "{target:?}"
    );
    let w = figures(test, MIGRATE_TAG);
    kunit_expect!(
        test,
        w.allocs == 1 && w.frees == 0 && w.bytes == page,
        "{w:?}"
    );
    // SAFETY: `old` is an order-0 page; migration cleared its tag reference.
    unsafe { bindings::__free_pages(old, 0) };
    kunit_expect!(
        test,
        figures(test, MIGRATE_TAG) == w,
        "the old page took the charge back"
    );
    // SAFETY: `new` is an order-0 page, now charged to `MIGRATE_TAG`.
    unsafe { bindings::__free_pages(new, 0) };
    expect_released(test, MIGRATE_TAG, 1);
    kunit_expect!(test, figures(test, TARGET_TAG) == target);
    turn(test, false);
}

/// Without page migration there is nothing to move.
#[cfg(not(CONFIG_MIGRATION))]
fn migration_moves_the_slot(test: &Test) {
    test.skip("CONFIG_MIGRATION is off");
}

/// Without page slots, pages are untracked: their bytes are /proc/allocinfo's alone.
fn pages_untracked_without_slots(test: &Test) {
    // SAFETY: No precondition.
    if unsafe { bindings::alloctag_waste_pages_on() } {
        test.skip("pages have slots: booted with alloctag.waste_slots=on");
        return;
    }
    turn(test, true);
    let (p, w, charged) = pages_step(test, || alloc_pages(2));
    kunit_expect!(test, !p.is_null(), "no pages");
    kunit_expect!(test, w == Figures::default(), "{w:?}");
    kunit_expect!(
        test,
        charged >= 4 * bindings::PAGE_SIZE as i64,
        "allocinfo {charged}"
    );
    // SAFETY: Freed once, with its order.
    unsafe { bindings::__free_pages(p, 2) };
    kunit_expect!(test, figures(test, PAGES_TAG) == Figures::default());
    turn(test, false);
}

test_tag!(RACE_TAG, "alloctag_waste_race");

/// Threads of [`on_off_racing_allocations`] running, and stopping.
static RACE_RUNNING: AtomicUsize = AtomicUsize::new(0);
static RACE_STOP: AtomicBool = AtomicBool::new(false);
/// Whether the threads ran at once.
static RACE_OVERLAP: Overlap = Overlap::new();

/// A thread of [`on_off_racing_allocations`]: allocates and frees at [`RACE_TAG`], holding
/// up to 16 slab objects and 4 blocks of pages (order 0 or 1, which have slots in a boot that
/// reserved them), until told to stop; then frees what it holds.
///
/// # Safety
///
/// Called by the kthread core.
unsafe extern "C" fn race_thread(_data: *mut c_void) -> core::ffi::c_int {
    let mut held = [ptr::null_mut::<c_void>(); 16];
    let mut pages = [(ptr::null_mut::<bindings::page>(), 0u32); 4];
    let mut i = 0usize;
    while !RACE_STOP.load(Ordering::Acquire) {
        RACE_OVERLAP.work(|| {
            let slot = &mut held[i % held.len()];
            if !slot.is_null() {
                // SAFETY: `*slot` came from kmalloc() or krealloc() above, and is freed once.
                unsafe { kfree(*slot) };
            }
            *slot = kmalloc(RACE_TAG, 24 + i % 200);
            if i % 8 == 0 {
                let (page, order) = &mut pages[(i / 8) % 4];
                if !page.is_null() {
                    // SAFETY: `*page` came from alloc_pages() below with `*order`, freed once.
                    unsafe { bindings::__free_pages(*page, *order) };
                }
                *order = (i / 32 % 2) as u32;
                *page = with_tag(RACE_TAG, || alloc_pages(*order));
            }
        });
        i += 1;
        if i % 256 == 0 {
            // SAFETY: Process context; lets the toggling thread run.
            unsafe { bindings::msleep(1) };
        }
    }
    for p in held.iter().filter(|p| !p.is_null()) {
        // SAFETY: `*p` came from kmalloc() or krealloc() above, and is freed once.
        unsafe { kfree(*p) };
    }
    for &(page, order) in pages.iter().filter(|(p, _)| !p.is_null()) {
        // SAFETY: `page` came from alloc_pages() above with `order`, and is freed once.
        unsafe { bindings::__free_pages(page, order) };
    }
    RACE_RUNNING.fetch_sub(1, Ordering::Release);
    0
}

/// Turning the accounting on and off while threads on every CPU allocate and free slab objects
/// and pages at one site: once they have freed everything in the last period, its figures are
/// exactly zero and its allocations and frees equal (lockdep and KASAN watch the slow paths
/// meanwhile).
fn on_off_racing_allocations(test: &Test) {
    const THREADS: usize = 4;
    turn(test, false);
    RACE_STOP.store(false, Ordering::Relaxed);
    RACE_RUNNING.store(0, Ordering::Relaxed);
    RACE_OVERLAP.reset();
    for t in 0..THREADS {
        // SAFETY: `race_thread` ignores its data; the name is a NUL-terminated format with
        // one integer.
        let task = unsafe {
            bindings::kthread_create_on_node(
                Some(race_thread),
                ptr::null_mut(),
                bindings::NUMA_NO_NODE,
                kernel::c_str!("alloctag-waste%d").as_char_ptr(),
                t as core::ffi::c_int,
            )
        };
        if (task as usize) >= (-(bindings::MAX_ERRNO as isize)) as usize {
            kunit_expect!(test, false, "kthread {t} not created");
            continue;
        }
        RACE_RUNNING.fetch_add(1, Ordering::Relaxed);
        // SAFETY: `task` is a new kthread, not yet woken.
        unsafe { bindings::wake_up_process(task) };
    }
    for round in 0..40 {
        turn(test, round % 2 == 0);
        // SAFETY: Process context.
        unsafe { bindings::msleep(5) };
        // A read while the threads run: per-CPU sums, exact only once they stop.
        let _ = figures(test, RACE_TAG);
    }
    turn(test, true);
    // SAFETY: Process context; the threads allocate in the last period meanwhile.
    unsafe { bindings::msleep(50) };
    RACE_STOP.store(true, Ordering::Release);
    let mut waits = 0;
    while RACE_RUNNING.load(Ordering::Acquire) > 0 && waits < 3000 {
        // SAFETY: Process context.
        unsafe { bindings::msleep(10) };
        waits += 1;
    }
    kunit_expect!(
        test,
        RACE_RUNNING.load(Ordering::Acquire) == 0,
        "threads still running"
    );
    RACE_OVERLAP.check(test);
    let w = figures(test, RACE_TAG);
    kunit_expect!(test, w.bytes == 0 && w.requested == 0, "{w:?}");
    // Something was counted in the last period, which the threads' final frees end.
    kunit_expect!(test, w.allocs > 0, "{w:?}");
    kunit_expect!(test, w.allocs == w.frees, "{w:?}");
    kunit_expect!(
        test,
        RACE_TAG.read().bytes == 0,
        "allocinfo: {:?}",
        RACE_TAG.read()
    );
    turn(test, false);
}

/// Bad control input fails with EINVAL and changes nothing.
fn bad_input_changes_nothing(test: &Test) {
    turn(test, false);
    for bad in [&b"maybe"[..], b"", b"on\n\n", b"ON", b" on", b"1"] {
        let r = waste::run(bad);
        kunit_expect!(test, r == Err(EINVAL), "{bad:?}: {r:?}");
        kunit_expect!(test, !waste::is_on(), "{bad:?} turned it on");
    }
    kunit_expect!(test, waste::run(b"on\n").is_ok() && waste::is_on());
    kunit_expect!(
        test,
        waste::run(b"on").is_ok() && waste::is_on(),
        "on twice"
    );
    kunit_expect!(test, waste::run(b"off").is_ok() && !waste::is_on());
}

kunit_suite!(
    waste_suite,
    "alloctag_waste",
    [
        kmalloc_slack_exact,
        krealloc_in_place_and_moving,
        cache_object_below_slot,
        untracked_objects_never_subtracted,
        off_keeps_the_figures,
        slabs_made_while_on_get_slots,
        slots_leave_page_flags_alone,
        rust_kvec_growth,
        vmalloc_non_page_multiple,
        vmalloc_from_off_untracked,
        rust_vvec_growth,
        pages_exact_figures,
        pages_tail_freed_while_head_held,
        migration_moves_the_slot,
        pages_untracked_without_slots,
        on_off_racing_allocations,
        bad_input_changes_nothing,
    ]
);
