// SPDX-License-Identifier: GPL-2.0

//! The allocinfo ioctl's ABI, name trimming and filter matching, and the registry's content
//! generation.

use super::registry_of;
use crate::{
    alloc_tag::{AllocTag, AllocTags, Counters},
    allocinfo::{
        copy_name, trimmed, Filter, MASK_FILENAME, MASK_FUNCTION, MASK_INACCURATE, MASK_LINENO,
        MASK_MAX_SIZE, MASK_MIN_SIZE, MASK_MODNAME, MASK_UNLOADED, STR_SIZE,
    },
    codetag::{CODETAG_FLAG_INACCURATE, CODETAG_FLAG_UNLOADED},
    kunit::{kunit_expect, kunit_suite, Test},
};
use core::sync::atomic::Ordering;
use kernel::{bindings, c_str};

/// Names keep their last 63 bytes, as mainline's `allocinfo_str()`, and are NUL-padded.
fn names_are_trimmed_from_the_front(test: &Test) {
    let long = [b'a'; 100];
    let mut name = long;
    name[99] = b'z';
    name[37] = b'y';
    kunit_expect!(test, trimmed(&name) == &name[37..], "63 last bytes");
    kunit_expect!(test, trimmed(&name[..63]) == &name[..63], "63 bytes kept");
    kunit_expect!(
        test,
        trimmed(&name[..64]) == &name[1..64],
        "64 bytes lose one"
    );
    kunit_expect!(test, trimmed(b"") == b"");
    let mut dest = [0x55; STR_SIZE];
    copy_name(&mut dest, b"mm/slub.c");
    kunit_expect!(
        test,
        dest[..9].iter().zip(b"mm/slub.c").all(|(&a, &b)| a == b)
    );
    kunit_expect!(test, dest[9..].iter().all(|&c| c == 0), "padded with NULs");
    copy_name(&mut dest, &name);
    kunit_expect!(test, dest[0] == b'y' && dest[62] == b'z');
    kunit_expect!(test, dest[63] == 0, "NUL-terminated");
}

/// Counters that the tags below share; nothing charges them, so they read zero.
#[link_section = ".data..percpu"]
static mut QUERY_COUNTERS: bindings::alloc_tag_counters =
    bindings::alloc_tag_counters { bytes: 0, calls: 0 };

/// A function name longer than the ABI keeps.
const LONG_FUNCTION: &str =
    "kernel::some::very::long::rust::module::path::Type::method_with_a_long_name";

/// A tag of module `$module` (null for built-in) at line 42 of `$file` in `$function`.
macro_rules! query_tag {
    ($module:expr, $function:expr, $file:expr) => {
        // SAFETY: `QUERY_COUNTERS` is a `.data..percpu` static.
        unsafe {
            AllocTag::new(
                bindings::codetag {
                    flags: 0,
                    lineno: 42,
                    modname: $module,
                    function: $function,
                    filename: $file,
                    index: 0,
                    #[cfg(CONFIG_ALLOCTAG_PER_NODE)]
                    node_slots: 0,
                },
                &raw mut QUERY_COUNTERS,
            )
        }
    };
}

static BUILT_IN: AllocTag = query_tag!(
    core::ptr::null(),
    c_str!("dup_mm").as_char_ptr(),
    c_str!("kernel/fork.c").as_char_ptr()
);
static IN_MODULE: AllocTag = query_tag!(
    c_str!("xfs").as_char_ptr(),
    c_str!("kernel::some::very::long::rust::module::path::Type::method_with_a_long_name")
        .as_char_ptr(),
    c_str!("fs/xfs/xfs_icache.c").as_char_ptr()
);

/// Makes a filter with `mask` and the fields `set` writes.
fn filter(test: &Test, mask: u64, set: impl FnOnce(&mut bindings::allocinfo_filter)) -> Filter {
    // SAFETY: All-zero is a valid `allocinfo_filter`.
    let mut raw: bindings::allocinfo_filter = unsafe { core::mem::zeroed() };
    raw.mask = mask;
    set(&mut raw);
    let made = Filter::new(&raw);
    // A refused filter is a failure of the case, never "match all".
    kunit_expect!(
        test,
        made.is_ok(),
        "filter {mask:#x} refused: {:?}",
        made.as_ref().err()
    );
    made.unwrap_or_else(|_| Filter::all())
}

/// Writes `text` into a filter's name field.
fn set_name(field: &mut [u8; STR_SIZE], text: &[u8]) {
    for (d, &c) in field.iter_mut().zip(text) {
        *d = c;
    }
}

/// Returns which of the two tags match `f`: (built-in, module).
fn which(f: &Filter) -> (bool, bool) {
    let mut counters = None;
    (
        f.matches(&BUILT_IN, &mut counters),
        f.matches(&IN_MODULE, &mut None),
    )
}

fn bad_filters_are_refused(test: &Test) {
    // SAFETY: All-zero is a valid `allocinfo_filter`.
    let mut raw: bindings::allocinfo_filter = unsafe { core::mem::zeroed() };
    kunit_expect!(test, Filter::new(&raw).is_ok());
    raw.mask = MASK_UNLOADED;
    kunit_expect!(
        test,
        Filter::new(&raw).is_ok(),
        "bit 7, alloctag's unloaded"
    );
    raw.mask = 1 << 8;
    kunit_expect!(test, Filter::new(&raw).is_err(), "unknown bit 8");
    raw.mask = 1 << 63;
    kunit_expect!(test, Filter::new(&raw).is_err(), "unknown bit 63");
    raw.mask = MASK_MIN_SIZE | MASK_MAX_SIZE;
    (raw.min_size, raw.max_size) = (10, 9);
    kunit_expect!(test, Filter::new(&raw).is_err(), "min above max");
    raw.max_size = 10;
    kunit_expect!(test, Filter::new(&raw).is_ok(), "min equal to max");
    raw.mask = MASK_MIN_SIZE;
    (raw.min_size, raw.max_size) = (10, 0);
    kunit_expect!(test, Filter::new(&raw).is_ok(), "max unused");
}

fn filters_match_as_mainline(test: &Test) {
    kunit_expect!(test, which(&Filter::all()) == (true, true));
    // Module: an empty name selects the built-in tags.
    let f = filter(test, MASK_MODNAME, |_| ());
    kunit_expect!(test, which(&f) == (true, false), "empty module name");
    let f = filter(test, MASK_MODNAME, |r| {
        set_name(&mut r.fields.modname, b"xfs")
    });
    kunit_expect!(test, which(&f) == (false, true), "module xfs");
    let f = filter(test, MASK_MODNAME, |r| {
        set_name(&mut r.fields.modname, b"xf")
    });
    kunit_expect!(test, which(&f) == (false, false), "no prefix match");
    // Function and file: exact, on the trimmed name.
    let f = filter(test, MASK_FUNCTION, |r| {
        set_name(&mut r.fields.function, b"dup_mm")
    });
    kunit_expect!(test, which(&f) == (true, false), "function");
    let f = filter(test, MASK_FUNCTION, |r| {
        set_name(&mut r.fields.function, b"dup_m")
    });
    kunit_expect!(test, which(&f) == (false, false), "function prefix");
    let long = LONG_FUNCTION.as_bytes();
    let f = filter(test, MASK_FUNCTION, |r| {
        set_name(&mut r.fields.function, trimmed(long))
    });
    kunit_expect!(test, which(&f) == (false, true), "long function, trimmed");
    let f = filter(test, MASK_FUNCTION, |r| {
        set_name(&mut r.fields.function, &long[..STR_SIZE])
    });
    kunit_expect!(test, which(&f) == (false, false), "64 bytes, no NUL");
    let f = filter(test, MASK_FILENAME, |r| {
        set_name(&mut r.fields.filename, b"fs/xfs/xfs_icache.c")
    });
    kunit_expect!(test, which(&f) == (false, true), "file");
    let f = filter(test, MASK_FILENAME, |r| {
        set_name(&mut r.fields.filename, b"xfs_icache.c")
    });
    kunit_expect!(test, which(&f) == (false, false), "file suffix");
    // Line, and all tests together.
    let f = filter(test, MASK_LINENO, |r| r.fields.lineno = 42);
    kunit_expect!(test, which(&f) == (true, true), "line");
    let f = filter(test, MASK_LINENO, |r| r.fields.lineno = 42 + (1 << 32));
    kunit_expect!(
        test,
        which(&f) == (false, false),
        "line compared on 64 bits"
    );
    let f = filter(test, MASK_LINENO | MASK_MODNAME | MASK_FILENAME, |r| {
        r.fields.lineno = 42;
        set_name(&mut r.fields.modname, b"xfs");
        set_name(&mut r.fields.filename, b"kernel/fork.c");
    });
    kunit_expect!(test, which(&f) == (false, false), "all must match");
}

fn accuracy_unloaded_and_size_filters(test: &Test) {
    let only_inaccurate = filter(test, MASK_INACCURATE, |r| r.inaccurate = 7);
    let only_accurate = filter(test, MASK_INACCURATE, |r| r.inaccurate = 0);
    kunit_expect!(test, which(&only_inaccurate) == (false, false));
    kunit_expect!(test, which(&only_accurate) == (true, true));
    let flags = IN_MODULE.codetag().flags();
    flags.fetch_or(CODETAG_FLAG_INACCURATE, Ordering::Relaxed);
    kunit_expect!(test, which(&only_inaccurate) == (false, true));
    kunit_expect!(test, which(&only_accurate) == (true, false));
    flags.fetch_and(!CODETAG_FLAG_INACCURATE, Ordering::Relaxed);

    // Only the tags of unloaded modules, kept for their live allocations.
    let only_unloaded = filter(test, MASK_UNLOADED, |_| ());
    kunit_expect!(test, which(&only_unloaded) == (false, false));
    IN_MODULE.codetag().mark_unloaded();
    kunit_expect!(test, which(&only_unloaded) == (false, true));
    kunit_expect!(
        test,
        which(&only_accurate) == (true, true),
        "accuracy unchanged"
    );
    flags.fetch_and(!CODETAG_FLAG_UNLOADED, Ordering::Relaxed);

    // The counters read zero: [0, 0] matches, [1, ...] does not.
    let zero = filter(test, MASK_MIN_SIZE | MASK_MAX_SIZE, |_| ());
    let mut counters = None;
    kunit_expect!(test, zero.matches(&BUILT_IN, &mut counters));
    kunit_expect!(
        test,
        counters == Some(Counters::default()),
        "a size filter sums the counters once"
    );
    let one = filter(test, MASK_MIN_SIZE, |r| r.min_size = 1);
    kunit_expect!(test, which(&one) == (false, false));
    let names_only = filter(test, MASK_FUNCTION, |r| {
        set_name(&mut r.fields.function, b"dup_mm")
    });
    let mut counters = None;
    kunit_expect!(test, names_only.matches(&BUILT_IN, &mut counters));
    kunit_expect!(test, counters.is_none(), "no size filter, no sum");
}

/// The content id changes with every module that adds or drops tags, and only then.
fn generation_follows_modules(test: &Test) {
    let Some((mut registry, handle)) = registry_of::<AllocTags>(test) else {
        return;
    };
    // Without counters: removing the module frees a module's counters
    // (src/alloc_tag/counters.rs), which only a module's coming makes.
    static TAGS: [AllocTag; 1] = [AllocTag::without_counters(
        c_str!("query").as_char_ptr().cast(),
        c_str!("f").as_char_ptr().cast(),
        c_str!("q.c").as_char_ptr().cast(),
        42,
    )];
    // SAFETY: All zeroes is a valid `struct module`.
    static mut MODULE: bindings::module = unsafe { core::mem::zeroed() };
    let module = &raw mut MODULE;
    let before = registry.generation(handle);
    // SAFETY: `MODULE` is static; the tags are static.
    let added = unsafe { registry.add_test_module(handle, module, &TAGS) };
    kunit_expect!(test, added.is_ok());
    let loaded = registry.generation(handle);
    kunit_expect!(test, loaded != before, "load changes it");
    kunit_expect!(
        test,
        registry.generation(handle) == loaded,
        "reading does not"
    );
    // SAFETY: `module` was added above.
    unsafe { registry.remove_test_module(module) };
    let unloaded = registry.generation(handle);
    kunit_expect!(
        test,
        unloaded != loaded && unloaded != before,
        "unload changes it"
    );
}

kunit_suite!(
    query_suite,
    "alloctag_query",
    [
        names_are_trimmed_from_the_front,
        bad_filters_are_refused,
        filters_match_as_mainline,
        accuracy_unloaded_and_size_filters,
        generation_follows_modules,
    ]
);
