// SPDX-License-Identifier: GPL-2.0

//! Rust call sites: `alloc_hooks!` and its short forms give a call site its own tag, named by
//! this file, the line of the call and the enclosing function; nesting behaves as C's; without
//! a tag, the allocator path's fallback tag is charged.

use super::with_tag;
use crate::{
    alloc_tag::{AllocTag, Counters},
    kunit::{kunit_expect, kunit_suite, Test},
};
use kernel::{
    alloc::{flags::GFP_KERNEL, KBox},
    alloc_hooks, alloc_page, alloc_tag as callsite, bindings, kbox, kvec_push, kvec_with_capacity,
    page::PAGE_SIZE,
};

/// Returns the current task's allocation tag: inside `alloc_hooks!`, the call site's.
fn current_tag() -> &'static AllocTag {
    // SAFETY: `current` is valid in process context; every tag made current lives forever.
    unsafe { AllocTag::from_raw((*bindings::get_current()).alloc_tag) }
}

fn callsite_tag_names_file_line_and_function(test: &Test) {
    let line = line!() + 1;
    let (tag, obj) = alloc_hooks!((current_tag(), KBox::new([0u8; 100], GFP_KERNEL)));
    let ct = tag.codetag();
    kunit_expect!(test, ct.lineno() == line, "line {} for {line}", ct.lineno());
    kunit_expect!(
        test,
        ct.filename().as_bytes().ends_with(b"src/tests/callsite.rs")
    );
    kunit_expect!(
        test,
        ct.function().as_bytes()
            == b"alloctag::tests::callsite::callsite_tag_names_file_line_and_function",
        "{}",
        ct.function()
    );
    kunit_expect!(test, ct.modname().is_none());
    let held = tag.read();
    kunit_expect!(test, held.calls == 1 && held.bytes >= 100, "{held:?}");
    drop(obj);
    kunit_expect!(test, tag.read() == Counters::default());
}

fn nested_sites_innermost_wins(test: &Test) {
    let before = current_tag() as *const AllocTag;
    let (outer, after_inner, (inner, inner_obj), outer_obj) = alloc_hooks!({
        let inner = alloc_hooks!((current_tag(), KBox::new(1u64, GFP_KERNEL)));
        (
            current_tag(),
            current_tag(),
            inner,
            KBox::new([0u8; 200], GFP_KERNEL),
        )
    });
    kunit_expect!(test, !core::ptr::eq(outer, inner));
    kunit_expect!(
        test,
        core::ptr::eq(outer, after_inner),
        "the outer tag came back"
    );
    kunit_expect!(
        test,
        core::ptr::eq(current_tag(), before),
        "the caller's tag came back"
    );
    let (o, i) = (outer.read(), inner.read());
    kunit_expect!(test, o.calls == 1 && o.bytes >= 200, "outer {o:?}");
    kunit_expect!(
        test,
        i.calls == 1 && i.bytes >= 8 && i.bytes < 200,
        "inner {i:?}"
    );
    drop((inner_obj, outer_obj));
    kunit_expect!(test, outer.read() == Counters::default());
    kunit_expect!(test, inner.read() == Counters::default());
}

fn untagged_allocation_charges_fallback(test: &Test) {
    // SAFETY: The fallback tag is a static `struct alloc_tag` in the kernel crate.
    let fallback = unsafe { AllocTag::from_raw(callsite::UNTAGGED_KREALLOC.as_raw()) };
    kunit_expect!(
        test,
        fallback.codetag().function().as_bytes() == b"rust_untagged_krealloc"
    );
    kunit_expect!(
        test,
        fallback
            .codetag()
            .filename()
            .as_bytes()
            .ends_with(b"rust/kernel/alloc_tag.rs")
    );
    // Another tag current: the allocation is charged to it, not to the fallback.
    super::test_tag!(OUTER_C_TAG, "untagged_allocation_charges_fallback");
    let base = fallback.read();
    let obj = KBox::new([0u8; 300], GFP_KERNEL);
    let held = fallback.read();
    let outer = with_tag(OUTER_C_TAG, || KBox::new([0u8; 300], GFP_KERNEL));
    let after_outer = fallback.read();
    kunit_expect!(
        test,
        held.calls == base.calls + 1 && held.bytes >= base.bytes + 300,
        "{base:?} -> {held:?}"
    );
    kunit_expect!(test, after_outer == held, "{held:?} -> {after_outer:?}");
    kunit_expect!(test, OUTER_C_TAG.read().calls == 1);
    drop((obj, outer));
    kunit_expect!(
        test,
        fallback.read() == base,
        "{base:?} -> {:?} after free",
        fallback.read()
    );
}

/// Finds the tag of the call site at `line` of this file.
#[cfg(CONFIG_MEM_ALLOC_PROFILING_RUST)]
fn find_site(line: u32) -> Option<&'static AllocTag> {
    use crate::{alloc_tag::ALLOC_TAGS, codetag};
    let registry = codetag::read();
    let tag = registry
        .tags(ALLOC_TAGS.handle()?, codetag::Cursor::START)
        .find(|t| {
            let ct = t.codetag();
            ct.lineno() == line && ct.filename().as_bytes().ends_with(b"src/tests/callsite.rs")
        })?;
    // SAFETY: vmlinux's tags live forever.
    Some(unsafe { &*(tag as *const AllocTag) })
}

#[cfg(CONFIG_MEM_ALLOC_PROFILING_RUST)]
fn short_forms_tag_their_lines(test: &Test) {
    let kbox_line = line!() + 1;
    let b = kbox!([0u8; 64], GFP_KERNEL);
    let kvec_line = line!() + 1;
    let mut v = kvec_with_capacity!(4, GFP_KERNEL);
    let push_line = line!() + 3;
    let mut pushed = false;
    if let Ok(v) = v.as_mut() {
        pushed = kvec_push!(*v, 1u64, GFP_KERNEL).is_ok();
    }
    let page_line = line!() + 1;
    let page = alloc_page!(GFP_KERNEL);
    kunit_expect!(test, b.is_ok() && v.is_ok() && pushed && page.is_ok());
    let sites = [
        (kbox_line, 64),
        (kvec_line, 16),
        (page_line, PAGE_SIZE as i64),
    ];
    for (line, min) in sites {
        let Some(tag) = find_site(line) else {
            kunit_expect!(test, false, "no tag at line {line}");
            continue;
        };
        let held = tag.read();
        kunit_expect!(
            test,
            held.calls == 1 && held.bytes >= min,
            "line {line}: {held:?}"
        );
    }
    // The push found room: nothing was allocated there.
    let push = find_site(push_line).map(|t| t.read());
    kunit_expect!(test, push == Some(Counters::default()), "push: {push:?}");
    let page_tag = find_site(page_line);
    kunit_expect!(
        test,
        page_tag.map(|t| t.read().bytes) == Some(PAGE_SIZE as i64)
    );
    drop((b, v, page));
    for (line, _) in sites {
        let now = find_site(line).map(|t| t.read());
        kunit_expect!(
            test,
            now == Some(Counters::default()),
            "line {line}: {now:?} after free"
        );
    }
}

kunit_suite!(
    callsite_suite,
    "alloctag_callsite",
    [
        callsite_tag_names_file_line_and_function,
        nested_sites_innermost_wins,
        untagged_allocation_charges_fallback,
    ]
);

#[cfg(CONFIG_MEM_ALLOC_PROFILING_RUST)]
kunit_suite!(
    short_forms_suite,
    "alloctag_callsite_short_forms",
    [short_forms_tag_their_lines]
);
