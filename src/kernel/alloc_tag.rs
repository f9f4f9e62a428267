// SPDX-License-Identifier: GPL-2.0

//! Allocation tags for Rust call sites.
//!
//! Written without the `&raw` syntax: the kernel crate builds with every rustc that 6.12
//! allows.
//!
//! C header: [`include/linux/alloc_tag.h`](srctree/include/linux/alloc_tag.h)
//!
//! In C, `alloc_hooks()` gives every allocation call site a tag of its own, so that
//! `/proc/allocinfo` says which line holds memory. Rust code allocates through the C helpers of
//! this crate, so without tags of its own every Rust allocation would land on one line of
//! `rust/helpers/`. [`alloc_hooks!`] is the Rust `alloc_hooks()`: it places a tag, laid out as
//! `struct alloc_tag` with its own per-CPU counters, in the `alloc_tags` section at the call
//! site, with the Rust file, line, module and function, and makes it `current->alloc_tag`
//! while the wrapped expression runs. [`kbox!`], [`vbox!`], [`kvbox!`], [`kvec_with_capacity!`],
//! [`kvec_push!`] and [`alloc_page!`] are its short forms.
//!
//! [`crate::alloc::allocator`] and [`crate::page`] use the `_noprof` allocators, which charge
//! the current tag: with the Rust core, through its charged allocators while a tag is wanted
//! (lib/alloctag/src/glue_dynamic.c), with 6.12's C core through rust/helpers/. A Rust
//! allocation made with no tag current is charged to the dynamic tag of its caller's line (the
//! Rust core, in task context), else to the fallback tag of its path, [`UNTAGGED_KREALLOC`] and
//! its siblings, whose function names start with `rust_untagged_`.
//!
//! Cost: a call site adds one call to find `current`, a load and a store of
//! `current->alloc_tag` before the allocation and a store after it (`alloc_hooks()` reads
//! `current` inline); no allocation and no lock. While profiling is off, call sites and the plain
//! APIs test one key ([`tag_wanted`], `alloctag_tag_key`, as C's `alloc_hooks()`), and the
//! allocators call 6.12's helpers, which then charge nothing themselves.

#[cfg(CONFIG_MEM_ALLOC_PROFILING)]
use crate::{bindings, types::Opaque};

/// A static allocation tag of one Rust call site: a `struct alloc_tag`.
///
/// # Invariants
///
/// The tag's `counters` is the `__percpu` address of counters that live forever, or, with the
/// Rust core (in vmlinux, without the debug checks), null until the core gives it counters
/// (lib/alloctag/src/alloc_tag/counters.rs): when profiling first turns on, or when its module
/// comes after that, before any of its code runs; its strings are static and NUL-terminated.
#[cfg(CONFIG_MEM_ALLOC_PROFILING)]
#[repr(transparent)]
pub struct CallSiteTag(Opaque<bindings::alloc_tag>);

// SAFETY: The counters change only through per-CPU operations of the allocator hooks; the rest of
// the tag does not change after it is made.
#[cfg(CONFIG_MEM_ALLOC_PROFILING)]
unsafe impl Sync for CallSiteTag {}

#[cfg(CONFIG_MEM_ALLOC_PROFILING)]
impl CallSiteTag {
    /// Makes a tag. Used by [`alloc_hooks!`]; not for direct use.
    ///
    /// # Safety
    ///
    /// `counters` must be the `__percpu` address of zeroed counters that live forever and that
    /// no other tag uses, or null with the Rust core, which gives tags counters before they are
    /// charged; `module` must be null or a static NUL-terminated string.
    #[doc(hidden)]
    pub const unsafe fn new(
        file: &'static [u8],
        line: u32,
        module: *const u8,
        function: &'static [u8],
        counters: *mut bindings::alloc_tag_counters,
    ) -> Self {
        // INVARIANT: The caller guarantees `counters` and `module`; the macros pass
        // NUL-terminated `file` and `function`.
        Self(Opaque::new(bindings::alloc_tag {
            ct: bindings::codetag {
                flags: 0,
                lineno: line,
                modname: module.cast(),
                function: function.as_ptr().cast(),
                filename: file.as_ptr().cast(),
                // Given by the Rust core when the tag gets an index.
                #[cfg(CONFIG_MEM_ALLOC_PROFILING_RUST)]
                index: 0,
                #[cfg(CONFIG_ALLOCTAG_PER_NODE)]
                node_slots: 0,
            },
            counters,
            // Made by lib/alloctag when waste accounting first turns on.
            #[cfg(CONFIG_ALLOCTAG_WASTE)]
            waste: core::ptr::null_mut(),
        }))
    }

    /// Returns the raw `struct alloc_tag`.
    pub const fn as_raw(&self) -> *mut bindings::alloc_tag {
        self.0.get()
    }
}

/// Runs `f` with `tag` as the current task's allocation tag, then puts the previous one back,
/// as C's `alloc_tag_save()` and `alloc_tag_restore()` do around an allocation: allocations in
/// `f` are charged to `tag`, and nested calls behave as C's (the innermost wins).
///
/// The tag is current exactly while `f` runs: no value outlives the call that could leave it in
/// `current->alloc_tag` (a guard could be forgotten or dropped elsewhere). So a module's tag is
/// never left behind for later allocations of the task to charge after the module is gone.
///
/// As C's `alloc_hooks()` with the Rust core, this makes the tag current only while a tag is
/// wanted ([`tag_wanted`]), or always with the debug checks or 6.12's C core: while profiling is
/// off a call site costs one patched-out jump. An allocation in flight while the key turns on
/// finds no tag current, and the core charges it to the dynamic tag of the same line, a second
/// tag for that call site (where C's leaves such an allocation uncharged).
#[cfg(CONFIG_MEM_ALLOC_PROFILING)]
#[inline]
pub fn with_tag<R>(tag: &'static CallSiteTag, f: impl FnOnce() -> R) -> R {
    #[cfg(all(CONFIG_MEM_ALLOC_PROFILING_RUST, not(CONFIG_MEM_ALLOC_PROFILING_DEBUG)))]
    if !tag_wanted() {
        return f();
    }
    // SAFETY: `tag` is static.
    unsafe { with_raw_tag(tag.as_raw(), f) }
}

/// Returns the location of the code that called the kernel crate's allocating API, for the
/// core's charged allocators (`alloctag_rust_charged_krealloc()` and its siblings in
/// lib/alloctag/src/glue_dynamic.c), which charge the allocation to that line's dynamic tag.
///
/// The allocating APIs of this crate (`KBox::new`, `KVec::push`, `Arc::new`,
/// `CString::try_from_fmt`, ...) and every function between them and the allocators are
/// `#[track_caller]` (patch 6 of the series, patches/0006-*.patch), so that
/// [`Location::caller`] here is the first caller outside that chain: the line of the code that
/// called the API. The core keeps a dynamic tag for each such location, made on first use. An
/// explicit [`alloc_hooks!`] (or a C caller's `alloc_hooks()`) that already made a tag current
/// wins, and so do the fallback tags in interrupt context or when no tag can be made (see
/// `lib/alloctag/src/alloc_tag/dynamic.rs`).
///
/// Why `#[track_caller]` and not a macro at each API: the call sites need no change, and the
/// location is a constant that the compiler passes as a hidden argument, so finding the tag
/// again is one lookup keyed by its address.
///
/// [`Location::caller`]: core::panic::Location::caller
#[cfg(CONFIG_MEM_ALLOC_PROFILING_RUST)]
#[inline(always)]
#[track_caller]
pub fn caller_location() -> *const crate::ffi::c_void {
    let location: *const core::panic::Location<'static> = core::panic::Location::caller();
    location.cast()
}

/// Returns whether an allocation of the kernel crate is to be charged (`alloctag_tag_key`: on
/// while profiling is on or a fault-injection rule is armed), tested inline. While it is off,
/// the allocators call 6.12's helpers, and an allocation costs one no-op here, as a C call
/// site's `alloc_hooks()` (`crate::jump_label`).
///
/// The tag key, not the profiling key, because the fault hooks read the tag with profiling off.
#[cfg(CONFIG_MEM_ALLOC_PROFILING_RUST)]
#[inline(always)]
pub fn tag_wanted() -> bool {
    // The key is a `static_key_true` exactly when profiling is on by default
    // (`DEFINE_STATIC_KEY_MAYBE()` in lib/alloctag/src/static_key.c).
    #[cfg(CONFIG_MEM_ALLOC_PROFILING_ENABLED_BY_DEFAULT)]
    let on =
        crate::static_branch_maybe!(true, bindings::alloctag_tag_key, bindings::static_key_true);
    #[cfg(not(CONFIG_MEM_ALLOC_PROFILING_ENABLED_BY_DEFAULT))]
    let on = crate::static_branch_maybe!(
        false,
        bindings::alloctag_tag_key,
        bindings::static_key_false
    );
    on
}

/// Runs `f` with `tag` as the current task's allocation tag, as [`with_tag`] does.
///
/// # Safety
///
/// `tag` must point to a `struct alloc_tag` that lives at least until `f` returns.
#[cfg(CONFIG_MEM_ALLOC_PROFILING)]
#[inline]
unsafe fn with_raw_tag<R>(tag: *mut bindings::alloc_tag, f: impl FnOnce() -> R) -> R {
    // SAFETY: `current` is valid in every context, and stays the same task until `f` returns.
    let slot = unsafe { core::ptr::addr_of_mut!((*bindings::get_current()).alloc_tag) };
    // SAFETY: Only this task changes its `alloc_tag` outside interrupts, and interrupts restore
    // what they change before they return.
    let previous = unsafe { slot.replace(tag) };
    let result = f();
    // SAFETY: As above.
    let found = unsafe { slot.replace(previous) };
    if cfg!(CONFIG_MEM_ALLOC_PROFILING_DEBUG) && found != tag {
        tag_changed();
    }
    result
}

/// Warns that something changed `current->alloc_tag` inside [`with_tag`] and left it changed,
/// as C's `alloc_tag_restore()` does under `CONFIG_MEM_ALLOC_PROFILING_DEBUG`.
#[cfg(CONFIG_MEM_ALLOC_PROFILING)]
#[cold]
#[inline(never)]
fn tag_changed() {
    crate::pr_warn!("current->alloc_tag was changed:\n");
    // SAFETY: `__warn` prints the warning with a backtrace and taints, as `WARN()` does; the
    // file name is a static NUL-terminated string and null `regs` and `args` are allowed.
    unsafe {
        bindings::__warn(
            crate::c_str!(file!()).as_char_ptr(),
            line!() as _,
            core::ptr::null_mut(),
            bindings::TAINT_WARN,
            core::ptr::null_mut(),
            core::ptr::null_mut(),
        )
    };
}

/// Returns the type name of `T`; [`alloc_hooks!`] names a function it defines with it.
#[doc(hidden)]
pub const fn type_name_of<T>(_: &T) -> &'static str {
    core::any::type_name::<T>()
}

/// Returns the length of `name` without `suffix`, if `name` ends with it.
#[doc(hidden)]
pub const fn len_without_suffix(name: &str, suffix: &str) -> usize {
    let (n, s) = (name.as_bytes(), suffix.as_bytes());
    if n.len() < s.len() {
        return n.len();
    }
    let mut i = 0;
    while i < s.len() {
        if n[n.len() - s.len() + i] != s[i] {
            return n.len();
        }
        i += 1;
    }
    n.len() - s.len()
}

/// Returns the offset of the last path component of `path` (after its last `/`).
#[doc(hidden)]
pub const fn basename_start(path: &str) -> usize {
    let p = path.as_bytes();
    let mut i = p.len();
    while i > 0 && p[i - 1] != b'/' {
        i -= 1;
    }
    i
}

/// Copies `N - 1` bytes of `s` from `start` into a NUL-terminated array, turning what
/// `/proc/allocinfo` cannot show as one field (spaces) and what module names fix (`-`, `,`)
/// into `_`.
#[doc(hidden)]
pub const fn c_string<const N: usize>(s: &str, start: usize) -> [u8; N] {
    let b = s.as_bytes();
    let mut out = [0u8; N];
    let mut i = 0;
    while i + 1 < N {
        out[i] = match b[start + i] {
            b' ' | b'-' | b',' => b'_',
            c => c,
        };
        i += 1;
    }
    out
}

/// Runs an allocating expression with an allocation tag of its own, as C's `alloc_hooks()`.
///
/// `/proc/allocinfo` then lists what the expression allocated (through the kernel crate's
/// allocators, [`KBox`], [`KVec`], [`VBox`], pages, ...) at this file and line, with the module
/// in brackets when built into one, and the Rust path of the enclosing function.
///
/// ```
/// use kernel::{alloc_hooks, alloc::{flags::GFP_KERNEL, KBox}};
///
/// let b = alloc_hooks!(KBox::new([0u8; 100], GFP_KERNEL))?;
/// # Ok::<(), Error>(())
/// ```
///
/// [`KBox`]: crate::alloc::KBox
/// [`KVec`]: crate::alloc::KVec
/// [`VBox`]: crate::alloc::VBox
#[cfg(CONFIG_MEM_ALLOC_PROFILING)]
#[macro_export]
macro_rules! alloc_hooks {
    ($alloc:expr) => {{
        fn __alloc_hooks_site() {}
        const __NAME: &str = $crate::alloc_tag::type_name_of(&__alloc_hooks_site);
        const __NAME_LEN: usize =
            $crate::alloc_tag::len_without_suffix(__NAME, "::__alloc_hooks_site");
        static __FUNCTION: [u8; __NAME_LEN + 1] = $crate::alloc_tag::c_string(__NAME, 0);

        #[cfg(MODULE)]
        const __MODFILE: &str = env!("RUST_MODFILE");
        #[cfg(MODULE)]
        const __MOD_START: usize = $crate::alloc_tag::basename_start(__MODFILE);
        #[cfg(MODULE)]
        static __MODULE: [u8; __MODFILE.len() - __MOD_START + 1] =
            $crate::alloc_tag::c_string(__MODFILE, __MOD_START);

        // As C's DEFINE_ALLOC_TAG(): with the Rust core tags get their counters from the per-CPU
        // allocator when profiling first turns on (a module's as it comes, if later); only the
        // debug checks keep static ones for vmlinux.
        #[cfg(not(all(
            CONFIG_MEM_ALLOC_PROFILING_RUST,
            any(MODULE, not(CONFIG_MEM_ALLOC_PROFILING_DEBUG))
        )))]
        #[link_section = ".data..percpu"]
        static mut __COUNTERS: $crate::bindings::alloc_tag_counters =
            $crate::bindings::alloc_tag_counters { bytes: 0, calls: 0 };

        // `used(compiler)`, not `used`: the latter marks the section SHF_GNU_RETAIN, the bit the
        // module loader reads as SHF_RO_AFTER_INIT, which would make a module's data read-only.
        #[used(compiler)]
        #[link_section = "alloc_tags"]
        // SAFETY: `__COUNTERS` is a `.data..percpu` static of this tag alone, zeroed and living
        // forever, or null with the Rust core (see `CallSiteTag`); the module name is a static
        // NUL-terminated array.
        static __TAG: $crate::alloc_tag::CallSiteTag = unsafe {
            $crate::alloc_tag::CallSiteTag::new(
                concat!(file!(), "\0").as_bytes(),
                line!(),
                {
                    #[cfg(MODULE)]
                    let module = __MODULE.as_ptr();
                    #[cfg(not(MODULE))]
                    let module = ::core::ptr::null();
                    module
                },
                &__FUNCTION,
                {
                    #[cfg(all(
                        CONFIG_MEM_ALLOC_PROFILING_RUST,
                        any(MODULE, not(CONFIG_MEM_ALLOC_PROFILING_DEBUG))
                    ))]
                    let counters = ::core::ptr::null_mut();
                    #[cfg(not(all(
                        CONFIG_MEM_ALLOC_PROFILING_RUST,
                        any(MODULE, not(CONFIG_MEM_ALLOC_PROFILING_DEBUG))
                    )))]
                    let counters = ::core::ptr::addr_of_mut!(__COUNTERS);
                    counters
                },
            )
        };
        $crate::alloc_tag::with_tag(&__TAG, || $alloc)
    }};
}

/// Without memory allocation profiling, [`alloc_hooks!`] is the expression alone.
#[cfg(not(CONFIG_MEM_ALLOC_PROFILING))]
#[macro_export]
macro_rules! alloc_hooks {
    ($alloc:expr) => {
        $alloc
    };
}

/// Defines a fallback tag, exported to the C helpers as `$symbol`.
macro_rules! fallback_tag {
    ($(#[$doc:meta])* $name:ident, $symbol:literal, $function:literal) => {
        $(#[$doc])*
        #[cfg(CONFIG_MEM_ALLOC_PROFILING)]
        #[used]
        #[export_name = $symbol]
        #[link_section = "alloc_tags"]
        pub static $name: CallSiteTag = {
            // As `alloc_hooks!`'s: null, given counters by the Rust core, but with the C core or
            // the debug checks.
            #[cfg(not(all(
                CONFIG_MEM_ALLOC_PROFILING_RUST,
                not(CONFIG_MEM_ALLOC_PROFILING_DEBUG)
            )))]
            #[link_section = ".data..percpu"]
            static mut COUNTERS: bindings::alloc_tag_counters =
                bindings::alloc_tag_counters { bytes: 0, calls: 0 };
            #[cfg(all(
                CONFIG_MEM_ALLOC_PROFILING_RUST,
                not(CONFIG_MEM_ALLOC_PROFILING_DEBUG)
            ))]
            let counters = core::ptr::null_mut();
            #[cfg(not(all(
                CONFIG_MEM_ALLOC_PROFILING_RUST,
                not(CONFIG_MEM_ALLOC_PROFILING_DEBUG)
            )))]
            let counters = core::ptr::addr_of_mut!(COUNTERS);
            // SAFETY: `counters` is a zeroed `.data..percpu` static of this tag alone, or null
            // with the Rust core; the strings are static and NUL-terminated.
            unsafe {
                CallSiteTag::new(
                    concat!(file!(), "\0").as_bytes(),
                    line!(),
                    core::ptr::null(),
                    concat!($function, "\0").as_bytes(),
                    counters,
                )
            }
        };
    };
}

fallback_tag!(
    /// Charged with `krealloc` allocations from Rust with no tag current (`Kmalloc`, `KBox`,
    /// `KVec`).
    UNTAGGED_KREALLOC,
    "alloctag_rust_untagged_krealloc",
    "rust_untagged_krealloc"
);
fallback_tag!(
    /// Charged with `kvrealloc` allocations from Rust with no tag current (`KVmalloc`, `KVBox`).
    UNTAGGED_KVREALLOC,
    "alloctag_rust_untagged_kvrealloc",
    "rust_untagged_kvrealloc"
);
fallback_tag!(
    /// Charged with `vrealloc` allocations from Rust with no tag current (`Vmalloc`, `VBox`).
    UNTAGGED_VREALLOC,
    "alloctag_rust_untagged_vrealloc",
    "rust_untagged_vrealloc"
);
fallback_tag!(
    /// Charged with page allocations from Rust with no tag current ([`crate::page::Page`]).
    UNTAGGED_ALLOC_PAGES,
    "alloctag_rust_untagged_alloc_pages",
    "rust_untagged_alloc_pages"
);

/// [`KBox::new`] with a tag of its own: `kbox!(value, flags)`.
///
/// ```
/// use kernel::{alloc::flags::GFP_KERNEL, kbox};
///
/// let answer = kbox!(42u64, GFP_KERNEL)?;
/// assert_eq!(*answer, 42);
/// # Ok::<(), Error>(())
/// ```
///
/// [`KBox::new`]: crate::alloc::KBox::new
#[macro_export]
macro_rules! kbox {
    ($value:expr, $flags:expr $(,)?) => {{
        let (value, flags) = ($value, $flags);
        $crate::alloc_hooks!($crate::alloc::KBox::new(value, flags))
    }};
}

/// [`VBox::new`] with a tag of its own: `vbox!(value, flags)`.
///
/// ```
/// use kernel::{alloc::flags::GFP_KERNEL, vbox};
///
/// let table = vbox!([0u32; 64], GFP_KERNEL)?;
/// assert_eq!(table.len(), 64);
/// # Ok::<(), Error>(())
/// ```
///
/// [`VBox::new`]: crate::alloc::VBox::new
#[macro_export]
macro_rules! vbox {
    ($value:expr, $flags:expr $(,)?) => {{
        let (value, flags) = ($value, $flags);
        $crate::alloc_hooks!($crate::alloc::VBox::new(value, flags))
    }};
}

/// [`KVBox::new`] with a tag of its own: `kvbox!(value, flags)`.
///
/// ```
/// use kernel::{alloc::flags::GFP_KERNEL, kvbox};
///
/// let buffer = kvbox!([0u8; 256], GFP_KERNEL)?;
/// assert_eq!(buffer.len(), 256);
/// # Ok::<(), Error>(())
/// ```
///
/// [`KVBox::new`]: crate::alloc::KVBox::new
#[macro_export]
macro_rules! kvbox {
    ($value:expr, $flags:expr $(,)?) => {{
        let (value, flags) = ($value, $flags);
        $crate::alloc_hooks!($crate::alloc::KVBox::new(value, flags))
    }};
}

/// [`KVec::with_capacity`] with a tag of its own: `kvec_with_capacity!(capacity, flags)`.
///
/// ```
/// use kernel::{alloc::flags::GFP_KERNEL, kvec_with_capacity};
///
/// let v = kvec_with_capacity!(16, GFP_KERNEL)?;
/// assert!(v.capacity() >= 16);
/// # let _: kernel::alloc::KVec<u32> = v;
/// # Ok::<(), Error>(())
/// ```
///
/// [`KVec::with_capacity`]: crate::alloc::KVec::with_capacity
#[macro_export]
macro_rules! kvec_with_capacity {
    ($capacity:expr, $flags:expr $(,)?) => {{
        let (capacity, flags) = ($capacity, $flags);
        $crate::alloc_hooks!($crate::alloc::KVec::with_capacity(capacity, flags))
    }};
}

/// [`KVec::push`] with a tag of its own: `kvec_push!(vec, value, flags)`. A push allocates
/// only when it grows the vector, so a vector that grows at several places is charged to each.
///
/// ```
/// use kernel::{alloc::{flags::GFP_KERNEL, KVec}, kvec_push};
///
/// let mut v = KVec::new();
/// kvec_push!(v, 1u32, GFP_KERNEL)?;
/// assert_eq!(v.len(), 1);
/// # Ok::<(), Error>(())
/// ```
///
/// [`KVec::push`]: crate::alloc::KVec::push
#[macro_export]
macro_rules! kvec_push {
    ($vec:expr, $value:expr, $flags:expr $(,)?) => {{
        let (vec, value, flags) = (&mut $vec, $value, $flags);
        $crate::alloc_hooks!(vec.push(value, flags))
    }};
}

/// [`Page::alloc_page`] with a tag of its own: `alloc_page!(flags)`.
///
/// ```
/// use kernel::{alloc::flags::GFP_KERNEL, alloc_page};
///
/// let page = alloc_page!(GFP_KERNEL)?;
/// # drop(page);
/// # Ok::<(), Error>(())
/// ```
///
/// [`Page::alloc_page`]: crate::page::Page::alloc_page
#[macro_export]
macro_rules! alloc_page {
    ($flags:expr $(,)?) => {{
        let flags = $flags;
        $crate::alloc_hooks!($crate::page::Page::alloc_page(flags))
    }};
}
