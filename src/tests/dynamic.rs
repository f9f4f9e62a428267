// SPDX-License-Identifier: GPL-2.0

//! Dynamic tags: an allocation through the kernel crate's plain APIs is charged to the line that
//! called the API, in a tag made on first use; an explicit `alloc_hooks!` wins; several CPUs
//! making the same new location at once make one tag; with no room for a tag the allocation goes
//! to the fallback tag; Rust symbols read as paths.

use super::{overlap::Overlap, with_tag};
use crate::{
    alloc_tag::{
        demangle::demangle,
        dynamic::{pool, Pool, CHUNK_TAGS, NAMED_WITH_IRQS_OFF, POOL_TAGS},
        AllocTag, Counters, ALLOC_TAGS,
    },
    codetag,
    kunit::{kunit_expect, kunit_suite, Test},
};
use core::{
    ffi::{c_int, c_void},
    panic::Location,
    ptr,
    sync::atomic::{AtomicBool, AtomicPtr, AtomicUsize, Ordering},
};
use kernel::{
    alloc::{flags::GFP_KERNEL, KBox, KVec},
    alloc_hooks, alloc_tag as callsite, bindings, c_str,
};

/// Finds the dynamic tag of this file's line `line` (an `alloc_hooks!` there has a static one).
fn find_dynamic(line: u32) -> Option<&'static AllocTag> {
    find_dynamic_in(b"src/tests/dynamic.rs", line)
}

/// Finds the dynamic tag of line `line` of the file whose name ends with `file`.
pub(super) fn find_dynamic_in(file: &[u8], line: u32) -> Option<&'static AllocTag> {
    let registry = codetag::read();
    let tag = registry
        .tags(ALLOC_TAGS.handle()?, codetag::Cursor::START)
        .find(|t| {
            let ct = t.codetag();
            pool().owns(t) && ct.lineno() == line && ct.filename().as_bytes().ends_with(file)
        })?;
    // SAFETY: The pool is static, and a vmlinux tag of it is never freed.
    Some(unsafe { &*(tag as *const AllocTag) })
}

#[inline(never)]
fn plain_kbox_charged_to_its_line(test: &Test) {
    let line = line!() + 1;
    let obj = KBox::new([0u8; 200], GFP_KERNEL);
    kunit_expect!(test, obj.is_ok());
    let Some(tag) = find_dynamic(line) else {
        kunit_expect!(test, false, "no dynamic tag at line {line}");
        return;
    };
    let ct = tag.codetag();
    kunit_expect!(test, ct.modname().is_none());
    kunit_expect!(
        test,
        ct.function()
            .as_bytes()
            .ends_with(b"tests::dynamic::plain_kbox_charged_to_its_line"),
        "function {}",
        ct.function()
    );
    let held = tag.read();
    kunit_expect!(test, held.calls == 1 && held.bytes >= 200, "{held:?}");
    drop(obj);
    kunit_expect!(test, tag.read() == Counters::default());
    // The same line again finds the same tag.
    let used = pool().used();
    let again = KVec::<u8>::with_capacity(100, GFP_KERNEL);
    let vec_line = line!() - 1;
    kunit_expect!(test, pool().used() == used + 1, "one tag for the new line");
    for _ in 0..3 {
        let b = KBox::new(1u64, GFP_KERNEL);
        kunit_expect!(test, b.is_ok());
    }
    kunit_expect!(
        test,
        pool().used() == used + 2,
        "one tag for the loop's line"
    );
    kunit_expect!(
        test,
        find_dynamic(vec_line).map(|t| t.read().calls) == Some(1)
    );
    drop(again);
}

#[inline(never)]
fn explicit_alloc_hooks_wins(test: &Test) {
    let used = pool().used();
    let line = line!() + 1;
    let obj = alloc_hooks!(KBox::new([0u8; 64], GFP_KERNEL));
    kunit_expect!(test, obj.is_ok());
    kunit_expect!(test, pool().used() == used, "a dynamic tag was made");
    kunit_expect!(test, find_dynamic(line).is_none());
}

/// The pool of the concurrency test, apart from the kernel's: one chunk, of which it uses 8
/// tags ([`race_pool`]).
static RACE_POOL: Pool<1, 16> = Pool::new("test", false);

/// Returns [`RACE_POOL`], with its chunk made and room for 8 tags.
fn race_pool() -> &'static Pool<1, 16> {
    RACE_POOL.reserve(1);
    RACE_POOL.set_limit(8);
    &RACE_POOL
}

const RACE_THREADS: usize = 4;
const RACE_SITES: usize = 3;

/// What the racing threads share.
struct Race {
    locations: [AtomicPtr<Location<'static>>; RACE_SITES],
    start: AtomicBool,
    done: AtomicUsize,
    found: [[AtomicPtr<bindings::alloc_tag>; RACE_SITES]; RACE_THREADS],
}

static RACE: Race = Race {
    locations: [const { AtomicPtr::new(ptr::null_mut()) }; RACE_SITES],
    start: AtomicBool::new(false),
    done: AtomicUsize::new(0),
    found: [const { [const { AtomicPtr::new(ptr::null_mut()) }; RACE_SITES] }; RACE_THREADS],
};

/// Returns the location of its caller: a new call site for each line that calls it.
#[track_caller]
fn here() -> &'static Location<'static> {
    Location::caller()
}

/// A racing thread: waits for the start, then asks for the tag of each location.
///
/// # Safety
///
/// Called by the kthread core with `data` the thread's index.
unsafe extern "C" fn race_thread(data: *mut c_void) -> c_int {
    let t = data as usize;
    let mut spins = 0u64;
    while !RACE.start.load(Ordering::Acquire) && spins < 1_000_000_000 {
        core::hint::spin_loop();
        spins += 1;
    }
    // Asked again until the threads were seen at it at once: a lookup after the first finds
    // the tag made.
    RACE_OVERLAP.run(1, || {
        for (site, location) in RACE.locations.iter().enumerate() {
            let location = location.load(Ordering::Relaxed);
            if location.is_null() {
                continue;
            }
            // SAFETY: The test stored static locations before the start.
            let tag = RACE_POOL.tag(unsafe { &*location });
            RACE.found[t][site].store(
                tag.map_or(ptr::null_mut(), AllocTag::as_raw),
                Ordering::Relaxed,
            );
        }
    });
    RACE.done.fetch_add(1, Ordering::Release);
    0
}

/// Whether [`concurrent_make_one_tag`]'s threads ran at once.
static RACE_OVERLAP: Overlap = Overlap::new();

/// Threads on both CPUs make the same new locations at once: one tag each.
fn concurrent_make_one_tag(test: &Test) {
    RACE_OVERLAP.reset();
    let locations = [here(), here(), here()];
    for (slot, location) in RACE.locations.iter().zip(locations) {
        slot.store(ptr::from_ref(location).cast_mut(), Ordering::Relaxed);
    }
    let used = race_pool().used();
    let mut started = 0;
    for t in 0..RACE_THREADS {
        // SAFETY: `race_thread` takes its index as data; the name is a NUL-terminated format
        // with one integer.
        let task = unsafe {
            bindings::kthread_create_on_node(
                Some(race_thread),
                t as *mut c_void,
                bindings::NUMA_NO_NODE,
                c_str!("alloctag-race%d").as_char_ptr(),
                t as c_int,
            )
        };
        if (task as usize) >= (-(bindings::MAX_ERRNO as isize)) as usize {
            kunit_expect!(test, false, "kthread {t} not created");
            RACE.done.fetch_add(1, Ordering::Relaxed);
            continue;
        }
        // SAFETY: `task` is a new kthread, not yet woken.
        unsafe { bindings::wake_up_process(task) };
        started += 1;
    }
    RACE.start.store(true, Ordering::Release);
    let mut waits = 0;
    while RACE.done.load(Ordering::Acquire) < RACE_THREADS && waits < 3000 {
        // SAFETY: The test runs in process context.
        unsafe { bindings::msleep(10) };
        waits += 1;
    }
    kunit_expect!(
        test,
        RACE.done.load(Ordering::Acquire) == RACE_THREADS,
        "{} of {started} threads finished",
        RACE.done.load(Ordering::Acquire)
    );
    RACE_OVERLAP.check(test);
    kunit_expect!(
        test,
        RACE_POOL.used() == used + RACE_SITES,
        "{} tags made for {RACE_SITES} locations",
        RACE_POOL.used() - used
    );
    for (site, first) in RACE.found[0].iter().enumerate() {
        let first = first.load(Ordering::Relaxed);
        kunit_expect!(test, !first.is_null(), "site {site}: no tag");
        for (t, found) in RACE.found.iter().enumerate().skip(1) {
            kunit_expect!(
                test,
                found[site].load(Ordering::Relaxed) == first,
                "site {site}: thread {t} found another tag"
            );
        }
    }
}

/// With no room for a tag the allocation is charged to the fallback tag and counted; when room
/// comes back the same line gets its tag. The test pool shows the bound: its eight tags taken,
/// a ninth location has none.
#[inline(never)]
fn fallback_when_no_tag(test: &Test) {
    // SAFETY: The fallback tag is a static `struct alloc_tag` in the kernel crate.
    let fallback = unsafe { AllocTag::from_raw(callsite::UNTAGGED_KREALLOC.as_raw()) };
    let mut line = 0;
    for full in [true, false] {
        let (base, overflows) = (fallback.read(), pool().overflows());
        pool().set_limit(if full { pool().used() } else { POOL_TAGS });
        line = line!() + 1;
        let obj = KBox::new([0u8; 500], GFP_KERNEL);
        pool().set_limit(POOL_TAGS);
        let held = fallback.read();
        kunit_expect!(test, obj.is_ok());
        if full {
            kunit_expect!(test, find_dynamic(line).is_none(), "a tag without room");
            kunit_expect!(test, pool().overflows() == overflows + 1);
            // Exactly the one allocation under test: one call, charged its cache's size (1024
            // bytes for kmalloc-512 under KASAN, whose metadata the charge includes).
            kunit_expect!(
                test,
                held.calls == base.calls + 1 && held.bytes - base.bytes >= 500,
                "fallback {base:?} -> {held:?}"
            );
        } else {
            let tag = find_dynamic(line).map(|t| t.read());
            kunit_expect!(test, tag.is_some_and(|c| c.calls == 1), "{tag:?}");
        }
        drop(obj);
    }
    kunit_expect!(
        test,
        find_dynamic(line).map(|t| t.read()) == Some(Counters::default())
    );
    // The test pool: every free slot taken, then one more location.
    let pool8 = race_pool();
    let mut made = 0;
    for location in [
        here(),
        here(),
        here(),
        here(),
        here(),
        here(),
        here(),
        here(),
        here(),
    ] {
        made += usize::from(pool8.tag(location).is_some());
    }
    kunit_expect!(test, pool8.used() == 8, "{} used", pool8.used());
    kunit_expect!(test, made < 9 && pool8.overflows() >= 1);
}

/// Making a tag leaves interrupts as its caller had them: the naming (a stack walk, kallsyms)
/// runs with interrupts on when they were on, so interrupts-off time does not grow with it.
fn made_with_interrupts_on(test: &Test) {
    NAMED_WITH_IRQS_OFF.store(false, Ordering::Relaxed);
    // SAFETY: Reading the interrupt state has no precondition.
    kunit_expect!(test, !unsafe { bindings::alloctag_irqs_disabled() });
    let used = race_pool().used();
    // The pool has room: the race above used 3 of its 8 tags.
    let made = RACE_POOL.tag(here());
    kunit_expect!(test, made.is_some(), "no tag made");
    kunit_expect!(test, RACE_POOL.used() == used + 1);
    kunit_expect!(
        test,
        !NAMED_WITH_IRQS_OFF.load(Ordering::Relaxed),
        "named with interrupts off"
    );
}

/// The pool costs nothing before its tags are made: it grows a chunk of [`CHUNK_TAGS`] tags
/// (and their per-CPU counters) at a time, in process context; a pool with no chunk makes no
/// tag and counts the allocation as an overflow. The kernel's pool made its first chunk at boot
/// and holds no tag in its static data.
fn pool_grows_by_chunks(test: &Test) {
    static LAZY: Pool<2, 8> = Pool::new("lazy", false);
    let overflows = LAZY.overflows();
    kunit_expect!(test, LAZY.chunks_made() == 0 && LAZY.tag(here()).is_none());
    kunit_expect!(test, LAZY.overflows() == overflows + 1);
    kunit_expect!(test, LAZY.grow() && LAZY.chunks_made() == 1);
    let tag = LAZY.tag(here());
    kunit_expect!(
        test,
        tag.is_some() && LAZY.used() == 1,
        "no tag with a chunk made"
    );
    let obj = tag.map(|t| {
        with_tag(t, || {
            // SAFETY: Allocating has no precondition.
            unsafe { bindings::__kmalloc_noprof(24, bindings::GFP_KERNEL) }
        })
    });
    kunit_expect!(
        test,
        tag.is_some_and(|t| t.read().calls == 1),
        "the tag's counters"
    );
    if let Some(obj) = obj {
        // SAFETY: From kmalloc, or null.
        unsafe { bindings::kfree(obj) };
    }
    kunit_expect!(test, LAZY.grow() && LAZY.chunks_made() == 2);
    kunit_expect!(test, !LAZY.grow(), "grew past its bound");
    let kernel = pool();
    kunit_expect!(
        test,
        kernel.chunks_made() >= 1 && kernel.chunks_made() * CHUNK_TAGS >= kernel.used(),
        "{} chunks for {} tags",
        kernel.chunks_made(),
        kernel.used()
    );
    let size = core::mem::size_of_val(kernel);
    kunit_expect!(
        test,
        size < 32 * 1024,
        "the kernel's pool is {size} bytes of static data"
    );
}

/// v0 symbols read as paths, with no spaces.
fn symbols_demangled(test: &Test) {
    let cases: [(&[u8], Option<&[u8]>); 7] = [
        (b"_RNvCs1234_7mycrate3foo", Some(b"mycrate::foo")),
        (
            b"_RNvMCsabc_19alloctag_rust_plainNtB2_9RustPlain8allocate",
            Some(b"alloctag_rust_plain::RustPlain::allocate"),
        ),
        (
            b"_RNvXCs1_3fooNtB2_3BarNtCs2_6kernel6Module4init",
            Some(b"<foo::Bar_as_kernel::Module>::init"),
        ),
        (b"_RINvCs1_3foo3barjE", Some(b"foo::bar")),
        (b"_RNCNvCs1_3foo3bar0B3_", Some(b"foo::bar::{closure}")),
        (b"_RZZ", None),
        (b"kmalloc", None),
    ];
    for (symbol, want) in cases {
        let mut out = [0u8; 64];
        let ok = demangle(symbol, &mut out);
        let len = out.iter().position(|&c| c == 0).unwrap_or(out.len());
        let got = ok.then_some(&out[..len]);
        kunit_expect!(
            test,
            got == want,
            "{:?}: {:?}",
            core::str::from_utf8(symbol),
            got.map(core::str::from_utf8)
        );
    }
}

kunit_suite!(
    dynamic_suite,
    "alloctag_dynamic",
    [
        plain_kbox_charged_to_its_line,
        explicit_alloc_hooks_wins,
        concurrent_make_one_tag,
        made_with_interrupts_on,
        pool_grows_by_chunks,
        fallback_when_no_tag,
        symbols_demangled,
    ]
);
