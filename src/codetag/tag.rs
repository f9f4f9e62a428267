// SPDX-License-Identifier: GPL-2.0

//! One code tag, `struct codetag`.
//!
//! C header: [`include/linux/codetag.h`](srctree/include/linux/codetag.h)

use core::fmt;
#[cfg(CONFIG_MEM_ALLOC_PROFILING_RUST)]
use core::sync::atomic::{AtomicU32, Ordering};
use kernel::{bindings, str::CStr, types::Opaque};

#[cfg(CONFIG_MEM_ALLOC_PROFILING_RUST)]
/// The flag of a tag whose counts are incomplete, mainline's value
/// (include/alloctag_accuracy.h); bits 0 to 7 of the flags are the kernel's.
pub(crate) const CODETAG_FLAG_INACCURATE: u32 = 1 << 0;

#[cfg(CONFIG_MEM_ALLOC_PROFILING_RUST)]
/// alloctag's flag of a tag whose module was unloaded while the tag's allocations were live:
/// the tag stays listed until they are freed. The last of the kernel's bits (6.12 and mainline
/// use bit 0 only), not one of the selections' fields, which are cleared as tags go.
pub(crate) const CODETAG_FLAG_UNLOADED: u32 = 1 << 7;

#[cfg(all(CONFIG_MEM_ALLOC_PROFILING_RUST, CONFIG_MODULES))]
/// alloctag's flag of a module's allocation tag whose counters the core made when the module
/// came (src/alloc_tag/counters.rs): only those are the core's to free, and only those outlive
/// the module's per-CPU area (a module built for the C core has static ones in it).
pub(crate) const CODETAG_FLAG_COUNTERS: u32 = 1 << 5;

#[cfg(CONFIG_MEM_ALLOC_PROFILING_RUST)]
/// alloctag's flag of an unloaded module's tag found unused: no longer listed. It cannot be
/// used again: its call site's code is gone.
pub(crate) const CODETAG_FLAG_DROPPED: u32 = 1 << 6;

/// A `struct codetag`: where a tagged call site is.
///
/// # Invariants
///
/// The tag's `lineno` does not change while a `&Codetag` exists (the compiler wrote it, or a
/// dynamic tag's maker wrote it before publishing the tag). Its names are NUL-terminated
/// strings that live while the tag's module is loaded, and, once it went, while the registry
/// lists the tag. They change only under the registry's write lock, when the tag's module goes
/// and the registry points them at its copies ([`Codetag::rehome`]). So the names of a module's
/// tag are read only while the module is loaded or under the registry's lock, and a name read
/// is not kept past either (the crate's callers: the listings, the ioctl, selections, the
/// capture site table, the leak report and show_mem's top users). Its `flags` and
/// `index` are changed by other CPUs, atomically only: they are never read through a reference
/// to the whole struct, only through [`Codetag::flags`] and [`Codetag::index`]. The fields are
/// read through raw place projections, as rust/kernel/task.rs reads a task's.
#[repr(transparent)]
pub(crate) struct Codetag(Opaque<bindings::codetag>);

impl Codetag {
    /// Returns the source file of the call site.
    pub(crate) fn filename(&self) -> &CStr {
        // SAFETY: By the type invariant `filename` is a NUL-terminated string that lives while
        // the caller may read it, and does not change meanwhile.
        unsafe { CStr::from_char_ptr((*self.0.get()).filename) }
    }

    /// Returns the function around the call site.
    pub(crate) fn function(&self) -> &CStr {
        // SAFETY: As for `filename`.
        unsafe { CStr::from_char_ptr((*self.0.get()).function) }
    }

    /// Returns the name of the module the call site is in, or `None` in vmlinux.
    pub(crate) fn modname(&self) -> Option<&CStr> {
        // SAFETY: By the type invariant `modname` does not change while the caller may read it.
        let name = unsafe { (*self.0.get()).modname };
        // SAFETY: By the type invariant a non-null `modname` is a NUL-terminated string that
        // lives while the caller may read it.
        (!name.is_null()).then(|| unsafe { CStr::from_char_ptr(name) })
    }

    /// Returns the line of the call site.
    pub(crate) fn lineno(&self) -> u32 {
        // SAFETY: By the type invariant `lineno` does not change.
        unsafe { (*self.0.get()).lineno }
    }

    /// Returns the file, function and module names, as [`Codetag::filename`],
    /// [`Codetag::function`] and [`Codetag::modname`] do.
    #[cfg(CONFIG_MEM_ALLOC_PROFILING_RUST)]
    pub(crate) fn names(&self) -> [Option<&CStr>; 3] {
        [Some(self.filename()), Some(self.function()), self.modname()]
    }

    /// Points the tag's file, function and module names (where `Some`) at `names`.
    ///
    /// # Safety
    ///
    /// The registry must be locked for writing, the tag's module going, and each name a
    /// NUL-terminated string that lives while the registry lists the tag.
    #[cfg(CONFIG_MEM_ALLOC_PROFILING_RUST)]
    pub(crate) unsafe fn rehome(&self, names: [Option<*const u8>; 3]) {
        let ct = self.0.get();
        // SAFETY: The fields are aligned pointers that live as long as the tag; the caller holds
        // the registry's write lock and the module is going, so no reader of the names runs
        // (type invariant). Volatile: one whole store each.
        unsafe {
            for (i, name) in names.into_iter().enumerate() {
                let Some(name) = name else { continue };
                let field = match i {
                    0 => &raw mut (*ct).filename,
                    1 => &raw mut (*ct).function,
                    _ => &raw mut (*ct).modname,
                };
                field.write_volatile(name.cast());
            }
        }
    }

    /// Returns the raw pointer to the filename, for the comparisons that stop early.
    #[cfg(CONFIG_MEM_ALLOC_PROFILING_RUST)]
    fn filename_ptr(&self) -> *const u8 {
        // SAFETY: By the type invariant `filename` does not change while the caller may read it.
        unsafe { (*self.0.get()).filename }.cast()
    }

    /// Returns the raw pointer to the function's name, as [`Codetag::filename_ptr`].
    #[cfg(CONFIG_MEM_ALLOC_PROFILING_RUST)]
    fn function_ptr(&self) -> *const u8 {
        // SAFETY: By the type invariant `function` does not change while the caller may read it.
        unsafe { (*self.0.get()).function }.cast()
    }
}

/// What the Rust core asks of a tag beyond its names: its flags, and comparisons that read no
/// more of a name than they need.
#[cfg(CONFIG_MEM_ALLOC_PROFILING_RUST)]
impl Codetag {
    /// Returns the tag's flags, which the users of selections mark ([`super::Field`]) and
    /// the slab allocator marks [`CODETAG_FLAG_INACCURATE`].
    pub(crate) fn flags(&self) -> &AtomicU32 {
        // SAFETY: `flags` is an aligned `unsigned int` that lives as long as the tag. The
        // compiler initialised it; from then on it is only accessed atomically (the one C
        // writer, `alloctag_set_inaccurate()`, uses a compare-and-exchange).
        unsafe { AtomicU32::from_ptr(&raw mut (*self.0.get()).flags) }
    }

    /// Returns the tag's index ([`super::TagIndex`]): 0 while it has none.
    #[cfg_attr(not(CONFIG_ALLOCTAG_KUNIT_TEST), allow(dead_code))]
    pub(crate) fn index(&self) -> usize {
        // SAFETY: `index` is an aligned `unsigned int` that lives as long as the tag, only
        // accessed atomically once the tag is published (`TagIndex` sets it).
        unsafe { AtomicU32::from_ptr(&raw mut (*self.0.get()).index) }.load(Ordering::Acquire)
            as usize
    }

    /// Returns whether the tag's counters are complete: `false` once an allocation at the call
    /// site went uncounted (its slab had no extension vector for the tag reference).
    pub(crate) fn accurate(&self) -> bool {
        self.flags().load(Ordering::Relaxed) & CODETAG_FLAG_INACCURATE == 0
    }

    /// Marks the tag's counters incomplete: some of its allocations go uncounted.
    pub(crate) fn mark_inaccurate(&self) {
        self.flags()
            .fetch_or(CODETAG_FLAG_INACCURATE, Ordering::Relaxed);
    }

    /// Returns whether the tag's module was unloaded: the tag is only listed for its live
    /// allocations.
    pub(crate) fn unloaded(&self) -> bool {
        self.flags().load(Ordering::Relaxed) & CODETAG_FLAG_UNLOADED != 0
    }

    /// Marks the tag's module unloaded. Under the registry's write lock: readers, which hold
    /// it for reading, see a whole module marked or none of it.
    pub(crate) fn mark_unloaded(&self) {
        self.flags()
            .fetch_or(CODETAG_FLAG_UNLOADED, Ordering::Relaxed);
    }

    /// Returns whether the tag is an unloaded module's that is no longer used, and so no longer
    /// listed.
    pub(crate) fn dropped(&self) -> bool {
        self.flags().load(Ordering::Relaxed) & CODETAG_FLAG_DROPPED != 0
    }

    /// Marks an unloaded module's tag no longer used; returns whether it was not marked yet.
    /// Under the registry's write lock, as [`Codetag::mark_unloaded`].
    pub(crate) fn mark_dropped(&self) -> bool {
        self.flags()
            .fetch_or(CODETAG_FLAG_DROPPED, Ordering::Relaxed)
            & CODETAG_FLAG_DROPPED
            == 0
    }

    /// Returns whether the file is exactly `text`, reading only as far as it takes to tell: a
    /// query's filter, which most tags fail on their first bytes, needs no `strlen()`.
    pub(crate) fn filename_is(&self, text: &[u8]) -> bool {
        // SAFETY: By the type invariant `filename` is a NUL-terminated string.
        unsafe { static_str_is(self.filename_ptr(), text) }
    }

    /// Returns whether the function is exactly `text`, as [`Codetag::filename_is`].
    pub(crate) fn function_is(&self, text: &[u8]) -> bool {
        // SAFETY: By the type invariant `function` is a NUL-terminated string.
        unsafe { static_str_is(self.function_ptr(), text) }
    }
}

#[cfg(CONFIG_MEM_ALLOC_PROFILING_RUST)]
/// Returns whether the NUL-terminated string `s` is `text`, comparing byte by byte and
/// stopping at the first difference or at the NUL.
///
/// # Safety
///
/// `s` must point to a NUL-terminated string.
unsafe fn static_str_is(s: *const u8, text: &[u8]) -> bool {
    for (i, &c) in text.iter().enumerate() {
        // SAFETY: Every byte before this one was equal to a non-NUL byte of `text`, so the
        // string goes on at least to here, NUL included.
        if c == 0 || unsafe { *s.add(i) } != c {
            return false;
        }
    }
    // SAFETY: As above: `text.len()` is within the string, at worst its NUL.
    unsafe { *s.add(text.len()) == 0 }
}

/// Formats the tag as `/proc/allocinfo` shows it: `file:line [module] func:name`.
impl fmt::Display for Codetag {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{} ", self.filename(), self.lineno())?;
        if let Some(module) = self.modname() {
            write!(f, "[{module}] ")?;
        }
        write!(f, "func:{}", self.function())
    }
}
