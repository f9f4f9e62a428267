// SPDX-License-Identifier: GPL-2.0

//! The code-tag library's index (src/codetag/registry/index.rs) and page tags in page flags
//! (include/linux/alloctag_pgflags.h): blocks of indices per segment, each tag given its index
//! and the table naming it, a freed block taken again, no room; and, on a kernel booted with
//! `sysctl.vm.mem_profiling=1,compressed`,
//! a page's index naming the tag that was charged, for a vmlinux tag (inline) and a dynamic one
//! (the index). Those cases are skipped where page tags are in page_ext.

use super::{alloc_pages, test_tag, with_tag};
use crate::{
    alloc_tag::{dynamic::pool, index, AllocTag},
    codetag::{TagIndex, FIRST_INDEX},
    kunit::{kunit_expect, kunit_suite, Test},
    rwsem::c_rwsem,
};
use core::{
    panic::Location,
    ptr,
    sync::atomic::{AtomicU32, Ordering},
};
use kernel::{bindings, page::PAGE_SIZE, prelude::*};

/// The test index's table: two leaves, indices 0 to 1023.
static mut TEST_DIR: [*mut usize; 2] = [ptr::null_mut(); 2];

/// An index of the test's own, over arrays that stand for tags.
static TEST_INDEX: TagIndex =
    // SAFETY: `alloctag_test_index_lock` is defined with `DECLARE_RWSEM()` for this index alone;
    // `TEST_DIR` is this index's alone and holds 2 null pointers.
    unsafe {
        TagIndex::new(
            c_rwsem!(alloctag_test_index_lock),
            (&raw mut TEST_DIR).cast(),
            2,
        )
    };

/// A fake tag: a bare `struct codetag`, whose index the test index sets.
const FAKE: bindings::codetag = bindings::codetag {
    flags: 0,
    lineno: 0,
    modname: ptr::null(),
    function: ptr::null(),
    filename: ptr::null(),
    index: 0,
    #[cfg(CONFIG_ALLOCTAG_PER_NODE)]
    node_slots: 0,
};

/// Fake tags, only ever touched by this test and the test index, their indices atomically.
static mut TAGS_A: [bindings::codetag; 3] = [FAKE; 3];
static mut TAGS_B: [bindings::codetag; 4] = [FAKE; 4];
static mut TAGS_C: [bindings::codetag; 2] = [FAKE; 2];

/// The size of a fake tag.
const SIZE: usize = core::mem::size_of::<bindings::codetag>();

/// The address of tag `i` of `tags`.
fn addr(tags: *const bindings::codetag, i: usize) -> usize {
    tags as usize + i * SIZE
}

/// The index that tag `i` of `tags` carries.
fn index_of(tags: *mut bindings::codetag, i: usize) -> usize {
    // SAFETY: The callers pass a static array of more than `i` fake tags, whose indices are
    // only accessed atomically.
    unsafe { AtomicU32::from_ptr(&raw mut (*tags.add(i)).index) }.load(Ordering::Acquire) as usize
}

/// The indices that `tags`' first `n` tags carry, in order.
fn indices(tags: *mut bindings::codetag, n: usize) -> [usize; 4] {
    let mut v = [0; 4];
    for (i, x) in v.iter_mut().enumerate().take(n) {
        *x = index_of(tags, i);
    }
    v
}

/// Adds `n` of the fake tags at `tags` to the test index.
fn add(tags: *mut bindings::codetag, n: usize) -> Result<usize> {
    // SAFETY: Static fake tags, each a `struct codetag`, accessed atomically only while indexed.
    unsafe { TEST_INDEX.add(tags.cast_const().cast(), n, SIZE) }
}

/// Removes the fake tags at `tags` from the test index.
fn remove(tags: *mut bindings::codetag) {
    // SAFETY: Static fake tags: they live forever.
    unsafe { TEST_INDEX.remove(tags.cast_const().cast()) }
}

fn blocks_lookups_and_reuse(test: &Test) {
    let (a_tags, b_tags, c_tags) = (
        (&raw mut TAGS_A).cast::<bindings::codetag>(),
        (&raw mut TAGS_B).cast::<bindings::codetag>(),
        (&raw mut TAGS_C).cast::<bindings::codetag>(),
    );
    kunit_expect!(
        test,
        add(a_tags, 3) == Err(ENODEV) && indices(a_tags, 3) == [0; 4],
        "an index that is off gave out indices"
    );
    TEST_INDEX.enable(10, 20);
    kunit_expect!(
        test,
        TEST_INDEX.tag_at(10) == 0 && TEST_INDEX.tag_at(5000) == 0,
        "entries before any segment"
    );
    let a = add(a_tags, 3);
    let b = add(b_tags, 4);
    kunit_expect!(
        test,
        a == Ok(10) && b == Ok(13),
        "blocks {a:?} {b:?}, not 10 and 13"
    );
    // Each tag carries its index, and the table names it by that index.
    kunit_expect!(
        test,
        indices(a_tags, 3) == [10, 11, 12, 0] && indices(b_tags, 4) == [13, 14, 15, 16],
        "tags carry {:?} and {:?}",
        indices(a_tags, 3),
        indices(b_tags, 4)
    );
    // Used: the 10 reserved below `first` and the two blocks; nothing refused, the index being
    // off not counting as a refusal.
    let u = TEST_INDEX.usage();
    kunit_expect!(
        test,
        (u.used, u.capacity, u.refused) == (17, 20, 0),
        "usage {u:?}, not 17 of 20 used, 0 refused"
    );
    kunit_expect!(test, TEST_INDEX.tag_at(12) == addr(a_tags, 2));
    kunit_expect!(test, TEST_INDEX.tag_at(13) == addr(b_tags, 0));
    kunit_expect!(
        test,
        TEST_INDEX.tag_at(17) == 0 && TEST_INDEX.tag_at(9) == 0
    );
    // A removed segment's block is free again, first fit; the rest do not move. Its tags lose
    // their indices.
    remove(a_tags);
    kunit_expect!(
        test,
        indices(a_tags, 3) == [0; 4] && TEST_INDEX.tag_at(10) == 0 && TEST_INDEX.tag_at(12) == 0,
        "a removed segment's tags or entries kept their indices"
    );
    kunit_expect!(test, indices(b_tags, 4) == [13, 14, 15, 16]);
    let c = add(c_tags, 2);
    kunit_expect!(
        test,
        c == Ok(10) && indices(c_tags, 2) == [10, 11, 0, 0],
        "the freed block was not taken again: {c:?}"
    );
    kunit_expect!(test, TEST_INDEX.tag_at(14) == addr(b_tags, 1));
    // 20 indices: 10 to 19; 12 and 17 to 19 are free, four in a row are not. The failure
    // leaves the tags as they were.
    let d = add(b_tags, 4);
    kunit_expect!(
        test,
        d == Err(ENOSPC) && indices(b_tags, 4) == [13, 14, 15, 16],
        "four indices found where three are left: {d:?}"
    );
    kunit_expect!(test, TEST_INDEX.segments() == 2);
    // The status file counts the four tags refused (src/status.rs).
    let u = TEST_INDEX.usage();
    kunit_expect!(
        test,
        (u.used, u.refused) == (16, 4),
        "usage {u:?} after a refusal, not 16 used and 4 refused"
    );
    remove(b_tags);
    let u = TEST_INDEX.usage();
    kunit_expect!(
        test,
        (u.used, u.refused) == (12, 0),
        "usage {u:?} after the refused tags were removed, not 12 used and 0 refused"
    );
    remove(c_tags);
    kunit_expect!(
        test,
        TEST_INDEX.segments() == 0
            && TEST_INDEX.tag_at(10) == 0
            && indices(b_tags, 4) == [0; 4]
            && indices(c_tags, 2) == [0; 4]
    );
}

/// Reads the tag that a page's reference names: null for none.
fn page_tag(test: &Test, page: *mut bindings::page) -> *const bindings::codetag {
    let mut ct = ptr::null();
    // SAFETY: `page` is a page the caller allocated; `ct` is writable.
    let found = unsafe { bindings::alloctag_test_page_tag(page, &mut ct) };
    kunit_expect!(test, found, "the page has no tag reference");
    ct
}

/// Skips the case where page tags are in page_ext; returns whether they are in page flags.
fn in_page_flags(test: &Test) -> bool {
    let on = index::compressed();
    if !on {
        test.skip("page tags are in page_ext");
    }
    on
}

/// Allocates `2^order` pages charged to `tag`; returns them and the tag their reference names.
fn alloc_charged(
    test: &Test,
    tag: &'static AllocTag,
    order: u32,
) -> Option<(*mut bindings::page, *const bindings::codetag)> {
    let page = with_tag(tag, || alloc_pages(order));
    kunit_expect!(test, !page.is_null());
    (!page.is_null()).then(|| (page, page_tag(test, page)))
}

/// Allocates `2^order` pages charged to `tag` and checks that the page's index names it and
/// that the counters move by the pages and come back at the free.
fn page_names_its_tag(test: &Test, tag: &'static AllocTag, order: u32) {
    let base = tag.read();
    let Some((page, ct)) = alloc_charged(test, tag, order) else {
        return;
    };
    kunit_expect!(
        test,
        ptr::eq(ct, tag.codetag() as *const _ as *const bindings::codetag),
        "the page's index does not name its tag"
    );
    let held = tag.read();
    kunit_expect!(
        test,
        held.bytes == base.bytes + (PAGE_SIZE << order) as i64 && held.calls == base.calls + 1,
        "{base:?} -> {held:?}"
    );
    // SAFETY: `page` was allocated above at `order` and is freed once.
    unsafe { bindings::__free_pages(page, order) };
    kunit_expect!(
        test,
        tag.read() == base,
        "the free did not take the charge back"
    );
}

test_tag!(VMLINUX_TAG, "page_index_names_vmlinux_tag");

fn page_index_names_vmlinux_tag(test: &Test) {
    if in_page_flags(test) {
        page_names_its_tag(test, VMLINUX_TAG, 0);
    }
}

fn page_index_names_dynamic_tag(test: &Test) {
    if !in_page_flags(test) {
        return;
    }
    let Some(tag) = pool().tag(Location::caller()) else {
        kunit_expect!(test, false, "no dynamic tag could be made");
        return;
    };
    let idx = tag.codetag().index();
    kunit_expect!(test, idx >= FIRST_INDEX, "a dynamic tag has no index");
    kunit_expect!(test, index::INDEX.tag_at(idx) == tag.as_raw() as usize);
    page_names_its_tag(test, tag, 1);
}

// A tag in no segment of the index.
test_tag!(
    LOOSE_TAG,
    "unindexed_tag_is_marked_and_not_charged",
    loose,
    flags = 0
);

/// A page charged to a tag that has no index is not charged, its tag is marked inaccurate, and
/// the page holds the empty marker, so that its free neither subtracts nor warns (the console
/// is checked for warnings).
fn unindexed_tag_is_marked_and_not_charged(test: &Test) {
    if !index::compressed() {
        test.skip("page tags are in page_ext");
        return;
    }
    kunit_expect!(
        test,
        LOOSE_TAG.codetag().accurate(),
        "marked before any allocation"
    );
    let Some((page, ct)) = alloc_charged(test, LOOSE_TAG, 0) else {
        return;
    };
    // The empty marker reads back as `CODETAG_EMPTY` with the hooks' debug checks, as no tag
    // without them (include/linux/alloc_tag.h's set_codetag_empty()).
    let empty = if cfg!(CONFIG_MEM_ALLOC_PROFILING_DEBUG) {
        1
    } else {
        0
    };
    kunit_expect!(
        test,
        ct as usize == empty,
        "the page's reference is not the empty marker"
    );
    kunit_expect!(
        test,
        LOOSE_TAG.read().is_zero(),
        "charged: {:?}",
        LOOSE_TAG.read()
    );
    kunit_expect!(
        test,
        !LOOSE_TAG.codetag().accurate(),
        "not marked inaccurate"
    );
    // SAFETY: `page` was allocated above at order 0 and is freed once.
    unsafe { bindings::__free_pages(page, 0) };
    kunit_expect!(
        test,
        LOOSE_TAG.read().is_zero(),
        "the free moved the counters"
    );
}

kunit_suite!(
    index_suite,
    "alloctag_index",
    [
        blocks_lookups_and_reuse,
        page_index_names_vmlinux_tag,
        page_index_names_dynamic_tag,
        unindexed_tag_is_marked_and_not_charged
    ]
);
