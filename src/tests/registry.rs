// SPDX-License-Identifier: GPL-2.0

//! The code-tag registry: vmlinux and module ranges, resumable cursors, module unload, and the
//! top users that show_mem() asks for.

use super::{alloc_pages, test_tag, with_tag};
use crate::{
    alloc_tag::{alloc_tag_top_users, top_users, AllocTag, ALLOC_TAGS},
    codetag::{self, Cursor, ModuleTags, Registry, TagType},
    kunit::{kunit_expect, kunit_suite, Test},
};
use core::{
    ptr,
    sync::atomic::{AtomicUsize, Ordering},
};
use kernel::{
    alloc::{flags::GFP_KERNEL, KBox},
    bindings, c_str,
    init::InPlaceInit,
    new_spinlock,
};

test_tag!(LISTED_TAG, "vmlinux_tags_are_listed");

fn vmlinux_tags_are_listed(test: &Test) {
    let Some(handle) = ALLOC_TAGS.handle() else {
        kunit_expect!(test, false, "allocation tags are not registered");
        return;
    };
    let registry = codetag::read();
    let (mut count, mut seen) = (0, 0);
    for tag in registry.tags(handle, Cursor::START) {
        count += 1;
        seen += usize::from(ptr::eq(tag, LISTED_TAG));
    }
    kunit_expect!(test, seen == 1, "our tag seen {seen} times");
    kunit_expect!(test, count == registry.count(handle));
    kunit_expect!(test, count > 1000, "only {count} tags");
}

/// Counters that the fake module tags share; nothing charges them.
#[link_section = ".data..percpu"]
static mut FAKE_COUNTERS: bindings::alloc_tag_counters =
    bindings::alloc_tag_counters { bytes: 0, calls: 0 };

/// A tag of a module that is not really loaded.
macro_rules! fake_tag {
    () => {
        // SAFETY: `FAKE_COUNTERS` is a `.data..percpu` static.
        unsafe {
            AllocTag::new(
                bindings::codetag {
                    flags: 0,
                    lineno: line!(),
                    modname: c_str!("fake").as_char_ptr(),
                    function: c_str!("fake_function").as_char_ptr(),
                    filename: c_str!(file!()).as_char_ptr(),
                },
                &raw mut FAKE_COUNTERS,
            )
        }
    };
}

static FAKE_A: [AllocTag; 2] = [fake_tag!(), fake_tag!()];
static FAKE_B: [AllocTag; 1] = [fake_tag!()];

/// Stand-ins for the `struct module`s of the fake modules; only their addresses and names are
/// used.
// SAFETY: All zeroes is a valid `struct module`: integers, null pointers and empty lists.
static mut MODULE_A: bindings::module = unsafe { core::mem::zeroed() };
// SAFETY: As above.
static mut MODULE_B: bindings::module = unsafe { core::mem::zeroed() };

static UNLOADS: AtomicUsize = AtomicUsize::new(0);
static UNLOADED_TAGS: AtomicUsize = AtomicUsize::new(0);

/// A second tag type over the same section, as another user of the library would add.
struct TestTags;

// SAFETY: `alloc_tags` holds `struct alloc_tag`s, which `AllocTag` is.
unsafe impl TagType for TestTags {
    type Tag = AllocTag;
    const SECTION: &'static kernel::str::CStr = c_str!("alloc_tags");

    fn module_unload(module: ModuleTags<'_, Self>) -> bool {
        UNLOADS.fetch_add(1, Ordering::Relaxed);
        UNLOADED_TAGS.fetch_add(module.tags().count(), Ordering::Relaxed);
        module.name().as_bytes() != b"fake_a"
    }
}

/// Makes a registry of [`TestTags`] with vmlinux's tags and the fake modules A and B.
fn registry_with_fakes(test: &Test) -> Option<(Registry, codetag::Handle<TestTags>)> {
    let (a, b) = (&raw mut MODULE_A, &raw mut MODULE_B);
    // SAFETY: Only these tests use the stand-ins, and KUnit runs one case at a time.
    unsafe {
        (&mut (*a).name)[..7].copy_from_slice(&b"fake_a\0".map(|c| c as _));
        (&mut (*b).name)[..7].copy_from_slice(&b"fake_b\0".map(|c| c as _));
    }
    let mut registry = Registry::new();
    let handle = registry.register::<TestTags>().ok()?;
    let added = registry.add_test_module(handle, a, &FAKE_A).is_ok()
        && registry.add_test_module(handle, b, &FAKE_B).is_ok();
    kunit_expect!(test, added);
    added.then_some((registry, handle))
}

fn module_tags_follow_vmlinux(test: &Test) {
    let Some((registry, handle)) = registry_with_fakes(test) else {
        return;
    };
    let total = registry.count(handle);
    let mut tags = registry.tags(handle, Cursor::START);
    let vmlinux = tags.by_ref().take(total - 3).count();
    kunit_expect!(
        test,
        vmlinux == total - 3 && vmlinux > 1000,
        "{vmlinux} of {total}"
    );
    let rest: [Option<&AllocTag>; 4] = [tags.next(), tags.next(), tags.next(), tags.next()];
    kunit_expect!(test, rest[0].is_some_and(|t| ptr::eq(t, &FAKE_A[0])));
    kunit_expect!(test, rest[1].is_some_and(|t| ptr::eq(t, &FAKE_A[1])));
    kunit_expect!(test, rest[2].is_some_and(|t| ptr::eq(t, &FAKE_B[0])));
    kunit_expect!(test, rest[3].is_none());
}

fn cursor_resumes_where_it_stopped(test: &Test) {
    let Some((registry, handle)) = registry_with_fakes(test) else {
        return;
    };
    // Walk the tags in steps of 7, each from the last cursor, as chunked reads do.
    let mut cursor = Cursor::START;
    let mut stepped = 0;
    loop {
        let mut tags = registry.tags(handle, cursor);
        let n = tags.by_ref().take(7).count();
        stepped += n;
        cursor = tags.cursor();
        if n < 7 {
            break;
        }
    }
    kunit_expect!(
        test,
        stepped == registry.count(handle),
        "{stepped} tags in steps"
    );
    let mut whole = registry.tags(handle, Cursor::START);
    let mut half = registry.tags(handle, Cursor::START);
    half.by_ref().take(100).count();
    let resumed = registry.tags(handle, half.cursor()).next();
    let walked = whole.nth(100);
    kunit_expect!(
        test,
        resumed.is_some() && resumed.map(ptr::from_ref) == walked.map(ptr::from_ref)
    );
}

fn unload_drops_module_and_moves_cursor(test: &Test) {
    let Some((mut registry, handle)) = registry_with_fakes(test) else {
        return;
    };
    let total = registry.count(handle);
    let mut tags = registry.tags(handle, Cursor::START);
    tags.by_ref().take(total - 2).count();
    let at_a1 = tags.cursor();
    kunit_expect!(test, tags.next().is_some_and(|t| ptr::eq(t, &FAKE_A[1])));

    UNLOADS.store(0, Ordering::Relaxed);
    UNLOADED_TAGS.store(0, Ordering::Relaxed);
    let keep_a = !registry.remove_test_module(&raw mut MODULE_A);
    kunit_expect!(test, keep_a, "the type's hook asked to keep fake_a");
    kunit_expect!(test, UNLOADS.load(Ordering::Relaxed) == 1);
    kunit_expect!(test, UNLOADED_TAGS.load(Ordering::Relaxed) == 2);
    kunit_expect!(test, registry.count(handle) == total - 2);
    // The cursor stood in the module that went: it resumes at the next module.
    let next = registry.tags(handle, at_a1).next();
    kunit_expect!(test, next.is_some_and(|t| ptr::eq(t, &FAKE_B[0])));

    kunit_expect!(test, registry.remove_test_module(&raw mut MODULE_B));
    kunit_expect!(test, registry.count(handle) == total - 3);
    kunit_expect!(
        test,
        registry.remove_test_module(&raw mut MODULE_B),
        "unknown modules unload"
    );
}

test_tag!(ONE_PAGE, "top_users_one_page");
test_tag!(FOUR_PAGES, "top_users_four_pages");
test_tag!(TWO_PAGES, "top_users_two_pages");

fn top_users_are_largest_first(test: &Test) {
    let mut pages = [ptr::null_mut(); 3];
    for (i, (tag, order)) in [(ONE_PAGE, 0), (FOUR_PAGES, 2), (TWO_PAGES, 1)]
        .into_iter()
        .enumerate()
    {
        pages[i] = with_tag(tag, || alloc_pages(order));
    }
    let empty = bindings::codetag_bytes {
        ct: ptr::null_mut(),
        bytes: 0,
    };
    let mut top = [empty; 2];
    let n = top_users([ONE_PAGE, FOUR_PAGES, TWO_PAGES].into_iter(), &mut top);
    kunit_expect!(test, n == 2);
    kunit_expect!(test, ptr::eq(top[0].ct.cast(), FOUR_PAGES.codetag()));
    kunit_expect!(test, ptr::eq(top[1].ct.cast(), TWO_PAGES.codetag()));
    for (page, order) in pages.into_iter().zip([0, 2, 1]) {
        if !page.is_null() {
            // SAFETY: Allocated above with this order, freed once.
            unsafe { bindings::__free_pages(page, order) };
        }
    }

    // The kernel's entry point, sleeping and not.
    let mut top = [empty; 16];
    for can_sleep in [true, false] {
        let n = alloc_tag_top_users(top.as_mut_ptr(), top.len(), can_sleep);
        kunit_expect!(test, n == top.len(), "{n} top users");
        kunit_expect!(test, top[..n].windows(2).all(|w| w[0].bytes >= w[1].bytes));
    }
    kunit_expect!(test, alloc_tag_top_users(top.as_mut_ptr(), 0, true) == 0);

    // From atomic context, as show_mem() may call it: under a spinlock, where anything that
    // sleeps is reported by CONFIG_DEBUG_ATOMIC_SLEEP (and the test command fails on it).
    let Ok(lock) = KBox::pin_init(new_spinlock!(()), GFP_KERNEL) else {
        kunit_expect!(test, false, "no memory for the lock");
        return;
    };
    let guard = lock.lock();
    let n = alloc_tag_top_users(top.as_mut_ptr(), top.len(), false);
    drop(guard);
    kunit_expect!(test, n == top.len(), "{n} top users in atomic context");
}

kunit_suite!(
    registry_suite,
    "alloctag_registry",
    [
        vmlinux_tags_are_listed,
        module_tags_follow_vmlinux,
        cursor_resumes_where_it_stopped,
        unload_drops_module_and_moves_cursor,
        top_users_are_largest_first,
    ]
);
