// SPDX-License-Identifier: GPL-2.0

//! The code-tag registry: vmlinux and module ranges, resumable cursors, module unload, and the
//! top users that show_mem() asks for.

use super::{alloc_pages, registry_of, test_tag, with_tag};
use crate::{
    alloc_tag::{alloc_tag_top_users, top_users, AllocTag, ALLOC_TAGS},
    codetag::{self, Cursor, ModuleTags, ReadPosition, Registry, TagType},
    kunit::{kunit_expect, kunit_suite, Test},
};
use core::{
    mem::{size_of, MaybeUninit},
    ptr,
    sync::atomic::{AtomicUsize, Ordering},
};
use kernel::{
    alloc::{flags::GFP_KERNEL, KBox, KVec},
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
                    index: 0,
                    #[cfg(CONFIG_ALLOCTAG_PER_NODE)]
                    node_slots: 0,
                },
                &raw mut FAKE_COUNTERS,
            )
        }
    };
}

static FAKE_A: [AllocTag; 2] = [fake_tag!(), fake_tag!()];
static FAKE_B: [AllocTag; 1] = [fake_tag!()];
static FAKE_C: [AllocTag; 2] = [fake_tag!(), fake_tag!()];

/// Stand-ins for the `struct module`s of the fake modules; only their addresses and names are
/// used.
// SAFETY: All zeroes is a valid `struct module`: integers, null pointers and empty lists.
static mut MODULE_A: bindings::module = unsafe { core::mem::zeroed() };
// SAFETY: As above.
static mut MODULE_B: bindings::module = unsafe { core::mem::zeroed() };
// SAFETY: As above.
static mut MODULE_C: bindings::module = unsafe { core::mem::zeroed() };

static UNLOADS: AtomicUsize = AtomicUsize::new(0);
/// Which of fake_a's tags [`TestTags`] says are in use, as live allocations would: bit `i`
/// for `FAKE_A[i]`.
static USED_A: AtomicUsize = AtomicUsize::new(0);
/// The tags [`TestTags::module_free`] was given.
static FREED_TAGS: AtomicUsize = AtomicUsize::new(0);

/// The address of the first tag of the fake module that a test placed in an area (0 while
/// none is), and which of its tags are in use, as [`USED_A`].
static AREA_TAGS: AtomicUsize = AtomicUsize::new(0);
static USED_AREA: AtomicUsize = AtomicUsize::new(0);

/// Returns whether `tag` is one of fake_a's that [`USED_A`] says is in use, or one of the area
/// module's that [`USED_AREA`] says is.
fn used_a(tag: &AllocTag) -> bool {
    let area = AREA_TAGS.load(Ordering::Relaxed);
    let offset = (ptr::from_ref(tag) as usize).wrapping_sub(area);
    if area != 0 && offset < 8 * size_of::<AllocTag>() {
        return USED_AREA.load(Ordering::Relaxed) & (1 << (offset / size_of::<AllocTag>())) != 0;
    }
    FAKE_A
        .iter()
        .position(|t| ptr::eq(t, tag))
        .is_some_and(|i| USED_A.load(Ordering::Relaxed) & (1 << i) != 0)
}
static UNLOADED_TAGS: AtomicUsize = AtomicUsize::new(0);

/// A second tag type over the same section, as another user of the library would add.
struct TestTags;

// SAFETY: `alloc_tags` holds `struct alloc_tag`s, which `AllocTag` is.
unsafe impl TagType for TestTags {
    type Tag = AllocTag;
    const SECTION: &'static kernel::str::CStr = c_str!("alloc_tags");

    fn module_unload(module: ModuleTags<'_, Self>, report: bool) -> bool {
        if report {
            UNLOADS.fetch_add(1, Ordering::Relaxed);
            UNLOADED_TAGS.fetch_add(module.tags().count(), Ordering::Relaxed);
        }
        module.tags().all(|t| !used_a(t))
    }

    fn in_use(tag: &AllocTag) -> bool {
        used_a(tag)
    }

    fn module_free(module: ModuleTags<'_, Self>) {
        FREED_TAGS.fetch_add(module.tags().count(), Ordering::Relaxed);
    }
}

/// The number of tags of the fake modules.
const FAKES: usize = 5;

/// Makes a registry of [`TestTags`] with vmlinux's tags and the fake modules A and B.
fn registry_with_fakes(test: &Test) -> Option<(Registry, codetag::Handle<TestTags>)> {
    let (a, b, c) = (&raw mut MODULE_A, &raw mut MODULE_B, &raw mut MODULE_C);
    // SAFETY: Only these tests use the stand-ins, and KUnit runs one case at a time.
    unsafe {
        (&mut (*a).name)[..7].copy_from_slice(&b"fake_a\0".map(|c| c as _));
        (&mut (*b).name)[..7].copy_from_slice(&b"fake_b\0".map(|c| c as _));
        (&mut (*c).name)[..7].copy_from_slice(&b"fake_c\0".map(|c| c as _));
    }
    let (mut registry, handle) = registry_of::<TestTags>(test)?;
    // SAFETY: The stand-ins are statics with NUL-terminated names.
    let added = unsafe {
        registry.add_test_module(handle, a, &FAKE_A).is_ok()
            && registry.add_test_module(handle, b, &FAKE_B).is_ok()
            && registry.add_test_module(handle, c, &FAKE_C).is_ok()
    };
    kunit_expect!(test, added);
    added.then_some((registry, handle))
}

fn module_tags_follow_vmlinux(test: &Test) {
    let Some((registry, handle)) = registry_with_fakes(test) else {
        return;
    };
    let total = registry.count(handle);
    let mut tags = registry.tags(handle, Cursor::START);
    let vmlinux = tags.by_ref().take(total - FAKES).count();
    kunit_expect!(
        test,
        vmlinux == total - FAKES && vmlinux > 1000,
        "{vmlinux} of {total}"
    );
    let want = [&FAKE_A[0], &FAKE_A[1], &FAKE_B[0], &FAKE_C[0], &FAKE_C[1]];
    for want in want {
        kunit_expect!(test, tags.next().is_some_and(|t| ptr::eq(t, want)));
    }
    kunit_expect!(test, tags.next().is_none());
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

fn unload_keeps_a_used_module_until_reaped(test: &Test) {
    let Some((mut registry, handle)) = registry_with_fakes(test) else {
        return;
    };
    let total = registry.count(handle);
    let mut tags = registry.tags(handle, Cursor::START);
    tags.by_ref().take(total - FAKES + 1).count();
    let at_a1 = tags.cursor();
    kunit_expect!(test, tags.next().is_some_and(|t| ptr::eq(t, &FAKE_A[1])));

    UNLOADS.store(0, Ordering::Relaxed);
    UNLOADED_TAGS.store(0, Ordering::Relaxed);
    FREED_TAGS.store(0, Ordering::Relaxed);
    USED_A.store(0b11, Ordering::Relaxed);
    // SAFETY: The stand-ins were added by `registry_with_fakes`.
    let keep_a = !unsafe { registry.remove_test_module(&raw mut MODULE_A) };
    kunit_expect!(test, keep_a, "the type's hook asked to keep fake_a");
    kunit_expect!(test, UNLOADS.load(Ordering::Relaxed) == 1);
    kunit_expect!(test, UNLOADED_TAGS.load(Ordering::Relaxed) == 2);
    // Kept: still listed, marked unloaded, until its tags are unused and the loader is done.
    kunit_expect!(test, registry.count(handle) == total);
    kunit_expect!(test, FAKE_A.iter().all(|t| t.codetag().unloaded()));
    kunit_expect!(test, !FAKE_B[0].codetag().unloaded());
    let r = registry.reap();
    kunit_expect!(test, r.kept && r.freed == 0, "freed while used: {r:?}");
    // One tag no longer used: it leaves the listing, the module stays.
    USED_A.store(0b10, Ordering::Relaxed);
    let r = registry.reap();
    kunit_expect!(test, r.kept && r.freed == 0, "{r:?}");
    kunit_expect!(test, registry.count(handle) == total - 1);
    kunit_expect!(
        test,
        FAKE_A[0].codetag().dropped() && !FAKE_A[1].codetag().dropped()
    );
    // Unused: freed at the second pass in a row that finds it so, its dropped tag too.
    USED_A.store(0, Ordering::Relaxed);
    let r = registry.reap();
    kunit_expect!(
        test,
        r.kept && r.changed && r.freed == 0,
        "first unused pass: {r:?}"
    );
    let r = registry.reap();
    kunit_expect!(test, !r.kept && r.freed == 1, "second unused pass: {r:?}");
    kunit_expect!(
        test,
        FREED_TAGS.load(Ordering::Relaxed) == 2,
        "the type freed {} tags, not fake_a's 2",
        FREED_TAGS.load(Ordering::Relaxed)
    );
    for t in FAKE_A.iter() {
        t.codetag().flags().fetch_and(
            !(codetag::CODETAG_FLAG_UNLOADED | codetag::CODETAG_FLAG_DROPPED),
            Ordering::Relaxed,
        );
    }
    kunit_expect!(test, registry.count(handle) == total - 2);
    // The cursor stood in the module that went: it resumes at the next module.
    let next = registry.tags(handle, at_a1).next();
    kunit_expect!(test, next.is_some_and(|t| ptr::eq(t, &FAKE_B[0])));

    // SAFETY: As above.
    kunit_expect!(test, unsafe {
        registry.remove_test_module(&raw mut MODULE_B)
    });
    kunit_expect!(test, registry.count(handle) == total - 3);
    kunit_expect!(
        test,
        // SAFETY: As above; B is no longer in the registry.
        unsafe { registry.remove_test_module(&raw mut MODULE_B) },
        "unknown modules unload"
    );
}

/// Reads the whole listing one tag at a time through a [`ReadPosition`], as seq_file does,
/// calling `between(registry, pos)` after each tag; returns the tags read.
fn read_listing(
    registry: &mut Registry,
    handle: codetag::Handle<TestTags>,
    mut between: impl FnMut(&mut Registry, i64),
) -> KVec<*const AllocTag> {
    let mut read = KVec::new();
    let mut position = ReadPosition::START;
    let mut pos = 0;
    while let Some(tag) = position.seek(registry, handle, pos) {
        if read.push(ptr::from_ref(tag), GFP_KERNEL).is_err() {
            break;
        }
        // seq_file shows a record again after its buffer overflowed: same position.
        let again = position.seek(registry, handle, pos).map(ptr::from_ref);
        if again != Some(ptr::from_ref(tag)) {
            break;
        }
        between(registry, pos);
        pos += 1;
    }
    read
}

/// A reader standing on the last tag of a module that then unloads goes on with the first tag
/// of the next module: every tag of a module loaded for the whole read is read exactly once.
fn read_position_skips_nothing_when_a_module_goes(test: &Test) {
    let Some((mut registry, handle)) = registry_with_fakes(test) else {
        return;
    };
    let total = registry.count(handle) as i64;
    let whole = read_listing(&mut registry, handle, |_, _| {});
    kunit_expect!(
        test,
        whole.len() as i64 == total,
        "{} of {total}",
        whole.len()
    );
    // Unload B while the reader stands on its only (and so last) tag, at `total - 3`.
    let read = read_listing(&mut registry, handle, |registry, pos| {
        if pos == total - 3 {
            // SAFETY: B was added by `registry_with_fakes`.
            unsafe { registry.remove_test_module(&raw mut MODULE_B) };
        }
    });
    let tail: [*const AllocTag; 3] = [&FAKE_B[0], &FAKE_C[0], &FAKE_C[1]];
    kunit_expect!(
        test,
        read.len() as i64 == total && read.ends_with(&tail),
        "{} tags read of {total}",
        read.len()
    );
    // Unload A while the reader stands on its first tag: A's second goes with it.
    let Some((mut registry, handle)) = registry_with_fakes(test) else {
        return;
    };
    let read = read_listing(&mut registry, handle, |registry, pos| {
        if pos == total - FAKES as i64 {
            // SAFETY: A was added by `registry_with_fakes`.
            unsafe { registry.remove_test_module(&raw mut MODULE_A) };
        }
    });
    let tail: [*const AllocTag; 4] = [&FAKE_A[0], &FAKE_B[0], &FAKE_C[0], &FAKE_C[1]];
    kunit_expect!(
        test,
        read.len() as i64 == total - 1 && read.ends_with(&tail),
        "{} tags read of {total}",
        read.len()
    );
    // A module loaded during the read is read whole, after the others.
    let Some((mut registry, handle)) = registry_with_fakes(test) else {
        return;
    };
    // SAFETY: C goes first so that it can be added again; the stand-in is static.
    let read = read_listing(&mut registry, handle, |registry, pos| unsafe {
        if pos == 10 {
            registry.remove_test_module(&raw mut MODULE_C);
            let _ = registry.add_test_module(handle, &raw mut MODULE_C, &FAKE_C);
        }
    });
    let tail: [*const AllocTag; 2] = [&FAKE_C[0], &FAKE_C[1]];
    kunit_expect!(
        test,
        read.len() as i64 == total && read.ends_with(&tail),
        "{} tags read of {total}",
        read.len()
    );
}

/// A handle lists tags only in the registry that made it.
fn handles_belong_to_their_registry(test: &Test) {
    let Some((registry, handle)) = registry_with_fakes(test) else {
        return;
    };
    let Some((other, _)) = registry_with_fakes(test) else {
        return;
    };
    kunit_expect!(test, registry.count(handle) > FAKES);
    kunit_expect!(test, other.count(handle) == 0);
    kunit_expect!(test, other.tags(handle, Cursor::START).next().is_none());
    let Some(kernel) = ALLOC_TAGS.handle() else {
        kunit_expect!(test, false, "allocation tags are not registered");
        return;
    };
    kunit_expect!(test, registry.tags(kernel, Cursor::START).next().is_none());
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
    let mut top = [MaybeUninit::<bindings::codetag_bytes>::uninit(); 2];
    let n = top_users([ONE_PAGE, FOUR_PAGES, TWO_PAGES].into_iter(), &mut top);
    kunit_expect!(test, n == 2);
    if n == 2 {
        // SAFETY: `top_users` filled the first `n` entries.
        let top = unsafe { [top[0].assume_init(), top[1].assume_init()] };
        kunit_expect!(test, ptr::eq(top[0].ct.cast(), FOUR_PAGES.codetag()));
        kunit_expect!(test, ptr::eq(top[1].ct.cast(), TWO_PAGES.codetag()));
    }
    for (page, order) in pages.into_iter().zip([0, 2, 1]) {
        if !page.is_null() {
            // SAFETY: Allocated above with this order, freed once.
            unsafe { bindings::__free_pages(page, order) };
        }
    }

    // The kernel's entry point, sleeping and not.
    let empty = bindings::codetag_bytes {
        ct: ptr::null_mut(),
        bytes: 0,
    };
    let mut top = [empty; 16];
    // SAFETY: `top` has room for `top.len()` entries.
    let top_users = |top: &mut [bindings::codetag_bytes], len, can_sleep| unsafe {
        alloc_tag_top_users(top.as_mut_ptr(), len, can_sleep)
    };
    for can_sleep in [true, false] {
        let n = top_users(&mut top, 16, can_sleep);
        kunit_expect!(test, n == top.len(), "{n} top users");
        kunit_expect!(test, top[..n].windows(2).all(|w| w[0].bytes >= w[1].bytes));
    }
    kunit_expect!(test, top_users(&mut top, 0, true) == 0);

    // From atomic context, as show_mem() may call it: under a spinlock, where anything that
    // sleeps is reported by CONFIG_DEBUG_ATOMIC_SLEEP (and the test command fails on it).
    let Ok(lock) = KBox::pin_init(new_spinlock!(()), GFP_KERNEL) else {
        kunit_expect!(test, false, "no memory for the lock");
        return;
    };
    let guard = lock.lock();
    let n = top_users(&mut top, 16, false);
    drop(guard);
    kunit_expect!(test, n == top.len(), "{n} top users in atomic context");
}

/// A module's tags get their counters in blocks of at most one per-CPU allocation
/// (`counters::GROUP` tags), each tag its own entry, charged and read as a static tag's are; a
/// tag without counters reads zero; freeing leaves every tag without.
fn module_counters_made_in_blocks(test: &Test) {
    #[cfg(CONFIG_MODULES)]
    {
        use crate::alloc_tag::counters::{free, make, GROUP};
        use kernel::alloc::{flags::__GFP_ZERO, KVBox};
        const N: usize = 2 * GROUP + 3;
        let Ok(tags) = KVBox::<[AllocTag; N]>::new_uninit(GFP_KERNEL | __GFP_ZERO) else {
            kunit_expect!(test, false, "no memory for the tags");
            return;
        };
        // SAFETY: All zeroes is a valid tag without counters.
        let tags = KVBox::into_raw(unsafe { tags.assume_init() });
        // SAFETY: Leaked above and freed at the end, after the last use of the reference.
        let tags: &'static [AllocTag; N] = unsafe { &*tags };
        let counters = |t: &AllocTag| {
            // SAFETY: The field of a live tag; nothing writes it concurrently.
            unsafe { (*t.as_raw()).counters }
        };
        kunit_expect!(test, tags[N - 1].read() == Default::default());
        // SAFETY: The tags are this case's, without counters, reached by nothing else.
        let made = unsafe { make(tags) };
        kunit_expect!(test, made.is_ok());
        if made.is_ok() {
            let bases = [0, GROUP, 2 * GROUP].map(|i| counters(&tags[i]));
            kunit_expect!(test, bases.iter().all(|b| !b.is_null()));
            kunit_expect!(test, bases[0] != bases[1] && bases[1] != bases[2]);
            let in_blocks = tags
                .iter()
                .enumerate()
                .all(|(i, t)| counters(t) == bases[i / GROUP].wrapping_add(i % GROUP));
            kunit_expect!(test, in_blocks, "each tag its own entry of its block");
            // The last tag of the last block counts an allocation, and no other tag does.
            let last = &tags[N - 1];
            // SAFETY: Allocating has no precondition.
            let obj = with_tag(last, || unsafe {
                bindings::__kmalloc_noprof(16, bindings::GFP_KERNEL)
            });
            kunit_expect!(test, !obj.is_null());
            let held = last.read();
            kunit_expect!(test, held.calls == 1 && held.bytes >= 16, "{held:?}");
            kunit_expect!(test, tags[..N - 1].iter().all(|t| t.read().is_zero()));
            // SAFETY: Allocated above, freed once.
            unsafe { bindings::kfree(obj) };
            kunit_expect!(test, last.read().is_zero());
            // SAFETY: Nothing is charged to the tags any more; nothing else reaches them.
            unsafe { free(tags) };
            kunit_expect!(test, tags.iter().all(|t| counters(t).is_null()));
        }
        // SAFETY: Made by `KVBox::into_raw` above; the reference is not used after this.
        drop(unsafe { KVBox::from_raw(ptr::from_ref(tags).cast_mut()) });
    }
    #[cfg(not(CONFIG_MODULES))]
    let _ = test;
}

/// A stand-in for the module whose tags a test places in an area.
// SAFETY: As for `MODULE_A`.
static mut MODULE_D: bindings::module = unsafe { core::mem::zeroed() };

/// Sections placed in the memory of modules' tags share chunks, keep their alignment, and go
/// back; a chunk goes once its last section does; a bad alignment changes nothing.
fn module_sections_share_chunks(test: &Test) {
    let mut registry = Registry::new();
    let empty = registry.area_usage().0;
    kunit_expect!(test, empty == codetag::AreaUsage::default(), "{empty:?}");
    let mut given = [ptr::null_mut::<u8>(); 3];
    for (i, (len, align)) in [(40, 8), (120, 64), (80, 8)].into_iter().enumerate() {
        match registry.alloc_test_section(len, align) {
            Ok(p) => given[i] = p,
            Err(e) => kunit_expect!(test, false, "section {i}: {e:?}"),
        }
    }
    kunit_expect!(
        test,
        given[1] as usize % 64 == 0,
        "{:p} not aligned to 64",
        given[1]
    );
    let spans = [(given[0], 40), (given[1], 120), (given[2], 80)];
    for (i, &(p, len)) in spans.iter().enumerate() {
        for &(q, other) in &spans[i + 1..] {
            let apart = p as usize + len <= q as usize || q as usize + other <= p as usize;
            kunit_expect!(test, apart, "{p:p}+{len} overlaps {q:p}+{other}");
        }
    }
    let u = registry.area_usage().0;
    kunit_expect!(
        test,
        u.chunks == 1 && u.used == 240,
        "one chunk for three: {u:?}"
    );
    kunit_expect!(
        test,
        registry.alloc_test_section(8, 3).is_err() && registry.area_usage().0 == u,
        "an alignment of 3 changed something"
    );
    // A section larger than a chunk gets one of its own, which goes with it.
    let big = codetag::AREA_CHUNK + 8;
    match registry.alloc_test_section(big, 8) {
        Ok(p) => {
            let u = registry.area_usage().0;
            kunit_expect!(test, u.chunks == 2 && u.used == 240 + big, "{u:?}");
            registry.free_test_section(p);
        }
        Err(e) => kunit_expect!(test, false, "the big section: {e:?}"),
    }
    registry.free_test_section(given[0]);
    let u = registry.area_usage().0;
    kunit_expect!(test, u.chunks == 1 && u.used == 200, "{u:?}");
    // The room the first section left is given again.
    let again = registry.alloc_test_section(40, 8);
    kunit_expect!(
        test,
        again == Ok(given[0]),
        "{again:?} is not {:p}",
        given[0]
    );
    for p in given {
        registry.free_test_section(p);
    }
    kunit_expect!(test, registry.area_usage().0 == empty, "chunks left");
}

/// The sections of modules whose load failed go, with what their type gave their tags (their
/// counters), at the reaper's second check in a row that finds them unused, the loader's
/// giving up of them the first: never at once, as one read can see zero while a free is
/// between its `bytes` and `calls` updates. One in use (an allocation charged while the
/// module's parameters were parsed, not freed) stays until that is freed. The same path frees
/// the tags of a module the registry could not list, at its unload.
fn failed_load_sections_go_when_unused_twice(test: &Test) {
    let Some((mut registry, _)) = registry_with_fakes(test) else {
        return;
    };
    let before = registry.area_usage().0;
    let size = 2 * size_of::<AllocTag>();
    let (Ok(used), Ok(unused)) = (
        registry.alloc_test_section(size, 8),
        registry.alloc_test_section(size, 8),
    ) else {
        kunit_expect!(test, false, "no sections");
        return;
    };
    FREED_TAGS.store(0, Ordering::Relaxed);
    AREA_TAGS.store(used as usize, Ordering::Relaxed);
    USED_AREA.store(0b10, Ordering::Relaxed);
    registry.free_test_section(used);
    registry.free_test_section(unused);
    let after = registry.area_usage().0;
    kunit_expect!(
        test,
        after.used == before.used + 2 * size && FREED_TAGS.load(Ordering::Relaxed) == 0,
        "{after:?}: not both kept, {} tags freed",
        FREED_TAGS.load(Ordering::Relaxed)
    );
    // The unused one goes at the next check, with its tags' counters.
    let r = registry.reap();
    let u = registry.area_usage().0;
    kunit_expect!(
        test,
        r.kept && u.used == before.used + size && FREED_TAGS.load(Ordering::Relaxed) == 2,
        "{r:?} {u:?}, {} tags freed",
        FREED_TAGS.load(Ordering::Relaxed)
    );
    // The used one stays while used, and goes at the second check after its last free.
    registry.reap();
    USED_AREA.store(0, Ordering::Relaxed);
    let first = registry.reap();
    kunit_expect!(
        test,
        first.kept && registry.area_usage().0.used == before.used + size,
        "{first:?}: freed at the first unused check"
    );
    let second = registry.reap();
    kunit_expect!(
        test,
        !second.kept
            && registry.area_usage().0 == before
            && FREED_TAGS.load(Ordering::Relaxed) == 4,
        "{second:?} {:?}, {} tags freed",
        registry.area_usage().0,
        FREED_TAGS.load(Ordering::Relaxed)
    );
    AREA_TAGS.store(0, Ordering::Relaxed);
    // Not to leak it where a check above failed.
    registry.forget_test_section(used);
    registry.forget_test_section(unused);
}

/// Places `tags` as the stand-in `module`'s in the memory of modules' tags, as the loader
/// does, tells [`TestTags`] where ([`AREA_TAGS`]) and which of them read in use (`used`,
/// [`USED_AREA`]), and unloads the module; returns the tags placed and whether the module's
/// memory may go, or `None` where placing failed (reported).
///
/// # Safety
///
/// `module` must point to a `struct module` with a NUL-terminated name that lives for good.
unsafe fn unload_placed(
    test: &Test,
    registry: &mut Registry,
    handle: codetag::Handle<TestTags>,
    module: *mut bindings::module,
    tags: &[AllocTag],
    used: usize,
) -> Option<(&'static [AllocTag], bool)> {
    // SAFETY: The caller guarantees `module`; the copies are not used once the range goes.
    let placed = match unsafe { registry.add_test_module_in_area(handle, module, tags) } {
        Ok(placed) => placed,
        Err(e) => {
            kunit_expect!(test, false, "placing: {e:?}");
            return None;
        }
    };
    AREA_TAGS.store(placed.as_ptr() as usize, Ordering::Relaxed);
    USED_AREA.store(used, Ordering::Relaxed);
    // SAFETY: Added above.
    Some((placed, unsafe { registry.remove_test_module(module) }))
}

/// A module whose tags read unused at unload keeps them, unlisted, until the reaper's next
/// check that reads them unused again. Seam: on another CPU a free of the module's last
/// block sits between its `bytes` and `calls` updates, after a split of that block was
/// counted on a CPU that the unload read before (the sums read zero); the reaper's next check
/// sees that CPU's `calls` up (the tags in use); its `calls` update done, they go at the
/// second check in a row that reads them unused, their counters with them.
fn unused_unload_keeps_tags_until_read_unused_twice(test: &Test) {
    let Some((mut registry, handle)) = registry_with_fakes(test) else {
        return;
    };
    let d = &raw mut MODULE_D;
    // SAFETY: Only the tests use the stand-in, and KUnit runs one case at a time.
    unsafe { (&mut (*d).name)[..7].copy_from_slice(&b"fake_d\0".map(|c| c as _)) };
    let tags = [fake_tag!(), fake_tag!()];
    let before = registry.area_usage();
    let count = registry.count(handle);
    FREED_TAGS.store(0, Ordering::Relaxed);
    // SAFETY: The stand-in lives for good; the copies are not used once the range goes.
    let Some((_, memory_ok)) = (unsafe { unload_placed(test, &mut registry, handle, d, &tags, 0) })
    else {
        return;
    };
    kunit_expect!(test, memory_ok, "the module's memory must go");
    let (area, _, kept) = registry.area_usage();
    kunit_expect!(
        test,
        area.used == before.0.used + size_of::<[AllocTag; 2]>()
            && FREED_TAGS.load(Ordering::Relaxed) == 0,
        "freed at the unload's one read: {area:?}, {} tags freed",
        FREED_TAGS.load(Ordering::Relaxed)
    );
    kunit_expect!(
        test,
        registry.count(handle) == count && kept == before.2,
        "listed: {} tags, not {count}; {kept} modules kept",
        registry.count(handle)
    );
    // The free's `calls` update still to come.
    USED_AREA.store(0b01, Ordering::Relaxed);
    let r = registry.reap();
    kunit_expect!(test, r.kept && r.freed == 0, "freed while used: {r:?}");
    USED_AREA.store(0, Ordering::Relaxed);
    let first = registry.reap();
    kunit_expect!(
        test,
        first.kept && first.freed == 0,
        "freed at the first unused check: {first:?}"
    );
    let second = registry.reap();
    kunit_expect!(
        test,
        second.freed == 1 && FREED_TAGS.load(Ordering::Relaxed) == 2,
        "{second:?}, {} tags freed",
        FREED_TAGS.load(Ordering::Relaxed)
    );
    AREA_TAGS.store(0, Ordering::Relaxed);
    let after = registry.area_usage();
    kunit_expect!(test, after == before, "{after:?} is not {before:?}");
}

/// An unloaded module's tags that are in use stay in their area, and their names are copies
/// that outlive the module's; its unused tags are dropped; once all are unused they go, with
/// their area and their names.
fn kept_tags_outlive_their_module(test: &Test) {
    let Some((mut registry, handle)) = registry_with_fakes(test) else {
        return;
    };
    let d = &raw mut MODULE_D;
    // SAFETY: Only this test uses the stand-in, and KUnit runs one case at a time.
    unsafe { (&mut (*d).name)[..7].copy_from_slice(&b"fake_d\0".map(|c| c as _)) };
    // The module's read-only data, which goes at unload.
    let mut rodata = KVec::new();
    for text in [&b"fake/file.c\0"[..], b"fake_fn\0", b"fake_d\0"] {
        kunit_expect!(test, rodata.extend_from_slice(text, GFP_KERNEL).is_ok());
    }
    let (file, func, modname) = (
        rodata.as_ptr(),
        rodata.as_ptr().wrapping_add(12),
        rodata.as_ptr().wrapping_add(20),
    );
    let tag = || {
        // SAFETY: `FAKE_COUNTERS` is a `.data..percpu` static.
        unsafe {
            AllocTag::new(
                bindings::codetag {
                    flags: 0,
                    lineno: 7,
                    modname: modname.cast(),
                    function: func.cast(),
                    filename: file.cast(),
                    index: 0,
                    #[cfg(CONFIG_ALLOCTAG_PER_NODE)]
                    node_slots: 0,
                },
                &raw mut FAKE_COUNTERS,
            )
        }
    };
    let tags = [tag(), tag()];
    let before = registry.area_usage();
    // SAFETY: The stand-in lives for good; the copies are not used once the range goes.
    let Some((placed, memory_ok)) =
        (unsafe { unload_placed(test, &mut registry, handle, d, &tags, 0b01) })
    else {
        return;
    };
    kunit_expect!(test, memory_ok, "the module's memory must stay");
    let (area, names, kept) = registry.area_usage();
    kunit_expect!(test, kept == before.2 + 1, "{kept} modules kept");
    kunit_expect!(
        test,
        area.used == before.0.used + size_of::<[AllocTag; 2]>(),
        "{area:?}"
    );
    kunit_expect!(
        test,
        names == "fake/file.c fake_fn fake_d ".len(),
        "{names} bytes of names"
    );
    // The module's data goes.
    for b in rodata.iter_mut() {
        *b = b'X';
    }
    drop(rodata);
    let ct = placed[0].codetag();
    kunit_expect!(test, ct.unloaded() && !ct.dropped());
    kunit_expect!(
        test,
        ct.filename().as_bytes() == b"fake/file.c",
        "{}",
        ct.filename()
    );
    kunit_expect!(
        test,
        ct.function().as_bytes() == b"fake_fn",
        "{}",
        ct.function()
    );
    kunit_expect!(
        test,
        ct.modname().is_some_and(|m| m.as_bytes() == b"fake_d")
    );
    kunit_expect!(test, placed[1].codetag().dropped());
    kunit_expect!(test, placed[1].codetag().filename().as_bytes() == b"(gone)");
    // Unused: gone at the second pass in a row that finds them so, area and names with them.
    USED_AREA.store(0, Ordering::Relaxed);
    let (first, second) = (registry.reap(), registry.reap());
    kunit_expect!(
        test,
        first.freed == 0 && second.freed == 1,
        "{first:?} {second:?}"
    );
    AREA_TAGS.store(0, Ordering::Relaxed);
    let after = registry.area_usage();
    kunit_expect!(test, after == before, "{after:?} is not {before:?}");
}

kunit_suite!(
    registry_suite,
    "alloctag_registry",
    [
        vmlinux_tags_are_listed,
        module_tags_follow_vmlinux,
        cursor_resumes_where_it_stopped,
        unload_keeps_a_used_module_until_reaped,
        read_position_skips_nothing_when_a_module_goes,
        handles_belong_to_their_registry,
        top_users_are_largest_first,
        module_counters_made_in_blocks,
        module_sections_share_chunks,
        failed_load_sections_go_when_unused_twice,
        unused_unload_keeps_tags_until_read_unused_twice,
        kept_tags_outlive_their_module,
    ]
);
