// SPDX-License-Identifier: GPL-2.0

//! Per-node counting (src/alloc_tag/node.rs): a tag's node shares, each its CPUs' counters plus
//! its slot, move by exactly what an allocation on that node charges, whichever CPU counts it,
//! and add up to the tag's total at every step; per-CPU memory has the last slot; the slots'
//! own arithmetic. Run where per-node counting is on (the kcsan configuration, booted with
//! `alloctag.per_node=on` on two emulated nodes); skipped elsewhere.

use super::{dynamic::find_dynamic_in, with_tag};
use crate::{
    alloc_tag::{AllocTag, Counters, Share},
    kunit::{kunit_expect, kunit_suite, Test},
};
use core::{ffi::c_void, ptr};
use kernel::{
    alloc::{flags::GFP_KERNEL, KBox, KVec},
    bindings, c_str,
};

/// Returns the number of slots of a tag (`nr_node_ids` + 1).
fn slots() -> usize {
    crate::alloc_tag::node::slots()
}

/// Returns a tag with slots of its own: the dynamic tag of a line of this file, made by a plain
/// allocation there, so that only the case charges it; `None` (skipped) where per-node counting
/// is off.
#[inline(never)]
fn tag_with_slots(test: &Test) -> Option<&'static AllocTag> {
    if !crate::alloc_tag::node::wanted() {
        test.skip("per-node counting is off");
        return None;
    }
    let line = line!() + 1;
    let made = KBox::new(0u64, GFP_KERNEL);
    kunit_expect!(test, made.is_ok());
    drop(made);
    let tag = find_dynamic_in(b"src/tests/node.rs", line);
    kunit_expect!(test, tag.is_some(), "no dynamic tag at line {line}");
    let tag = tag?;
    let mut shares = shares_of(test)?;
    let has_slots = tag.read_nodes(&mut shares).is_some();
    kunit_expect!(
        test,
        has_slots,
        "the dynamic tag has no slots with per-node counting on"
    );
    has_slots.then_some(tag)
}

/// `GFP_KERNEL` for node-exact memory: `__GFP_THISNODE`, or the allocation may fall back to
/// another node (a bit of 6.12's `gfp_types.h` enum, which bindgen sees; the flag is a macro).
const GFP_THISNODE: bindings::gfp_t = bindings::GFP_KERNEL | (1 << bindings::___GFP_THISNODE_BIT);

/// Returns room for a tag's shares, one per slot.
fn shares_of(test: &Test) -> Option<KVec<Share>> {
    let shares = KVec::from_elem(Share::default(), slots(), GFP_KERNEL);
    kunit_expect!(test, shares.is_ok(), "no memory for {} shares", slots());
    shares.ok()
}

/// Reads `tag`'s shares into `shares` and checks that they add up to its total, read apart
/// (nothing else charges the tag meanwhile); returns the total.
fn read_exact(test: &Test, tag: &AllocTag, shares: &mut [Share], what: &str) -> Counters {
    let sum = tag.read_nodes(shares);
    let total = tag.read();
    kunit_expect!(
        test,
        sum == Some(total),
        "{what}: the shares add up to {sum:?}, the total is {total:?}"
    );
    total
}

/// Checks that exactly share `at` moved from `base` to `now`, by `bytes` and `calls`.
fn moved_alone(test: &Test, base: &[Share], now: &[Share], at: usize, bytes: i64, calls: i64) {
    for (i, (b, n)) in base.iter().zip(now).enumerate() {
        let want = if i == at {
            Share {
                bytes: b.bytes + bytes,
                calls: b.calls + calls,
            }
        } else {
            *b
        };
        kunit_expect!(
            test,
            *n == want,
            "share {i}: {b:?} -> {n:?}, expected {want:?} ({bytes} bytes, {calls} calls on share {at})"
        );
    }
}

/// Allocates one object with `alloc(node)` under `tag` for each node (each has memory: the
/// emulated ones do), checks that its node's share alone moved by its charge, and that freeing
/// it with `free` takes the charge back.
fn each_node(
    test: &Test,
    tag: &'static AllocTag,
    alloc: impl Fn(i32) -> *mut c_void,
    free: impl Fn(*mut c_void),
) {
    let (Some(mut base), Some(mut now)) = (shares_of(test), shares_of(test)) else {
        return;
    };
    for node in 0..slots() - 1 {
        let before = read_exact(test, tag, &mut base, "before");
        let obj = with_tag(tag, || alloc(node as i32));
        kunit_expect!(test, !obj.is_null(), "no memory on node {node}");
        if obj.is_null() {
            continue;
        }
        let held = read_exact(test, tag, &mut now, "held");
        let charge = held.bytes - before.bytes;
        kunit_expect!(test, charge > 0 && held.calls == before.calls + 1);
        moved_alone(test, &base, &now, node, charge, 1);
        free(obj);
        read_exact(test, tag, &mut now, "freed");
        moved_alone(test, &base, &now, node, 0, 0);
    }
}

/// A page allocated for each node counts on that node's share.
fn pages_count_on_their_node(test: &Test) {
    let Some(tag) = tag_with_slots(test) else {
        return;
    };
    each_node(
        test,
        tag,
        // SAFETY: Allocating has no precondition; `node` is below `nr_node_ids`.
        |node| unsafe {
            bindings::__alloc_pages_noprof(GFP_THISNODE, 0, node, ptr::null_mut()).cast()
        },
        // SAFETY: An order-0 page allocated above, freed once.
        |page| unsafe { bindings::__free_pages(page.cast(), 0) },
    );
}

/// A slab object allocated for each node counts on its slab's node share.
fn slab_objects_count_on_their_node(test: &Test) {
    let Some(tag) = tag_with_slots(test) else {
        return;
    };
    // SAFETY: All-zero `kmem_cache_args` are the defaults; the name is static.
    let cache = unsafe {
        let mut args: bindings::kmem_cache_args = core::mem::zeroed();
        bindings::__kmem_cache_create_args(c_str!("alloctag_node").as_char_ptr(), 200, &mut args, 0)
    };
    kunit_expect!(test, !cache.is_null(), "no cache alloctag_node");
    if cache.is_null() {
        return;
    }
    each_node(
        test,
        tag,
        // SAFETY: `cache` is live until destroyed below; `node` is below `nr_node_ids`.
        |node| unsafe { bindings::kmem_cache_alloc_node_noprof(cache, GFP_THISNODE, node) },
        // SAFETY: An object of `cache` allocated above, freed once.
        |obj| unsafe { bindings::kmem_cache_free(cache, obj) },
    );
    // SAFETY: Every object of the cache was freed.
    unsafe { bindings::kmem_cache_destroy(cache) };
}

/// Per-CPU memory, a unit on every possible CPU whatever their nodes, counts on the last share.
fn percpu_memory_counts_on_the_last_share(test: &Test) {
    let Some(tag) = tag_with_slots(test) else {
        return;
    };
    let (Some(mut base), Some(mut now)) = (shares_of(test), shares_of(test)) else {
        return;
    };
    let before = read_exact(test, tag, &mut base, "before");
    let area = with_tag(tag, || {
        // SAFETY: Process context; a small size and its alignment.
        unsafe { bindings::pcpu_alloc_noprof(64, 8, false, bindings::GFP_KERNEL) }
    });
    kunit_expect!(test, !area.is_null());
    if area.is_null() {
        return;
    }
    let held = read_exact(test, tag, &mut now, "held");
    moved_alone(test, &base, &now, slots() - 1, held.bytes - before.bytes, 1);
    kunit_expect!(test, held.bytes - before.bytes >= 64);
    // SAFETY: Allocated above, freed once.
    unsafe { bindings::free_percpu(area) };
    read_exact(test, tag, &mut now, "freed");
    moved_alone(test, &base, &now, 0, 0, 0);
}

/// The hooks' remote update (`alloctag_node_slot_count()`): each node's slot takes its own
/// figures, `NUMA_NO_NODE` and nodes beyond `nr_node_ids` the last slot's, and the shares add up
/// to the total, which counts the slots, at every step.
fn node_count_arithmetic(test: &Test) {
    let Some(tag) = tag_with_slots(test) else {
        return;
    };
    let (Some(mut base), Some(mut now)) = (shares_of(test), shares_of(test)) else {
        return;
    };
    let last = slots() - 1;
    let count = |nid: i32, bytes: isize, calls: isize| {
        // SAFETY: `tag` is a live dynamic tag with slots (`tag_with_slots`).
        unsafe { crate::alloc_tag::node::alloctag_node_slot_count(tag.as_raw(), nid, bytes, calls) }
    };
    read_exact(test, tag, &mut base, "before");
    let cases = (0..last as i32)
        .map(|n| (n, n as usize))
        .chain([(bindings::NUMA_NO_NODE, last), (last as i32 + 7, last)]);
    for (nid, at) in cases {
        count(nid, 4096, 1);
        read_exact(test, tag, &mut now, "counted");
        moved_alone(test, &base, &now, at, 4096, 1);
        count(nid, -4096, -1);
        read_exact(test, tag, &mut now, "uncounted");
        moved_alone(test, &base, &now, at, 0, 0);
    }
}

/// Once profiling has counted (from boot with the debug checks, else from the first switch-on),
/// the hooks take the variants of where page tags are and whether per-node counting is on: the
/// page hooks' patched jump, which names the page-flags key and per-node counting's, leads to
/// per-node counting's variant where it is on, else to page flags' or page_ext's; and with it on
/// the slab hooks' plain variants, which count per CPU alone, are off.
fn hooks_take_their_variants(test: &Test) {
    if !crate::alloc_tag::counters::armed() {
        test.skip("profiling has not counted yet");
        return;
    }
    let per_node = crate::alloc_tag::node::wanted();
    let want = if per_node {
        bindings::alloctag_page_variant_ALLOCTAG_PAGE_NODE
    } else if crate::alloc_tag::index::compressed() {
        bindings::alloctag_page_variant_ALLOCTAG_PAGE_FLAGS
    } else {
        bindings::alloctag_page_variant_ALLOCTAG_PAGE_EXT
    };
    // SAFETY: Runs the hooks' inline test of the keys; no precondition.
    let variant = unsafe { bindings::alloctag_test_page_variant() };
    kunit_expect!(
        test,
        variant == want as i32,
        "the page hooks take variant {variant}, not {want}"
    );
    if per_node && crate::keys::enabled() {
        // SAFETY: As above.
        let plain = unsafe { bindings::alloctag_test_slab_plain() };
        kunit_expect!(test, !plain, "the slab hooks take their plain variants");
    }
}

/// The rare paths' patched jump (per-CPU memory, splits, migrations, a block's tail pages)
/// follows profiling from its keys, and per-node counting: none while profiling is off, per
/// node while it is on with per-node counting, else per CPU alone.
fn rare_paths_follow_profiling(test: &Test) {
    if !crate::alloc_tag::counters::armed() {
        test.skip("profiling has not counted yet");
        return;
    }
    let way = if crate::alloc_tag::node::wanted() {
        bindings::alloc_tag_counting_ALLOC_TAG_COUNT_NODE
    } else {
        bindings::alloc_tag_counting_ALLOC_TAG_COUNT_CPU
    };
    let check = |on: bool| {
        let want = if on {
            way
        } else {
            bindings::alloc_tag_counting_ALLOC_TAG_COUNT_OFF
        };
        // SAFETY: Runs the rare paths' inline test of the keys; no precondition.
        let counting = unsafe { bindings::alloctag_test_counting() };
        kunit_expect!(
            test,
            counting == want as i32,
            "profiling on: {on}; the rare paths count as {counting}, not {want}"
        );
    };
    let was = crate::keys::enabled();
    check(was);
    // 6.12's debug checks forbid turning profiling off (src/tests/counters.rs).
    if cfg!(CONFIG_MEM_ALLOC_PROFILING_DEBUG) {
        return;
    }
    for on in [!was, was] {
        crate::keys::set_profiling(on);
        check(on);
    }
}

/// A block's slots come with a number of the table (src/alloc_tag/node/table.rs) in each of its
/// tags, which finds the tag's own (the block's next `slots()`) and none once the block is freed.
fn numbers_find_each_tags_slots(test: &Test) {
    if !crate::alloc_tag::node::wanted() {
        test.skip("per-node counting is off");
        return;
    }
    const fn tag(line: u32) -> AllocTag {
        AllocTag::without_counters(
            c_str!("m").as_char_ptr().cast(),
            c_str!("f").as_char_ptr().cast(),
            c_str!("node.c").as_char_ptr().cast(),
            line,
        )
    }
    // Only this case reads or counts on them.
    static TAGS: [AllocTag; 3] = [tag(1), tag(2), tag(3)];
    for round in 0..2 {
        // SAFETY: Nothing else reads the tags' slots.
        let made = unsafe { crate::alloc_tag::node::make_block(&TAGS) };
        kunit_expect!(test, made.is_ok(), "round {round}: no slots");
        if made.is_err() {
            return;
        }
        let first = TAGS[0].slots_ptr();
        kunit_expect!(
            test,
            !first.is_null(),
            "round {round}: no slots for the first tag"
        );
        for (i, t) in TAGS.iter().enumerate() {
            let own = t.slots_ptr();
            kunit_expect!(
                test,
                own == first.wrapping_add(i * slots()),
                "round {round}: tag {i}'s slots at {own:p}, the block's at {first:p}"
            );
            let mut shares = 0;
            t.for_each_slot(|_, s| {
                kunit_expect!(test, s.bytes == 0 && s.calls == 0, "a new slot is not zero");
                shares += 1;
            });
            kunit_expect!(test, shares == slots());
        }
        // SAFETY: Made above; nothing counts on the tags.
        unsafe { crate::alloc_tag::node::free_block(&TAGS) };
        for t in TAGS.iter() {
            kunit_expect!(
                test,
                t.slots_ptr().is_null(),
                "round {round}: slots after the free"
            );
        }
    }
}

kunit_suite!(
    node_suite,
    "alloctag_node",
    [
        hooks_take_their_variants,
        rare_paths_follow_profiling,
        numbers_find_each_tags_slots,
        pages_count_on_their_node,
        slab_objects_count_on_their_node,
        percpu_memory_counts_on_the_last_share,
        node_count_arithmetic
    ]
);
