// SPDX-License-Identifier: GPL-2.0

//! Capture: each object allocated at a selected site gets a record with the allocating task,
//! bytes and stack, which goes when the object is freed, on each allocator path; the records
//! of a site account for its counters exactly; the pool is bounded and counts what it drops;
//! allocations under a spinlock and in hard interrupts are recorded; ending the selection frees
//! every record; bad commands change nothing.

use super::{alloc_pages, test_tag, with_tag, LineWriter};
use crate::{
    alloc_tag::AllocTag,
    capture::{self, Kind, Record, View},
    codetag::{self, Field, Selection},
    kunit::{kunit_expect, kunit_suite, Test},
};
use core::{
    ffi::{c_int, c_void},
    ptr,
    sync::atomic::{AtomicBool, AtomicPtr, AtomicUsize, Ordering},
};
use kernel::{
    alloc::{flags::GFP_KERNEL, KBox, KVVec, KVec},
    alloc_hooks, bindings, new_spinlock,
    page::PAGE_SIZE,
    prelude::*,
};

/// Selects `text` for capture; reports a failure.
fn select(test: &Test, text: &str) -> Option<u32> {
    let selected = Selection::parse(text.as_bytes().split(|&c| c == b' ')).and_then(capture::add);
    kunit_expect!(
        test,
        selected.is_ok(),
        "selecting '{text}': {:?}",
        selected.err()
    );
    selected.ok().map(|(id, _)| id)
}

/// The records of `tag`, oldest first. A read that fails is a test failure (and an empty
/// list), never a silent "no records".
fn records(test: &Test, tag: &AllocTag) -> KVVec<Record> {
    let found = capture::records_of(tag.codetag());
    kunit_expect!(
        test,
        found.is_ok(),
        "reading the records: {:?}",
        found.as_ref().err()
    );
    found.unwrap_or_else(|_| KVVec::new())
}

/// The current task's pid and thread group id, from the kernel's own function.
fn current_ids() -> (i32, i32) {
    // SAFETY: `current` is valid in process context; a null namespace is the task's own.
    unsafe {
        let task = bindings::get_current();
        (
            bindings::__task_pid_nr_ns(task, bindings::pid_type_PIDTYPE_PID, ptr::null_mut()),
            bindings::__task_pid_nr_ns(task, bindings::pid_type_PIDTYPE_TGID, ptr::null_mut()),
        )
    }
}

/// Returns whether a frame of stack depot handle `stack` is in a function whose name holds
/// `needle`.
fn stack_has(stack: u32, needle: &[u8]) -> bool {
    if stack == 0 {
        return false;
    }
    let mut entries: *mut usize = ptr::null_mut();
    // SAFETY: `stack` came from the depot, whose stacks stay.
    let n = unsafe { bindings::stack_depot_fetch(stack, (&raw mut entries).cast()) };
    let mut buf = [0u8; 1024];
    (0..n as usize).any(|i| {
        // SAFETY: The depot returned `n` entries; `buf` is longer than `KSYM_SYMBOL_LEN`.
        let len = unsafe { bindings::sprint_symbol(buf.as_mut_ptr().cast(), *entries.add(i) as _) };
        let name = &buf[..(len.max(0) as usize).min(buf.len())];
        name.windows(needle.len()).any(|w| w == needle)
    })
}

/// Returns the report `view` as text.
fn report(view: View) -> KVec<u8> {
    let mut out = KVec::new();
    let _ = capture::write_report(&mut LineWriter(&mut out), view);
    out
}

fn contains(text: &[u8], needle: &[u8]) -> bool {
    text.windows(needle.len()).any(|w| w == needle)
}

/// The records of `tag` hold exactly what its counters hold.
fn expect_all_tracked(test: &Test, tag: &AllocTag) {
    let untracked = capture::untracked_of(tag);
    kunit_expect!(test, untracked == Ok((0, 0)), "untracked: {untracked:?}");
}

test_tag!(SLAB_TAG, "alloctag_capture_slab");

/// Allocates at [`SLAB_TAG`] from a function of its own, to find in the stack.
#[inline(never)]
fn capture_slab_site(size: usize) -> *mut c_void {
    // SAFETY: Allocating has no precondition.
    with_tag(SLAB_TAG, || unsafe {
        bindings::__kmalloc_noprof(size, bindings::GFP_KERNEL)
    })
}

fn kmalloc_recorded_until_kfree(test: &Test) {
    let Some(id) = select(test, "func:alloctag_capture_slab") else {
        return;
    };
    let obj = capture_slab_site(100);
    let found = records(test, SLAB_TAG);
    kunit_expect!(test, found.len() == 1, "{} records", found.len());
    if let Some(r) = found.first() {
        let (pid, tgid) = current_ids();
        kunit_expect!(
            test,
            r.kind == Kind::Slab && r.object == obj as usize,
            "object"
        );
        kunit_expect!(
            test,
            r.bytes as i64 == SLAB_TAG.read().bytes,
            "bytes {}",
            r.bytes
        );
        kunit_expect!(test, r.bytes >= 100, "bytes {}", r.bytes);
        kunit_expect!(
            test,
            r.pid == pid && r.tgid == tgid,
            "pid {} tgid {}",
            r.pid,
            r.tgid
        );
        kunit_expect!(test, r.comm() == "kunit_try_catch", "comm {}", r.comm());
        kunit_expect!(test, r.context == 0, "context {}", r.context);
        kunit_expect!(test, r.gfp == bindings::GFP_KERNEL, "gfp {:#x}", r.gfp);
        kunit_expect!(test, stack_has(r.stack, b"capture_slab_site"), "stack");
    }
    expect_all_tracked(test, SLAB_TAG);
    let text = report(View::Objects);
    kunit_expect!(
        test,
        contains(&text, b"comm=kunit_try_catch"),
        "objects report"
    );
    kunit_expect!(
        test,
        contains(&text, b"capture_slab_site"),
        "objects report's stack"
    );
    let text = report(View::Stacks);
    kunit_expect!(test, contains(&text, b"stack count=1 "), "stacks report");
    let text = report(View::Processes);
    let (_, tgid) = current_ids();
    let mut line = KVec::new();
    let _ = core::fmt::Write::write_fmt(
        &mut LineWriter(&mut line),
        format_args!("process tgid={tgid} comm=kunit_try_catch objects=1 "),
    );
    kunit_expect!(test, contains(&text, &line), "processes report");
    // SAFETY: `obj` came from kmalloc and is freed once.
    unsafe { bindings::kfree(obj) };
    kunit_expect!(
        test,
        records(test, SLAB_TAG).is_empty(),
        "kfree left a record"
    );
    kunit_expect!(test, capture::remove(id).is_ok());
}

test_tag!(OTHER_TAG, "alloctag_capture_other");

/// While capture is on the slab hooks take their capture variants (mm/slub.c as grafted):
/// they still charge and uncharge every site, selected or not, and record only the selected.
fn unselected_sites_charged_while_capturing(test: &Test) {
    let Some(id) = select(test, "func:alloctag_capture_slab") else {
        return;
    };
    let before = OTHER_TAG.read();
    // SAFETY: Allocating has no precondition.
    let obj = with_tag(OTHER_TAG, || unsafe {
        bindings::__kmalloc_noprof(100, bindings::GFP_KERNEL)
    });
    let held = OTHER_TAG.read();
    kunit_expect!(
        test,
        held.calls == before.calls + 1 && held.bytes >= before.bytes + 100,
        "charged {} -> {} calls, {} -> {} bytes",
        before.calls,
        held.calls,
        before.bytes,
        held.bytes
    );
    kunit_expect!(
        test,
        records(test, OTHER_TAG).is_empty(),
        "unselected site recorded"
    );
    // SAFETY: `obj` came from kmalloc and is freed once.
    unsafe { bindings::kfree(obj) };
    let after = OTHER_TAG.read();
    kunit_expect!(
        test,
        after.calls == before.calls && after.bytes == before.bytes,
        "uncharged {} calls, {} bytes",
        after.calls,
        after.bytes
    );
    // The selected site, in the same state of the keys, is recorded.
    let obj = capture_slab_site(64);
    kunit_expect!(
        test,
        records(test, SLAB_TAG).len() == 1,
        "selected site not recorded"
    );
    // SAFETY: `obj` came from kmalloc and is freed once.
    unsafe { bindings::kfree(obj) };
    kunit_expect!(
        test,
        records(test, SLAB_TAG).is_empty(),
        "kfree left a record"
    );
    kunit_expect!(test, capture::remove(id).is_ok());
    // Capture off again: the plain variants charge.
    // SAFETY: Allocating has no precondition.
    let obj = with_tag(OTHER_TAG, || unsafe {
        bindings::__kmalloc_noprof(100, bindings::GFP_KERNEL)
    });
    kunit_expect!(
        test,
        OTHER_TAG.read().calls == before.calls + 1,
        "not charged after capture"
    );
    // SAFETY: `obj` came from kmalloc and is freed once.
    unsafe { bindings::kfree(obj) };
    kunit_expect!(test, OTHER_TAG.read().calls == before.calls);
}

test_tag!(STALLED_TAG, "alloctag_capture_stalled_hook");

/// A slab hook tests the slab-plain key and, only when that is off, goes on to its capture
/// variant. A task preempted between the two while capture ends (the plain key back on, the
/// capture key off) goes on with the keys as they are then: plain off, as it read, and capture
/// off. In that state a slab hook must still charge and uncharge, as profiling is on: if it
/// asked the capture key, the object it allocated would never be charged (its free then warns
/// "alloc_tag was not set" under MEM_ALLOC_PROFILING_DEBUG) and the object it freed would stay
/// charged. The keys are set so for the whole test, for every task: what a preempted hook sees.
fn hook_stalled_across_capture_end_charges(test: &Test) {
    let kmalloc = || {
        // SAFETY: Allocating has no precondition.
        with_tag(STALLED_TAG, || unsafe {
            bindings::__kmalloc_noprof(100, bindings::GFP_KERNEL)
        })
    };
    let base = STALLED_TAG.read();
    let before = kmalloc();
    let seen = crate::keys::with_plain_key_off(|| {
        let obj = kmalloc();
        let allocated = STALLED_TAG.read();
        // SAFETY: `before` came from kmalloc and is freed once.
        unsafe { bindings::kfree(before) };
        (obj, allocated, STALLED_TAG.read())
    });
    kunit_expect!(test, seen.is_some(), "capture was on");
    let Some((obj, allocated, freed)) = seen else {
        // SAFETY: `before` came from kmalloc and is freed once.
        unsafe { bindings::kfree(before) };
        return;
    };
    kunit_expect!(
        test,
        allocated.calls == base.calls + 2,
        "allocation not charged: {} -> {} calls",
        base.calls,
        allocated.calls
    );
    kunit_expect!(
        test,
        freed.calls == allocated.calls - 1,
        "free not uncharged: {} -> {} calls",
        allocated.calls,
        freed.calls
    );
    // SAFETY: `obj` came from kmalloc and is freed once.
    unsafe { bindings::kfree(obj) };
    let after = STALLED_TAG.read();
    kunit_expect!(
        test,
        after == base,
        "{base:?} -> {after:?} after both frees"
    );
}

test_tag!(REALLOC_TAG, "alloctag_capture_krealloc");

fn krealloc_in_place_and_moved(test: &Test) {
    let Some(id) = select(test, "func:alloctag_capture_krealloc") else {
        return;
    };
    // SAFETY: Allocating has no precondition.
    let obj = with_tag(REALLOC_TAG, || unsafe {
        bindings::__kmalloc_noprof(64, bindings::GFP_KERNEL)
    });
    // SAFETY: `obj` came from kmalloc; shrinking keeps it where it is.
    let same = with_tag(REALLOC_TAG, || unsafe {
        bindings::krealloc_noprof(obj, 40, bindings::GFP_KERNEL)
    });
    kunit_expect!(test, same == obj, "shrinking moved the object");
    let found = records(test, REALLOC_TAG);
    kunit_expect!(
        test,
        found.len() == 1 && found[0].object == obj as usize,
        "in place"
    );
    // SAFETY: `same` came from krealloc; growing past the cache moves it.
    let moved = with_tag(REALLOC_TAG, || unsafe {
        bindings::krealloc_noprof(same, 3000, bindings::GFP_KERNEL)
    });
    kunit_expect!(test, !moved.is_null() && moved != same, "not moved");
    let found = records(test, REALLOC_TAG);
    kunit_expect!(
        test,
        found.len() == 1,
        "{} records after the move",
        found.len()
    );
    kunit_expect!(
        test,
        found.first().map(|r| r.object) == Some(moved as usize),
        "moved"
    );
    expect_all_tracked(test, REALLOC_TAG);
    // SAFETY: `moved` came from krealloc and is freed once.
    unsafe { bindings::kfree(moved) };
    kunit_expect!(test, records(test, REALLOC_TAG).is_empty());
    kunit_expect!(test, capture::remove(id).is_ok());
}

test_tag!(RCU_TAG, "alloctag_capture_kfree_rcu");

/// kfree_rcu() frees after a grace period, from RCU's batching: the record goes then.
fn kfree_rcu_frees_after_grace_period(test: &Test) {
    let Some(id) = select(test, "func:alloctag_capture_kfree_rcu") else {
        return;
    };
    // SAFETY: Allocating has no precondition.
    let obj = with_tag(RCU_TAG, || unsafe {
        bindings::__kmalloc_noprof(64, bindings::GFP_KERNEL)
    });
    kunit_expect!(test, !obj.is_null());
    if !obj.is_null() {
        kunit_expect!(test, records(test, RCU_TAG).len() == 1);
        // SAFETY: `obj` came from kmalloc, is 64 bytes, room for its `rcu_head` at the start, as
        // `kfree_rcu(obj, head)` passes it; it is not used again.
        unsafe { bindings::kvfree_call_rcu(obj.cast(), obj) };
        // SAFETY: Process context; waits for every kfree_rcu() queued so far.
        unsafe { bindings::kvfree_rcu_barrier() };
        kunit_expect!(
            test,
            records(test, RCU_TAG).is_empty(),
            "kfree_rcu left a record"
        );
        expect_all_tracked(test, RCU_TAG);
    }
    kunit_expect!(test, capture::remove(id).is_ok());
}

/// A constructor, which keeps the test's cache from being merged with another.
extern "C" fn no_merge(_object: *mut c_void) {}

test_tag!(CACHE_TAG, "alloctag_capture_cache");

fn cache_free_and_bulk_free(test: &Test) {
    // SAFETY: All-zero is a valid `kmem_cache_args`.
    let mut args: bindings::kmem_cache_args = unsafe { core::mem::zeroed() };
    args.ctor = Some(no_merge);
    // SAFETY: The name is static; `args` is valid for the call.
    let cache = unsafe {
        bindings::__kmem_cache_create_args(
            kernel::c_str!("alloctag_capture").as_char_ptr(),
            72,
            &mut args,
            0,
        )
    };
    kunit_expect!(test, !cache.is_null(), "no cache");
    if cache.is_null() {
        return;
    }
    if let Some(id) = select(test, "func:alloctag_capture_cache") {
        // SAFETY: `cache` is live.
        let obj = with_tag(CACHE_TAG, || unsafe {
            bindings::kmem_cache_alloc_noprof(cache, bindings::GFP_KERNEL)
        });
        let found = records(test, CACHE_TAG);
        kunit_expect!(test, found.len() == 1 && found[0].object == obj as usize);
        // SAFETY: `obj` came from `cache`.
        unsafe { bindings::kmem_cache_free(cache, obj) };
        kunit_expect!(
            test,
            records(test, CACHE_TAG).is_empty(),
            "kmem_cache_free left a record"
        );

        let mut objs = [ptr::null_mut::<c_void>(); 4];
        // SAFETY: `objs` has room for 4 objects.
        let n = with_tag(CACHE_TAG, || unsafe {
            bindings::kmem_cache_alloc_bulk_noprof(
                cache,
                bindings::GFP_KERNEL,
                4,
                objs.as_mut_ptr(),
            )
        });
        kunit_expect!(test, n == 4, "bulk allocated {n}");
        let found = records(test, CACHE_TAG);
        kunit_expect!(test, found.len() == 4, "{} records", found.len());
        kunit_expect!(
            test,
            objs.iter()
                .all(|o| found.iter().any(|r| r.object == *o as usize)),
            "a bulk object without its record"
        );
        expect_all_tracked(test, CACHE_TAG);
        // SAFETY: The objects came from `cache`, `n` of them.
        unsafe { bindings::kmem_cache_free_bulk(cache, n as usize, objs.as_mut_ptr()) };
        kunit_expect!(
            test,
            records(test, CACHE_TAG).is_empty(),
            "bulk free left records"
        );
        kunit_expect!(test, capture::remove(id).is_ok());
    }
    // SAFETY: Every object of `cache` was freed.
    unsafe { bindings::kmem_cache_destroy(cache) };
}

test_tag!(PAGES_TAG, "alloctag_capture_pages");

test_tag!(SHRINK_TAG, "alloctag_capture_shrink");

/// `__free_pages()` of a non-compound block whose first page someone else holds frees the
/// rest at once: the record shrinks to that page, so that the site's records and counters
/// still agree (nothing untracked, nothing clamped), and goes when the page does.
fn partly_freed_block_shrinks_its_record(test: &Test) {
    let Some(id) = select(test, "func:alloctag_capture_shrink") else {
        return;
    };
    let page = with_tag(SHRINK_TAG, || alloc_pages(2));
    kunit_expect!(test, !page.is_null());
    if !page.is_null() {
        // SAFETY: `page` is live; the reference is dropped below.
        unsafe { bindings::alloctag_test_get_page(page) };
        // SAFETY: `page` came from the page allocator, order 2, not compound: with the first
        // page held, this frees the other three.
        unsafe { bindings::__free_pages(page, 2) };
        let found = records(test, SHRINK_TAG);
        kunit_expect!(test, found.len() == 1, "{} records", found.len());
        if let Some(r) = found.first() {
            kunit_expect!(
                test,
                r.bytes == PAGE_SIZE && r.order == 0,
                "the record kept {} bytes, order {}",
                r.bytes,
                r.order
            );
        }
        expect_all_tracked(test, SHRINK_TAG);
        // SAFETY: The reference taken above; the last one, which frees the page.
        unsafe { bindings::alloctag_test_put_page(page) };
        kunit_expect!(
            test,
            records(test, SHRINK_TAG).is_empty(),
            "the last page went, its record stayed"
        );
    }
    kunit_expect!(test, capture::remove(id).is_ok());
}

fn pages_split_and_vmalloc(test: &Test) {
    let Some(id) = select(test, "func:alloctag_capture_pages") else {
        return;
    };
    let page = with_tag(PAGES_TAG, || alloc_pages(2));
    kunit_expect!(test, !page.is_null());
    let found = records(test, PAGES_TAG);
    kunit_expect!(test, found.len() == 1, "{} records", found.len());
    if let Some(r) = found.first() {
        kunit_expect!(
            test,
            r.kind == Kind::Pages && r.order == 2 && r.bytes == 4 * PAGE_SIZE
        );
    }
    expect_all_tracked(test, PAGES_TAG);
    // SAFETY: `page` came from the page allocator, order 2.
    unsafe { bindings::__free_pages(page, 2) };
    kunit_expect!(
        test,
        records(test, PAGES_TAG).is_empty(),
        "__free_pages left a record"
    );

    // A split gives each page its own record; each goes with its page.
    let page = with_tag(PAGES_TAG, || alloc_pages(2));
    if !page.is_null() {
        // SAFETY: `page` is a non-compound order-2 allocation.
        unsafe { bindings::split_page(page, 2) };
        let found = records(test, PAGES_TAG);
        kunit_expect!(
            test,
            found.len() == 4,
            "{} records after the split",
            found.len()
        );
        kunit_expect!(
            test,
            found.iter().all(|r| r.bytes == PAGE_SIZE && r.order == 0)
        );
        expect_all_tracked(test, PAGES_TAG);
        for i in 0..4 {
            // SAFETY: After the split each of the 4 pages is an order-0 allocation.
            unsafe { bindings::__free_pages(page.add(i), 0) };
            kunit_expect!(
                test,
                records(test, PAGES_TAG).len() == 3 - i,
                "page {i} freed"
            );
        }
    }

    // SAFETY: Allocating has no precondition.
    let area = with_tag(PAGES_TAG, || unsafe {
        bindings::__vmalloc_noprof(3 * PAGE_SIZE, bindings::GFP_KERNEL)
    });
    kunit_expect!(test, !area.is_null());
    let pages = records(test, PAGES_TAG)
        .iter()
        .filter(|r| r.kind == Kind::Pages)
        .count();
    kunit_expect!(
        test,
        pages == 3,
        "{pages} page records for a 3-page vmalloc"
    );
    expect_all_tracked(test, PAGES_TAG);
    // SAFETY: `area` came from vmalloc.
    unsafe { bindings::vfree(area) };
    let pages = records(test, PAGES_TAG)
        .iter()
        .filter(|r| r.kind == Kind::Pages)
        .count();
    kunit_expect!(test, pages == 0, "vfree left {pages} page records");
    // What vfree does not free at once (its lazily freed area descriptor) is still counted.
    expect_all_tracked(test, PAGES_TAG);
    kunit_expect!(test, capture::remove(id).is_ok());
}

test_tag!(LARGE_TAG, "alloctag_capture_large");

/// A kmalloc too large for the slab caches goes to the page allocator (`kmalloc_large()`): it
/// is recorded as pages of its order, with the bytes charged, and its record goes with kfree.
fn large_kmalloc_recorded_as_pages(test: &Test) {
    let Some(id) = select(test, "func:alloctag_capture_large") else {
        return;
    };
    let size = 8 * PAGE_SIZE;
    // SAFETY: Allocating has no precondition.
    let obj = with_tag(LARGE_TAG, || unsafe {
        bindings::__kmalloc_noprof(size, bindings::GFP_KERNEL)
    });
    kunit_expect!(test, !obj.is_null());
    let found = records(test, LARGE_TAG);
    kunit_expect!(test, found.len() == 1, "{} records", found.len());
    if let Some(r) = found.first() {
        kunit_expect!(
            test,
            r.kind == Kind::Pages && r.order == 3 && r.bytes == size,
            "kind pages: {}, order {}, bytes {}",
            r.kind == Kind::Pages,
            r.order,
            r.bytes
        );
    }
    expect_all_tracked(test, LARGE_TAG);
    // SAFETY: From kmalloc, or null.
    unsafe { bindings::kfree(obj) };
    kunit_expect!(
        test,
        records(test, LARGE_TAG).is_empty(),
        "kfree left a record"
    );
    kunit_expect!(test, capture::remove(id).is_ok());
}

test_tag!(SPLIT_RACE_TAG, "alloctag_capture_split_race");

/// A split or a migration that runs after a deselection cleared a site's mark, but before the
/// deselection's purge reached the head's record, makes no record: the purge drops the pool's
/// lock every 1024 records and the free list may hand out a slot it has passed, so such a
/// record would never be freed and would outlive its tag. The interleaving is forced: the mark
/// is cleared by hand, as the deselection's first step does, and the hooks are called.
fn split_after_deselection_makes_no_record(test: &Test) {
    let Some(id) = select(test, "func:alloctag_capture_split_race") else {
        return;
    };
    let page = with_tag(SPLIT_RACE_TAG, || alloc_pages(1));
    kunit_expect!(test, !page.is_null());
    if page.is_null() {
        let _ = capture::remove(id);
        return;
    }
    let head = records(test, SPLIT_RACE_TAG).first().map(Record::key);
    kunit_expect!(test, head.is_some(), "the pages have no record");
    let ct = SPLIT_RACE_TAG.codetag();
    let mark = Field::CAPTURE.get(ct);
    kunit_expect!(test, mark != 0, "the site is not marked");
    // Stand-ins for the references of a split piece and of a migration target: unique keys,
    // never dereferenced.
    let (piece, target) = (0u64, 0u64);
    let (piece, target) = (
        ptr::from_ref(&piece) as usize,
        ptr::from_ref(&target) as usize,
    );
    if let Some(head) = head {
        Field::CAPTURE.set(ct, 0);
        capture::split_piece(
            head as *const c_void,
            piece as *const c_void,
            0,
            PAGE_SIZE,
            0,
        );
        capture::rekey(head as *const c_void, target as *const c_void, 0);
        Field::CAPTURE.set(ct, mark);
    }
    let stale = records(test, SPLIT_RACE_TAG)
        .iter()
        .filter(|r| r.key() == piece || r.key() == target)
        .count();
    kunit_expect!(
        test,
        stale == 0,
        "{stale} records made after the site's mark went"
    );
    kunit_expect!(test, capture::remove(id).is_ok());
    // SAFETY: `page` came from the page allocator, order 1.
    unsafe { bindings::__free_pages(page, 1) };
}

/// The stack depot allocates, while recording, with the allocation's own flags masked as
/// page_owner and kmemleak mask theirs: never waking kswapd or dipping into reserves where the
/// caller forbade it, never reclaiming directly (preemption is off there), never warning.
fn depot_flags_follow_the_allocation(test: &Test) {
    let depot = |gfp| {
        // SAFETY: A pure function of its argument.
        unsafe { bindings::alloctag_capture_depot_gfp(gfp) }
    };
    let (kswapd, direct) = (
        bindings::__GFP_KSWAPD_RECLAIM,
        bindings::__GFP_DIRECT_RECLAIM,
    );
    // Allowed neither reclaim nor reserves (GFP_NOWAIT without kswapd): nor is the depot.
    let quiet = depot(bindings::GFP_NOWAIT & !kswapd);
    kunit_expect!(
        test,
        quiet & (kswapd | direct | bindings::__GFP_HIGH) == 0,
        "{quiet:#x}"
    );
    // GFP_ATOMIC may wake kswapd and use reserves: so may the depot, without sleeping.
    let atomic = depot(bindings::GFP_ATOMIC);
    kunit_expect!(
        test,
        atomic & kswapd != 0 && atomic & direct == 0,
        "{atomic:#x}"
    );
    // GFP_KERNEL may sleep, but the depot runs with preemption off: no direct reclaim.
    let kernel = depot(bindings::GFP_KERNEL);
    kunit_expect!(
        test,
        kernel & direct == 0 && kernel & kswapd != 0,
        "{kernel:#x}"
    );
    for gfp in [quiet, atomic, kernel] {
        kunit_expect!(test, gfp & bindings::__GFP_NOWARN != 0, "{gfp:#x} warns");
    }
}

test_tag!(LIMIT_TAG, "alloctag_capture_limit");

fn bounded_with_exact_drops(test: &Test) {
    kunit_expect!(test, capture::set_limit(4).is_ok());
    let Some(id) = select(test, "func:alloctag_capture_limit") else {
        let _ = capture::set_limit(4096);
        return;
    };
    kunit_expect!(
        test,
        capture::set_limit(8) == Err(EBUSY),
        "limit changed while on"
    );
    let mut objs = [ptr::null_mut::<c_void>(); 6];
    for o in objs.iter_mut() {
        // SAFETY: Allocating has no precondition.
        *o = with_tag(LIMIT_TAG, || unsafe {
            bindings::__kmalloc_noprof(16, bindings::GFP_KERNEL)
        });
    }
    let (used, size, dropped, _) = capture::stats();
    kunit_expect!(
        test,
        (used, size, dropped) == (4, 4, 2),
        "used {used} size {size} dropped {dropped}"
    );
    kunit_expect!(test, capture::untracked_of(LIMIT_TAG).map(|u| u.0) == Ok(2));
    for o in objs {
        // SAFETY: Each came from kmalloc, freed once.
        unsafe { bindings::kfree(o) };
    }
    kunit_expect!(
        test,
        capture::stats().0 == 0,
        "records left after the frees"
    );
    kunit_expect!(test, capture::remove(id).is_ok());
    kunit_expect!(
        test,
        capture::stats().1 == 0,
        "the pool stays after the last selection"
    );
    kunit_expect!(test, capture::set_limit(4096).is_ok());
}

test_tag!(HOLD_TAG, "alloctag_capture_hold");

/// Opening a report copies the pool a bounded number of records per hold of its lock, which
/// keeps interrupts off: at the largest limit (a million records, 96 MiB), as many holds as
/// batches, never one walk of the whole pool, and every record still copied. Logs the longest
/// hold seen, for Documentation/benchmarks.rst.
fn report_copied_by_bounded_holds(test: &Test) {
    kunit_expect!(test, capture::set_limit(capture::MAX_LIMIT).is_ok());
    let Some(id) = select(test, "func:alloctag_capture_hold") else {
        let _ = capture::set_limit(4096);
        return;
    };
    let mut objs = [ptr::null_mut::<c_void>(); 3];
    for o in objs.iter_mut() {
        // SAFETY: Allocating has no precondition.
        *o = with_tag(HOLD_TAG, || unsafe {
            bindings::__kmalloc_noprof(16, bindings::GFP_KERNEL)
        });
    }
    let holds = capture::HOLDS.load(Ordering::Relaxed);
    capture::LONGEST_HOLD_NS.store(0, Ordering::Relaxed);
    let found = records(test, HOLD_TAG).len();
    let longest = capture::LONGEST_HOLD_NS.load(Ordering::Relaxed);
    let holds = capture::HOLDS.load(Ordering::Relaxed) - holds;
    kunit_expect!(test, found == 3, "{found} records of 3 objects");
    kunit_expect!(
        test,
        holds >= capture::MAX_LIMIT / capture::HOLD_RECORDS,
        "the copy of a pool of {} records took the lock {holds} times",
        capture::MAX_LIMIT
    );
    pr_info!(
        "capture: copying a pool of {} records: {holds} holds of its lock, the \
         longest {longest} ns\n",
        capture::MAX_LIMIT
    );
    for o in objs {
        // SAFETY: Each came from kmalloc, freed once.
        unsafe { bindings::kfree(o) };
    }
    kunit_expect!(test, capture::remove(id).is_ok());
    kunit_expect!(test, capture::set_limit(4096).is_ok());
}

test_tag!(FLUSH_TAG, "alloctag_capture_flush");
test_tag!(FLUSH_KEEP_TAG, "alloctag_capture_flush_keep");

/// What the flush's seam saw, parked half-way through the pool: the index it was at (0 until
/// it ran), whether a reader and a writer of the registry got its lock, the records still in
/// the pool, and the object it allocated at the site being deselected.
static FLUSH_SEAM_AT: AtomicUsize = AtomicUsize::new(0);
static FLUSH_SEAM_READ: AtomicBool = AtomicBool::new(false);
static FLUSH_SEAM_WRITE: AtomicBool = AtomicBool::new(false);
static FLUSH_SEAM_HELD: AtomicBool = AtomicBool::new(false);
static FLUSH_SEAM_LEFT: AtomicUsize = AtomicUsize::new(0);
static FLUSH_SEAM_OBJECT: AtomicPtr<c_void> = AtomicPtr::new(ptr::null_mut());

/// The seam of [`deselect_flushes_outside_the_registry_lock`]: once, half-way through the pool,
/// what `/proc/allocinfo` (a reader) and a module load (a writer) of the registry would get,
/// whether module unload would wait, and an allocation at the site being deselected, as
/// another CPU's hook would make meanwhile.
fn flush_seam(at: usize) {
    if at < capture::MAX_LIMIT / 2 || FLUSH_SEAM_AT.load(Ordering::Relaxed) != 0 {
        return;
    }
    FLUSH_SEAM_AT.store(at, Ordering::Relaxed);
    FLUSH_SEAM_READ.store(codetag::try_read().is_some(), Ordering::Relaxed);
    FLUSH_SEAM_WRITE.store(codetag::try_write().is_some(), Ordering::Relaxed);
    FLUSH_SEAM_HELD.store(codetag::tags_held(), Ordering::Relaxed);
    FLUSH_SEAM_LEFT.store(capture::stats().0, Ordering::Relaxed);
    // SAFETY: Allocating has no precondition.
    let object = with_tag(FLUSH_TAG, || unsafe {
        bindings::__kmalloc_noprof(16, bindings::GFP_KERNEL)
    });
    FLUSH_SEAM_OBJECT.store(object, Ordering::Relaxed);
}

/// Deselecting a site whose records fill the largest pool frees them in steps outside the
/// registry's write lock: parked half-way, the flush lets a `/proc/allocinfo` reader and a
/// module load take the lock, holds off module unload and the reaper (which could free a tag
/// that a record not yet walked points to), and an allocation at the site meanwhile makes no
/// record; at the end every record of the site is gone and the other selection's record stays.
/// Logs the longest hold of the registry's write lock, of the pool's lock (interrupts off) and
/// the removal's time, for Documentation/benchmarks.rst.
fn deselect_flushes_outside_the_registry_lock(test: &Test) {
    kunit_expect!(test, capture::set_limit(capture::MAX_LIMIT).is_ok());
    let Some(keep) = select(test, "func:alloctag_capture_flush_keep") else {
        let _ = capture::set_limit(4096);
        return;
    };
    let Some(id) = select(test, "func:alloctag_capture_flush") else {
        let _ = capture::remove(keep);
        let _ = capture::set_limit(4096);
        return;
    };
    // SAFETY: Allocating has no precondition.
    let kept = with_tag(FLUSH_KEEP_TAG, || unsafe {
        bindings::__kmalloc_noprof(16, bindings::GFP_KERNEL)
    });
    // Keys that no object's reference can be: the addresses of this vector's elements.
    let keys = KVVec::from_elem(0u64, capture::MAX_LIMIT, GFP_KERNEL);
    kunit_expect!(test, keys.is_ok(), "no memory for the keys");
    let filled = keys
        .as_ref()
        .map_or(0, |keys| capture::fill(FLUSH_TAG.codetag(), keys));
    kunit_expect!(
        test,
        filled == capture::MAX_LIMIT - 1,
        "{filled} records made in a pool of {} holding one",
        capture::MAX_LIMIT
    );
    FLUSH_SEAM_AT.store(0, Ordering::Relaxed);
    FLUSH_SEAM_READ.store(false, Ordering::Relaxed);
    FLUSH_SEAM_WRITE.store(false, Ordering::Relaxed);
    FLUSH_SEAM_HELD.store(false, Ordering::Relaxed);
    FLUSH_SEAM_OBJECT.store(ptr::null_mut(), Ordering::Relaxed);
    capture::LONGEST_WRITE_NS.store(0, Ordering::Relaxed);
    capture::LONGEST_HOLD_NS.store(0, Ordering::Relaxed);
    capture::set_purge_seam(Some(flush_seam));
    // SAFETY: The fast clock may be read in any context.
    let start = unsafe { bindings::ktime_get_mono_fast_ns() };
    kunit_expect!(test, capture::remove(id).is_ok());
    // SAFETY: As above.
    let took = unsafe { bindings::ktime_get_mono_fast_ns() }.saturating_sub(start);
    capture::set_purge_seam(None);
    let write = capture::LONGEST_WRITE_NS.load(Ordering::Relaxed);
    let irqs_off = capture::LONGEST_HOLD_NS.load(Ordering::Relaxed);
    let at = FLUSH_SEAM_AT.load(Ordering::Relaxed);
    let left = FLUSH_SEAM_LEFT.load(Ordering::Relaxed);
    kunit_expect!(test, at != 0, "the flush never reached half-way");
    kunit_expect!(
        test,
        left > 1,
        "parked at record {at}, the flush had left {left} records: not half-way"
    );
    kunit_expect!(
        test,
        FLUSH_SEAM_READ.load(Ordering::Relaxed),
        "a reader of the registry waited for the flush (parked at record {at})"
    );
    kunit_expect!(
        test,
        FLUSH_SEAM_WRITE.load(Ordering::Relaxed),
        "a module load would have waited for the flush (parked at record {at})"
    );
    kunit_expect!(
        test,
        FLUSH_SEAM_HELD.load(Ordering::Relaxed),
        "module unload could have dropped tags during the flush (parked at record {at})"
    );
    kunit_expect!(test, records(test, FLUSH_TAG).is_empty());
    kunit_expect!(
        test,
        records(test, FLUSH_KEEP_TAG).len() == 1,
        "the other selection's record went"
    );
    kunit_expect!(
        test,
        capture::stats().0 == 1,
        "{} records left",
        capture::stats().0
    );
    pr_info!(
        "capture: deselecting a site with {filled} records: {took} ns, the registry \
         write-locked at most {write} ns, the pool's lock (interrupts off) at most \
         {irqs_off} ns\n"
    );
    // The same removal with the purge under the registry's write lock, as before the change,
    // in the same boot: what it held the lock for.
    if let Some(id) = select(test, "func:alloctag_capture_flush") {
        let filled = keys
            .as_ref()
            .map_or(0, |keys| capture::fill(FLUSH_TAG.codetag(), keys));
        capture::LONGEST_WRITE_NS.store(0, Ordering::Relaxed);
        capture::LONGEST_HOLD_NS.store(0, Ordering::Relaxed);
        let seam_object = FLUSH_SEAM_OBJECT.swap(ptr::null_mut(), Ordering::Relaxed);
        FLUSH_SEAM_AT.store(0, Ordering::Relaxed);
        capture::set_purge_seam(Some(flush_seam));
        // SAFETY: The fast clock may be read in any context.
        let start = unsafe { bindings::ktime_get_mono_fast_ns() };
        kunit_expect!(test, capture::remove_under_lock(id).is_ok());
        // SAFETY: As above.
        let took = unsafe { bindings::ktime_get_mono_fast_ns() }.saturating_sub(start);
        capture::set_purge_seam(None);
        kunit_expect!(test, capture::stats().0 == 1);
        // What the seam finds on the old path: the check above fails there.
        pr_info!(
            "capture: the same with the purge under the registry's lock: {filled} records, \
             {took} ns, the registry write-locked at most {} ns, the pool's lock at most {} \
             ns; parked at record {}, a reader got the lock: {}, a module load: {}\n",
            capture::LONGEST_WRITE_NS.load(Ordering::Relaxed),
            capture::LONGEST_HOLD_NS.load(Ordering::Relaxed),
            FLUSH_SEAM_AT.load(Ordering::Relaxed),
            FLUSH_SEAM_READ.load(Ordering::Relaxed),
            FLUSH_SEAM_WRITE.load(Ordering::Relaxed)
        );
        for object in [
            seam_object,
            FLUSH_SEAM_OBJECT.swap(ptr::null_mut(), Ordering::Relaxed),
        ] {
            // SAFETY: Each came from kmalloc (or is null), freed once.
            unsafe { bindings::kfree(object) };
        }
    }
    for object in [kept, FLUSH_SEAM_OBJECT.load(Ordering::Relaxed)] {
        // SAFETY: Each came from kmalloc (or is null), freed once.
        unsafe { bindings::kfree(object) };
    }
    kunit_expect!(test, capture::remove(keep).is_ok());
    kunit_expect!(test, capture::set_limit(4096).is_ok());
}

test_tag!(ATOMIC_TAG, "alloctag_capture_atomic");
test_tag!(IRQ_TAG, "alloctag_capture_irq");

/// The interrupt work of [`spinlock_and_hardirq_recorded`].
static mut IRQ_WORK: bindings::irq_work = {
    // SAFETY: All zeroes is `IRQ_WORK_INIT()`'s value but for the function.
    let mut work: bindings::irq_work = unsafe { core::mem::zeroed() };
    work.func = Some(irq_allocate);
    work
};
static IRQ_OBJECT: AtomicPtr<c_void> = AtomicPtr::new(ptr::null_mut());
static IRQ_RAN: AtomicBool = AtomicBool::new(false);

/// Allocates at [`IRQ_TAG`] in hard interrupt context, as `alloc_hooks()` would there.
///
/// # Safety
///
/// Called by the irq_work core with [`IRQ_WORK`].
unsafe extern "C" fn irq_allocate(_work: *mut bindings::irq_work) {
    // SAFETY: `current` is valid in interrupt context; the tag is restored before returning.
    let obj = with_tag(IRQ_TAG, || unsafe {
        bindings::__kmalloc_noprof(24, bindings::GFP_ATOMIC)
    });
    IRQ_OBJECT.store(obj, Ordering::Relaxed);
    IRQ_RAN.store(true, Ordering::Release);
}

fn spinlock_and_hardirq_recorded(test: &Test) {
    let Some(a) = select(test, "func:alloctag_capture_atomic") else {
        return;
    };
    if select(test, "func:alloctag_capture_irq").is_none() {
        let _ = capture::remove(a);
        return;
    }
    let Ok(lock) = KBox::pin_init(new_spinlock!(()), GFP_KERNEL) else {
        kunit_expect!(test, false, "no memory for the lock");
        capture::clear();
        return;
    };
    let objs = {
        let _guard = lock.lock();
        [bindings::GFP_ATOMIC, bindings::GFP_NOWAIT].map(|gfp| {
            // SAFETY: Allocating without sleeping has no precondition.
            with_tag(ATOMIC_TAG, || unsafe {
                bindings::__kmalloc_noprof(48, gfp)
            })
        })
    };
    let found = records(test, ATOMIC_TAG);
    kunit_expect!(
        test,
        found.len() == 2,
        "{} records under a spinlock",
        found.len()
    );
    let gfps = [found.first().map(|r| r.gfp), found.get(1).map(|r| r.gfp)];
    kunit_expect!(
        test,
        gfps == [Some(bindings::GFP_ATOMIC), Some(bindings::GFP_NOWAIT)],
        "gfp {gfps:?}"
    );
    // SAFETY: Allocating has no precondition.
    let nofail = with_tag(ATOMIC_TAG, || unsafe {
        bindings::__kmalloc_noprof(48, bindings::GFP_KERNEL | bindings::__GFP_NOFAIL)
    });
    kunit_expect!(
        test,
        records(test, ATOMIC_TAG).len() == 3,
        "__GFP_NOFAIL not recorded"
    );
    expect_all_tracked(test, ATOMIC_TAG);
    for o in Iterator::chain(objs.into_iter(), [nofail]) {
        // SAFETY: Each came from kmalloc, freed once.
        unsafe { bindings::kfree(o) };
    }
    kunit_expect!(test, records(test, ATOMIC_TAG).is_empty());

    IRQ_RAN.store(false, Ordering::Relaxed);
    // SAFETY: `IRQ_WORK` is initialised and only queued here.
    unsafe { bindings::irq_work_queue(&raw mut IRQ_WORK) };
    // SAFETY: Waits until the work has run.
    unsafe { bindings::irq_work_sync(&raw mut IRQ_WORK) };
    let obj = IRQ_OBJECT.swap(ptr::null_mut(), Ordering::Relaxed);
    kunit_expect!(
        test,
        IRQ_RAN.load(Ordering::Acquire),
        "the interrupt work did not run"
    );
    let found = records(test, IRQ_TAG);
    kunit_expect!(
        test,
        found.len() == 1,
        "{} records from the interrupt",
        found.len()
    );
    if let Some(r) = found.first() {
        kunit_expect!(
            test,
            r.object == obj as usize && r.context != 0,
            "context {}",
            r.context
        );
        kunit_expect!(test, r.gfp == bindings::GFP_ATOMIC, "gfp {:#x}", r.gfp);
    }
    // SAFETY: `obj` came from kmalloc, or is null.
    unsafe { bindings::kfree(obj) };
    kunit_expect!(test, records(test, IRQ_TAG).is_empty());
    capture::clear();
}

test_tag!(OFF_TAG, "alloctag_capture_off");

fn deselecting_frees_every_record(test: &Test) {
    // Allocated before the site is selected: the untracked remainder.
    let early = [(); 2].map(|()| {
        // SAFETY: Allocating has no precondition.
        with_tag(OFF_TAG, || unsafe {
            bindings::__kmalloc_noprof(16, bindings::GFP_KERNEL)
        })
    });
    let Some(id) = select(test, "func:alloctag_capture_off") else {
        return;
    };
    let late = [(); 3].map(|()| {
        // SAFETY: As above.
        with_tag(OFF_TAG, || unsafe {
            bindings::__kmalloc_noprof(16, bindings::GFP_KERNEL)
        })
    });
    kunit_expect!(test, records(test, OFF_TAG).len() == 3);
    let untracked = capture::untracked_of(OFF_TAG);
    let per = OFF_TAG.read().bytes / 5;
    kunit_expect!(
        test,
        untracked == Ok((2, 2 * per)),
        "untracked {untracked:?}"
    );
    kunit_expect!(test, capture::remove(id).is_ok());
    kunit_expect!(test, capture::remove(id) == Err(ENOENT));
    kunit_expect!(
        test,
        capture::stats() == (0, 0, 0, 0),
        "a record outlived capture"
    );
    kunit_expect!(test, records(test, OFF_TAG).is_empty());
    for o in Iterator::chain(early.into_iter(), late) {
        // SAFETY: Each came from kmalloc, freed once.
        unsafe { bindings::kfree(o) };
    }
}

/// A Rust call site with `alloc_hooks!`, and one through the plain API (a dynamic tag, made
/// at its first allocation), each selected by its `.rs` line before it allocates.
const RUST_SITE_LINE: u32 = line!() + 3;
#[inline(never)]
fn rust_site() -> Result<KBox<[u8; 64]>> {
    let obj = alloc_hooks!(KBox::new([0u8; 64], GFP_KERNEL))?;
    Ok(obj)
}
const PLAIN_SITE_LINE: u32 = line!() + 3;
#[inline(never)]
fn plain_site() -> Result<KBox<[u8; 56]>> {
    let obj = KBox::new([0u8; 56], GFP_KERNEL)?;
    Ok(obj)
}

/// Runs `f` with `kernel.kptr_restrict` at `value`.
fn with_kptr_restrict<R>(value: c_int, f: impl FnOnce() -> R) -> R {
    // SAFETY: An int that the sysctl writes; the cases run one at a time, and no other writer
    // runs while they do.
    let old = unsafe { ptr::replace(&raw mut bindings::kptr_restrict, value) };
    let r = f();
    // SAFETY: As above.
    unsafe { (&raw mut bindings::kptr_restrict).write(old) };
    r
}

test_tag!(KPTR_TAG, "alloctag_capture_kptr");

/// A report shows an object's address as `%pK` does, to whoever reads it: the address at
/// `kptr_restrict=1` to root with `CAP_SYSLOG`, zeros at 2, hashed at 0: never the address
/// where the kernel's own files would hide it.
fn addresses_follow_kptr_restrict(test: &Test) {
    let Some(id) = select(test, "func:alloctag_capture_kptr") else {
        return;
    };
    // SAFETY: Allocating has no precondition.
    let obj = with_tag(KPTR_TAG, || unsafe {
        bindings::__kmalloc_noprof(16, bindings::GFP_KERNEL)
    });
    kunit_expect!(test, !obj.is_null());
    let mut raw = KVec::new();
    let _ = core::fmt::Write::write_fmt(
        &mut LineWriter(&mut raw),
        format_args!("addr=0x{:016x} ", obj as usize),
    );
    let zeros = b"addr=0x0000000000000000 ";
    for (restrict, shows_raw, shows_zeros) in
        [(1, true, false), (2, false, true), (0, false, false)]
    {
        let live = with_kptr_restrict(restrict, || report(View::Objects));
        kunit_expect!(
            test,
            contains(&live, b"func:alloctag_capture_kptr"),
            "kptr_restrict={restrict}: the object is not in the report"
        );
        kunit_expect!(
            test,
            contains(&live, &raw) == shows_raw,
            "kptr_restrict={restrict}: the address shown: {shows_raw} expected"
        );
        kunit_expect!(
            test,
            contains(&live, zeros) == shows_zeros,
            "kptr_restrict={restrict}: zeros shown: {shows_zeros} expected"
        );
    }
    // SAFETY: `obj` came from kmalloc, or is null.
    unsafe { bindings::kfree(obj) };
    kunit_expect!(test, capture::remove(id).is_ok());
}

fn rust_sites_selected_by_line(test: &Test) {
    for (line, plain) in [(RUST_SITE_LINE, false), (PLAIN_SITE_LINE, true)] {
        let mut text = KVec::new();
        let _ = core::fmt::Write::write_fmt(
            &mut LineWriter(&mut text),
            format_args!("{}:{line}", file!()),
        );
        let Some(id) = select(test, core::str::from_utf8(&text).unwrap_or("")) else {
            return;
        };
        let obj = if plain {
            plain_site().map(|b| KBox::into_raw(b) as usize)
        } else {
            rust_site().map(|b| KBox::into_raw(b) as usize)
        };
        kunit_expect!(test, obj.is_ok());
        let (used, ..) = capture::stats();
        kunit_expect!(test, used == 1, "line {line}: {used} records");
        // The addresses as root with CAP_SYSLOG sees them at kptr_restrict=1.
        let live = with_kptr_restrict(1, || report(View::Objects));
        kunit_expect!(
            test,
            contains(&live, &text),
            "line {line} not in the report"
        );
        if let Ok(obj) = obj {
            let mut addr = KVec::new();
            let _ = core::fmt::Write::write_fmt(
                &mut LineWriter(&mut addr),
                format_args!("addr=0x{obj:016x} "),
            );
            kunit_expect!(
                test,
                contains(&live, &addr),
                "line {line}: object not recorded"
            );
            // SAFETY: `obj` came from `KBox::into_raw` of the size freed here.
            unsafe { bindings::kfree(obj as *const c_void) };
        }
        kunit_expect!(
            test,
            capture::stats().0 == 0,
            "line {line}: record left after the free"
        );
        kunit_expect!(test, capture::remove(id).is_ok());
    }
}

fn bad_commands_change_nothing(test: &Test) {
    for bad in [
        "",
        "add",
        "add a:0",
        "add a b c d e",
        "remove",
        "remove x",
        "remove 1 2",
        "limit",
        "limit 0",
        "limit -1",
        "limit 99999999",
        "clear now",
        "frob",
    ] {
        let r = capture::run(bad.as_bytes());
        kunit_expect!(test, r == Err(EINVAL), "'{bad}': {r:?}");
    }
    kunit_expect!(test, capture::run(b"remove 7") == Err(ENOENT));
    kunit_expect!(
        test,
        capture::stats().1 == 0,
        "a refused command started capture"
    );
    kunit_expect!(
        test,
        capture::limit() == 4096,
        "a refused command changed the limit"
    );
    kunit_expect!(test, capture::run(b"add func:alloctag_capture_off").is_ok());
    kunit_expect!(
        test,
        capture::run(b"add func:alloctag_capture_off") == Err(EEXIST)
    );
    kunit_expect!(test, capture::run(b"clear").is_ok());
    kunit_expect!(test, capture::stats().1 == 0);
}

// The migration case's tags and helper: without CONFIG_MIGRATION they would be dead code.
#[cfg(CONFIG_MIGRATION)]
test_tag!(MIGRATE_TAG, "alloctag_capture_migrate");
#[cfg(CONFIG_MIGRATION)]
test_tag!(TARGET_TAG, "alloctag_capture_target");

/// Returns the page frame number that the record of `tag`'s only object holds.
#[cfg(CONFIG_MIGRATION)]
fn only_pfn(test: &Test, tag: &AllocTag) -> Option<usize> {
    let found = records(test, tag);
    kunit_expect!(test, found.len() == 1, "{} records", found.len());
    found.first().map(|r| r.object)
}

/// Migration moves a folio's charge to the new folio (`pgalloc_tag_copy()`, which every
/// migration path reaches through `folio_migrate_flags()`): the record moves with it, the new
/// folio's own record goes with the charge it loses, and freeing the new folio frees the record.
#[cfg(CONFIG_MIGRATION)]
fn migration_moves_the_record(test: &Test) {
    let Some(id) = select(test, "func:alloctag_capture_migrate") else {
        return;
    };
    let Some(target_id) = select(test, "func:alloctag_capture_target") else {
        let _ = capture::remove(id);
        return;
    };
    let old = with_tag(MIGRATE_TAG, || alloc_pages(0));
    let new = with_tag(TARGET_TAG, || alloc_pages(0));
    if !old.is_null() && !new.is_null() {
        let old_pfn = only_pfn(test, MIGRATE_TAG);
        let new_pfn = only_pfn(test, TARGET_TAG);
        // SAFETY: Both are order-0 pages this case owns, each its own folio, neither mapped, on
        // an LRU list or in a page cache.
        unsafe { super::migrate_flags(new, old) };
        kunit_expect!(
            test,
            records(test, TARGET_TAG).is_empty(),
            "the target kept its record"
        );
        let moved = only_pfn(test, MIGRATE_TAG);
        kunit_expect!(
            test,
            moved.is_some() && moved == new_pfn && moved != old_pfn,
            "record at pfn {moved:?}, old {old_pfn:?}, new {new_pfn:?}"
        );
        expect_all_tracked(test, MIGRATE_TAG);
        expect_all_tracked(test, TARGET_TAG);
        // SAFETY: `old` is an order-0 page; migration cleared its tag reference.
        unsafe { bindings::__free_pages(old, 0) };
        kunit_expect!(
            test,
            records(test, MIGRATE_TAG).len() == 1,
            "freeing the old page freed the moved record"
        );
        // SAFETY: `new` is an order-0 page, now charged to `MIGRATE_TAG`.
        unsafe { bindings::__free_pages(new, 0) };
        kunit_expect!(
            test,
            records(test, MIGRATE_TAG).is_empty(),
            "freeing the new page left a record"
        );
        expect_all_tracked(test, MIGRATE_TAG);
    } else {
        kunit_expect!(test, false, "no pages");
        for page in [old, new] {
            if !page.is_null() {
                // SAFETY: An order-0 page from above.
                unsafe { bindings::__free_pages(page, 0) };
            }
        }
    }
    kunit_expect!(test, capture::remove(target_id).is_ok());
    kunit_expect!(test, capture::remove(id).is_ok());
}

/// Without page migration there is nothing to move.
#[cfg(not(CONFIG_MIGRATION))]
fn migration_moves_the_record(test: &Test) {
    test.skip("CONFIG_MIGRATION is off");
}

// A tag without an index, yet marked for capture as a selection marks a site: mark 1, the
// field's lowest bit.
test_tag!(
    UNINDEXED_TAG,
    "unindexed_page_makes_no_record",
    loose,
    flags = Field::CAPTURE.mask() & Field::CAPTURE.mask().wrapping_neg()
);

/// With page tags in page flags, a page charged to a tag without an index is not charged (the
/// page holds the empty marker, so its free looks for no record): capture makes no record of it
/// either, or the record would outlive the page.
fn unindexed_page_makes_no_record(test: &Test) {
    if !crate::alloc_tag::index::compressed() {
        test.skip("page tags are in page_ext");
        return;
    }
    // Any selection turns the hooks on; the tag carries its mark itself.
    let Some(id) = select(test, "func:alloctag_capture_selects_nothing") else {
        return;
    };
    let page = with_tag(UNINDEXED_TAG, || alloc_pages(0));
    kunit_expect!(test, !page.is_null());
    if !page.is_null() {
        // SAFETY: `page` was allocated above at order 0 and is freed once.
        unsafe { bindings::__free_pages(page, 0) };
    }
    let left = records(test, UNINDEXED_TAG);
    kunit_expect!(
        test,
        left.is_empty(),
        "{} records after the free",
        left.len()
    );
    kunit_expect!(test, capture::remove(id).is_ok());
}

/// The reports' sort orders by key, smallest first, keeping every element.
fn reports_sort_by_key(test: &Test) {
    // 97 is prime to 251: a permutation of 0..251.
    let mut v: [u32; 251] = core::array::from_fn(|i| (i as u32 * 97 + 13) % 251);
    capture::sort::sort_by_key(&mut v, |&x| x);
    kunit_expect!(test, v.iter().enumerate().all(|(i, &x)| x == i as u32));
    // Largest first with ties, through `Reverse` as the process report sorts.
    let mut w: [(u32, u32); 100] = core::array::from_fn(|i| ((i as u32 * 37) % 10, i as u32));
    capture::sort::sort_by_key(&mut w, |&(k, i)| (core::cmp::Reverse(k), i));
    kunit_expect!(
        test,
        w.windows(2)
            .all(|p| p[0].0 > p[1].0 || (p[0].0 == p[1].0 && p[0].1 < p[1].1))
    );
    let sum: u32 = w.iter().map(|p| p.1).sum();
    kunit_expect!(test, sum == 99 * 100 / 2, "sum {sum}");
    let mut empty: [u32; 0] = [];
    capture::sort::sort_by_key(&mut empty, |&x| x);
    let mut one = [7u32];
    capture::sort::sort_by_key(&mut one, |&x| x);
    kunit_expect!(test, one == [7]);
}

kunit_suite!(
    capture_suite,
    "alloctag_capture",
    [
        kmalloc_recorded_until_kfree,
        unselected_sites_charged_while_capturing,
        hook_stalled_across_capture_end_charges,
        krealloc_in_place_and_moved,
        kfree_rcu_frees_after_grace_period,
        cache_free_and_bulk_free,
        pages_split_and_vmalloc,
        partly_freed_block_shrinks_its_record,
        split_after_deselection_makes_no_record,
        large_kmalloc_recorded_as_pages,
        depot_flags_follow_the_allocation,
        migration_moves_the_record,
        bounded_with_exact_drops,
        report_copied_by_bounded_holds,
        deselect_flushes_outside_the_registry_lock,
        spinlock_and_hardirq_recorded,
        deselecting_frees_every_record,
        rust_sites_selected_by_line,
        addresses_follow_kptr_restrict,
        bad_commands_change_nothing,
        reports_sort_by_key,
        unindexed_page_makes_no_record,
    ]
);
