// SPDX-License-Identifier: GPL-2.0

//! Per-call-site fault injection: an armed site fails as its rule says, exactly, and no other;
//! `__GFP_NOFAIL` never fails; disarming restores it. Selections: the selector grammar and
//! what each selector matches.

use super::{
    alloc_pages, dynamic::find_dynamic_in, overlap::Overlap, registry_of, test_tag, with_tag,
    LineWriter,
};
use crate::{
    alloc_tag::{dynamic::Pool, AllocTag},
    codetag::{self, Field, Marker, Registry, Selection, TagType},
    fault::{self, Config},
    kunit::{kunit_expect, kunit_suite, Test},
};
use core::{
    ffi::c_void,
    fmt::{self, Write},
    panic::Location,
    ptr,
    sync::atomic::{AtomicUsize, Ordering},
};
use kernel::{
    alloc::{
        flags::{GFP_ATOMIC, GFP_KERNEL},
        KBox, KVec,
    },
    alloc_hooks, bindings, new_spinlock,
    page::PAGE_SIZE,
    prelude::*,
};

/// Returns `args` formatted; empty when memory runs out.
fn formatted(args: fmt::Arguments<'_>) -> KVec<u8> {
    let mut out = KVec::new();
    let _ = LineWriter(&mut out).write_fmt(args);
    out
}

/// Parses `text` as a selection.
fn selection(text: &str) -> Result<Selection> {
    Selection::parse(
        text.as_bytes()
            .split(|&c| c == b' ')
            .filter(|w| !w.is_empty()),
    )
}

/// Arms `text` with `config`, reporting a failure to arm; returns the rule id.
fn arm(test: &Test, text: &str, config: Config) -> Option<u32> {
    let armed = selection(text).and_then(|s| fault::arm(s, &config));
    kunit_expect!(test, armed.is_ok(), "arming '{text}': {:?}", armed.err());
    armed.ok().map(|(id, _)| id)
}

/// A Rust call site that allocates with `?`, as drivers do.
const RUST_SITE_LINE: u32 = line!() + 2;
fn rust_site() -> Result<KBox<[u8; 64]>> {
    let obj = alloc_hooks!(KBox::new([0u8; 64], GFP_KERNEL))?;
    Ok(obj)
}

/// Calls the Rust site and passes its error on with `?`.
fn uses_rust_site() -> Result<usize> {
    let obj = rust_site()?;
    Ok(obj.len())
}

fn rust_site_fails_with_enomem(test: &Test) {
    let text = formatted(format_args!("{}:{RUST_SITE_LINE}", file!()));
    let text = core::str::from_utf8(&text).unwrap_or("");
    kunit_expect!(test, uses_rust_site().is_ok(), "before arming");
    let Some(id) = arm(test, text, quiet()) else {
        return;
    };
    let result = uses_rust_site();
    kunit_expect!(test, result == Err(ENOMEM), "armed: {result:?}");
    kunit_expect!(test, fault::injected(id) == Some(1));
    kunit_expect!(test, fault::disarm(id).is_ok());
    kunit_expect!(test, uses_rust_site().is_ok(), "after disarming");
}

/// Plain-API Rust call sites: each has no tag until its first allocation makes a dynamic one.
const PLAIN_SITE_LINE: u32 = line!() + 3;
#[inline(never)]
fn plain_site() -> Result<usize> {
    let obj = KBox::new([0u8; 48], GFP_KERNEL)?;
    Ok(obj.len())
}
const BUSY_SITE_LINE: u32 = line!() + 3;
#[inline(never)]
fn busy_site() -> Result<usize> {
    let obj = KBox::new([0u8; 40], GFP_KERNEL)?;
    Ok(obj.len())
}

const ATOMIC_SITE_LINE: u32 = line!() + 3;
#[inline(never)]
fn atomic_site() -> Result<usize> {
    let obj = KBox::new([0u8; 24], GFP_ATOMIC)?;
    Ok(obj.len())
}

/// Arms this file's line `line` to fail every time, quietly.
fn arm_line(test: &Test, line: u32) -> Option<u32> {
    let text = formatted(format_args!("{}:{line}", file!()));
    let config = quiet();
    arm(test, core::str::from_utf8(&text).unwrap_or(""), config)
}

/// A selection in force marks a dynamic tag as it is made, so that the site's very first
/// allocation fails, as a module's tags are marked when it loads.
fn plain_site_armed_from_first_use(test: &Test) {
    kunit_expect!(
        test,
        find_dynamic_in(b"tests/fault.rs", PLAIN_SITE_LINE).is_none()
    );
    let Some(id) = arm_line(test, PLAIN_SITE_LINE) else {
        return;
    };
    let result = plain_site();
    kunit_expect!(test, result == Err(ENOMEM), "first use: {result:?}");
    kunit_expect!(test, fault::injected(id) == Some(1));
    kunit_expect!(test, fault::disarm(id).is_ok());
    kunit_expect!(test, plain_site().is_ok(), "after disarming");
    // Armed again, the tag that now exists is marked like a static one.
    let Some(id) = arm_line(test, PLAIN_SITE_LINE) else {
        return;
    };
    kunit_expect!(test, plain_site() == Err(ENOMEM), "armed again");
    kunit_expect!(test, fault::disarm(id).is_ok());
}

/// A dynamic tag made in atomic context (under a spinlock) while a rule is in force is marked
/// there, before its first allocation goes on: that allocation fails. The marker runs in that
/// context; a sleep there would be reported by `DEBUG_ATOMIC_SLEEP` on the console, which fails
/// the KUnit stage.
fn plain_site_armed_in_atomic_context(test: &Test) {
    let Some(id) = arm_line(test, ATOMIC_SITE_LINE) else {
        return;
    };
    let Ok(lock) = KBox::pin_init(new_spinlock!(()), GFP_KERNEL) else {
        kunit_expect!(test, false, "no memory for the lock");
        let _ = fault::disarm(id);
        return;
    };
    let result = {
        let _guard = lock.lock();
        atomic_site()
    };
    kunit_expect!(
        test,
        result == Err(ENOMEM),
        "first use under a spinlock: {result:?}"
    );
    kunit_expect!(test, fault::injected(id) == Some(1));
    kunit_expect!(test, fault::disarm(id).is_ok());
}

/// A dynamic tag made while the registry is locked is marked once it is free again.
fn plain_site_made_while_registry_busy(test: &Test) {
    let Some(id) = arm_line(test, BUSY_SITE_LINE) else {
        return;
    };
    {
        let _busy = codetag::write();
        // Made now, the tag cannot be marked: the allocation goes through.
        kunit_expect!(
            test,
            busy_site().is_ok(),
            "made while the registry was locked"
        );
    }
    codetag::made_dynamic_wait();
    let result = busy_site();
    kunit_expect!(
        test,
        result == Err(ENOMEM),
        "after the registry was free: {result:?}"
    );
    kunit_expect!(test, fault::injected(id) == Some(1));
    kunit_expect!(test, fault::disarm(id).is_ok());
}

/// Makes `n` slab allocations at `tag`, freeing each; returns which failed, as a bit mask.
/// A rule's configuration that logs no injection.
fn quiet() -> Config {
    Config {
        verbose: 0,
        ..Config::default()
    }
}

/// Arms a rule with `config` on `text`, makes `n` allocations (`GFP_KERNEL`) at `tag` and
/// disarms it; returns which failed, bit `i` for the `i`-th, or `None` where arming failed
/// (reported).
fn failures(
    test: &Test,
    text: &str,
    config: Config,
    tag: &'static AllocTag,
    n: u32,
) -> Option<u64> {
    let id = arm(test, text, config)?;
    let failed = kmallocs(tag, n, bindings::GFP_KERNEL);
    kunit_expect!(test, fault::disarm(id).is_ok());
    Some(failed)
}

fn kmallocs(tag: &'static AllocTag, n: u32, gfp: bindings::gfp_t) -> u64 {
    let mut failed = 0u64;
    for i in 0..n {
        // SAFETY: Allocating has no precondition.
        let obj = with_tag(tag, || unsafe { bindings::__kmalloc_noprof(32, gfp) });
        if obj.is_null() {
            failed |= 1 << i;
        }
        // SAFETY: `obj` came from kmalloc, or is null.
        unsafe { bindings::kfree(obj) };
    }
    failed
}

test_tag!(TIMES_TAG, "alloctag_fault_times");

fn times_is_exact(test: &Test) {
    let config = Config {
        times: 3,
        ..quiet()
    };
    let Some(id) = arm(test, "func:alloctag_fault_times", config) else {
        return;
    };
    let failed = kmallocs(TIMES_TAG, 10, bindings::GFP_KERNEL);
    kunit_expect!(test, failed == 0b111, "failed {failed:#b}");
    kunit_expect!(test, fault::injected(id) == Some(3));
    kunit_expect!(test, fault::disarm(id).is_ok());
}

test_tag!(TIMES_RACE_TAG, "alloctag_fault_times_race");

/// Threads of [`times_is_exact_under_concurrency`].
const TIMES_THREADS: usize = 4;
/// Allocations each thread makes.
const TIMES_EACH: u32 = 50;
/// Failures of all threads together, and threads done.
static TIMES_FAILED: AtomicUsize = AtomicUsize::new(0);
static TIMES_DONE: AtomicUsize = AtomicUsize::new(0);
static TIMES_START: core::sync::atomic::AtomicBool = core::sync::atomic::AtomicBool::new(false);
/// Whether the threads ran at once.
static TIMES_OVERLAP: Overlap = Overlap::new();

/// A thread of [`times_is_exact_under_concurrency`]: waits for the start, then allocates.
///
/// # Safety
///
/// Called by the kthread core.
unsafe extern "C" fn times_thread(_data: *mut c_void) -> core::ffi::c_int {
    let mut spins = 0u64;
    while !TIMES_START.load(Ordering::Acquire) && spins < 1_000_000_000 {
        core::hint::spin_loop();
        spins += 1;
    }
    // One allocation a unit, at least TIMES_EACH, and on until the threads were seen at it at
    // once: however many there are past TIMES, exactly TIMES fail.
    TIMES_OVERLAP.run(TIMES_EACH as usize, || {
        let failed = kmallocs(TIMES_RACE_TAG, 1, bindings::GFP_KERNEL);
        TIMES_FAILED.fetch_add(failed.count_ones() as usize, Ordering::Relaxed);
    });
    TIMES_DONE.fetch_add(1, Ordering::Release);
    0
}

/// `times=N` fails exactly N allocations when threads on both CPUs allocate at the site at
/// once: the count is taken atomically, never twice for one value.
fn times_is_exact_under_concurrency(test: &Test) {
    const TIMES: u32 = 17;
    let config = Config {
        times: TIMES as i64,
        ..quiet()
    };
    let Some(id) = arm(test, "func:alloctag_fault_times_race", config) else {
        return;
    };
    TIMES_FAILED.store(0, Ordering::Relaxed);
    TIMES_DONE.store(0, Ordering::Relaxed);
    TIMES_START.store(false, Ordering::Relaxed);
    TIMES_OVERLAP.reset();
    for t in 0..TIMES_THREADS {
        // SAFETY: `times_thread` ignores its data; the name is a NUL-terminated format with
        // one integer.
        let task = unsafe {
            bindings::kthread_create_on_node(
                Some(times_thread),
                core::ptr::null_mut(),
                bindings::NUMA_NO_NODE,
                kernel::c_str!("alloctag-times%d").as_char_ptr(),
                t as core::ffi::c_int,
            )
        };
        if (task as usize) >= (-(bindings::MAX_ERRNO as isize)) as usize {
            kunit_expect!(test, false, "kthread {t} not created");
            TIMES_DONE.fetch_add(1, Ordering::Relaxed);
            continue;
        }
        // SAFETY: `task` is a new kthread, not yet woken.
        unsafe { bindings::wake_up_process(task) };
    }
    TIMES_START.store(true, Ordering::Release);
    let mut waits = 0;
    while TIMES_DONE.load(Ordering::Acquire) < TIMES_THREADS && waits < 3000 {
        // SAFETY: The test runs in process context.
        unsafe { bindings::msleep(10) };
        waits += 1;
    }
    kunit_expect!(test, TIMES_DONE.load(Ordering::Acquire) == TIMES_THREADS);
    TIMES_OVERLAP.check(test);
    let failed = TIMES_FAILED.load(Ordering::Relaxed);
    kunit_expect!(
        test,
        failed == TIMES as usize,
        "{failed} failed, times={TIMES}"
    );
    kunit_expect!(
        test,
        fault::injected(id) == Some(TIMES as u64),
        "{:?}",
        fault::injected(id)
    );
    kunit_expect!(test, fault::disarm(id).is_ok());
}

test_tag!(STALE_A_TAG, "alloctag_fault_stale_a");
test_tag!(STALE_B_TAG, "alloctag_fault_stale_b");

/// A mark read before its slot was given to another tag (unmarked, reaped and reused while a
/// hook on another CPU still held the old value) never fails the allocation under the new
/// tag's rule: the hook takes a slot's rule only if the slot is its tag's. Forced: tag B is
/// given, by hand, the mark of the slot that a rule armed for tag A.
fn stale_mark_never_applies_another_sites_rule(test: &Test) {
    let config = quiet();
    let Some(id) = arm(test, "func:alloctag_fault_stale_a", config) else {
        return;
    };
    let mark = Field::FAULT.get(STALE_A_TAG.codetag());
    kunit_expect!(test, mark != 0, "tag A is not marked");
    kunit_expect!(
        test,
        kmallocs(STALE_A_TAG, 1, bindings::GFP_KERNEL) == 1,
        "A armed"
    );
    Field::FAULT.set(STALE_B_TAG.codetag(), mark);
    let failed = kmallocs(STALE_B_TAG, 4, bindings::GFP_KERNEL);
    Field::FAULT.set(STALE_B_TAG.codetag(), 0);
    kunit_expect!(test, failed == 0, "B failed {failed:#b} under A's rule");
    kunit_expect!(
        test,
        fault::injected(id) == Some(1),
        "{:?}",
        fault::injected(id)
    );
    kunit_expect!(test, fault::disarm(id).is_ok());
}

test_tag!(INTERVAL_TAG, "alloctag_fault_interval");

fn interval_is_exact(test: &Test) {
    let config = Config {
        interval: 3,
        ..quiet()
    };
    if let Some(failed) = failures(
        test,
        "func:alloctag_fault_interval",
        config,
        INTERVAL_TAG,
        9,
    ) {
        kunit_expect!(test, failed == 0b100_100_100, "failed {failed:#b}");
    }
}

test_tag!(PROBABILITY_TAG, "alloctag_fault_probability");

fn probability_100_and_0(test: &Test) {
    let sel = "func:alloctag_fault_probability";
    let Some(failed) = failures(test, sel, quiet(), PROBABILITY_TAG, 20) else {
        return;
    };
    kunit_expect!(test, failed == (1 << 20) - 1, "p=100 failed {failed:#b}");

    let config = Config {
        probability: 0,
        ..quiet()
    };
    if let Some(failed) = failures(test, sel, config, PROBABILITY_TAG, 20) {
        kunit_expect!(test, failed == 0, "p=0 failed {failed:#b}");
    }
}

test_tag!(SPACE_TAG, "alloctag_fault_space");

fn space_lets_bytes_through_first(test: &Test) {
    // 32-byte objects: 100 bytes of space let three through (100, 68 and 36 exceed 32), and
    // from the fourth on, with 4 left, every one fails.
    let config = Config {
        space: 100,
        ..quiet()
    };
    if let Some(failed) = failures(test, "func:alloctag_fault_space", config, SPACE_TAG, 6) {
        kunit_expect!(test, failed == 0b111000, "failed {failed:#b}");
    }
}

test_tag!(PID_TAG, "alloctag_fault_pid");

/// The current thread group id as user space knows it, from the kernel's own function rather
/// than the field that the rule reads.
fn current_tgid() -> bindings::pid_t {
    // SAFETY: `current` is valid in process context; a null namespace is the task's own.
    unsafe {
        bindings::__task_pid_nr_ns(
            bindings::get_current(),
            bindings::pid_type_PIDTYPE_TGID,
            core::ptr::null_mut(),
        )
    }
}

fn pid_filter_picks_the_thread_group(test: &Test) {
    let tgid = current_tgid();
    let sel = "func:alloctag_fault_pid";
    let other = Config {
        pid: tgid.wrapping_add(1).max(1),
        ..quiet()
    };
    let Some(failed) = failures(test, sel, other, PID_TAG, 3) else {
        return;
    };
    kunit_expect!(
        test,
        failed == 0,
        "another task's rule failed us: {failed:#b}"
    );
    let ours = Config {
        pid: tgid,
        ..quiet()
    };
    if let Some(failed) = failures(test, sel, ours, PID_TAG, 3) {
        kunit_expect!(
            test,
            failed == 0b111,
            "our rule did not fail us: {failed:#b}"
        );
    }
}

test_tag!(NOFAIL_TAG, "alloctag_fault_nofail");

fn nofail_never_fails(test: &Test) {
    let Some(id) = arm(test, "func:alloctag_fault_nofail", quiet()) else {
        return;
    };
    let nofail = kmallocs(NOFAIL_TAG, 4, bindings::GFP_KERNEL | bindings::__GFP_NOFAIL);
    kunit_expect!(test, nofail == 0, "__GFP_NOFAIL failed {nofail:#b}");
    let plain = kmallocs(NOFAIL_TAG, 1, bindings::GFP_KERNEL);
    kunit_expect!(test, plain == 1, "the plain one did not fail");
    kunit_expect!(test, fault::injected(id) == Some(1));
    kunit_expect!(test, fault::disarm(id).is_ok());
}

test_tag!(PAGES_TAG, "alloctag_fault_pages");
test_tag!(UNARMED_TAG, "alloctag_fault_unarmed");

fn pages_and_vmalloc_fail(test: &Test) {
    let Some(id) = arm(test, "func:alloctag_fault_pages", quiet()) else {
        return;
    };
    let nowarn = bindings::GFP_KERNEL | bindings::__GFP_NOWARN;
    // SAFETY: Allocating has no precondition; node 0 exists.
    let page = with_tag(PAGES_TAG, || unsafe {
        bindings::__alloc_pages_noprof(nowarn, 0, 0, core::ptr::null_mut())
    });
    kunit_expect!(test, page.is_null(), "the page allocation did not fail");
    // SAFETY: As above.
    let area: *mut c_void = with_tag(PAGES_TAG, || unsafe {
        bindings::__vmalloc_noprof(4 * PAGE_SIZE, nowarn)
    });
    kunit_expect!(test, area.is_null(), "vmalloc did not fail");
    // SAFETY: Freeing what was allocated, once; both take null.
    unsafe {
        if !page.is_null() {
            bindings::__free_pages(page, 0);
        }
        bindings::vfree(area);
    }
    // Only the armed site fails: the same allocation at another site succeeds.
    let page = with_tag(UNARMED_TAG, || alloc_pages(0));
    kunit_expect!(test, !page.is_null());
    // SAFETY: `page` came from the page allocator and is freed once.
    unsafe { bindings::__free_pages(page, 0) };
    kunit_expect!(test, fault::disarm(id).is_ok());
}

test_tag!(DISARM_TAG, "alloctag_fault_disarm");

fn disarming_restores(test: &Test) {
    let Some(id) = arm(test, "func:alloctag_fault_disarm", quiet()) else {
        return;
    };
    kunit_expect!(
        test,
        Field::FAULT.get(DISARM_TAG.codetag()) != 0,
        "not marked"
    );
    kunit_expect!(test, kmallocs(DISARM_TAG, 2, bindings::GFP_KERNEL) == 0b11);
    let again =
        selection("func:alloctag_fault_disarm").and_then(|s| fault::arm(s, &Config::default()));
    kunit_expect!(
        test,
        again.err() == Some(EEXIST),
        "the same selection armed twice"
    );
    kunit_expect!(test, fault::disarm(id).is_ok());
    kunit_expect!(test, fault::disarm(id) == Err(ENOENT));
    kunit_expect!(
        test,
        Field::FAULT.get(DISARM_TAG.codetag()) == 0,
        "still marked"
    );
    kunit_expect!(test, kmallocs(DISARM_TAG, 2, bindings::GFP_KERNEL) == 0);
}

test_tag!(SELECT_TAG, "alloctag_fault_select");

fn selectors_match_allocinfo_words(test: &Test) {
    let ct = SELECT_TAG.codetag();
    let line = ct.lineno();
    let check = |text: &str, expect: bool| {
        let matched = selection(text).map(|s| s.matches(ct));
        kunit_expect!(test, matched == Ok(expect), "'{text}': {matched:?}");
    };
    check("func:alloctag_fault_select", true);
    check("func:alloctag_fault", false);
    check("lib/alloctag/src/tests/fault.rs", true);
    check("tests/fault.rs", true);
    check("ault.rs", false);
    check("module:alloctag_test", false);
    check("func:alloctag_fault_select tests/fault.rs", true);
    check("func:alloctag_fault_select tests/other.rs", false);
    let at = formatted(format_args!("fault.rs:{line}"));
    check(core::str::from_utf8(&at).unwrap_or(""), true);
    let next = formatted(format_args!("fault.rs:{}", line + 1));
    check(core::str::from_utf8(&next).unwrap_or(""), false);
    // Globs over the whole name, as allocinfo matches names: `*` crosses `/`.
    check("func:alloctag_fault_sel*", true);
    check("func:*fault_select", true);
    check("func:alloctag_fault_?elect", true);
    check("func:alloctag_[ef]ault_select", true);
    check("func:alloctag_[a-e]ault_select", false);
    check("func:alloctag_[!f]ault_select", false);
    check("func:alloctag_fault_sel", false);
    check("func:*nothing*", false);
    check("lib/*/fault.rs", true);
    check("*/tests/fault.rs", true);
    check("*.c", false);
    check("module:*", false);
    let at_glob = formatted(format_args!("*/fault.rs:{line}"));
    check(core::str::from_utf8(&at_glob).unwrap_or(""), true);
    for bad in [
        "",
        "  ",
        "fault.rs:0",
        "fault.rs:x",
        "fault.rs:",
        "func:",
        "module:",
        "a b c d e",
        "func:a[b",
        "x[.c",
    ] {
        kunit_expect!(test, selection(bad).is_err(), "'{bad}' accepted");
    }
    let shown = selection("func:f   x.c:3").map(|s| formatted(format_args!("{s}")));
    kunit_expect!(test, shown.as_deref().ok() == Some(&b"func:f x.c:3"[..]));
}

/// Disarms rule `id`; returns the matches the removal made to hand its sites over and the time
/// it took, in nanoseconds.
fn timed_disarm(test: &Test, id: u32) -> (usize, u64) {
    let matches = codetag::REMATCHES.load(Ordering::Relaxed);
    // SAFETY: Reading the clock has no precondition.
    let t0 = unsafe { bindings::ktime_get_mono_fast_ns() };
    kunit_expect!(test, fault::disarm(id).is_ok());
    // SAFETY: As above.
    let took = unsafe { bindings::ktime_get_mono_fast_ns() } - t0;
    (codetag::REMATCHES.load(Ordering::Relaxed) - matches, took)
}

/// Removing a rule matches again only the tags it had marked, each against the other rules,
/// and hands each to the first other rule that matches it: at the most rules, 30 of them with
/// the review's slow patterns (seven negated sets between stars), removing a rule that marked
/// one tag matches at most the 31 others once, where matching every rule again over every tag,
/// as before, made a thousand times as many matches with the registry's write lock held. Logs
/// the removal's time and matches, for Documentation/benchmarks.rst.
fn removal_matches_only_its_tags(test: &Test) {
    let config = || Config {
        probability: 0,
        ..quiet()
    };
    let set = "[!abcdefghijklmnopqrstuvwxyz]";
    let mut ids = KVec::new();
    for i in 0..30 {
        let text = formatted(format_args!(
            "func:*{set}*{set}*{set}*{set}*{set}*{set}*{set}*Q{i}"
        ));
        if let Some(id) = arm(test, core::str::from_utf8(&text).unwrap_or(""), config()) {
            let _ = ids.push(id, GFP_KERNEL);
        }
    }
    let first = arm(test, "func:alloctag_fault_select", config());
    let second = arm(test, "func:alloctag_fault_sel*", config());
    let ct = SELECT_TAG.codetag();
    let tags = crate::alloc_tag::ALLOC_TAGS.handle().map_or(0, |h| {
        codetag::read().tags(h, codetag::Cursor::START).count()
    });
    if let (Some(first), Some(second)) = (first, second) {
        kunit_expect!(
            test,
            fault::rule_of_site(ct) == Some(first),
            "the first rule did not mark the site"
        );
        let (matches, took) = timed_disarm(test, first);
        kunit_expect!(
            test,
            fault::rule_of_site(ct) == Some(second),
            "the site went to {:?}, not the second rule",
            fault::rule_of_site(ct)
        );
        kunit_expect!(
            test,
            matches <= 31,
            "removing a rule that marked one tag made {matches} matches ({tags} tags)"
        );
        pr_info!(
            "fault: removing 1 of 32 rules over {tags} tags: {matches} matches, {took} ns \
             (with its grace period)\n"
        );
        kunit_expect!(test, fault::disarm(second).is_ok());
        kunit_expect!(test, Field::FAULT.get(ct) == 0, "still marked");
    }
    // The worst case: the removed rule marked as many tags as there are slots.
    if let Some(all) = arm(test, "func:*", config()) {
        let (matches, took) = timed_disarm(test, all);
        kunit_expect!(
            test,
            matches <= fault::MAX_SITES * ids.len(),
            "removing a rule on every tag made {matches} matches ({tags} tags)"
        );
        pr_info!(
            "fault: removing a rule on every tag ({} slots) beside {} others: {matches} \
             matches, {took} ns (with its grace period)\n",
            fault::MAX_SITES,
            ids.len()
        );
    }
    for id in ids {
        let _ = fault::disarm(id);
    }
}

/// Compares the compiled glob with the backtracking matcher on `pattern` and `text`; counts a
/// difference in `differ`, reporting the first.
fn compare_globs(test: &Test, pattern: &[u8], text: &[u8], differ: &mut usize) {
    let Ok(glob) = codetag::Glob::new(pattern) else {
        *differ += 1;
        kunit_expect!(test, false, "{:?} did not compile", pattern);
        return;
    };
    let (compiled, reference) = (
        glob.matches(text),
        codetag::glob_backtracking(pattern, text),
    );
    if compiled != reference && *differ == 0 {
        kunit_expect!(
            test,
            false,
            "{:?} on {:?}: compiled {compiled}, backtracking {reference}",
            core::str::from_utf8(pattern),
            core::str::from_utf8(text)
        );
    }
    *differ += usize::from(compiled != reference);
}

/// The compiled glob a selector matches with answers as the backtracking matcher does: on every
/// pattern of up to three tokens over a small alphabet (literal bytes, `*`, `?`, a negated set,
/// a range, a `]` as a member) against every name of up to three bytes over it, and on
/// the patterns of the review that made backtracking slow, at the longest selector.
fn compiled_globs_match_as_backtracking(test: &Test) {
    const TOKENS: [&[u8]; 7] = [b"a", b"b", b"*", b"?", b"[!a]", b"[a-b]", b"[]a]"];
    const BYTES: [u8; 3] = [b'a', b'b', b']'];
    let mut differ = 0;
    let mut pairs = 0;
    for tokens in 0..=3u32 {
        for code in 0..TOKENS.len().pow(tokens) {
            let mut pattern = KVec::new();
            let mut rest = code;
            for _ in 0..tokens {
                let _ = pattern.extend_from_slice(TOKENS[rest % TOKENS.len()], GFP_KERNEL);
                rest /= TOKENS.len();
            }
            for len in 0..=3u32 {
                for tcode in 0..BYTES.len().pow(len) {
                    let mut text = [0u8; 3];
                    let mut rest = tcode;
                    for c in text.iter_mut().take(len as usize) {
                        *c = BYTES[rest % BYTES.len()];
                        rest /= BYTES.len();
                    }
                    compare_globs(test, &pattern, &text[..len as usize], &mut differ);
                    pairs += 1;
                }
            }
        }
    }
    // Seven negated sets between stars, as the review's rules had, and the longest selector.
    let mut slow = KVec::new();
    for _ in 0..7 {
        let _ = slow.extend_from_slice(b"*[!abcdefghijklmnopqrstuvwxyz]", GFP_KERNEL);
    }
    let _ = slow.extend_from_slice(b"*Q", GFP_KERNEL);
    let mut longest = [b'?'; 251];
    longest[0] = b'*';
    longest[250] = b'*';
    let names: [&[u8]; 5] = [
        b"alloctag_fault_select",
        b"A_B_C_D_E_F_G_Q",
        b"A_B_C_D_E_F_Q",
        b"lib/alloctag/src/tests/fault.rs",
        &[b'x'; 300],
    ];
    for pattern in [&slow[..], &longest[..], b"*_*_*_*_*_*_*Q", b"[]-]*"] {
        for name in names {
            compare_globs(test, pattern, name, &mut differ);
            pairs += 1;
        }
    }
    // The longest pattern, 256 tokens: the end is the first bit of the fifth word.
    let mut full = [b'?'; 256];
    full[255] = b'*';
    for len in [254, 255, 256, 300] {
        compare_globs(test, &full, &[b'x'; 300][..len], &mut differ);
        compare_globs(test, &[b'a'; 256], &[b'a'; 300][..len], &mut differ);
        pairs += 2;
    }
    kunit_expect!(test, differ == 0, "{differ} of {pairs} pairs differ");
    // Sets by hand, apart from the parser both matchers share.
    for (pattern, text, expect) in [
        (&b"[]-]"[..], &b"]"[..], true),
        (b"[]-]", b"-", true),
        (b"[]-]", b"a", false),
        (b"[!]]", b"]", false),
        (b"[a-c]x", b"bx", true),
        (b"[^a-c]", b"d", true),
        (b"*a?", b"xxab", true),
        (b"*a?", b"xxa", false),
    ] {
        let got = codetag::Glob::new(pattern).map(|g| g.matches(text));
        kunit_expect!(
            test,
            got == Ok(expect),
            "{:?} on {:?}: {got:?}",
            core::str::from_utf8(pattern),
            core::str::from_utf8(text)
        );
    }
    kunit_expect!(
        test,
        codetag::Glob::new(&[b'*'; 257]).is_err(),
        "257 bytes compiled"
    );
    kunit_expect!(
        test,
        codetag::Glob::new(b"a[b").is_err(),
        "an open set compiled"
    );
}

fn config_refuses_bad_values(test: &Test) {
    let mut c = Config::default();
    for bad in [
        "probability=101",
        "probability=-1",
        "interval=0",
        "times=-2",
        "space=-1",
        "verbose=3",
        "pid=-1",
        "nosuch=1",
        "times",
        "times=1x",
        "interval=99999999999999999999",
    ] {
        kunit_expect!(test, c.set(bad.as_bytes()).is_err(), "'{bad}' accepted");
    }
    kunit_expect!(
        test,
        c == Config::default(),
        "a refused value changed the config"
    );
    for good in [
        "probability=0",
        "interval=7",
        "times=-1",
        "times=5",
        "space=4096",
        "verbose=2",
        "pid=1",
    ] {
        kunit_expect!(test, c.set(good.as_bytes()).is_ok(), "'{good}' refused");
    }
    kunit_expect!(
        test,
        c == Config {
            probability: 0,
            interval: 7,
            times: 5,
            space: 4096,
            verbose: 2,
            pid: 1
        }
    );
}

test_tag!(INACCURATE_TAG, "alloctag_accuracy_site");

/// A constructor, which keeps the test's cache from being merged with another: its first
/// object then comes from a slab of its own.
extern "C" fn no_merge(_object: *mut c_void) {}

/// When a slab's extension vector cannot be allocated, the object allocated there is not
/// counted, and its tag is marked inaccurate (mm/slub.c, grafted), as mainline does; the
/// allocation itself succeeds.
fn failed_vector_marks_tag_inaccurate(test: &Test) {
    // SAFETY: All-zero is a valid `kmem_cache_args`: no alignment, no constructor.
    let mut args: bindings::kmem_cache_args = unsafe { core::mem::zeroed() };
    args.ctor = Some(no_merge);
    // SAFETY: The name is static; `args` is valid for the call.
    let cache = unsafe {
        bindings::__kmem_cache_create_args(
            kernel::c_str!("alloctag_accuracy").as_char_ptr(),
            64,
            &mut args,
            0,
        )
    };
    kunit_expect!(test, !cache.is_null(), "no cache");
    if cache.is_null() {
        return;
    }
    kunit_expect!(
        test,
        INACCURATE_TAG.codetag().accurate(),
        "accurate at first"
    );
    let tgid = current_tgid();
    let config = Config {
        times: 1,
        pid: tgid,
        ..quiet()
    };
    if let Some(id) = arm(test, "func:alloc_slab_obj_exts", config) {
        // SAFETY: `cache` is a live cache.
        let obj = with_tag(INACCURATE_TAG, || unsafe {
            bindings::kmem_cache_alloc_noprof(cache, bindings::GFP_KERNEL)
        });
        kunit_expect!(test, fault::injected(id) == Some(1), "the vector failed");
        kunit_expect!(test, fault::disarm(id).is_ok());
        kunit_expect!(test, !obj.is_null(), "the object is still allocated");
        kunit_expect!(
            test,
            !INACCURATE_TAG.codetag().accurate(),
            "marked inaccurate"
        );
        kunit_expect!(test, INACCURATE_TAG.read().calls == 0, "and not counted");
        // SAFETY: `obj` came from `cache`, or is null.
        unsafe { bindings::kmem_cache_free(cache, obj) };
    }
    // SAFETY: Every object of `cache` was freed.
    unsafe { bindings::kmem_cache_destroy(cache) };
}

/// A private registry of the allocation tags with `pool`'s dynamic tags listed after them.
fn registry_with_pool(
    test: &Test,
    pool: &'static Pool<1, 4>,
) -> Option<(Registry, codetag::Handle<KeptTags>)> {
    let (mut registry, handle) = registry_of::<KeptTags>(test)?;
    pool.reserve(1);
    // SAFETY: The pool holds allocation tags.
    let added = unsafe { registry.add_test_dynamic(handle, pool) };
    kunit_expect!(test, added.is_ok());
    Some((registry, handle))
}

/// Puts in force in `registry`, as selection 1 of `marker`, the line of `location`.
fn select_line(
    test: &Test,
    registry: &mut Registry,
    handle: codetag::Handle<KeptTags>,
    marker: &'static Marker,
    location: &Location<'_>,
) {
    let line = formatted(format_args!("{}:{}", location.file(), location.line()));
    let selected = core::str::from_utf8(&line)
        .map_err(|_| EINVAL)
        .and_then(selection)
        .and_then(|s| registry.select(handle, marker, 1, s));
    kunit_expect!(test, selected.is_ok(), "selecting: {:?}", selected.err());
}

/// The pool of [`kept_dynamic_tag_never_marked`], apart from the kernel's.
static KEPT_POOL: Pool<1, 4> = Pool::new("kept", false);

/// A stand-in for the `struct module` of the kept tag's call site; only its address is used.
// SAFETY: All zeroes is a valid `struct module`: integers, null pointers and empty lists.
static mut KEPT_MODULE: bindings::module = unsafe { core::mem::zeroed() };

/// The allocation tags, over their section, as a private registry's type.
struct KeptTags;

// SAFETY: `alloc_tags` holds `struct alloc_tag`s, which `AllocTag` is.
unsafe impl TagType for KeptTags {
    type Tag = AllocTag;
    const SECTION: &'static kernel::str::CStr = kernel::c_str!("alloc_tags");
}

/// How many tags [`KEPT_MARKER`] was asked to mark.
static KEPT_MARKS: AtomicUsize = AtomicUsize::new(0);

fn kept_mark(_id: u32, tag: &codetag::Codetag) -> Option<core::num::NonZeroU32> {
    // SAFETY: Only the private registry of the test uses this marker, whose tags are allocation
    // tags (`KeptTags`).
    let tag = unsafe { &*ptr::from_ref(tag).cast::<AllocTag>() };
    if !KEPT_POOL.owns(tag) {
        return None;
    }
    KEPT_MARKS.fetch_add(1, Ordering::Relaxed);
    core::num::NonZeroU32::new(1)
}

fn kept_unmark(_value: u32) {}

fn kept_owner(_value: u32) -> u32 {
    1
}

fn kept_flush() {}

/// A user of selections that marks only [`KEPT_POOL`]'s tags, with mark 1.
static KEPT_MARKER: Marker = Marker {
    field: Field::FAULT,
    mark: kept_mark,
    unmark: kept_unmark,
    flush: kept_flush,
    owner: kept_owner,
};

#[track_caller]
fn kept_location() -> &'static Location<'static> {
    Location::caller()
}

/// A dynamic tag kept after its module went (its allocations still live) is listed but never
/// marked by a later selection: the pool frees it when its counters read zero, without
/// unmarking it, so a mark would stay on the slot for the next tag made there.
fn kept_dynamic_tag_never_marked(test: &Test) {
    let Some((mut registry, handle)) = registry_with_pool(test, &KEPT_POOL) else {
        return;
    };
    let location = kept_location();
    let Some(tag) = KEPT_POOL.tag(location) else {
        kunit_expect!(test, false, "no dynamic tag made");
        return;
    };
    KEPT_POOL.set_module(tag, &raw mut KEPT_MODULE);
    // SAFETY: Allocating has no precondition.
    let obj = with_tag(tag, || unsafe {
        bindings::__kmalloc_noprof(16, bindings::GFP_KERNEL)
    });
    kunit_expect!(test, !obj.is_null());
    // The module goes while the allocation lives: the tag is kept, still listed.
    // SAFETY: `KEPT_MODULE` has no range in the registry; only its dynamic tag is dropped.
    unsafe { registry.remove_test_module(&raw mut KEPT_MODULE) };
    let listed = registry
        .tags(handle, codetag::Cursor::START)
        .any(|t| ptr::eq(t, tag));
    kunit_expect!(test, listed, "the kept tag is not listed");
    select_line(test, &mut registry, handle, &KEPT_MARKER, location);
    kunit_expect!(
        test,
        Field::FAULT.get(tag.codetag()) == 0 && KEPT_MARKS.load(Ordering::Relaxed) == 0,
        "the kept tag was marked"
    );
    let _ = registry.deselect(&KEPT_MARKER, 1);
    // SAFETY: `obj` came from kmalloc, or is null.
    unsafe { bindings::kfree(obj) };
    // With its counters at zero the kept tag is freed at the second pass in a row that finds it
    // so (a free between its two counter updates can read zero once).
    // SAFETY: As above.
    unsafe { registry.remove_test_module(&raw mut KEPT_MODULE) };
    kunit_expect!(
        test,
        KEPT_POOL.used() == 1,
        "freed at the first unused pass"
    );
    // SAFETY: As above.
    unsafe { registry.remove_test_module(&raw mut KEPT_MODULE) };
    kunit_expect!(
        test,
        KEPT_POOL.used() == 0,
        "{} tags left",
        KEPT_POOL.used()
    );
}

#[track_caller]
fn unused_location() -> &'static Location<'static> {
    Location::caller()
}

/// A module's dynamic tag that reads unused at unload leaves the listing at once, but keeps
/// its slot and counters until the next pass that reads it unused again: one read can see zero
/// while a free on another CPU is between its `bytes` and `calls` updates, and still writes
/// the counters. Seam: the tag reads unused at unload, in use at the next pass (that free's
/// `calls` update to come, stood in for by an allocation charged here), then unused.
fn dynamic_tag_unused_at_unload_freed_at_second_read(test: &Test) {
    let Some((mut registry, handle)) = registry_with_pool(test, &KEPT_POOL) else {
        return;
    };
    let Some(tag) = KEPT_POOL.tag(unused_location()) else {
        kunit_expect!(test, false, "no dynamic tag made");
        return;
    };
    KEPT_POOL.set_module(tag, &raw mut KEPT_MODULE);
    let listed = |registry: &codetag::Registry| {
        registry
            .tags(handle, codetag::Cursor::START)
            .any(|t| ptr::eq(t, tag))
    };
    // SAFETY: `KEPT_MODULE` has no range in the registry; only its dynamic tag is dropped.
    unsafe { registry.remove_test_module(&raw mut KEPT_MODULE) };
    kunit_expect!(
        test,
        KEPT_POOL.used() == 1 && !listed(&registry),
        "freed at the unload's one read, or still listed: {} tags",
        KEPT_POOL.used()
    );
    // SAFETY: Allocating has no precondition.
    let obj = with_tag(tag, || unsafe {
        bindings::__kmalloc_noprof(16, bindings::GFP_KERNEL)
    });
    kunit_expect!(test, !obj.is_null());
    // SAFETY: As above; a pass of the reaper.
    unsafe { registry.remove_test_module(&raw mut KEPT_MODULE) };
    kunit_expect!(
        test,
        KEPT_POOL.used() == 1 && listed(&registry),
        "a tag read in use was freed, or is not listed"
    );
    // SAFETY: `obj` came from kmalloc, or is null.
    unsafe { bindings::kfree(obj) };
    // SAFETY: As above.
    unsafe { registry.remove_test_module(&raw mut KEPT_MODULE) };
    kunit_expect!(
        test,
        KEPT_POOL.used() == 1,
        "freed at the first unused pass"
    );
    // SAFETY: As above.
    unsafe { registry.remove_test_module(&raw mut KEPT_MODULE) };
    kunit_expect!(
        test,
        KEPT_POOL.used() == 0,
        "{} tags left",
        KEPT_POOL.used()
    );
}

/// The pool of [`tag_made_during_a_walk_is_marked`], apart from the kernel's.
static WALK_POOL: Pool<1, 4> = Pool::new("walk", false);

/// A stand-in for the `struct module` of that test's call site; only its address is used.
// SAFETY: All zeroes is a valid `struct module`: integers, null pointers and empty lists.
static mut WALK_MODULE: bindings::module = unsafe { core::mem::zeroed() };

fn walk_mark(_id: u32, tag: &codetag::Codetag) -> Option<core::num::NonZeroU32> {
    // SAFETY: Only the private registry of the test uses this marker, whose tags are allocation
    // tags (`KeptTags`).
    let tag = unsafe { &*ptr::from_ref(tag).cast::<AllocTag>() };
    WALK_POOL.owns(tag).then_some(core::num::NonZeroU32::MIN)
}

/// A user of selections that marks only [`WALK_POOL`]'s tags, with mark 1.
static WALK_MARKER: Marker = Marker {
    field: Field::FAULT,
    mark: walk_mark,
    unmark: kept_unmark,
    flush: kept_flush,
    owner: kept_owner,
};

#[track_caller]
fn walk_location() -> &'static Location<'static> {
    Location::caller()
}

/// A dynamic tag made while the registry walks the tags made so far (for another maker, or the
/// work item), the walk falling between the maker's two stores (the tag's flag set, its slot
/// not yet live), is marked by the next walk, which its maker asks for: the walk must leave the
/// flag of a tag it cannot mark yet.
fn tag_made_during_a_walk_is_marked(test: &Test) {
    let Some((mut registry, handle)) = registry_with_pool(test, &WALK_POOL) else {
        return;
    };
    let location = walk_location();
    select_line(test, &mut registry, handle, &WALK_MARKER, location);
    let mut walks = 0;
    let tag = WALK_POOL.make_with_seam(location, || {
        registry.made_test_dynamic();
        walks += 1;
    });
    kunit_expect!(test, walks == 1, "the seam ran {walks} times");
    let Some(tag) = tag else {
        kunit_expect!(test, false, "no dynamic tag made");
        return;
    };
    // The walk the maker asks for once its tag is published.
    registry.made_test_dynamic();
    kunit_expect!(
        test,
        Field::FAULT.get(tag.codetag()) == 1,
        "the tag made during a walk was never marked"
    );
    let _ = registry.deselect(&WALK_MARKER, 1);
    kunit_expect!(test, Field::FAULT.get(tag.codetag()) == 0, "still marked");
    WALK_POOL.set_module(tag, &raw mut WALK_MODULE);
    // Unused, it goes at the pass after the unload's (a pass of the reaper).
    for _ in 0..2 {
        // SAFETY: `WALK_MODULE` has no range in the registry; only its dynamic tag is dropped.
        unsafe { registry.remove_test_module(&raw mut WALK_MODULE) };
    }
    kunit_expect!(
        test,
        WALK_POOL.used() == 0,
        "{} tags left",
        WALK_POOL.used()
    );
}

kunit_suite!(
    fault_suite,
    "alloctag_fault",
    [
        rust_site_fails_with_enomem,
        plain_site_armed_from_first_use,
        plain_site_made_while_registry_busy,
        plain_site_armed_in_atomic_context,
        times_is_exact,
        stale_mark_never_applies_another_sites_rule,
        times_is_exact_under_concurrency,
        interval_is_exact,
        probability_100_and_0,
        space_lets_bytes_through_first,
        pid_filter_picks_the_thread_group,
        nofail_never_fails,
        pages_and_vmalloc_fail,
        disarming_restores,
        selectors_match_allocinfo_words,
        compiled_globs_match_as_backtracking,
        removal_matches_only_its_tags,
        config_refuses_bad_values,
        failed_vector_marks_tag_inaccurate,
        kept_dynamic_tag_never_marked,
        dynamic_tag_unused_at_unload_freed_at_second_read,
        tag_made_during_a_walk_is_marked,
    ]
);
