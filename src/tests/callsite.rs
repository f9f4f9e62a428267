// SPDX-License-Identifier: GPL-2.0

//! Rust call sites: `alloc_hooks!` and its short forms give a call site its own tag, named by
//! this file, the line of the call and the enclosing function; nesting behaves as C's; without
//! a tag, the allocator path's fallback tag is charged.

use super::{test_tag, with_tag};
use crate::{
    alloc_tag::{AllocTag, Counters},
    kunit::{kunit_expect, kunit_suite, Test},
};
use core::{
    ptr,
    sync::atomic::{AtomicBool, AtomicPtr, Ordering},
};
use kernel::{
    alloc::{
        flags::{GFP_ATOMIC, GFP_KERNEL},
        KBox,
    },
    alloc_hooks, alloc_tag as callsite, bindings,
    init::InPlaceInit,
    new_spinlock,
};
#[cfg(CONFIG_MEM_ALLOC_PROFILING_RUST)]
use kernel::{alloc_page, kbox, kvbox, kvec_push, kvec_with_capacity, page::PAGE_SIZE, vbox};

/// Returns the current task's allocation tag, if it has one: inside `alloc_hooks!`, the call
/// site's.
fn current_tag() -> Option<&'static AllocTag> {
    // SAFETY: `current` is valid in process context.
    let tag = unsafe { (*bindings::get_current()).alloc_tag };
    // SAFETY: The tags made current in these tests are vmlinux's, which live forever.
    (!tag.is_null()).then(|| unsafe { AllocTag::from_raw(tag) })
}

fn callsite_tag_names_file_line_and_function(test: &Test) {
    let line = line!() + 1;
    let (tag, obj) = alloc_hooks!((current_tag(), KBox::new([0u8; 100], GFP_KERNEL)));
    let Some(tag) = tag else {
        kunit_expect!(test, false, "no tag current inside alloc_hooks!");
        return;
    };
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
    let before = current_tag().map(ptr::from_ref);
    let (outer, after_inner, (inner, inner_obj), outer_obj) = alloc_hooks!({
        let inner = alloc_hooks!((current_tag(), KBox::new(1u64, GFP_KERNEL)));
        (
            current_tag(),
            current_tag(),
            inner,
            KBox::new([0u8; 200], GFP_KERNEL),
        )
    });
    kunit_expect!(
        test,
        current_tag().map(ptr::from_ref) == before,
        "the caller's tag came back"
    );
    let (Some(outer), Some(after_inner), Some(inner)) = (outer, after_inner, inner) else {
        kunit_expect!(test, false, "no tag current inside alloc_hooks!");
        return;
    };
    kunit_expect!(test, !ptr::eq(outer, inner));
    kunit_expect!(test, ptr::eq(outer, after_inner), "the outer tag came back");
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
    test_tag!(OUTER_C_TAG, "untagged_allocation_charges_fallback");
    let base = fallback.read();
    let obj = KBox::new([0u8; 300], GFP_KERNEL);
    let held = fallback.read();
    let outer = with_tag(OUTER_C_TAG, || KBox::new([0u8; 300], GFP_KERNEL));
    let after_outer = fallback.read();
    if cfg!(CONFIG_MEM_ALLOC_PROFILING_RUST) {
        // The Rust core gives the plain `KBox::new` above a dynamic tag of its own line
        // (tests/dynamic.rs); the fallback takes what no tag can be made for.
        kunit_expect!(test, held == base, "{base:?} -> {held:?}");
    } else {
        kunit_expect!(
            test,
            held.calls == base.calls + 1 && held.bytes >= base.bytes + 300,
            "{base:?} -> {held:?}"
        );
    }
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

/// The interrupt work of [`irq_allocation_charges_fallback`].
static mut IRQ_WORK: bindings::irq_work = {
    // SAFETY: All zeroes is `IRQ_WORK_INIT()`'s value but for the function: no flags, no
    // waiter, an unlinked node.
    let mut work: bindings::irq_work = unsafe { core::mem::zeroed() };
    work.func = Some(irq_allocate);
    work
};
/// What the interrupt work allocated.
static IRQ_OBJECT: AtomicPtr<[u8; 96]> = AtomicPtr::new(ptr::null_mut());
/// Whether the interrupt work ran.
static IRQ_RAN: AtomicBool = AtomicBool::new(false);
/// Whether it interrupted a task whose current tag was [`INTERRUPTED_TAG`].
static IRQ_SAW_TAG: AtomicBool = AtomicBool::new(false);

/// Allocates with no tag of its own, in hard interrupt context.
///
/// # Safety
///
/// Called by the irq_work core with [`IRQ_WORK`].
unsafe extern "C" fn irq_allocate(_work: *mut bindings::irq_work) {
    // SAFETY: `current` is valid in interrupt context too: the interrupted task.
    let tag = unsafe { (*bindings::get_current()).alloc_tag };
    IRQ_SAW_TAG.store(ptr::eq(tag, INTERRUPTED_TAG.as_raw()), Ordering::Relaxed);
    if let Ok(obj) = KBox::new([0u8; 96], GFP_ATOMIC) {
        IRQ_OBJECT.store(KBox::into_raw(obj), Ordering::Relaxed);
    }
    IRQ_RAN.store(true, Ordering::Release);
}

test_tag!(INTERRUPTED_TAG, "irq_allocation_charges_fallback");

/// An allocation without a tag of its own in an interrupt is charged to the fallback tag, not
/// to the tag of the task it interrupted.
fn irq_allocation_charges_fallback(test: &Test) {
    // SAFETY: The fallback tag is a static `struct alloc_tag` in the kernel crate.
    let fallback = unsafe { AllocTag::from_raw(callsite::UNTAGGED_KREALLOC.as_raw()) };
    let base = INTERRUPTED_TAG.read();
    IRQ_RAN.store(false, Ordering::Relaxed);
    // Under a spinlock, with interrupts on and no preemption, the self-interrupt that
    // irq_work_queue() raises runs on this CPU, interrupting this task while its tag is set.
    let Ok(lock) = KBox::pin_init(new_spinlock!(()), GFP_KERNEL) else {
        kunit_expect!(test, false, "no memory for the lock");
        return;
    };
    let (fallback_before, fallback_during, ran) = {
        let _guard = lock.lock();
        let before = fallback.read();
        let ran = with_tag(INTERRUPTED_TAG, || {
            // SAFETY: `IRQ_WORK` is initialised and only queued here, one case at a time.
            unsafe { bindings::irq_work_queue(&raw mut IRQ_WORK) };
            let mut spins = 0u64;
            while !IRQ_RAN.load(Ordering::Acquire) && spins < 1_000_000_000 {
                core::hint::spin_loop();
                spins += 1;
            }
            IRQ_RAN.load(Ordering::Acquire)
        });
        (before, fallback.read(), ran)
    };
    // SAFETY: The work is not requeued; this waits until it is idle.
    unsafe { bindings::irq_work_sync(&raw mut IRQ_WORK) };
    let obj = IRQ_OBJECT.swap(ptr::null_mut(), Ordering::Relaxed);
    kunit_expect!(test, ran, "the interrupt work did not run");
    kunit_expect!(
        test,
        IRQ_SAW_TAG.load(Ordering::Relaxed),
        "the interrupt did not find the task's tag current"
    );
    kunit_expect!(test, !obj.is_null(), "the interrupt's allocation failed");
    let during = INTERRUPTED_TAG.read();
    kunit_expect!(
        test,
        during == base,
        "{base:?} -> {during:?}: charged to the task's tag"
    );
    // Exactly the one allocation of the interrupt, nothing else: one call, charged its
    // cache's size (at least the 96 bytes asked for; more where KASAN adds metadata).
    let grew = fallback_during.bytes - fallback_before.bytes;
    kunit_expect!(
        test,
        fallback_during.calls == fallback_before.calls + 1 && grew >= 96,
        "fallback {fallback_before:?} -> {fallback_during:?}"
    );
    if !obj.is_null() {
        // SAFETY: Made by `KBox::into_raw` in `irq_allocate`, taken once.
        drop(unsafe { KBox::from_raw(obj) });
    }
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
    let kvbox_line = line!() + 1;
    let kvb = kvbox!([0u8; 96], GFP_KERNEL);
    kunit_expect!(
        test,
        b.is_ok() && v.is_ok() && pushed && page.is_ok() && kvb.is_ok()
    );
    // vmalloc charges its pages and the array that lists them: at least a page.
    let vbox_line = line!() + 1;
    let vb = vbox!([0u64; 64], GFP_KERNEL);
    kunit_expect!(test, vb.is_ok());
    let vheld = find_site(vbox_line).map(|t| t.read());
    kunit_expect!(
        test,
        vheld.is_some_and(|c| c.calls >= 1 && c.bytes >= PAGE_SIZE as i64),
        "vbox!: {vheld:?}"
    );
    drop(vb);
    let vnow = find_site(vbox_line).map(|t| t.read());
    kunit_expect!(
        test,
        vnow == Some(Counters::default()),
        "vbox! after free: {vnow:?}"
    );
    let sites = [
        (kbox_line, 64),
        (kvec_line, 16),
        (page_line, PAGE_SIZE as i64),
        (kvbox_line, 96),
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
    drop((b, v, page, kvb));
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
        irq_allocation_charges_fallback,
    ]
);

#[cfg(CONFIG_MEM_ALLOC_PROFILING_RUST)]
kunit_suite!(
    short_forms_suite,
    "alloctag_callsite_short_forms",
    [short_forms_tag_their_lines]
);
